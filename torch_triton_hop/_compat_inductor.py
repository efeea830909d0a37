"""The private inductor APIs the bridge (_inductor_bridge.py) uses, in one place.

Split from _compat.py (same rules: each comment says which torch versions need it).
torch 2.11-2.13: inductor has no public extension API for a HOP; these are the hooks its
own HOPs use. Each function imports inductor lazily: `import torch_triton_hop` must not.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import threading
from typing import Any

import torch

from . import _compat
from ._compat import HigherOrderOperator

_log = logging.getLogger(__name__)


def inductor_ir() -> Any:
    import torch._inductor.ir as ir

    return ir


def _virtualized() -> Any:
    from torch._inductor.virtualized import V

    return V


def register_inductor_lowering(hop: HigherOrderOperator, fn: Any) -> None:
    # torch 2.11-2.13: register_lowering(op, type_promotion_kind=None), as for torch's own HOPs.
    from torch._inductor.lowering import register_lowering

    register_lowering(hop, type_promotion_kind=None)(fn)


def inductor_lowering(op: Any) -> Any:
    from torch._inductor.lowering import lowerings

    return lowerings[op]


def register_post_grad_graph_pass(target: Any, handler: Any) -> None:
    """Run `handler(match)` on every call of `target` in inductor's post-grad graphs, before
    inductor's reinplace pass.

    torch 2.11-2.13: post_grad.pass_patterns are the pattern passes post_grad_passes applies
    (when config.pattern_matcher is on) before reinplace_inplaceable_ops; torch registers
    its own graph rewrites there the same way.
    """
    from torch._inductor.fx_passes.post_grad import pass_patterns
    from torch._inductor.pattern_matcher import CallFunctionVarArgs, register_graph_pattern

    register_graph_pattern(CallFunctionVarArgs(target), pass_dict=pass_patterns[0])(handler)


def declare_fusible_consumer(target: Any, enabled: Any) -> None:
    """Tell AOTAutograd's min-cut partitioner that a pointwise producer of an input of a
    `target` node fuses into that node, where `enabled(node)` is true when it partitions.

    torch 2.11-2.13: the partitioner (torch/_functorch/partitioners.py) asks
    ``OpTypes.is_fusible(node)`` of a producer and of its consumer to decide whether a value
    needed in the backward may be recomputed there for free or must be saved ("materialized
    in backward"). It knows aten's pointwise ops, and torch's own
    triton_kernel_wrapper_functional only for the inputs it clones; it offers no registry.
    So ``OpTypes.is_fusible`` is wrapped, once, to also answer True for a `target` node.
    Only the consumer side changes: a node's outputs are read through getitem, which is
    never fusible. See [Note: The partitioner and prologue fusion].
    """
    from torch._functorch import partitioners

    is_fusible = partitioners.OpTypes.is_fusible
    consumers = getattr(is_fusible, "_torch_triton_hop_consumers", None)
    if consumers is None:
        consumers = {}
        original = is_fusible

        def is_fusible(self: Any, node: Any) -> bool:
            when = consumers.get(node.target) if node.op == "call_function" else None
            return (when is not None and when(node)) or original(self, node)

        is_fusible.__wrapped__ = original  # type: ignore[attr-defined]
        is_fusible._torch_triton_hop_consumers = consumers  # type: ignore[attr-defined]
        partitioners.OpTypes.is_fusible = is_fusible
    consumers[target] = enabled


def inductor_current_node() -> Any:
    return _virtualized().graph.current_node


def inductor_uses_cpp_wrapper() -> bool:
    return bool(_virtualized().graph.cpp_wrapper)


def inductor_register_operation(operation: Any) -> None:
    _virtualized().graph.register_operation(operation)


def is_inductor_tensor(value: Any) -> bool:
    return isinstance(value, inductor_ir().IRNode)


def inductor_buffer_name(value: Any) -> Any:
    try:
        return value.get_name()
    except (AttributeError, NotImplementedError):
        return id(value)


def inductor_require_exact_strides(value: Any, strides: Any) -> Any:
    # torch 2.11-2.13: ExternKernel.require_exact_strides (SymInt strides accepted).
    return inductor_ir().ExternKernel.require_exact_strides(value, strides)


def inductor_add_header_import(wrapper: Any, line: str) -> None:
    """Add `line` once to the generated module's header (torch 2.11-2.13: wrapper.header)."""
    added = wrapper.__dict__.setdefault("_torch_triton_hop_imports", set())
    if line not in added:
        added.add(line)
        wrapper.header.writeline(line)


def ordered_set(*items: Any) -> Any:
    from torch.utils._ordered_set import OrderedSet

    return OrderedSet(items)


def free_symbols(value: Any, unbacked_only: bool) -> Any:
    # torch 2.11-2.13: torch._inductor.utils.get_free_symbols.
    from torch._inductor.utils import get_free_symbols

    return get_free_symbols(value, unbacked_only)


def triton_compiles_for(device: torch.device) -> bool:
    """Whether inductor compiles user triton kernels for `device` (torch 2.11-2.13: its GPU types)."""
    from torch._inductor.utils import is_gpu

    return is_gpu(device.type)


def user_defined_triton_kernel(
    kernel: Any, grids: list, kernel_args: dict[str, Any], reads: list[str], writes: list[str],
    descriptors: dict[str, Any], scalar_types: dict[str, str],
) -> Any:
    """Lower one launch to inductor's ir.UserDefinedTritonKernel (a direct launch).

    torch 2.11-2.13: the IR node names the kernel by an index into torch's kernel side table
    (torch._higher_order_ops.triton_kernel_wrap.kernel_side_table), so the kernel is added
    there. Its constructor asks torch's own TTIR analysis what the kernel reads and writes
    (2.11: identify_mutated_tensors, 2.13: identify_accessed_tensors), once per launch and
    uncached; for the duration of the constructor both answer with our analysis' result,
    already computed and cached, so each kernel is analysed once per process and the
    scheduler sees the same written set functionalization used. `descriptors` maps a
    parameter to the block shape of the TensorDescriptor inductor builds over its tensor
    (torch's "stable" TMA metadata, 2.11-2.13). `scalar_types` are the signature types of
    scalar parameters, see scalar_argument_types.
    """
    import torch._higher_order_ops.triton_kernel_wrap as torch_triton
    from torch.fx.immutable_collections import immutable_list

    tensors = [name for name, value in kernel_args.items() if is_inductor_tensor(value)]
    kernel_args = {name: _SourceFloat(value) if isinstance(value, float) and not math.isfinite(value) else value
                   for name, value in kernel_args.items()}

    def identify_mutated_tensors(*args: Any, **kwargs: Any) -> list[str]:
        return [name for name in tensors if name in writes]

    def identify_accessed_tensors(*args: Any, **kwargs: Any) -> Any:
        from torch._inductor.dependencies import ReadWrites, StarDep
        from torch.utils._ordered_set import OrderedSet

        return torch_triton.TensorAccesses(
            ReadWrites(
                reads=OrderedSet(StarDep(n) for n in tensors if n in reads or n in writes),
                writes=OrderedSet(StarDep(n) for n in tensors if n in writes),
                index_exprs=OrderedSet(),
            ),
            can_fuse_epilogue=False,
        )

    replacements = {"identify_mutated_tensors": identify_mutated_tensors}
    if hasattr(torch_triton, "TensorAccesses"):  # torch >= 2.12
        replacements["identify_accessed_tensors"] = identify_accessed_tensors
    with _TORCH_ANALYSIS_LOCK:
        saved = {name: getattr(torch_triton, name) for name in replacements if hasattr(torch_triton, name)}
        try:
            for name, fn in replacements.items():
                setattr(torch_triton, name, fn)
            return _typed_user_kernel_class()(
                scalar_types,
                kernel_idx=torch_triton.kernel_side_table.add_kernel(kernel),
                grid=grids,
                # inductor caches descriptors by (tensor, metadata): hashable, printed as a list
                # in its generated code, as torch's own node arguments are (FX immutable_list).
                tma_descriptor_metadata={name: ("stable", (immutable_list(block_shape),))
                                         for name, block_shape in descriptors.items()},
                kernel_args=kernel_args,
            )
        finally:
            for name, fn in saved.items():
                setattr(torch_triton, name, fn)


_TORCH_ANALYSIS_LOCK = threading.Lock()


class _SourceFloat(float):
    """A float whose repr is Python source: float('inf'), float('-inf'), float('nan').

    torch 2.11-2.13: define_user_defined_triton_kernel (codegen/wrapper.py) writes the kernel's
    constexpr values into the module that defines it as `triton_meta={...!r}`, a module that
    does not import inf or nan: a constexpr `-inf` (a masked load's other, a padding value)
    failed to compile with "NameError: name 'inf' is not defined" (torch's own path too; GPU
    hunt, H100). Pickled, it is a plain float."""

    def __repr__(self) -> str:
        return f"float('{float(self)!r}')"

    def __reduce__(self) -> tuple:
        return float, (float(self),)


@functools.cache
def install_launcher_names_for_nonfinite_constants() -> None:
    """Let the launchers inductor makes with triton's launcher read a constexpr `inf` / `nan`.

    torch 2.11-2.13: CompileResult._get_arg_lists (runtime/triton_heuristics.py) writes each
    constexpr's value into the launcher's source as repr(value), and _gen_launcher_code execs
    that source in `scope`: a non-finite constexpr (evaluated from _SourceFloat's text, a plain
    float again) became `nan` / `inf`, "NameError: name 'nan' is not defined" at the first
    launch. Our launches mostly take the static launcher, whose source names no constexpr.
    They reach triton's where the static launcher refuses them; under cpp_wrapper, whose
    compile-time autotuning block launched each kernel that way (GPU hunt under
    cpp_wrapper=True, H100; torch's built-in path fails the same way); and in a process whose
    caches hold the compiled graph, where nothing of ours runs before the launch (so the
    package installs this when inductor's runtime is imported). Only a launcher whose
    constants hold such a float gets the two names; every other is made as before."""
    from torch._inductor.runtime import triton_heuristics

    gen_launcher_code = triton_heuristics.CompileResult._gen_launcher_code

    @functools.wraps(gen_launcher_code)
    def _gen_launcher_code(self: Any, scope: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        constants = self.compile_meta.get("constants", {})
        if any(isinstance(value, float) and not math.isfinite(value) for value in constants.values()):
            scope.setdefault("inf", math.inf)
            scope.setdefault("nan", math.nan)
        return gen_launcher_code(self, scope, *args, **kwargs)

    triton_heuristics.CompileResult._gen_launcher_code = _gen_launcher_code


@functools.cache
def _typed_user_kernel_class() -> Any:
    ir = inductor_ir()

    class TypedUserDefinedTritonKernel(ir.UserDefinedTritonKernel):
        """inductor's user-kernel node, defined with the scalar types triton's JIT would give."""

        def __init__(self, scalar_types: dict[str, str], **kwargs: Any) -> None:
            self.scalar_types = scalar_types
            super().__init__(**kwargs)

        def codegen(self, wrapper: Any) -> None:
            from . import config

            with scalar_argument_types(self.scalar_types), (
                    launched_statically(wrapper) if config.static_launch else contextlib.nullcontext()):
                super().codegen(wrapper)

        def can_fuse_epilogue(self) -> bool:
            # torch >= 2.12 (config.epilogue_fusion_user_defined_triton_kernel): ours fused what is
            # exact before lowering; no second fusion on top.
            # See [Note: Fusing pointwise code into user kernels]
            from . import config

            parent = getattr(super(), "can_fuse_epilogue", None)
            return not config.fusion and parent is not None and parent()

    return TypedUserDefinedTritonKernel


_scalar_types = threading.local()


@contextlib.contextmanager
def scalar_argument_types(types: dict[str, str]) -> Any:
    """While inductor defines a user kernel in this thread: each parameter named in `types`
    gets that signature type; float and bool scalars get no divisible-by-16 attribute, and a
    bool True is not made the constant 1. See [Note: Scalar argument types under inductor].

    torch 2.11-2.13: define_user_defined_triton_kernel (codegen/wrapper.py) types its scalar
    arguments (SizeArg) with signature_to_meta and marks them divisible by 16 with config_of,
    both imported by name into codegen/wrapper.py, and makes an argument that
    V.graph.sizevars.statically_known_equals(arg, 1) a constant. Both functions are wrapped
    once, process-wide, and act only for the thread inside this context; the sizevars method
    is shadowed on this graph's instance for its duration.

    Left as inductor makes it (torch 2.11-2.13): an int argument equal to 1 of a
    `do_not_specialize` parameter is still compiled as the constant 1 (triton's JIT keeps it
    an i32); the kernel computes the same values, and the value cannot be told from other
    ints equal to 1 where that check runs. tests/test_inductor_corpus.py lists it.
    """
    from torch._inductor.codegen import wrapper as wrapper_module
    from torch._inductor.virtualized import V

    _install_scalar_type_wrappers(wrapper_module)
    sizevars = V.graph.sizevars
    known_equals = sizevars.statically_known_equals

    def statically_known_equals(left: Any, right: Any, *args: Any, **kwargs: Any) -> bool:
        if isinstance(left, bool):  # triton's JIT never makes a bool a constant
            return False
        return known_equals(left, right, *args, **kwargs)

    previous = getattr(_scalar_types, "types", None)
    _scalar_types.types = types
    sizevars.statically_known_equals = statically_known_equals
    try:
        yield
    finally:
        del sizevars.statically_known_equals
        _scalar_types.types = previous


# [Note: Our launches use inductor's static launcher]
# TL;DR: on a GPU, inductor launches the user kernels of our launches with its static launcher
# (the cubin launched by torch's own C++ code) where that launcher handles them, and with
# triton's otherwise. Triton's launcher is C source generated per signature and built with the
# host's C compiler: 0.2-0.4 s per kernel signature, one after another in the compiling process
# (11 builds, 3.1-3.6 s, in the first step of the Llama + Liger benchmark on an H200).
# Context: inductor launches its own kernels statically; user kernels only under the global
# config.static_launch_user_defined_triton_kernels (off by default: a user kernel may use a
# feature the static launcher does not know). A global switch would also change kernels this
# package never saw, and it is read in inductor's compile workers, which do not import us. So
# our node marks the kernel it defines (inductor_meta[STATIC_LAUNCH_META], during its codegen),
# and in the compiling process, where inductor makes each kernel's launchers, a marked kernel's
# compiled configs are offered to the static launcher with that config on for the call: its
# own checks refuse what it cannot launch (launch hooks, scratch memory, clusters, TMA
# descriptors, launch attributes); any error there (an argument type it has no code for), or
# in making the static launchers (where triton's would report a config too big for the GPU),
# keeps triton's launchers too. Nothing else changes: the generated code, inductor's caches,
# the arguments and grids (both launchers take them from the same compiled signature).
# The hook that does this is installed when inductor's runtime is imported, not at codegen: a
# process whose caches hold the graph runs none, and launches statically too.
STATIC_LAUNCH_META = "torch_triton_hop_static_launch"


class _MarkedKernelInfo:
    """The kernel class inductor asks for the common inductor_meta, adding our mark."""

    def __init__(self, base: Any) -> None:
        self._base = base

    def inductor_meta_common(self) -> dict[str, Any]:
        return {**self._base.inductor_meta_common(), STATIC_LAUNCH_META: True}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)


@contextlib.contextmanager
def launched_statically(wrapper: Any) -> Any:
    """While our node defines its kernel in `wrapper`: the definition carries our mark, and
    inductor makes a marked kernel's launchers statically where it can (see [Note: Our
    launches use inductor's static launcher]).

    torch 2.11-2.13: define_user_defined_triton_kernel (codegen/wrapper.py) takes the common
    inductor_meta from self._get_triton_info_kernel_cls().inductor_meta_common(), shadowed
    here on this wrapper instance; CachingAutotuner._make_launchers makes the launchers of
    `compile_results` (TritonCompileResult or StaticTritonCompileResult) in the compiling
    process, and StaticTritonCompileResult.can_statically_launch(kernel, inductor_meta,
    triton_meta, heuristic_type) decides, reading config.static_launch_user_defined_triton_kernels.
    """
    from torch._inductor import config as inductor_config

    get_info = getattr(type(wrapper), "_get_triton_info_kernel_cls", None)
    if get_info is None or not hasattr(inductor_config, "static_launch_user_defined_triton_kernels"):
        yield
        return
    install_static_launchers()
    marked = _MarkedKernelInfo(get_info())
    wrapper._get_triton_info_kernel_cls = lambda: marked
    try:
        yield
    finally:
        del wrapper._get_triton_info_kernel_cls


@functools.cache
def install_static_launchers() -> None:
    """Make the launchers of kernels our node marked statically where inductor can.

    Installed at our node's codegen, and when inductor's runtime is imported: a process whose
    caches hold the compiled graph runs no codegen, yet makes the launchers of the marked
    kernels the cached module defines (before this, triton's launchers there: built with the
    host's C compiler where triton's cache lacked them). Reads the package's
    config.static_launch when the launchers are made, so turning it off holds for cached
    graphs too."""
    from torch._inductor.runtime import triton_heuristics

    from . import config

    make_launchers = getattr(triton_heuristics.CachingAutotuner, "_make_launchers", None)
    if make_launchers is None:  # not in any supported torch; triton's launchers, as inductor makes them
        return

    @functools.wraps(make_launchers)
    def _make_launchers(self: Any) -> Any:
        if (not self.inductor_meta.get(STATIC_LAUNCH_META) or not config.static_launch
                or len(self.launchers) == len(self.compile_results)):
            return make_launchers(self)
        compiled = self.compile_results
        self.compile_results = [_statically_launched(self, result) for result in compiled]
        try:
            return make_launchers(self)
        except Exception as e:  # noqa: BLE001 - e.g. a config too big for the GPU, which triton's
            # launcher reports as OutOfResources (inductor then drops that config) and the static
            # launcher may report otherwise: triton's launchers, as inductor would have made them.
            if self.compile_results == compiled:
                raise
            _log.debug("kernel %s keeps triton's launchers: %s: %s", self.inductor_meta.get("kernel_name"),
                       type(e).__name__, e)
            self.compile_results, self.launchers = compiled, []
            return make_launchers(self)

    triton_heuristics.CachingAutotuner._make_launchers = _make_launchers


def _statically_launched(autotuner: Any, result: Any) -> Any:
    """`result` as a StaticTritonCompileResult where the static launcher takes its kernel."""
    from torch._inductor import config as inductor_config
    from torch._inductor.runtime import triton_heuristics

    if type(result) is not triton_heuristics.TritonCompileResult:
        return result
    try:
        with inductor_config.patch(static_launch_user_defined_triton_kernels=True):
            kernel = triton_heuristics.StaticTritonCompileResult.can_statically_launch(
                result.kernel, autotuner.inductor_meta, autotuner.triton_meta, autotuner.heuristic_type)
    except Exception as e:  # noqa: BLE001 - triton's launcher, as inductor would have used
        _log.debug("kernel %s keeps triton's launcher: %s: %s", autotuner.inductor_meta.get("kernel_name"),
                   type(e).__name__, e)
        return result
    if kernel is None:
        return result
    return triton_heuristics.StaticTritonCompileResult(kernel, result.config, result.compile_meta,
                                                       result.inductor_meta)


def _is_int_type(typ: str) -> bool:
    return typ[:1] in ("i", "u") and typ != "u1"  # i32, i64, u64, ...; u1 is a bool


@functools.cache
def _install_scalar_type_wrappers(wrapper_module: Any) -> None:
    from torch._inductor.codegen.common import ConstexprArg, SizeArg

    signature_to_meta, config_of = wrapper_module.signature_to_meta, wrapper_module.config_of

    def typed(signature: list[Any]) -> tuple[list[Any], dict[str, str]]:
        """`signature` with our float and bool scalars as constexprs (inductor then computes no
        type, divisibility or equality to 1 for them; ints keep inductor's divisibility, which
        is triton's), and the types to put in its place."""
        types = getattr(_scalar_types, "types", None) or {}
        ours = {arg.name: types[arg.name] for arg in signature if getattr(arg, "name", None) in types}
        return [ConstexprArg(name=arg.name) if isinstance(arg, SizeArg) and arg.name in ours
                and not _is_int_type(ours[arg.name]) else arg for arg in signature], ours

    @functools.wraps(signature_to_meta)
    def typed_signature_to_meta(signature: list[Any], *args: Any, **kwargs: Any) -> dict[str, str]:
        signature, ours = typed(signature)
        meta = signature_to_meta(signature, *args, **kwargs)
        meta.update((name, typ) for name, typ in ours.items() if name in meta)
        return meta

    @functools.wraps(config_of)
    def typed_config_of(signature: list[Any], *args: Any, **kwargs: Any) -> Any:
        return config_of(typed(signature)[0], *args, **kwargs)

    wrapper_module.signature_to_meta = typed_signature_to_meta
    wrapper_module.config_of = typed_config_of


def is_non_overlapping_and_dense(t: torch.Tensor) -> bool:
    # torch 2.13: torch._prims_common.is_non_overlapping_and_dense_or_false (symbolic-safe);
    # older releases: is_non_overlapping_and_dense.
    import torch._prims_common as prims

    check = getattr(prims, "is_non_overlapping_and_dense_or_false", None) or prims.is_non_overlapping_and_dense
    return bool(check(t))


def clone_fake(t: torch.Tensor) -> torch.Tensor:
    """A fake tensor's clone (same strides when dense), for graph-pass metadata."""
    return torch.ops.aten.clone.default(t)


def is_backward_tangent(node: torch.fx.Node) -> bool:
    """A backward graph's input that holds the gradient of a forward output.

    AOTAutograd names these placeholders tangents_N (torch 2.11-2.13); torch's own
    partitioner (torch/_functorch/partitioners.py, _is_tangent) recognises them the same way.
    """
    return node.op == "placeholder" and str(node.target).startswith("tangents")


def donated_backward_inputs(graph: torch.fx.Graph) -> set[torch.fx.Node]:
    """The placeholders of backward graph `graph` that AOTAutograd donates to it: saved tensors
    no forward input, user-visible forward output or gradient output shares memory with.

    torch 2.11-2.13: AOTAutograd records their placeholder indices in
    TracingContext.fw_metadata.bw_donated_idxs (torch._functorch.config.donated_buffer, on by
    default), read by inductor's GraphLowering through torch._inductor.utils.get_donated_idxs
    to make them DonatedBuffers whose memory inductor reuses; the list is empty where the
    backward runs with retain_graph or create_graph, and a backward compiled with donated
    buffers refuses to run with either. The list is the backward's only while a backward graph
    (one with tangents_N placeholders, see is_backward_tangent) is compiled; any other graph
    gets the empty set.
    """
    placeholders = list(graph.find_nodes(op="placeholder"))
    if not any(map(is_backward_tangent, placeholders)):
        return set()
    return {placeholders[i] for i in donated_input_indices()
            if 0 <= i < len(placeholders) and not is_backward_tangent(placeholders[i])}


def donated_input_indices() -> tuple[int, ...]:
    """The backward placeholder indices AOTAutograd donates in the compile under way (see
    donated_backward_inputs), () where none or outside AOTAutograd."""
    try:
        from torch._inductor.utils import get_donated_idxs

        return tuple(get_donated_idxs() or ())
    except (ImportError, AttributeError):
        return ()


def inductor_imported() -> bool:
    import sys

    return "torch._inductor.lowering" in sys.modules or "torch._inductor.compile_fx" in sys.modules


def run_and_get_code(fn: Any, *args: Any) -> tuple[Any, list[str]]:
    """Call a compiled `fn` and return its result and inductor's generated code (torch 2.11-2.13)."""
    from torch._inductor.utils import run_and_get_code as run

    return run(fn, *args)


def sympy_value(value: Any) -> Any:
    """An int or SymInt as inductor takes sizes: int, or the SymInt's sympy expression."""
    return value.node.expr if isinstance(value, torch.SymInt) else value


def sympy_floor_div() -> Any:
    """The sympy function of `//` in symbolic sizes (torch 2.11-2.13:
    torch.utils._sympy.functions.FloorDiv)."""
    from torch.utils._sympy.functions import FloorDiv

    return FloorDiv


def ceiling_division_parts(expression: Any) -> tuple[Any, Any] | None:
    """(a, b) where a symbolic size's sympy `expression` is the ceiling of a / b as torch writes
    it: `math.ceil(a / b)` (CeilToInt(IntTrueDiv(a, b))) or `(a + b - 1) // b` (FloorDiv, as
    triton.cdiv gives); else None. torch 2.11-2.13: torch.utils._sympy.functions."""
    from torch.utils._sympy.functions import CeilToInt, FloorDiv, IntTrueDiv

    if isinstance(expression, CeilToInt) and isinstance(expression.args[0], IntTrueDiv):
        return tuple(expression.args[0].args)
    if isinstance(expression, FloorDiv) and expression.args[1].is_Integer:
        numerator, divisor = expression.args
        return numerator - (divisor - 1), divisor
    return None


def add_to_graph_cache_keys(name: str, targets: tuple[Any, ...], value: Any) -> None:
    """Add `value(gm)` to inductor's FX-graph cache key and AOTAutograd's cache key of every
    graph `gm` that calls one of `targets` (in any of its subgraphs), as the details' `name`.

    torch 2.11-2.13: both keys hash a pickled FxGraphHashDetails (codecache.py), whose
    every attribute is part of the key; AOTAutograd's AOTAutogradCacheDetails
    (autograd_cache.py) subclasses it and runs its __init__ on Dynamo's graph, inductor runs
    it on each graph AOTAutograd hands over (forward, backward, inference). Neither offers
    a HOP or a lowering a way to add to the key (torch's own user-kernel HOPs are special-
    cased in that __init__), and the user's config (cache_key_tag, custom passes) must stay
    the user's; so __init__ is wrapped, once, when codecache is imported. Graphs without
    our launches keep their keys. See [Note: Compiled artifacts carry the package's digest].
    """
    from ._compat import when_imported

    def install() -> None:
        from torch._inductor.codecache import FxGraphHashDetails

        init = FxGraphHashDetails.__init__
        extra = getattr(init, "_torch_triton_hop_keys", None)
        if extra is None:
            extra = {}

            def __init__(self: Any, gm: Any, *args: Any, **kwargs: Any) -> None:
                init(self, gm, *args, **kwargs)
                for key, (key_targets, key_value) in extra.items():
                    if _calls_any(gm, key_targets):
                        setattr(self, key, key_value(gm))

            __init__.__wrapped__ = init  # type: ignore[attr-defined]
            __init__._torch_triton_hop_keys = extra  # type: ignore[attr-defined]
            FxGraphHashDetails.__init__ = __init__
        extra[name] = (targets, value)

    when_imported("torch._inductor.codecache", install)


def _calls_any(gm: Any, targets: tuple[Any, ...]) -> bool:
    if not isinstance(gm, torch.fx.GraphModule):
        return False
    return any(isinstance(module, torch.fx.GraphModule)
               and any(module.graph.find_nodes(op="call_function", target=target) for target in targets)
               for module in gm.modules())


# -- pointwise code through inductor's own lowerings (see _pointwise_triton) -----------------
# torch 2.11-2.13: inductor lowers an aten op with lowerings[op] (TensorBox inputs, under a
# GraphLowering set as V.graph) to an ir.Pointwise whose loader calls ops.*; TritonOverrides
# turns each ops.* call into the Triton text its Triton kernels contain. A few overrides read
# the kernel being generated: tanh looks its argument up in V.kernel.cse.varname_map (for a
# ROCm fast path) and to_dtype records V.kernel.min_elem_per_thread (for fp8 layouts); the
# stand-in kernel below answers both.


def pointwise_lowering(target: Any) -> Any:
    """Inductor's lowering of aten op `target`, or None."""
    from torch._inductor.lowering import lowerings

    return lowerings.get(target)


def _indexed(device: torch.device) -> torch.device:
    # lowerings resolve an index-less GPU device through the driver
    return torch.device(device.type, 0) if device.index is None and device.type != "cpu" else device


@contextlib.contextmanager
def lowering_graph(device: torch.device) -> Any:
    """A GraphLowering of an empty graph as V.graph, on `device`, for calling lowerings
    outside a compile (torch 2.11-2.13: lowerings ask V.graph for the current device)."""
    from torch._inductor.graph import GraphLowering

    graph = torch.fx.Graph()
    graph.output(())
    lowering = GraphLowering(torch.fx.GraphModule({}, graph))
    with _virtualized().set_graph_handler(lowering), lowering.set_current_device(_indexed(device)):
        yield


@contextlib.contextmanager
def lowering_node(node: torch.fx.Node) -> Any:
    """V.graph.current_node is `node` while it is lowered, as GraphLowering.run_node sets it.

    torch 2.11-2.13: pointwise lowerings read the node (make_pointwise: the casts of
    emulate_precision_casts, marked on the node by make_fx as low_precision_pointwise_barrier;
    2.13: emulate_precision_casts_on_saved_tensors, from the node's users)."""
    with _virtualized().graph.set_current_node(node):
        yield


def kernel_numerics_settings(launch_options: dict[str, Any]) -> list[str]:
    """The settings under which inductor compiles its own Triton kernels with other options
    than a user's kernel (fused or not) launched with `launch_options` is compiled with
    (torch 2.11-2.13, TritonKernel.triton_meta_common): emulate_precision_casts turns FMA
    contraction off (enable_fp_fusion=False, ptxas --fmad=false) where the user's kernel keeps
    triton's default; inductor asks for contraction otherwise, where the launch may not
    (enable_fp_fusion=False, or TRITON_DEFAULT_FP_FUSION=0). eager_numerics.disable_ftz turns
    libdevice's flush to zero off (enable_reflect_ftz=False), as a launch's
    enable_reflect_ftz=False does for the user's kernel alone. torch 2.12-2.13:
    eager_numerics.use_pytorch_libdevice (and emulate_precision_casts) points the compile
    workers at the CUDA toolkit's libdevice (runtime.compile_tasks), which a kernel compiled
    elsewhere may not use."""
    from torch._inductor import config

    eager_numerics = getattr(config, "eager_numerics", None)
    settings = []
    user_fp_fusion = _compat.fp_fusion_options(launch_options)  # None: forced off, inductor's kernels too
    if config.emulate_precision_casts:
        settings.append("emulate_precision_casts")
    elif user_fp_fusion is not None:
        user_contracts, why = user_fp_fusion
        if not user_contracts:
            settings.append(why)
    if getattr(eager_numerics, "disable_ftz", False):
        settings.append("eager_numerics.disable_ftz")
    elif launch_options.get("enable_reflect_ftz") is False:
        settings.append("the launch's enable_reflect_ftz=False")
    if getattr(eager_numerics, "use_pytorch_libdevice", False):
        settings.append("eager_numerics.use_pytorch_libdevice")
    return settings


def upcasts_to_fp32() -> bool:
    """Whether inductor's Triton code computes fp16 / bf16 values in fp32 (torch 2.11-2.13:
    config.triton.codegen_upcast_to_fp32, on by default)."""
    from torch._inductor import config

    return bool(config.triton.codegen_upcast_to_fp32)


def lowering_input(name: str, device: torch.device, dtype: torch.dtype, dim: int) -> Any:
    """A TensorBox of a graph input `name`: one element per lane (dim > 0) or a 0-d tensor."""
    ir = inductor_ir()
    size = [1024] if dim else []
    layout = ir.FixedLayout(_indexed(device), dtype, size, [1] * len(size))
    return ir.TensorBox.create(ir.InputBuffer(name=name, layout=layout))


def held_as(box: Any, dtype: torch.dtype) -> Any:
    """`box` as a buffer of `dtype` would hold it: a Pointwise converting its loader's value with
    the handler's held_as (ops.to_dtype where the handler has none; the lowerings keep an
    inlined value in whatever type the overrides compute)."""
    ir = inductor_ir()
    loader = box.make_loader()
    V = _virtualized()

    def inner_fn(index: Any) -> Any:
        # V.ops is read when the loader runs: the ops handler then (evaluate_lowered's), not now's.
        # Looked up on the class: inductor's own handlers warn of any op they do not define.
        handler = V.ops
        convert = handler.held_as if hasattr(type(handler), "held_as") else handler.to_dtype
        return convert(loader(index), dtype)

    return ir.Pointwise.create(device=box.get_device(), dtype=dtype, inner_fn=inner_fn, ranges=list(box.get_size()))


def lowered_dtype(box: Any) -> torch.dtype:
    return box.get_dtype()


def evaluate_lowered(box: Any, handler: Any, variables: dict[str, Any]) -> Any:
    """Run `box`'s loader at one lane with `handler` as the ops handler."""
    import types

    import sympy

    stub_kernel = types.SimpleNamespace(cse=types.SimpleNamespace(varname_map=variables), min_elem_per_thread=0)
    V = _virtualized()
    loader = box.make_loader()
    with V.set_ops_handler(handler), V.set_kernel_handler(stub_kernel):
        return loader([sympy.Integer(0)] * len(box.get_size()))


def triton_op_text(name: str, *args: Any, **kwargs: Any) -> str:
    """The Triton text inductor emits for ops.`name`(*args) (its TritonOverrides)."""
    from torch._inductor.codegen.triton import TritonOverrides

    return getattr(TritonOverrides, name)(*args, **kwargs)


@functools.lru_cache(None)
def _variable_class() -> Any:
    from torch._inductor.codegen.common import CSEVariable

    class Variable(CSEVariable):  # type: ignore[misc, valid-type]
        """A value of the helper (its name and dtype), as inductor's overrides expect."""

    return Variable


def lowering_variable(name: str, dtype: torch.dtype | None) -> Any:
    # torch 2.11-2.13: CSEVariable(name, bounds, dtype); overrides test isinstance and read .dtype.
    from torch.utils._sympy.value_ranges import ValueRanges

    return _variable_class()(name, ValueRanges.unknown(), dtype)


def triton_runtime_helpers() -> dict[str, Any]:
    """The names inductor's Triton code calls (libdevice, tl_math, triton_helpers), as its
    generated modules import them (torch 2.11-2.13: torch._inductor.runtime.triton_helpers)."""
    from torch._inductor.runtime import triton_helpers
    from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math

    return {"triton_helpers": triton_helpers, "libdevice": libdevice, "tl_math": tl_math}
