"""Inductor: how ``torch.compile``'s default backend compiles our two HOPs.

Three pieces, registered once by :func:`register` (lazily: the first time a launch is
functionalized while inductor is imported, so ``import torch_triton_hop`` does not import
inductor):

1. A post-grad graph pass (:func:`reinplace_functional_launches`) turns each
   ``user_triton_kernel_functional`` node into ``user_triton_kernel_mutation`` and
   writes in place wherever no later use could tell the difference; only the other
   written tensors are cloned. See [Note: Reinplacing functional launches].
2. A lowering for ``user_triton_kernel_mutation``. On a GPU it hands the launch to
   inductor's own machinery for user-defined Triton kernels (``ir.UserDefinedTritonKernel``,
   which compiles the kernel, autotunes its configs and emits a direct launch in the
   generated code). Under the Triton interpreter (or on a device triton cannot compile
   for) it emits an extern kernel whose generated line calls :func:`_hops.launch`.
3. A lowering for ``user_triton_kernel_functional``, used where the pass above leaves a
   launch (``config.pattern_matcher=False``, arguments that share memory): copy every
   written tensor (a shared_memory group's span once), then launch.
4. A hint to AOTAutograd's partitioner, which runs before all of these: with fusion on,
   a pointwise producer of a launch's input may be recomputed in the backward rather than
   saved. See [Note: The partitioner and prologue fusion].

Every torch internal used here goes through ``_compat`` (inductor section).
"""

from __future__ import annotations

import logging
import operator
import threading
from typing import Any

import torch

from . import _compat, _compat_inductor, _trace, config
from ._hops import (
    member_offset,
    parse_shared_memory,
    storage_span,
    launcher_for_inductor,
    tensors_accessed,
    triton_kernel_wrapper_functional,
    triton_kernel_wrapper_mutation,
)
from ._fused_kernels import recipe_of
from ._fx_values import node_value, view_source
from ._fusion import fuse_pointwise
from ._scalar_types import eager_scalar_types
from ._side_table import (TensorDescriptorSpec, base_kernel, kernel_key_name, kernel_side_table,
                          runs_a_recorded_pre_hook)
from .errors import UnsupportedTritonKernelError, raise_unsupported

log = logging.getLogger(__name__)

__all__ = ["register", "register_if_inductor_loaded", "reinplace_functional_launches"]

_registered = False
_register_lock = threading.Lock()


def register_if_inductor_loaded() -> None:
    """Register when inductor has been imported (a compile is under way); otherwise wait.

    Called before every functionalization of a launch, which precedes any lowering of
    our HOPs (AOTAutograd functionalizes inside inductor's compile).
    """
    if not _registered and _compat_inductor.inductor_imported():
        register()


def register() -> None:
    """Register the pass and the lowerings with inductor (idempotent, thread-safe)."""
    global _registered
    if _registered:
        return
    with _register_lock:
        if _registered:
            return
        _compat_inductor.register_inductor_lowering(triton_kernel_wrapper_mutation, _lower_mutation)
        _compat_inductor.register_inductor_lowering(triton_kernel_wrapper_functional, _lower_functional)
        _compat_inductor.register_post_grad_graph_pass(triton_kernel_wrapper_functional, _reinplace_match)
        _compat_inductor.declare_fusible_consumer(triton_kernel_wrapper_functional, _a_fusible_consumer)
        _registered = True


# [Note: The partitioner and prologue fusion]
# TL;DR: with fusion on, the partitioner treats a launch like inductor's own kernels: a
# pointwise value that a backward launch reads may be recomputed there instead of saved.
# Context: an autograd.Function around a kernel saves the kernel's inputs for its backward
# (Liger's RMSNorm saves X, a residual sum h + attn_out in fp32). AOTAutograd's min-cut
# partitioner chooses what the forward saves: a pointwise value may be recomputed in the
# backward from values saved anyway, which it counts as free where the value fuses into its
# backward consumer; a value whose backward consumer cannot fuse it is "materialized in
# backward" and always saved. It knew nothing of our launches, so it saved every such X: on
# the Llama benchmark one fp32 activation (64 MiB) more than plain PyTorch, whose partitioner
# keeps a bf16 matmul output and recomputes the sum in its norm's backward kernel.
# The fusion folds pointwise producers into the inputs a kernel reads (prologues), so the
# package tells the partitioner that a functional launch is a fusible consumer while
# config.fusion is on, and nothing else: what to save stays the partitioner's choice, by its
# own costs. Where the fusion then refuses a recomputed prologue (its rules in
# [Note: Fusing pointwise code into user kernels]), the value is recomputed by a separate
# inductor kernel, the trade plain PyTorch makes for its own non-fusible consumers. The
# recomputation runs the same aten ops on the same saved values, as it does for plain code.
# Not for a launch that reads a float narrower than fp32 (fp16, bf16, fp8): a recomputed
# value of such a dtype is rounded where the forward stores it, but inductor's kernels that
# fuse it in the backward compute on without rounding it (as they do for their own
# intermediates), so the gradients differed from the program compiled with fusion off
# (fusion hunt 8: an fp16 `x + w` saved by an autograd.Function around a kernel). Saved
# instead, as with fusion off; a prologue fused into the forward launch stores it too.


def _a_fusible_consumer(node: Any) -> bool:
    """Whether the partitioner may count `node` (a functional launch) as a consumer its
    pointwise producers fuse into. See [Note: The partitioner and prologue fusion]."""
    if not config.fusion:
        return False
    values = [value.meta.get("val") for value in node.kwargs.get("kwargs", {}).values()
              if isinstance(value, torch.fx.Node)]
    return not any(isinstance(value, torch.Tensor) and value.dtype.is_floating_point and value.dtype.itemsize < 4
                   for value in values)


# --- post-grad pass ----------------------------------------------------------------------

# [Note: Reinplacing functional launches]
# TL;DR: written memory is written in place, without a copy, when nothing after the launch
# reads its old contents; the unit is a written argument, or a shared_memory group (arguments
# that share memory in the user's program) as a whole.
# Context: functionalization clones every written tensor (the functional HOP; a group gets
# views of one copy of its span, see [Note: Arguments that share memory]); inductor removes
# such clones for its own ops in its reinplace pass, but that pass only knows torch's HOPs.
# Ours runs before it, as a post-grad pattern pass, and decides per unit U of launch N,
# with S the storage U's tensors live in:
#  - no tensor argument of N outside U that the kernel reads or writes lives in S (one
#    graph value passed twice, e.g. two torch.zeros merged by CSE, were separate buffers in
#    the program);
#  - every node after N that uses a node living in S is a write-back scatter (it puts a
#    result of N back exactly where that result's argument already lies in S, found by
#    comparing the scatter's region with the argument's sizes, strides and offset; a chain
#    of them puts back several), or the epilogue `copy_` of such a result into a graph
#    input;
#  - if S belongs to a graph input, the program mutates the input anyway: such a copy_ is
#    in the graph. A backward graph's tangent (the gradient of a forward output) is the
#    exception: AOTAutograd writes nothing back into tangents, but the graph writes one only
#    because the user's backward wrote the gradient it was given (Liger's RMSNorm backward
#    passes dY as dX), as eager does to that same tensor. So is a saved tensor AOTAutograd
#    donates to the backward (one no forward input, user-visible output or gradient shares
#    memory with; none where the backward runs with retain_graph, see
#    _compat_inductor.donated_backward_inputs): inductor reuses such memory for its own
#    buffers, and the user's backward wrote it in eager (Liger's SwiGLU backward writes the
#    gradients into the saved activations a and b). A copy there is a whole read and write of
#    each activation for nothing: inductor, reusing the dead input for the clone, emits it as
#    an in-place identity copy.
# Otherwise U is copied, exactly as functionalization asked: a single argument by an
# aten.clone before the launch; a group by the functional lowering, which copies its span
# once (the whole launch is left to it then). The rewritten node is
# `user_triton_kernel_mutation`; each getitem of N becomes the argument written, each
# write-back scatter its base, and a copy_ of an argument into the input it already is
# becomes copy_(input, input), which inductor drops.

# Each scatter op, and the view op that gives the region it writes (same arguments after src).
_SCATTER_TO_VIEW = {
    "aten.slice_scatter.default": torch.ops.aten.slice.Tensor,
    "aten.select_scatter.default": torch.ops.aten.select.int,
    "aten.diagonal_scatter.default": torch.ops.aten.diagonal.default,
    "aten.as_strided_scatter.default": torch.ops.aten.as_strided.default,
}
_META_ONLY = ("aten.sym_size.int", "aten.sym_stride.int", "aten.sym_numel.default",
              "aten.sym_storage_offset.default")


def _storage(node: Any) -> Any:
    val = node_value(node)
    return _compat.storage_identity(val) if isinstance(val, torch.Tensor) else None


def _is_input(node: torch.fx.Node) -> bool:
    return node.op in ("placeholder", "get_attr")


def _same_place(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same elements of one storage, in the same order: sizes, strides and offset equal."""

    return (a.dtype == b.dtype and a.dim() == b.dim()
            and all(_compat.statically_known_true(x == y) for x, y in zip(a.size(), b.size()))
            and all(_compat.statically_known_true(x == y) for x, y in zip(a.stride(), b.stride()))
            and _compat.statically_known_true(a.storage_offset() == b.storage_offset()))


def _scatter_region(scatter: torch.fx.Node, base: torch.Tensor) -> torch.Tensor | None:
    """The view of `base` that `scatter` writes its source into."""
    view = _SCATTER_TO_VIEW.get(str(scatter.target))
    if view is None or len(scatter.args) < 2:
        return None
    args = [node_value(a) if isinstance(a, torch.fx.Node) else a for a in scatter.args[2:]]
    kwargs = {k: node_value(v) if isinstance(v, torch.fx.Node) else v for k, v in scatter.kwargs.items()}
    try:
        return view(base, *args, **kwargs)
    except Exception:  # an argument form we do not model: not a write-back we can prove
        return None


def _write_backs(graph: torch.fx.Graph, order: dict[torch.fx.Node, int], node: torch.fx.Node, storage: Any,
                 results: dict[torch.fx.Node, torch.Tensor]) -> dict[torch.fx.Node, torch.fx.Node]:
    """Scatters after launch `node` that write a result back where it already lies in place.

    `results` maps each getitem of the unit to the argument it replaces. Returns each such
    scatter with its base (a node living in `storage`), following chains of scatters.
    """
    in_place = {getitem: node_value(results[getitem]) for getitem in results}  # value -> where it lies
    bases: dict[torch.fx.Node, torch.fx.Node] = {}
    for user in list(graph.nodes)[order[node] + 1:]:
        if str(user.target) not in _SCATTER_TO_VIEW or len(user.args) < 2:
            continue
        target, source = user.args[0], user.args[1]
        base = target if _storage(target) == storage else bases.get(target)
        if base is None or source not in in_place:
            continue
        region = _scatter_region(user, node_value(base))
        if region is not None and _same_place(region, in_place[source]):
            bases[user] = base
            in_place[user] = node_value(base)
    return bases


def _in_place_refusal(graph: torch.fx.Graph, order: dict[torch.fx.Node, int], node: torch.fx.Node,
                      unit: list[str], accessed: set[str], getitems: dict[str, torch.fx.Node],
                      donated: set[torch.fx.Node]) -> tuple[str | None, dict[torch.fx.Node, torch.fx.Node], list[torch.fx.Node]]:
    """Why `unit` (argument names of launch `node`) cannot be written in place (None if it can),
    its write-back scatters with their bases, and the epilogue copies into inputs.
    See [Note: Reinplacing functional launches]."""
    kwargs = node.kwargs["kwargs"]
    storage = _storage(kwargs[unit[0]])
    if storage is None:
        return "not a tensor with storage", {}, []
    others = [n for n, v in kwargs.items() if n not in unit and n in accessed and _storage(v) == storage]
    if others:
        return f"shares memory with argument(s) {others}, separate buffers in the program", {}, []
    sharing = [n for n in graph.nodes if _storage(n) == storage]
    position = order[node]
    results = {getitems[name]: kwargs[name] for name in unit if name in getitems}
    scatters = _write_backs(graph, order, node, storage, results)
    later_uses = [(shared, user) for shared in sharing for user in shared.users
                  if order[user] > position and str(user.target) not in _META_ONLY]
    for scatter in scatters:  # a partly written-back value must be read by the next scatter only
        if any(user in scatters for user in scatter.users) and len(scatter.users) > 1:
            return "a partly written-back value is read", {}, []
    inputs = [n for n in sharing if _is_input(n)]

    def puts_back(source: Any, target: torch.fx.Node) -> bool:  # copy_(target, source) changes nothing in place
        if source in scatters:
            return scatters[source] is target
        return source in results and _same_place(node_value(results[source]), node_value(target))

    copies_back = [user for shared, user in later_uses
                   if user.target is torch.ops.aten.copy_.default and shared in inputs
                   and user.args[0] is shared and puts_back(user.args[1], shared)]
    if not copies_back and not all(_compat_inductor.is_backward_tangent(n) or n in donated for n in inputs):
        return "the memory belongs to a graph input the program does not write", {}, []
    first_copy = min((order[c] for c in copies_back), default=None)
    for shared, user in later_uses:
        if user in scatters or user in copies_back:
            continue
        if first_copy is not None and order[user] > first_copy:
            continue  # after the write-back the input holds the new value either way
        return f"{user.name} reads the old contents of {shared.name} after the launch", {}, []
    return None, scatters, copies_back


def reinplace_functional_launches(graph: torch.fx.Graph) -> None:
    """Fuse pointwise code into every functional launch in `graph` where exact, then write in place
    (see [Note: Fusing pointwise code into user kernels], [Note: Reinplacing functional launches])."""
    for node in list(graph.find_nodes(op="call_function", target=triton_kernel_wrapper_functional)):
        if not _compat.node_erased(node):
            _rewrite(graph, fuse_pointwise(graph, node))


def _reinplace_match(match: Any, *args: Any, **kwargs: Any) -> None:
    _refuse_groups_inductor_split(match.nodes[0])
    _rewrite(match.graph, fuse_pointwise(match.graph, match.nodes[0]))


# [Note: Groups inductor cannot keep in one memory]
# TL;DR: a launch whose shared_memory group inductor would split into separate memory is an
# error under inductor, not a wrong result.
# Context: the functional HOP takes a group's members as separate tensors that happen to
# share storage (see [Note: Arguments that share memory]); a functional graph does not
# promise to keep that. Two ways inductor splits them (adversarial hunt, fourteenth session):
#  - freezing's constant folding (torch._inductor.config.freezing) folds each member of a
#    group computed from parameters into a constant of its own; the span copied from one
#    member then reaches past it;
#  - a member reached through a view of another dtype (`buf[16:48].view(torch.int32)[:8]`)
#    of a tensor the program computes: the span's as_strided cannot be rebased on that
#    tensor (see [Note: A span is taken of its base, not of a view]), and inductor stores
#    the dtype view apart from the tensor, so the launch reads and writes a copy.
# aot_eager, make_fx and export keep the memory shared and give eager's results.
def _view_chain(node: Any) -> list[Any]:
    """`node`, then each node it is a view of, up to the first that is not a view."""
    chain = [node]
    while (node := view_source(node)) is not None:
        chain.append(node)
    return chain


def _described_views(views: list[Any]) -> str:
    return ", ".join(f".view({v.args[1]})" if v.target is torch.ops.aten.view.dtype else str(v.target).split(".")[1]
                     for v in views)


def _refuse_groups_inductor_split(node: torch.fx.Node) -> None:
    kwargs = node.kwargs["kwargs"]
    kernel = kernel_key_name(node.kwargs["kernel"])
    for names in parse_shared_memory(node.kwargs.get("shared_memory")):
        # A constant (get_attr) is a buffer of its own to inductor, whatever it was a view of.
        if any(kwargs[name].op == "get_attr" for name in names) or len({_storage(kwargs[n]) for n in names}) > 1:
            raise_unsupported(
                f"kernel {kernel!r}: arguments {names} share memory in the program, and inductor made them separate "
                "tensors (constant folding under torch._inductor.config.freezing folds each into a constant of "
                "its own), so the kernel would not see through one what it writes through another",
                fix="Compile without freezing, or pass the tensor they are views of as an input of the model")
        for name in names:
            chain = _view_chain(kwargs[name])
            spans = [i for i, n in enumerate(chain) if getattr(n, "target", None) is torch.ops.aten.as_strided.default]
            between = chain[spans[-1] + 1:-1] if spans else []
            if between and not _is_input(chain[-1]):
                raise_unsupported(
                    f"kernel {kernel!r}: argument {name!r} shares memory with {[n for n in names if n != name]} "
                    f"through a view of another dtype ({_described_views(between)}) of a tensor the program "
                    "computes, which inductor stores apart from that tensor, so the kernel's writes would be lost",
                    fix="Pass views of the tensor's own dtype and reinterpret them in the kernel, or compile with "
                        "backend='aot_eager'")


def _rewrite(graph: torch.fx.Graph, node: torch.fx.Node) -> None:
    written = list(node.kwargs["tensors_to_clone"])
    kwargs = dict(node.kwargs["kwargs"])
    getitems: dict[str, torch.fx.Node] = {}
    for user in node.users:
        if user.target is not operator.getitem or written[user.args[1]] in getitems:
            return  # not the shape functionalization produces; the lowering copies everything
        getitems[written[user.args[1]]] = user
    vals = {name: node_value(value) if isinstance(value, torch.fx.Node) else value for name, value in kwargs.items()}
    accessed = tensors_accessed(node.kwargs["kernel"], node.kwargs["constant_args"], node.kwargs["configs"], vals)
    accessed_names = set(accessed.reads) | set(accessed.writes)
    groups = parse_shared_memory(node.kwargs.get("shared_memory"))
    grouped = {name for group in groups for name in group}
    units = groups + [[name] for name in written if name not in grouped]
    order = {n: i for i, n in enumerate(graph.nodes)}
    donated = _compat_inductor.donated_backward_inputs(graph)
    in_place: dict[str, tuple[dict[torch.fx.Node, torch.fx.Node], list[torch.fx.Node]]] = {}
    refusals: dict[str, str] = {}
    for unit in units:
        if len({vals[name].element_size() for name in unit}) > 1:
            refusals[",".join(unit)] = ("its members have dtypes of different widths, which inductor reinterprets "
                                        "correctly only in a fresh copy")
            continue
        reason, scatters, copies_back = _in_place_refusal(graph, order, node, unit, accessed_names, getitems,
                                                          donated)
        if reason is None:
            in_place[",".join(unit)] = scatters, copies_back
        else:
            refusals[",".join(unit)] = reason
    name = kernel_key_name(node.kwargs["kernel"])
    if not in_place:
        _trace.reinplacing(node.name, name, [], refusals)
        log.debug("launch %s (kernel %s): nothing written in place (%s)", node.name, name, refusals)
        return
    if any(",".join(group) in refusals for group in groups):
        log.debug("launch %s (kernel %s): left to the functional lowering, which copies each shared_memory group's "
                  "span once (%s)", node.name, name, refusals)
        return
    for key in refusals:
        if not _compat_inductor.is_non_overlapping_and_dense(vals[key]):
            log.debug("launch %s (kernel %s): %r must be copied and has an odd layout; left to the functional lowering",
                      node.name, name, key)
            return
    with graph.inserting_before(node):
        for key in refusals:
            clone = graph.call_function(torch.ops.aten.clone.default, (kwargs[key],))
            clone.meta["val"] = _compat_inductor.clone_fake(vals[key])
            kwargs[key] = clone
        mutation = graph.call_function(
            triton_kernel_wrapper_mutation,
            (),
            {key: value for key, value in node.kwargs.items()
             if key not in ("tensors_to_clone", "kwargs", "shared_memory")} | {"kwargs": kwargs},
        )
        mutation.meta.update({k: v for k, v in node.meta.items() if k not in ("val", "tensor_meta")})
        mutation.meta["val"] = None
    for argument, getitem in getitems.items():
        getitem.replace_all_uses_with(kwargs[argument])
        graph.erase_node(getitem)
    for scatters, copies_back in in_place.values():
        for scatter, base in scatters.items():  # in graph order: a chain's later links see the base
            scatter.replace_all_uses_with(base)
            graph.erase_node(scatter)
        for copy in copies_back:  # already there: inductor drops dst.copy_(dst)
            copy.args = (copy.args[0], copy.args[0], *copy.args[2:])
    graph.erase_node(node)
    log.debug("launch %s (kernel %s): written in place %s; copied %s", node.name, name, sorted(in_place), refusals)
    _trace.reinplacing(node.name, name, sorted(in_place), refusals)


# --- lowerings ---------------------------------------------------------------------------

def _node_kwargs_vals() -> dict[str, Any]:
    """The example values (fake tensors, SymInts) of the launch being lowered."""
    node = _compat_inductor.inductor_current_node()
    return {name: node_value(value) if isinstance(value, torch.fx.Node) else value
            for name, value in node.kwargs["kwargs"].items()}


def _lower_functional(*, kernel, constant_args, configs, grids, kwargs, tensors_to_clone, shared_memory=None):
    _refuse_groups_inductor_split(_compat_inductor.inductor_current_node())
    ir = _compat_inductor.inductor_ir()
    as_strided = _compat_inductor.inductor_lowering(torch.ops.aten.as_strided.default)
    view_dtype = _compat_inductor.inductor_lowering(torch.ops.aten.view.dtype)
    vals = _node_kwargs_vals()
    kwargs = dict(kwargs)
    # Arguments sharing memory with a written one get views of one copy of their span.
    # See [Note: Arguments that share memory].
    grouped: set[str] = set()
    for names in parse_shared_memory(shared_memory):
        members = [vals[n] for n in names]
        lo, hi, widest = storage_span(members)
        span = as_strided(kwargs[names[widest]], [_compat_inductor.sympy_value(hi - lo)], [1],
                          _compat_inductor.sympy_value(lo))
        copy = _compat_inductor.inductor_require_exact_strides(ir.ExternKernel.copy_input(span), [1])
        unit = members[widest].element_size()
        for name, v in zip(names, members):
            size = [_compat_inductor.sympy_value(d) for d in v.size()]
            stride = [_compat_inductor.sympy_value(d) for d in v.stride()]
            offset = _compat_inductor.sympy_value(member_offset(v, lo, unit))
            if v.element_size() == unit:  # placed, then reinterpreted as another dtype of this width (a view)
                member = as_strided(copy, size, stride, offset)
                kwargs[name] = member if v.dtype == members[widest].dtype else view_dtype(member, v.dtype)
            else:  # the whole copy reinterpreted (an eager view of the fresh buffer), then placed
                kwargs[name] = as_strided(view_dtype(copy, v.dtype), size, stride, offset)
        grouped.update(names)
    for name in tensors_to_clone:
        if name in grouped:
            continue
        copy = ir.ExternKernel.copy_input(kwargs[name])
        kwargs[name] = _compat_inductor.inductor_require_exact_strides(copy, vals[name].stride())
    _lower_launch(kernel, constant_args, configs, grids, kwargs, vals)
    return tuple(kwargs[name] for name in tensors_to_clone)


def _lower_mutation(*, kernel, constant_args, configs, grids, kwargs):
    vals = _node_kwargs_vals()
    _lower_launch(kernel, constant_args, configs, grids, dict(kwargs), vals)
    return None


def _lower_launch(kernel, constant_args, configs, grids, kwargs, vals):
    accessed = tensors_accessed(kernel, constant_args, configs, vals)
    written = accessed.writes
    # Strides are kernel arguments baked into the graph: each tensor must have exactly the
    # layout it had when traced. A written tensor that needed a copy for that is copied back.
    copied_back: list[tuple[Any, Any]] = []
    for name, value in list(kwargs.items()):
        if not _compat_inductor.is_inductor_tensor(value):
            continue
        fixed = _compat_inductor.inductor_require_exact_strides(value, vals[name].stride())
        if fixed is not value and name in written and _compat_inductor.inductor_buffer_name(fixed) != \
                _compat_inductor.inductor_buffer_name(value):
            copied_back.append((value, fixed))
        kwargs[name] = fixed
    devices = {vals[n].device for n, v in kwargs.items() if _compat_inductor.is_inductor_tensor(v)}
    if not devices:
        raise_unsupported(f"kernel {kernel_key_name(kernel)!r} was launched without tensor arguments",
                          fix="Pass at least one tensor")
    device = max(devices, key=lambda d: d.type != "cpu")  # a CPU scalar tensor beside GPU ones
    triton_kernel = kernel_side_table.get_kernel(kernel)
    grid_list = [tuple(grids[i:i + 3]) for i in range(0, len(grids), 3)]
    if _compat.autotuning_unavailable(base_kernel(triton_kernel)) or not _compat_inductor.triton_compiles_for(device):
        _PythonLaunch.create(kernel, constant_args, configs, grids, kwargs, written, device, _INTERPRETED)
    elif runs_a_recorded_pre_hook(kernel_side_table.get_configs(configs)):
        # See [Note: Config pre_hooks the graph records]
        _PythonLaunch.create(kernel, constant_args, configs, grids, kwargs, written, device, _PRE_HOOKS)
    else:
        _lower_to_user_defined_triton_kernel(kernel, triton_kernel, constant_args, configs, grid_list, kwargs,
                                             accessed, vals)
    for original, fixed in copied_back:
        _compat_inductor.inductor_lowering(torch.ops.aten.copy_.default)(original, fixed)


def _lower_to_user_defined_triton_kernel(key, triton_kernel, constant_args, configs_json, grid_list, kwargs,
                                         accessed, vals):
    """The GPU path: inductor compiles the kernel and emits a direct launch."""
    launcher, launch_kwargs = launcher_for_inductor(key, configs_json, kwargs)
    kernel_args = dict(launch_kwargs)
    descriptors = {}  # inductor's generated code builds TensorDescriptor.from_tensor(buf, block_shape)
    for name, value in kernel_side_table.get_constants(constant_args).items():
        if not isinstance(value, TensorDescriptorSpec):
            kernel_args[name] = value
        elif value.padding != "zero" or value.round_f32_to_tf32:
            raise_unsupported(
                f"kernel {kernel_key_name(key)!r}: TensorDescriptor argument {name!r} with padding="
                f"{value.padding!r}, round_f32_to_tf32={value.round_f32_to_tf32} under inductor",
                why="inductor's generated launch builds descriptors from the tensor and block shape only",
                fix="Use the defaults (padding='zero'), or compile with backend='aot_eager'",
            )
        else:
            descriptors[name] = value.block_shape
    # Parameters left to their defaults: inductor's launcher passes every parameter.
    tuned = {name for config in getattr(launcher, "configs", []) for name in config.kwargs}
    for name, default in _compat.kernel_param_defaults(base_kernel(triton_kernel)).items():
        if name not in kernel_args and name not in tuned:
            kernel_args[name] = default
    config_count = len(getattr(launcher, "configs", [None]))
    if len(grid_list) != config_count:
        grid_list = grid_list[:1] * config_count
    # See [Note: Scalar argument types under inductor]
    constexprs = {p.name for p in _compat.kernel_params(base_kernel(triton_kernel)) if p.is_constexpr}
    scalar_types = eager_scalar_types({name: vals.get(name, value) for name, value in kernel_args.items()},
                                      constexprs | tuned)
    _compat_inductor.user_defined_triton_kernel(launcher, grid_list, kernel_args, accessed.reads,
                                                accessed.writes, descriptors, scalar_types)


# Why a launch goes through the package's Python launch path instead of inductor's own.
_INTERPRETED = "runs on the Triton interpreter (or on a device triton cannot compile for)"
_PRE_HOOKS = ("has autotune configs whose pre_hooks set descriptor block shapes or zero arguments, which "
              "inductor's generated launch cannot do")


def _make_python_launch_class() -> Any:
    ir = _compat_inductor.inductor_ir()

    class PythonLaunch(ir.ExternKernel):
        """An extern kernel whose generated code calls ``torch_triton_hop._hops.launch``.

        Used where inductor cannot compile the kernel (under the Triton interpreter, on a
        device triton has no backend for) or cannot launch it as its configs say (pre_hooks that
        set descriptor block shapes or zero arguments per config). The tensors the kernel writes
        are marked as mutated, so inductor orders every other read and write around the launch.
        """

        @classmethod
        def create(cls, kernel, constant_args, configs, grids, kwargs, written, device, reason):
            return cls(kernel, constant_args, configs, grids, kwargs, written, device, reason)

        def __init__(self, kernel, constant_args, configs, grids, kwargs, written, device, reason):
            self.reason = reason
            tensors = {n: v for n, v in kwargs.items() if _compat_inductor.is_inductor_tensor(v)}
            inputs = [ir.InputsKernel.unwrap_storage_for_input(self.realize_input(v)) for v in tensors.values()]
            super().__init__(None, ir.NoneLayout(device=device), inputs, (), {})
            self.launch_node = dict(kernel=kernel, constant_args=constant_args, configs=configs, grids=list(grids))
            self.tensor_names = list(tensors)
            self.scalars = {n: v for n, v in kwargs.items() if n not in tensors}
            self.mutation_outputs = [
                ir.MutationOutput(ir.NoneLayout(device=device), inputs[i], self)
                for i, n in enumerate(self.tensor_names) if n in written
            ]
            _compat_inductor.inductor_register_operation(self)

        def codegen(self, wrapper: Any) -> None:
            if _compat_inductor.inductor_uses_cpp_wrapper():
                raise UnsupportedTritonKernelError(
                    f"wrap_triton: kernel {kernel_key_name(self.launch_node['kernel'])!r} {self.reason}, and "
                    "AOTInductor / cpp_wrapper code cannot call a Python kernel. "
                    + ("Compile it on a GPU machine (TRITON_INTERPRET unset), or use torch.export without "
                       "AOTInductor." if self.reason == _INTERPRETED else
                       "Give the descriptors one block shape for every config and zero accumulated tensors "
                       "before the launch (no pre_hook), or use torch.export without AOTInductor.")
                )
            _compat_inductor.inductor_add_header_import(
                wrapper, "from torch_triton_hop._hops import launch as _tth_launch")
            recipe = recipe_of(self.launch_node["kernel"])
            if recipe is not None:  # See [Note: Fused kernels are data]
                _compat_inductor.inductor_add_header_import(
                    wrapper, "from torch_triton_hop._fused_kernels import define_fused as _tth_define_fused")
                _compat_inductor.inductor_add_header_import(wrapper, f"_tth_define_fused({recipe!r})")
            refs = {n: t.codegen_reference() for n, t in zip(self.tensor_names, self.inputs)}
            items = [f"{n!r}: {refs[n]}" if n in refs else f"{n!r}: {wrapper.val_to_arg_str(self.scalars[n])}"
                     for n in [*self.tensor_names, *self.scalars]]
            node = self.launch_node
            wrapper.writeline(
                f"_tth_launch(kernel={node['kernel']!r}, constant_args={node['constant_args']!r}, "
                f"configs={node['configs']!r}, grids={wrapper.val_to_arg_str(node['grids'])}, "
                f"kwargs={{{', '.join(items)}}})"
            )

        def get_outputs(self):
            return list(self.mutation_outputs)

        def get_unbacked_symbol_defs(self):
            return _compat_inductor.ordered_set()

        def should_allocate(self) -> bool:
            return False

        def has_side_effects(self) -> bool:
            return True

        def get_free_symbol_uses(self, unbacked_only: bool = False):
            symbols = super().get_free_symbol_uses(unbacked_only)
            for value in [*self.launch_node["grids"], *self.scalars.values()]:
                symbols |= _compat_inductor.free_symbols(value, unbacked_only)
            return symbols

    return PythonLaunch


class _LazyPythonLaunch:
    _cls: Any = None

    def create(self, *args: Any) -> Any:
        if self._cls is None:
            self._cls = _make_python_launch_class()
        return self._cls.create(*args)


_PythonLaunch = _LazyPythonLaunch()
