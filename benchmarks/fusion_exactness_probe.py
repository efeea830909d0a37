"""Is fused code bit-exact on a GPU? (`python benchmarks/fusion_exactness_probe.py`, needs CUDA)

Compiles three small models with fusion on and counts the elements that differ from eager:
a multiply kernel + add (fp32: an FMA contracted across the store would show), and an RMSNorm
kernel + residual add stored as fp32 and cast to bf16. The bf16 model runs twice: as shipped
(the fused store keeps the kernel's vector width, see [Note: Keeping the kernel's vector
width]) and with that cap off, where the narrower store changes the layout triton gives the
kernel and so the order of its row reduction. Results, H200, in benchmarks/RESULTS.md.
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
    M[(triton.cdiv(x.numel(), 1024),)](x, r, y, x.numel(), BLOCK=1024)
    return y + x          # fp32: a multiply-add contracted into one FMA shows directly

def rms_block32(x, w, r):
    y = torch.empty_like(x); rstd = torch.empty(x.shape[0], device=x.device)
    K[(x.shape[0],)](x, w, y, rstd, x.stride(0), y.stride(0), x.shape[1], 1e-6, BLOCK_D=4096, num_warps=8)
    return y + r

torch.manual_seed(0)
x, w, r = torch.randn(8192, 4096, device="cuda"), torch.randn(4096, device="cuda"), torch.randn(8192, 4096, device="cuda")
from torch_triton_hop import _fusion

shipped_vector_width = _fusion._vector_width
for fn, cap in ((mul_block, True), (rms_block32, True), (rms_block, True), (rms_block, False)):
    ref = fn(x, w, r)
    torch._dynamo.reset()
    _fusion._vector_width = shipped_vector_width if cap else (lambda *args: None)
    got = torch.compile(fn)(x, w, r)
    print(f"{fn.__name__:12s} vector width kept: {cap!s:5s} fused mismatches: {(got != ref).sum().item()} "
          f"of {ref.numel()}")
_fusion._vector_width = shipped_vector_width
