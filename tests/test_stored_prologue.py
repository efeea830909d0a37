"""A prologue whose result other nodes use too: the fused kernel stores that result as it loads
it, for them (see [Note: A prologue the fused kernel also stores]); and prologues into loops
that provably load each element once.

The pattern is a pre-norm transformer's residual stream: `h = x + r` feeds a norm kernel and
the next residual add. Every case runs eagerly and compiled with fusion off and on
(check_exact: the fused result equals the unfused compile's or eager's, bit for bit), and
asserts that the prologue was stored by the fused kernel or, with the reason logged, that it
was not.
"""

import logging
import re

import pytest
import torch
import triton
import triton.language as tl

from torch_triton_hop import wrap_triton

from test_fusion_trust import DEVICE, FUSION_LOG, check_exact
from test_fusion import pointwise_kernels
from test_store_coverage import RANGE_OVER_TENSORS
from torch._inductor.utils import run_and_get_code
import fusion_kernels as F

pytestmark = pytest.mark.any_device
NOT_STORED = "is used elsewhere too, and no proof that the fused kernel would store each of its elements once"


@triton.jit
def norm_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """One row per program, the row shorter than the block; masked lanes load `other=1.0`."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=1.0)
    # No division: on a GPU an epilogue beside a division may be refused (see [Note: Divisions
    # that ptxas may fuse into an add]), and the epilogue case below must fuse.
    tl.store(out_ptr + row * n_cols + cols, x * tl.rsqrt(tl.sum(x * x, axis=0) + 1.0), mask=mask)


@triton.jit
def rows_kernel(x_ptr, out_ptr, n_rows, n_cols, rows_per_program, BLOCK: tl.constexpr):
    """Liger's backward kernels' pattern: each program a run of rows, each row loaded once."""
    first = tl.program_id(0) * rows_per_program
    last = tl.minimum(first + rows_per_program, n_rows)
    cols = tl.arange(0, BLOCK)
    for row in range(first, last):
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + row * n_cols + cols, x * tl.sum(x, axis=0), mask=cols < n_cols)


def stores_prologue(log):
    """A fused kernel (its source in the fusion's debug log) stores a prologue's result, in
    parameter _tth_<argument>_stored (on a GPU inductor's launch names no parameters)."""
    return re.search(r"_tth_\w+_stored", log) is not None


def norm(h, rows=None):
    out = torch.empty_like(h)
    wrap_triton(norm_kernel)[(rows or h.shape[0],)](h, out, h.shape[1], BLOCK=32)
    return out


def check(fn, *args, stored, reason=None, caplog=None):
    """check_exact, and whether the launch stores a prologue (or the reason it does not)."""
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        code = check_exact(fn, *args, expect_fused=stored or reason is None)
    call = code[code.index("def call("):]
    assert stores_prologue(caplog.text) == stored, caplog.text
    if reason:
        assert reason in caplog.text, caplog.text
    return call


@pytest.fixture
def xr():
    torch.manual_seed(0)
    # f(0) != 0 in the prologues below, and masked lanes load other=1.0: a value stored there
    # would show.
    return torch.randn(16, 24, device=DEVICE), torch.randn(16, 24, device=DEVICE)


def test_a_residual_sum_feeding_a_norm_and_the_next_add_is_stored_by_the_fused_kernel(xr, caplog):
    def f(x, r):
        h = x * r + 1.0
        return norm(h), h + x

    call = check(f, *xr, stored=True, caplog=caplog)
    assert len(pointwise_kernels(call)) == 1  # h + x; x * r + 1 is computed in the launch


def test_the_stored_result_may_be_returned_or_used_through_a_view(xr, caplog):
    def returned(x, r):
        h = x - r
        return norm(h), h

    check(returned, *xr, stored=True, caplog=caplog)

    def viewed(x, r):
        h = (x + r * 2.0).view(-1)
        v = h.view(16, 24)  # what the kernel gets, also used (as Liger's X.view(-1, dim) saved for backward)
        return norm(v), v * 3.0, h.sum()

    check(viewed, *xr, stored=True, caplog=caplog)


@RANGE_OVER_TENSORS
def test_a_kernel_that_loads_each_row_once_in_a_loop_stores_it(xr, caplog):
    def f(x, r):
        h = x + r
        out = torch.empty_like(h)
        wrap_triton(rows_kernel)[(6,)](h, out, 16, 24, 3, BLOCK=32)
        return out, h * 2.0

    check(f, *xr, stored=True, caplog=caplog)


@pytest.mark.parametrize("case, reason", [
    ("a grid one row short", f"{NOT_STORED}: the kernel may leave 24 of the 384 elements of"),
    pytest.param("a kernel that loads each element twice", f"{NOT_STORED}: the kernel stores 384 elements of",
                 marks=RANGE_OVER_TENSORS),
    ("a use before the launch", "before the launch"),
    ("an operand of the launch's own epilogue", "is used elsewhere too, by the fused code of out_ptr"),
])
def test_a_prologue_used_elsewhere_is_not_stored_without_its_conditions(case, reason, xr, caplog):
    def short(x, r):
        h = x + r
        return norm(h, rows=15)[:15], h * 3.0

    def twice(x, r):
        h = x + r
        out = torch.empty_like(h)
        wrap_triton(F.two_pass_kernel)[(16,)](h, out, 24, BLOCK=8)
        return out, h * 3.0

    def used_before(x, r):  # h * 2.0, the kernel's other input, is computed before the launch
        h = x + r
        out = torch.empty_like(h)
        wrap_triton(F.add_kernel)[(triton.cdiv(h.numel(), 64),)](h, h * 2.0, out, h.numel(), BLOCK=64)
        return out

    def epilogue_operand(x, r):
        h = x + r
        return norm(h) * 2.0 + h

    fn = {"a grid one row short": short, "a kernel that loads each element twice": twice,
          "a use before the launch": used_before, "an operand of the launch's own epilogue": epilogue_operand}[case]
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(fn, *xr, expect_fused=case in ("a use before the launch",
                                                            "an operand of the launch's own epilogue"))
    assert not stores_prologue(caplog.text)
    assert reason in caplog.text, caplog.text


@pytest.mark.parametrize("dynamic", ["rows", "every_size"])
def test_symbolic_sizes(dynamic, caplog):
    """Rows symbolic (a batch or sequence that varies, as automatic dynamic shapes make it): the
    proof holds for every number of rows (see [Note: A proof over symbolic sizes, by
    translation]) and the fused kernel stores h, exact at other sizes without recompiling.
    Every size symbolic: the kernel's BLOCK may be narrower than a row, no proof."""
    def f(x, r):
        h = x + r
        return norm(h), h * 3.0

    def inputs(rows):
        x, r = torch.randn(rows, 24, device=DEVICE), torch.randn(rows, 24, device=DEVICE)
        for t in (x, r):
            torch._dynamo.mark_dynamic(t, 0)
        return x, r

    torch.manual_seed(0)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        torch._dynamo.reset()
        fn = torch.compile(f, fullgraph=True, dynamic=True if dynamic == "every_size" else None)
        x, r = inputs(16)
        out, codes = run_and_get_code(fn, x, r)
    for got, expected in zip(out, f(x, r)):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
    assert stores_prologue(caplog.text) == (dynamic == "rows"), caplog.text
    if dynamic == "every_size":
        assert "no proof that the fused kernel would store each of its elements once" in caplog.text, caplog.text
        return
    with torch._dynamo.config.patch(error_on_recompile=True):
        for rows in (5, 33, 2):
            x, r = inputs(rows)
            for got, expected in zip(fn(x, r), f(x, r)):
                torch.testing.assert_close(got, expected, rtol=0, atol=0)


@RANGE_OVER_TENSORS
def test_a_wider_prologue_into_a_loop_fuses_where_each_element_is_loaded_once(xr, caplog):
    """The prologue loads 8 bytes per element (two fp32 operands) in place of 4: fused into a
    loop only where each element is provably loaded once, never into one that re-reads it."""
    def once(x, r):
        out = torch.empty_like(x)
        wrap_triton(rows_kernel)[(6,)](x + r, out, 16, 24, 3, BLOCK=32)
        return out

    check_exact(once, *xr, expect_fused=True)

    def twice(x, r):
        out = torch.empty_like(x)
        wrap_triton(F.two_pass_kernel)[(16,)](x + r, out, 24, BLOCK=8)
        return out

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(twice, *xr, expect_fused=False)
    assert "the prologue would load 8 bytes per element instead of 4, in a loop that may re-read them (the kernel " \
           "loads 384 elements of x_ptr more than once" in caplog.text, caplog.text


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def autotuned_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=2.0) * 3.0, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def overlapping_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Programs 16 elements apart: the BLOCK=64 config loads most elements four times."""
    offs = tl.program_id(0) * 16 + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)


@triton.jit
def flag_masked_kernel(x_ptr, flag_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    chosen = (offs < n) & (tl.load(flag_ptr + offs, mask=offs < n, other=0) > 0)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=chosen, other=0.0) * 2.0, mask=offs < n)


@triton.jit
def to_float_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n).to(tl.float32) * 0.5, mask=offs < n)


def test_an_autotuned_kernel_stores_it_only_if_every_config_loads_each_element_once(caplog):
    x, r = torch.randn(100, device=DEVICE), torch.randn(100, device=DEVICE)

    def tuned(x, r):
        h = x * r - 1.0
        out = torch.empty_like(h)
        wrap_triton(autotuned_scale_kernel)[lambda meta: (triton.cdiv(h.numel(), meta["BLOCK"]),)](h, out, h.numel())
        return out, h + 1.0

    check(tuned, x, r, stored=True, caplog=caplog)
    caplog.clear()

    def overlapping(x, r):
        h = x * r - 1.0
        out = torch.empty_like(h)
        wrap_triton(overlapping_kernel)[(triton.cdiv(h.numel(), 16),)](h, out, h.numel())
        return out, h + 1.0

    check(overlapping, x, r, stored=False, reason=f"{NOT_STORED}: the kernel stores 204 elements of", caplog=caplog)


def test_a_load_masked_by_loaded_data_is_not_stored(caplog):
    x, r = torch.randn(100, device=DEVICE), torch.randn(100, device=DEVICE)
    flags = (torch.randn(100, device=DEVICE) > 0).to(torch.int32)

    def f(x, r, flags):
        h = x + r
        out = torch.empty_like(h)
        wrap_triton(flag_masked_kernel)[(4,)](h, flags, out, h.numel(), BLOCK=32)
        return out, h * 2.0

    check(f, x, r, flags, stored=False, reason=f"{NOT_STORED}: a store of the output has an address, mask or "
          "condition computed from values the proof does not follow", caplog=caplog)


@pytest.mark.parametrize("make", [
    lambda x, r: (x * 100.0 - 50.0).to(torch.uint8),  # negative floats to unsigned
    lambda x, r: (x * 300.0).to(torch.int8),  # out of range
    lambda x, r: x > r,
], ids=["uint8", "int8", "bool"])
def test_narrow_integer_and_bool_results_are_stored_as_the_program_computes_them(make, caplog):
    torch.manual_seed(0)
    x, r = torch.randn(100, device=DEVICE), torch.randn(100, device=DEVICE)

    def f(x, r):
        h = make(x, r)
        out = torch.empty(h.shape, device=h.device)
        wrap_triton(to_float_kernel)[(4,)](h, out, h.numel(), BLOCK=32)
        return out, h

    check(f, x, r, stored=True, caplog=caplog)


def test_a_residual_sum_of_an_embedding_is_stored(plan_for_a_gpu, caplog):
    """The first residual add of a transformer reads the embedding: rows of the table, the same
    values in memory as in any kernel that gathers them, and no product an add could contract
    with on a GPU (see [Note: Values at a fused region's boundary]). Planned as for a GPU, where
    the boundary rules differ from the interpreter's."""
    torch.manual_seed(0)
    table, tokens = torch.randn(50, 24, device=DEVICE), torch.randint(0, 50, (16,), device=DEVICE)
    attn = torch.randn(16, 24, device=DEVICE)

    def f(table, tokens, attn):
        h = torch.nn.functional.embedding(tokens, table) + attn
        return norm(h), h * 2.0

    check(f, table, tokens, attn, stored=True, caplog=caplog)
