"""Training with wrapped kernels, in one process or in several (tests/test_distributed_training.py).

A small model: Linear -> RMSNorm -> Linear, where the RMSNorm is a `torch.autograd.Function`
whose forward and backward each launch a wrapped Triton kernel (the norm's weight is a
parameter the kernels read, and its gradient comes out of the backward kernel). Everything
here is importable by module path, so `torch.multiprocessing`'s spawn finds the worker in the
child processes, and the kernels are named `distributed_workers:<kernel>@<digest>` in
generated code.

`worker` runs one rank of a data-parallel training run (DDP or FSDP2, eager or compiled) on
its half of every batch and writes what it saw (losses, the full parameters after training,
the code inductor generated for the first step) to `<out_dir>/rank<rank>.pt`.
"""

import datetime
import os
import traceback

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from torch_triton_hop import wrap_triton

D_IN, HIDDEN, D_OUT = 8, 16, 4
EPS = 1e-6


@wrap_triton
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


@wrap_triton
@triton.jit
def rms_norm_backward(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_rows_ptr, n_cols, BLOCK: tl.constexpr):
    """dx of the row, and the row's share of dw (summed over rows by the caller)."""
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


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        rows, cols = x2.shape
        y = torch.empty_like(x2)
        rstd = torch.empty(rows, dtype=x2.dtype, device=x2.device)
        rms_norm_forward[(rows,)](x2, weight, y, rstd, cols, EPS, BLOCK=triton.next_power_of_2(cols))
        ctx.save_for_backward(x2, weight, rstd)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x2, weight, rstd = ctx.saved_tensors
        rows, cols = x2.shape
        dy2 = dy.reshape(rows, cols).contiguous()
        dx = torch.empty_like(x2)
        dw_rows = torch.empty_like(x2)
        rms_norm_backward[(rows,)](dy2, x2, weight, rstd, dx, dw_rows, cols, BLOCK=triton.next_power_of_2(cols))
        return dx.view(dy.shape), dw_rows.sum(0)


class RMSNorm(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return RMSNormFunction.apply(x, self.weight)


class ReferenceRMSNorm(RMSNorm):
    """The same module in plain torch ops: checks the kernels themselves."""

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


class Block(torch.nn.Module):
    def __init__(self, norm=RMSNorm):
        super().__init__()
        self.up = torch.nn.Linear(D_IN, HIDDEN)
        self.norm = norm(HIDDEN)
        self.down = torch.nn.Linear(HIDDEN, D_OUT)

    def forward(self, x):
        return self.down(self.norm(self.up(x)))


def make_model(device, norm=RMSNorm, seed=0):
    """The same initial parameters in every process."""
    torch.manual_seed(seed)
    return Block(norm).to(device)


def make_data(steps, batch, seed=1):
    """One (inputs, targets) batch per step, on CPU (they travel to the workers by pickle)."""
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(batch, D_IN, generator=g), torch.randn(batch, D_OUT, generator=g)) for _ in range(steps)]


def make_optimizer(name, params):
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.1, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(params, lr=0.01)
    raise ValueError(name)


def train(model, optimizer, data, device, first_step=None):
    """Plain training: forward, MSE loss, backward, step; returns the losses. If given,
    `first_step(step, x, y)` runs the first step (to capture the code it compiles)."""
    losses = []

    def step(x, y):
        optimizer.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    for i, (x, y) in enumerate(data):
        x, y = x.to(device), y.to(device)
        loss = first_step(step, x, y) if (i == 0 and first_step is not None) else step(x, y)
        losses.append(loss.item())
    return losses


def single_process_run(device, data, optimizer="sgd", norm=RMSNorm):
    """The reference: one process, the full batch, eager."""
    model = make_model(device, norm)
    losses = train(model, make_optimizer(optimizer, model.parameters()), data, device)
    return losses, {name: p.detach().cpu() for name, p in model.named_parameters()}


# --- one rank of a data-parallel run --------------------------------------------------------

def worker(rank, world_size, init_file, out_dir, wrapper, compiled, optimizer, data, use_cuda):
    result = {"rank": rank}
    try:
        result.update(_worker(rank, world_size, init_file, wrapper, compiled, optimizer, data, use_cuda))
    except BaseException:  # reported by the test, with the rank
        result["error"] = traceback.format_exc()
    finally:
        torch.save(result, os.path.join(out_dir, f"rank{rank}.pt"))
        if torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()
        # The result is saved: leave without the interpreter's teardown, where gloo's threads
        # sometimes end the process with std::terminate (SIGABRT), which spawn reports as a failure.
        os._exit(0)


def _worker(rank, world_size, init_file, wrapper, compiled, optimizer_name, data, use_cuda):
    import torch.distributed as dist

    if use_cuda:
        torch.cuda.set_device(rank)
    device = torch.device("cuda", rank) if use_cuda else torch.device("cpu")
    dist.init_process_group("nccl" if use_cuda else "gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=world_size, timeout=datetime.timedelta(seconds=120))

    model = make_model(device)
    if wrapper == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP

        # Tiny buckets, one per parameter: under torch.compile Dynamo's DDPOptimizer splits the
        # graph at bucket boundaries, as it would for a real model, and the kernels run in split
        # submodules. DDPOptimizer takes the first bucket's size from this default (1 MiB),
        # which must not exceed the others.
        bucket_cap_mb = 1e-4
        dist._DEFAULT_FIRST_BUCKET_BYTES = int(bucket_cap_mb * 1024 * 1024)
        model = DDP(model, device_ids=[rank] if use_cuda else None, bucket_cap_mb=bucket_cap_mb)
    elif wrapper == "fsdp2":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh(device.type, (world_size,))
        for layer in (model.up, model.norm, model.down):
            fully_shard(layer, mesh=mesh)
        fully_shard(model, mesh=mesh)
    else:
        raise ValueError(wrapper)

    optimizer = make_optimizer(optimizer_name, model.parameters())
    if compiled:
        torch._dynamo.reset()
        model = torch.compile(model)

    local = slice(rank * len(data[0][0]) // world_size, (rank + 1) * len(data[0][0]) // world_size)
    local_data = [(x[local], y[local]) for x, y in data]
    codes = []

    def first_step(step, x, y):
        from torch._inductor.utils import run_and_get_code

        loss, code = run_and_get_code(step, x, y)
        codes.extend(code)
        return loss

    losses = train(model, optimizer, local_data, device, first_step if compiled else None)

    # Every rank's own loss, in rank order: the full batch's loss is their mean (equal halves).
    all_losses = [None] * world_size
    dist.all_gather_object(all_losses, losses)
    params = {}
    for name, p in model.named_parameters():
        full = p.full_tensor() if hasattr(p, "full_tensor") else p  # FSDP2: DTensor shards
        name = name.replace("_orig_mod.", "").replace("module.", "")
        params[name] = full.detach().cpu()
    return dict(losses=all_losses, params=params, code="\n".join(codes),
                graph_breaks=dict(torch._dynamo.utils.counters["graph_break"]))
