"""Pointwise code around every corpus kernel under torch.compile: a prologue on each tensor the
kernel only reads, an epilogue on each tensor it only writes into a fresh buffer. Wherever the
fusion pass takes them (see [Note: Fusing pointwise code into user kernels]) the compiled
results equal eager's; where it refuses, they must still. The corpus covers the ways kernels
address memory (strides, int64 offsets, pointer shape ops, hints, loops, masks, bitcasts,
masked loads without other= that feed reductions, ...).

Each case also checks that fusion happened where it is expected: every such argument fuses
unless NOT_FUSED names it with the reason the fusion pass logs for it.

Elements a kernel does not write stay undefined in a fresh torch.empty, so epilogue results are
compared where eager writes: found by running eager into buffers filled with 0 and with 1.
"""

import logging
import os
import re

import pytest
import torch
import triton.language as tl
from torch._inductor.utils import run_and_get_code

from torch_triton_hop import wrap_triton
from torch_triton_hop._hops import alias_groups

from kernels import CASES

pytestmark = pytest.mark.any_device
ON_GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"
FUSION_LOG = "torch_triton_hop._fusion"


# The pointwise code. Neither is trivial at 0: a prologue with f(0) == 0 would hide a fused
# masked load that gives f(0) in its masked-off lanes where the kernel loads 0 (a load without
# other=), and an epilogue that is the identity at 0 would hide stores it skips.
def prologue(t):
    return t * 1.5 - 0.25 if t.is_floating_point() else 15 - t  # 15 - t keeps bin indices in [0, 16)


def epilogue(t):
    return t * 3.0 + 1.0 if t.is_floating_point() else t * 3 + 1


# Kernels whose only read-only / write-only tensors are integers: they get integer pointwise code
# (the others' integer tensors are indices, masks and row ids, which it would send out of bounds).
INTEGER_POINTWISE = {"atomic_xchg", "atomic_bitwise", "histogram_atomic_scatter", "inline_asm_pure"}

# Left out of the parametrization, with nothing to fuse: every tensor the kernel touches is both
# read and written (no prologue or epilogue to fuse), or it stores nothing (the compiled program
# has no output and drops the launch with its prologues). Checked by
# test_the_corpus_cases_left_out_have_nothing_to_fuse.
NOTHING_TO_FUSE = {
    "inplace_mul2": "x_ptr is loaded and stored in place",
    "loop_swap_pointers": "a_ptr and b_ptr are each read and written (ping-pong buffers)",
    "tensor_descriptor_inplace": "x_ptr is loaded and stored through one descriptor",
    "load_only_volatile": "stores nothing",
    "load_only_unused_result": "stores nothing",
}
# Left out too: the tickets it writes depend on the order in which the programs run.
ORDER_DEPENDENT = {"atomic_counter_scalar"}


# Kernels that do not run eagerly here either: the eager run must fail as described (asserted),
# then the case is skipped. Anything else the eager run raises fails the test.
def known_eager_failure(case):
    if case.name == "atomic_load_store" and not hasattr(tl, "atomic_load"):
        return "atomic_load", "tl.atomic_load is new in triton 3.7"
    if case.name == "hints_cache_modifiers" and ON_GPU:
        return "cannot be combined with modifier", "ptxas refuses eviction_policy='evict_first' with cache_modifier='.cg'"
    return None


# Arguments with pointwise code around them that the fusion pass refuses, by case: argument ->
# what the debug log says. Every other such argument must be fused (in both variants).
_HELPER = "which the fusion cannot follow"
_DESC_LOAD, _DESC_STORE = "['tt.descriptor_load'], not only tl.load", "['tt.descriptor_store'], not only tl.store"
NOT_FUSED = {
    "none_arg_optional_bias_present": {"bias_ptr": "bias_ptr is used in `bias_ptr is not None`"},
    "none_arg_optional_aux_present": {"aux_ptr": "aux_ptr is used in `aux_ptr is not None`"},
    "pointer_bitcast": {"x_ptr": "x_ptr is passed to x_ptr.to()"},
    "runtime_if_else_ptr": {"a_ptr": "holds a pointer of a_ptr in some places and other values elsewhere",
                            "b_ptr": "holds a pointer of b_ptr in some places and other values elsewhere"},
    "runtime_ternary_ptr": dict.fromkeys(["a_ptr", "b_ptr"], "is selected between pointers of different arguments"),
    # Refused though USE_B picks b_ptr at compile time: the rewrite does not read constexpr values.
    "constexpr_select_input": {"b_ptr": "is selected between pointers of different arguments"},
    "constexpr_accumulate_false": {"out_ptr": "out_ptr is loaded, but its stores get an epilogue"},
    "helper_store": {"out_ptr": _HELPER},
    "helper_load": {"x_ptr": _HELPER, "y_ptr": _HELPER},
    "helper_nested": {"x_ptr": _HELPER, "out_ptr": _HELPER},
    "helper_returns_ptr": {"x_ptr": _HELPER, "out_ptr": _HELPER},
    "helper_constexpr_pick_first": {"a_ptr": _HELPER},
    "helper_constexpr_pick_second": {"b_ptr": _HELPER},
    "helper_runtime_pick": {"a_ptr": _HELPER, "b_ptr": _HELPER},
    "helper_called_twice": {"a_ptr": _HELPER, "c_ptr": _HELPER},
    "helper_noinline": {"x_ptr": _HELPER, "out_ptr": _HELPER},
    "loop_swap_store_only": {"a_ptr": _HELPER, "b_ptr": _HELPER},
    "runtime_if_then_loop": {"a_ptr": "holds a pointer of a_ptr in some places and other values elsewhere",
                             "b_ptr": "holds a pointer of b_ptr in some places and other values elsewhere"},
    "where_ptr_store": dict.fromkeys(["even_ptr", "odd_ptr"], "is selected between pointers of different arguments"),
    "where_scalar_ptr": dict.fromkeys(["a_ptr", "b_ptr"], "is selected between pointers of different arguments"),
    "where_ptr_load": dict.fromkeys(["a_ptr", "b_ptr"], "is selected between pointers of different arguments"),
    "join_ptr_store": {"a_ptr": "a_ptr is passed to tl.join()", "b_ptr": "b_ptr is passed to tl.join()"},
    "tensor_descriptor_add": {"a_ptr": _DESC_LOAD, "b_ptr": _DESC_LOAD, "c_ptr": _DESC_STORE},
    "tensor_descriptor_store_only": {"out_ptr": _DESC_STORE},
    "tensor_descriptor_loop_oob": {"x_ptr": _DESC_LOAD, "out_ptr": _DESC_STORE},
    "tensor_descriptor_in_helper": {"x_ptr": _DESC_LOAD},
    "tensor_descriptor_runtime_base": {"src_ptr": _DESC_LOAD, "a_ptr": _DESC_STORE, "b_ptr": _DESC_STORE},
    "tensor_descriptor_atomic_add": {"x_ptr": _DESC_LOAD},
    "atomic_load_store": {"flag_ptr": "['tt.atomic_load'], not only tl.load",
                          "x_ptr": "['tt.atomic_load'], not only tl.load",
                          "out_ptr": "['tt.atomic_store'], not only tl.store",
                          "done_ptr": "['tt.atomic_store'], not only tl.store"},
    "matmul_dot": {"a_ptr": "calls tl.dot", "b_ptr": "calls tl.dot"},
}


def make_kwargs(case):
    kwargs = case.make_kwargs()
    return {k: v.cuda() if ON_GPU and isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}


def with_pointwise_code(case, value):
    if not isinstance(value, torch.Tensor) or value.dtype == torch.bool:
        return False
    return value.is_floating_point() or case.name in INTEGER_POINTWISE


def around(case):
    """The tensors that get a prologue (only read) and an epilogue (only written)."""
    kwargs = case.make_kwargs()
    inputs = [n for n in case.reads if n not in case.writes and with_pointwise_code(case, kwargs[n])]
    outputs = [n for n in case.writes if n not in case.reads and with_pointwise_code(case, kwargs[n])]
    return inputs, outputs


def program(case, fill=None, views=False):
    """The launch with a prologue on read-only inputs and an epilogue on written-only outputs;
    outputs in torch.empty buffers (fill=None) or filled ones (to see what eager writes).
    views: the pointwise code works on flattened views (reshape(-1), then back), as code
    around kernels launched on `x.view(-1, dim)` does."""

    def flat(t):
        return t.reshape(-1) if views else t

    def back(t, like):
        return t.reshape(like.shape) if views else t

    kernel = wrap_triton(case.kernel)
    inputs, outputs = around(case)

    def fn(kw):
        kw = dict(kw)
        for name in inputs:
            kw[name] = back(prologue(flat(kw[name])), kw[name])
        for name in outputs:
            kw[name] = torch.empty_strided(kw[name].size(), kw[name].stride(), dtype=kw[name].dtype,
                                           device=kw[name].device)
            if fill is not None:
                kw[name].fill_(fill)
        kernel[case.grid](**kw)
        return {name: back(epilogue(flat(kw[name])), kw[name]) for name in outputs}

    return fn, inputs, outputs


def runs_here(case):
    kwargs = case.make_kwargs()
    return (case.interpretable or ON_GPU) and not alias_groups(kwargs, set(kwargs))


CORPUS = [c for c in CASES if runs_here(c) and c.name not in NOTHING_TO_FUSE and c.name not in ORDER_DEPENDENT]


class _Log(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.text = ""

    def emit(self, record):
        self.text += record.getMessage() + "\n"


def compile_and_log(fn, kwargs, dynamic):
    """fn compiled and run (no compile cache: the fusion pass runs and logs), with its code and
    the fusion pass's debug log."""
    handler, logger = _Log(), logging.getLogger(FUSION_LOG)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    torch._dynamo.reset()
    try:
        with torch._inductor.config.patch(fx_graph_cache=False), \
                torch._functorch.config.patch(enable_autograd_cache=False):
            result, code = run_and_get_code(torch.compile(fn, fullgraph=True, dynamic=dynamic), kwargs)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return result, "\n".join(code), handler.text


def fused_arguments(log):
    """The arguments the fusion pass fused, from its debug log ("...: fused {'arg': [...]}; ...")."""
    return {arg for fused in re.findall(r"\): fused (\{.*?\}); not fused", log, re.S)
            for arg in re.findall(r"'(\w+)': \[", fused)}


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.name)
@pytest.mark.parametrize("variant", ["static", "views_dynamic"])
def test_pointwise_code_around_the_kernel_compiles_to_eager_results(case, variant):
    """views_dynamic: the pointwise code on reshaped views, compiled with dynamic=True (every size
    symbolic: broadcast index arithmetic takes sizes as arguments, views' sizes are rebuilt)."""
    views = variant == "views_dynamic"
    fn, inputs, outputs = program(case, views=views)
    assert inputs or outputs, "nothing to fuse: list the case in NOTHING_TO_FUSE"
    known = known_eager_failure(case)
    if known:
        with pytest.raises(Exception, match=re.escape(known[0])):
            program(case, fill=0.0, views=views)[0](make_kwargs(case))
        pytest.skip(f"does not run eagerly here either: {known[1]}")
    zeros = program(case, fill=0.0, views=views)[0](make_kwargs(case))
    ones = program(case, fill=1.0, views=views)[0](make_kwargs(case))
    result, code, log = compile_and_log(fn, make_kwargs(case), dynamic=views)
    for name in outputs:
        written = (zeros[name] == ones[name]) | (zeros[name].isnan() & ones[name].isnan())
        # On CPU fused code runs in the interpreter and unfused code is inductor's C++ (no FP
        # contraction): both round each op as eager does, so results are equal bit for bit. On
        # a GPU triton contracts x * 1.5 - 0.25 into an FMA, in inductor's own kernels too.
        tolerance = {} if ON_GPU else {"rtol": 0, "atol": 0}
        torch.testing.assert_close(result[name][written], zeros[name][written], equal_nan=True, **tolerance,
                                   msg=lambda m: f"{name}: {m}")

    # Fusion happened where it is expected; where not, for the reason the corpus expects.
    refused = NOT_FUSED.get(case.name, {})
    fused = fused_arguments(log)
    assert set(inputs + outputs) - set(refused) <= fused, log
    assert fused <= set(inputs + outputs), log
    for arg in set(refused) - fused:
        assert refused[arg] in log, (arg, log)
    if fused:
        assert "torch_triton_hop.fused:" in code or "_fused_0.run(" in code


def test_the_pointwise_code_is_not_trivial_at_zero():
    for dtype in (torch.float32, torch.int32):
        zero = torch.zeros(4, dtype=dtype)
        assert (prologue(zero) != 0).all() and (epilogue(zero) != zero).all()


def test_the_corpus_cases_left_out_have_nothing_to_fuse():
    left_out = {c.name for c in CASES if c.name not in ORDER_DEPENDENT and (not any(around(c)) or not c.writes)}
    assert left_out == set(NOTHING_TO_FUSE)
    assert set(NOT_FUSED) <= {c.name for c in CASES}


def test_the_corpus_exercises_the_fusion():
    """Most corpus kernels get a fused prologue or epilogue (asserted in each case above from
    its debug log), so the comparisons test fused code, not only refusals; and some of them
    reduce masked loads without other=, whose masked-off lanes a prologue must leave at 0."""
    expected = [c.name for c in CORPUS if set(sum(around(c), [])) - set(NOT_FUSED.get(c.name, {}))]
    assert len(expected) >= 0.7 * len(CORPUS), (len(expected), len(CORPUS))
    masked = [c.name for c in CORPUS if c.name.startswith("masked_") and c.name in expected]
    assert len(masked) >= 3, masked
