"""Kernels, rules and a worker for the sharding tests (importable, so spawned ranks find them)."""

import os
import traceback

import torch
import torch.distributed as dist
import triton
import triton.language as tl

import torch_triton_hop
from torch_triton_hop import wrap_triton


@triton.jit
def scale_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def row_sum_in_place(x_ptr, n_cols, stride, BLOCK: tl.constexpr):
    """x[row, 0] = sum(x[row, :]): rows are independent, columns are not."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    values = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(x_ptr + row * stride, tl.sum(values, axis=0))


def register_rules():
    from torch.distributed.tensor import Replicate, Shard

    torch_triton_hop.register_sharding(
        scale_add,
        placements=[{"x_ptr": Shard(0), "y_ptr": Shard(0), "out_ptr": Shard(0)},
                    {"x_ptr": Replicate(), "y_ptr": Replicate(), "out_ptr": Replicate()}],
        local_scalars=lambda x_ptr, alpha, **args: {"n": x_ptr.numel(), "alpha": alpha},
        grid=lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),))
    torch_triton_hop.register_sharding(
        row_sum_in_place,
        placements=[{"x_ptr": Shard(0)}, {"x_ptr": Replicate()}],
        local_scalars=lambda x_ptr, **args: {"n_cols": x_ptr.shape[1], "stride": x_ptr.stride(0)},
        grid=lambda meta: (meta["x_ptr"].shape[0],))


def scale_add_call(x, y, alpha=2.0):
    out = torch.empty_like(x)
    # host code sizes the launch from what it holds: the global shape of a DTensor
    wrap_triton(scale_add)[(triton.cdiv(x.numel(), 32),)](x, y, out, x.numel(), alpha, BLOCK=32)
    return out


def row_sum_call(x):
    wrap_triton(row_sum_in_place)[(x.shape[0],)](x, x.shape[1], x.stride(0), BLOCK=16)
    return x


def worker(rank, world_size, init_file, out_dir):
    result = {"rank": rank}
    try:
        dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
        result.update(_checks(world_size))
    except Exception:
        result["error"] = traceback.format_exc()
    finally:
        torch.save(result, os.path.join(out_dir, f"rank{rank}.pt"))
        if dist.is_initialized():
            dist.destroy_process_group()
        # The result is saved: leave without the interpreter's teardown, where gloo's threads
        # sometimes end the process with std::terminate (SIGABRT), which spawn reports as a failure.
        os._exit(0)


def _checks(world_size):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    register_rules()
    mesh = init_device_mesh("cpu", (world_size,))
    torch.manual_seed(0)
    x_full, y_full, m_full = torch.randn(96), torch.randn(96), torch.randn(8, 12)
    x = distribute_tensor(x_full, mesh, [Shard(0)])
    y_replicated = distribute_tensor(y_full, mesh, [Replicate()])
    m = distribute_tensor(m_full.clone(), mesh, [Shard(0)])
    results = {}
    # y is read only: redistributed from Replicate to the rule's Shard(0)
    out = scale_add_call(x, y_replicated)
    results["eager"] = (out.full_tensor(), tuple(out.placements))
    row_sum_call(m)
    results["in_place"] = m.full_tensor()
    torch._dynamo.reset()
    compiled = torch.compile(scale_add_call, fullgraph=True)
    out = compiled(x, distribute_tensor(y_full, mesh, [Shard(0)]))
    results["compiled"] = out.full_tensor()
    m2 = distribute_tensor(m_full.clone(), mesh, [Shard(0)])
    torch.compile(row_sum_call, fullgraph=True)(m2)
    results["compiled_in_place"] = m2.full_tensor()
    try:  # a written argument is never redistributed
        row_sum_call(distribute_tensor(m_full.clone(), mesh, [Shard(1)]))
        results["written_moved"] = "no error"
    except Exception as error:  # noqa: BLE001 - the message is checked by the test
        results["written_moved"] = str(error)
    results["expected"] = (x_full * 2.0 + y_full, m_full)
    return results
