"""A small transformer block built from Triton kernels, launchable three ways.

``make_block_ops(wrap)`` returns autograd ops (RMSNorm, RoPE, causal flash attention,
SwiGLU) whose forward and backward launch module-level ``@triton.jit`` kernels through
``wrap(kernel)[grid](...)``. ``wrap`` picks the launch path being compared:

    make_block_ops(lambda k: k)                    # raw triton launches
    make_block_ops(torch_triton_hop.wrap_triton)   # this package
    make_block_ops(torch.library.wrap_triton)      # torch's built-in

``reference_ops()`` has the same interface in plain PyTorch, and ``Block`` runs either set:
``Block(dim, n_heads, hidden, ops)``. Kernels stay simple (no autotune, fixed blocks, only
features the Triton interpreter has) so they also run on CPU under ``TRITON_INTERPRET=1``.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


# --- RMSNorm -----------------------------------------------------------------------------

@triton.jit
def rmsnorm_fwd_kernel(X, W, Y, RSTD, stride_x, stride_y, n_cols, eps, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < n_cols
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    eps = tl.full([], eps, tl.float32)  # inductor passes Python floats as fp64
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(Y + row * stride_y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)
    tl.store(RSTD + row, rstd)  # saved so the backward need not recompute the reduction


@triton.jit
def rmsnorm_bwd_kernel(X, W, DY, RSTD, DX, DW_PARTIAL, stride_x, stride_dy, stride_dx, n_rows, n_cols,
                       ROWS_PER_PROG: tl.constexpr, BLOCK_D: tl.constexpr):
    # Each program handles ROWS_PER_PROG rows and writes one partial dW row; torch sums them
    # (no atomics, so the result is deterministic).
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < n_cols
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_D], dtype=tl.float32)
    for i in range(ROWS_PER_PROG):
        row = pid * ROWS_PER_PROG + i
        # (cols < n_cols) & (row < n_rows), written as one compare: the interpreter turns a
        # vector & scalar of booleans into int32, which tl.load rejects as a mask.
        row_mask = cols < tl.where(row < n_rows, n_cols, 0)
        x = tl.load(X + row * stride_x + cols, mask=row_mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + row * stride_dy + cols, mask=row_mask, other=0.0).to(tl.float32)
        rstd = tl.load(RSTD + tl.minimum(row, n_rows - 1))  # clamped: tail rows load x = dy = 0 anyway
        xhat = x * rstd
        wdy = w * dy
        c = tl.sum(xhat * wdy, axis=0) / n_cols
        tl.store(DX + row * stride_dx + cols, ((wdy - xhat * c) * rstd).to(DX.dtype.element_ty), mask=row_mask)
        dw += dy * xhat
    tl.store(DW_PARTIAL + pid * n_cols + cols, dw, mask=mask)


# --- RoPE (rotate-half convention; q and k in one launch) -----------------------------------

@triton.jit
def rope_kernel(Q, K, QO, KO, COS, SIN, seq_len, n_heads,
                sqb, sqs, sqh, sqd, skb, sks, skh, skd,
                HALF: tl.constexpr, BLOCK_H: tl.constexpr, INVERSE: tl.constexpr):
    # One program per (batch, position): all heads of q and k. Inputs are (B, S, H, 2*HALF)
    # with any strides; outputs are contiguous. INVERSE rotates by -theta (the backward).
    bs = tl.program_id(0)
    b = bs // seq_len
    s = bs % seq_len
    h = tl.arange(0, BLOCK_H)[:, None]
    d = tl.arange(0, HALF)[None, :]
    mask = h < n_heads
    cos = tl.load(COS + s * HALF + d)
    sin = tl.load(SIN + s * HALF + d)
    if INVERSE:
        sin = -sin
    out_offs = (bs * n_heads + h) * (2 * HALF) + d

    q = Q + b * sqb + s * sqs + h * sqh
    q1 = tl.load(q + d * sqd, mask=mask, other=0.0).to(tl.float32)
    q2 = tl.load(q + (d + HALF) * sqd, mask=mask, other=0.0).to(tl.float32)
    tl.store(QO + out_offs, (q1 * cos - q2 * sin).to(QO.dtype.element_ty), mask=mask)
    tl.store(QO + out_offs + HALF, (q1 * sin + q2 * cos).to(QO.dtype.element_ty), mask=mask)

    k = K + b * skb + s * sks + h * skh
    k1 = tl.load(k + d * skd, mask=mask, other=0.0).to(tl.float32)
    k2 = tl.load(k + (d + HALF) * skd, mask=mask, other=0.0).to(tl.float32)
    tl.store(KO + out_offs, (k1 * cos - k2 * sin).to(KO.dtype.element_ty), mask=mask)
    tl.store(KO + out_offs + HALF, (k1 * sin + k2 * cos).to(KO.dtype.element_ty), mask=mask)


# --- causal flash attention (compact form of the Triton tutorial "fused attention") --------
# Tensors are (B, H, S, HEAD_DIM) with any strides, passed as (batch, head, seq, dim) strides.
# M holds the row logsumexp (natural log), (B*H, S) contiguous. Every row has at least one
# unmasked key (its own position), so the running max is finite after the first block.

@triton.jit
def attn_fwd_kernel(Q, K, V, O, M, sm_scale, n_heads, seq_len,
                    sqb, sqh, sqs, sqd, skb, skh, sks, skd, svb, svh, svs, svd, sob, soh, sos, sod,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_mask = offs_m < seq_len
    sm_scale = tl.full([], sm_scale, tl.float32)  # inductor passes Python floats as fp64

    q = tl.load(Q + b * sqb + h * sqh + offs_m[:, None] * sqs + offs_d[None, :] * sqd,
                mask=m_mask[:, None], other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    hi = tl.minimum((start_m + 1) * BLOCK_M, seq_len)  # causal: keys past the block are masked
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        n_mask = cols < seq_len
        k = tl.load(K + b * skb + h * skh + cols[:, None] * sks + offs_d[None, :] * skd,
                    mask=n_mask[:, None], other=0.0)
        v = tl.load(V + b * svb + h * svh + cols[:, None] * svs + offs_d[None, :] * svd,
                    mask=n_mask[:, None], other=0.0)
        qk = tl.dot(q, tl.trans(k)) * sm_scale
        qk = tl.where((offs_m[:, None] >= cols[None, :]) & n_mask[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(O + b * sob + h * soh + offs_m[:, None] * sos + offs_d[None, :] * sod,
             acc.to(O.dtype.element_ty), mask=m_mask[:, None])
    tl.store(M + bh * seq_len + offs_m, m_i + tl.log(l_i), mask=m_mask)


@triton.jit
def attn_bwd_preprocess_kernel(O, DO, DELTA, n_heads, seq_len,
                               sob, soh, sos, sod, sdb, sdh, sds, sdd,
                               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    # delta = rowsum(O * dO): the softmax-backward term shared by dQ and dK.
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    m_mask = offs_m < seq_len
    o = tl.load(O + b * sob + h * soh + offs_m[:, None] * sos + offs_d[None, :] * sod,
                mask=m_mask[:, None], other=0.0).to(tl.float32)
    do = tl.load(DO + b * sdb + h * sdh + offs_m[:, None] * sds + offs_d[None, :] * sdd,
                 mask=m_mask[:, None], other=0.0).to(tl.float32)
    tl.store(DELTA + bh * seq_len + offs_m, tl.sum(o * do, axis=1), mask=m_mask)


@triton.jit
def attn_bwd_dkdv_kernel(Q, K, V, DO, M, DELTA, DK, DV, sm_scale, n_heads, seq_len,
                         sqb, sqh, sqs, sqd, skb, skh, sks, skd, svb, svh, svs, svd, sdb, sdh, sds, sdd,
                         sdkb, sdkh, sdks, sdkd, sdvb, sdvh, sdvs, sdvd,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # One program per key block: walk the query blocks at or after it (causal), recomputing
    # P^T from the saved logsumexp.
    start_n = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    n_mask = offs_n < seq_len
    sm_scale = tl.full([], sm_scale, tl.float32)  # inductor passes Python floats as fp64
    k = tl.load(K + b * skb + h * skh + offs_n[:, None] * sks + offs_d[None, :] * skd,
                mask=n_mask[:, None], other=0.0)
    v = tl.load(V + b * svb + h * svh + offs_n[:, None] * svs + offs_d[None, :] * svd,
                mask=n_mask[:, None], other=0.0)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    lo = (start_n * BLOCK_N) // BLOCK_M * BLOCK_M
    for start_m in range(lo, seq_len, BLOCK_M):
        rows = start_m + offs_m
        m_mask = rows < seq_len
        q = tl.load(Q + b * sqb + h * sqh + rows[:, None] * sqs + offs_d[None, :] * sqd,
                    mask=m_mask[:, None], other=0.0)
        do = tl.load(DO + b * sdb + h * sdh + rows[:, None] * sds + offs_d[None, :] * sdd,
                     mask=m_mask[:, None], other=0.0)
        lse = tl.load(M + bh * seq_len + rows, mask=m_mask, other=0.0)
        delta = tl.load(DELTA + bh * seq_len + rows, mask=m_mask, other=0.0)
        qk_t = tl.dot(k, tl.trans(q)) * sm_scale  # [BLOCK_N, BLOCK_M]
        keep = (rows[None, :] >= offs_n[:, None]) & m_mask[None, :]
        p_t = tl.where(keep, tl.exp(qk_t - lse[None, :]), 0.0)
        dv += tl.dot(p_t.to(do.dtype), do)
        dp_t = tl.dot(v, tl.trans(do))
        ds_t = p_t * (dp_t - delta[None, :])
        dk += tl.dot(ds_t.to(q.dtype), q)
    tl.store(DK + b * sdkb + h * sdkh + offs_n[:, None] * sdks + offs_d[None, :] * sdkd,
             (dk * sm_scale).to(DK.dtype.element_ty), mask=n_mask[:, None])
    tl.store(DV + b * sdvb + h * sdvh + offs_n[:, None] * sdvs + offs_d[None, :] * sdvd,
             dv.to(DV.dtype.element_ty), mask=n_mask[:, None])


@triton.jit
def attn_bwd_dq_kernel(Q, K, V, DO, M, DELTA, DQ, sm_scale, n_heads, seq_len,
                       sqb, sqh, sqs, sqd, skb, skh, sks, skd, svb, svh, svs, svd, sdb, sdh, sds, sdd,
                       sdqb, sdqh, sdqs, sdqd,
                       HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # One program per query block: walk the key blocks up to the diagonal.
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_mask = offs_m < seq_len
    sm_scale = tl.full([], sm_scale, tl.float32)  # inductor passes Python floats as fp64
    q = tl.load(Q + b * sqb + h * sqh + offs_m[:, None] * sqs + offs_d[None, :] * sqd,
                mask=m_mask[:, None], other=0.0)
    do = tl.load(DO + b * sdb + h * sdh + offs_m[:, None] * sds + offs_d[None, :] * sdd,
                 mask=m_mask[:, None], other=0.0)
    lse = tl.load(M + bh * seq_len + offs_m, mask=m_mask, other=0.0)
    delta = tl.load(DELTA + bh * seq_len + offs_m, mask=m_mask, other=0.0)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    hi = tl.minimum((start_m + 1) * BLOCK_M, seq_len)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        n_mask = cols < seq_len
        k = tl.load(K + b * skb + h * skh + cols[:, None] * sks + offs_d[None, :] * skd,
                    mask=n_mask[:, None], other=0.0)
        v = tl.load(V + b * svb + h * svh + cols[:, None] * svs + offs_d[None, :] * svd,
                    mask=n_mask[:, None], other=0.0)
        qk = tl.dot(q, tl.trans(k)) * sm_scale
        keep = (offs_m[:, None] >= cols[None, :]) & n_mask[None, :]
        p = tl.where(keep, tl.exp(qk - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k)
    tl.store(DQ + b * sdqb + h * sdqh + offs_m[:, None] * sdqs + offs_d[None, :] * sdqd,
             (dq * sm_scale).to(DQ.dtype.element_ty), mask=m_mask[:, None])


# --- SwiGLU --------------------------------------------------------------------------------

@triton.jit
def swiglu_fwd_kernel(A, B, OUT, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(A + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(OUT + offs, (a * tl.sigmoid(a) * b).to(OUT.dtype.element_ty), mask=mask)


@triton.jit
def swiglu_bwd_kernel(A, B, DOUT, DA, DB, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(A + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + offs, mask=mask, other=0.0).to(tl.float32)
    dout = tl.load(DOUT + offs, mask=mask, other=0.0).to(tl.float32)
    sig = tl.sigmoid(a)
    # d silu(a)/da = sig * (1 + a * (1 - sig))
    tl.store(DA + offs, (dout * b * sig * (1.0 + a * (1.0 - sig))).to(DA.dtype.element_ty), mask=mask)
    tl.store(DB + offs, (dout * a * sig).to(DB.dtype.element_ty), mask=mask)


# --- ops -------------------------------------------------------------------------------------

class BlockOps(NamedTuple):
    rmsnorm: Callable  # (x, weight, eps) -> y
    rope: Callable  # (q, k, cos, sin) -> (q, k); q, k (B, S, H, D); cos, sin (S, D // 2)
    attention: Callable  # (q, k, v) -> o, causal; q, k, v, o (B, H, S, D)
    swiglu: Callable  # (a, b) -> silu(a) * b


def _rows(t: torch.Tensor) -> torch.Tensor:
    """A 2-D (rows, last dim) view; the kernels take a row stride and need unit column stride."""
    t = t.reshape(-1, t.shape[-1])
    return t if t.stride(-1) == 1 else t.contiguous()


def make_block_ops(wrap: Callable = lambda k: k, block_m: int = 64, block_n: int = 64,
                   rms_rows_per_prog: int = 16, elementwise_block: int = 1024) -> BlockOps:
    """Triton-backed ops launching every kernel as ``wrap(kernel)[grid](...)``.

    Kernels are wrapped at each launch, not once up front: on torch 2.11 Dynamo cannot trace
    a ``torch.library.wrap_triton`` object made outside the compiled region and called
    inside an autograd.Function (it steps into kernel_side_table.add_kernel's lock), while
    wrapping inside the region works for both wrappers. Eagerly this adds the wrapper's
    construction to each launch.
    """

    class RMSNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, eps):
            x2 = _rows(x)
            n_rows, n_cols = x2.shape
            y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
            rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
            wrap(rmsnorm_fwd_kernel)[(n_rows,)](x2, weight, y, rstd, x2.stride(0), y.stride(0), n_cols, eps,
                                                BLOCK_D=triton.next_power_of_2(n_cols))
            ctx.save_for_backward(x2, weight, rstd)
            return y.view(x.shape)

        @staticmethod
        def backward(ctx, dy):
            x2, weight, rstd = ctx.saved_tensors
            dy2 = _rows(dy)
            n_rows, n_cols = x2.shape
            dx = torch.empty((n_rows, n_cols), dtype=x2.dtype, device=x2.device)
            n_progs = triton.cdiv(n_rows, rms_rows_per_prog)
            dw_partial = torch.empty((n_progs, n_cols), dtype=torch.float32, device=x2.device)
            wrap(rmsnorm_bwd_kernel)[(n_progs,)](
                x2, weight, dy2, rstd, dx, dw_partial, x2.stride(0), dy2.stride(0), dx.stride(0), n_rows, n_cols,
                ROWS_PER_PROG=rms_rows_per_prog, BLOCK_D=triton.next_power_of_2(n_cols))
            return dx.view(dy.shape), dw_partial.sum(0).to(weight.dtype), None

    def rope_launch(q, k, cos, sin, inverse):
        bsz, seq, heads, head_dim = q.shape
        qo = torch.empty(q.shape, dtype=q.dtype, device=q.device)  # contiguous, as the kernel writes
        ko = torch.empty(k.shape, dtype=k.dtype, device=k.device)
        wrap(rope_kernel)[(bsz * seq,)](q, k, qo, ko, cos, sin, seq, heads, *q.stride(), *k.stride(),
                                        HALF=head_dim // 2, BLOCK_H=triton.next_power_of_2(heads), INVERSE=inverse)
        return qo, ko

    class RoPE(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, cos, sin):
            ctx.save_for_backward(cos, sin)
            return rope_launch(q, k, cos.contiguous(), sin.contiguous(), False)

        @staticmethod
        def backward(ctx, dq, dk):
            cos, sin = ctx.saved_tensors
            dq, dk = rope_launch(dq, dk, cos.contiguous(), sin.contiguous(), True)  # rotation is orthogonal
            return dq, dk, None, None

    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, sm_scale):
            bsz, heads, seq, head_dim = q.shape
            o = torch.empty_like(q)
            lse = torch.empty((bsz * heads, seq), dtype=torch.float32, device=q.device)
            wrap(attn_fwd_kernel)[(triton.cdiv(seq, block_m), bsz * heads)](
                q, k, v, o, lse, sm_scale, heads, seq, *q.stride(), *k.stride(), *v.stride(), *o.stride(),
                HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n)
            ctx.save_for_backward(q, k, v, o, lse)
            ctx.sm_scale = sm_scale
            return o

        @staticmethod
        def backward(ctx, do):
            q, k, v, o, lse = ctx.saved_tensors
            bsz, heads, seq, head_dim = q.shape
            delta = torch.empty_like(lse)
            wrap(attn_bwd_preprocess_kernel)[(triton.cdiv(seq, block_m), bsz * heads)](
                o, do, delta, heads, seq, *o.stride(), *do.stride(), HEAD_DIM=head_dim, BLOCK_M=block_m)
            dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
            strides = (*q.stride(), *k.stride(), *v.stride(), *do.stride())
            wrap(attn_bwd_dkdv_kernel)[(triton.cdiv(seq, block_n), bsz * heads)](
                q, k, v, do, lse, delta, dk, dv, ctx.sm_scale, heads, seq, *strides, *dk.stride(), *dv.stride(),
                HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n)
            wrap(attn_bwd_dq_kernel)[(triton.cdiv(seq, block_m), bsz * heads)](
                q, k, v, do, lse, delta, dq, ctx.sm_scale, heads, seq, *strides, *dq.stride(),
                HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n)
            return dq, dk, dv, None

    class SwiGLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a, b = a.contiguous(), b.contiguous()
            out = torch.empty_like(a)
            n = a.numel()
            wrap(swiglu_fwd_kernel)[(triton.cdiv(n, elementwise_block),)](a, b, out, n, BLOCK=elementwise_block)
            ctx.save_for_backward(a, b)
            return out

        @staticmethod
        def backward(ctx, dout):
            a, b = ctx.saved_tensors
            dout = dout.contiguous()
            da, db = torch.empty_like(a), torch.empty_like(b)
            n = a.numel()
            wrap(swiglu_bwd_kernel)[(triton.cdiv(n, elementwise_block),)](a, b, dout, da, db, n,
                                                                         BLOCK=elementwise_block)
            return da, db

    def attention(q, k, v, sm_scale=None):
        return Attention.apply(q, k, v, 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else sm_scale)

    return BlockOps(
        rmsnorm=lambda x, weight, eps=1e-6: RMSNorm.apply(x, weight, eps),
        rope=RoPE.apply,
        attention=attention,
        swiglu=SwiGLU.apply,
    )


def reference_ops() -> BlockOps:
    """The same ops in plain PyTorch (what inductor sees when no Triton kernel is involved)."""

    def rmsnorm(x, weight, eps=1e-6):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.float()).to(x.dtype)

    def rope(q, k, cos, sin):
        c, s = cos[None, :, None, :], sin[None, :, None, :]

        def rotate(x):
            x1, x2 = x.float().chunk(2, dim=-1)
            return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1).to(x.dtype)

        return rotate(q), rotate(k)

    def attention(q, k, v, sm_scale=None):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=sm_scale)

    def swiglu(a, b):
        return F.silu(a) * b

    return BlockOps(rmsnorm=rmsnorm, rope=rope, attention=attention, swiglu=swiglu)


def rope_tables(seq_len: int, head_dim: int, base: float = 10000.0, device=None):
    """cos, sin of shape (seq_len, head_dim // 2), float32."""
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim)
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float32, device=device), inv_freq)
    return angles.cos(), angles.sin()


class Block(torch.nn.Module):
    """Pre-norm decoder block: h = x + attn(rope(rmsnorm(x))); out = h + mlp(rmsnorm(h))."""

    def __init__(self, dim: int, n_heads: int, hidden: int, ops: BlockOps, eps: float = 1e-6):
        super().__init__()
        assert dim % n_heads == 0
        self.n_heads, self.head_dim, self.eps, self.ops = n_heads, dim // n_heads, eps, ops
        self.attn_norm = torch.nn.Parameter(torch.ones(dim))
        self.mlp_norm = torch.nn.Parameter(torch.ones(dim))
        self.wq, self.wk, self.wv, self.wo = (torch.nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.w1 = torch.nn.Linear(dim, hidden, bias=False)  # gate
        self.w3 = torch.nn.Linear(dim, hidden, bias=False)  # up
        self.w2 = torch.nn.Linear(hidden, dim, bias=False)  # down

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        bsz, seq, dim = x.shape
        heads = (bsz, seq, self.n_heads, self.head_dim)
        xn = self.ops.rmsnorm(x, self.attn_norm, self.eps)
        q, k = self.ops.rope(self.wq(xn).view(heads), self.wk(xn).view(heads), cos, sin)
        v = self.wv(xn).view(heads)
        # (B, S, H, D) -> (B, H, S, D) as strided views: the attention kernels take strides.
        o = self.ops.attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        h = x + self.wo(o.transpose(1, 2).reshape(bsz, seq, dim))
        hn = self.ops.rmsnorm(h, self.mlp_norm, self.eps)
        return h + self.w2(self.ops.swiglu(self.w1(hn), self.w3(hn)))
