"""Sharding rules: a kernel launched on DTensors runs on the local shards with local sizes.
See [Note: Sharding rules for user kernels]. One process (gloo) for the API and errors; two
spawned processes for real shards, where a global size reaching a local launch would show."""


import pytest
import torch
import torch.distributed as dist
import triton

import torch_triton_hop
from torch_triton_hop.errors import UnsupportedTritonKernelError

import sharding_workers as W
from ranks import run_ranks

pytestmark = pytest.mark.interpreter

if not dist.is_available():
    pytest.skip("torch.distributed is not available", allow_module_level=True)

from torch.distributed.device_mesh import init_device_mesh  # noqa: E402
from torch.distributed.tensor import DTensor, Shard, distribute_tensor  # noqa: E402


@pytest.fixture(scope="module")
def mesh():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield init_device_mesh("cpu", (1,))
    dist.destroy_process_group()


def test_a_rule_launches_on_the_local_shards(mesh):
    W.register_rules()
    x, y = (distribute_tensor(torch.randn(40), mesh, [Shard(0)]) for _ in range(2))
    out = W.scale_add_call(x, y)
    assert isinstance(out, DTensor) and tuple(out.placements) == (Shard(0),)
    torch.testing.assert_close(out.full_tensor(), x.full_tensor() * 2.0 + y.full_tensor())


def test_a_rule_may_name_the_last_dimension_as_minus_one(mesh):
    """DTensor stores Shard(-1) as Shard(ndim - 1); a rule written with Shard(-1), as tensor
    parallel plans often are, accepts it (it was refused: 'no placement ... can be reached')."""
    torch_triton_hop.register_sharding(
        W.scale_add, placements=[{"x_ptr": Shard(-1), "y_ptr": Shard(-1), "out_ptr": Shard(-1)}],
        local_scalars=lambda x_ptr, alpha, **args: {"n": x_ptr.numel(), "alpha": alpha},
        grid=lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),))
    try:
        x, y = (distribute_tensor(torch.randn(40), mesh, [Shard(0)]) for _ in range(2))
        out = W.scale_add_call(x, y)
        torch.testing.assert_close(out.full_tensor(), x.full_tensor() * 2.0 + y.full_tensor())
    finally:
        W.register_rules()


def test_a_scalar_the_rule_does_not_give_is_refused(mesh):
    torch_triton_hop.register_sharding(
        W.scale_add, placements=[{"x_ptr": Shard(0), "y_ptr": Shard(0), "out_ptr": Shard(0)}],
        local_scalars=lambda x_ptr, **args: {"n": x_ptr.numel()},  # forgets alpha
        grid=lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),))
    x, y = (distribute_tensor(torch.randn(40), mesh, [Shard(0)]) for _ in range(2))
    with pytest.raises(UnsupportedTritonKernelError, match=r"local_scalars does not give \['alpha'\]"):
        W.scale_add_call(x, y)


def test_mixing_dtensors_and_plain_tensors_is_refused(mesh):
    W.register_rules()
    x = distribute_tensor(torch.randn(40), mesh, [Shard(0)])
    with pytest.raises(UnsupportedTritonKernelError, match="DTensors and plain tensors"):
        W.scale_add_call(x, torch.randn(40))


def test_registration_checks_parameter_names():
    with pytest.raises(TypeError, match=r"\['x'\] are not parameters"):
        torch_triton_hop.register_sharding(W.scale_add, placements=[{"x": Shard(0)}], local_scalars=dict,
                                           grid=lambda meta: (1,))


def test_without_a_rule_the_error_names_both_ways_out(mesh):
    import core_kernels as K

    x = distribute_tensor(torch.randn(8), mesh, [Shard(0)])
    with pytest.raises(UnsupportedTritonKernelError, match="register_sharding.*local_map"):
        out = torch.empty_like(x)
        torch_triton_hop.wrap_triton(K.mul_kernel)[(1,)](x, x, out, 8, BLOCK=8)


def test_two_ranks_eager_and_compiled(tmp_path):
    """Two processes, each holding half of every Shard(0) tensor: the host code passes global
    sizes (x.numel() of the DTensor) and the rule replaces them with local ones."""
    for result in run_ranks(W.worker, (2, str(tmp_path / "init"), str(tmp_path)), tmp_path):
        expected_sum, m = result["expected"]
        out, placements = result["eager"]
        assert placements == (Shard(0),)
        torch.testing.assert_close(out, expected_sum)
        torch.testing.assert_close(result["compiled"], expected_sum)
        expected_rows = m.clone()
        expected_rows[:, 0] = m.sum(dim=1)
        torch.testing.assert_close(result["in_place"], expected_rows)
        torch.testing.assert_close(result["compiled_in_place"], expected_rows)
        assert "cannot be redistributed" in result["written_moved"]


def test_make_fx_records_the_local_launch(mesh):
    """Traced through DTensor, the graph holds the launch on the local shards with the rule's
    size (the local numel) and grid."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from torch_triton_hop import triton_kernel_wrapper_mutation

    W.register_rules()
    x, y = (distribute_tensor(torch.randn(40), mesh, [Shard(0)]) for _ in range(2))
    gm = make_fx(lambda x, y: W.scale_add_call(x, y))(x, y)
    (launch,) = [n for n in gm.graph.nodes if n.target is triton_kernel_wrapper_mutation]
    assert launch.kwargs["kwargs"]["n"] == 40 and launch.kwargs["grids"] == [2, 1, 1]


def test_torch_export_with_dtensor_inputs(mesh):
    """Non-strict torch.export traces through DTensor: the program launches on the local shards."""
    from torch_triton_hop import triton_kernel_wrapper_mutation

    class Model(torch.nn.Module):
        def forward(self, x, y):
            return W.scale_add_call(x, y)

    W.register_rules()
    x, y = (distribute_tensor(torch.randn(40), mesh, [Shard(0)]) for _ in range(2))
    ep = torch.export.export(Model(), (x, y), strict=False)
    (launch,) = [n for n in ep.graph.nodes if n.target is triton_kernel_wrapper_mutation]
    assert launch.kwargs["grids"] == [2, 1, 1]
    out = ep.module()(x, y)
    torch.testing.assert_close(out.full_tensor(), x.full_tensor() * 2.0 + y.full_tensor())


def test_a_rule_that_does_not_name_an_argument_says_so(mesh):
    torch_triton_hop.register_sharding(
        W.scale_add, placements=[{"x_ptr": Shard(0), "out_ptr": Shard(0)}],  # y_ptr missing
        local_scalars=lambda x_ptr, alpha, **args: {"n": x_ptr.numel(), "alpha": alpha},
        grid=lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),))
    x, y = (distribute_tensor(torch.randn(40), mesh, [Shard(0)]) for _ in range(2))
    with pytest.raises(UnsupportedTritonKernelError, match=r"no placement for the DTensor arguments \['y_ptr'\]"):
        W.scale_add_call(x, y)
