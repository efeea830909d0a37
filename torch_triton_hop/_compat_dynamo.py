"""Private Dynamo APIs the package (and its tests) rely on, beyond those in _compat.py.

Each function says which torch versions need it; supported: torch 2.11-2.13.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Iterator, NamedTuple

__all__ = ["observed_key_error", "observed_exception_argument", "untraceable_errors", "Index", "Key",
           "guard_identity", "guard_constant", "guard_length", "raw_kernels_as_on_a_gpu", "enclosing_bodies",
           "nested_regions_keep_kernel_writes", "never_compiled"]


def never_compiled(function: Any) -> None:
    """Dynamo never compiles a frame of `function`, nor any frame it calls, when one starts as a
    frame of its own (in code that Dynamo gave up on and runs eagerly); tracing that inlines
    `function` is unaffected. Costs nothing when nothing is being compiled.

    torch 2.11-2.13: torch._C._dynamo.eval_frame.set_code_exec_strategy with
    _FrameExecStrategy(SKIP, SKIP), what ConvertFrameReturn gives a frame to run as Python
    (torch.compiler.disable would wrap every call, and import Dynamo).
    """
    from torch._C._dynamo.eval_frame import _FrameAction, _FrameExecStrategy, set_code_exec_strategy

    while isinstance(function, functools.partial):
        function = function.func
    set_code_exec_strategy(getattr(function, "__func__", function).__code__,
                           _FrameExecStrategy(_FrameAction.SKIP, _FrameAction.SKIP))


def observed_key_error() -> type[BaseException]:
    """The exception Dynamo raises, in its own code, for a KeyError that traced user code raised
    (a grid function's meta["N"]). torch 2.11-2.13: torch._dynamo.exc.ObservedKeyError."""
    from torch._dynamo.exc import ObservedKeyError

    return ObservedKeyError


def observed_exception_argument(error: BaseException) -> Any:
    """The user's exception's first argument as a Python value (the key of a KeyError), or None.

    torch 2.13 raises the Observed* exception with the user exception's arguments (Dynamo
    variables; raise_observed_exception: "Store the original exception arguments"); earlier
    versions may raise it without them, which gives None.
    """
    from torch._dynamo.variables import VariableTracker

    if not error.args:
        return None
    value = error.args[0]
    if isinstance(value, VariableTracker):
        return value.as_python_constant() if value.is_python_constant() else None
    return value


def untraceable_errors() -> tuple[type[BaseException], ...]:
    """What Dynamo raises, in its own code, where it cannot trace a call (Unsupported) or where
    the traced user code raised (ObservedException, with the user's exception as a Dynamo
    variable). torch 2.11-2.13: torch._dynamo.exc.Unsupported, ObservedException."""
    from torch._dynamo.exc import ObservedException, Unsupported

    return Unsupported, ObservedException


class Index(NamedTuple):
    """A step of a guard's path: item `index` of a list (a str step is an attribute)."""
    index: int


class Key(NamedTuple):
    """A step of a guard's path: the value of a dict at `key`."""
    key: Any


def guard_identity(variable: Any, *path: str | Index | Key) -> bool:
    """Makes the code Dynamo compiles hold only while the object `variable` (a VariableTracker)
    came from, or what `path` reaches from it, is the same object as now:
    `guard_identity(v, "values", Key("BLOCK"))` guards `v.values["BLOCK"]`. False where Dynamo
    has no source for it (nothing to guard: a value made in the compiled code).

    torch 2.11-2.13: ``install_guard(source.make_guard(GuardBuilder.ID_MATCH))``, with
    ``AttrSource`` for an attribute, ``GetItemSource`` for an index, ``DictGetItemSource`` for a key.
    """
    return _guard(variable, path, "ID_MATCH")


def guard_constant(variable: Any, *path: str | Index | Key) -> bool:
    """As guard_identity, for what holds a constant (None, an int, a tuple of str): the code
    holds while it compares equal. torch 2.11-2.13: GuardBuilder.CONSTANT_MATCH."""
    return _guard(variable, path, "CONSTANT_MATCH")


def guard_length(variable: Any, *path: str | Index | Key) -> bool:
    """As guard_identity, for a list's length. torch 2.11-2.13: GuardBuilder.SEQUENCE_LENGTH."""
    return _guard(variable, path, "SEQUENCE_LENGTH")


def _guard(variable: Any, path: tuple[Any, ...], kind: str) -> bool:
    from torch._dynamo.guards import GuardBuilder, install_guard
    from torch._dynamo.source import AttrSource, DictGetItemSource, GetItemSource

    source = getattr(variable, "source", None)
    if source is None:
        return False
    for step in path:
        if isinstance(step, Index):
            source = GetItemSource(source, step.index)
        elif isinstance(step, Key):
            source = DictGetItemSource(source, step.key)
        else:
            source = AttrSource(source, step)
    install_guard(source.make_guard(getattr(GuardBuilder, kind)))
    return True


def enclosing_bodies(tx: Any) -> list[tuple[Any, list[Any]]]:
    """The bodies of higher-order operators (torch.cond's branches, a while_loop's body, a
    checkpointed region) Dynamo is tracing at `tx`, innermost first: for each, the operator and
    the example values of the body's tensor inputs (its arguments and the outer tensors it
    reads). Empty at the top level.

    torch 2.11-2.13: ``tx.output.tracers``, each a SubgraphTracer with ``source_target`` (the
    operator) and placeholders holding meta["example_value"]; the first is the root tracer.
    """
    import torch

    bodies = []
    for tracer in reversed(tx.output.tracers[1:]):
        inputs = [node.meta.get("example_value") for node in tracer.graph.find_nodes(op="placeholder")]
        bodies.append((tracer.source_target, [t for t in inputs if isinstance(t, torch.Tensor)]))
    return bodies


def nested_regions_keep_kernel_writes() -> bool:
    """Whether a launch in a torch.compiler.nested_compile_region that writes the region's
    input keeps its write under torch.compile. torch 2.13: yes (Dynamo inlines such a body).
    torch 2.11: no; Dynamo records the region as an invoke_subgraph, whose functionalization
    finds writes from torch ops' schemas only, and drops the launch's. torch 2.12 is taken to
    be as 2.11 (not checked): refusing there is the safe side."""
    from ._compat import TORCH_VERSION

    return TORCH_VERSION >= (2, 13)


@contextlib.contextmanager
def raw_kernels_as_on_a_gpu() -> Iterator[None]:
    """Within it, Dynamo holds a raw interpreted kernel (an InterpretedFunction, or a
    triton.autotune over one) as its own TritonKernelVariable, as it holds a JITFunction or an
    Autotuner on a machine where torch.utils._triton.has_triton() is true (a GPU). For tests and
    reproductions on a CPU, where has_triton() is false and Dynamo treats the kernel as a plain
    object.

    torch 2.11-2.13: VariableBuilder._wrap makes `TritonKernelVariable(value, None, None,
    source=self.source)` with an ID_MATCH guard for `isinstance(value, (JITFunction,
    Autotuner))` when has_triton(); this makes the same for InterpretedFunction and Autotuner.
    """
    from torch._dynamo.guards import GuardBuilder
    from torch._dynamo.variables import builder
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.interpreter import InterpretedFunction

    original = builder.VariableBuilder._wrap

    def _wrap(self: Any, value: Any) -> Any:
        if isinstance(value, (InterpretedFunction, Autotuner)):
            self.install_guards(GuardBuilder.ID_MATCH)
            return builder.TritonKernelVariable(value, None, None, source=self.source)
        return original(self, value)

    builder.VariableBuilder._wrap = _wrap
    try:
        yield
    finally:
        builder.VariableBuilder._wrap = original
