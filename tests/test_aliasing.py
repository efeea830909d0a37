"""Tensor arguments that share memory, one of them written: every capture path gives eager's
result. See [Note: Arguments that share memory]."""

import os

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from torch_triton_hop import wrap_triton
from torch_triton_hop.errors import UnsupportedTritonKernelError

import core_kernels as K

pytestmark = pytest.mark.any_device
DEVICE = "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


def same_tensor_twice(buf):
    """Liger's in-place RMSNorm backward: dY and dX are one tensor."""
    wrap_triton(K.add_kernel)[(1,)](buf, buf, buf, buf.numel(), BLOCK=64)
    return buf


def overlapping_views(buf):
    """x = buf[0:8], out = buf[4:12]: writes land where later programs... one program reads x."""
    wrap_triton(K.add_kernel)[(1,)](buf[0:8], buf[0:8], buf[4:12], 8, BLOCK=8)
    return buf


def strided_alias(buf):
    """A (4, 4) block and its transpose: the same memory with other strides."""
    m = buf[:16].view(4, 4)
    wrap_triton(K.write_then_read)[(1,)](m.t().contiguous().view(-1), m.t(), buf[16:32], 16, BLOCK=16)
    return buf


def input_and_its_view(buf):
    """The input itself is written; a view of it is read after the write."""
    wrap_triton(K.write_then_read)[(1,)](buf, buf[4:], buf[4:8].new_empty(4), 4, BLOCK=4)
    return buf


def reads_its_own_write_through_an_alias(buf):
    out = torch.empty_like(buf)
    wrap_triton(K.write_then_read)[(1,)](buf, buf, out, buf.numel(), BLOCK=64)
    return buf, out


def untouched_alias(buf):
    """An argument the kernel never touches may alias a written one (Liger's modulated RMSNorm)."""
    out = buf[8:16]
    wrap_triton(K.untouched_argument)[(1,)](buf[:8], out, out, 8, BLOCK=8)
    return buf


CASES = [same_tensor_twice, overlapping_views, strided_alias, input_and_its_view,
         reads_its_own_write_through_an_alias, untouched_alias]


def eager(fn, buf):
    buf = buf.clone()
    out = fn(buf)
    return buf, out


def traced(fn):
    return {
        "make_fx(functionalize)": lambda buf: make_fx(torch.func.functionalize(fn))(buf.clone())(buf),
        "export": lambda buf: torch.export.export(_Module(fn), (buf.clone(),), strict=False).module()(buf),
        "compile aot_eager": lambda buf: torch.compile(fn, fullgraph=True, backend="aot_eager")(buf),
        "compile inductor": lambda buf: torch.compile(fn, fullgraph=True)(buf),
    }


class _Module(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, buf):
        return self.fn(buf)


@pytest.mark.parametrize("path", list(traced(same_tensor_twice)))
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_shared_memory_gives_eager_results(fn, path):
    torch._dynamo.reset()
    start = torch.arange(32.0, device=DEVICE)
    expected_buf, expected_out = eager(fn, start)
    buf = start.clone()
    out = traced(fn)[path](buf)
    torch.testing.assert_close(buf, expected_buf)  # the input is mutated exactly as eagerly
    torch.testing.assert_close(out, expected_out)


def test_shared_memory_of_different_dtypes_is_refused_clearly():
    def f(buf):
        wrap_triton(K.add_kernel)[(1,)](buf.view(torch.int32)[:4].view(torch.float32), buf[:4], buf[:4], 4, BLOCK=4)
        return buf

    def reinterpreting(buf):
        ints = buf.view(torch.int32)
        wrap_triton(K.write_then_read)[(1,)](buf[:4], ints[:4], buf[8:12], 4, BLOCK=4)
        return buf

    with pytest.raises(UnsupportedTritonKernelError, match="share memory with different dtypes"):
        make_fx(torch.func.functionalize(reinterpreting))(torch.ones(16, device=DEVICE))


class _TwoZeros(torch.autograd.Function):
    """Two equal torch.zeros written by one launch: AOTAutograd's CSE makes them one graph
    node, which must not make them one buffer (they never shared memory in the program)."""

    @staticmethod
    def forward(ctx, x):
        a, b = torch.zeros_like(x), torch.zeros_like(x)
        wrap_triton(K.two_outputs)[(1,)](x, a, b, x.numel(), BLOCK=64)
        ctx.save_for_backward(a, b)
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * a + b


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_equal_values_merged_by_cse_are_still_separate_buffers(backend):
    torch._dynamo.reset()
    x = torch.arange(8.0, device=DEVICE).requires_grad_()
    _TwoZeros.apply(x).sum().backward()
    expected = x.grad.clone()  # (x + 1) + 2x
    x.grad = None
    torch.compile(lambda t: _TwoZeros.apply(t).sum(), fullgraph=True, backend=backend)(x).backward()
    torch.testing.assert_close(x.grad, expected)
