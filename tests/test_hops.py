"""The HOPs' dispatch rules: functional clones keep strides, subclasses see nested tensors."""

import pytest
import torch

from torch_triton_hop import (
    kernel_side_table,
    triton_kernel_wrapper_functional,
    triton_kernel_wrapper_mutation,
)

import core_kernels as K

pytestmark = pytest.mark.interpreter  # launches kernels on CPU tensors


def _node_args(x, n=4, scale=2.0):
    key = kernel_side_table.add_kernel(K.scale_inplace)
    return dict(kernel=key, constant_args="{}", configs="[]", grids=[1, 1, 1],
                kwargs={"x_ptr": x, "n": n, "scale": scale, "BLOCK": 16})


def test_functional_dense_clones_written_tensors_with_their_strides():
    base = torch.arange(8.0)
    x = base[::2]  # non-contiguous
    (out,) = triton_kernel_wrapper_functional(**_node_args(x), tensors_to_clone=["x_ptr"])
    assert out.stride() == x.stride()
    torch.testing.assert_close(x, torch.tensor([0.0, 2.0, 4.0, 6.0]))  # input untouched


def test_mutation_dense_launches_in_place():
    x = torch.ones(4)
    triton_kernel_wrapper_mutation(**_node_args(x))
    torch.testing.assert_close(x, torch.full((4,), 2.0))


class _Subclass(torch.Tensor):
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_tensor_subclasses_nested_in_kwargs_are_seen_by_dispatch():
    """A subclass inside the kwargs dict reaches HOP dispatch (which asks it for a rule), not a raw launch."""
    x = torch.ones(4).as_subclass(_Subclass)
    with pytest.raises(NotImplementedError, match="_Subclass"):
        triton_kernel_wrapper_mutation(**_node_args(x))


class _Wrapped(torch.Tensor):
    """A wrapper subclass with a rule for the mutation HOP: the rule launches on the inner tensor."""

    @staticmethod
    def __new__(cls, inner):
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype, device=inner.device)

    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise AssertionError(f"{func} should have used the HOP rule")


@triton_kernel_wrapper_mutation.py_impl(_Wrapped)
def _wrapped_rule(*, kwargs, **node):
    _wrapped_rule.calls += 1
    unwrapped = {k: v.inner if isinstance(v, _Wrapped) else v for k, v in kwargs.items()}
    return triton_kernel_wrapper_mutation(**node, kwargs=unwrapped)


_wrapped_rule.calls = 0


def test_a_rule_registered_for_a_subclass_runs_for_nested_tensors():
    """On every supported torch: torch 2.11 and 2.12's HOP dispatch never looks inside the kwargs dict."""
    inner = torch.ones(4)
    triton_kernel_wrapper_mutation(**_node_args(_Wrapped(inner)))
    assert _wrapped_rule.calls == 1
    torch.testing.assert_close(inner, torch.full((4,), 2.0))
