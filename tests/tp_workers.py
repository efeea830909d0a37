"""A tensor-parallel transformer block whose norm, attention and activation are wrapped kernels
with sharding rules (importable, so spawned ranks find it): sequence-parallel RMSNorm (rows
sharded), column-parallel q/k/v projections, a causal attention kernel on each rank's heads
(forward and backward kernels), a row-parallel output projection back to sequence shards; then
the MLP: RMSNorm, column-parallel gate/up, a SwiGLU kernel on the hidden shards, row-parallel
down. The same block in plain PyTorch ops (PlainBlock: inductor writes every kernel) is what
benchmarks/tp_block.py measures it against.

Shapes are a BlockShape; the tests use TEST_SHAPE. Rows are tokens: `batch` sequences of
`seq` tokens each, one after another."""

import dataclasses
import os
import traceback

import torch
import torch.distributed as dist
import triton
import triton.language as tl

import torch_triton_hop
from torch_triton_hop import wrap_triton

EPS = 1e-6
SWIGLU_BLOCK = 1024


@dataclasses.dataclass(frozen=True)
class BlockShape:
    seq: int  # tokens per sequence (attention is causal within one)
    batch: int  # sequences
    dim: int
    hidden: int
    head_dim: int

    @property
    def tokens(self) -> int:
        return self.seq * self.batch


TEST_SHAPE = BlockShape(seq=16, batch=2, dim=64, hidden=64, head_dim=16)  # 4 heads: 2 per rank on 2 ranks


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


@triton.jit
def attention_forward(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, stride, scale, SEQ_LEN: tl.constexpr,
                      HEAD: tl.constexpr):
    """One program per (head, sequence); q, k, v, o are [batch * seq, heads * HEAD] (row stride
    `stride`); causal. lse (the softmax's log-sum-exp, for the backward) goes in the first column
    of each head of a tensor shaped like q, so that it shards as q does."""
    h = tl.program_id(0)
    rows = tl.program_id(1) * SEQ_LEN + tl.arange(0, SEQ_LEN)
    cols = tl.arange(0, HEAD)
    offs = rows[:, None] * stride + h * HEAD + cols[None, :]
    q = tl.load(q_ptr + offs)
    k = tl.load(k_ptr + offs)
    v = tl.load(v_ptr + offs)
    s = tl.dot(q, tl.trans(k)) * scale
    s = tl.where(rows[:, None] >= rows[None, :], s, float("-inf"))
    m = tl.max(s, axis=1)
    p = tl.exp(s - m[:, None])
    l = tl.sum(p, axis=1)
    tl.store(o_ptr + offs, tl.dot(p / l[:, None], v))
    tl.store(lse_ptr + rows * stride + h * HEAD, m + tl.log(l))  # first column of the head


@triton.jit
def attention_backward(do_ptr, q_ptr, k_ptr, v_ptr, lse_ptr, dq_ptr, dk_ptr, dv_ptr, stride, scale,
                       SEQ_LEN: tl.constexpr, HEAD: tl.constexpr):
    h = tl.program_id(0)
    rows = tl.program_id(1) * SEQ_LEN + tl.arange(0, SEQ_LEN)
    cols = tl.arange(0, HEAD)
    offs = rows[:, None] * stride + h * HEAD + cols[None, :]
    q = tl.load(q_ptr + offs)
    k = tl.load(k_ptr + offs)
    v = tl.load(v_ptr + offs)
    do = tl.load(do_ptr + offs)
    lse = tl.load(lse_ptr + rows * stride + h * HEAD)
    s = tl.dot(q, tl.trans(k)) * scale
    p = tl.where(rows[:, None] >= rows[None, :], tl.exp(s - lse[:, None]), 0.0)
    dv = tl.dot(tl.trans(p), do)
    dp = tl.dot(do, tl.trans(v))
    ds = p * (dp - tl.sum(dp * p, axis=1)[:, None]) * scale
    tl.store(dq_ptr + offs, tl.dot(ds, k))
    tl.store(dk_ptr + offs, tl.dot(tl.trans(ds), q))
    tl.store(dv_ptr + offs, dv)


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
    # attention: heads split across ranks (columns of [seq, heads * head_dim])
    heads = lambda *names: {name: Shard(1) for name in names}  # noqa: E731
    attention_grid = lambda meta: (meta["q_ptr"].shape[1] // meta["HEAD"],  # noqa: E731
                                   meta["q_ptr"].shape[0] // meta["SEQ_LEN"])
    torch_triton_hop.register_sharding(
        attention_forward, placements=[heads("q_ptr", "k_ptr", "v_ptr", "o_ptr", "lse_ptr")],
        local_scalars=lambda q_ptr, scale, **args: {"stride": q_ptr.stride(0), "scale": scale},
        grid=attention_grid)
    torch_triton_hop.register_sharding(
        attention_backward,
        placements=[heads("do_ptr", "q_ptr", "k_ptr", "v_ptr", "lse_ptr", "dq_ptr", "dk_ptr", "dv_ptr")],
        local_scalars=lambda q_ptr, scale, **args: {"stride": q_ptr.stride(0), "scale": scale},
        grid=attention_grid)
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
        wrap_triton(swiglu_forward)[(triton.cdiv(a.numel(), SWIGLU_BLOCK),)](a, b, c, a.numel(), BLOCK=SWIGLU_BLOCK)
        ctx.save_for_backward(a, b)
        return c

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        dc = dc.contiguous()
        da, db = torch.empty_like(a), torch.empty_like(b)
        wrap_triton(swiglu_backward)[(triton.cdiv(a.numel(), SWIGLU_BLOCK),)](dc, a, b, da, db, a.numel(),
                                                                               BLOCK=SWIGLU_BLOCK)
        return da, db


class AttentionFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, seq_len, head_dim):
        rows, width = q.shape
        o = torch.empty_like(q)
        lse = torch.empty_like(q)
        wrap_triton(attention_forward)[(width // head_dim, rows // seq_len)](
            q, k, v, o, lse, q.stride(0), head_dim ** -0.5, SEQ_LEN=seq_len, HEAD=head_dim)
        ctx.save_for_backward(q, k, v, lse)
        ctx.seq_len, ctx.head_dim = seq_len, head_dim
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, lse = ctx.saved_tensors
        rows, width = q.shape
        do = do.contiguous()
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        wrap_triton(attention_backward)[(width // ctx.head_dim, rows // ctx.seq_len)](
            do, q, k, v, lse, dq, dk, dv, q.stride(0), ctx.head_dim ** -0.5, SEQ_LEN=ctx.seq_len, HEAD=ctx.head_dim)
        return dq, dk, dv, None, None


class RMSNorm(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return RMSNormFunction.apply(x, self.weight)


class PlainRMSNorm(RMSNorm):
    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


class Block(torch.nn.Module):
    """Pre-norm attention and SwiGLU MLP on [tokens, dim], the norms, attention and SwiGLU as
    wrapped kernels."""

    norm_type = RMSNorm

    def __init__(self, shape: BlockShape = TEST_SHAPE):
        super().__init__()
        self.shape = shape
        dim, hidden = shape.dim, shape.hidden
        self.attention_norm = self.norm_type(dim)
        self.q, self.k, self.v, self.o = (torch.nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.norm = self.norm_type(dim)
        self.gate = torch.nn.Linear(dim, hidden, bias=False)
        self.up = torch.nn.Linear(dim, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, dim, bias=False)

    def attention(self, q, k, v):
        return AttentionFunction.apply(q, k, v, self.shape.seq, self.shape.head_dim)

    def swiglu(self, a, b):
        return SwiGLUFunction.apply(a, b)

    def forward(self, x):
        h = self.attention_norm(x)
        x = x + self.o(self.attention(self.q(h), self.k(h), self.v(h)))
        h = self.norm(x)
        return x + self.down(self.swiglu(self.gate(h), self.up(h)))


class PlainBlock(Block):
    """The same block, parameters and math in PyTorch ops: torch's own causal attention
    (scaled_dot_product_attention) on each rank's heads, silu(a) * b."""

    norm_type = PlainRMSNorm

    def attention(self, q, k, v):
        from torch.distributed.tensor import DTensor

        placements = [local.placements if isinstance(local, DTensor) else None for local in (q, k, v)]
        mesh = q.device_mesh if placements[0] else None
        q, k, v = (t.to_local() if isinstance(t, DTensor) else t for t in (q, k, v))
        shape = self.shape
        heads = q.shape[1] // shape.head_dim

        def split(t):  # [batch * seq, heads * head_dim] -> [batch, heads, seq, head_dim]
            return t.view(shape.batch, shape.seq, heads, shape.head_dim).transpose(1, 2)

        o = torch.nn.functional.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
        o = o.transpose(1, 2).reshape(shape.tokens, heads * shape.head_dim)
        return DTensor.from_local(o, mesh, placements[0]) if mesh is not None else o

    def swiglu(self, a, b):
        return torch.nn.functional.silu(a) * b


def reference(seed=0, shape=TEST_SHAPE, device="cpu"):
    """The block on one process (full tensors), its input, output and gradients."""
    torch.manual_seed(seed)
    block = Block(shape).to(device)
    x = torch.randn(shape.tokens, shape.dim, device=device, requires_grad=True)
    out = block(x)
    out.backward(torch.ones_like(out))
    return block, x, out


def parallelize(block, mesh):
    """Sequence-parallel norms, column-parallel q/k/v and gate/up, row-parallel o and down."""
    from torch.distributed.tensor import Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel, SequenceParallel,
                                                   parallelize_module)

    return parallelize_module(block, mesh, {
        "attention_norm": SequenceParallel(sequence_dim=0),
        **{name: ColwiseParallel(input_layouts=Shard(0), use_local_output=False) for name in ("q", "k", "v")},
        "o": RowwiseParallel(input_layouts=Shard(1), output_layouts=Shard(0)),
        "norm": SequenceParallel(sequence_dim=0),
        "gate": ColwiseParallel(input_layouts=Shard(0), use_local_output=False),
        "up": ColwiseParallel(input_layouts=Shard(0), use_local_output=False),
        "down": RowwiseParallel(input_layouts=Shard(1), output_layouts=Shard(0)),
    })


def worker(rank, world_size, init_file, out_dir, compiled, use_cuda=False):
    result = {"rank": rank}
    try:
        if use_cuda:
            torch.cuda.set_device(rank)
        dist.init_process_group("nccl" if use_cuda else "gloo", init_method=f"file://{init_file}", rank=rank,
                                world_size=world_size)
        result.update(_run(rank, world_size, compiled, "cuda" if use_cuda else "cpu"))
    except Exception:
        result["error"] = traceback.format_exc()
    finally:
        torch.save(result, os.path.join(out_dir, f"rank{rank}.pt"))
        if dist.is_initialized():
            dist.destroy_process_group()
        # The result is saved: leave without the interpreter's teardown, where gloo's threads
        # sometimes end the process with std::terminate (SIGABRT), which spawn reports as a failure.
        os._exit(0)


def _run(rank, world_size, compiled, device_type):
    from torch.distributed.device_mesh import init_device_mesh

    register_rules()
    device = torch.device(device_type, rank) if device_type == "cuda" else torch.device("cpu")
    mesh = init_device_mesh(device_type, (world_size,))
    block, x_full, _ = reference(device=device)
    parallelize(block, mesh)
    for p in block.parameters():
        p.grad = None
    rows = TEST_SHAPE.tokens // world_size
    x = x_full.detach()[rank * rows:(rank + 1) * rows].clone().requires_grad_()
    run = torch.compile(block, fullgraph=True) if compiled else block

    def step():
        out = run(x)
        out.backward(torch.ones_like(out))
        return out

    code = ""
    if compiled:
        from torch._inductor.utils import run_and_get_code

        out, codes = run_and_get_code(step)  # the forward's and the backward's code
        code = "\n".join(codes)
    else:
        out = step()
    grads = {name: (p.grad.full_tensor() if hasattr(p.grad, "full_tensor") else p.grad).cpu()
             for name, p in block.named_parameters()}
    return {"out": out.detach().cpu(), "x_grad": x.grad.cpu(), "grads": grads, "code": code}
