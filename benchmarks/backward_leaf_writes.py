"""A backward that writes its gradients into its saved leaf inputs (as Liger's SwiGLU does),
under torch.compile: torch_triton_hop vs torch's built-in. GPU; each path in its own process
(the package's torch 2.11 AOTAutograd backport must not help the built-in path).

    python benchmarks/backward_leaf_writes.py            # all three paths
    python benchmarks/backward_leaf_writes.py builtin    # one

Prints, per path and backend, whether gradients and the inputs' final contents equal eager's.
"""

import os
import subprocess
import sys

import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

PATHS = ("ours", "builtin", "liger_raw")


def grid(meta):
    return (triton.cdiv(meta["n"], meta["BLOCK"]),)


def swiglu_loss(wrap):
    from core_kernels import swiglu_backward_in_place, swiglu_forward

    class SwiGLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            c = torch.empty_like(a)
            wrap(swiglu_forward)[grid](a, b, c, a.numel(), BLOCK=128)
            ctx.save_for_backward(a, b)
            return c

        @staticmethod
        def backward(ctx, dc):
            a, b = ctx.saved_tensors
            wrap(swiglu_backward_in_place)[grid](dc.contiguous(), a, b, a.numel(), BLOCK=128)
            return a, b

    return lambda x, y: SwiGLU.apply(x, y).sum()


def loss_for(path):
    if path == "ours":
        from torch_triton_hop import wrap_triton

        return swiglu_loss(wrap_triton)
    if path == "builtin":
        return swiglu_loss(torch.library.wrap_triton)
    from liger_kernel.ops.swiglu import LigerSiLUMulFunction  # raw Liger: Dynamo's built-in capture

    return lambda x, y: LigerSiLUMulFunction.apply(x, y).sum()


def check(path):
    loss = loss_for(path)
    torch.manual_seed(0)
    x0, y0 = torch.randn(4, 256, device="cuda"), torch.randn(4, 256, device="cuda")

    def run(fn):
        x, y = x0.clone().requires_grad_(), y0.clone().requires_grad_()
        fn(x, y).backward()
        return (x.grad, y.grad), (x.detach(), y.detach())

    grads, inputs_after = run(loss)
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        try:
            g, a = run(torch.compile(loss, fullgraph=True, backend=backend))
            same = lambda p, q: all(torch.allclose(u, v) for u, v in zip(p, q))  # noqa: E731
            print(f"{path:10s} {backend:9s} gradients equal eager: {same(g, grads)}, "
                  f"inputs afterwards equal eager: {same(a, inputs_after)}")
        except Exception as e:  # report and go on: the point is which path compiles
            lines = [line for line in str(e).splitlines() if "Error" in line] or str(e).splitlines() or [""]
            print(f"{path:10s} {backend:9s} FAILED {type(e).__name__}: {lines[0][:120]}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        check(sys.argv[1])
    else:
        for path in PATHS:
            subprocess.run([sys.executable, __file__, path], check=False)
