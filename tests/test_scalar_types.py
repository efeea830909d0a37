"""Scalar arguments reach kernels compiled by inductor with the types triton's JIT gives them
eagerly. See [Note: Scalar argument types under inductor]."""

import os

import pytest
import torch
import triton
import triton.language as tl

from torch_triton_hop import wrap_triton

import core_kernels as K
from torch_triton_hop._scalar_types import eager_scalar_types

ON_GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"


def test_scalar_types_are_triton_jit_types():
    """floats fp32, bools u1, ints by value, bool tensors *u1; ints equal to 1, other tensors,
    None and constexprs are left to inductor (it makes 1 a constant, as triton does)."""
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    shape_env = ShapeEnv()
    symbolic_float = shape_env.create_unbacked_symfloat()
    arguments = {"x_ptr": torch.empty(1), "scale": 0.9, "whole": 2.0, "flag": True, "off": False,
                 "n": 7, "one": 1, "zero": 0, "big": 2**31, "huge": 2**63, "negative": -2**31 - 1,
                 "none": None, "BLOCK": 16, "dynamic_scale": symbolic_float,
                 "mask_ptr": torch.empty(1, dtype=torch.bool)}
    assert eager_scalar_types(arguments, constexprs={"BLOCK"}) == {
        "scale": "fp32", "whole": "fp32", "flag": "u1", "off": "u1", "n": "i32", "zero": "i32",
        "big": "i64", "huge": "u64", "negative": "i64", "dynamic_scale": "fp32", "mask_ptr": "*u1",
    }


@triton.jit
def decay_kernel(x_ptr, out_ptr, scale, T, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for t in range(T):
        acc = acc * scale + tl.load(x_ptr + t * BLOCK + offs)
    tl.store(out_ptr + offs, acc)


def decay(x, shape_derived):
    """The issue's kernel: a loop-carried fp32 accumulator scaled by a Python float."""
    out = torch.empty(16, device=x.device)
    scale = x.shape[0] ** -0.5 if shape_derived else 0.9
    wrap_triton(decay_kernel)[(1,)](x, out, scale, x.shape[0] // 16, BLOCK=16)
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("shape_derived", [False, True], ids=["constant", "shape_derived"])
def test_float_scalars_compile_as_fp32_like_eager(shape_derived, dynamic):
    torch._dynamo.reset()
    x = torch.randn(64, device="cuda")
    compiled = torch.compile(lambda t: decay(t, shape_derived), fullgraph=True, dynamic=dynamic)
    torch.testing.assert_close(compiled(x), decay(x, shape_derived), rtol=0, atol=0)  # same fp32 arithmetic
    if dynamic:  # another size, same graph
        y = torch.randn(96, device="cuda")
        torch.testing.assert_close(compiled(y), decay(y, shape_derived), rtol=0, atol=0)


@triton.jit
def flag_kernel(x_ptr, out_ptr, flag, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if flag:
        x = x * 2
    tl.store(out_ptr + offs, x, mask=mask)


@pytest.mark.gpu
@pytest.mark.parametrize("flag", [True, False])
def test_bool_scalars_compile_like_eager(flag):
    torch._dynamo.reset()

    def f(x):
        out = torch.empty_like(x)
        wrap_triton(flag_kernel)[(1,)](x, out, flag, x.numel(), BLOCK=64)
        return out

    x = torch.randn(64, device="cuda")
    torch.testing.assert_close(torch.compile(f, fullgraph=True)(x), f(x), rtol=0, atol=0)


class _ScaleBothWays(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, p):
        ctx.p = p
        out = x.clone()
        K.scale_inplace[(triton.cdiv(out.numel(), 16),)](out, out.numel(), 1.0 - p, BLOCK=16)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        K.scale_inplace[(triton.cdiv(grad.numel(), 16),)](grad, grad.numel(), 1.0 - ctx.p, BLOCK=16)
        return (grad if ctx.p == 0.0 else grad * 1.0), None  # mamba's layer norm: `dropout_p == 0.0`


def _scale_by_default(x, p=0.0):  # a float input of the graph under dynamic=True
    return _ScaleBothWays.apply(x, p)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_float_the_backward_specializes_reaches_the_launches_as_that_number(backend):
    """mamba_ssm's layer_norm_fn under torch.compile(dynamic=True): its dropout_p (0.0, a float
    Dynamo makes a graph input) reaches the forward launch as `.item()` of that input, and the
    backward's `dropout_p == 0.0` specializes it. The launch kept the `.item()` node, whose
    unbacked binding was gone: inductor failed to lower it (KeyError: 'unbacked_bindings')."""
    torch._dynamo.reset()
    x = torch.randn(40, requires_grad=True, device="cuda" if ON_GPU else "cpu")
    out = torch.compile(_scale_by_default, fullgraph=True, dynamic=True, backend=backend)(x)
    (grad,) = torch.autograd.grad(out, x, torch.ones_like(out))
    assert torch.equal(out, x.detach()) and torch.equal(grad, torch.ones_like(x))
