"""Pointwise prologues and epilogues folded into user kernels under inductor.

# [Note: Fusing pointwise code into user kernels]
# TL;DR: in inductor's post-grad graph, before reinplacing, a functional launch absorbs
#  - an epilogue: the pointwise ops that consume a tensor the kernel writes and that nothing
#    else uses; every store of that tensor applies them, into a buffer of the result's dtype;
#  - a prologue: the pointwise ops that produce a tensor the kernel only reads; every load of
#    that tensor computes them from their own operands (where later nodes use the tensor too,
#    the fused kernel also stores it for them: [Note: A prologue the fused kernel also stores]).
# The candidates and the checks on their place in the graph are _fusion_candidates'.
# The launch becomes one launch of a fused kernel (_fused_kernels) with the operands as new
# arguments; no intermediate buffer, no second pass over memory.
# Exactness first: an argument is fused only where all of this holds, else the graph is left
# as it is and the debug log (TORCH_LOGS=+torch_triton_hop) says why:
#  - the TTIR analysis says the kernel only tl.stores it (epilogue) / only tl.loads it
#    (prologue), and the source rewrite can follow every use of its pointer (see
#    [Note: Element offsets by shadowing pointer arithmetic]): each lane's element offset is
#    known, the stored value goes through the epilogue, masked lanes stay untouched;
#  - epilogue: its buffer is a fresh torch.empty (elements the kernel does not write are
#    undefined before and after), the result has the written tensor's shape and layout, and
#    no other output of the launch feeds the epilogue;
#  - the operands are computed before the launch (one computed after it moves before it, with
#    what it needs, if none of that writes memory or draws random numbers and nothing in
#    between writes what any of it reads, a launch already written in place included), and
#    nothing between the launch and the epilogue (the prologue and the launch) writes their
#    memory;
#  - prologue: a tensor loaded inside a loop (which may re-read it) is fused only if the fused
#    loads read no more bytes per element than the tensor they replace or the kernel provably
#    loads each element at most once (_store_coverage, on its loads), and never into a
#    kernel that calls tl.dot (measured: a dequantising prologue in a matmul's main loop ran
#    1.36x slower than the separate pass it saves, H200);
#  - the ops are ones _pointwise_triton translates, and no shared_memory group (aliased
#    arguments) is involved. A symbolic size the index arithmetic of a broadcast operand
#    divides by becomes an argument of the fused kernel, computed from the graph's SymInt
#    inputs (_graph_sizes).
# Views under which every element keeps its memory offset (one dtype, storage offset and
# element count, each dense: Liger's `X.view(-1, dim)` and `Y.view(*shape)`, a transpose, a
# channels_last activation permuted to NHWC rows) may stand between the launch and an
# epilogue, or between a prologue and the launch. The kernel indexes memory, so the fused code
# maps each memory offset the kernel accesses to the element of the pointwise code's tensor
# there, and the views are made again of the fused kernel's result. Size queries of a removed
# view (`X.view(-1, dim).shape[0]` under dynamic shapes) are rebuilt from the graph's SymInt
# inputs.
# Inside a region, a permute / transpose / squeeze / unsqueeze of pointwise code joins it, the
# operands above the view read through it (`(x + 2).t().contiguous()` is one prologue; see
# [Note: Views inside a fused region]).
# Values are rounded as the unfused program rounds them (see [Note: Numerics of fused
# pointwise code]). Autotuned kernels keep their configs and are tuned as fused kernels.
# Context: issue 13, part 2. torch's own epilogue fusion (config.epilogue_fusion_user_defined_
# triton_kernel, torch >= 2.12, off by default) handles unary epilogues of a single store
# into an empty buffer; ours runs on torch 2.11-2.13 and turns theirs off for our kernels.
"""

from __future__ import annotations

import dataclasses
import logging
import operator
import time
from typing import Any

import torch

from . import _check_compilations, _compat, _compat_inductor, _trace, config
from ._fused_kernels import FusionRecipe, build_fused_kernel, kernel_python_source
from ._fusion_candidates import Candidate, LaunchFusion, Refused, fresh_buffer, metadata_users
from ._fx_values import node_value
from ._fusion_source import FusedArgument, NotFusible, rewrite_kernel_source
from ._host_folds import host_folds
from ._hops import kernel_arguments, parse_shared_memory, tensors_accessed, triton_kernel_wrapper_functional
from ._contractions import division_difference, start_kernel_sass
from ._layouts import layout_difference, start_kernel_layouts
from ._pointwise_triton import TRITON_DTYPES, Operand, helper_source, operand_offset
from ._side_table import (DERIVED_KERNEL_MODULE, RECORDED_PRE_HOOK_FIELDS, base_kernel, kernel_key_name,
                          kernel_side_table, runs_a_recorded_pre_hook)
from ._store_coverage import unstored_reason

log = logging.getLogger(__name__)

__all__ = ["fuse_pointwise"]

aten = torch.ops.aten
_INT32_LIMIT = 2**31


class _CompiledDifferently(Refused):
    """The fused kernel as a whole would compute differently (its reductions laid out
    otherwise, see _layouts; a division ptxas may fuse into an add): fusing fewer of the
    arguments may not."""


@dataclasses.dataclass
class _Plan:
    """How one candidate is fused: the fused argument and its helper."""

    argument: FusedArgument
    helper_source: str
    inputs: dict[torch.fx.Node, Operand]  # each operand, the parameter it becomes and its offsets
    sizes: dict[str, torch.SymInt]  # parameters holding symbolic sizes the offsets divide by
    opaque_ones: str | None  # on a GPU: the int32 parameter passed as -1 (_pointwise_triton._opaque_move)
    stored: str | None = None  # a prologue's: the parameter of the buffer the fused kernel stores its result in

    def scalar_args(self) -> dict[str, Any]:
        """The fused kernel's scalar arguments for this helper besides the sizes."""
        return {self.opaque_ones: -1} if self.opaque_ones else {}


# [Note: A prologue the fused kernel also stores]
# TL;DR: `h = x + r; y = rms_norm_kernel(h); z = h + w`: h feeds the launch and other nodes.
# Fusing `x + r` as a prologue, the fused kernel also stores each value it computes at a load
# of h into a fresh buffer of h's layout, where the load's mask is on, and h's other users
# read that buffer: one pass over memory where there were two (inductor writes h, the kernel
# reads it back), as inductor does for a residual add before its own norm.
# Exact only where the fused kernel stores every element of h, each once: the proof of
# [Note: A proof that a kernel stores every element], made on the fused kernel for the new
# buffer (its stores are the kernel's loads of h: addresses and masks from the grid and
# integer scalars only). Stored once: a kernel that loads an element twice (a two-pass norm)
# would store it twice, more traffic than the unfused program. The stored value is the value
# the kernel gets, which the prologue rules already make the unfused program's h (see
# [Note: Values at a fused region's boundary]). h's other users must come after the launch
# in the graph (they read what it stores) and be no operand of another fused region of the
# launch. Static sizes only, as the proof.

# [Note: An output written over the kernel's own input]
# TL;DR: `dY = a + b; kernel(dY_ptr=dY, dX_ptr=dY); out = r + dY` (Liger's RMSNorm backward
# writes dX over dY): where provably exact, the kernel gets a fresh buffer for dX_ptr, and
# pointwise code fuses on both sides, a prologue into dY_ptr's loads and an epilogue at
# dX_ptr's stores, as for a kernel with an output of its own.
# Functionalization passes such a pair as one shared_memory group (see [Note: Arguments that
# share memory]); the fusion refuses grouped arguments, for the kernel reads what it writes.
# Giving the written argument a buffer of its own changes nothing the program computes where:
#  - the pair is one tensor passed twice (the same graph node, or one view op on the same
#    arguments), the kernel only tl.loads the one and only tl.stores the other, and no
#    autotuner resets either;
#  - the kernel stores every element of the layout ([Note: A proof that a kernel stores
#    every element]): none keeps the input's value, which a fresh buffer would not hold;
#  - each element is loaded through the read argument only by the program that stores it,
#    and before that program's first store to it (the same evaluation, following the loads
#    too, in program order): the loads see the input's values either way. A program that
#    reads a row another program writes, or reads back what it stored, is refused; so is any
#    load the evaluation does not follow.
# The pair is split before the candidates are planned (LaunchFusion.split_outputs_over_inputs)
# and joined again if neither side fuses: a separate buffer alone gains nothing.


@dataclasses.dataclass
class _LaunchPlan:
    launch: "LaunchFusion"
    fused: Any  # the built FusedKernel
    candidates: dict[str, Candidate]  # only those fused
    plans: dict[str, _Plan]
    refusals: dict[str, str]  # argument -> why it is not fused


def _static_less(value: Any, limit: int) -> bool:
    return bool(_compat.statically_known_true(value < limit))


def _storage_span_elements(t: torch.Tensor) -> Any:
    """One past the largest element offset of `t` (the offsets its lanes can hold)."""
    return 1 + sum((n - 1) * s for n, s in zip(t.size(), t.stride()))


def _wide(t: torch.Tensor) -> bool:
    return not _static_less(_storage_span_elements(t), _INT32_LIMIT)


def fuse_pointwise(graph: torch.fx.Graph, node: torch.fx.Node) -> torch.fx.Node:
    """Fold pointwise prologues and epilogues into functional launch `node` where exact (see
    [Note: Fusing pointwise code into user kernels]); returns the launch now in its place."""
    if not config.fusion:
        return node
    try:
        with _compat.compile_timed("torch_triton_hop.fusion_planning"):
            try:
                planned = _plan_launch(graph, node)
            finally:
                _check_compilations.settle()
    except Exception:  # noqa: BLE001 - an optimisation: a failure to plan leaves the launch as it was
        log.warning("launch %s (kernel %s): not fused: the fusion pass failed; the launch runs unfused. Please "
                    "report this with the traceback:", node.name, kernel_key_name(node.kwargs["kernel"]),
                    exc_info=True)
        return node
    if planned is None:
        return node
    launch, fused, candidates = planned.launch, planned.fused, planned.candidates
    # Nothing above changed what the graph computes (operands moved before the launch compute
    # the same values); from here the launch is replaced.
    new_node = _replace(launch, fused.key, candidates, planned.plans)
    log.debug("launch %s (kernel %s): fused %s; not fused %s. Fused kernel %s:\n%s", node.name,
              kernel_key_name(node.kwargs["kernel"]),
              {arg: [n.name for n in sorted([*launch.views[arg], *c.region], key=launch.order.__getitem__)]
               for arg, c in candidates.items()}, planned.refusals, fused.key, fused.source)
    _trace.fusion(node.name, kernel_key_name(node.kwargs["kernel"]), {arg: c.kind for arg, c in candidates.items()},
                  planned.refusals, fused.source)
    return new_node


def _plan_launch(graph: torch.fx.Graph, node: torch.fx.Node) -> _LaunchPlan | None:
    """What to fuse into `node` and the fused kernel, or None (the reasons logged)."""
    key = node.kwargs["kernel"]
    name = kernel_key_name(key)
    if key.startswith(DERIVED_KERNEL_MODULE + ":") or runs_a_recorded_pre_hook(
            kernel_side_table.get_configs(node.kwargs["configs"])):
        # already fused; or a config pre_hook sets descriptor block shapes or zeroes arguments:
        # See [Note: Config pre_hooks the graph records]
        return None
    base = base_kernel(kernel_side_table.get_kernel(key))
    try:
        launch = LaunchFusion(graph, node, interpreted=_compat.is_interpreted_kernel(base))
    except Refused as e:
        log.debug("launch %s (kernel %s): nothing fused: %s", node.name, name, e)
        return None
    accessed = tensors_accessed(key, node.kwargs["constant_args"], node.kwargs["configs"], launch.vals)
    if accessed.fallback_reason:
        log.debug("launch %s (kernel %s): nothing fused: the analysis could not decide (%s)", node.name, name,
                  accessed.fallback_reason)
        return None
    if launch.target == "gpu" and accessed.mixed_half_roundings:
        log.debug("launch %s (kernel %s): nothing fused: the kernel rounds to float16 arithmetic on bfloat16 values "
                  "(%s), which LLVM compiles one way or another depending on the code around it (see [Note: Float16 "
                  "roundings of bfloat16 arithmetic])", node.name, name, ", ".join(accessed.mixed_half_roundings))
        return None
    split, split_refused = launch.split_outputs_over_inputs(accessed)
    planned = _plan_candidates(launch, accessed, split_refused)
    for written, read in split.items():  # a pair neither side of which fused is left as it was
        if planned is None or not {written, read} & set(planned.candidates):
            launch.join_again(written, read)
    return planned


def _plan_candidates(launch: LaunchFusion, accessed: Any, split_refused: dict[str, str]) -> _LaunchPlan | None:
    node = launch.node
    name = kernel_key_name(node.kwargs["kernel"])
    fn = _compat.python_function(base_kernel(kernel_side_table.get_kernel(node.kwargs["kernel"])))
    candidates: dict[str, Candidate] = {}
    refusals: dict[str, str] = {}
    for arg in launch.written:
        try:
            candidates[arg] = launch.epilogue(arg, accessed)
        except (Refused, NotFusible) as e:
            refusals[arg] = split_refused.get(arg, str(e))
    for arg in accessed.reads:
        if arg in launch.written or arg in accessed.writes:
            continue
        try:
            candidates[arg] = launch.prologue(arg, accessed)
        except (Refused, NotFusible) as e:
            refusals[arg] = str(e)
    if candidates and launch.target == "gpu":
        _start_compiled_code_checks(launch, accessed, node.kwargs["kernel"], launch.vals)
    read_by: dict[torch.fx.Node, set[str]] = {}  # node -> arguments whose fused code reads it
    for arg, candidate in candidates.items():
        for n in [*candidate.operands, *candidate.region]:
            read_by.setdefault(n, set()).add(arg)
    plans: dict[str, _Plan] = {}
    loaded_in_loops: set[str] = set()
    for index, (arg, candidate) in enumerate(candidates.items()):
        try:
            clash = sorted({a for n in set(candidate.others.values()) for a in read_by.get(n, ())} - {arg})
            if clash:  # it would read the launch's own result
                raise Refused(f"{candidate.sink.name} is used elsewhere too, by the fused code of {', '.join(clash)}")
            plans[arg] = _plan(launch, arg, index, candidate, accessed.reduces)
            # This argument alone: the reason if its uses cannot be followed, and where it is loaded.
            argument = plans[arg].argument
            alone = rewrite_kernel_source(kernel_python_source(fn), fn.__globals__, [argument], list(argument.operands))
            if candidate.kind == "prologue" and arg in alone.loads_in_loops:
                if alone.calls_dot:
                    raise Refused("the kernel loads it in a loop and calls tl.dot: a tiled matmul re-reads its inputs "
                                  "in its main loop, where pointwise work on the loads costs more than the pass over "
                                  "memory it saves")
                loaded_in_loops.add(arg)
        except (NotFusible, Refused) as e:
            refusals[arg] = str(e)
            plans.pop(arg, None)
    if launch.target == "gpu" and plans:
        # The fused kernel of every argument planned, compiled while the proofs below run: the
        # kernel it will be unless one of them refuses its argument (or it cannot be built,
        # which the check of the kernel finally chosen reports).
        try:
            _start_compiled_code_checks(launch, accessed, *_fused_kernel(launch, candidates, plans))
        except (NotFusible, Refused):
            pass
    for arg in list(plans):  # the proofs, each of this argument alone
        candidate = candidates[arg]
        try:
            if arg in loaded_in_loops and not candidate.others:
                # A stored prologue is proven loaded once per element (so never re-read) below.
                _check_prologue_in_loop(node_value(candidate.sink), plans[arg].inputs, lambda: launch.reloaded(arg))
            if candidate.others:
                _checked_fused_kernel(launch, {arg: candidate}, {arg: plans[arg]}, accessed, compiled_code=False)
        except (NotFusible, Refused) as e:
            refusals[arg] = str(e)
            del plans[arg]
    if not plans:
        log.debug("launch %s (kernel %s): nothing fused (%s)", node.name, name, refusals)
        return None
    candidates = {arg: candidates[arg] for arg in plans}
    try:
        fused = _checked_fused_kernel(launch, candidates, plans, accessed)
    except _CompiledDifferently as e:
        # Some arguments may keep the kernel's compiled code: each alone, then those together.
        kept = []
        for arg in plans:
            try:
                _checked_fused_kernel(launch, {arg: candidates[arg]}, {arg: plans[arg]}, accessed)
                kept.append(arg)
            except (NotFusible, Refused) as alone:
                refusals[arg] = str(alone)
        fused = None
        for chosen in ((kept, kept[:1]) if len(kept) > 1 else (kept,)) if kept else ():
            try:
                fused = _checked_fused_kernel(launch, {a: candidates[a] for a in chosen},
                                              {a: plans[a] for a in chosen}, accessed)
                break
            except (NotFusible, Refused):
                refusals.update({arg: str(e) for arg in chosen[1:]})
        if fused is None:
            log.debug("launch %s (kernel %s): nothing fused: %s", node.name, name, e)
            return None
        candidates, plans = {a: candidates[a] for a in chosen}, {a: plans[a] for a in chosen}
    except (NotFusible, Refused) as e:
        log.debug("launch %s (kernel %s): nothing fused: %s", node.name, name, e)
        return None
    return _LaunchPlan(launch, fused, candidates, plans, refusals)


def _checked_fused_kernel(launch: LaunchFusion, candidates: dict[str, Candidate], plans: dict[str, _Plan],
                          accessed: Any, compiled_code: bool = True) -> Any:
    """The fused kernel of `plans`, built and checked (_check_fused_kernel)."""
    fused = build_fused_kernel(_recipe(launch, plans))
    _check_fused_kernel(launch, fused.key, candidates, plans, accessed, compiled_code)
    return fused


def _recipe(launch: LaunchFusion, plans: dict[str, _Plan]) -> FusionRecipe:
    return FusionRecipe(launch.node.kwargs["kernel"], tuple(p.argument for p in plans.values()),
                        tuple((p.argument.helper, p.helper_source) for p in plans.values()),
                        tuple(param for p in plans.values() for param in p.argument.operands))


def _fused_kernel(launch: LaunchFusion, candidates: dict[str, Candidate],
                  plans: dict[str, _Plan]) -> tuple[str, dict[str, Any]]:
    """The fused kernel's key and its launch's arguments (values of the graph's nodes)."""
    return build_fused_kernel(_recipe(launch, plans)).key, _fused_values(launch, candidates, plans)


def _fused_values(launch: LaunchFusion, candidates: dict[str, Candidate], plans: dict[str, _Plan]) -> dict[str, Any]:
    vals = dict(launch.vals)
    for arg, plan in plans.items():
        sink, inputs = candidates[arg].sink, plan.inputs
        vals.update({operand.param: node_value(node) for node, operand in inputs.items()})
        vals.update(plan.sizes)
        vals.update(plan.scalar_args())
        if candidates[arg].kind == "epilogue":
            out = launch.vals[arg]
            vals[arg] = out.new_empty_strided(out.size(), out.stride(), dtype=node_value(sink).dtype)
        else:
            vals[arg] = max((node_value(n) for n in inputs), key=lambda t: t.dim())
            if plan.stored:
                vals[plan.stored] = _stored_buffer_value(node_value(sink))
    return vals


def _check_fused_kernel(launch: LaunchFusion, fused_key: str, candidates: dict[str, Candidate],
                        plans: dict[str, _Plan], accessed: Any, compiled_code: bool = True) -> None:
    """The fused kernel compiles (to TTIR, no driver needed) with the launch's new arguments and
    writes what the kernel wrote, and the buffers of stored prologues, every element once (its
    analysis is cached for the lowering that follows); on a GPU, its compiled code computes
    as the kernel's does (_check_compiled_code)."""
    vals = _fused_values(launch, candidates, plans)
    stored = {plan.stored: arg for arg, plan in plans.items() if plan.stored}
    node = launch.node
    fused = tensors_accessed(fused_key, node.kwargs["constant_args"], node.kwargs["configs"], vals)
    if fused.fallback_reason:
        raise Refused(f"the fused kernel could not be analysed ({fused.fallback_reason})")
    if set(fused.writes) != set(accessed.writes) | set(stored):
        raise Refused(f"the fused kernel writes {sorted(fused.writes)} where the kernel writes {sorted(accessed.writes)}"
                       + (f" and the fused code {sorted(stored)}" if stored else ""))
    if stored and launch.target == "gpu" and compiled_code:  # compiled while the proofs below run
        _start_compiled_code_checks(launch, accessed, fused_key, vals)
    proof_key = _without_vector_caps(launch, plans, fused_key) if stored else fused_key
    for param, arg in stored.items():  # See [Note: A prologue the fused kernel also stores]
        reason = unstored_reason(proof_key, vals, node.kwargs["constant_args"],
                                 kernel_side_table.get_configs(node.kwargs["configs"]), list(node.kwargs["grids"]),
                                 param, once=True)
        if reason:
            raise Refused(f"{candidates[arg].sink.name} is used elsewhere too, and no proof that the fused kernel would "
                           f"store each of its elements once: {reason.replace(param, candidates[arg].sink.name)}")
    if launch.target == "gpu" and compiled_code:
        calls_math = any("tl_math." in p.helper_source or "libdevice." in p.helper_source for p in plans.values())
        with _compat.compile_timed("torch_triton_hop.fusion_compiled_code_check"):  # SASS: the costly check
            _check_compiled_code(launch, fused_key, vals, accessed, fused, calls_math)


def _without_vector_caps(launch: LaunchFusion, plans: dict[str, _Plan], fused_key: str) -> str:
    """The key of the fused kernel built without its vector-width caps, on which the proof of
    its stores runs. A cap, `off // W * W + off % W`, is the identity on offsets (for C's
    truncating division too), so both kernels store to the same addresses under the same masks;
    but the proof over symbolic sizes follows only translations of the program id, and refuses
    the division (a bf16 operand of Llama's residual add, under autocast and a changing
    sequence length). See [Note: Keeping the kernel's vector width]."""
    recipe = _recipe(launch, plans)
    if all(argument.vector_width is None for argument in recipe.arguments):
        return fused_key
    uncapped = tuple(dataclasses.replace(argument, vector_width=None) for argument in recipe.arguments)
    return build_fused_kernel(dataclasses.replace(recipe, arguments=uncapped)).key


def _start_compiled_code_checks(launch: LaunchFusion, accessed: Any, kernel_key: str, vals: dict[str, Any]) -> None:
    """Starts the compilations of the kernel (or of the fused kernel, with its key and
    arguments) that _check_compiled_code will compare, in threads, while the fusion is planned
    or proven (see [Note: The checks' compilations in threads])."""
    kernel = base_kernel(kernel_side_table.get_kernel(kernel_key))
    kernel_args = _kernel_arguments(launch, vals)
    if accessed.approximate_sums:
        start_kernel_sass(kernel, kernel_args, _launches(launch), _both_checks(accessed))
    if accessed.reduces:
        start_kernel_layouts(kernel, kernel_args, _launches(launch), _both_checks(accessed))


def _both_checks(accessed: Any) -> bool:
    """Whether the division and the layout checks both read the kernel's compilations: then
    they read one compilation to SASS (sass_and_layouts) instead of one each."""
    return bool(accessed.approximate_sums and accessed.reduces)


def _check_compiled_code(launch: LaunchFusion, fused_key: str, vals: dict[str, Any], accessed: Any,
                         fused: Any, calls_math: bool) -> None:
    """On a GPU: the fused kernel, compiled (TTIR, TTGIR, SASS; no driver), reduces in the
    kernel's layouts, rounds the kernel's added quotients as it does and, where its pointwise
    code calls math functions, computes none on the host (see _layouts, _contractions,
    _host_folds)."""
    start = time.perf_counter()
    kernel = base_kernel(kernel_side_table.get_kernel(launch.node.kwargs["kernel"]))
    fused_kernel = base_kernel(kernel_side_table.get_kernel(fused_key))
    kernel_args, fused_args = _kernel_arguments(launch, launch.vals), _kernel_arguments(launch, vals)
    if len(fused.approximate_sums) > len(accessed.approximate_sums):
        raise _CompiledDifferently("its pointwise code adds the quotient of an fp32 division, which ptxas may fuse "
                                   "into the add or not depending on the code around it (see [Note: Divisions that "
                                   "ptxas may fuse into an add])")
    if len(fused.mixed_half_roundings) > len(accessed.mixed_half_roundings):
        raise _CompiledDifferently("its pointwise code rounds to float16 arithmetic on bfloat16 values, which LLVM "
                                   "compiles one way or another depending on the code around it (see [Note: Float16 "
                                   "roundings of bfloat16 arithmetic])")
    if accessed.approximate_sums:
        contracted = division_difference(kernel, fused_kernel, kernel_args, fused_args, _launches(launch),
                                         _both_checks(accessed))
        if contracted:
            raise _CompiledDifferently(f"the kernel adds the quotient of an fp32 division "
                                       f"({', '.join(accessed.approximate_sums)}) and in the fused kernel "
                                       f"{contracted}, so it could round it otherwise (see [Note: Divisions that "
                                       "ptxas may fuse into an add])")
    if calls_math:
        folded = host_folds(fused_kernel, fused_args, _launches(launch))
        if folded:
            raise _CompiledDifferently(folded)
    if accessed.reduces:
        difference = layout_difference(kernel, fused_kernel, kernel_args, fused_args, _launches(launch),
                                       _both_checks(accessed))
        if difference:
            raise _CompiledDifferently(f"{difference}, so it could sum in another order than the unfused program")
    log.debug("launch %s: the fused kernel's compiled code checked in %.0f ms", launch.node.name,
              1000 * (time.perf_counter() - start))


def _kernel_arguments(launch: LaunchFusion, vals: dict[str, Any]) -> dict[str, Any]:
    return kernel_arguments(vals, launch.node.kwargs["constant_args"], validate=False)


def _launches(launch: LaunchFusion) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(config arguments, launch options) of each way the launch can run: one per autotuning
    config, else the launch's own options (num_warps, ...)."""
    configs = kernel_side_table.get_configs(launch.node.kwargs["configs"])
    return [(dict(c["kwargs"]), {k: v for k, v in c.items() if k not in ("kwargs", *RECORDED_PRE_HOOK_FIELDS)})
            for c in configs] or [({}, {k: v for k, v in launch.vals.items() if k in _compat.launch_option_names()})]


def _check_prologue_in_loop(replaced: torch.Tensor, inputs: dict[torch.fx.Node, Operand], reloaded: Any) -> None:
    """A prologue on a tensor the kernel loads in a loop, not one calling tl.dot (it may re-read
    each element: `reloaded()` says why it may, None where each element is provably loaded at
    most once)."""
    # Bytes each element's loads read (an operand broadcast to all is one load, not per element).
    # Loaded once, the fused loads read them once where the unfused program reads them, writes
    # the tensor and reads it back: fewer bytes however many the prologue loads.
    loaded = sum(node_value(o).element_size() for o, operand in inputs.items() if operand.offset is not None)
    if loaded > replaced.element_size():
        why = reloaded()
        if why:
            raise Refused(f"the prologue would load {loaded} bytes per element instead of {replaced.element_size()}, "
                           f"in a loop that may re-read them ({why})")


def _vector_width(original: torch.dtype, accessed: list[torch.dtype]) -> int | None:
    """The cap on elements per access that keeps a reducing kernel's layout (None: none needed).
    See [Note: Keeping the kernel's vector width]."""
    wider = sorted({str(d) for d in accessed if d.itemsize > original.itemsize})
    if wider:
        raise Refused(f"the fused code would access {', '.join(wider)} where the kernel accesses {original}: a "
                       "wider access changes the layout triton gives the kernel's values, and the kernel reduces, "
                       "so it could sum in another order than the unfused program")
    if any(d.itemsize < original.itemsize for d in accessed):
        return 16 // original.itemsize
    return None


def _plan(launch: LaunchFusion, arg: str, index: int, candidate: Candidate, reduces: bool) -> _Plan:
    """The fused argument, its helper's source, its operands' parameters, and the parameters
    holding symbolic sizes its index arithmetic divides by (dynamic shapes)."""
    kind, region, sink, operands = candidate.kind, candidate.region, candidate.sink, candidate.operands
    fused_tensor = node_value(launch.value[arg])  # the kernel's element offsets index this tensor
    # Every value the fused code holds needs a triton dtype the helpers know (uint32 / uint64
    # have none there: inductor's pointwise code for them is not what the helpers write).
    unknown = sorted({str(dtype) for dtype in (launch.vals[arg].dtype, node_value(sink).dtype,
                                               *(node_value(o).dtype for o in operands))
                      if dtype not in TRITON_DTYPES})
    if unknown:
        raise Refused(f"the fused code would hold {', '.join(unknown)} values, which prologue / epilogue fusion "
                      "does not write")
    sizes: dict[str, torch.SymInt] = {}

    def size_param(value: torch.SymInt) -> str:
        for name, known in sizes.items():
            if _compat_inductor.sympy_value(known) == _compat_inductor.sympy_value(value):
                return name
        launch.sizes.check_value(value)  # passed as an argument: it must be computable in the graph
        sizes[f"_tth_{arg}_size{len(sizes)}"] = value
        return next(reversed(sizes))

    inputs = {}
    for i, operand in enumerate(operands):
        inputs[operand] = Operand(f"_tth_{arg}_{i}", operand_offset(fused_tensor, candidate.operand_value(operand),
                                                                  size_param))
    helper = f"_tth_{kind}_{index}"
    ones = f"_tth_{arg}_ones" if launch.target == "gpu" else None
    stored = f"_tth_{arg}_stored" if candidate.others else None
    if kind == "epilogue":
        source = helper_source(helper, kind, region, inputs, launch.value[arg], sink, node_value(sink).dtype,
                               launch.target, tuple(sizes), ones, launch_options=launch.vals)
        element = launch.vals[arg].dtype
    else:
        source = helper_source(helper, kind, region, inputs, None, sink, node_value(sink).dtype, launch.target,
                               tuple(sizes), ones, stored, launch_options=launch.vals)
        element = node_value(sink).dtype
    wide = any(_wide(t) for t in [fused_tensor, *(candidate.operand_value(o) for o in operands)])
    # Per-element accesses of the fused code (a scalar operand is one load, of no layout).
    accessed = [node_value(o).dtype for o, operand in inputs.items() if operand.offset is not None]
    accessed += [node_value(sink).dtype] if kind == "epilogue" else []
    vector_width = _vector_width(element, accessed) if reduces else None
    params = (*(o.param for o in inputs.values()), *sizes, *([ones] if ones else []), *([stored] if stored else []))
    argument = FusedArgument(arg, kind, helper, params, wide, TRITON_DTYPES[element].removeprefix("tl."), vector_width)
    return _Plan(argument, source, inputs, sizes, ones, stored)


def _replace(launch: LaunchFusion, fused_key: str, candidates: dict[str, Candidate],
             plans: dict[str, _Plan]) -> torch.fx.Node:
    graph, node = launch.graph, launch.node
    kwargs = dict(launch.kwargs)
    results: dict[str, torch.fx.Node] = {}  # epilogue argument -> node whose uses the fused result takes
    stored = {plan.stored: arg for arg, plan in plans.items() if plan.stored}  # buffer parameter -> prologue
    written = [*launch.written, *stored]
    with graph.inserting_before(node):
        for arg, candidate in candidates.items():
            kwargs.update({operand.param: operand_node for operand_node, operand in plans[arg].inputs.items()})
            if candidate.kind == "epilogue":
                kwargs[arg] = _new_buffer(graph, launch.kwargs[arg], node_value(candidate.sink).dtype)
                results[arg] = candidate.sink
            else:  # the argument is no longer loaded; one of the operands keeps the signature
                kwargs[arg] = max(candidate.operands, key=lambda o: node_value(o).dim())
            if plans[arg].stored:
                kwargs[plans[arg].stored] = _stored_buffer(graph, candidate.sink, launch.sizes)
            kwargs.update({param: launch.sizes.node(value) for param, value in plans[arg].sizes.items()})
            kwargs.update(plans[arg].scalar_args())
        # A pair written over its input and split apart shares memory no longer.
        groups = [",".join(g) for g in parse_shared_memory(node.kwargs.get("shared_memory"))
                  if not set(g) & set(launch.split)]
        new_node = graph.call_function(triton_kernel_wrapper_functional, (),
                                       {**{k: v for k, v in node.kwargs.items() if k != "shared_memory"},
                                        "kernel": fused_key, "kwargs": kwargs, "tensors_to_clone": written,
                                        **({"shared_memory": groups} if groups else {})})
        new_node.meta.update({k: v for k, v in node.meta.items() if k not in ("val", "tensor_meta")})
        new_node.meta["val"] = tuple(_compat_inductor.clone_fake(node_value(kwargs[n])) for n in written)
    with graph.inserting_after(new_node):
        new_getitems = {}
        for arg in [*launch.getitems, *stored]:
            index = written.index(arg)
            new_getitems[arg] = graph.call_function(operator.getitem, (new_node, index))
            new_getitems[arg].meta["val"] = new_node.meta["val"][index]
    for param, arg in stored.items():  # the prologue's other users read what the fused kernel stores
        chain = [candidates[arg].sink, *launch.views[arg]]
        values = [new_getitems[param]]
        for view in launch.views[arg]:  # the same views of it, for users of a view
            with graph.inserting_after(values[-1]):
                values.append(graph.call_function(view.target, (values[-1], *view.args[1:]), dict(view.kwargs)))
            values[-1].meta.update({k: v for k, v in view.meta.items() if k != "tensor_meta"})
        for user, used in candidates[arg].others.items():
            user.replace_input_with(used, values[chain.index(used)])
    for arg, getitem in launch.getitems.items():
        if arg in results:  # an epilogue: its result is the new getitem, through the same views
            views = launch.views[arg]
            new_views = _view_again(graph, new_getitems[arg], views)
            results[arg].replace_all_uses_with(new_views[-1] if new_views else new_getitems[arg])
            for old, new in zip([getitem, *views], [new_getitems[arg], *new_views]):
                for query in metadata_users(old):  # the same sizes, another dtype
                    query.replace_input_with(old, new)
        else:
            getitem.replace_all_uses_with(new_getitems[arg])
    for arg, candidate in candidates.items():
        if candidate.kind == "prologue":
            for query in [q for n in [candidate.sink, *launch.views[arg]] for q in metadata_users(n)]:
                launch.sizes.replace(query)
    # Later nodes first: epilogues, their views, the getitems, the launch, prologues' views, prologues.
    dead = [n for candidate in candidates.values() for n in candidate.region] + [*launch.getitems.values(), node]
    dead += [view for arg in candidates for view in launch.views[arg]]
    for n in sorted(set(dead), key=launch.order.__getitem__, reverse=True):
        if not n.users:
            graph.erase_node(n)
    for arg in candidates:
        for buffer in reversed(fresh_buffer(launch.kwargs[arg])):  # an epilogue's, unused now
            if not buffer.users:
                graph.erase_node(buffer)
    return new_node


def _stored_buffer_value(t: torch.Tensor) -> torch.Tensor:
    return t.new_empty_strided(t.size(), t.stride())


def _stored_buffer(graph: torch.fx.Graph, sink: torch.fx.Node, sizes: Any) -> torch.fx.Node:
    """A fresh buffer of `sink`'s layout, which a stored prologue's fused kernel fills; its
    symbolic sizes and strides computed by nodes from the graph's inputs (`sizes`, a
    SymbolicSizes)."""
    value = node_value(sink)
    buffer = graph.call_function(aten.empty_strided.default, sizes.layout(value),
                                 {"dtype": value.dtype, "device": value.device})
    buffer.meta["val"] = _stored_buffer_value(value)
    return buffer


def _view_again(graph: torch.fx.Graph, value: torch.fx.Node, views: list[torch.fx.Node]) -> list[torch.fx.Node]:
    """`views` (a chain of views that keep memory offsets) applied to `value`, each new view placed just before
    the view it copies (the sizes it takes are defined there)."""
    new_views = []
    for view in views:
        with graph.inserting_before(view):
            old = node_value(view)
            value = graph.call_function(view.target, (value, *view.args[1:]), dict(view.kwargs))
            value.meta.update({k: v for k, v in view.meta.items() if k not in ("val", "tensor_meta")})
            value.meta["val"] = old.new_empty_strided(old.size(), old.stride(), dtype=node_value(value.args[0]).dtype)
            new_views.append(value)
    return new_views


def _new_buffer(graph: torch.fx.Graph, fresh: torch.fx.Node, dtype: torch.dtype) -> torch.fx.Node:
    """A copy of the fresh buffer `fresh` (a torch.empty call, or a view relabeling one) with `dtype`."""
    buffer = None
    for old_node in fresh_buffer(fresh):
        if buffer is None:  # the empty: its dtype replaced
            buffer = graph.call_function(old_node.target, old_node.args, {**old_node.kwargs, "dtype": dtype})
        else:  # the view, of the new empty
            buffer = graph.call_function(old_node.target, (buffer, *old_node.args[1:]), dict(old_node.kwargs))
        old = node_value(old_node)
        buffer.meta.update({k: v for k, v in old_node.meta.items() if k not in ("val", "tensor_meta")})
        buffer.meta["val"] = old.new_empty_strided(old.size(), old.stride(), dtype=dtype)
    return buffer
