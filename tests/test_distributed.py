"""Launches on DTensors (one process, gloo): a clear error with the way out, and the way out
works. See [Note: Kernels called on DTensors]."""

import pytest
import torch
import torch.distributed as dist

from torch_triton_hop import wrap_triton
from torch_triton_hop.errors import UnsupportedTritonKernelError

import core_kernels as K

pytestmark = pytest.mark.interpreter

if not dist.is_available():
    pytest.skip("torch.distributed is not available", allow_module_level=True)

from torch.distributed.device_mesh import init_device_mesh  # noqa: E402
from torch.distributed.tensor import DTensor, Shard, distribute_tensor  # noqa: E402
from torch.distributed.tensor.experimental import local_map  # noqa: E402


@pytest.fixture(scope="module")
def mesh():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield init_device_mesh("cpu", (1,))
    dist.destroy_process_group()


def add(x, y):
    out = torch.empty_like(x)
    wrap_triton(K.add_kernel)[(1,)](x, y, out, x.numel(), BLOCK=64)
    return out


def test_a_launch_on_dtensors_names_the_kernel_and_the_way_out(mesh):
    x, y = (distribute_tensor(torch.randn(8), mesh, [Shard(0)]) for _ in range(2))
    with pytest.raises(UnsupportedTritonKernelError,
                       match=r"kernel 'add_kernel' was launched on DTensor arguments .*x_ptr.*local_map"):
        add(x, y)


def test_under_torch_compile_too(mesh):
    torch._dynamo.reset()
    x, y = (distribute_tensor(torch.randn(8), mesh, [Shard(0)]) for _ in range(2))
    with pytest.raises(Exception, match="launched on DTensor arguments"):
        torch.compile(add, backend="aot_eager", fullgraph=True)(x, y)


def test_local_map_launches_on_the_local_shards(mesh):
    x, y = (distribute_tensor(torch.randn(8), mesh, [Shard(0)]) for _ in range(2))
    out = local_map(add, out_placements=[Shard(0)], in_placements=([Shard(0)], [Shard(0)]))(x, y)
    assert isinstance(out, DTensor)
    torch.testing.assert_close(out.full_tensor(), x.full_tensor() + y.full_tensor())
