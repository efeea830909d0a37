"""Epilogues whose result is defined where a kernel stores nothing fuse only where the kernel
provably stores every element of its output (see [Note: A proof that a kernel stores every
element]).

Each program ends in `out + y` with y NaN where the kernel may leave `out` unwritten: unfused,
the result is NaN there; a fused epilogue that ran only where the kernel stored would leave
the garbage of torch.empty. Every case runs eagerly and compiled with fusion off and on
(check_exact), and asserts that it fused or, with the reason logged, that it did not.
"""

import logging
import warnings

import pytest
import torch
import triton
import triton.language as tl

from torch_triton_hop import wrap_triton
from torch_triton_hop._store_coverage import _by_rows as BY_ROWS  # before any test patches it

import torch_triton_hop
from test_fusion_trust import DEVICE, FUSION_LOG, check_exact, compiled, same_bits
from test_fusion import fused_launches
from generated_code import ON_GPU

pytestmark = pytest.mark.any_device
TRITON_VERSION = tuple(int(p) for p in triton.__version__.split(".")[:2])
# Kernels the older tritons' interpreters cannot run (CI runs this file on triton 3.6-3.8 too).
RANGE_OVER_TENSORS = pytest.mark.skipif(
    not ON_GPU and TRITON_VERSION < (3, 7), reason="triton 3.6's interpreter cannot run range() over some run-time "
    "bounds (computed from program_id, or a kernel argument: TypeError: only 0-dimensional arrays can be converted "
    "to Python scalars)")
BOOL_ARGUMENTS = pytest.mark.skipif(
    not ON_GPU and TRITON_VERSION < (3, 8), reason="the interpreter of triton 3.6 and 3.7 cannot take a bool "
    "argument (ValueError: numpy data itemsize (8 bits) exceeds dtype primitive_bitwidth)")
UNWRITTEN = "no proof that it stores every element: the kernel may leave"
NOT_FOLLOWED = "computed from values the proof does not follow"


def nan_from(n, first_unwritten):
    y = torch.arange(n, device=DEVICE, dtype=torch.float32)
    y[first_unwritten:] = float("nan")
    return y


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@pytest.mark.parametrize("n", [64, 100])
def test_a_grid_that_covers_the_output_fuses_and_one_block_short_does_not(n, caplog):
    def f(x, y, blocks):
        out = torch.empty_like(x)
        wrap_triton(scale_kernel)[(blocks,)](x, out, x.numel(), BLOCK=16)
        return out + y

    x = torch.randn(n, device=DEVICE)
    check_exact(lambda x, y: f(x, y, triton.cdiv(n, 16)), x, nan_from(n, n), expect_fused=True)
    short = (triton.cdiv(n, 16) - 1) * 16
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(lambda x, y: f(x, y, triton.cdiv(n, 16) - 1), x, nan_from(n, short), expect_fused=False)
    assert f"{UNWRITTEN} {n - short} of the {n} elements of out_ptr unwritten" in caplog.text, caplog.text


@triton.jit
def rows_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, rows_per_program, BLOCK: tl.constexpr):
    """Liger's backward kernels' pattern: each program a run of rows, the pointers carried."""
    first = tl.program_id(0) * rows_per_program
    last = tl.minimum(first + rows_per_program, n_rows)
    cols = tl.arange(0, BLOCK)
    x_ptr += first * stride
    out_ptr += first * stride
    for _ in range(first, last):
        tl.store(out_ptr + cols, tl.load(x_ptr + cols, mask=cols < n_cols) * 2.0, mask=cols < n_cols)
        x_ptr += stride
        out_ptr += stride


@RANGE_OVER_TENSORS
@pytest.mark.parametrize("programs, covered", [(4, True), (3, False)])
def test_a_run_of_rows_per_program_with_carried_pointers(programs, covered, caplog):
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(rows_kernel)[(programs,)](x, out, x.shape[0], x.shape[1], x.stride(0), 3, BLOCK=32)
        return out + y

    x = torch.randn(11, 20, device=DEVICE)
    y = nan_from(220, 220 if covered else 9 * 20).view(11, 20)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, x, y, expect_fused=covered)
    assert covered or f"{UNWRITTEN} 40 of the 220 elements" in caplog.text, caplog.text


@triton.jit
def even_programs_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if pid % 2 == 0:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def positive_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-1.0)
    tl.store(out_ptr + offs, x, mask=x > 0)  # a mask from loaded data: covers every element here


@triton.jit
def permuted_kernel(x_ptr, index_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    where = tl.load(index_ptr + offs, mask=offs < n)  # offsets loaded from memory: a permutation here
    tl.store(out_ptr + where, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_stores_under_a_condition_or_from_loaded_values_are_not_proven(caplog):
    x = torch.rand(64, device=DEVICE) + 0.5  # all positive: positive_kernel stores every element

    def even(x, y):
        out = torch.empty_like(x)
        wrap_triton(even_programs_kernel)[(4,)](x, out, x.numel(), BLOCK=16)
        return out + y

    def positive(x, y):
        out = torch.empty_like(x)
        wrap_triton(positive_kernel)[(4,)](x, out, x.numel(), BLOCK=16)
        return out + y

    def permuted(x, y):
        out = torch.empty_like(x)
        wrap_triton(permuted_kernel)[(4,)](x, torch.arange(63, -1, -1, device=x.device), out, x.numel(), BLOCK=16)
        return out + y

    y = nan_from(64, 64)
    y[16:32] = y[48:] = float("nan")
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(even, x, y, expect_fused=False)
        assert f"{UNWRITTEN} 32 of the 64 elements" in caplog.text, caplog.text
        caplog.clear()
        check_exact(positive, x, nan_from(64, 64), expect_fused=False)
        check_exact(permuted, x, nan_from(64, 64), expect_fused=False)
    assert caplog.text.count(NOT_FOLLOWED) >= 2, caplog.text


@triton.jit
def tile_kernel(x_ptr, out_ptr, M, N, stride_m, stride_n, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    rn = tl.program_id(1) * BN + tl.arange(0, BN)[None, :]
    mask = (rm < M) & (rn < N)
    x = tl.load(x_ptr + rm * N + rn, mask=mask)
    tl.store(out_ptr + rm * stride_m + rn * stride_n, x, mask=mask)


def _empty(layout, M, N, device):
    if layout == "contiguous":
        return torch.empty(M, N, device=device)
    if layout == "column_major":
        return torch.empty_strided((M, N), (1, M), device=device)
    if layout == "viewed":
        return torch.empty(M * N, device=device).view(M, N)
    return torch.empty(N, M, device=device).t()  # a permute of an empty in the graph: fresh too


@pytest.mark.parametrize("layout", ["contiguous", "column_major", "transposed", "viewed"])
def test_a_2d_grid_and_a_strided_output(layout, caplog):
    def f(x, y, grid_n):
        M, N = x.shape
        out = _empty(layout, M, N, x.device)
        wrap_triton(tile_kernel)[(triton.cdiv(M, 8), grid_n)](x, out, M, N, out.stride(0), out.stride(1), BM=8, BN=8)
        return out + y

    x = torch.randn(13, 19, device=DEVICE)
    check_exact(lambda x, y: f(x, y, 3), x, nan_from(13 * 19, 13 * 19).view(13, 19), expect_fused=True)
    y = torch.zeros(13, 19, device=DEVICE)
    y[:, 16:] = float("nan")
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(lambda x, y: f(x, y, 2), x, y, expect_fused=False)
    assert f"{UNWRITTEN} 39 of the 247 elements" in caplog.text, caplog.text


def test_a_transposed_empty_read_after_the_launch_keeps_what_the_kernel_stored(caplog):
    """Fused, the kernel would store out + y, and base would not hold what it wrote."""
    def f(x, y):
        M, N = x.shape
        base = torch.empty(N, M, device=x.device)
        out = base.t()
        wrap_triton(tile_kernel)[(triton.cdiv(M, 8), 3)](x, out, M, N, out.stride(0), out.stride(1), BM=8, BN=8)
        return out + y, base.sum()  # base is read after the launch: it holds what the kernel wrote

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, torch.randn(13, 19, device=DEVICE), torch.randn(13, 19, device=DEVICE), expect_fused=False)
    assert "the result is used elsewhere too" in caplog.text, caplog.text


@triton.jit
def grid_stride_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


@triton.jit
def wrapping_offsets_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    wrapped = offs + 2147483647 + 1  # int32: wraps below zero, and back below
    back = wrapped + 2147483647 + 1
    tl.store(out_ptr + back, tl.load(x_ptr + offs, mask=offs < n), mask=back < n)


@RANGE_OVER_TENSORS
def test_loops_over_the_grid_and_int32_offsets_that_wrap():
    x = torch.randn(300, device=DEVICE)

    def grid_stride(x, y):
        out = torch.empty_like(x)
        wrap_triton(grid_stride_kernel)[(3,)](x, out, x.numel(), BLOCK=32)
        return out + y

    def wrapping(x, y):
        out = torch.empty_like(x)
        wrap_triton(wrapping_offsets_kernel)[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
        return out + y

    check_exact(grid_stride, x, nan_from(300, 300), expect_fused=True)
    check_exact(wrapping, x, nan_from(300, 300), expect_fused=True)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def autotuned_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_every_autotuning_config_must_store_every_element(caplog):
    """With a grid of n / 32 programs, BLOCK=16 stores half the output: whichever config the
    autotuner picks, the proof must hold for it."""
    x = torch.randn(128, device=DEVICE)

    def per_config(x, y):
        out = torch.empty_like(x)
        wrap_triton(autotuned_kernel)[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
        return out + y

    def fixed(x, y):
        out = torch.empty_like(x)
        wrap_triton(autotuned_kernel)[(triton.cdiv(x.numel(), 32),)](x, out, x.numel())
        return out + y

    check_exact(per_config, x, nan_from(128, 128), expect_fused=True)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        _, code = compiled(fixed, x, nan_from(128, 128), fusion=True)
    assert not fused_launches(code)
    assert f"{UNWRITTEN} 64 of the 128 elements" in caplog.text, caplog.text


@triton.jit
def block_offsets(BLOCK: tl.constexpr):
    return tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)


@triton.jit
def helper_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = block_offsets(BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit(noinline=True)  # a function of its own in the TTIR, called by tt.call
def first_offset(pid, n, BLOCK: tl.constexpr):
    if n < 0:  # never true: the helper returns early only in its TTIR's control flow
        return 0
    return pid * BLOCK + 5  # elements 0 to 4 are left unwritten


@triton.jit
def early_return_helper_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = first_offset(tl.program_id(0), n, BLOCK) + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def float_offsets_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + (tl.arange(0, BLOCK).to(tl.float32) * 1.0).to(tl.int32)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_offsets_from_a_helper_and_offsets_computed_in_floats(caplog):
    """Offsets a helper computes (a tt.call in the TTIR read) are followed into it, but not
    into a helper that returns early; offsets computed in floating point are not followed (the
    epilogue then follows the rules for unwritten elements)."""
    x = torch.randn(100, device=DEVICE)

    def through(kernel, block=32):
        def f(x, y):
            out = torch.empty_like(x)
            wrap_triton(kernel)[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)
            return out + y
        return f

    check_exact(through(helper_kernel), x, nan_from(100, 100), expect_fused=True)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(through(float_offsets_kernel), x, nan_from(100, 100), expect_fused=False)
        assert NOT_FOLLOWED in caplog.text, caplog.text
        caplog.clear()
        y = nan_from(100, 100)
        y[:5] = float("nan")
        check_exact(through(early_return_helper_kernel, block=128), x, y, expect_fused=False)
    assert "first_offset" in caplog.text and "which returns early" in caplog.text, caplog.text


@triton.jit
def symbolic_rows_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, ROWS: tl.constexpr, MASK_ROWS: tl.constexpr,
                         BLOCK: tl.constexpr):
    row = tl.program_id(0) * ROWS
    cols = tl.arange(0, BLOCK)
    for r in range(ROWS):
        m = cols < n_cols
        if MASK_ROWS:
            m = m & (row + r + cols * 0 < n_rows)
        offs = (row + r) * stride + cols
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def first_rows_while_kernel(x_ptr, out_ptr, n_cols, stride, FIRST: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    i = row
    while i < FIRST:  # programs FIRST and after store nothing; program 0 stores its row
        offs = row * stride + cols
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=cols < n_cols) * 2.0, mask=cols < n_cols)
        i += FIRST


@triton.jit
def row_blocks_while_kernel(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    i = 0
    while i < 4:  # program 0 stores its row's 4 blocks; program p, every (p+1)-th one
        offs = row * stride + i * BLOCK + cols
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)
        i += 1 + row


@triton.jit
def first_rows_if_kernel(x_ptr, out_ptr, n_cols, stride, FIRST: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    if row < FIRST:  # programs FIRST and after store nothing
        offs = row * stride + cols
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=cols < n_cols) * 2.0, mask=cols < n_cols)


@triton.jit
def rows_in_int16_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int16)
    cols = tl.arange(0, BLOCK)
    offs = (row * 24).to(tl.int32) + cols  # 16-bit row offsets: past row 1365 they wrap
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=cols < n_cols) * 2.0, mask=cols < n_cols)


@triton.jit
def halves_shifted_apart_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    half = tl.arange(0, BLOCK // 2)
    first = pid * BLOCK + half  # program p: the first half of its block ...
    second = pid * (BLOCK // 2) + BLOCK // 2 + half  # ... and a half block shifted by half as much
    tl.store(out_ptr + first, tl.load(x_ptr + first, mask=first < n) * 2.0, mask=first < n)
    tl.store(out_ptr + second, tl.load(x_ptr + second, mask=second < n) * 2.0, mask=second < n)


@triton.jit
def whole_blocks_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    last = tl.program_id(0) * BLOCK + BLOCK - 1 + tl.zeros([BLOCK], tl.int32)  # the block's last offset
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=last < n) * 2.0, mask=last < n)  # whole blocks only


@triton.jit
def second_iteration_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK  # 64-bit: offsets that cannot wrap
    offs = start + tl.arange(0, BLOCK)
    for i in range(2):
        if i == 1:  # stores at 2 * program id * BLOCK: every other block
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)
        offs += start


def _grid_1d(kind, n, block):
    return {"cdiv": triton.cdiv(n, block), "short": triton.cdiv(n, block) - 1, "floor": n // block}[kind]


def _launch(kernel_kind, x, out):
    """The launches of test_symbolic_sizes: (kernel kind) -> out written from x."""
    if kernel_kind in ("cdiv", "short", "floor"):
        wrap_triton(scale_kernel)[(_grid_1d(kernel_kind, x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
    elif kernel_kind == "rows":
        wrap_triton(symbolic_rows_kernel)[(x.shape[0],)](x, out, x.shape[0], x.shape[1], x.stride(0), ROWS=1,
                                                         MASK_ROWS=False, BLOCK=32)
    elif kernel_kind == "two_rows_per_program":
        wrap_triton(symbolic_rows_kernel)[(x.shape[0],)](x, out, 2 * x.shape[0], x.shape[2], x.stride(1), ROWS=2,
                                                         MASK_ROWS=False, BLOCK=32)
    elif kernel_kind == "rows_masked_on_the_row":
        wrap_triton(symbolic_rows_kernel)[(triton.cdiv(x.shape[0], 2),)](x, out, x.shape[0], x.shape[1], x.stride(0),
                                                                         ROWS=2, MASK_ROWS=True, BLOCK=32)
    elif kernel_kind == "row_blocks_stepped_by_the_row":
        wrap_triton(row_blocks_while_kernel)[(x.shape[0],)](x, out, x.stride(0), BLOCK=8)
    elif kernel_kind == "rows_under_a_condition_on_the_row":
        wrap_triton(first_rows_if_kernel)[(x.shape[0],)](x, out, x.shape[1], x.stride(0), FIRST=4, BLOCK=32)
    elif kernel_kind == "rows_in_int16":
        wrap_triton(rows_in_int16_kernel)[(x.shape[0],)](x, out, x.shape[1], BLOCK=32)
    elif kernel_kind == "rows_in_a_while_loop_on_the_row":
        wrap_triton(first_rows_while_kernel)[(x.shape[0],)](x, out, x.shape[1], x.stride(0), FIRST=4, BLOCK=32)
    elif kernel_kind == "halves_shifted_apart":
        wrap_triton(halves_shifted_apart_kernel)[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
    elif kernel_kind == "whole_blocks_only":
        wrap_triton(whole_blocks_kernel)[(triton.cdiv(x.numel(), 8),)](x, out, x.numel(), BLOCK=8)
    elif kernel_kind == "offsets_shifted_again_each_iteration":
        wrap_triton(second_iteration_kernel)[(triton.cdiv(x.numel(), 8),)](x, out, x.numel(), BLOCK=8)


# (kernel, dynamic dims, shape per size, fuses): under dynamic shapes the proof holds for every
# size (see [Note: A proof over symbolic sizes, by translation]) or the epilogue stays apart.
SYMBOLIC_CASES = {
    "cdiv": ([0], lambda s: (s,), True),
    "short": ([0], lambda s: (s,), False),    # one block short: the last elements unwritten
    "floor": ([0], lambda s: (s,), False),    # n // BLOCK programs: short where BLOCK does not divide n
    "rows": ([0], lambda s: (s, 24), True),
    "two_rows_per_program": ([0], lambda s: (s, 2, 24), True),
    "rows_of_symbolic_width": ([1], lambda s: (5, s), False),  # BLOCK 32 may be narrower than a row
    "rows_masked_on_the_row": ([0], lambda s: (s, 24), False),  # the program id in a mask
    "rows_under_a_condition_on_the_row": ([0], lambda s: (s, 24), False),  # rows 4 and after unwritten
    "rows_in_a_while_loop_on_the_row": ([0], lambda s: (s, 24), False),  # rows 4 and after unwritten
    "rows_in_int16": ([0], lambda s: (s, 24), False),  # right up to 1365 rows, not for every size
    "row_blocks_stepped_by_the_row": ([0], lambda s: (s, 32), False),  # a while loop's step: the row
    # program 0 stores its whole block, but program p stores [16p, 16p + 8) and [8p + 8, 8p + 16):
    # the second halves of the later blocks stay unwritten
    "halves_shifted_apart": ([0], lambda s: (s,), False),
    # the mask compares the block's last offset with n: a last, partial block stays unwritten
    # (at 40, a multiple of the block, every element is stored)
    "whole_blocks_only": ([0], lambda s: (s,), False),
    # a loop-carried offset that grows by the program's own offset each iteration
    "offsets_shifted_again_each_iteration": ([0], lambda s: (s,), False),
}


@pytest.mark.parametrize("kind", list(SYMBOLIC_CASES))
def test_symbolic_sizes(kind, caplog):
    """Compiled once with symbolic sizes, then run at other sizes: each bit for bit as eager,
    with y NaN where the kernel leaves out unwritten (so a fused epilogue that skipped those
    elements would differ)."""
    dims, shape, fuses = SYMBOLIC_CASES[kind]
    launch_kind = "rows" if kind == "rows_of_symbolic_width" else kind

    def f(x, y):
        out = torch.empty_like(x)
        _launch(launch_kind, x, out)
        return out + y

    def inputs(size):
        x = torch.randn(shape(size), device=DEVICE)
        y = torch.randn(shape(size), device=DEVICE)
        eager_out = torch.full_like(x, float("nan"))
        _launch(launch_kind, x, eager_out)  # NaN where the kernel stores nothing
        y[eager_out.isnan()] = float("nan")
        for dim in dims:
            torch._dynamo.mark_dynamic(x, dim)
            torch._dynamo.mark_dynamic(y, dim)
        return x, y

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, *inputs(40), expect_fused=fuses)
    if not fuses:  # the reason names the reduction tried: the grid's symbolic axis, or a row loop
        assert "with symbolic sizes the proof is made on" in caplog.text, caplog.text
    torch._dynamo.reset()
    previous, torch_triton_hop.config.fusion = torch_triton_hop.config.fusion, True
    try:
        compiled_f = torch.compile(f, fullgraph=True)
        compiled_f(*inputs(40))
        with torch._dynamo.config.patch(error_on_recompile=True):  # the premise: the sizes are symbolic
            for size in (37, 64, 100, 3):
                x, y = inputs(size)
                assert same_bits(compiled_f(x, y), f(x, y)), size
    finally:
        torch_triton_hop.config.fusion = previous


@triton.jit
def flag_kernel(x_ptr, out_ptr, n, flag, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if flag:  # a bool argument: an i1 scalar
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@BOOL_ARGUMENTS
@pytest.mark.parametrize("flag, stored", [(True, 128), (False, 0), (True, 127)])
def test_a_store_under_a_bool_argument(flag, stored, caplog):
    """Once proven with flag False (the bool became an integer, and the stores' masks an index:
    a helper's adversarial corpus, sixteenth session)."""
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(flag_kernel)[(2,)](x, out, stored or 128, flag, BLOCK=64)
        return out + y

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, torch.randn(128, device=DEVICE), nan_from(128, stored), expect_fused=stored == 128)
    assert stored == 128 or f"{UNWRITTEN} {128 - stored} of the 128 elements" in caplog.text, caplog.text


@triton.jit
def select_pointer_kernel(x_ptr, out_ptr, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = (offs >= SHIFT) & (offs < n)
    where = tl.where(offs % 2 == 0, out_ptr + offs, out_ptr + offs - SHIFT)  # per lane, one of two addresses
    tl.store(where, tl.load(x_ptr + offs, mask=mask), mask=mask)


@pytest.mark.parametrize("shift, programs", [(0, 1), (1, 1), (1, 2)])
def test_a_store_through_a_pointer_selected_per_lane(shift, programs, caplog):
    """With SHIFT=1 the odd lanes store the even element before them: odd elements stay unwritten.
    Once proven with one program (the per-lane select was taken as one choice per program, and
    every lane got both addresses: a helper's adversarial corpus, sixteenth session)."""
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(select_pointer_kernel)[(programs,)](x, out, x.numel(), SHIFT=shift, BLOCK=64)
        return out + y

    n = 64 * programs
    y = nan_from(n, n)
    if shift:
        y[1::2] = float("nan")
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, torch.randn(n, device=DEVICE), y, expect_fused=not shift)
    assert not shift or f"{UNWRITTEN} {n // 2} of the {n} elements" in caplog.text, caplog.text


@triton.jit
def positive_mask_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) > 0, mask=offs < n)  # through an i8 pointer cast


@pytest.mark.parametrize("blocks, covered", [(4, True), (3, False)])
def test_a_bool_output_stored_through_a_pointer_cast(blocks, covered, caplog):
    """Triton stores a bool tensor through its i1 pointer cast to i8 (one byte either way): the
    cast keeps every element's offset. `out & valid` is False where valid is, whatever out holds."""
    def f(x, valid):
        out = torch.empty(x.shape, dtype=torch.bool, device=x.device)
        wrap_triton(positive_mask_kernel)[(blocks,)](x, out, x.numel(), BLOCK=16)
        return out & valid

    valid = torch.arange(64, device=DEVICE) % 3 != 0
    valid[blocks * 16:] = False  # where the kernel stores nothing: the program's result is False
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, torch.randn(64, device=DEVICE), valid, expect_fused=covered)
    assert covered or f"{UNWRITTEN} 16 of the 64 elements" in caplog.text, caplog.text


@triton.jit
def early_return_kernel(x_ptr, out_ptr, n_rows, n_cols, skipped_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_rows:  # the common idiom: a grid rounded up past the rows
        return
    if n_cols > 0:
        if row == skipped_row:  # nested: a row a program returns from without storing
            return
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + row * n_cols + cols, x * 2.0, mask=cols < n_cols)


@pytest.mark.parametrize("skipped_row", [-1, 2])
def test_an_early_return(skipped_row, caplog):
    """`if row >= n_rows: return` branches between the function's blocks (cf.cond_br); each
    block runs for the programs that reach it. Returning from row 2 leaves it unwritten."""
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(early_return_kernel)[(x.shape[0] + 3,)](x, out, x.shape[0], x.shape[1], skipped_row, BLOCK=32)
        return out + y

    y = nan_from(6 * 20, 6 * 20).view(6, 20)
    if skipped_row >= 0:
        y[skipped_row] = float("nan")
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, torch.randn(6, 20, device=DEVICE), y, expect_fused=skipped_row < 0)
    assert skipped_row < 0 or f"{UNWRITTEN} 20 of the 120 elements" in caplog.text, caplog.text


@triton.jit
def halves_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if pid % 2 == 0:  # the even programs store and return; the odd ones store after the branch
        tl.store(out_ptr + offs, x * 2.0, mask=offs < n)
        return
    tl.store(out_ptr + offs, x * 3.0, mask=offs < n)


@triton.jit
def returns_on_a_loaded_flag_kernel(x_ptr, flag_ptr, out_ptr, n, BLOCK: tl.constexpr):
    if tl.load(flag_ptr) == 0:  # whether a program stores depends on memory: no proof
        return
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_stores_on_both_sides_of_an_early_return_and_a_return_on_loaded_data(caplog):
    x = torch.randn(100, device=DEVICE)

    def halves(x, y):
        out = torch.empty_like(x)
        wrap_triton(halves_kernel)[(7,)](x, out, x.numel(), BLOCK=16)
        return out + y

    check_exact(halves, x, nan_from(100, 100), expect_fused=True)

    def flagged(x, flag, y):
        out = torch.empty_like(x)
        wrap_triton(returns_on_a_loaded_flag_kernel)[(7,)](x, flag, out, x.numel(), BLOCK=16)
        return out + y

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(flagged, x, torch.ones(1, device=DEVICE, dtype=torch.int32), nan_from(100, 100),
                    expect_fused=False)
    assert NOT_FOLLOWED in caplog.text, caplog.text


@triton.jit
def grid_stride_while_kernel(x_ptr, out_ptr, n, stop_short, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    while start < n - stop_short:  # a persistent kernel: fewer programs than blocks
        offs = start + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)
        start += tl.num_programs(0) * BLOCK


@triton.jit
def while_on_loaded_data_kernel(x_ptr, count_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = 0
    while i < tl.load(count_ptr):  # the iterations depend on memory: no proof
        offs = (tl.program_id(0) + i * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
        i += 1


@pytest.mark.parametrize("stop_short, written", [(0, 100), (20, 80)])
def test_a_store_in_a_while_loop(stop_short, written, caplog):
    """The loop runs, for every program at once, while any program's condition holds. Stopping
    20 elements short skips the blocks that start at 80 and 96."""
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(grid_stride_while_kernel)[(3,)](x, out, x.numel(), stop_short, BLOCK=16)
        return out + y

    x = torch.randn(100, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, x, nan_from(100, written), expect_fused=written == 100)
    assert written == 100 or f"{UNWRITTEN} {100 - written} of the 100 elements" in caplog.text, caplog.text


def test_a_while_loop_on_loaded_data_is_not_proven(caplog):
    x = torch.randn(100, device=DEVICE)

    def on_data(x, count, y):
        out = torch.empty_like(x)
        wrap_triton(while_on_loaded_data_kernel)[(3,)](x, count, out, x.numel(), BLOCK=16)
        return out + y

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(on_data, x, torch.full((1,), 3, device=DEVICE, dtype=torch.int32), nan_from(100, 100),
                    expect_fused=False)
    assert "a while loop has a condition the proof does not follow" in caplog.text, caplog.text


@triton.jit
def reassigned_before_a_return_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < 0
    if pid * BLOCK >= n:
        return
    else:
        mask = offs < n  # reassigned in an `if` holding a return: passed to the join as a block argument
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def test_a_mask_reassigned_beside_an_early_return():
    """The frontend passes a name reassigned in an `if` that returns to the block after it
    (`^bb3(%mask: tensor<16xi1>)`); each program takes the value its own branch passed."""
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(reassigned_before_a_return_kernel)[(9,)](x, out, x.numel(), BLOCK=16)
        return out + y

    check_exact(f, torch.randn(100, device=DEVICE), nan_from(100, 100), expect_fused=True)


@triton.jit
def divides_after_a_return_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_rows:
        return
    left = n_rows - row  # 0 only in the programs that returned
    cols = tl.arange(0, BLOCK)
    mask = cols < (n_cols * left) // left
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=mask) * 2.0, mask=mask)


def test_a_division_by_zero_only_past_an_early_return_is_no_fault():
    """Every block's arithmetic is evaluated for all programs at once; a fault (a division by
    zero, a loop step of 0) counts only in the programs that run it."""
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(divides_after_a_return_kernel)[(x.shape[0] + 2,)](x, out, x.shape[0], x.shape[1], BLOCK=32)
        return out + y

    check_exact(f, torch.randn(6, 20, device=DEVICE), nan_from(120, 120).view(6, 20), expect_fused=True)


@triton.jit
def faulting_offsets_kernel(x_ptr, out_ptr, n, FAULT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if FAULT == "divide by zero":
        target = offs // tl.where(offs == 3, 0, 1)
    elif FAULT == "shift by the width":
        target = offs << tl.where(offs == 3, 32, 0)
    else:  # the one int64 quotient that overflows
        target = tl.where(offs == 3, -9223372036854775808, offs.to(tl.int64)) // tl.where(offs == 3, -1, 1)
    tl.store(out_ptr + target, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=(target >= 0) & (target < n))


@pytest.mark.parametrize("fault, reason", [("divide by zero", "arith.divsi may divide by zero"),
                                           ("shift by the width", "arith.shli may shift by 32 bits or more"),
                                           ("overflow", "arith.divsi may overflow")])
def test_store_offsets_that_divide_by_zero_overflow_or_shift_too_far_are_not_proven(fault, reason, caplog):
    """Each fault happens in one lane that the kernel stores from (offset 3 otherwise), and what
    it gives is the device's: the interpreter's `offs // 0` is 0, a GPU's is undefined. The
    proof cannot say where that lane stores, so it proves nothing: no fusion."""
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(faulting_offsets_kernel)[(4,)](x, out, x.numel(), FAULT=fault, BLOCK=16)
        return out + y

    y = nan_from(64, 64)
    y[3] = float("nan")  # NaN where the fault may leave the output unwritten
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "(divide by zero|overflow) encountered", RuntimeWarning)  # the interpreter's
        check_exact(f, torch.randn(64, device=DEVICE), y, expect_fused=False)
    assert f"{UNWRITTEN} " not in caplog.text and f"no proof that it stores every element: {reason}" in caplog.text, \
        caplog.text


@triton.jit
def million_rows_kernel(out_ptr, n_rows, BLOCK: tl.constexpr):
    for row in range(0, n_rows):  # one program, a million iterations of scalar index math
        offs = row * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, offs.to(tl.float32))


def test_a_proof_that_would_take_too_long_gives_up():
    """Each op evaluated costs at least its Python time; a loop of a million iterations gives
    up (no proof: the safe path) instead of holding up the compile for minutes (it did: 170 s).
    The proof is called directly: the interpreter would take minutes to run the kernel."""
    from torch_triton_hop._side_table import kernel_side_table
    from torch_triton_hop._store_coverage import unstored_reason

    rows = 1 << 20
    launch = {"out_ptr": torch.empty(rows * 16, device=DEVICE), "n_rows": rows, "BLOCK": 16}
    reason = unstored_reason(kernel_side_table.add_kernel(million_rows_kernel), launch,
                             kernel_side_table.add_constants({}), [], [1, 1, 1], "out_ptr")
    assert reason == "checking that the kernel stores every element would take too long at this size", reason


@triton.jit
def interleaved_kernel(x_ptr, out_ptr, n, SPLIT: tl.constexpr, SKIP_ODD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    pair = tl.join(2 * offs, 2 * offs + 1)  # (BLOCK, 2): each program's 2 * BLOCK elements, interleaved
    if SPLIT:
        halves = tl.split(pair)
        tl.store(out_ptr + halves[0], tl.load(x_ptr + halves[0], mask=halves[0] < n) * 2.0, mask=halves[0] < n)
        if not SKIP_ODD:
            tl.store(out_ptr + halves[1], tl.load(x_ptr + halves[1], mask=halves[1] < n) * 2.0, mask=halves[1] < n)
    else:
        tl.store(out_ptr + pair, tl.load(x_ptr + pair, mask=pair < n) * 2.0, mask=pair < n)


@pytest.mark.parametrize("split, skip_odd", [(False, False), (True, False), (True, True)])
def test_offsets_joined_and_split(split, skip_odd, caplog):
    """tl.join / tl.split of offsets; skipping the odd elements leaves 50 unwritten."""
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(interleaved_kernel)[(4,)](x, out, x.numel(), SPLIT=split, SKIP_ODD=skip_odd, BLOCK=16)
        return out + y

    y = nan_from(100, 100)
    if skip_odd:
        y[1::2] = float("nan")
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, torch.randn(100, device=DEVICE), y, expect_fused=not skip_odd)
    assert not skip_odd or f"{UNWRITTEN} 50 of the 100 elements" in caplog.text, caplog.text


# Twins of scale_kernel: the same stores with other math (one proof answers both), and stores
# that differ in one detail of their address, mask or program id (each proven for itself).
@triton.jit
def other_math_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, tl.exp(x) * 3.0 + x, mask=offs < n)


@triton.jit
def all_but_last_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n - 1)


@triton.jit
def shifted_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs + 1, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs + 1 < n)


@triton.jit
def other_axis_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


def _unstored(kernel, n, block=16):
    from torch_triton_hop._side_table import kernel_side_table
    from torch_triton_hop._store_coverage import unstored_reason

    launch = {"x_ptr": torch.empty(n, device=DEVICE), "out_ptr": torch.empty(n, device=DEVICE), "n": n, "BLOCK": block}
    return unstored_reason(kernel_side_table.add_kernel(kernel), launch, kernel_side_table.add_constants({}), [],
                           [triton.cdiv(n, block), 1, 1], "out_ptr")


@pytest.mark.parametrize("twin, unwritten, n", [
    (other_math_kernel, None, 97), (all_but_last_kernel, 1, 98), (shifted_kernel, 1, 99),
    (other_axis_kernel, "all but the first block", 100)])
@pytest.mark.parametrize("twin_first", [False, True])
def test_a_proof_answers_only_kernels_that_store_alike(twin, unwritten, n, twin_first, monkeypatch):
    """A proof's counts answer another kernel whose stores' addresses, masks and conditions are
    computed alike (a fused kernel planned with one argument, then with all), and no other:
    each pair in both orders, each case at its own size, from empty caches (a launch proven
    before, of the same kernel and size, would answer without an evaluation)."""
    from torch_triton_hop import _store_coverage

    monkeypatch.setattr(_store_coverage, "_results", {})
    monkeypatch.setattr(_store_coverage, "_proven_slices", {})
    evaluated = []
    by_rows = _store_coverage._by_rows  # each evaluation starts there (see [Note: Evaluating a proof by rows])
    monkeypatch.setattr(_store_coverage, "_by_rows", lambda *a: evaluated.append(1) or by_rows(*a))
    n += 10 * twin_first
    if unwritten == "all but the first block":
        unwritten = n - 16
    for kernel in (twin, scale_kernel) if twin_first else (scale_kernel, twin):
        reason = _unstored(kernel, n)
        if kernel is scale_kernel or unwritten is None:
            assert reason is None, reason
        else:
            assert reason == f"the kernel may leave {unwritten} of the {n} elements of out_ptr unwritten " \
                             f"(grid [{triton.cdiv(n, 16)}, 1, 1])"
    # One evaluation per proof made: the twin with other math made none.
    assert len(evaluated) == (1 if unwritten is None else 2)
    # The same kernel with another block size stores otherwise: its own proof.
    assert _unstored(scale_kernel, n, block=8) is None and len(evaluated) == (2 if unwritten is None else 3)


@triton.jit
def normalize_rows_kernel(x_ptr, out_ptr, n_cols, TWO_PASSES: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    total = 1.0
    if TWO_PASSES:  # a first pass over the row: each element loaded twice
        for start in range(0, n_cols, BLOCK):
            total += tl.sum(tl.load(x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=0.0))
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols)
        tl.store(out_ptr + row * n_cols + start + cols, x / total, mask=start + cols < n_cols)


@pytest.mark.parametrize("two_passes", [False, True])
def test_a_read_after_store_proof_answers_how_often_the_read_is_loaded(two_passes, monkeypatch):
    """Written over its input, the kernel loads each element before storing it, in one pass or
    two: the proof of that follows every load of the input, and its counts answer whether an
    element is loaded more than once (a prologue into a loop) without another evaluation."""
    from torch_triton_hop import _store_coverage
    from torch_triton_hop._side_table import kernel_side_table

    monkeypatch.setattr(_store_coverage, "_results", {})
    monkeypatch.setattr(_store_coverage, "_proven_slices", {})
    evaluated = []
    by_rows = _store_coverage._by_rows  # each evaluation starts there (see [Note: Evaluating a proof by rows])
    monkeypatch.setattr(_store_coverage, "_by_rows", lambda *a: evaluated.append(1) or by_rows(*a))
    x = torch.empty(6, 40, device=DEVICE)
    launch = {"x_ptr": x, "out_ptr": x, "n_cols": 40, "TWO_PASSES": two_passes, "BLOCK": 16}
    arguments = (kernel_side_table.add_kernel(normalize_rows_kernel), launch, kernel_side_table.add_constants({}), [],
                 [6, 1, 1])
    assert _store_coverage.read_after_store_reason(*arguments, "out_ptr", "x_ptr") is None
    assert len(evaluated) == 1
    reason = _store_coverage.reloaded_reason(*arguments, "x_ptr")
    assert reason == ("the kernel loads 240 elements of x_ptr more than once (grid [6, 1, 1])" if two_passes else None)
    assert _store_coverage.unstored_reason(*arguments, "out_ptr") is None
    assert len(evaluated) == 1


@triton.jit
def flat_index_kernel(out_ptr, width, stride_row, BLOCK: tl.constexpr):
    """A row-major index split into (row, column) by a division and a remainder, stored through
    another row stride (inductor's index arithmetic in a fused prologue)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs // width * stride_row + offs % width, offs.to(tl.float32))


@triton.jit
def split_index_kernel(out_ptr, rows, stride_0, stride_1, BLOCK: tl.constexpr):
    """One row per program; its flat offset split into (batch, row, column) of a (2, rows, BLOCK)
    output: the divisions by a row's and a batch's size, whose remainders differ per program."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    batch, row, col = offs // (rows * BLOCK), offs // BLOCK % rows, offs % BLOCK
    tl.store(out_ptr + batch * stride_0 + row * stride_1 + col, offs.to(tl.float32))


@triton.jit
def one_address_per_program_kernel(out_ptr, BLOCK: tl.constexpr):
    """Every lane of a program stores to the program's one element: BLOCK stores of it."""
    row = tl.program_id(0)
    tl.store(tl.broadcast_to(out_ptr + row, [BLOCK]), tl.full([BLOCK], 1.0, tl.float32) * row)


def _reason_both_ways(monkeypatch, question, *arguments):
    """The proof's answer by rows and element-wise (see [Note: Evaluating a proof by rows]), and
    whether the evaluation by rows answered."""
    from torch_triton_hop import _store_coverage
    from torch_triton_hop._row_coverage import NotSeparable

    def not_by_rows(*a):
        raise NotSeparable("the element-wise evaluation only")

    answered = []
    monkeypatch.setattr(_store_coverage, "_results", {})
    monkeypatch.setattr(_store_coverage, "_proven_slices", {})
    monkeypatch.setattr(_store_coverage, "_by_rows", lambda *a: answered.append(BY_ROWS(*a)) or answered[-1])
    rows = question(*arguments)
    monkeypatch.setattr(_store_coverage, "_results", {})
    monkeypatch.setattr(_store_coverage, "_proven_slices", {})
    monkeypatch.setattr(_store_coverage, "_by_rows", not_by_rows)
    return rows, question(*arguments), bool(answered)


@RANGE_OVER_TENSORS
@pytest.mark.parametrize("case", ["run_of_rows", "run_of_rows_one_short", "rows_over_input", "rows_twice_over_input",
                                  "flat_index", "flat_index_over_a_padded_row", "rows_past_the_tensor", "split_index",
                                  "split_index_permuted", "split_index_one_row_short", "blocks", "blocks_one_short",
                                  "blocks_past_the_end", "tiles", "one_address_per_program"])
def test_an_evaluation_by_rows_answers_as_the_element_wise_one(case, monkeypatch):
    """Where every address is a value per program plus one per lane, the proof follows rows of
    lanes, not elements: its answers (stored once, loaded once, left unwritten, read after a
    store, out of bounds) are those of the evaluation of every element."""
    from torch_triton_hop import _store_coverage
    from torch_triton_hop._side_table import kernel_side_table

    constants = kernel_side_table.add_constants({})
    if case.startswith("run_of_rows"):
        programs = 3 if case.endswith("one_short") else 4
        x, out = torch.empty(10, 48, device=DEVICE), torch.empty(10, 48, device=DEVICE)
        launch = {"x_ptr": x, "out_ptr": out, "n_rows": 10, "n_cols": 48, "stride": 48, "rows_per_program": 3,
                  "BLOCK": 64}
        questions = [(_store_coverage.unstored_reason, (kernel_side_table.add_kernel(rows_kernel), launch, constants,
                                                        [], [programs, 1, 1], "out_ptr"))]
        expected = None if programs == 4 else "the kernel may leave 48 of the 480 elements of out_ptr unwritten"
    elif case.startswith("rows_") and case.endswith("over_input"):
        x = torch.empty(6, 48, device=DEVICE)
        launch = {"x_ptr": x, "out_ptr": x, "n_cols": 48, "TWO_PASSES": "twice" in case, "BLOCK": 16}
        arguments = (kernel_side_table.add_kernel(normalize_rows_kernel), launch, constants, [], [6, 1, 1])
        questions = [(_store_coverage.read_after_store_reason, (*arguments, "out_ptr", "x_ptr")),
                     (_store_coverage.reloaded_reason, (*arguments, "x_ptr"))]
        expected = "the kernel loads 288 elements of x_ptr more than once" if "twice" in case else None
    elif case == "rows_past_the_tensor":
        out = torch.empty(5, 40, device=DEVICE)
        launch = {"x_ptr": out, "out_ptr": out, "n_rows": 6, "n_cols": 40, "skipped_row": -1, "BLOCK": 64}
        questions = [(_store_coverage.unstored_reason, (kernel_side_table.add_kernel(early_return_kernel), launch,
                                                        constants, [], [6, 1, 1], "out_ptr"))]
        expected = "a store may fall outside the output"
    elif case.startswith("split_index"):
        # A permuted output is dense too: (batch, row) swapped, the rows still whole.
        out = torch.empty(6, 2, 32, device=DEVICE).transpose(0, 1) if "permuted" in case else \
            torch.empty(2, 6, 32, device=DEVICE)
        launch = {"out_ptr": out, "rows": 6, "stride_0": out.stride(0), "stride_1": out.stride(1), "BLOCK": 32}
        programs = 11 if "short" in case else 12
        questions = [(_store_coverage.unstored_reason, (kernel_side_table.add_kernel(split_index_kernel), launch,
                                                        constants, [], [programs, 1, 1], "out_ptr"))]
        expected = "the kernel may leave 32 of the 384 elements" if "short" in case else None
    elif case.startswith("blocks"):
        # The common kernel: a block of offsets per program, masked at the end (`offs < n`): the
        # last block reaches fewer lanes. One block short leaves 10 elements; n past the end of
        # the tensor may store outside it.
        launch = {"x_ptr": torch.empty(90, device=DEVICE), "out_ptr": torch.empty(90, device=DEVICE),
                  "n": 100 if case == "blocks_past_the_end" else 90, "BLOCK": 16}
        programs = {"blocks": 6, "blocks_one_short": 5, "blocks_past_the_end": 7}[case]
        questions = [(_store_coverage.unstored_reason, (kernel_side_table.add_kernel(scale_kernel), launch,
                                                        constants, [], [programs, 1, 1], "out_ptr"))]
        expected = {"blocks": None, "blocks_one_short": "the kernel may leave 10 of the 90 elements",
                    "blocks_past_the_end": "a store may fall outside the output"}[case]
    elif case == "one_address_per_program":
        launch = {"out_ptr": torch.empty(8, device=DEVICE), "BLOCK": 16}
        questions = [(lambda *a: _store_coverage.unstored_reason(*a, once=True),
                      (kernel_side_table.add_kernel(one_address_per_program_kernel), launch, constants, [], [8, 1, 1],
                       "out_ptr"))]
        expected = "the kernel stores 120 elements of out_ptr more than once"
    elif case == "tiles":
        out = torch.empty(40, 24, device=DEVICE)
        launch = {"x_ptr": out, "out_ptr": out, "M": 40, "N": 24, "stride_m": 24, "stride_n": 1, "BM": 16, "BN": 16}
        questions = [(_store_coverage.unstored_reason, (kernel_side_table.add_kernel(tile_kernel), launch, constants,
                                                        [], [3, 2, 1], "out_ptr"))]
        expected = None
    else:
        padded = case.endswith("padded_row")
        out = torch.empty(12, 24, device=DEVICE)[:, :16] if padded else torch.empty(12, 16, device=DEVICE)
        launch = {"out_ptr": out, "width": 16, "stride_row": out.stride(0), "BLOCK": 64}
        questions = [(_store_coverage.unstored_reason, (kernel_side_table.add_kernel(flat_index_kernel), launch,
                                                        constants, [], [3, 1, 1], "out_ptr"))]
        expected = None
    for question, arguments in questions:
        by_rows, by_elements, answered = _reason_both_ways(monkeypatch, question, *arguments)
        assert by_rows == by_elements
        # The premise: rows answered unless an access may fall outside the output.
        assert answered == (case not in ("rows_past_the_tensor", "blocks_past_the_end")), case
    assert (by_rows or "").startswith(expected or ""), by_rows
    assert (by_rows is None) == (expected is None), by_rows


@pytest.mark.parametrize("case", ["rows_over_input", "tiles"])
def test_a_proof_by_rows_holds_where_the_element_wise_one_would_take_too_long(case, monkeypatch):
    """Liger's RMSNorm backward pattern at an 8B model's step (dX written over dY, one row per
    loop iteration: rows are units), and a matmul's 16384 x 8192 output in tiles (rows that
    interleave: replayed element by element, the index arithmetic still evaluated per row): by
    elements the proof gives up (no fusion); by rows it holds."""
    from torch_triton_hop import _store_coverage
    from torch_triton_hop._side_table import kernel_side_table

    constants = kernel_side_table.add_constants({})
    if case == "rows_over_input":
        x = torch.empty(16384, 4096, device="meta")
        launch = {"x_ptr": x, "out_ptr": x, "n_cols": 4096, "TWO_PASSES": False, "BLOCK": 4096}
        question = _store_coverage.read_after_store_reason
        arguments = (kernel_side_table.add_kernel(normalize_rows_kernel), launch, constants, [], [16384, 1, 1],
                     "out_ptr", "x_ptr")
    else:
        out = torch.empty(16384, 8192, device="meta")
        launch = {"x_ptr": out, "out_ptr": out, "M": 16384, "N": 8192, "stride_m": 8192, "stride_n": 1, "BM": 64,
                  "BN": 64}
        question = _store_coverage.unstored_reason
        arguments = (kernel_side_table.add_kernel(tile_kernel), launch, constants, [], [256, 128, 1], "out_ptr")
    by_rows, by_elements, answered = _reason_both_ways(monkeypatch, question, *arguments)
    assert answered and by_rows is None
    assert by_elements == "checking that the kernel stores every element would take too long at this size"
