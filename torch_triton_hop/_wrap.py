"""``wrap_triton``: the user-facing wrapper, and its eager fast path."""

from __future__ import annotations

import functools
from functools import partial
from types import MethodType
from typing import Any, Iterable

import torch
# Imported by name: Dynamo inlines the methods below, and a module global that the user's
# code also reaches (torch, functools) costs a Python-level guard on every compiled call.
from torch.compiler import is_dynamo_compiling

from . import _compat, _compat_dynamo
from ._dynamo import dynamo_entry
from ._fast_launch import fast_launcher
from ._hopifier import check_eager_grid, check_eager_launch, no_grid_error, tracing_hopifier
from ._hops import triton_kernel_wrapper_mutation
from ._side_table import KERNEL_WRAPPER_TYPES, base_kernel, compute_kernel_key, kernel_side_table
from ._version_counters import bump_written
from .errors import raise_unsupported, warn_at_user_code

__all__ = ["wrap_triton", "TritonKernelWrapper"]


_PLAIN_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)


def _launch_directly(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """True when nothing could intercept the launch, so the HOP dispatch can be skipped.

    # [Note: Eager fast path]
    # TL;DR: a HOP dispatch costs ~40-100 us per call; these checks cost about 1 us.
    # A mode (make_fx's proxy mode, FakeTensorMode, FunctionalTensorMode, any
    # TorchFunctionMode), a functorch transform (vmap, grad, torch.func.functionalize),
    # or a tensor subclass could each want to see the call, so any of them sends it
    # through the HOP. Dynamo never gets here: it captures the call itself.
    # A dispatch mode the HOP has no rule for and that takes no higher-order operators (a
    # user's logging mode) could not see inside the kernel, and the HOP would refuse it
    # (NotImplementedError): with only such modes active, the kernel launches directly, as
    # triton's own launch does under them.
    """
    if (
        _compat.torch_function_mode_enabled()
        or _compat.functorch_interpreter_active()
        or _compat.dispatch_mode_stack_depth() and _modes_see_launches()
    ):
        return False
    return _plain_tensors(args, kwargs)


def _modes_see_launches() -> bool:
    """Whether an active dispatch mode must see a launch through the HOP: one the HOP has a
    rule for (fake tensors, make_fx, functionalization, activation checkpointing) or one that
    takes higher-order operators (supports_higher_order_operators)."""
    seeing = _compat.hop_mode_types(triton_kernel_wrapper_mutation)
    return any(isinstance(mode, seeing) or getattr(mode, "supports_higher_order_operators", False)
               for mode in _compat.dispatch_modes())


def _plain_tensors(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return not any(isinstance(value, torch.Tensor) and type(value) not in _PLAIN_TENSOR_TYPES
                   for value in (*args, *kwargs.values()))


@functools.cache  # once per process
def _warn_interpreter_library_missing() -> None:
    warn_at_user_code(
        "TRITON_INTERPRET=1 was set after triton was imported: kernels run on the interpreter, but triton's own "
        "functions (tl.sum, tl.max, tl.cdiv, ...) were compiled for a GPU, and a kernel that calls one fails with "
        "\"Cannot call @triton.jit'd outside of the scope of a kernel\". Set TRITON_INTERPRET=1 before importing "
        "torch (in the environment: TRITON_INTERPRET=1 python script.py). With TORCH_LOGS naming torch_triton_hop, "
        "`import torch` imports this package and triton, so setting it after `import torch` is too late.")


def _interpreted_autotuner(kernel: Any) -> bool:
    if not _compat.autotuning_unavailable(kernel):
        return False
    while not _compat.is_base_kernel(kernel):
        if isinstance(kernel, _compat.Autotuner):
            return True
        kernel = kernel.fn
    return False


class TritonKernelWrapper:
    """A triton kernel that make_fx, torch.export and torch.compile can capture.

    Made by :func:`wrap_triton`; call it like the kernel it wraps.
    """

    def __init__(self, kernel: Any, writes: Iterable[str] | None = None, interpreter_config: Any = None) -> None:
        self.kernel = kernel
        # Under Dynamo nothing here may look at the kernel: on a GPU, Dynamo holds a raw
        # @triton.jit / @triton.autotune kernel as its own TritonKernelVariable, which has no
        # Python attributes to read (hasattr on it stops the trace). The capture makes a
        # wrapper of its own, outside the trace, which checks.
        # See [Note: How Dynamo meets a wrapped kernel].
        if not is_dynamo_compiling() and _compat.is_interpreted_kernel(base_kernel(kernel)) and \
                _compat.interpreter_library_missing():
            _warn_interpreter_library_missing()
        self.writes = None if writes is None else tuple(writes)
        self.interpreter_config = interpreter_config
        # Under the interpreter triton cannot autotune; our launch path runs the first config.
        # A wrapper made in compiled code decides at its first eager launch (after a graph break).
        self.launch_directly = None if is_dynamo_compiling() else not _interpreted_autotuner(kernel)
        # launch(grid, /, *args, **kwargs): the eager launch, built at the first one. See [Note: Fast launch]
        self.fast_launch: Any = None

    @property
    def __wrapped_triton_kernel__(self) -> Any:
        return self.kernel

    def __getitem__(self, grid: Any) -> Any:
        if is_dynamo_compiling():  # See [Note: How Dynamo meets a wrapped kernel]
            return partial(dynamo_entry, self, grid)
        # The eager launch with grid bound as its first argument: calling it runs the generated
        # launch directly, no frame of ours in between (it is the hot path). See [Note: Fast launch].
        launch = self.fast_launch or self._first_launch
        if grid.__class__ is not tuple and not (callable(grid) or isinstance(grid, list)):
            # A str, an int, None: triton would fail on it with an error of its own, or (a
            # str, on the fast path) index it. See [Note: Launch checks].
            check_eager_grid(_compat.python_function(base_kernel(self.kernel)).__name__, grid)
        return MethodType(launch, grid)

    def _first_launch(self, grid: Any, /, *args: Any, **kwargs: Any) -> Any:
        return _build_launch(self)(grid, *args, **kwargs)

    def run(self, *args: Any, grid: Any = None, warmup: bool = False, **kwargs: Any) -> Any:
        if is_dynamo_compiling():
            return dynamo_entry(self, grid, *args, **kwargs)
        if not warmup:  # kernel.run(..., grid=g) launches as kernel[g](...) does
            return (self.fast_launch or self._first_launch)(grid, *args, **kwargs)
        return tracing_hopifier.call_run(self, args, {"grid": grid, "warmup": warmup, **kwargs})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if is_dynamo_compiling():  # the capture refuses it, naming the kernel Dynamo holds
            return dynamo_entry(self, None, *args, **kwargs)
        raise_unsupported(**no_grid_error(_compat.python_function(base_kernel(self.kernel)).__name__))

    def __getattr__(self, name: str) -> Any:
        # arg_names, fn, configs, ...: behave like the kernel for code that inspects it.
        if name.startswith("__") or name in (
                "kernel", "writes", "interpreter_config", "launch_directly", "fast_launch"):
            raise AttributeError(name)
        return getattr(self.kernel, name)

    def __repr__(self) -> str:
        return f"wrap_triton({self.kernel!r})"

    # [Note: Copying and pickling a wrapper]
    # A wrapper does not change after it is made, and its kernel is code: copy.copy and
    # copy.deepcopy give the wrapper itself, so a deep-copied module shares its kernels as it
    # shares its functions (before: a copy of the kernel object, with caches of its own).
    # Pickled (torch.save of a whole module), a wrapper is its kernel's stable key and its
    # settings. Unpickling finds the kernel by that key under the rule loading a saved program
    # follows ([Note: Loading a program imports nothing unasked]). A kernel that another
    # process could not find that way is refused when pickling, with what to do.
    def __copy__(self) -> "TritonKernelWrapper":
        return self

    def __deepcopy__(self, memo: dict) -> "TritonKernelWrapper":
        return self

    def __reduce__(self) -> tuple:
        return _unpickled_wrapper, (_findable_key(self.kernel), self.writes, self.interpreter_config)


def _findable_key(kernel: Any) -> str:
    """The kernel's stable key, if another process can find the kernel by it."""
    import pickle

    key = compute_kernel_key(kernel)
    if not kernel_side_table.found_by_import(key):
        fn = _compat.python_function(base_kernel(kernel))
        raise pickle.PicklingError(
            f"wrap_triton: cannot pickle the wrapper of kernel {fn.__qualname__!r}: the object it wraps is not an "
            f"attribute of an importable module ({fn.__module__!r}), so another process could not find it. Keep "
            "that object at module level (e.g. `my_kernel = triton.autotune(...)(kernel)` in the module), or save "
            "the module's state_dict instead of the whole module.")
    return key


def _unpickled_wrapper(key: str, writes: Any, interpreter_config: Any) -> TritonKernelWrapper:
    return wrap_triton(kernel_side_table.get_kernel(key), writes=writes, interpreter_config=interpreter_config)


def _build_launch(wrapper: TritonKernelWrapper, **options: Any) -> Any:
    """The wrapper's eager launch(grid, /, *args, **kwargs): the generated fast launch, handing
    what it does not take to _launch_slowly; _launch_slowly itself where there is none (the
    interpreter, an interpreted autotuner). options: fast_launcher's (the benchmark)."""
    if wrapper.launch_directly is None:
        wrapper.launch_directly = not _interpreted_autotuner(wrapper.kernel)
    launcher = fast_launcher(wrapper.kernel, fallback=partial(_launch_slowly, wrapper), user_kernel=wrapper,
                             **options) if wrapper.launch_directly else None
    wrapper.fast_launch = launcher.launch if launcher is not None else partial(_launch_slowly_called, wrapper)
    _compat_dynamo.never_compiled(wrapper.fast_launch)  # See [Note: How Dynamo meets a wrapped kernel]
    return wrapper.fast_launch


KERNEL_WRAPPER_TYPES.add(TritonKernelWrapper)

# The eager launch, where code Dynamo gave up on calls it, runs as Python; the generated fast
# launch is marked where it is made (_build_launch). See [Note: How Dynamo meets a wrapped kernel].
_compat_dynamo.never_compiled(TritonKernelWrapper._first_launch)

_REFUSED = object()


def _launch_slowly(wrapper: TritonKernelWrapper, grid: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """kernel[grid](*args, **kwargs) that the fast launch does not take: triton's own launch, or
    the HOP when something could intercept it. See [Note: Eager fast path]."""
    if wrapper.launch_directly and _launch_directly(args, kwargs):
        return _launch(wrapper, grid, args, kwargs)
    try:
        result = tracing_hopifier.call_triton_kernel(wrapper, grid, args, kwargs)
    except NotImplementedError as e:
        if "no rule registered for HigherOrderOperator" not in str(e):
            raise
        result = _REFUSED  # raised below, outside this handler: torch's message names internals
    if result is _REFUSED:
        _refused_by_a_mode(wrapper)
    if result is NotImplemented:
        # A mode that takes higher-order operators declined this one (FlopCounterMode does
        # for those it does not count), so nothing ran: with real tensors, the launch again
        # without the modes, as triton's own launch runs under that mode.
        if not _plain_tensors(args, kwargs) or _compat.functorch_interpreter_active():
            _declined_by_a_mode(wrapper)
        with _compat.dispatch_modes_disabled():
            return _launch_slowly(wrapper, grid, args, kwargs)
    return result


def _refused_by_a_mode(wrapper: TritonKernelWrapper) -> None:
    mode = next((m for m in reversed(_compat.dispatch_modes())
                 if not getattr(m, "supports_higher_order_operators", False)), None)
    raise_unsupported(f"a launch of {_compat.python_function(base_kernel(wrapper.kernel)).__name__} under the "
                      f"TorchDispatchMode {type(mode).__name__}, which takes no higher-order operators, inside a "
                      "mode that records the launch (make_fx, fake tensors, functionalization)",
                      why="The launch is one higher-order operator call that each mode sees in turn",
                      fix=f"Set supports_higher_order_operators = True on {type(mode).__name__} and pass such "
                          "calls on (return func(*args, **kwargs)), or launch outside it")


def _declined_by_a_mode(wrapper: TritonKernelWrapper) -> None:
    mode = next((m for m in reversed(_compat.dispatch_modes())
                 if getattr(m, "supports_higher_order_operators", False)), None)
    raise_unsupported(f"a launch of {_compat.python_function(base_kernel(wrapper.kernel)).__name__} that the "
                      f"TorchDispatchMode {type(mode).__name__} declined (it returned NotImplemented)",
                      why="Nothing else ran the kernel, and its tensors are not plain tensors",
                      fix="Launch it outside that mode")


def _launch(wrapper: TritonKernelWrapper, grid: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """triton's own launch of the wrapped kernel."""
    grid, on_meta = check_eager_launch(wrapper.kernel, grid, args, kwargs)  # See [Note: Launch checks]
    if on_meta:  # computes nothing, as the graph's launch on meta tensors does
        return None
    result = wrapper.kernel[grid](*args, **kwargs)
    bump_written(wrapper, args, kwargs)  # See [Note: Launches bump version counters]
    return result


def _launch_slowly_called(wrapper: TritonKernelWrapper, grid: Any, /, *args: Any, **kwargs: Any) -> Any:
    return _launch_slowly(wrapper, grid, args, kwargs)


class _Decorator:
    """wrap_triton's kernel when none is given: ``@wrap_triton(writes=...)``, unlike ``wrap_triton(None)``."""

    def __repr__(self) -> str:
        return "<none: wrap_triton(...) used as a decorator>"


_DECORATOR: Any = _Decorator()


def wrap_triton(kernel: Any = _DECORATOR, /, *, writes: Iterable[str] | None = None, interpreter_config: Any = None) -> Any:
    """Make a triton kernel capturable by make_fx, torch.export and torch.compile.

    Use it as a call or as a decorator on top of ``@triton.jit``, ``@triton.autotune`` or
    ``@triton.heuristics``. Call the result as you would the kernel:
    ``k[grid](*args, **kwargs)`` or ``k.run(*args, grid=grid, **kwargs)``. Outside any
    tracing it launches the kernel directly (microseconds of overhead); under tracing
    it records one ``user_triton_kernel_mutation`` node.

    Prefer it over ``torch.library.triton_op`` when you want the kernel call itself in the
    graph without declaring a custom operator's schema; its mutations are found by
    analysing the kernel. Like a torch in-place op, a launch bumps the autograd version
    counter of each tensor it writes, so overwriting a tensor saved for backward raises.

    Args:
        kernel: a ``@triton.jit`` kernel (a JITFunction, or an InterpretedFunction under
            ``TRITON_INTERPRET=1``), optionally under ``@triton.autotune`` /
            ``@triton.heuristics``.
        writes: the names of the tensor arguments the kernel writes. Skips the TTIR
            analysis (also at the first eager launch of each specialization); use it when
            the analysis falls back (it warns) or to be explicit.
        interpreter_config: under ``TRITON_INTERPRET=1`` (no GPU to autotune on) an
            autotuned kernel runs one config: by default the first that survives pruning.
            Pass an index into the configs that survive pruning, or a dict that a config's
            kwargs and launch options match (``{"BLOCK": 64}``, ``{"num_warps": 8}``), to
            run another. Ignored on a GPU, where triton autotunes.

    Raises:
        UnsupportedTritonKernelError: ``kernel`` is not a triton kernel, or ``writes``
            names something that is not a parameter of it.

    Example::

        >>> import os; os.environ["TRITON_INTERPRET"] = "1"   # CPU: run on the interpreter
        >>> import torch, triton, triton.language as tl
        >>> from torch.fx.experimental.proxy_tensor import make_fx
        >>> from torch_triton_hop import wrap_triton
        >>> @wrap_triton
        ... @triton.jit
        ... def add_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        ...     offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        ...     tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
        >>> def f(x):
        ...     out = torch.empty_like(x)
        ...     add_one[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
        ...     return out
        >>> f(torch.zeros(8))                               # eager: launches the kernel directly
        tensor([1., 1., 1., 1., 1., 1., 1., 1.])
        >>> print(make_fx(f)(torch.zeros(8)).code.strip())
        def forward(self, x_1):
            empty_like = torch.ops.aten.empty_like.default(x_1, pin_memory = False)
            add_one = torch.ops.higher_order.user_triton_kernel_mutation(kernel = '...:add_one@...', constant_args = '{}', configs = '[]', grids = [1, 1, 1], kwargs = {'x_ptr': x_1, 'out_ptr': empty_like, 'n': 8, 'BLOCK': 16});  x_1 = add_one = None
            return empty_like
    """
    if kernel is _DECORATOR:
        return lambda k: wrap_triton(k, writes=writes, interpreter_config=interpreter_config)
    if is_dynamo_compiling():
        # Dynamo sees triton kernels as its own variables; the checks run when it captures
        # the call. See [Note: How Dynamo meets a wrapped kernel].
        return TritonKernelWrapper(kernel, writes, interpreter_config)
    if interpreter_config is not None and not isinstance(interpreter_config, (int, dict)) or isinstance(
            interpreter_config, bool):
        raise_unsupported("interpreter_config must be an int (a config's index) or a dict of config values",
                          interpreter_config, fix="Pass e.g. interpreter_config=1 or {'BLOCK': 64}")
    if isinstance(kernel, TritonKernelWrapper):
        if writes is None and interpreter_config is None:
            return kernel
        return TritonKernelWrapper(
            kernel.kernel,
            kernel.writes if writes is None else _checked_writes(kernel.kernel, writes),
            kernel.interpreter_config if interpreter_config is None else interpreter_config,
        )
    if not _compat.is_triton_kernel(kernel):
        # A library's own wrapper (FlagGems' LibEntry) holds the kernel as .fn, as triton's do.
        holds_one = _compat.is_triton_kernel(getattr(kernel, "fn", None))
        raise_unsupported(
            "expected a @triton.jit kernel, optionally under @triton.autotune / @triton.heuristics",
            type(kernel).__name__,
            fix=f"Wrap the kernel this {type(kernel).__name__} holds: wrap_triton(obj.fn)" if holds_one else
                "Decorate the function with @triton.jit first",
        )
    return TritonKernelWrapper(kernel, None if writes is None else _checked_writes(kernel, writes), interpreter_config)


def _checked_writes(kernel: Any, writes: Iterable[str]) -> tuple[str, ...]:
    from ._side_table import base_kernel

    writes = tuple([writes] if isinstance(writes, str) else writes)
    params = {p.name: p for p in _compat.kernel_params(base_kernel(kernel))}
    bad = [name for name in writes if name not in params or params[name].is_constexpr]
    if bad:
        raise_unsupported(
            f"writes= names {bad}, which are not tensor parameters of the kernel", writes,
            fix=f"Use names from {[n for n, p in params.items() if not p.is_constexpr]}",
        )
    return writes


wrap_triton.__module__ = "torch_triton_hop"
TritonKernelWrapper.__module__ = "torch_triton_hop"
