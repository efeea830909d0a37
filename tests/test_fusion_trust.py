"""Fusion never computes something other than the program: each case here once did.

Every program runs eagerly and compiled with fusion off and on. Fused results must equal the
unfused compile bit for bit, or eager where the unfused compile itself differs from eager
(inductor's C++ `exp` on CPU, say). Each test also asserts what it is about: that the launch
fused, or that it did not and the debug log says why. See [Note: Numerics of fused pointwise
code] and [Note: Fusing pointwise code into user kernels].
"""

import logging
import warnings

import pytest
import torch
import triton
import triton.language as tl

import torch_triton_hop
from torch_triton_hop import wrap_triton

from generated_code import ON_GPU, compile_and_code
from test_fusion import fused_launches

pytestmark = pytest.mark.any_device
DEVICE = "cuda" if ON_GPU else "cpu"
FUSION_LOG = "torch_triton_hop._fusion"


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)  # no other=
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@triton.jit
def tile_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    x = tl.load(x_ptr + rows * n_cols + cols, mask=(rows < n_rows) & (cols < n_cols))  # 2-D mask, no other=
    tl.store(out_ptr + tl.arange(0, ROWS), tl.sum(x, axis=1), mask=tl.arange(0, ROWS) < n_rows)


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


@triton.jit
def rows_with_int64_step_kernel(x_ptr, out_ptr, n_rows, row_stride, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    step = row_stride.to(tl.int64)
    for _ in range(n_rows):
        tl.store(out_ptr + cols, tl.load(x_ptr + cols) * 2.0)
        x_ptr += step
        out_ptr += step


def compiled(fn, *args, fusion):
    torch._dynamo.reset()
    previous, torch_triton_hop.config.fusion = torch_triton_hop.config.fusion, fusion
    try:
        return compile_and_code(fn, *args)
    finally:
        torch_triton_hop.config.fusion = previous


def same_bits(a, b):
    """Equal bit for bit, every NaN equal to every NaN."""
    if a.is_floating_point():
        both_nan = a.isnan() & b.isnan()
        return bool(((a == b) | both_nan).all()) and bool((torch.signbit(a) == torch.signbit(b))[~both_nan].all())
    return torch.equal(a, b)


def check_exact(fn, *args, expect_fused):
    """fn eagerly, unfused and fused: fused equals the unfused compile, or eager. Returns the
    fused compile's generated code."""
    eager = fn(*args)
    unfused, _ = compiled(fn, *args, fusion=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fused, code = compiled(fn, *args, fusion=True)
    package_warnings = [w for w in caught if "torch_triton_hop" in str(w.filename) or "wrap_triton" in str(w.message)]
    assert not package_warnings, [str(w.message) for w in package_warnings]
    assert bool(fused_launches(code)) == expect_fused, code
    for e, u, f in zip(*(r if isinstance(r, tuple) else (r,) for r in (eager, unfused, fused))):
        assert same_bits(f, u) or same_bits(f, e), (e, u, f)
    return code


def test_a_prologue_into_a_masked_load_without_other_leaves_masked_lanes_zero():
    def f(x):
        out = torch.empty(x.shape[0], device=x.device)
        wrap_triton(row_sum_kernel)[(x.shape[0],)](x * 1.5 - 0.25, out, x.shape[1], BLOCK=32)
        return out

    x = torch.ones(4, 20, device=DEVICE)
    check_exact(f, x, expect_fused=True)
    torch.testing.assert_close(compiled(f, x, fusion=True)[0], torch.full((4,), 25.0, device=DEVICE))


def test_a_prologue_into_a_load_with_a_2d_mask_and_no_other():
    def f(x):
        out = torch.empty(x.shape[0], device=x.device)
        wrap_triton(tile_sum_kernel)[(1,)](torch.exp2(x) + 3.0, out, x.shape[0], x.shape[1], ROWS=8, COLS=32)
        return out

    x = torch.zeros(5, 20, device=DEVICE)
    # exp2 fuses only where inductor emits Triton (a GPU); + 3.0 alone fuses everywhere.
    check_exact(f, x, expect_fused=ON_GPU)

    def g(x):
        out = torch.empty(x.shape[0], device=x.device)
        wrap_triton(tile_sum_kernel)[(1,)](x + 3.0, out, x.shape[0], x.shape[1], ROWS=8, COLS=32)
        return out

    check_exact(g, x, expect_fused=True)
    torch.testing.assert_close(compiled(g, x, fusion=True)[0], torch.full((5,), 60.0, device=DEVICE))


def copy(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


def adversarial_values(n, dtype=torch.float32):
    torch.manual_seed(0)
    values = torch.cat([torch.randn(n - 12) * 20, torch.tensor(
        [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1e-40, -1e-40, 1e-8, -1e-6, 3e38, -3.3, -26.4])])
    return values.to(dtype).to(DEVICE)


def test_float_to_uint8_epilogue_wraps_negative_values_as_torch_does():
    x = adversarial_values(4096)
    x = torch.where(x.isfinite() & (x.abs() < 100), x, 1.0)  # float -> uint8 is defined in range only
    code = check_exact(lambda x: (copy(x) * 3 - 1).to(torch.uint8), x, expect_fused=True)
    if ON_GPU:
        assert ".to(tl.int16).to(tl.uint8)" in code


@pytest.mark.parametrize("op", [torch.exp, torch.tanh, torch.sigmoid, torch.erf, torch.log1p, torch.rsqrt])
def test_transcendental_epilogues_are_inductors_on_a_gpu_and_unfused_on_the_interpreter(op, caplog):
    x = adversarial_values(4096)
    x = torch.cat([x, torch.logspace(-12, 0, 1024, device=DEVICE)])
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        code = check_exact(lambda x: op(copy(x)), x, expect_fused=ON_GPU)
    if ON_GPU:
        assert "libdevice." in code or "tl.sigmoid" in code
    else:
        assert "which triton's interpreter does not compute as inductor's CPU code does" in caplog.text


def test_tanh_near_zero_is_exact():
    x = torch.logspace(-12, 0, 4096, device=DEVICE)
    check_exact(lambda x: torch.tanh(copy(x)), x, expect_fused=ON_GPU)


def test_bf16_epilogue_equals_eager_on_every_device(caplog):
    x, r = adversarial_values(4096), adversarial_values(4096).flip(0)

    def f(x, r):
        return (copy(x) + r).to(torch.bfloat16)

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, x, r, expect_fused=ON_GPU)
    if not ON_GPU:
        assert "by truncation" in caplog.text


def test_prologue_with_exact_ops_fuses_on_every_device():
    x = adversarial_values(4096)

    def f(x):
        return copy(torch.where(x > 0, x * 1.5 - 0.25, torch.clamp(x, min=-2.0)).abs() / 3.0)

    check_exact(f, x, expect_fused=True)


def test_a_pointer_advanced_by_an_int64_step_fuses_without_a_warning(caplog):
    def f(x):
        out = torch.empty_like(x)
        wrap_triton(rows_with_int64_step_kernel)[(1,)](x, out, x.shape[0], x.stride(0), BLOCK=16)
        return out + 1.0

    x = torch.randn(6, 16, device=DEVICE)
    with caplog.at_level(logging.WARNING, logger="torch_triton_hop"):
        check_exact(f, x, expect_fused=True)
    assert not caplog.records, caplog.text  # once: "cannot tell which arguments kernel ...fused... writes"
