"""Fusion never computes something other than the program: each case here once did.

Every program runs eagerly and compiled with fusion off and on. Fused results must equal the
unfused compile bit for bit, or eager where the unfused compile itself differs from eager
(inductor's C++ `exp` on CPU, say). Each test also asserts what it is about: that the launch
fused, or that it did not and the debug log says why. See [Note: Numerics of fused pointwise
code] and [Note: Fusing pointwise code into user kernels].
"""

import importlib
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
# Under the interpreter bf16 arithmetic is not fused (the reason it logs):
BF16_ARITHMETIC_REFUSED = ("computes in torch.bfloat16, which inductor's C++ code (the unfused program on CPU) and "
                           "its Triton code hold differently")


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
def plus_one_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) + 1, mask=offsets < n)


@triton.jit
def square_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n)
    tl.store(out_ptr + offsets, x * x, mask=offsets < n)


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


def check_exact(fn, *args, expect_fused, nan_from_garbage=False):
    """fn eagerly, unfused and fused: fused equals the unfused compile, or eager. Returns the
    fused compile's generated code. With nan_from_garbage, an element that is NaN in one of the
    three is not compared: a program that reads the garbage of torch.empty may get a NaN there
    in one run and not in another (`maximum(garbage, inf)` is inf, or NaN)."""
    eager = fn(*args)
    unfused, _ = compiled(fn, *args, fusion=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fused, code = compiled(fn, *args, fusion=True)
    package_warnings = [w for w in caught if "torch_triton_hop" in str(w.filename) or "wrap_triton" in str(w.message)]
    assert not package_warnings, [str(w.message) for w in package_warnings]
    assert bool(fused_launches(code)) == expect_fused, code
    for e, u, f in zip(*(r if isinstance(r, tuple) else (r,) for r in (eager, unfused, fused))):
        if nan_from_garbage and e.is_floating_point():
            defined = ~(e.isnan() | u.isnan() | f.isnan())
            e, u, f = e[defined], u[defined], f[defined]
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


@pytest.mark.parametrize("dtype", [torch.float8_e5m2, torch.float8_e4m3fn])
def test_a_float8_operand_with_nan_and_inf_equals_eager_on_every_device(dtype, caplog):
    """triton's interpreter converts float8 to fp32 with NaN and inf wrong: fused on a GPU only."""
    x = adversarial_values(4096, dtype)

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(lambda x: copy(x.float() * 2), x, expect_fused=ON_GPU)
    if not ON_GPU:
        assert f"an operand is {dtype}, which triton's interpreter converts to fp32 with NaN and inf wrong" \
            in caplog.text, caplog.text


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


# Under triton's interpreter: see [Note: bf16 and fp8 under triton's interpreter].
@pytest.mark.parametrize("scalar", [100.5, float("nan")])
def test_a_0d_operand_of_an_epilogue_meets_the_lanes_in_minimum(scalar):
    # Fuzzer seed 0 #9: the interpreter's scalar `a != a` in triton_helpers.minimum, broadcast
    # into `mask |= ...`, raised TypeError when the compiled program ran.
    x = (torch.arange(200, device=DEVICE) * 3 % 256 - 128).to(torch.int8)
    s = torch.tensor(scalar, device=DEVICE)
    # A float operand known only at run time (its NaN fixes the result): fused, for copy_kernel
    # provably stores every element (see [Note: A proof that a kernel stores every element]).
    check_exact(lambda x, s: torch.minimum(s, copy(x)), x, s, expect_fused=True)


def test_a_0d_operand_of_a_prologue_in_logical_xor():
    # Fuzzer seed 1 #82: the same for a scalar comparison broadcast into `^`.
    x = (torch.arange(100, device=DEVICE) % 3).to(torch.uint8)
    for s in (torch.tensor(0.0002, dtype=torch.bfloat16, device=DEVICE), torch.tensor(0.0, device=DEVICE)):
        check_exact(lambda x, s: copy(torch.logical_xor(x, s) * -2.0 + 0.75), x, s, expect_fused=True)


def test_a_comparison_promoted_to_bf16_in_an_epilogue():
    # Fuzzer seed 1 #45: (bool).to(tl.bfloat16) of a comparison raised ValueError (cannot
    # reshape) in the interpreter; small integers become bf16 through fp32 there.
    x = torch.arange(-50, 50, device=DEVICE)  # int64
    r = (torch.arange(100, device=DEVICE) % 2).to(torch.bfloat16)

    def f(x, r):  # ^ (y > 0): `== r` alone is False for almost every r, whatever y holds, and not fused
        y = copy(x)
        return ((y <= 2.0) == r) ^ (y > 0)

    check_exact(f, x, r, expect_fused=True)  # a float operand: copy_kernel stores every element


def bf16_subnormals():
    """Every bf16 subnormal of both signs, then adversarial values."""
    codes = torch.cat([torch.arange(1, 128), torch.arange(1, 128) | 0x8000]).to(torch.int32).to(torch.int16)
    return torch.cat([codes.view(torch.bfloat16).to(DEVICE), adversarial_values(256, torch.bfloat16)])


@pytest.mark.parametrize("stored", [torch.float32, torch.bfloat16])
def test_bf16_subnormals_reach_an_epilogue_unchanged(stored):
    # Fuzzer seed 1 #12 and #108: the interpreter's bf16 -> fp32 conversion flushes or
    # scrambles subnormals (1e-40 -> 0); bf16 operands and stored values are widened from their bits.
    r = bf16_subnormals()
    x = r.to(stored)

    def f(x, r):  # one epilogue: each comparison a bit
        y = copy(x)
        return (y == r).to(torch.uint8) * 4 + (y < r).to(torch.uint8) * 2 + (y > -r).to(torch.uint8)

    check_exact(f, x, r, expect_fused=True)  # a float operand: copy_kernel stores every element


def test_uint8_times_bf16_epilogue(caplog):
    # Fuzzer seed 1 #104: the interpreter converts an integer to bf16 as bits (uint8 3 -> 3 * 2**-133).
    # bf16 arithmetic fuses on a GPU only (seed 3 #5110, see _check_no_low_precision_arithmetic),
    # and there not rounded to fp16 (see [Note: Float16 roundings of bfloat16 arithmetic]).
    x = torch.arange(255, device=DEVICE).to(torch.uint8).view(51, 5)
    r = torch.tensor([-26.4, 1e-40, 3.3e38, -0.0, 0.3], dtype=torch.bfloat16, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(lambda x, r: (r * copy(x)).to(torch.float16), x, r, expect_fused=False)
    assert (MIXED_HALF if ON_GPU else BF16_ARITHMETIC_REFUSED) in caplog.text
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(lambda x, r: r * copy(x), x, r, expect_fused=ON_GPU)
    assert ON_GPU or BF16_ARITHMETIC_REFUSED in caplog.text


def test_int8_times_bf16_prologue(caplog):
    # Fuzzer seed 1 #117: logical_not(int8 * bf16) was 1 where the product is not 0.
    a = torch.tensor([3, -3, 0, 8, 6, -8, 5, 3, -128, 127, 1, -1] * 3, dtype=torch.int8, device=DEVICE).view(18, 2)
    b = torch.tensor([-153.3033, -171.8035], dtype=torch.bfloat16, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(lambda a, b: copy(torch.logical_not(a * b).to(torch.int64)), a, b, expect_fused=ON_GPU)
        check_exact(lambda a, b: copy((a * b).to(torch.float32)), a, b, expect_fused=ON_GPU)
    assert ON_GPU or BF16_ARITHMETIC_REFUSED in caplog.text


def test_int32_to_bf16_is_gpu_only(caplog):
    # Fuzzer seed 1 #118: int32 + bf16 * 2 (add with alpha) converted int32 to bf16 as bits.
    a = torch.tensor([-5, 8, 2**31 - 1, -2**31, 300, 7] * 5, dtype=torch.int32, device=DEVICE)
    b = torch.tensor([0.8115, -0.3488, 1e-40, 2.3082, -1.127, 0.4494] * 5, dtype=torch.bfloat16, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(lambda a, b: copy((torch.add(a, b, alpha=2) > 0.5).to(torch.uint8)), a, b, expect_fused=ON_GPU)
    assert ON_GPU or BF16_ARITHMETIC_REFUSED in caplog.text


def test_a_bf16_constant_is_rounded_to_nearest(caplog):
    # bf16 * 0.1 is lowered with a bf16 constant 0.1: the interpreter truncates it to 0.0996, torch
    # rounds it to 0.1001 (found with the fuzzer's failures above; was fused and wrong on CPU).
    b = torch.tensor([0.8115, -0.3488, 1e-40, 2.3082, -1.127, 0.4494] * 5, dtype=torch.bfloat16, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(lambda b: copy((b * 0.1).to(torch.float32)), b, expect_fused=ON_GPU)
        check_exact(lambda b: copy((b * 2.0).to(torch.float32)), b, expect_fused=ON_GPU)
    assert ON_GPU or BF16_ARITHMETIC_REFUSED in caplog.text


ROUNDED_TWICE_TO_FP16 = [1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40), 65519.99999, 2**-25 + 2**-60, 6e-8, 1e300]


@pytest.mark.parametrize("where", ["prologue", "epilogue"])
def test_fp64_to_fp16_rounds_as_torch_does(where):
    # torch rounds fp64 to fp16 through fp32, twice; the interpreter's numpy rounds once, and a
    # fused conversion gave 1.0009765625 for eager's 1.0 and 65504 for its inf (an adversarial hunt,
    # thirteenth session). On a GPU the fused conversion is inductor's Triton code's, which rounds once.
    x = torch.cat([torch.tensor(ROUNDED_TWICE_TO_FP16, dtype=torch.float64, device=DEVICE),
                   adversarial_values(500).double()])
    program = (lambda x: copy(x.to(torch.float16))) if where == "prologue" else (lambda x: copy(x).to(torch.float16))
    check_exact(program, x, expect_fused=True)
    check_exact(lambda n: copy((n * 3).to(torch.float16)), torch.tensor([2049 * 2**13 + 1, -7, 21845, 2**40],
                                                                      device=DEVICE), expect_fused=True)


def test_fp16_arithmetic_fuses_on_a_gpu_only(caplog):
    # Fuzzer seed 3 #5110: fp16 minus a 0-d fp32 tensor is fp16 arithmetic; eager rounds each
    # result to fp16, inductor's C++ code (the unfused program on CPU) and its Triton code hold it
    # otherwise, and a fused result matched neither everywhere.
    a = adversarial_values(4096, torch.float16)
    s = torch.tensor(-33.2255, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(lambda a, s: copy((a - s) * 1.5 + 0.75), a, s, expect_fused=ON_GPU)
    assert ON_GPU or "computes in torch.float16" in caplog.text


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32])
def test_narrow_integer_ops_wrap_as_eager_does(dtype):
    """relu(a + 2a) ** 3 wraps in a's type in eager; inductor's overrides compute relu in int32,
    so without a conversion after each op the fused cube would not wrap (seed 6, #3765). See
    [Note: Narrow integers wrap at every op]."""
    info = torch.iinfo(dtype)
    a = torch.linspace(max(info.min, -40000), min(info.max, 40000), 512).to(dtype).to(DEVICE)

    def f(a):
        return copy((torch.relu(a + a * 2) ** 3).to(torch.float32) - 0.5)

    check_exact(f, a, expect_fused=True)
    assert same_bits(compiled(f, a, fusion=True)[0], f(a))


def test_a_bool_sum_is_a_bool_before_it_is_converted():
    """add(a, b, alpha=2) of bools is a bool (a or b); inductor lowers it to `a | b * 2` of
    int64s, 0 to 3, which a later conversion to int8 must not see (seed 7, #1741)."""
    a = torch.tensor([True, False, True, False] * 64, device=DEVICE)
    b = torch.tensor([True, True, False, False] * 64, device=DEVICE)

    def f(a, b):
        return copy(torch.add(a, b, alpha=2).to(torch.int8).to(torch.float32) + 0.5)

    # (not check_exact: inductor's own C++ code for this program, unfused, does not compile)
    fused, code = compiled(f, a, b, fusion=True)
    assert fused_launches(code), code
    assert same_bits(fused, f(a, b))


@triton.jit
def bool_plus_itself_kernel(x_ptr, out_ptr, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs, mask=offs < n, other=OTHER)
    tl.store(out_ptr + offs, (a + a).to(tl.int8))  # 1-bit arithmetic: True + True wraps to False


@pytest.mark.parametrize("other", [0, 1, 7])
def test_a_bool_prologue_into_a_load_with_other_keeps_1_bit_arithmetic(other):
    """Fusion hunt 7 (triton 3.9's interpreter): the fused `other` of a bool load held int8
    data, which made the loaded values int8 too, so True + True was 2 in every lane."""
    def f(x):
        out = torch.empty(32, device=x.device, dtype=torch.int8)
        wrap_triton(bool_plus_itself_kernel)[(1,)](x > 0, out, x.numel(), OTHER=other, BLOCK=32)
        return out

    x = torch.tensor([1.0, -1.0, 0.0, 2.0] * 5, device=DEVICE)  # 20 of 32 lanes loaded
    # Against the unfused program on the same triton: before 3.9 the interpreter's int1 add
    # does not wrap (True + True is True), on a GPU and on 3.9's interpreter it does.
    check_exact(f, x, expect_fused=True)


def test_a_value_minus_itself_keeps_nan_and_inf(caplog):
    """x - x is NaN for NaN and inf; inductor (torch 2.13) writes it with libdevice.isnan /
    isinf, which triton's interpreter does not have: there it is not fused (seed 5, #5266)."""
    x = adversarial_values(4096)

    def f(x):  # + y: y - y alone is 0 for every finite y, and not fused
        y = copy(x)
        return y - y + y

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        fused, code = compiled(f, x, fusion=True)
    assert same_bits(fused, f(x))
    # fused (a GPU; or an inductor whose sub(x, x) is plain x - x), else refused for libdevice
    assert fused_launches(code) or not ON_GPU and "calls libdevice" in caplog.text, caplog.text


def test_a_prologue_the_compiler_can_prove_constant_is_not_folded_through_the_epilogue():
    """(a >= b) > 0.75 is a bool, never 0.75: the prologue is provably 0, so in the fused kernel
    the stored value and the epilogue's exp(erf(1)) were compile-time constants, which LLVM
    folds with other roundings than the FMAs the GPU runs: 1 ulp from the unfused kernel, which
    loads the value (fuzzer seed 9 #976, H200). The boundary values now move opaquely."""
    a = adversarial_values(4096)
    b = torch.tensor(-1e-4, dtype=torch.bfloat16, device=DEVICE)

    def f(a, b):
        x = (((a >= b) > 0.75) == 0.75).to(torch.int8)
        out = torch.empty_like(x)
        wrap_triton(plus_one_kernel)[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        return torch.exp(torch.erf(out))

    check_exact(f, a, b, expect_fused=True)
    assert same_bits(compiled(f, a, b, fusion=True)[0], compiled(f, a, b, fusion=False)[0])


def square_then_compare(x):
    out = torch.empty_like(x)
    wrap_triton(square_kernel)[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    # ^ (out < 3): `out > -0.25` alone is true for every ordinary value, and not fused
    return ((out > -0.25) ^ (out < 3.0)).to(torch.float32)


def test_what_the_compiler_knows_of_a_stored_value_does_not_reach_the_epilogue():
    """x * x > -0.25 holds for every x but NaN. Through a register move (inline asm) ptxas saw
    the product and folded the fused comparison to true, NaN lanes included (there
    (x * x > -0.25) ^ (x * x < 3) became true), where the unfused
    program loads the product from memory and gives false (fuzzer seed 12 #933, H200). The
    stored value now crosses the boundary as (bits & m) | (m + 1), m a parameter passed as -1."""
    x = adversarial_values(4096)
    assert x.isnan().any()
    check_exact(square_then_compare, x, expect_fused=True)
    fused = compiled(square_then_compare, x, fusion=True)[0]
    assert same_bits(fused, square_then_compare(x))
    assert not bool(fused[x.isnan()].any())


@pytest.mark.skipif(ON_GPU, reason="on a GPU the tests above run the GPU code itself")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int8, torch.uint8, torch.int16, torch.int32,
                                   torch.int64, torch.bool])
def test_the_gpu_boundary_move_keeps_every_bit_under_the_interpreter(dtype, plan_for_a_gpu):
    """The code fusion writes for a GPU (the boundary's (bits & m) | (m + 1), m a parameter passed as -1),
    planned as for a GPU and run by the interpreter: NaN, -0.0, inf and every integer keep
    their bits, and the launch passes the parameter."""
    values = adversarial_values(256)
    x = values.to(dtype) if dtype.is_floating_point else values.nan_to_num(0).clamp(-100, 100).to(dtype)
    # ^ (y > 0): `copy(x) == x` alone is false for almost every x (an ordinary operand), and not
    # fused; for bools that would be ~x, so there y != x.
    epilogue = (lambda y, x: y != x) if dtype == torch.bool else (lambda y, x: (y == x) ^ (y > 0))
    with torch._inductor.config.patch(fx_graph_cache=False):
        fused, code = compiled(lambda x: epilogue(copy(x), x), x, fusion=True)
    assert fused_launches(code) and "_ones" in code, code
    assert same_bits(fused, epilogue(x, x))


def fused_kernel_compiled_for_sm90(monkeypatch, stage, fn, *inputs):
    """Compile fn (fusion on) and return its fused kernel, as the fusion compiled it for the
    launch, through triton's stages up to `stage` ("ptx", "cubin") for sm_90, without a driver."""
    from triton.backends.compiler import GPUTarget

    from torch_triton_hop import _compat_ttir, _fusion, _layouts, _side_table

    checked = []
    check = _fusion._check_compiled_code

    def spy(launch, fused_key, vals, *args):
        checked.append((launch, fused_key, vals))
        return check(launch, fused_key, vals, *args)

    monkeypatch.setattr(_fusion, "_check_compiled_code", spy)
    with torch._inductor.config.patch(fx_graph_cache=False):
        code = compiled(fn, *(x.to(DEVICE) for x in inputs), fusion=True)[1]
    assert fused_launches(code) and checked, code
    launch, fused_key, vals = checked[-1]
    kernel = _side_table.base_kernel(_side_table.kernel_side_table.get_kernel(fused_key))
    [(args,)] = _layouts.specialisations(_fusion._kernel_arguments(launch, vals))
    [(config_args, options)] = _fusion._launches(launch)
    return _compat_ttir._compile_through(kernel, {**args, **config_args}, stage, GPUTarget("cuda", 90, 32), options)


def test_ptxas_cannot_see_through_the_boundary(plan_for_a_gpu, monkeypatch):
    """The premise of the boundary move, checked in the SASS that triton's own ptxas writes for
    sm_90 (no GPU needed): with `square_kernel`'s product crossing into `(v > -0.25)`, the fused
    kernel still loads x and compares, where through an inline-asm register move ptxas folded the
    comparison to a constant store and dropped the load (fuzzer seed 12 #933)."""
    import os
    import subprocess
    import tempfile

    nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    if not os.path.exists(nvdisasm):
        pytest.skip(f"this triton has no {nvdisasm}")
    # The fused kernel as the package compiles it for sm_90, through ptxas, without a driver.
    cubin_bytes = fused_kernel_compiled_for_sm90(monkeypatch, "cubin", square_then_compare, torch.randn(4096))
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "fused.cubin")
        with open(cubin, "wb") as file:
            file.write(cubin_bytes)
        sass = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True, check=True).stdout
    assert "LDG" in sass and "FMUL" in sass and "FSET" in sass, sass  # FSET or FSETP: a float compare


# See [Note: A fused kernel reduces in the kernel's layouts].
@triton.jit
def block_sum_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + offsets), axis=0))


def sum_blocks_of_a_shifted_view(x):
    """The kernel loads an aligned buffer 4 floats at a time; the prologue's source starts one
    float past 16-byte alignment, so the fused loads could take one float at a time and the
    sums would add in another order."""
    shifted = x[1:] * 3.0
    out = torch.empty(shifted.numel() // 1024, device=x.device)
    wrap_triton(block_sum_kernel)[(out.numel(),)](shifted, out, BLOCK=1024)
    return out


LAYOUT_REFUSED = "triton lays out the fused kernel's reductions differently"


def test_a_prologue_that_would_change_how_a_kernel_sums_is_not_fused_on_a_gpu(caplog):
    x = adversarial_values(1 + 8 * 1024)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(sum_blocks_of_a_shifted_view, x, expect_fused=not ON_GPU)  # the interpreter has no layouts
    assert (LAYOUT_REFUSED in caplog.text) == ON_GPU, caplog.text


def test_the_layouts_of_the_fused_kernel_are_compared_when_planning_for_a_gpu(plan_for_a_gpu, caplog):
    """Without a GPU: the plan for one compiles both kernels to TTGIR (sm_90) and compares."""
    x = torch.randn(1 + 8 * 1024, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        _, code = compiled(sum_blocks_of_a_shifted_view, x, fusion=True)
    assert not fused_launches(code), code
    assert "sizePerThread = [4]" in caplog.text and "sizePerThread = [1]" in caplog.text, caplog.text
    assert LAYOUT_REFUSED in caplog.text, caplog.text

    def aligned(x):  # the same sums of an aligned source: the layouts agree, and it fuses
        y = x[:8 * 1024] * 3.0
        out = torch.empty(8, device=x.device)
        wrap_triton(block_sum_kernel)[(8,)](y, out, BLOCK=1024)
        return out

    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        _, code = compiled(aligned, x, fusion=True)
    assert fused_launches(code), caplog.text


@pytest.mark.parametrize("seed,program,fuses_on_a_gpu", [(12, 933, True), (12, 180, True), (14, 1117, True),
                                                         (14, 1841, None),  # None: as ptxas compiles it
                                                         (15, 4772, False), (16, 733, True), (23, 1662, True),
                                                         (23, 230, True), (24, 351, True)])
def test_fuzzer_programs_found_on_a_gpu(seed, program, fuses_on_a_gpu, tmp_path):
    """Seed 12 #933 (a compare folded through the boundary move), #180 (on triton 3.6 the
    capped offsets of an fp16 prologue laid a row sum out column-major: 1 ulp off), seed 14
    #1117 (tanh of a stored `a - a` folded at compile time: 1 ulp off), #1841 (ptxas fused
    a division into a subtraction in the fused kernel only), seed 15 #4772 (LLVM rounded a bf16
    operand to fp16 in the kernel only: NaN unfused, inf fused), seed 16 #733 (a division of
    uint8 values wrapped as eager wraps them, 1 ulp from eager: that epilogue is not fused), seed
    23 #1662 (an fp16 operand read from memory where inductor holds it in fp32: that epilogue is
    not fused, the prologue is), #230 (cos of a value triton proved constant at a scalar store,
    folded on the host: that epilogue is not fused, the prologue is) and seed 24 #351 (two
    prologues' masked-lane selects folded through the kernel's multiply, which then did not
    contract with its add)."""
    import fusion_fuzzer

    [result] = fusion_fuzzer.check_range(seed, program, 1, str(tmp_path))
    assert not result.failed, result.report()
    # The premise, on a GPU: something fused, or (False) nothing (under the interpreter these
    # ops stay unfused).
    if ON_GPU and fuses_on_a_gpu is not None:
        assert bool(result.record.fused) == fuses_on_a_gpu, result.report()


# See [Note: Divisions that ptxas may fuse into an add].
@triton.jit
def center_by_mean_square_kernel(x_ptr, w_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    mean_square = tl.sum(x * x, axis=0) / n_cols  # div.full.f32; its quotient is subtracted below
    w = tl.load(w_ptr + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, (x - mean_square) * w, mask=mask)


def centered(x, w):
    out = torch.empty_like(x)
    wrap_triton(center_by_mean_square_kernel)[(x.shape[0],)]((x > 0.5).float(), w * 2.0, out, x.shape[1], BLOCK=16)
    return out


ADDS_A_QUOTIENT = "adds the quotient of an fp32 division"


def test_a_kernel_adding_a_quotient_fuses_only_where_ptxas_rounds_it_alike(caplog):
    """Fuzzer seed 14 #1841, minimized: rows of ones whose mean square is exactly 1 unfused;
    a fused kernel where ptxas contracts the division into the subtraction gives 2**-25."""
    x, w = torch.ones(10, 12, device=DEVICE), torch.randn(12, device=DEVICE)
    eager = centered(x, w)
    unfused, _ = compiled(centered, x, w, fusion=False)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        fused, code = compiled(centered, x, w, fusion=True)
    assert same_bits(fused, unfused) or same_bits(fused, eager)
    # The premise: fused (under the interpreter always), or refused on a GPU for this reason.
    assert fused_launches(code) or (ON_GPU and ADDS_A_QUOTIENT in caplog.text), caplog.text


def test_quotients_added_are_checked_in_sass_when_planning_for_a_gpu(plan_for_a_gpu, caplog):
    """Without a GPU (triton's ptxas for sm_90): pointwise code adding a quotient is refused;
    a quotient only multiplied fuses; a kernel adding one fuses only where the SASS of both
    kernels reads their reciprocals alike."""
    from torch_triton_hop._contractions import reciprocal_readers

    y = torch.randn(4096, device=DEVICE)
    ones = torch.ones(4096, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        _, code = compiled(lambda x, y: copy(x) / y + 1.0, ones, y, fusion=True)
    assert not fused_launches(code) and "its pointwise code adds the quotient" in caplog.text, caplog.text
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        _, code = compiled(lambda x, y: copy(x) / y * 3.0, ones, y, fusion=True)
    assert fused_launches(code), caplog.text

    caplog.clear()
    x, w = torch.ones(10, 12, device=DEVICE), torch.randn(12, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        _, code = compiled(centered, x, w, fusion=True)
    assert fused_launches(code) or ADDS_A_QUOTIENT in caplog.text, caplog.text
    assert "compiled code checked" in caplog.text, caplog.text
    # The reader of each reciprocal, as the check reads SASS: FFMA where ptxas contracted.
    sass = ("/*0270*/ MUFU.RCP R9, R10 ;\n/*0280*/ FFMA.FTZ R11, R8, R11, R8 ;\n/*0320*/ FFMA R9, R9, R6, R0 ;\n"
            "/*0330*/ MUFU.RCP R7, R7 ;\n/*0340*/ @P2 FMUL R6, R6, 0.25 ;\n/*0440*/ FMUL R9, R7, R6 ;")
    assert reciprocal_readers(sass) == ["FFMA", "FMUL"]


def test_one_compilation_to_sass_reads_as_the_checks_own_compilations_do():
    """A kernel that reduces and adds a quotient is read by both checks from one compilation to
    SASS: its TTGIR's layouts and its reciprocals' readers are those of a compilation to TTGIR
    alone and of one to SASS alone (sm_90, triton's ptxas; no GPU needed)."""
    from torch_triton_hop import _compat, _contractions, _layouts

    args = {"x_ptr": _compat.pointer_stand_in(torch.float32, 0), "w_ptr": _compat.pointer_stand_in(torch.float32, 0),
            "out_ptr": _compat.pointer_stand_in(torch.float32, 0), "n_cols": 12, "BLOCK": 16}
    for options in ({"num_warps": 4}, {"num_warps": 1}):
        both = _layouts.sass_and_layouts(center_by_mean_square_kernel, args, options)
        assert both.layouts and both.layouts == _layouts._layouts(center_by_mean_square_kernel, args, options)
        readers = _contractions.reciprocal_readers(both.sass)
        assert readers and tuple(readers) == _contractions._readers(center_by_mean_square_kernel, args, options)


def test_a_compiled_code_check_whose_compilation_fails_leaves_the_launch_unfused(plan_for_a_gpu, monkeypatch, caplog):
    """The checks' compilations run in threads (see [Note: The checks' compilations in
    threads]): one that raises there reaches the check, which takes the safe path."""
    from torch_triton_hop import _check_compilations, _compat

    def no_sass(kernel, args, options, texts=None):
        raise RuntimeError("no ptxas here")

    monkeypatch.setattr(_check_compilations, "_results", {})  # nothing compiled before counts
    monkeypatch.setattr(_compat, "generate_sass_text", no_sass)
    x, w = torch.ones(10, 12, device=DEVICE), torch.randn(12, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        out, code = compiled(centered, x, w, fusion=True)
    assert not fused_launches(code), caplog.text
    assert "its SASS could not be read (RuntimeError: no ptxas here)" in caplog.text, caplog.text
    torch.testing.assert_close(out, centered(x, w), rtol=0, atol=0)


# See [Note: Float16 roundings of bfloat16 arithmetic].
@triton.jit
def scale_to_half_kernel(x_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)  # float16
    c = tl.load(c_ptr + offs, mask=mask).to(tl.float32)  # bfloat16
    tl.store(out_ptr + offs, (x * c).to(tl.float16), mask=mask)


def scaled_to_half(x, w):
    out = torch.empty_like(x)
    wrap_triton(scale_to_half_kernel)[(triton.cdiv(x.numel(), 64),)](x, (w * 1e-30).to(torch.bfloat16), out, x.numel(),
                                                                     BLOCK=64)
    return out


MIXED_HALF = "rounds to float16 arithmetic on bfloat16 values"


def test_a_kernel_rounding_bfloat16_arithmetic_to_float16_is_not_fused_on_a_gpu(caplog):
    """Fuzzer seed 15 #4772, minimized: LLVM multiplies in half precision with the bf16 factor
    (1e-30) rounded to half (0), so inf * c is NaN in the kernel; a fused prologue whose value
    reaches the multiply through a select kept it in fp32 (inf)."""
    x = torch.full((100,), float("inf"), device=DEVICE, dtype=torch.float16)
    x[::3] = 2.0
    w = torch.rand(100, device=DEVICE) + 0.5
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(scaled_to_half, x, w, expect_fused=False)
    # The interpreter does not fuse a bf16 rounding (it truncates); a GPU refuses the kernel.
    assert (MIXED_HALF in caplog.text) == ON_GPU, caplog.text


def test_bfloat16_arithmetic_rounded_to_float16_is_found_when_planning_for_a_gpu(plan_for_a_gpu, caplog):
    """Without a GPU: the kernel's TTIR shows the rounding, and nothing is fused into it;
    the same kernel on float16 factors fuses."""
    x = torch.ones(100, device=DEVICE, dtype=torch.float16)
    w = torch.rand(100, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        _, code = compiled(scaled_to_half, x, w, fusion=True)
    assert not fused_launches(code) and MIXED_HALF in caplog.text, caplog.text

    def scaled_by_half(x, w):
        out = torch.empty_like(x)
        wrap_triton(scale_to_half_kernel)[(2,)](x, (w * 3.0).to(torch.float16), out, x.numel(), BLOCK=64)
        return out

    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        _, code = compiled(scaled_by_half, x, w, fusion=True)
    assert fused_launches(code) and MIXED_HALF not in caplog.text, caplog.text


@triton.jit
def descriptor_double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    out_desc = tl.make_tensor_descriptor(out_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    out_desc.store([tl.program_id(0) * BLOCK], x_desc.load([tl.program_id(0) * BLOCK]) * 2)


def test_arguments_read_and_written_through_device_side_tensor_descriptors_are_not_fused(caplog):
    """A descriptor's loads and stores cover whole blocks, bounded by the descriptor's shape,
    not by masks the fused code could apply its prologue and epilogue under."""
    def f(x):
        out = torch.empty_like(x)
        wrap_triton(descriptor_double_kernel)[(triton.cdiv(x.numel(), 64),)](x * 3.0 + 1.0, out, x.numel(), BLOCK=64)
        return out.relu()

    x = torch.randn(100, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(f, x, expect_fused=False)
    assert "reads it with ['tt.descriptor_load']" in caplog.text, caplog.text
    assert "writes it with ['tt.descriptor_store']" in caplog.text, caplog.text


@triton.jit
def swap_kernel(a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    a_ptr, b_ptr = b_ptr, a_ptr  # from here a_ptr holds b's argument, b_ptr a's
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(b_ptr + offs, tl.load(a_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def test_a_kernel_that_swaps_its_pointer_arguments_is_not_fused(caplog):
    """The fusion follows each argument's pointer by name; after a swap the names hold the other
    argument's pointer, so neither the prologue (loaded through a_ptr) nor the epilogue (stored
    through b_ptr) may be rewritten by name."""
    def f(x):
        out = torch.empty_like(x)
        wrap_triton(swap_kernel)[(2,)](out, x * 3.0 + 1.0, x.numel(), BLOCK=64)
        return out.relu()

    x = torch.randn(100, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(f, x, expect_fused=False)
    assert "a_ptr is assigned by unpacking" in caplog.text, caplog.text


@triton.jit
def reserved_name_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    p = x_ptr + offs
    _tth_off_p = (offs + 1) % n  # the kernel's own variable, named as the fusion names p's offsets
    y = tl.load(p, mask=offs < n) + tl.load(x_ptr + _tth_off_p, mask=offs < n)
    tl.store(out_ptr + offs, y, mask=offs < n)


def test_a_kernel_that_uses_the_fusions_reserved_names_is_not_fused(caplog):
    """The rewritten kernel holds each pointer's element offsets in `_tth_off_<name>`; a kernel
    with a variable of that name would have it overwritten (or overwrite the offsets), and its
    prologue would load other elements than the kernel's."""
    def f(x):
        out = torch.empty_like(x)
        wrap_triton(reserved_name_kernel)[(2,)](x * 3.0 + 1.0, out, x.numel(), BLOCK=64)
        return out.relu()

    x = torch.randn(100, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(f, x, expect_fused=False)
    assert "the kernel already uses the names ['_tth_off_p'], which the fusion reserves" in caplog.text, caplog.text


def test_random_numbers_drawn_after_the_launch_are_not_drawn_before_it(caplog):
    """Under fallback_random, the fused program draws what the unfused one draws, in its order.
    Fusing `out + rand_like(x)` would draw the operand before the launch, and so before
    randperm. (On CPU both draw in eager's order. On a GPU inductor itself draws rand_like
    before randperm, with or without the kernel, so there the unfused compile is the reference,
    and the operand is refused earlier, as a value inductor may compute inside its kernel.)"""
    def f(x):
        out = torch.empty_like(x)
        wrap_triton(plus_one_kernel)[(2,)](x, out, x.numel(), BLOCK=64)
        perm = torch.randperm(x.numel(), device=x.device)
        return out + torch.rand_like(x), perm

    x = torch.randn(100, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(
            fallback_random=True, fx_graph_cache=False):
        torch.manual_seed(0)
        unfused, _ = compiled(f, x, fusion=False)
        torch.manual_seed(0)
        result, code = compiled(f, x, fusion=True)
        if not ON_GPU:
            torch.manual_seed(0)
            assert all(same_bits(u, e) for u, e in zip(unfused, f(x)))
    assert all(same_bits(r, u) for r, u in zip(result, unfused))
    reason = "is computed by aten.rand.default" if ON_GPU else "computed after the launch by rand_like"
    assert not fused_launches(code) and reason in caplog.text, caplog.text


def test_an_epilogue_rounding_bfloat16_arithmetic_to_float16_is_not_fused_on_a_gpu(plan_for_a_gpu, caplog):
    """The kernel (float16 only) has no such rounding; an epilogue that adds one would leave
    LLVM's choice to the code around it, in the fused kernel and in inductor's own alike, so
    the fused kernel is refused; planned as for a GPU here, and on a GPU itself."""
    def f(x, w):
        out = torch.empty_like(x)
        wrap_triton(plus_one_kernel)[(2,)](x, out, x.numel(), BLOCK=64)
        return (out.float() * w.float()).half()

    x = torch.full((100,), float("inf"), device=DEVICE, dtype=torch.float16)
    x[::3] = 2.0
    w = torch.full((100,), 1e-30, device=DEVICE).to(torch.bfloat16)  # 0 in float16
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(f, x, w, expect_fused=False)
    assert "its pointwise code " + MIXED_HALF in caplog.text, caplog.text


@pytest.mark.gpu
def test_a_cpu_scalar_operand_is_not_fused_into_a_gpu_kernel(caplog):
    """A 0-d CPU tensor may take part in CUDA arithmetic (inductor passes it as a host
    scalar); the fused kernel reads its operands through pointers on the launch's device."""
    def f(x, scale):
        out = torch.empty_like(x)
        wrap_triton(plus_one_kernel)[(2,)](x, out, x.numel(), BLOCK=64)
        return out * scale

    x = torch.randn(100, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(f, x, torch.tensor(3.0), expect_fused=False)
    assert "is on cpu" in caplog.text, caplog.text


def test_wrapped_integers_are_not_divided_on_a_gpu(plan_for_a_gpu, caplog):
    """Fuzzer seed 16 #733: relu(x) ** 2 / relu(x) of a uint8 x. Eager wraps the square (255 ** 2
    is 1), inductor's Triton code does not (65025); a fused epilogue wraps as eager does, so on
    a GPU its division (div.full) would round 1 / 255 as neither program does. Planned for a
    GPU it is refused; integer ops, comparisons and conversions after the wrap still fuse."""
    x = torch.arange(256, device=DEVICE).to(torch.uint8)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, code = compiled(lambda x: torch.relu(copy(x)) ** 2 / torch.relu(x), x, fusion=True)
    assert not fused_launches(code) and "ops.truediv of integers wrapped as eager wraps them" in caplog.text, \
        caplog.text
    assert not [w for w in caught if "OpHandler" in str(w.message)], [str(w.message) for w in caught]
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        _, code = compiled(lambda x: (torch.relu(copy(x)) ** 2 > 7).to(torch.float32), x, fusion=True)
    assert fused_launches(code), caplog.text
    # A float add or multiply rounds as eager's, unless an add reads a product (an FMA).
    with torch._inductor.config.patch(fx_graph_cache=False):
        _, code = compiled(lambda x: (torch.relu(copy(x)) ** 3).to(torch.float32) * 0.5 - 0.75, x, fusion=True)
    assert not fused_launches(code), code
    with torch._inductor.config.patch(fx_graph_cache=False):
        _, code = compiled(lambda x: (torch.relu(copy(x)) ** 3).to(torch.float32) - 0.75, x, fusion=True)
    assert fused_launches(code), code


def test_wrapped_integers_divide_as_eager_under_the_interpreter(caplog):
    x = torch.arange(256, device=DEVICE).to(torch.uint8)
    check_exact(lambda x: torch.relu(copy(x)) ** 2 / torch.relu(x), x, expect_fused=not ON_GPU)
    # The fuzzer's program launches twice: the second launch's epilogue computes the square
    # itself (nothing else uses it), and divides as the first program does.
    check_exact(lambda x: torch.relu(copy(x)) ** 2 / torch.relu(copy(x)), x, expect_fused=not ON_GPU)

    def returned_too(x):  # the epilogue would read the square from memory, which inductor's
        square = torch.relu(copy(x)) ** 2  # Triton code holds unwrapped (65025, not 1)
        return square / torch.relu(copy(x)), square

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(returned_too, x, expect_fused=False)
    assert "(uint8) is computed by aten.pow.Tensor_Scalar, which the unfused program may" in caplog.text, caplog.text


def test_an_operand_is_not_moved_before_a_launch_that_writes_what_it_reads(caplog):
    """The second launch is not fused (its output is also summed) and is written in place
    into its output buffer; exp and the sum read that buffer with no graph edge to the launch.
    The first launch's epilogue takes their product as an operand, and moving it before the
    first launch (so the fused kernel can read it) read the buffer before the second launch
    wrote it (seen on a GPU as relu(x) ** 2 / relu(x) of uint8 = inf: wrong on CPU too)."""
    def f(x, y):
        first, second = copy(x), copy(y)
        return first + second * second.sum()

    # y an int64 (held as itself in inductor's code): a float product would be refused first at the
    # boundary on a GPU (inductor may compute it unrounded), a narrower integer one too.
    x, y = torch.randn(256, device=DEVICE), torch.randint(-9, 9, (256,), device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, x, y, expect_fused=False)
    assert "between the launch and an operand computed after it writes" in caplog.text, caplog.text
    torch.testing.assert_close(compiled(f, x, y, fusion=True)[0], f(x, y))


@triton.jit
def scale_to_half_through_select_kernel(x_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    c = tl.where(mask, tl.load(c_ptr + offs, mask=mask), 0.0).to(tl.float32)  # as a fused prologue gives it
    tl.store(out_ptr + offs, (x * c).to(tl.float16), mask=mask)


def test_llvm_multiplies_bfloat16_in_half_precision_unless_a_select_intervenes():
    """The premise of [Note: Float16 roundings of bfloat16 arithmetic], in the PTX for sm_90 (no
    driver): the kernel's fp32 multiply becomes mul.f16 on the bf16 factor rounded to fp16; with
    the factor through a select, as a fused prologue hands it over, it stays mul.f32."""
    import re

    from triton.backends.compiler import GPUTarget

    from torch_triton_hop import _compat_ttir

    args = dict(x_ptr=torch.empty(64, dtype=torch.float16), c_ptr=torch.empty(64, dtype=torch.bfloat16),
                out_ptr=torch.empty(64, dtype=torch.float16), n=64, BLOCK=64)

    def multiplies(kernel):
        ptx = _compat_ttir._compile_through(kernel, args, "ptx", GPUTarget("cuda", 90, 32), None)
        return set(re.findall(r"\bmul\.(?:rn\.)?f(?:16|32)\b", ptx))

    assert multiplies(scale_to_half_kernel) == {"mul.f16"}
    assert multiplies(scale_to_half_through_select_kernel) == {"mul.f32"}


BOUNDARY_REFUSED = "the unfused program may compute"  # see [Note: Values at a fused region's boundary]


def test_an_operand_inductor_computes_in_the_using_kernel_is_not_read_from_memory(caplog):
    """h = a * 3.3 in fp16 feeds the epilogue and another op. Inductor computes it in fp32 inside
    each kernel that uses it; a fused epilogue would read it from memory, rounded to fp16 (found
    on a GPU, seed 23 #1662, where the region's own fp16 ops then made a result that was neither
    eager's nor the unfused compile's; on CPU too, with inductor's C++ code)."""
    torch.manual_seed(0)
    x, a = torch.randn(256, device=DEVICE), (torch.randn(256, device=DEVICE) * 3).half()

    def f(x, a):
        h = a * 3.3
        return copy(x) + h, h * 2

    # The premise: the unfused compile holds h unrounded, so it differs from eager.
    assert not same_bits(compiled(f, x, a, fusion=False)[0][0], f(x, a)[0])
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(f, x, a, expect_fused=False)
    assert f"operand mul (float16) is computed by aten.mul.Tensor, which {BOUNDARY_REFUSED}" in caplog.text


@pytest.mark.parametrize("value, fuses", [(0.5, True), (0.1, False)])
def test_a_padded_operand_crosses_the_boundary_where_its_dtype_holds_the_padding(value, fuses, caplog):
    """`F.pad(a, ..., value=v)` in fp16 holds a's elements and v. Inductor computes it in fp32
    inside the kernel that uses it: a's elements as memory holds them, v as the Python number.
    Read from memory, v is rounded to fp16: the same where fp16 holds v (0.5), not where it
    does not (0.1)."""
    torch.manual_seed(0)
    x, a = torch.randn(256, device=DEVICE), torch.randn(56, device=DEVICE).half()

    def f(x, a):  # 200 of the 256 elements are padding
        padded = torch.nn.functional.pad(a, (100, 100), value=value)
        return copy(x) + padded, padded * 2

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(f, x, a, expect_fused=fuses)
    refused = "operand constant_pad_nd (float16) is computed by aten.constant_pad_nd.default, which " + BOUNDARY_REFUSED
    assert (refused in caplog.text) != fuses, caplog.text


def test_an_operand_split_off_by_a_second_launch_is_not_read_from_memory(caplog):
    """Seed 23 #1662, minimized: `h = copy(x) / 1.5` in fp16, then `where(h > c, h, c)`, c = copy(y).
    With h returned too, the second launch cannot compute h itself, nor take it as an operand
    (above); the first cannot take the where, whose other operand the second launch computes
    later. An int8 operand converted to bf16, which holds it exactly, crosses as it is, so
    that one fuses."""
    torch.manual_seed(0)
    x, y = (torch.randn(256, device=DEVICE) * 5).half(), torch.randint(-9, 9, (256,), device=DEVICE)

    def f(x, y):
        h, c = copy(x) / 1.5, copy(y)
        # (c in the condition too: a where that may drop the second launch's value is refused first,
        # see test_an_epilogue_that_selects_past_unwritten_elements_is_not_fused)
        return torch.where(h > c, h, c).sqrt().float(), h

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(f, x, y, expect_fused=False)
    assert "operand div (float16) is computed by aten.div.Tensor, which the unfused program may" in caplog.text, \
        caplog.text

    def g(x, y):
        return copy(x.float()) + y.to(torch.int8).to(torch.bfloat16)

    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(g, x, y, expect_fused=True)  # its operand is y, an integer: the casts are in the region
    assert BOUNDARY_REFUSED not in caplog.text


def test_an_epilogue_result_its_users_may_compute_unrounded_is_not_stored(caplog):
    """h = copy(x) * 1.5 in fp16 has two users that are not fused with it; inductor may compute
    h in fp32 inside their kernels, so the fused kernel cannot store it rounded for them."""
    x = (torch.randn(256, device=DEVICE) * 3).half()

    def f(x):
        h = copy(x) * 1.5
        return (h + 1).sum(), torch.exp(h)

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        check_exact(f, x, expect_fused=False)
    assert "its result mul (float16) is also used by" in caplog.text, caplog.text


@triton.jit
def row_positives_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):  # one int32 per row: a scalar store
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum((x > 0).to(tl.int32), axis=0))


def row_positives(x):
    out = torch.empty(x.shape[0], dtype=torch.int32, device=x.device)
    wrap_triton(row_positives_kernel)[(x.shape[0],)](x, out, x.shape[1], BLOCK=32)
    return out


def cos_of_a_constant(n):
    """cos(2.0) + n for every n: (n != 0) == (float(n) != 0). (+ n: an epilogue that ignores
    the stored value is not fused at all; see [Note: Elements a kernel may leave unwritten].)"""
    return torch.cos(torch.add(2, torch.logical_xor(n, n.to(torch.float16)), alpha=2).float()) + n


def test_math_triton_would_fold_on_the_host_is_not_fused_on_a_gpu(caplog, plan_for_a_gpu):
    """Seed 23 #230, minimized (see [Note: Math folded on the host]): at the kernel's scalar store
    triton's compiler proves the cosine's operand constant and folds cos(2.0) with the host's
    libm (1 ulp from the H200's, which inductor's kernel, on a block of elements, calls). The
    same epilogue at a block store does not fold, and fuses. Planned as for a GPU (on a GPU
    the programs also run and are compared)."""
    x = torch.randn(12, 20, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        code = compiled(lambda x: cos_of_a_constant(row_positives(x)), x, fusion=True)[1]
    assert not fused_launches(code) and "folds math.cos of a value it proves constant" in caplog.text, caplog.text
    caplog.clear()
    n = torch.arange(-6, 6, device=DEVICE, dtype=torch.int32)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        code = compiled(lambda n: cos_of_a_constant(copy(n)), n, fusion=True)[1]
    assert fused_launches(code) and "folds" not in caplog.text, caplog.text
    if ON_GPU:
        check_exact(lambda x: cos_of_a_constant(row_positives(x)), x, expect_fused=False)
        check_exact(lambda n: cos_of_a_constant(copy(n)), n, expect_fused=True)


@triton.jit
def multiply_add_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, a * b + tl.load(c_ptr + offsets, mask=mask), mask=mask)


def multiply_add(a, b, c):
    out = torch.empty_like(c)
    wrap_triton(multiply_add_kernel)[(triton.cdiv(c.numel(), 64),)](a, b, c, out, c.numel(), BLOCK=64)
    return out


def test_two_prologues_leave_the_kernels_multiply_add_one_fma(plan_for_a_gpu, monkeypatch):
    """GPU fuzzer seed 24 #351: with both factors of the kernel's a * b + c from prologues, LLVM
    folded their masked-lane selects, where(m, a, 0) * where(m, b, 0), into where(m, a * b, 0),
    and the select between the multiply and the add kept them apart: two roundings where the
    unfused kernel computes one FMA (1 ulp). Each prologue's result, its select included, now
    reaches the kernel through the opaque move. Checked in the PTX for sm_90 (no driver)."""
    import re

    ptx = str(fused_kernel_compiled_for_sm90(monkeypatch, "ptx", lambda x, y, z: multiply_add(x + 0.25, y - 0.5, z),
                                             *(torch.randn(200) for _ in range(3))))
    body = ptx[ptx.index(".entry"):]
    assert "fma.rn.f32" in body and not re.search(r"\bmul\.(rn\.)?f32", body), body


# --- found by an adversarial hunt on CPU (eleventh session) -----------------------------

@triton.jit
def copy_with_float_other_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0), mask=mask)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_an_integer_prologue_into_a_load_with_a_float_other_keeps_every_bit(dtype):
    """tl.load converts `other` to the pointer's element type; the fused load selected between the
    prologue's integers and the float `other` first, which promoted every lane to float32:
    2**30 + k came back as 2**30 (37 of 37 elements wrong)."""
    def f(x):
        out = torch.empty_like(x)
        wrap_triton(copy_with_float_other_kernel)[(triton.cdiv(x.numel(), 16),)](x + 1, out, x.numel(), BLOCK=16)
        return out

    x = (2**30 if dtype == torch.int32 else 2**54) + torch.arange(37, device=DEVICE, dtype=dtype)
    check_exact(f, x, expect_fused=True)


@triton.jit
def store_through_a_select_kernel(x_ptr, out_ptr, aux_ptr, n, TO_OUT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask)
    destination = out_ptr if TO_OUT else aux_ptr
    tl.store(destination + offs, v * 2, mask=mask)
    tl.store(out_ptr + offs, v, mask=mask)


@triton.jit
def load_through_a_select_kernel(x_ptr, y_ptr, out_ptr, n, USE_X: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    source = tl.where(USE_X, x_ptr, y_ptr)
    tl.store(out_ptr + offs, tl.load(source + offs, mask=mask) + tl.load(x_ptr + offs, mask=mask), mask=mask)


def test_a_pointer_selected_between_two_arguments_is_not_fused(caplog):
    """`out_ptr if TO_OUT else aux_ptr` with TO_OUT false stores into aux: the fusion took the
    select for a pointer into out, and aux got out's epilogue (2x + 1 for 2x); the prologue form
    (tl.where) replaced y's load by x's prologue."""
    def stores(x):
        out, aux = torch.empty_like(x), torch.empty_like(x)
        wrap_triton(store_through_a_select_kernel)[(triton.cdiv(x.numel(), 16),)](x, out, aux, x.numel(), TO_OUT=False,
                                                                                   BLOCK=16)
        return out + 1, aux

    def loads(c, y):
        out = torch.empty_like(y)
        wrap_triton(load_through_a_select_kernel)[(triton.cdiv(y.numel(), 16),)](c.expand(y.numel()) * 2, y, out,
                                                                                 y.numel(), USE_X=False, BLOCK=16)
        return out

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(stores, torch.randn(37, device=DEVICE), expect_fused=False)
        check_exact(loads, torch.randn(1, device=DEVICE), torch.randn(37, device=DEVICE), expect_fused=False)
    assert caplog.text.count("is selected between pointers of different arguments") >= 2, caplog.text


@triton.jit
def gather_rows_kernel(table_ptr, idx_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    values = tl.load(table_ptr + tl.load(idx_ptr + row) * D + cols, mask=mask)  # the index loaded inside
    tl.store(out_ptr + row * D + cols, values, mask=mask)


@triton.jit
def gather_rows_through_a_variable_kernel(table_ptr, idx_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    pointers = table_ptr + tl.load(idx_ptr + row) * D + cols
    tl.store(out_ptr + row * D + cols, tl.load(pointers, mask=cols < D), mask=cols < D)


@triton.jit
def scatter_kernel(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + tl.load(idx_ptr + offs, mask=mask, other=0), tl.load(x_ptr + offs, mask=mask), mask=mask)


@pytest.mark.parametrize("kernel", [gather_rows_kernel, gather_rows_through_a_variable_kernel],
                         ids=["inline", "variable"])
def test_a_gather_whose_index_has_a_prologue_reads_the_prologues_rows(kernel, caplog):
    """The table's fused load kept the index's load as written, which after fusion read the
    prologue's operand (rows idx of 2 * table, not idx - 1: 84 of 84 elements wrong)."""
    def f(table, idx):
        out = torch.empty(idx.numel(), table.shape[1], device=table.device)
        wrap_triton(kernel)[(idx.numel(),)](table * 2, idx - 1, out, table.shape[1], BLOCK_D=16)
        return out

    table = torch.randn(10, 12, device=DEVICE)
    idx = torch.randint(1, 10, (7,), device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, table, idx, expect_fused=True)
    assert "fused {'table_ptr': ['mul'], 'idx_ptr': ['sub']}" in caplog.text, caplog.text


def test_a_scatter_whose_index_has_a_prologue_stores_where_the_program_does():
    def f(x, perm):
        out = torch.empty_like(x)
        wrap_triton(scatter_kernel)[(triton.cdiv(x.numel(), 16),)](x, (x.numel() - 1) - perm, out, x.numel(), BLOCK=16)
        return out * 2

    check_exact(f, torch.randn(37, device=DEVICE), torch.randperm(37, device=DEVICE), expect_fused=True)


# --- elements a kernel leaves unwritten (see [Note: Elements a kernel may leave unwritten]) ---

@triton.jit
def copy_first_k_kernel(x_ptr, out_ptr, k, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < k
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def copy_first(x, k):
    out = torch.empty_like(x)
    wrap_triton(copy_first_k_kernel)[(triton.cdiv(x.numel(), 16),)](x, out, k, BLOCK=16)
    return out


def test_an_epilogue_that_selects_past_unwritten_elements_is_not_fused(caplog):
    """The kernel stores the first 20 of 37 elements; `where(first_20, out, 5.0)` is defined
    everywhere. Fused, the where ran only where the kernel stored, and elements 20.. kept the
    garbage of torch.empty where the program has 5.0 (an adversarial hunt, eleventh session)."""
    x = torch.randn(37, device=DEVICE)
    valid = torch.arange(37, device=DEVICE) < 20
    ints = torch.randint(-5, 5, (37,), device=DEVICE, dtype=torch.int32)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(lambda x, valid: torch.where(valid, copy_first(x, 20), 5.0), x, valid, expect_fused=False)
        check_exact(lambda x, valid: (copy_first(x, 20) > 0) & valid, x, valid, expect_fused=False)
        check_exact(lambda x, valid: copy_first(x, 20) * valid, ints, valid.int(), expect_fused=False)
    assert "where (a select) may not depend on the kernel's stored value" in caplog.text, caplog.text
    assert "logical_and, which one operand can absorb" in caplog.text or "bitwise_and, which one operand can absorb" \
        in caplog.text, caplog.text
    assert "mul, which one operand can absorb" in caplog.text, caplog.text
    # Storing every element (provably), each fuses.
    check_exact(lambda x, valid: torch.where(valid, copy_first(x, 37), 5.0), x, valid, expect_fused=True)
    check_exact(lambda x, valid: (copy_first(x, 37) > 0) & valid, x, valid, expect_fused=True)
    check_exact(lambda x, valid: copy_first(x, 37) * valid, ints, valid.int(), expect_fused=True)


_INT_MIN, _INT_MAX = torch.iinfo(torch.int32).min, torch.iinfo(torch.int32).max


@pytest.mark.parametrize("epilogue, x_dtype, absorbing, fuses_when_covered", [
    (lambda out, y: out + y, torch.float32, float("nan"), True),
    (lambda out, y: torch.nn.functional.gelu(out * 2 + y), torch.float32, float("nan"), ON_GPU),  # erf: GPU only
    (lambda out, y: out == y, torch.float32, float("nan"), True),
    (lambda out, y: (out < y).float() + 1, torch.float32, float("nan"), True),
    (lambda out, y: torch.minimum(out, y), torch.int32, _INT_MIN, True),
    (lambda out, y: torch.maximum(out, y), torch.int32, _INT_MAX, True),
    (lambda out, y: out.clamp(max=y), torch.int32, _INT_MIN, True),
    (lambda out, y: out <= y, torch.int32, _INT_MAX, True),
    (lambda out, y: out % y, torch.int32, 1, ON_GPU),  # the interpreter's % differs from inductor's C++
], ids=["add", "gelu_of_add", "equal", "less_then_add", "min", "max", "clamp_max", "at_most", "remainder"])
def test_an_epilogue_operand_whose_values_fix_the_result_is_not_fused(epilogue, x_dtype, absorbing, fuses_when_covered,
                                                                      caplog):
    """Where the kernel stores nothing, NaN (float ops) or an extreme (integer min, max, clamp,
    comparisons) in the epilogue's other operand defines the program's result; fused, those
    elements were garbage (a hunt, fifteenth session). The operand is known only at run time.
    Where the kernel provably stores every element, the same epilogue fuses (see [Note: A proof
    that a kernel stores every element])."""
    x = torch.arange(37, device=DEVICE).to(x_dtype)
    y = torch.full((37,), 5, device=DEVICE, dtype=x_dtype)
    y[20:] = absorbing
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(lambda x, y: epilogue(copy_first(x, 20), y), x, y, expect_fused=False)
    assert "would fix the result" in caplog.text, caplog.text
    assert "no proof that it stores every element: the kernel may leave 17 of the 37 elements of out_ptr unwritten" \
        in caplog.text, caplog.text
    check_exact(lambda x, y: epilogue(copy_first(x, 37), y), x, y, expect_fused=fuses_when_covered)


def test_an_epilogue_operand_no_value_of_which_fixes_the_result_still_fuses():
    """Integer + - ^ of an integer operand, and an integer operand of a float op: no operand
    value fixes the result."""
    x, ints = torch.randn(37, device=DEVICE), torch.randint(-9, 9, (37,), device=DEVICE, dtype=torch.int32)
    check_exact(lambda x, i: copy_first(x, 37) * i + 1, x, ints, expect_fused=True)
    check_exact(lambda i, j: (copy_first(i, 37) - j) ^ j, ints, ints.flip(0), expect_fused=True)


@pytest.mark.parametrize("epilogue", [
    lambda out: torch.where(out > 0, out, 0.0),
    lambda out: torch.where(out > 0, out, out * 0.01),
    lambda out: out ** 2,
    lambda out: (out * 3).to(torch.int32),
], ids=["relu_as_where", "leaky_relu", "square", "scale_to_int"])
def test_epilogues_strict_in_the_stored_value_still_fuse(epilogue):
    """Their result is unknown wherever the stored value is: fused where the kernel writes
    every element, and where it does not."""
    x = torch.randn(37, device=DEVICE)
    check_exact(lambda x: epilogue(copy_first(x, 37)), x, expect_fused=True)


@pytest.mark.parametrize("epilogue, dtype", [
    (lambda out: out - out, torch.int32),
    (lambda out: out ^ out, torch.int32),
    (lambda out: out != out, torch.int32),
    (lambda out: out.clamp(5, 5), torch.int32),
    (lambda out: out.isnan(), torch.int32),
    (lambda out: out.to(torch.uint8) >= 0, torch.int32),
    (lambda out: out * 2**32, torch.int32),
    (lambda out: torch.maximum(out, torch.tensor(float("inf"), device=out.device)), torch.float32),
], ids=["minus_itself", "xor_itself", "unequal_to_itself", "clamp_to_one_value", "isnan_of_int", "byte_at_least_0",
        "times_2_to_32", "maximum_with_inf"])
def test_an_epilogue_constant_in_the_stored_value_is_not_fused(epilogue, dtype, caplog):
    """Strict op by op, constant as a whole: its result is defined where the kernel stores
    nothing (0, False, 5, inf), and fused it was garbage there (an adversarial hunt,
    thirteenth session)."""
    x = torch.arange(37, device=DEVICE).to(dtype)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        # Elements 20.. are the unfused program's garbage, a NaN now and then (maximum_with_inf:
        # NaN there; a CI run met one).
        check_exact(lambda x: epilogue(copy_first(x, 20)), x, expect_fused=False, nan_from_garbage=True)
    assert "gives the same result for every value the kernel might store" in caplog.text, caplog.text
    check_exact(lambda x: epilogue(copy_first(x, 37)), x, expect_fused=True)  # stores every element


@pytest.mark.parametrize("epilogue", [
    lambda out: out >= 0,
    lambda out: out.clamp(-1, 1),
    lambda out: out == 0,
    lambda out: torch.maximum(out, torch.tensor(0.0, device=out.device)),
], ids=["at_least_0", "clamp", "equal_to_0", "maximum_with_0"])
def test_epilogues_that_compare_or_saturate_still_fuse(epilogue):
    x = torch.randn(37, device=DEVICE)
    check_exact(lambda x: epilogue(copy_first(x, 37)), x, expect_fused=True)


def test_an_epilogue_comparing_with_an_operand_still_fuses():
    """`predictions == labels` depends on the predictions where they may equal the labels: the
    probes include the operand's own values."""
    predictions, labels = (torch.randint(0, 5, (37,), device=DEVICE) for _ in range(2))
    check_exact(lambda p, labels: copy_first(p, 37) == labels, predictions, labels, expect_fused=True)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"],
                 reset_to_zero=["out_ptr"])
@triton.jit
def copy_first_k_reset_kernel(x_ptr, out_ptr, n, k, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < k
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def test_an_epilogue_into_an_output_the_autotuner_zeroes_is_not_fused(caplog):
    """reset_to_zero zeroes out before the first launch of a key: elements 20.. hold 0, and the
    unfused `out + 1` gives 1 there; fused, they kept the zeros (an adversarial hunt)."""
    def f(x):
        out = torch.empty_like(x)
        wrap_triton(copy_first_k_reset_kernel)[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](
            x, out, x.numel(), 20)
        return out + 1

    x = torch.randn(37, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        out, code = compiled(f, x, fusion=True)
    assert not fused_launches(code), code
    assert "the autotuner resets it (reset_to_zero / restore_value)" in caplog.text, caplog.text
    # Elements 20.. are zeros at the first launch of a key only (then, in every mode, undefined).
    assert same_bits(out[:20], x[:20] + 1)


@triton.autotune(configs=[triton.Config({"BLOCK": 8}), triton.Config({"BLOCK": 16})], key=["n"],
                 reset_to_zero=["x_ptr"])
@triton.jit
def plus_one_reset_input_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def test_a_prologue_into_an_argument_the_autotuner_resets_is_not_fused(caplog):
    """Fused, the launch takes the prologue's operand, the program's x, in the argument's place,
    and the autotuner zeroed the program's x (an adversarial hunt, thirteenth session)."""
    def f(x):
        out = torch.empty_like(x)
        wrap_triton(plus_one_reset_input_kernel)[lambda meta: (triton.cdiv(8, meta["BLOCK"]),)](x * 2 + 1, out, 8)
        return out

    x = torch.arange(8.0, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        compiled(f, x, fusion=True)
    assert "the autotuner resets it (reset_to_zero / restore_value): fused" in caplog.text, caplog.text
    assert same_bits(x, torch.arange(8.0, device=DEVICE))


@triton.jit
def reverse_ignoring_strides_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)  # out's strides ignored: n contiguous elements from out_ptr, as eager allows
    tl.store(out_ptr + (n - 1 - offs), tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_a_prologue_reading_memory_the_kernel_writes_is_not_fused(caplog):
    """x[::2] * 2 into a kernel writing x[1::2]: fused, the kernel read x while writing it, so
    the written view was copied, and what the kernel stores between the view's elements was
    lost (an adversarial hunt, thirteenth session)."""
    def f(x):
        wrap_triton(reverse_ignoring_strides_kernel)[(1,)](x[::2] * 2, x[1::2], 10, BLOCK=16)
        return x

    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        eager = f(torch.arange(20.0, device=DEVICE))
        fused, code = compiled(f, torch.arange(20.0, device=DEVICE), fusion=True)
    assert "shares memory with x_ptr, which the kernel writes" in caplog.text or \
        "shares memory with out_ptr, which the kernel writes" in caplog.text, caplog.text
    assert same_bits(fused, eager)


@triton.jit
def fill_kernel(out_ptr, n, VALUE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, VALUE, mask=offs < n)


@pytest.mark.parametrize("dtype, value", [(torch.float32, 1.1), (torch.float16, 1.1), (torch.int32, 7)])
def test_a_stored_constant_gets_its_epilogue(dtype, value):
    """`tl.store(p, VALUE)` with VALUE a constexpr stores the constant converted to p's element
    type; the epilogue gets that (the fused kernel failed to build before, and was left unfused)."""
    def f(like):
        out = torch.empty(37, dtype=dtype, device=like.device)
        wrap_triton(fill_kernel)[(3,)](out, 37, VALUE=value, BLOCK=16)
        return out.float() * 3

    check_exact(f, torch.zeros(1, device=DEVICE), expect_fused=True)


SCALE_KERNEL_MODULE = '''
import triton
import triton.language as tl

SCALE = tl.constexpr({scale})


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)
'''


def import_module_source(tmp_path, monkeypatch, name, source):
    """Module `name` holding `source`, written to a file (triton reads a kernel's source from it)."""
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(name)


def import_scale_kernel_module(tmp_path, monkeypatch, name, scale):
    """A module of its own holding scale_kernel, which multiplies by the module constant SCALE."""
    return import_module_source(tmp_path, monkeypatch, name, SCALE_KERNEL_MODULE.format(scale=scale))


def scaled_plus_one(kernel):
    def f(x):
        out = torch.empty_like(x)
        wrap_triton(kernel)[(1,)](x + 1, out, x.numel(), BLOCK=8)
        return out - 1
    return f


def test_kernels_of_one_source_in_two_modules_get_fused_kernels_of_their_own(tmp_path, monkeypatch):
    """Same source, SCALE 2 in one module and 5 in the other: the second program ran the first's
    fused kernel, which multiplies by 2 (an adversarial hunt, twelfth session)."""
    x = torch.arange(8, dtype=torch.float32, device=DEVICE)
    for name, scale in (("tth_scale_by_two", 2.0), ("tth_scale_by_five", 5.0)):
        module = import_scale_kernel_module(tmp_path, monkeypatch, name, scale)
        fused, code = compiled(scaled_plus_one(module.scale_kernel), x, fusion=True)
        assert fused_launches(code), code
        assert torch.equal(fused, (x + 1) * scale - 1), (scale, fused)


def test_a_changed_module_constant_gets_a_fused_kernel_built_again(tmp_path, monkeypatch):
    """The fused kernel is defined in a copy of the module's globals, as inductor's own code
    holds their values: a program compiled after SCALE changed got the old SCALE."""
    x = torch.arange(8, dtype=torch.float32, device=DEVICE)
    module = import_scale_kernel_module(tmp_path, monkeypatch, "tth_scale_changed", 2.0)
    program = scaled_plus_one(module.scale_kernel)
    assert torch.equal(compiled(program, x, fusion=True)[0], (x + 1) * 2 - 1)
    monkeypatch.setattr(module, "SCALE", tl.constexpr(5.0))
    unfused, _ = compiled(program, x, fusion=False)
    fused, code = compiled(program, x, fusion=True)
    assert fused_launches(code), code
    assert torch.equal(unfused, (x + 1) * 5 - 1), unfused
    assert torch.equal(fused, unfused), fused


FLAGGED_STORE_MODULE = '''
import triton
import triton.language as tl

STORE_X = tl.constexpr(False)


@triton.jit
def flagged_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)
    if STORE_X:
        tl.store(x_ptr + offs, x + 1, mask=offs < n)
'''


def test_what_a_kernel_writes_follows_a_changed_module_constant(tmp_path, monkeypatch):
    """The analysis of which arguments a kernel writes is cached per kernel and arguments; a
    module constant the kernel reads decides it too."""
    module = import_module_source(tmp_path, monkeypatch, "tth_flagged_store", FLAGGED_STORE_MODULE)
    x = torch.zeros(8, device=DEVICE)
    arguments = {"x_ptr": x, "out_ptr": torch.empty_like(x), "n": 8, "BLOCK": 8}
    assert torch_triton_hop.identify_accessed_tensors(module.flagged_kernel, arguments).writes == ["out_ptr"]
    monkeypatch.setattr(module, "STORE_X", tl.constexpr(True))
    assert torch_triton_hop.identify_accessed_tensors(module.flagged_kernel, arguments).writes == ["x_ptr", "out_ptr"]


# Graph inputs that share memory only when the compiled code runs: each program compiles on
# separate tensors, then runs on views of one buffer (torch.compile does not recompile for that).
# See [Note: Graph inputs that may share memory].

@triton.jit
def copy_and_increment_kernel(x_ptr, a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=offs < n), mask=offs < n)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


def copy_then_add(x, a, b):  # the epilogue + b read before the kernel's store to x
    out = torch.empty_like(a)
    wrap_triton(copy_and_increment_kernel)[(1,)](x, a, out, 8, BLOCK=8)
    return out + b


def program_inputs(program, overlapping):
    """Fresh inputs: separate tensors, or (overlapping) b a view of x, which the kernel writes.
    Integers: a float operand of the epilogue would not be fused at all (its NaN would fix the
    result where the kernel stores nothing, see [Note: Elements a kernel may leave unwritten])."""
    x, a = torch.zeros(8, device=DEVICE, dtype=torch.int32), torch.full((8,), 10.0, device=DEVICE)
    return (x, a, x[:]) if overlapping else (x, a, torch.ones(8, device=DEVICE, dtype=torch.int32))


def copy_then_launch_writing_x_then_add(x, a, b):  # the epilogue + b read before the second launch writes x
    out = torch.empty_like(a)
    wrap_triton(copy_kernel)[(1,)](a, out, 8, BLOCK=8)
    wrap_triton(copy_and_increment_kernel)[(1,)](x, a, torch.empty_like(a), 8, BLOCK=8)
    return out + b


# (A second case, `out + (b + 2)` with b + 2 moved before the launch, is refused by the boundary rule
# once b is an integer; a float b is refused first, see program_inputs.)
@pytest.mark.parametrize("program", [copy_then_add, copy_then_launch_writing_x_then_add])
def test_graph_inputs_that_share_memory_only_when_the_code_runs(program, caplog):
    """Compiled on separate tensors, run with b = x[:] (no recompile): fused, the epilogue
    (and b + 2, moved before the launch) read b before the kernel's store to x (an
    adversarial hunt, twelfth session)."""
    torch._dynamo.reset()
    compiled_program = torch.compile(program, fullgraph=True)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        compiled_program(*program_inputs(program, overlapping=False))
    assert "may share memory when the compiled code runs" in caplog.text, caplog.text
    assert torch.equal(compiled_program(*program_inputs(program, overlapping=True)),
                       program(*program_inputs(program, overlapping=True)))


def copied(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(triton.cdiv(x.numel(), 32),)](x, out, x.numel(), BLOCK=32)
    return out


@pytest.mark.parametrize("program", [
    lambda x: copied(x) + 300,      # epilogue; eager casts the scalar to int8: + 44
    lambda x: copied(x + 300),      # prologue
    lambda x: copied(x < 200),      # a comparison with the wrapped scalar (-56)
    lambda x: copied(x.to(torch.uint8)) - 300,
    lambda x: copied(x.to(torch.int32)) + (2**40 + 1),
], ids=["int8 + 300 epilogue", "int8 + 300 prologue", "int8 < 200 prologue", "uint8 - 300 epilogue",
        "int32 + 2**40 + 1 epilogue"])
def test_an_int_scalar_out_of_the_tensors_range_wraps_as_eager(program):
    """Under the interpreter the fused code raised (numpy will not make an int8 of 300)."""
    x = torch.tensor([-128, 127, 0, 5, -1, 44], dtype=torch.int8, device=DEVICE)
    check_exact(program, x, expect_fused=True)


@triton.jit
def store_scaled_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) * 1.5, mask=offsets < n)


@triton.jit
def load_with_other_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, OTHER: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n, other=OTHER).to(tl.int32))


def test_an_epilogue_sees_what_a_store_of_a_float_into_a_bool_tensor_wrote():
    """GPU hunt, H100 + triton 3.6: tl.store of a float into a bool tensor converts it to int8 in
    triton 3.6-3.8 (0.75 -> 0, False; -1.5 -> the byte 0xFF, True) and to int1 (!= 0) in 3.9.
    The fused epilogue took the value as != 0: `.to(torch.int8) * 5` gave 5 where the program
    gives 0, in 121 of 200 elements."""
    def f(x):
        out = torch.empty(x.shape, device=x.device, dtype=torch.bool)
        wrap_triton(store_scaled_kernel)[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
        return out.to(torch.int8) * 5

    x = torch.tensor([0.0, 0.5, -0.5, 0.7, -0.7, 1.0, -1.0, 1e-30, -0.0, 100.0, 200.0, -200.0], device=DEVICE)
    check_exact(f, x.repeat(20), expect_fused=True)


def test_a_prologue_into_a_masked_bool_load_gives_other_as_the_load_converts_it():
    """tl.load from a bool tensor converts `other` to int8 first (every triton): other=0.5 is
    False there, where the fused prologue gave 0.5 != 0, True."""
    def f(x):
        out = torch.empty(32, device=x.device, dtype=torch.int32)
        wrap_triton(load_with_other_kernel)[(1,)](x > 0, out, x.numel(), BLOCK=32, OTHER=0.5)
        return out

    check_exact(f, torch.randn(20, device=DEVICE), expect_fused=True)


@pytest.mark.parametrize("dtype", [torch.uint32, torch.uint64])
def test_uint32_and_uint64_values_are_not_fused_and_no_pass_fails(dtype, caplog):
    """Fusion hunt 6: a uint32 kernel output with a `.to(float32)` epilogue made the fusion pass
    raise (no triton dtype for uint32 in the helpers); the launch ran unfused with a WARNING."""
    def epilogue(x):
        h = x.to(dtype)
        out = torch.empty_like(h)
        wrap_triton(copy_kernel)[(triton.cdiv(h.numel(), 64),)](h, out, h.numel(), BLOCK=64)
        return out.to(torch.float32)

    def prologue(x):
        h = x.to(dtype).to(torch.int64) + 3  # (CUDA has no uint32 / uint64 multiply)
        out = torch.empty_like(h)
        wrap_triton(copy_kernel)[(triton.cdiv(h.numel(), 64),)](h, out, h.numel(), BLOCK=64)
        return out

    x = torch.tensor([0, 1, 2**31, 2**32 - 1, 3_000_000_000], dtype=torch.int64, device=DEVICE)
    for f, reason in ((epilogue, f"the fused code would hold {dtype} values"), (prologue, "nothing fused")):
        with caplog.at_level(logging.DEBUG, logger="torch_triton_hop"):
            check_exact(f, x, expect_fused=False)
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
        assert reason in caplog.text
        caplog.clear()


@triton.jit
def double_rows_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=mask) * 2.0, mask=mask)


def rows_spanning_2_31_elements(rows, cols):
    """A (rows, cols) uint8 tensor whose rows lie 2**30 + 64 elements apart, so that an int32
    offset of its last row wraps around. It starts 2**31 elements into its storage, so a wrapped
    offset still reads the storage: a wrong value (0), not a crash. About 4 GiB of address space,
    of which only the rows and the first bytes are written."""
    stride, start = 2**30 + 64, 2**31
    storage = torch.empty(start + (rows - 1) * stride + cols, dtype=torch.uint8, device=DEVICE)
    storage[: cols + 256].zero_()  # where a wrapped offset of the last row points
    view = storage.as_strided((rows, cols), (stride, 1), start)
    for row in range(rows):
        view[row].copy_(torch.arange(cols, dtype=torch.uint8, device=DEVICE) + 50 * row + 1)
    return view


@pytest.mark.parametrize("kind", ["prologue", "epilogue"])
def test_an_operand_spanning_2_31_elements_is_indexed_in_int64(kind):
    """The fused code indexes an operand by the kernel's offsets. Where the operand's layout
    spans 2**31 elements or more, int32 arithmetic would wrap; inductor indexes it in int64, and
    so must the fused code, whatever the kernel's own offsets are."""
    def f(x, b):
        out = torch.empty_like(x)
        source = x + b if kind == "prologue" else x
        wrap_triton(double_rows_kernel)[(x.shape[0],)](source, out, x.shape[1], BLOCK=32)
        return out * b if kind == "epilogue" else out

    b = rows_spanning_2_31_elements(3, 32)
    x = torch.randn(3, 32, device=DEVICE)
    check_exact(f, x, b, expect_fused=True)
    want = (x + b) * 2.0 if kind == "prologue" else x * 2.0 * b
    torch.testing.assert_close(compiled(f, x, b, fusion=True)[0], want)


@pytest.mark.parametrize("epilogue", [
    lambda out, b: out[:, None] * b[None, :],  # an outer product: each element stored once, used 7 times
    lambda out, b: out + b[:, None],  # broadcast to (7, 256) against a column
], ids=["outer_product", "broadcast_to_more_rows"])
def test_an_epilogue_whose_result_is_larger_than_the_output_is_not_fused(epilogue, caplog):
    """A fused epilogue computes one result element per element the kernel stores: a result of
    another shape (here 7 for each) cannot be computed at the stores (found by mutating the
    refusal away: the fused result had the output's shape)."""
    def f(x, b):
        return epilogue(copy(x), b)

    x, b = torch.randn(256, device=DEVICE), torch.randn(7, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(f, x, b, expect_fused=False)
    assert "has another shape or layout than the written tensor" in caplog.text, caplog.text
