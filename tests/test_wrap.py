"""wrap_triton as call and decorator, the eager fast path, interpreted kernels, writes=."""

from unittest import mock

import pytest
import torch
import triton
from torch.fx.experimental.proxy_tensor import make_fx

import torch_triton_hop
from torch_triton_hop import wrap_triton
from torch_triton_hop.errors import UnsupportedTritonKernelError

import core_kernels as K


def test_interpreted_kernels_are_traced():
    """Under TRITON_INTERPRET=1 the kernel is an InterpretedFunction; we still record a node."""
    assert type(K.add_kernel).__name__ == "InterpretedFunction"
    gm = make_fx(lambda x: K.scale_inplace[(1,)](x, 4, 3.0, BLOCK=16))(torch.ones(4))
    assert "user_triton_kernel_mutation" in gm.code


def test_eager_call_launches_without_hop_dispatch():
    x = torch.ones(8)
    with mock.patch.object(torch_triton_hop.triton_kernel_wrapper_mutation, "__call__",
                           side_effect=AssertionError("HOP dispatched")):
        K.scale_inplace[(1,)](x, 8, 3.0, BLOCK=16)
        K.scale_inplace.run(x, 8, 2.0, grid=(1,), BLOCK=16)
    torch.testing.assert_close(x, torch.full((8,), 6.0))


class _Subclass(torch.Tensor):
    pass


class _PassThroughMode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("context", ["fake_mode", "function_mode", "subclass"])
def test_anything_that_could_intercept_takes_the_hop(context):
    calls = []
    real = type(torch_triton_hop.triton_kernel_wrapper_mutation).__call__

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    x = torch.ones(8)
    with mock.patch.object(type(torch_triton_hop.triton_kernel_wrapper_mutation), "__call__", spy):
        if context == "fake_mode":
            from torch._subclasses.fake_tensor import FakeTensorMode

            with FakeTensorMode() as mode:
                K.scale_inplace[(1,)](mode.from_tensor(x), 8, 3.0, BLOCK=16)
        elif context == "function_mode":
            with _PassThroughMode():
                K.scale_inplace[(1,)](x, 8, 3.0, BLOCK=16)
        else:
            K.scale_inplace[(1,)](x.as_subclass(_Subclass), 8, 3.0, BLOCK=16)
    assert calls


def test_decorator_and_call_forms_agree():
    wrapped = wrap_triton(K.add_kernel)
    assert wrap_triton(wrapped) is wrapped
    assert wrapped.arg_names == K.add_kernel.arg_names  # behaves like the kernel for inspection
    x, y, out = torch.randn(40), torch.randn(40), torch.empty(40)
    wrapped[(3,)](x, y, out, 40, BLOCK=16)
    torch.testing.assert_close(out, x + y)


def test_rejects_non_kernels_and_bad_writes():
    with pytest.raises(UnsupportedTritonKernelError, match=r"expected a @triton.jit kernel.*\(got 'function'\)"):
        wrap_triton(lambda: None)
    with pytest.raises(UnsupportedTritonKernelError, match=r"\['BLOCK', 'nope'\], which are not tensor parameters"):
        wrap_triton(K.add_kernel, writes=["BLOCK", "nope"])
    with pytest.raises(UnsupportedTritonKernelError, match="without a grid"):
        wrap_triton(K.add_kernel)(torch.zeros(1))


def test_autotuned_kernel_runs_eagerly_on_the_interpreter():
    """triton's own autotuner needs a GPU driver; our launch runs the first config instead."""
    x, y, out = torch.randn(40), torch.randn(40), torch.empty(40)
    wrap_triton(K.add_autotuned)[lambda meta: (triton.cdiv(40, meta["BLOCK"]),)](x, y, out, 40)
    torch.testing.assert_close(out, x + y)
