"""A tensor-parallel transformer MLP block whose norm and activation are wrapped kernels with
sharding rules (importable, so spawned ranks find it). Sequence parallel RMSNorm (rows
sharded), column-parallel gate/up projections, a SwiGLU kernel on the hidden shards, a
row-parallel down projection back to sequence shards."""

import os
import traceback

import torch
import torch.distributed as dist
import triton
import triton.language as tl

import torch_triton_hop
from torch_triton_hop import wrap_triton

SEQ, DIM, HIDDEN, EPS = 8, 16, 32, 1e-6


@triton.jit
def rms_norm_forward(x_ptr, w_ptr, y_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(y_ptr + row * n_cols + cols, x * rstd * w, mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rms_norm_backward(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_rows_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dy = tl.load(dy_ptr + row * n_cols + cols, mask=mask, other=0.0)
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    rstd = tl.load(rstd_ptr + row)
    x_hat = x * rstd
    dx_hat = dy * w
    dx = rstd * (dx_hat - x_hat * (tl.sum(dx_hat * x_hat, axis=0) / n_cols))
    tl.store(dx_ptr + row * n_cols + cols, dx, mask=mask)
    tl.store(dw_rows_ptr + row * n_cols + cols, dy * x_hat, mask=mask)


@triton.jit
def swiglu_forward(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    tl.store(c_ptr + offs, a * tl.sigmoid(a) * tl.load(b_ptr + offs, mask=mask), mask=mask)


@triton.jit
def swiglu_backward(dc_ptr, a_ptr, b_ptr, da_ptr, db_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    dc = tl.load(dc_ptr + offs, mask=mask)
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    sig = tl.sigmoid(a)
    tl.store(da_ptr + offs, dc * b * (sig + a * sig * (1 - sig)), mask=mask)
    tl.store(db_ptr + offs, dc * a * sig, mask=mask)


def register_rules():
    from torch.distributed.tensor import Replicate, Shard

    rows = lambda *names: {name: Shard(0) for name in names}  # noqa: E731
    torch_triton_hop.register_sharding(
        rms_norm_forward, placements=[{**rows("x_ptr", "y_ptr", "rstd_ptr"), "w_ptr": Replicate()}],
        local_scalars=lambda x_ptr, eps, **args: {"n_cols": x_ptr.shape[1], "eps": eps},
        grid=lambda meta: (meta["x_ptr"].shape[0],))
    torch_triton_hop.register_sharding(
        rms_norm_backward, placements=[{**rows("dy_ptr", "x_ptr", "rstd_ptr", "dx_ptr", "dw_rows_ptr"),
                                        "w_ptr": Replicate()}],
        local_scalars=lambda x_ptr, **args: {"n_cols": x_ptr.shape[1]},
        grid=lambda meta: (meta["x_ptr"].shape[0],))
    # elementwise: any placement, as long as every argument has the same one
    same = lambda names, p: {name: p for name in names}  # noqa: E731
    for kernel, names in ((swiglu_forward, ("a_ptr", "b_ptr", "c_ptr")),
                          (swiglu_backward, ("dc_ptr", "a_ptr", "b_ptr", "da_ptr", "db_ptr"))):
        torch_triton_hop.register_sharding(
            kernel, placements=[same(names, p) for p in (Shard(1), Shard(0), Replicate())],
            local_scalars=lambda first=names[0], **args: {"n": args[first].numel()},
            grid=lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),))


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        rows, cols = x.shape
        y = torch.empty_like(x)
        rstd = torch.empty_like(x[:, 0])
        wrap_triton(rms_norm_forward)[(rows,)](x, weight, y, rstd, cols, EPS, BLOCK=triton.next_power_of_2(cols))
        ctx.save_for_backward(x, weight, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        rows, cols = x.shape
        dy = dy.contiguous()
        dx, dw_rows = torch.empty_like(x), torch.empty_like(x)
        wrap_triton(rms_norm_backward)[(rows,)](dy, x, weight, rstd, dx, dw_rows, cols,
                                                BLOCK=triton.next_power_of_2(cols))
        return dx, dw_rows.sum(0)


class SwiGLUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        c = torch.empty_like(a)
        wrap_triton(swiglu_forward)[(triton.cdiv(a.numel(), 64),)](a, b, c, a.numel(), BLOCK=64)
        ctx.save_for_backward(a, b)
        return c

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        dc = dc.contiguous()
        da, db = torch.empty_like(a), torch.empty_like(b)
        wrap_triton(swiglu_backward)[(triton.cdiv(a.numel(), 64),)](dc, a, b, da, db, a.numel(), BLOCK=64)
        return da, db


class RMSNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(DIM))

    def forward(self, x):
        return RMSNormFunction.apply(x, self.weight)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = RMSNorm()
        self.gate = torch.nn.Linear(DIM, HIDDEN, bias=False)
        self.up = torch.nn.Linear(DIM, HIDDEN, bias=False)
        self.down = torch.nn.Linear(HIDDEN, DIM, bias=False)

    def forward(self, x):
        h = self.norm(x)
        return x + self.down(SwiGLUFunction.apply(self.gate(h), self.up(h)))


def reference(seed=0):
    """The block on one process (full tensors), its output and gradients."""
    torch.manual_seed(seed)
    block = Block()
    x = torch.randn(SEQ, DIM, requires_grad=True)
    out = block(x)
    out.backward(torch.ones_like(out))
    return block, x, out


def worker(rank, world_size, init_file, out_dir, compiled):
    result = {"rank": rank}
    try:
        dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
        result.update(_run(rank, world_size, compiled))
    except Exception:
        result["error"] = traceback.format_exc()
    finally:
        torch.save(result, os.path.join(out_dir, f"rank{rank}.pt"))
        if dist.is_initialized():
            dist.destroy_process_group()


def _run(rank, world_size, compiled):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel, SequenceParallel,
                                                   parallelize_module)

    register_rules()
    mesh = init_device_mesh("cpu", (world_size,))
    block, x_full, _ = reference()
    parallelize_module(block, mesh, {
        "norm": SequenceParallel(sequence_dim=0),
        "gate": ColwiseParallel(input_layouts=Shard(0), use_local_output=False),
        "up": ColwiseParallel(input_layouts=Shard(0), use_local_output=False),
        "down": RowwiseParallel(input_layouts=Shard(1), output_layouts=Shard(0)),
    })
    for p in block.parameters():
        p.grad = None
    rows = SEQ // world_size
    x = x_full.detach()[rank * rows:(rank + 1) * rows].clone().requires_grad_()
    run = torch.compile(block, fullgraph=True) if compiled else block
    out = run(x)
    out.backward(torch.ones_like(out))
    grads = {name: (p.grad.full_tensor() if hasattr(p.grad, "full_tensor") else p.grad)
             for name, p in block.named_parameters()}
    return {"out": out.detach(), "x_grad": x.grad, "grads": grads}
