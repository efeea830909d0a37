"""A kernel that writes its output over its own input (one tensor passed as an argument it reads
and as one it stores to: Liger's RMSNorm backward passes dY as dX): the fusion gives the
output a fresh buffer where a proof shows that the kernel loads each element before storing
to it, in the program that stores it, and stores every element. Pointwise code then fuses
on both sides: a prologue into the input, an epilogue on the output
(see [Note: An output written over the kernel's own input]).

Every case runs eagerly and compiled with fusion off and on (check_exact: the fused result
equals the unfused compile's or eager's, bit for bit), and asserts what fused, or the reason
it did not.
"""

import logging

import pytest
import torch
import triton
import triton.language as tl

from torch_triton_hop import wrap_triton

from generated_code import ON_GPU
from test_fusion_trust import DEVICE, FUSION_LOG, check_exact
from test_store_coverage import RANGE_OVER_TENSORS
# Liger's backward pattern (a run of rows per program, each loaded, then its result stored);
# launched on (h, h) it writes over its input.
from test_stored_prologue import rows_kernel

pytestmark = pytest.mark.any_device


@triton.jit
def row_in_place(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """One row per program, loaded, then its result stored over it (out_ptr is x_ptr)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, x * tl.sum(x, axis=0), mask=cols < n_cols)


@triton.jit
def reads_next_row_in_place(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """Each program also reads the next row, which another program writes. What it stores does
    not depend on whether that row is written yet (finite inputs): on a GPU the programs race."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    nxt = tl.load(x_ptr + ((row + 1) % n_rows) * n_cols + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, x * 2.0 + nxt * 0.0, mask=mask)


@triton.jit
def reads_back_in_place(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """Stores a row, then loads it back through the input and stores again."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, x * 2.0, mask=mask)
    y = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, y + 1.0, mask=mask)


@triton.jit
def clears_next_row_in_place(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """Each program stores zeros to the next row, then its own row's result: two programs
    store every row but the first. Programs that run one after the other (the interpreter)
    load the zeros the one before stored; on a GPU they race."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(out_ptr + (row + 1) * n_cols + cols, tl.zeros_like(x), mask=mask & (cols * 0 + row + 1 < n_rows))
    tl.store(out_ptr + row * n_cols + cols, x * 2.0, mask=mask)


def rows(h, rows_per_program=None, programs=None):
    """row_in_place on h (one row per program), or rows_kernel with a run of rows each."""
    n_rows, n_cols = h.shape
    if rows_per_program is None:
        wrap_triton(row_in_place)[(programs or n_rows,)](h, h, n_cols, BLOCK=32)
    else:
        grid = (programs or triton.cdiv(n_rows, rows_per_program),)
        wrap_triton(rows_kernel)[grid](h, h, n_rows, n_cols, rows_per_program, BLOCK=32)
    return h


def check(fn, *args, fused, reason=None, caplog=None):
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(fn, *args, expect_fused=bool(fused))
    for name in fused:
        assert f"'{name}': [" in caplog.text, caplog.text  # fused {'x_ptr': [...], ...}
    if reason:
        assert reason in caplog.text, caplog.text


@pytest.fixture
def abr():
    torch.manual_seed(0)
    return [torch.randn(10, 20, device=DEVICE) for _ in range(3)]


def test_both_sides_of_an_output_written_over_its_input_fuse(abr, caplog):
    """The prologue (a * 2 + b) is computed at the kernel's loads, the epilogue (- r) at its
    stores into a fresh buffer: one pass over memory, as if the kernel had an output of its own."""
    def f(a, b, r):
        return rows(a * 2.0 + b) - r

    check(f, *abr, fused=["x_ptr", "out_ptr"], caplog=caplog)


@RANGE_OVER_TENSORS
def test_a_cast_epilogue_on_an_output_written_over_its_input_by_a_loop_over_rows(abr, caplog):
    def f(a, b, r):
        return (rows(a + b, rows_per_program=3) * r).to(torch.float16)

    check(f, *abr, fused=["x_ptr", "out_ptr"], caplog=caplog)


def test_an_output_written_over_its_input_and_used_twice_keeps_its_buffer(abr, caplog):
    """The written values feed an epilogue and a reduction: the epilogue is refused (a
    multi-output epilogue is not built), the prologue still fuses."""
    def f(a, b, r):
        h = a + b
        return (rows(h) * r).to(torch.float16), h.sum()

    check(f, *abr, fused=["x_ptr"], reason="mul, sum_1 is not a pointwise op the fusion translates", caplog=caplog)


def test_a_program_reading_the_next_row_is_not_split(abr, caplog):
    def f(a, b, r):
        h = a + b
        wrap_triton(reads_next_row_in_place)[(h.shape[0],)](h, h, h.shape[0], h.shape[1], BLOCK=32)
        return h - r

    check(f, *abr, fused=[], reason="elements of x_ptr are loaded by another program than the one that stores them",
          caplog=caplog)


@pytest.mark.skipif(ON_GPU, reason="on a GPU the programs race: the unfused result is not one value")
def test_a_row_stored_by_two_programs_is_not_split(abr, caplog):
    """The last program storing a row is the one that loads it, but the row's other store (the
    zeros) comes first: through one tensor the load sees them, through a fresh buffer it would not."""
    def f(a, b, r):
        h = a + b
        wrap_triton(clears_next_row_in_place)[(h.shape[0],)](h, h, h.shape[0], h.shape[1], BLOCK=32)
        return h - r

    check(f, *abr, fused=[], reason="two programs store the same element", caplog=caplog)


@pytest.mark.parametrize("n_rows", [255, 300])
def test_program_ids_past_a_byte_are_told_apart(n_rows, caplog):
    """The proof records which program stores and loads each element: with more programs than
    a byte holds, one program per row still fuses, and reading the next row is still seen."""
    a, b, r = (torch.randn(n_rows, 20, device=DEVICE) for _ in range(3))

    def each_row(a, b, r):
        return rows(a * 2.0 + b) - r

    def next_row(a, b, r):
        h = a + b
        wrap_triton(reads_next_row_in_place)[(n_rows,)](h, h, n_rows, h.shape[1], BLOCK=32)
        return h - r

    check(each_row, a, b, r, fused=["x_ptr", "out_ptr"], caplog=caplog)
    caplog.clear()
    check(next_row, a, b, r, fused=[], caplog=caplog,
          reason=f"{n_rows * 20} elements of x_ptr are loaded by another program than the one that stores them")


def test_a_kernel_reading_back_what_it_stored_is_not_split(abr, caplog):
    def f(a, b, r):
        h = a + b
        wrap_triton(reads_back_in_place)[(h.shape[0],)](h, h, h.shape[1], BLOCK=32)
        return h - r

    check(f, *abr, fused=[], reason="through the argument it reads after storing to them", caplog=caplog)


def test_a_grid_that_leaves_rows_unwritten_is_not_split(abr, caplog):
    """Six programs of one row: rows 6 to 9 keep the input's values, which a fresh buffer
    would not hold."""
    def f(a, b, r):
        return rows(a + b, programs=6) - r

    check(f, *abr, fused=[], reason="may leave 80 of the 200 elements of out_ptr unwritten", caplog=caplog)


def test_the_input_used_again_after_the_launch_reads_the_written_values(abr, caplog):
    """After an in-place launch, later reads of the tensor see what the kernel wrote, fused or
    not (the functional graph reads the launch's result)."""
    def f(a, b, r):
        h = a + b
        rows(h)
        return h - r, h * 3.0

    check(f, *abr, fused=["x_ptr"], caplog=caplog)


@RANGE_OVER_TENSORS
def test_liger_rms_norm_backward_fuses_the_gradient_sum_and_the_residual_gradient(caplog):
    """The pre-norm block's backward: dY is the sum of two matmul gradients (a prologue), and
    the residual stream's gradient adds dX (an epilogue); Liger writes dX over dY."""
    pytest.importorskip("liger_kernel")
    from liger_helpers import interpreter_float_arguments, wrap_liger_kernels

    wrap_liger_kernels()
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction

    torch.manual_seed(0)
    w = torch.randn(64, device=DEVICE, requires_grad=True)
    u, v = (torch.randn(64, 64, device=DEVICE) for _ in range(2))

    def block(x, r):
        h = x @ u + r
        y = LigerRMSNormFunction.apply(h, w, 1e-6, 0.0, "llama", True)
        return y @ u + y @ v + h

    def gradients(fn):
        torch.manual_seed(1)
        x, r = (torch.randn(32, 64, device=DEVICE, requires_grad=True) for _ in range(2))
        w.grad = None
        out = fn(x, r)
        (out * torch.arange(64.0, device=DEVICE)).sum().backward()
        return out, x.grad, r.grad, w.grad

    with interpreter_float_arguments():
        expected = gradients(block)
        torch._dynamo.reset()
        with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
            got = gradients(torch.compile(block, fullgraph=True))
    backward = [line for line in caplog.text.splitlines() if "launch _rms_norm_backward_kernel (kernel" in line]
    assert backward and "'dX_ptr': ['add" in backward[0] and "'dY_ptr': ['add" in backward[0], caplog.text
    for e, g in zip(expected, got):
        torch.testing.assert_close(g, e)


@pytest.mark.parametrize("kernel, fuses", [(row_in_place, True), (reads_next_row_in_place, False),
                                           (reads_back_in_place, False)], ids=["row", "next_row", "read_back"])
def test_symbolic_rows(kernel, fuses, caplog):
    """Rows symbolic (as automatic dynamic shapes make them): the proof that each element is
    loaded before it is stored, by the program that stores it, holds for every number of rows
    where program p repeats program 0 a row further on (see [Note: A proof over symbolic sizes,
    by translation]); a program reading the next row, or reading back what it stored, is not
    split. Each compiled once, then exact at other row counts."""
    takes_n_rows = kernel is reads_next_row_in_place  # outside f: Dynamo on a GPU cannot compare kernels

    def f(a, b, r):
        h = a * 2.0 + b
        n_rows, n_cols = h.shape
        if takes_n_rows:
            wrap_triton(kernel)[(n_rows,)](h, h, n_rows, n_cols, BLOCK=32)
        else:
            wrap_triton(kernel)[(n_rows,)](h, h, n_cols, BLOCK=32)
        return h - r

    def inputs(n_rows):
        tensors = [torch.randn(n_rows, 20, device=DEVICE) for _ in range(3)]
        for t in tensors:
            torch._dynamo.mark_dynamic(t, 0)
        return tensors

    torch.manual_seed(0)
    check(f, *inputs(10), fused=["x_ptr", "out_ptr"] if fuses else [],
          reason=None if fuses else "the grid's symbolic axis", caplog=caplog)
    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True)
    compiled(*inputs(10))
    with torch._dynamo.config.patch(error_on_recompile=True):  # the premise: the rows are symbolic
        for n_rows in (3, 33):
            args = inputs(n_rows)
            torch.testing.assert_close(compiled(*args), f(*args), rtol=0, atol=0)
