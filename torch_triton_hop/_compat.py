"""Every private torch and triton API this package touches, in one place.

Each name says what it gives; each comment says which versions need it. Prefer
feature detection to version checks. ``tests/test_compat.py`` fails on a private
import anywhere else in the package.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import inspect
import sys
from typing import Any

import torch
import triton
from triton.runtime.autotuner import Autotuner, Config, Heuristics
from triton.runtime.jit import JITFunction

# --- torch ---------------------------------------------------------------------------
# All of these are private in torch 2.11-2.13; none moved between those releases.
from torch._C import DispatchKey
from torch._ops import HigherOrderOperator, OpOverload
from torch._subclasses.fake_tensor import FakeTensorMode
from torch._subclasses.functional_tensor import FunctionalTensor
from torch.fx.experimental.proxy_tensor import (
    ProxyTorchDispatchMode,
    disable_proxy_modes_tracing,
    track_tensor_tree,
)

__all__ = [
    "Autotuner",
    "Config",
    "DispatchKey",
    "FakeTensorMode",
    "Heuristics",
    "HigherOrderOperator",
    "InterpretedFunction",
    "JITFunction",
    "OpOverload",
    "ProxyTorchDispatchMode",
    "disable_proxy_modes_tracing",
    "guard_or_false",
    "guard_scalar",
    "statically_known_true",
    "track_tensor_tree",
]

# torch 2.11-2.13: the torch dispatch mode stack and torch function mode state live on
# torch._C; the eager fast path reads them directly because the public wrappers
# (torch.utils._python_dispatch) cost microseconds each.
dispatch_mode_stack_depth = torch._C._len_torch_dispatch_stack
torch_function_mode_enabled = torch._C._is_torch_function_mode_enabled
dispatch_keys = torch._C._dispatch_keys
_peek_functorch_interpreter = torch._C._functorch.peek_interpreter_stack


def dispatch_modes() -> list[Any]:
    """The torch dispatch modes active now, infra modes (fake, proxy, functional) included
    (torch 2.11-2.13: torch.utils._python_dispatch._get_current_dispatch_mode_stack)."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    return _get_current_dispatch_mode_stack()


def dispatch_modes_disabled() -> Any:
    """A context in which no torch dispatch mode is active (torch 2.11-2.13:
    torch.utils._python_dispatch._disable_current_modes)."""
    from torch.utils._python_dispatch import _disable_current_modes

    return _disable_current_modes()


# torch 2.11-2.13: torch.autograd.graph.increment_version's C function; it takes a tuple of
# tensors (a bare tensor it would iterate element by element). Called directly by the eager
# fast launch on every hit that writes: the public wrapper's isinstance check doubles its ~0.1 us.
increment_versions = torch._C._increment_version


def dispatch_below_ad_inplace_or_view() -> Any:
    """A context in which dispatch skips the autograd and ADInplaceOrView keys: how a rule for
    ADInplaceOrView calls the operator on (torch 2.11-2.13: torch._C._AutoDispatchBelowADInplaceOrView)."""
    return torch._C._AutoDispatchBelowADInplaceOrView()


def register_transform_rule(hop: Any, transform: str, rule: Any) -> None:
    """`rule(interpreter, **kwargs)` for `hop` under a torch.func transform ("Vmap", "Grad",
    "Jvp"); torch 2.11-2.13: HigherOrderOperator.py_impl(torch._C._functorch.TransformType.X)."""
    from torch._C._functorch import TransformType

    hop.py_impl(getattr(TransformType, transform))(rule)


def hop_mode_types(hop: Any) -> tuple[type, ...]:
    """The dispatch mode classes `hop` has a rule for (torch 2.11-2.13: the classes among the
    keys of HigherOrderOperator.python_key_table, filled by py_impl and py_functionalize_impl)."""
    return tuple(key for key in hop.python_key_table if isinstance(key, type))


# torch 2.13 asks a HOP for the tensors to dispatch on (HigherOrderOperator._get_overloaded_args);
# torch 2.11 and 2.12 look only at top-level arguments and lists, never inside our `kwargs` dict.
HOP_ASKS_FOR_OVERLOADED_ARGS = hasattr(HigherOrderOperator, "_get_overloaded_args")


def dispatch_to_tensor_subclass(hop: HigherOrderOperator, tensors: tuple, kwargs: dict[str, Any]) -> Any:
    """Call `hop`'s rule for the first tensor subclass among `tensors` (torch 2.11-2.12).

    What torch 2.13 does for the Python key when no dispatch mode is active, for the
    tensors _get_overloaded_args found: a FakeTensor outside its mode uses the
    FakeTensorMode rule; another subclass needs a rule registered with hop.py_impl(cls).
    """
    for tensor in tensors:
        cls = type(tensor)
        if cls.__torch_dispatch__ is torch._C._disabled_torch_dispatch_impl:
            continue
        if isinstance(tensor, torch._subclasses.fake_tensor.FakeTensor):
            return hop.python_key_table[FakeTensorMode](tensor.fake_mode, **kwargs)
        if cls not in hop.python_key_table:
            raise NotImplementedError(f"There was no rule registered for HOP {hop.name()} and subclass {cls}.")
        result = hop.python_key_table[cls](**kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(f"HigherOrderOperator {hop.name()!r}: no rule for tensors of types "
                    f"{[type(t).__name__ for t in tensors]}")


def dispatch_to_current_mode(hop: HigherOrderOperator, args: tuple, kwargs: dict[str, Any]) -> Any:
    """torch 2.11-2.12: step 1 of torch 2.13's Python-key dispatch of a HOP, the current
    dispatch mode's rule; NotImplemented (the mode declines, e.g. FunctionalTensorMode over a
    DTensor argument) leaves the launch to the subclasses' rules, which these releases cannot
    find inside our `kwargs` dict (see HOP_ASKS_FOR_OVERLOADED_ARGS)."""
    from torch.utils._python_dispatch import _pop_mode_temporarily

    mode_type = type(current_dispatch_mode())
    if mode_type in hop.python_key_table:
        with _pop_mode_temporarily() as mode:
            return hop.python_key_table[mode_type](mode, *args, **kwargs)
    if getattr(current_dispatch_mode(), "supports_higher_order_operators", False):
        with _pop_mode_temporarily() as mode:
            return mode.__torch_dispatch__(hop, [], args, kwargs)
    return NotImplemented


def current_dispatch_mode() -> Any:
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    return _get_current_dispatch_mode()


def statically_known_true(condition: Any) -> bool:
    """Whether `condition` (on ints or SymInts) is true without adding a guard.

    torch 2.11-2.13: torch.fx.experimental.symbolic_shapes.statically_known_true; imported here,
    not at import time (it imports sympy).
    """
    from torch.fx.experimental.symbolic_shapes import statically_known_true as known_true

    return bool(known_true(condition))


def op_schema(target: Any) -> Any:
    """The schema of an OpOverload, None for other callables (torch 2.11-2.13: OpOverload._schema)."""
    return getattr(target, "_schema", None)


def node_erased(node: torch.fx.Node) -> bool:
    """Whether `node` was erased from its graph (torch 2.11-2.13: Node._erased; no public accessor)."""
    return node._erased


def guard_scalar(value: Any) -> Any:
    """A SymInt / SymFloat / SymBool as a plain value, guarding on it (torch 2.11-2.13).

    Imported when first needed: symbolic_shapes pulls in sympy (~0.2 s).
    """
    from torch.fx.experimental.symbolic_shapes import guard_scalar as guard

    return guard(value)


def concrete_scalar(value: Any) -> Any:
    """A SymInt / SymFloat / SymBool whose expression is a number (specialized since it was
    made) as that plain value, with no guard; anything else as it is.

    torch 2.11-2.13: symbolic_shapes.is_concrete_int / _float / _bool. make_fx records such a
    value as the constant (proxy_tensor's fetch_sym_proxy); its producing node may be gone
    from what inductor can lower (an `.item()` whose unbacked binding was replaced)."""
    from torch.fx.experimental.symbolic_shapes import is_concrete_bool, is_concrete_float, is_concrete_int

    for kind, is_concrete in ((torch.SymInt, is_concrete_int), (torch.SymFloat, is_concrete_float),
                              (torch.SymBool, is_concrete_bool)):
        if isinstance(value, kind) and is_concrete(value):
            return {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}[kind](value)
    return value


def size_hint(value: Any) -> int | None:
    """The example value of a SymInt (an int as it is); None for an unbacked one (from data).

    torch 2.11-2.13: SymInt.node (a SymNode) has_hint() / hint; no public accessor (the
    symbolic_shapes functions for it were renamed in 2.13)."""
    if not isinstance(value, torch.SymInt):
        return value
    return int(value.node.hint) if value.node.has_hint() else None


def guard_or_false(condition: Any) -> bool:
    """A SymBool as a bool, guarding on it; False where that needs data (unbacked symbols).

    torch 2.11-2.13: torch.fx.experimental.symbolic_shapes.guard_or_false. A condition the
    symbols' ranges already decide adds no guard. Imported when first needed (sympy).
    """
    if isinstance(condition, bool):
        return condition
    from torch.fx.experimental.symbolic_shapes import guard_or_false as guard

    return guard(condition)


functorch_interpreter_top = _peek_functorch_interpreter  # None when no functorch transform runs


def functorch_interpreter_active() -> bool:
    """A functorch transform (vmap, grad, torch.func.functionalize) is running."""
    return _peek_functorch_interpreter() is not None



def is_view_op(target: Any) -> bool:
    """Whether an FX node's target is an aten op whose output aliases its input.

    torch 2.11-2.13: OpOverload.is_view (from the schema's alias annotations).
    """
    return isinstance(target, torch._ops.OpOverload) and bool(target.is_view)


def storage_identity(t: torch.Tensor) -> int:
    """Equal for tensors that share memory: views of one base, also under functionalization.

    torch 2.11-2.13: a FunctionalTensor's .elem is the C++ wrapper whose storage all views
    of one base share.
    """
    if isinstance(t, FunctionalTensor):
        t = t.elem
    try:
        return t.untyped_storage()._cdata
    except (RuntimeError, NotImplementedError):
        return id(t)


def functional_ops_context(ctx: Any) -> Any:
    """Where view ops on a functionalize rule's (wrapped) tensors may run.

    torch 2.11-2.13: the Python functionalization API (AOTAutograd, export) keeps its
    FunctionalTensorMode in ctx.mode and ops on FunctionalTensors must run under it; the C++
    and functorch APIs (torch.func.functionalize) need nothing.
    """
    import contextlib

    mode = getattr(ctx, "mode", None)
    return mode if mode is not None else contextlib.nullcontext()


def clone_preserve_strides(t: torch.Tensor) -> torch.Tensor:
    """A copy with the same sizes, strides and storage offset (torch 2.11-2.13 keep theirs private)."""
    if t.is_contiguous() and t.storage_offset() == 0:
        return t.clone()
    needed = 1 + sum((s - 1) * st for s, st in zip(t.size(), t.stride()) if s > 0)
    if any(s == 0 for s in t.size()):
        needed = 0
    base = torch.as_strided(t, (needed,), (1,), t.storage_offset())
    return torch.as_strided(base.clone(), t.size(), t.stride(), 0)


def mark_side_effectful(hop: HigherOrderOperator) -> None:
    """Keep calls of `hop` (no outputs, writes its arguments) out of FX dead-code elimination.

    torch 2.11-2.13: torch.fx.node.has_side_effect, as torch does for its own mutation HOP.
    torch 2.11 also needs torch._library.utils.is_impure (what Node.is_impure asks) to say so:
    there it returns False for every higher-order operator not registered as effectful,
    without looking at has_side_effect, so Graph.eliminate_dead_code removed the launches in
    a torch.cond branch when torch.export cleaned the branch graphs (the branch returned its
    output unwritten). torch 2.13 looks at has_side_effect for higher-order operators too.
    """
    from torch._library import utils as library_utils
    from torch.fx.node import has_side_effect

    has_side_effect(hop)
    if library_utils.is_impure(hop):
        return
    if not _SIDE_EFFECTFUL_HOPS:
        original = library_utils.is_impure

        def is_impure(op: Any, *args: Any, **kwargs: Any) -> bool:
            return op in _SIDE_EFFECTFUL_HOPS or original(op, *args, **kwargs)

        library_utils.is_impure = is_impure
    _SIDE_EFFECTFUL_HOPS.add(hop)


_SIDE_EFFECTFUL_HOPS: set[Any] = set()


# --- triton --------------------------------------------------------------------------
# triton 3.6-3.9: TRITON_INTERPRET=1 makes @triton.jit return an InterpretedFunction.
try:
    from triton.runtime.interpreter import InterpretedFunction
except ImportError:  # pragma: no cover - every supported triton has it
    InterpretedFunction = type("InterpretedFunction", (), {})

TRITON_KERNEL_BASES = (JITFunction, InterpretedFunction)
TRITON_WRAPPER_TYPES = (Autotuner, Heuristics)


@functools.lru_cache(maxsize=None)
def launch_option_names() -> frozenset[str]:
    """Keyword arguments a launch accepts besides kernel parameters: num_warps, num_stages,
    ... and every compile option of the installed backends (enable_fp_fusion, debug, ...).

    triton 3.6-3.9: each backend's options are the fields of a dataclass (CUDAOptions,
    HIPOptions); JITFunction.run rejects other names. Read without a driver.
    """
    import dataclasses
    import importlib

    names = {"num_warps", "num_stages", "num_ctas", "maxnreg", "debug"}
    for module, cls in (("triton.backends.nvidia.compiler", "CUDAOptions"),
                        ("triton.backends.amd.compiler", "HIPOptions")):
        try:
            options = getattr(importlib.import_module(module), cls)
            names.update(f.name for f in dataclasses.fields(options))
        except Exception:  # a backend that is not installed
            pass
    return frozenset(names)


def autotuning_unavailable(kernel: Any) -> bool:
    """True when `kernel` runs on the interpreter, where triton's autotuner cannot benchmark.

    triton 3.6-3.9: Autotuner.do_bench asks the active GPU driver for a benchmarker, and
    there is none on a CPU-only machine; the launch then runs the first config instead.
    """
    while not is_base_kernel(kernel):
        kernel = kernel.fn
    return isinstance(kernel, InterpretedFunction)


def is_kernel_compilation_error(error: BaseException) -> bool:
    """True for triton's error about the kernel's own source (an undefined name, a type error in
    its code), as its front end raises it while making TTIR.

    triton 3.6-3.9: triton.compiler.errors.CompilationError (not exported elsewhere).
    """
    from triton.compiler.errors import CompilationError

    return isinstance(error, CompilationError)


def is_interpreted_kernel(kernel: Any) -> bool:
    """A base kernel that runs on the Triton interpreter (TRITON_INTERPRET=1), on host copies
    of its tensors, whatever their devices."""
    return isinstance(kernel, InterpretedFunction)


def interpreter_grid_size(size: Any) -> Any:
    """A grid size that a grid function computed from the interpreter's arguments, as a Python
    int; anything else as it is. The interpreter hands a grid function its scalar arguments as
    triton tensors, so meta["n"] // 64 is one, holding a 1-element numpy array: triton 3.6-3.8
    give it no __index__, and numpy >= 2.4 does not take it as one (its interpreter then fails
    in range()). triton 3.6-3.9: tl.tensor.handle is the interpreter's TensorHandle, .data its array."""
    import triton.language as tl

    data = getattr(getattr(size, "handle", None), "data", None) if isinstance(size, tl.tensor) else None
    if data is None or getattr(data, "size", None) != 1 or data.dtype.kind not in "iub":
        return size
    return int(data.reshape(()).item())


def interpreter_library_missing() -> bool:
    """Whether triton's own @jit functions (tl.sum, tl.max, tl.cdiv, ...) were made for a GPU
    while kernels run on the interpreter: triton was imported before TRITON_INTERPRET=1 was
    set. triton 3.6-3.9 decide at each @triton.jit, so the interpreter then meets a
    JITFunction inside a kernel and raises "Cannot call @triton.jit'd outside of the scope of
    a kernel". A way to get there: torch imports every module TORCH_LOGS names while torch is
    imported, so TORCH_LOGS=+torch_triton_hop imports this package, and triton, before a
    script that sets TRITON_INTERPRET after `import torch` does so."""
    import triton.language as tl

    return not isinstance(getattr(tl, "sum", None), InterpretedFunction)


def reapply_torch_logs() -> None:
    """Apply TORCH_LOGS again, for a process that hid it while importing torch (see
    interpreter_library_missing). torch 2.11-2.13: torch._logging._init_logs reads it."""
    import torch._logging

    torch._logging._init_logs()


# Launch limits of the devices triton compiles for. CUDA: maxGridSize of every NVIDIA GPU
# since compute capability 3.0; a larger size fails in cuLaunchKernelEx ("invalid argument").
# triton 3.6-3.9: the CUDA and HIP launchers (backends/*/driver.c `_launch`) multiply the three
# sizes in a C int and skip the launch unless the product is positive (CUDA) or when it is 0
# (HIP), so 2**31 programs or more may launch nothing, silently.
CUDA_MAX_GRID = (2**31 - 1, 65535, 65535)
LAUNCHER_MAX_PROGRAMS = 2**31 - 1


def max_grid(device: Any) -> tuple[int, int, int] | None:
    """The largest grid a launch on `device` may have, per dimension (None: no known limit)."""
    if device.type == "cuda" and torch.version.hip is None:
        return CUDA_MAX_GRID
    return None


def jit_scalar_type(value: Any) -> str:
    """The signature type triton's JIT gives a scalar argument ("fp32", "u1", "i32", ...),
    without value specialization. triton 3.6-3.9: triton.runtime.jit.mangle_type."""
    from triton.runtime.jit import mangle_type

    return mangle_type(value)


def is_base_kernel(obj: Any) -> bool:
    return isinstance(obj, TRITON_KERNEL_BASES)


def is_triton_kernel(obj: Any) -> bool:
    return isinstance(obj, TRITON_KERNEL_BASES + TRITON_WRAPPER_TYPES)


def python_function(kernel: Any) -> Any:
    """The user's Python function under a JITFunction / InterpretedFunction."""
    return kernel.fn


def kernel_params(kernel: Any) -> list[Any]:
    """Parameter descriptors (name, is_constexpr, ...) of a base kernel.

    triton 3.6-3.9: JITFunction.params; InterpretedFunction has .params too, but
    older builds only carry .arg_names, so fall back to building JITFunction-style params.
    """
    params = getattr(kernel, "params", None)
    if params is not None:
        return params
    return _params_from_function(python_function(kernel))


@functools.lru_cache(maxsize=None)
def _params_from_function(fn: Any) -> list[Any]:
    return JITFunction(fn).params


def kernel_param_defaults(kernel: Any) -> dict[str, Any]:
    """Default values of a base kernel's parameters that have one."""
    signature = inspect.signature(python_function(kernel))
    return {name: p.default for name, p in signature.parameters.items() if p.default is not inspect.Parameter.empty}


def jit_options(kernel: Any) -> dict[str, Any]:
    """The triton.jit options a base kernel was made with, parameters by name (so a rewritten
    kernel with more parameters keeps them). triton 3.6-3.9: JITFunction keeps each option as
    an attribute and marks each param's do_not_specialize*; InterpretedFunction keeps the
    keyword arguments it was given."""
    if isinstance(kernel, InterpretedFunction):
        options = dict(getattr(kernel, "kwargs", {}))
        names = [p.name for p in kernel_params(kernel)]
        for key in ("do_not_specialize", "do_not_specialize_on_alignment"):
            options[key] = [names[v] if isinstance(v, int) else v for v in options.get(key) or []]
        return options
    return {
        "do_not_specialize": [p.name for p in kernel.params if p.do_not_specialize],
        "do_not_specialize_on_alignment": [p.name for p in kernel.params if p.do_not_specialize_on_alignment],
        "debug": kernel.debug, "noinline": kernel.noinline, "repr": getattr(kernel, "_repr", None),
        "launch_metadata": getattr(kernel, "launch_metadata", None),
    }


def checkpoint_modes() -> tuple[type, type]:
    """The dispatch modes selective activation checkpointing runs a region under: caching (the
    forward) and cached (the recomputation). torch 2.11-2.13: torch.utils.checkpoint's private
    _CachingTorchDispatchMode / _CachedTorchDispatchMode; HOPs need a rule for each."""
    from torch.utils.checkpoint import _CachedTorchDispatchMode, _CachingTorchDispatchMode

    return _CachingTorchDispatchMode, _CachedTorchDispatchMode


def checkpoint_is_compiling(func: Any, args: tuple, kwargs: dict[str, Any]) -> bool:
    """Whether a checkpointed region is being traced by torch.compile rather than run
    (torch 2.11-2.13: torch.utils.checkpoint._is_compiling, private)."""
    from torch.utils.checkpoint import _is_compiling

    return bool(_is_compiling(func, args, kwargs))


def kernel_source(kernel: Any) -> str:
    """The kernel's source; its bytecode and constants where there is no source (exec'd code)."""
    src = getattr(kernel, "src", None)
    if src is not None:
        return src
    fn = python_function(kernel)
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return fn.__code__.co_code.hex() + repr(fn.__code__.co_consts)


def autotuner_top_k(autotuner: Autotuner) -> Any:
    # triton 3.6-3.9 store prune_configs_by["top_k"] as .configs_top_k; a few forks use .top_k.
    return getattr(autotuner, "configs_top_k", getattr(autotuner, "top_k", 1.0))


def autotuner_benchmark_settings(autotuner: Autotuner) -> dict[str, Any]:
    """warmup / rep / use_cuda_graph as given to triton.autotune (None when left default).

    triton 3.6-3.9 keep them as num_warmups / num_reps; older releases as warmup / rep.
    """
    return {
        "warmup": getattr(autotuner, "num_warmups", getattr(autotuner, "warmup", None)),
        "rep": getattr(autotuner, "num_reps", getattr(autotuner, "rep", None)),
        "use_cuda_graph": getattr(autotuner, "use_cuda_graph", False),
    }


def autotuner_user_hooks(autotuner: Autotuner) -> list[str]:
    """Names of user-supplied hooks ("pre_hook", "post_hook") on an autotuner itself (triton
    3.6-3.9 mark them user_defined_*); a Config's own pre_hook is config_pre_hook's."""
    return [name for name in ("pre_hook", "post_hook") if getattr(autotuner, f"user_defined_{name}", False)]


def config_pre_hook(config: Config) -> Any:
    return getattr(config, "pre_hook", None)


def autotuner_options(autotuner: Autotuner) -> dict[str, Any]:
    """What triton.autotune needs to rebuild `autotuner` over other configs (pruning excluded)."""
    options: dict[str, Any] = {
        "key": list(getattr(autotuner, "keys", getattr(autotuner, "key", [])) or []),
        "reset_to_zero": list(autotuner.reset_to_zero or []) or None,
        "restore_value": list(autotuner.restore_value or []) or None,
    }
    # triton >= 3.3 accepts a custom do_bench.
    do_bench = getattr(autotuner, "_do_bench", None)
    if do_bench is not None and "do_bench" in inspect.signature(triton.autotune).parameters:
        options["do_bench"] = do_bench
    return options


def config_fields(config: Config) -> dict[str, Any]:
    """A triton.Config as plain data: {"kwargs": {...}, "num_warps": ..., ...}, defaults left out."""
    fields: dict[str, Any] = {"kwargs": dict(config.kwargs)}
    for name, default in (("num_warps", None), ("num_stages", None), ("num_ctas", 1), ("maxnreg", None)):
        value = getattr(config, name, default)
        if value != default:
            fields[name] = value
    return fields


def config_from_fields(fields: dict[str, Any]) -> Config:
    """A triton.Config from config_fields' data; "block_shapes" and "zeroed" (what a pre_hook
    did at trace time) become a pre_hook that does it again: run_recorded_pre_hook."""
    accepted = inspect.signature(Config.__init__).parameters
    options = {name: value for name, value in fields.items() if name != "kwargs" and name in accepted}
    if fields.get("block_shapes") or fields.get("zeroed"):
        options["pre_hook"] = functools.partial(run_recorded_pre_hook, fields)
    return Config(dict(fields["kwargs"]), **options)


def set_block_shapes(block_shapes: dict[str, list[int]], nargs: dict[str, Any]) -> None:
    for name, shape in block_shapes.items():
        nargs[name].block_shape = list(shape)


def run_recorded_pre_hook(fields: dict[str, Any], nargs: dict[str, Any]) -> None:
    """What a config's pre_hook did at trace time, again: set the descriptors' block shapes,
    zero the tensors it zeroed (a None argument stays None, as the hook's own check left it)."""
    set_block_shapes(fields.get("block_shapes") or {}, nargs)
    for name in fields.get("zeroed") or ():
        if not isinstance(nargs.get(name), (torch.Tensor, type(None))):
            raise ValueError(f"wrap_triton: the program's autotune config zeroes {name!r}, which is no tensor "
                             "argument of the launch: the program was edited. Re-export it; it was not run.")
        if nargs[name] is not None:
            nargs[name].zero_()


def is_triton_dtype(value: Any) -> bool:
    return isinstance(value, triton.language.dtype)


def triton_dtype_from_name(name: str) -> Any:
    """The triton dtype of that name (str(tl.float16) == "fp16"); None for no such dtype.

    triton 3.6-3.9: tl.dtype(name) asserts the name is known.
    """
    try:
        return triton.language.dtype(name)
    except (AssertionError, ValueError, TypeError, KeyError):
        return None


# What tl.store writes into a bool tensor. triton 3.6-3.8 convert the value to int8 (a float
# truncated toward zero: 0.75 -> 0, False; -1.5 -> the byte 0xFF, read back as True; an int
# wrapped: 256 -> 0); triton 3.9 converts it to int1 (!= 0) first. A fused epilogue must see
# what the store would have written (GPU hunt, H100 + triton 3.6). Every version converts a
# masked load's `other` to int8 before reading the byte as a bool.
STORE_TO_BOOL_CONVERTS_TO_INT8 = tuple(int(part) for part in triton.__version__.split(".")[:2]) < (3, 9)


def tensor_descriptor_fields(desc: Any) -> dict[str, Any]:
    """A host-side TensorDescriptor's fields (triton 3.6-3.8: base, shape, strides,
    block_shape, padding; 3.9 adds round_f32_to_tf32)."""
    import dataclasses

    return {f.name: getattr(desc, f.name) for f in dataclasses.fields(desc)}


def tensor_descriptor(tensor: Any, block_shape: Any, padding: str = "zero", round_f32_to_tf32: bool = False,
                      *, validate: bool = True, shape: Any = None, strides: Any = None) -> Any:
    """TensorDescriptor.from_tensor(tensor, block_shape, padding) (triton >= 3.4).

    validate=False skips triton's checks (alignment reads data_ptr, strides may be
    symbolic): for the analysis, which needs only the descriptor's type, and for stand-ins,
    which pass their own shape and strides.
    """
    from triton.tools.tensor_descriptor import TensorDescriptor

    extra = {"round_f32_to_tf32": True} if round_f32_to_tf32 else {}
    if validate:
        return TensorDescriptor.from_tensor(tensor, list(block_shape), padding=padding, **extra)
    desc = object.__new__(TensorDescriptor)
    fields = dict(base=tensor, shape=list(tensor.shape) if shape is None else shape,
                  strides=list(tensor.stride()) if strides is None else strides,
                  block_shape=list(block_shape), padding=padding, **extra)
    for name, value in fields.items():
        object.__setattr__(desc, name, value)
    return desc


# --- dynamo --------------------------------------------------------------------------
# torch 2.11-2.13: Dynamo looks HOP instances up by name in
# torch._dynamo.variables.higher_order_ops._hop_name_to_variable_class; registering a
# TorchHigherOrderOperatorVariable subclass there is the one hook it offers a HOP.


def dynamo_variables() -> Any:
    import torch._dynamo.variables as variables

    return variables


def is_dynamo_tensor_descriptor(value: Any) -> bool:
    """A Dynamo variable for a host-side TMA descriptor.

    torch 2.11-2.13: Dynamo models TensorDescriptor.from_tensor (and the experimental
    create_*d_tma_descriptor helpers) as TMADescriptorStableVariable /
    TMADescriptorExperimentalVariable.
    """
    return type(value).__name__.startswith("TMADescriptor") and type(value).__name__.endswith("Variable")


def dynamo_tensor_descriptor_parts(value: Any) -> Any:
    """(tensor, block_shape) VariableTrackers of TensorDescriptor.from_tensor under Dynamo, or
    None for the experimental create_*d_tma_descriptor API.

    torch 2.11-2.13: TMADescriptorStableVariable keeps .tensor and .block_shape only (Dynamo
    drops from_tensor's padding argument).
    """
    if type(value).__name__ != "TMADescriptorStableVariable":
        return None
    return value.tensor, value.block_shape


def dynamo_unimplemented(*, gb_type: str, explanation: str) -> Any:
    from torch._dynamo.exc import unimplemented

    unimplemented(gb_type=gb_type, context="", explanation=explanation, hints=[])


class _PostImportHooks(importlib.abc.MetaPathFinder):
    """Runs callbacks right after a named module has been imported (once each)."""

    def __init__(self) -> None:
        self.callbacks: dict[str, list[Any]] = {}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.callbacks:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _NotifyingLoader(spec.loader, self.callbacks.pop(fullname))
                return spec
        return None


class _NotifyingLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, callbacks: list[Any]) -> None:
        self.loader = loader
        self.callbacks = callbacks

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        for callback in self.callbacks:
            callback()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


_post_import_hooks = _PostImportHooks()
sys.meta_path.insert(0, _post_import_hooks)


def when_imported(module_name: str, callback: Any) -> None:
    """Call `callback()` once `module_name` is imported: now if it already is, else right after.

    How the package registers with Dynamo without importing it (`import torch_triton_hop`
    stays light): torch.compile and strict export import Dynamo before they trace.
    """
    if module_name in sys.modules:
        callback()
    else:
        _post_import_hooks.callbacks.setdefault(module_name, []).append(callback)


def dynamo_wrap_fx_proxy(tx: Any, proxy: Any) -> Any:
    """The VariableTracker of a graph node's result, its example value computed under fake mode.

    torch 2.11-2.13: torch._dynamo.variables.builder.wrap_fx_proxy.
    """
    from torch._dynamo.variables.builder import wrap_fx_proxy

    return wrap_fx_proxy(tx=tx, proxy=proxy)


def register_dynamo_hop_handler(hop: HigherOrderOperator, call_function: Any) -> None:
    """Dynamo traces a call of `hop` with `call_function(tx, args, kwargs)`.

    torch 2.11-2.13: Dynamo makes a HOP's VariableTracker from
    higher_order_ops._hop_name_to_variable_class, and wraps each subclass's
    call_function at class creation (add_hop_context) to head the errors it raises with
    "Higher Order Operator: <name>"; ours are marker HOPs the user never wrote, and our errors
    name the kernel and the argument, so the handler is set after the class is made, unwrapped.
    """
    from torch._dynamo.variables import higher_order_ops

    class _Variable(higher_order_ops.TorchHigherOrderOperatorVariable):
        _HOP_NAME = hop.__name__

    def _call_function(self: Any, tx: Any, args: Any, kwargs: Any) -> Any:
        return call_function(tx, list(args), dict(kwargs))

    _Variable.call_function = _call_function
    _Variable.__name__ = f"{hop.__name__}_variable"
    higher_order_ops._hop_name_to_variable_class[hop.__name__] = _Variable


def compile_timed(phase: str) -> Any:
    """A context manager adding its time to the compiler's own timers under `phase`, beside
    inductor's phases: torch._dynamo.utils.compile_times() and TORCH_TRACE / tlparse show them.

    torch 2.11-2.13: torch._dynamo.utils.dynamo_timed(key). Where Dynamo is not imported (an
    eager launch's analysis) nothing is timed: importing it for a timer would cost more."""
    utils = sys.modules.get("torch._dynamo.utils")
    if utils is None:
        return contextlib.nullcontext()
    return utils.dynamo_timed(phase)


# --- AOTAutograd ------------------------------------------------------------------------

TORCH_VERSION = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
_AOT_WRAPPERS = "torch._functorch._aot_autograd.graph_capture_wrappers"
_backward_input_writes_backported = False


def backport_backward_writes_to_leaf_inputs() -> None:
    """Let a backward write a forward input that is a leaf requiring grad (torch 2.11 only).

    A kernel in a backward may write tensors the forward saved, and those may be the
    forward's inputs (Liger-Kernel's SwiGLU stores its gradients in them). AOTAutograd
    replays such a write on the graph input with `before.copy_(after)`; torch 2.11 runs that
    copy under grad mode, where autograd refuses an in-place op on a leaf requiring grad
    ("a leaf Variable that requires grad is being used in an in-place operation"), for any
    op, ours or aten's. torch 2.12 runs it under no_grad (pytorch/pytorch#179284) and
    checks create_graph at run time instead, a check 2.11 already has. This gives 2.11 the
    same no_grad: the copy is made inside set_partitioner_tag_must_be_in_backward(), and so
    is the epilogue's other input copy, which already runs under no_grad or copies into a
    tensor that needs no grad. Both come after the joint graph's gradients are taken, so no
    traced graph changes; the only effect is that the error goes away.

    Called before each functionalization of a launch; patches once, and only when
    AOTAutograd is loaded (a launch functionalized without it needs nothing).
    """
    global _backward_input_writes_backported
    if _backward_input_writes_backported or TORCH_VERSION >= (2, 12) or _AOT_WRAPPERS not in sys.modules:
        return
    import contextlib

    wrappers = sys.modules[_AOT_WRAPPERS]
    tag = wrappers.set_partitioner_tag_must_be_in_backward

    @contextlib.contextmanager
    def tag_without_grad() -> Any:
        with tag(), torch.no_grad():
            yield

    wrappers.set_partitioner_tag_must_be_in_backward = tag_without_grad
    _backward_input_writes_backported = True


# --- TTIR generation (see _compat_ttir.py) ----------------------------------------------


def generate_ttir_text(kernel: Any, args: dict[str, Any]) -> tuple[str, set[tuple[int, ...]]]:
    """TTIR text, with source locations, of a base kernel specialised for `args`, and the
    index paths of what triton folded into constants (constexprs, None, ints equal to 1):
    (i,) for the i-th parameter, (i, j, ...) for a leaf of a tuple argument.

    Symbolic scalars become 2: not 1 (which triton would specialise into a constant) and
    not a multiple of 16, so the TTIR covers every value the symbol can take.
    """
    from ._compat_ttir import generate_ttir_module

    concrete = {
        name: 2 if isinstance(value, (torch.SymInt, torch.SymBool)) else
        2.0 if isinstance(value, torch.SymFloat) else value
        for name, value in args.items()
        if name in {p.name for p in kernel_params(kernel)}
    }
    module, info = generate_ttir_module(kernel, concrete)
    # triton 3.6-3.9 key constexprs by index path: (i,) for a top-level parameter, (i, j, ...)
    # for a leaf of a tuple argument.
    folded = {path for path in info["constexprs"] if isinstance(path, tuple)}
    return str(module), folded


def pointer_stand_in(dtype: torch.dtype, address: int) -> Any:
    """What triton specialises a tensor argument on, without memory: its dtype and an address
    whose alignment stands for the tensor's (see _compat_ttir.PointerStandIn)."""
    from ._compat_ttir import PointerStandIn

    return PointerStandIn(dtype, address)


def _layout_target() -> Any:
    # triton 3.6-3.9: driver.active.get_current_target() gives the GPU's GPUTarget (it starts
    # the driver); without a GPU, the TTIR analysis's default target (sm_90).
    if torch.cuda.is_available():
        return triton.runtime.driver.active.get_current_target()
    return None


def generate_ttgir_text(kernel: Any, args: dict[str, Any], options: dict[str, Any]) -> str:
    """TTGIR of a base kernel for `args` (tensors as pointer_stand_in, every parameter given)
    and launch options (num_warps, ...), for this machine's GPU, or sm_90 without one."""
    from ._compat_ttir import generate_ttgir_text as ttgir

    params = {p.name for p in kernel_params(kernel)}
    return ttgir(kernel, {name: value for name, value in args.items() if name in params}, target=_layout_target(),
                 options=options)


def generate_ttir_and_ttgir_text(kernel: Any, args: dict[str, Any], options: dict[str, Any]) -> tuple[str, str]:
    """TTIR and TTGIR of a base kernel (as generate_ttgir_text), from one compilation."""
    from ._compat_ttir import generate_ttir_and_ttgir_text as both

    params = {p.name for p in kernel_params(kernel)}
    return both(kernel, {name: value for name, value in args.items() if name in params}, target=_layout_target(),
                options=options)


def generate_sass_text(kernel: Any, args: dict[str, Any], options: dict[str, Any],
                       texts: dict[str, str] | None = None) -> str:
    """SASS of a base kernel (as generate_ttgir_text), from triton's ptxas and nvdisasm;
    `texts`, if given, receives the earlier stages' modules as text (its "ttgir")."""
    from ._compat_ttir import generate_sass_text as sass

    params = {p.name for p in kernel_params(kernel)}
    return sass(kernel, {name: value for name, value in args.items() if name in params}, target=_layout_target(),
                options=options, texts=texts)


def maybe_static_int(value: Any) -> Any:
    """A SymInt's int where its value is fixed, else the SymInt (torch 2.11-2.13:
    SymNode.maybe_as_int)."""
    if isinstance(value, torch.SymInt):
        static = value.node.maybe_as_int()
        return value if static is None else static
    return value


def is_host_tensor_descriptor(value: Any) -> bool:
    # triton >= 3.4: triton.tools.tensor_descriptor.TensorDescriptor (host-side TMA).
    return type(value).__name__ == "TensorDescriptor" and type(value).__module__.startswith("triton.tools")


# --- triton: the eager fast launch (see _fast_launch.py) --------------------------------
# triton 3.6-3.9: `triton.runtime.driver` is a DriverConfig whose `_active` is the driver in
# use (set lazily by `.active`); triton.knobs.HookChain holds the launch hooks (never None
# by default, called from the C launcher when not None).
from triton import knobs as triton_knobs  # noqa: E402
from triton.runtime.driver import driver as triton_driver_config  # noqa: E402

HookChain = getattr(triton_knobs, "HookChain", type("HookChain", (), {}))
# The attribute of triton_driver_config holding the driver in use (None until first used);
# generated fast-launch code reads it by this name on every call.
ACTIVE_DRIVER_ATTRIBUTE = "_active"


def active_triton_driver() -> Any:
    """The driver triton uses now, or None before its first use (triton 3.6-3.9)."""
    return getattr(triton_driver_config, ACTIVE_DRIVER_ATTRIBUTE)

# The names JITFunction.run / Autotuner.run / Heuristics.run read in triton 3.6-3.9
# (their code objects' co_names, union over those releases). A release whose run reads
# anything else may specialize on it: the fast launch then stays off for that layer.
_JIT_RUN_NAMES = frozenset({
    "get", "debug", "knobs", "runtime", "compilation", "instrumentation_mode", "driver", "active",
    "get_current_device", "get_current_stream", "pre_run_hooks", "device_caches", "compute_cache_key",
    "_pack_args", "_do_compile", "object", "used_global_vals", "items", "RuntimeError", "callable", "len",
    "hasattr", "result", "launch_metadata", "values", "run", "function", "packed_metadata",
    "launch_enter_hook", "launch_exit_hook",
    "add_stages_inspection_hook", "append",  # triton >= 3.7: a custom pipeline joins the key
    "fpsan_homomorphic_casts",  # triton 3.9: a launch option read from the environment per call
})
_AUTOTUNER_RUN_NAMES = frozenset({
    "__name__", "all_kwargs", "append", "arg_names", "autotuning", "base_fn", "bench_time", "best_config",
    "cache", "cache_results", "check_disk_cache", "configs", "dict", "dtype", "fn", "hasattr", "items", "keys",
    "knobs", "len", "nargs", "pre_hook", "print", "prune_configs", "run", "str", "tuple", "zip",
    "JITFunction", "configs_timings", "getattr", "isinstance", "listener",  # triton >= 3.8
})
_HEURISTICS_RUN_NAMES = frozenset({"arg_names", "dict", "fn", "items", "run", "values", "zip"})


def _run_names(cls: Any) -> frozenset[str]:
    code = getattr(getattr(cls, "run", None), "__code__", None)
    return frozenset(code.co_names) if code is not None else frozenset()


FAST_LAUNCH_JIT = bool(_run_names(JITFunction)) and _run_names(JITFunction) <= _JIT_RUN_NAMES
FAST_LAUNCH_AUTOTUNER = bool(_run_names(Autotuner)) and _run_names(Autotuner) <= _AUTOTUNER_RUN_NAMES
FAST_LAUNCH_HEURISTICS = bool(_run_names(Heuristics)) and _run_names(Heuristics) <= _HEURISTICS_RUN_NAMES
# triton >= 3.7 adds ("custom_pipeline", hash) to the key while this hook is set.
RUN_READS_STAGES_HOOK = "add_stages_inspection_hook" in _run_names(JITFunction)


def jit_run_option_knobs() -> list[tuple[str, Any, str]]:
    """(option, knob namespace, attribute) for each knob JITFunction.run copies into the
    launch options (and so into its cache key) besides `debug`: instrumentation_mode
    (triton 3.6-3.9), fpsan_homomorphic_casts (triton 3.9)."""
    names = _run_names(JITFunction)
    return [(name, triton_knobs.compilation, name) for name in ("instrumentation_mode", "fpsan_homomorphic_casts")
            if name in names and hasattr(triton_knobs.compilation, name)]


def fp_fusion_options(launch_options: dict[str, Any]) -> tuple[bool, str] | None:
    """Whether a kernel launched with `launch_options` contracts a * b + c into FMAs, and what
    says so: its own `enable_fp_fusion`, else triton's default (knobs.language.default_fp_fusion,
    the TRITON_DEFAULT_FP_FUSION variable; triton 3.6-3.9). None where TRITON_FORCE_DISABLE_FP_FUSION
    turns contraction off for every kernel, inductor's too (knobs.language.force_disable_fp_fusion,
    triton 3.9)."""
    language = getattr(triton_knobs, "language", None)
    if getattr(language, "force_disable_fp_fusion", False):
        return None
    requested = launch_options.get("enable_fp_fusion")
    if requested is not None:
        return bool(requested), f"the launch's enable_fp_fusion={requested}"
    default = bool(getattr(language, "default_fp_fusion", True))
    return default, f"TRITON_DEFAULT_FP_FUSION={int(default)}"


def jit_param_specialization(param: Any) -> tuple[bool, bool, bool, str]:
    """(is_constexpr, specialize, align, annotation_type) of a JITFunction parameter, as
    create_function_from_signature reads them (triton 3.6-3.9)."""
    return (bool(param.is_constexpr), not param.do_not_specialize, not param.do_not_specialize_on_alignment,
            getattr(param, "annotation_type", "") or "")


def launch_device_functions(active_driver: Any) -> tuple[Any, Any]:
    """(get_current_device, get_current_stream) of a triton driver, as JITFunction.run calls them.

    triton 3.6-3.9 with torch loaded: torch.cuda.current_device (a lazy-init check, then
    torch._C._cuda_getDevice) and torch._C._cuda_getCurrentRawStream (the current stream,
    also while a CUDA graph captures). Once CUDA is initialised the device query is the C
    call alone.
    """
    get_device = active_driver.get_current_device
    if get_device is torch.cuda.current_device and torch.cuda.is_initialized():
        get_device = torch._C._cuda_getDevice
    return get_device, active_driver.get_current_stream


def compiled_kernel_launch_parts(kernel: Any) -> tuple[Any, Any, Any] | None:
    """(launcher, function handle, packed metadata) of a CompiledKernel that has launched,
    or None for anything else (a compile future under triton's async mode, a skipped
    compile). triton 3.6-3.9: JITFunction.run launches `kernel.run(grid_0, grid_1, grid_2,
    stream, kernel.function, kernel.packed_metadata, launch_metadata, enter_hook,
    exit_hook, *args)`; the hooks may be None."""
    if kernel is None or hasattr(kernel, "result") or getattr(kernel, "function", None) is None:
        return None
    packed = getattr(kernel, "packed_metadata", None)
    launcher = getattr(kernel, "run", None)
    if launcher is None or packed is None:
        return None
    return launcher, kernel.function, packed


def is_cuda_target(target: Any) -> bool:
    """The CUDA backend specializes on exactly dtype, 16-byte alignment, divisibility and 1;
    HIP adds a tensor-size class (buffer ops), which the fast launch does not model."""
    return getattr(target, "backend", None) == "cuda"


def static_cuda_launch() -> Any:
    """torch's launcher for triton cubins, `_launch_kernel(function, grid_x, grid_y, grid_z,
    num_warps, shared, arg_types, args, stream)`, or None (a CPU or ROCm build).

    torch >= 2.8 CUDA builds (inductor's StaticallyLaunchedCudaKernel, 2.11-2.13 included):
    one cuLaunchKernel of a loaded CUfunction; a pointer argument given as an int is used
    as is; a grid with no programs launches nothing.
    """
    launcher = getattr(torch._C, "_StaticCudaLauncher", None)
    if launcher is None or torch.version.hip is not None:
        return None
    return getattr(launcher, "_launch_kernel", None)


_STATIC_ARG_TYPES = {"i32": "i", "i64": "l", "u64": "K", "fp32": "f"}


def static_launch_plan(kernel: Any, param_names: list[str]) -> tuple[Any, int, int, list[str | None], int] | None:
    """How torch's static launcher can launch a CompiledKernel exactly as triton's would:
    (function, num_warps, shared, per-parameter type char or None for a constexpr, number of
    trailing scratch pointers), or None when triton's launcher must do it.

    triton 3.6-3.9 (CUDA): the launcher passes the non-constexpr arguments in order, then a
    global and a profile scratch pointer (None when their size is 0), with
    blockDim = 32 * num_warps and no launch attributes when num_ctas == 1 and neither
    cooperative grids nor PDL are on. Anything else (scratch memory, clusters, tensor
    descriptors, 3.9's gsan instrumentation, scalar types other than i32 / i64 / u64 / fp32)
    stays with triton's launcher.
    """
    launcher = getattr(kernel, "run", None)
    metadata = getattr(kernel, "metadata", None)
    src = getattr(kernel, "src", None)
    packed = getattr(kernel, "packed_metadata", None)
    try:
        if (launcher.num_ctas != 1 or launcher.launch_cooperative_grid or launcher.launch_pdl
                or launcher.global_scratch_size or launcher.profile_scratch_size
                or getattr(launcher, "gsan_enabled", False) or getattr(metadata, "tensordesc_meta", None)):
            return None
        num_warps, num_ctas, shared = packed
        signature = dict(src.signature)
        constants = getattr(src, "constants", {}) or {}
    except (AttributeError, TypeError, ValueError):
        return None
    if num_ctas != 1 or list(signature) != list(param_names):
        return None
    folded = {key[0] if isinstance(key, tuple) and len(key) == 1 else key for key in constants}
    types: list[str | None] = []
    for index, (name, ty) in enumerate(signature.items()):
        if ty == "constexpr" or index in folded or name in folded:
            types.append(None)
        elif isinstance(ty, str) and ty.startswith("*"):
            types.append("O")
        elif ty in _STATIC_ARG_TYPES:
            types.append(_STATIC_ARG_TYPES[ty])
        else:
            return None
    scratch = int(hasattr(metadata, "global_scratch_size")) + int(hasattr(metadata, "profile_scratch_size"))
    return kernel.function, num_warps, shared, types, scratch


def trace_artifact(name: str, payload_fn: Any) -> None:
    """One JSON artifact in TORCH_TRACE's structured log, which tlparse shows (torch 2.11-2.13:
    ``torch._logging.trace_structured("artifact", ...)``). Costs one check when TORCH_TRACE is unset."""
    from torch._logging import trace_structured  # private; its signature is the same in torch 2.11-2.13

    trace_structured("artifact", metadata_fn=lambda: {"name": name, "encoding": "json"}, payload_fn=payload_fn,
                     expect_trace_id=False)
