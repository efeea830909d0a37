"""Launch inputs that triton would silently get wrong are refused (issue 15, part 3).

See [Note: Launch checks]. Covered here, each at capture (make_fx real / fake / symbolic,
torch.compile) and, for a negative size in a tuple grid, eagerly:
  - a grid with a negative size (a tuple, a list, a callable's result, a symbolic size
    whose value is negative; eager `k[grid]` and `k.run(grid=...)`), while a zero size runs
    no program and raises nothing;
  - a grid larger than the device allows (CUDA: 2**31-1 x 65535 x 65535) and one with
    2**31 programs or more (triton's launcher counts them in a C int);
  - an int argument outside [-2**63, 2**64) and a finite float beyond float32's range;
  - tensor arguments on two devices outside the interpreter (under it, allowed).
CPU tests use a non-interpreted JITFunction on fake CUDA tensors (capture never launches);
tests marked gpu launch for real.
"""

import pytest
import torch
import triton
import triton.language as tl
from torch.fx.experimental.proxy_tensor import make_fx
from triton.runtime.jit import JITFunction

from torch_triton_hop import wrap_triton
from torch_triton_hop.errors import UnsupportedTritonKernelError


def add_one_fn(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


def add_scalar_fn(x_ptr, out_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + value, mask=offs < n)


add_one = wrap_triton(triton.jit(add_one_fn))
add_scalar = wrap_triton(triton.jit(add_scalar_fn))
# Compiled for a GPU even under TRITON_INTERPRET=1: capture checks it without launching.
add_one_compiled = wrap_triton(JITFunction(add_one_fn))

NEGATIVE = r"grid of kernel 'add_one_fn' has a negative size \(got \(-1,[ 1]*\)\)\. .*raises nothing.*size of 0 is valid"


def launch(grid, kernel=add_one):
    def f(x):
        out = torch.full_like(x, -7.0)
        kernel[grid](x, out, x.numel(), BLOCK=16)
        return out

    return f


def capture(fn, *args, mode="fake"):
    return make_fx(fn, tracing_mode=mode)(*args)


# --- negative grids ----------------------------------------------------------------------

@pytest.mark.interpreter
@pytest.mark.parametrize("grid", [(-1,), (-1, 1)], ids=["rank1", "rank2"])
def test_a_negative_tuple_grid_is_refused_eagerly(grid):
    """Before: the interpreter ran range(-1) programs, none, and returned without a word."""
    with pytest.raises(UnsupportedTritonKernelError, match=NEGATIVE):
        launch(grid)(torch.zeros(8))


@pytest.mark.interpreter
def test_a_negative_grid_given_to_run_is_refused_eagerly():
    x = torch.zeros(8)
    with pytest.raises(UnsupportedTritonKernelError, match=NEGATIVE):
        add_one.run(x, torch.empty_like(x), 8, BLOCK=16, grid=(-1,), warmup=False)


@pytest.mark.interpreter
def test_a_zero_size_grid_stays_valid_and_runs_no_program():
    for fn in (launch((0,)), launch(lambda meta: (0,))):
        assert fn(torch.zeros(8)).tolist() == [-7.0] * 8
        gm = capture(fn, torch.zeros(8), mode="real")
        assert gm(torch.zeros(8)).tolist() == [-7.0] * 8


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
@pytest.mark.parametrize("grid", [(-1,), [-1], lambda meta: (-1,)], ids=["tuple", "list", "callable"])
def test_a_negative_grid_is_refused_at_capture(mode, grid):
    with pytest.raises(UnsupportedTritonKernelError, match=NEGATIVE):
        capture(launch(grid), torch.zeros(8), mode=mode)


@pytest.mark.interpreter
def test_a_symbolic_grid_size_is_checked_by_its_value_and_guarded():
    """(n - 10,) is negative for n = 8: refused; for n = 40 it is captured (with a guard
    n >= 10 under torch.compile, so an n < 10 recompiles and is refused)."""
    fn = launch(lambda meta: (meta["n"] - 10,))
    with pytest.raises(UnsupportedTritonKernelError, match=r"negative size \(got \(-2,\)\)"):
        capture(fn, torch.zeros(8), mode="real")
    with pytest.raises(UnsupportedTritonKernelError, match="negative size"):
        capture(fn, torch.zeros(8), mode="symbolic")
    assert "user_triton_kernel_mutation" in capture(fn, torch.zeros(40), mode="symbolic").code

    torch._dynamo.reset()
    compiled = torch.compile(fn, dynamic=True, fullgraph=True)
    assert compiled(torch.zeros(40)).tolist() == [1.0] * 40
    with pytest.raises(Exception, match="negative size"):
        compiled(torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("grid", [(-1,), lambda meta: (-1,)], ids=["tuple", "callable"])
def test_a_negative_grid_is_refused_by_torch_compile(grid):
    torch._dynamo.reset()
    with pytest.raises(Exception, match=NEGATIVE):
        torch.compile(launch(grid), fullgraph=True)(torch.zeros(8))


# --- grids beyond what a launch allows -----------------------------------------------------

def on_cuda(grid, kernel=add_one_compiled):
    """A launch on a fake CUDA tensor: the device's limits apply (capture only)."""
    def f(x):
        x = torch.empty(x.shape, device="cuda")
        out = torch.empty_like(x)
        kernel[grid](x, out, x.numel(), BLOCK=16)
        return out

    return f


@pytest.mark.parametrize("grid", [(1, 65536), (1, 1, 65536), (2**31,)], ids=["y", "z", "x"])
def test_a_grid_beyond_cudas_limits_is_refused_at_capture(grid):
    with pytest.raises(UnsupportedTritonKernelError,
                       match=r"grid of kernel 'add_one_fn' is larger than a launch on cuda:0 allows .*"
                       r"at most \(2147483647, 65535, 65535\) programs per dimension"):
        capture(on_cuda(grid), torch.zeros(8))


def test_a_grid_of_2_to_the_31_programs_is_refused_at_capture():
    """Within CUDA's per-dimension limits, but triton's launcher multiplies the sizes in a
    C int: 2**31 programs overflow to a negative count and it launches nothing."""
    with pytest.raises(UnsupportedTritonKernelError, match=r"larger than a launch on cuda:0 allows \(got "
                       r"\(65536, 32768, 1\)\)\. Triton's launcher counts the programs in a 32-bit int"):
        capture(on_cuda((2**16, 2**15)), torch.zeros(8))


def test_a_grid_at_cudas_limits_is_captured():
    gm = capture(on_cuda((2**15, 65535)), torch.zeros(8))
    assert "grids = [32768, 65535, 1]" in gm.code


@pytest.mark.interpreter
def test_the_interpreter_has_no_grid_limits():
    """It runs programs in a Python loop: a large grid is slow, not wrong."""
    gm = capture(launch((1, 70000)), torch.zeros(8))
    assert "grids = [1, 70000, 1]" in gm.code


# --- scalars out of their triton type's range ----------------------------------------------

def with_value(value):
    def f(x):
        out = torch.empty_like(x)
        add_scalar[(1,)](x, out, x.numel(), value, BLOCK=16)
        return out

    return f


@pytest.mark.interpreter
@pytest.mark.parametrize("value", [2**64, -2**63 - 1])
def test_an_int_outside_64_bits_is_refused_at_capture(value):
    with pytest.raises(UnsupportedTritonKernelError,
                       match=rf"argument 'value' of kernel 'add_scalar_fn' is an int outside the 64-bit range "
                       rf"\(got {value}\)"):
        capture(with_value(value), torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("value", [1e39, -3.5e38])
def test_a_float_beyond_float32_is_refused_at_capture(value):
    """Before: triton passed it as float32, infinity, without a word."""
    with pytest.raises(UnsupportedTritonKernelError, match=r"'value' .* is a float beyond float32's range"):
        capture(with_value(value), torch.zeros(8))
    with pytest.raises(Exception, match="float beyond float32"):
        torch._dynamo.reset()
        torch.compile(with_value(value), fullgraph=True)(torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("value", [2**63, -2**63, 3.0e38, float("inf"), float("-inf")])
def test_values_at_the_edges_of_the_range_are_captured(value):
    capture(with_value(value), torch.zeros(8))


# --- tensors on several devices ------------------------------------------------------------

def test_tensors_on_two_devices_are_refused_outside_the_interpreter():
    def f(x):
        out = torch.empty(8, device="cuda")
        add_one_compiled[(1,)](x, out, x.numel(), BLOCK=16)
        return out

    with pytest.raises(UnsupportedTritonKernelError,
                       match=r"tensor arguments of kernel 'add_one_fn' are on several devices "
                       r"\(got \{'x_ptr': 'cpu', 'out_ptr': 'cuda:0'\}\)"):
        capture(f, torch.zeros(8))


@pytest.mark.interpreter
def test_the_interpreter_accepts_tensors_on_several_devices():
    """It runs every kernel on host copies of its tensors."""
    def f(x):
        out = torch.empty(8, device="meta")
        add_one[(1,)](x, out, x.numel(), BLOCK=16)
        return out

    assert "user_triton_kernel_mutation" in capture(f, torch.zeros(8)).code


# --- on a GPU --------------------------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_negative_and_oversized_grids_and_mixed_devices_are_refused():
    """On a real device: eagerly, under make_fx and torch.compile."""
    kernel = wrap_triton(triton.jit(add_one_fn))
    x = torch.zeros(8, device="cuda")
    with pytest.raises(UnsupportedTritonKernelError, match="negative size"):
        launch((-1,), kernel)(x)
    for grid, match in (((-1,), "negative size"), ((1, 65536), "larger than a launch on cuda"),
                        ((2**16, 2**15), "32-bit int")):
        with pytest.raises(UnsupportedTritonKernelError, match=match):
            capture(launch(grid, kernel), x)
        torch._dynamo.reset()
        with pytest.raises(Exception, match=match):
            torch.compile(launch(grid, kernel), fullgraph=True)(x)

    def mixed(x):
        out = torch.empty(8)  # on the CPU
        kernel[(1,)](x, out, x.numel(), BLOCK=16)
        return out

    with pytest.raises(UnsupportedTritonKernelError, match="several devices"):
        capture(mixed, x)
