"""Fusion under dynamic shapes into kernels whose grid stays concrete while each program loops
over a symbolic number of rows (persistent row kernels: Liger's RMSNorm backward). See
[Note: A row loop of symbolic length] in torch_triton_hop/_symbolic_row_loops.py.

Each case compiles once with the rows symbolic, then runs at other sizes without recompiling,
bit for bit as eager, with y NaN where the kernel leaves out unwritten (an epilogue fused over
elements the kernel skips would differ there).
"""

import logging
import math

import pytest
import torch
import triton
import triton.language as tl

import torch_triton_hop
from torch_triton_hop import wrap_triton
from test_fusion_trust import DEVICE, FUSION_LOG, check_exact, same_bits

pytestmark = pytest.mark.any_device

CHUNKS, STRIDED, STRIDED_CONSTANT, WHOLE, CARRIED, ROW_IN_MASK, PID_IN_ADDRESS, FIRST_OF_CHUNK = range(8)


@triton.jit
def row_loop_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, rows_per_program, FORM: tl.constexpr,
                    STEP: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    # CHUNKS (Liger's RMSNorm backward): a chunk of rows per program
    start = pid * rows_per_program
    end = min((pid + 1) * rows_per_program, n_rows)
    step = 1
    if FORM == 1:  # grid-stride
        start, end, step = pid, n_rows, tl.num_programs(0)
    if FORM == 2:  # grid-stride by a constant
        start, end, step = pid, n_rows, STEP
    if FORM == 3:  # one program, every row (every STEP-th)
        start, end, step = 0, n_rows, STEP
    if FORM == 7:  # only the first row of each chunk
        end = min(start + 1, n_rows)
    cols = tl.arange(0, BLOCK)
    x_row = x_ptr
    out_row = out_ptr
    for row in range(start, end, step):
        m = cols < n_cols
        offs = row * stride + cols
        if FORM == 4:  # pointers carried from row to row: where they start depends on the program
            offs = cols
        if FORM == 5:  # a bound in a mask too
            m = m & (cols < n_rows - row + 8)
        if FORM == 6:  # the program id in an address too
            offs = tl.where(pid >= 0, offs, 0)
        tl.store(out_row + offs, tl.load(x_row + offs, mask=m) * 2.0, mask=m)
        if FORM == 4:
            x_row += stride
            out_row += stride


def _launch(kind, x, out):
    n_rows, n_cols = x.shape
    programs, per_program, form, step = {
        "chunks": (4, triton.cdiv(n_rows, 4), CHUNKS, 1),
        "chunks_of_ceil": (132, math.ceil(n_rows / 132), CHUNKS, 1),  # as Liger computes them
        "chunks_floor": (3, n_rows // 3, CHUNKS, 1),  # 3 * (n // 3) < n: the last rows unwritten
        "strided": (4, 0, STRIDED, 1),
        "strided_by_a_constant": (4, 0, STRIDED_CONSTANT, 4),
        "strided_past_the_grid": (3, 0, STRIDED_CONSTANT, 4),  # rows 3, 7, ... unwritten
        "whole": (1, 0, WHOLE, 1),
        "whole_every_other_row": (1, 0, WHOLE, 2),  # rows 1, 3, ... unwritten
        "carried_pointer": (4, triton.cdiv(n_rows, 4), CARRIED, 1),
        "bound_in_a_mask": (4, triton.cdiv(n_rows, 4), ROW_IN_MASK, 1),
        "program_id_in_an_address": (4, triton.cdiv(n_rows, 4), PID_IN_ADDRESS, 1),
        "first_row_of_each_chunk": (4, triton.cdiv(n_rows, 4), FIRST_OF_CHUNK, 1),
    }[kind]
    wrap_triton(row_loop_kernel)[(programs,)](x, out, n_rows, n_cols, x.stride(0), per_program, FORM=form, STEP=step,
                                              BLOCK=32)


# kind -> (fuses, a phrase of the refusal)
CASES = {
    "chunks": (True, None),
    "chunks_of_ceil": (True, None),
    "strided": (True, None),
    "strided_by_a_constant": (True, None),
    "whole": (True, None),
    "chunks_floor": (False, "may not reach"),
    "strided_past_the_grid": (False, "not a program's share of the rows"),
    "whole_every_other_row": (False, "not range(0, n) or a program's share"),
    "first_row_of_each_chunk": (False, "not range(P * R, min(P * R + R, n))"),
    "carried_pointer": (False, "carries between iterations"),
    "bound_in_a_mask": (False, "bounds read is also read"),
    "program_id_in_an_address": (False, "bounds read is also read"),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_row_loops_of_symbolic_length(kind, caplog):
    fuses, refusal = CASES[kind]

    def f(x, y):
        out = torch.empty_like(x)
        _launch(kind, x, out)
        return out + y

    def inputs(rows):
        x = torch.randn(rows, 24, device=DEVICE)
        y = torch.randn(rows, 24, device=DEVICE)
        eager_out = torch.full_like(x, float("nan"))
        _launch(kind, x, eager_out)  # NaN where the kernel stores nothing
        y[eager_out.isnan()] = float("nan")
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(y, 0)
        return x, y

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, *inputs(40), expect_fused=fuses)
    if refusal:
        assert refusal in caplog.text and "row loop" in caplog.text, caplog.text
    torch._dynamo.reset()
    previous, torch_triton_hop.config.fusion = torch_triton_hop.config.fusion, True
    try:
        compiled_f = torch.compile(f, fullgraph=True)
        compiled_f(*inputs(40))
        # The premise: the rows are symbolic (no recompile).
        with torch._dynamo.config.patch(error_on_recompile=True):
            for rows in (37, 65, 100, 5, 2):
                x, y = inputs(rows)
                assert same_bits(compiled_f(x, y), f(x, y)), rows
    finally:
        torch_triton_hop.config.fusion = previous
