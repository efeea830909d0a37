"""Is fused code bit-exact on a GPU? (`python benchmarks/fusion_exactness_probe.py`, needs CUDA)

Compiles three small models with fusion on and counts the elements that differ from eager:
RMSNorm kernel + residual add, stored as fp32 and cast to bf16, and a multiply kernel + add
(fp32). The first part tries the barriers the fused helpers could put between the kernel's
stored value and the epilogue (none, an inline-asm mov, an add of -0.0, a volatile mov): without
one, the compiler contracts the kernel's multiply with the epilogue's add into an FMA.
Results, H200 (torch 2.11, triton 3.6), in benchmarks/RESULTS.md.
"""
import os
os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
os.environ["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
import torch, triton, triton.language as tl
import torch_triton_hop
from torch_triton_hop import wrap_triton, _pointwise_triton as P

@triton.jit
def rmsnorm_fwd_kernel(X, W, Y, RSTD, stride_x, stride_y, n_cols, eps, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < n_cols
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(Y + row * stride_y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)
    tl.store(RSTD + row, rstd)

@triton.jit
def mul_kernel(X, W, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(Y + offs, tl.load(X + offs, mask=m) * tl.load(W + offs, mask=m), mask=m)

K = wrap_triton(rmsnorm_fwd_kernel)
M = wrap_triton(mul_kernel)

def rms_block(x, w, r):
    y = torch.empty_like(x); rstd = torch.empty(x.shape[0], device=x.device)
    K[(x.shape[0],)](x, w, y, rstd, x.stride(0), y.stride(0), x.shape[1], 1e-6, BLOCK_D=4096, num_warps=8)
    return (y + r).to(torch.bfloat16)

def mul_block(x, w, r):
    y = torch.empty_like(x)
    M[(triton.cdiv(x.numel(), 1024),)](x, w, y, x.numel(), BLOCK=1024)
    return y + r          # fp32: any contraction shows directly

def rms_block32(x, w, r):
    y = torch.empty_like(x); rstd = torch.empty(x.shape[0], device=x.device)
    K[(x.shape[0],)](x, w, y, rstd, x.stride(0), y.stride(0), x.shape[1], 1e-6, BLOCK_D=4096, num_warps=8)
    return y + r

torch.manual_seed(0)
x, w, r = torch.randn(8192, 4096, device="cuda"), torch.randn(4096, device="cuda"), torch.randn(8192, 4096, device="cuda")
for fn in (rms_block, rms_block32):
    ref = fn(x, w, r)
    torch._dynamo.reset()
    got = torch.compile(fn)(x, w, r)
    print(fn.__name__, "fused mismatches:", (got != ref).sum().item(), "of", ref.numel())
