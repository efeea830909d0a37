"""Per-call overhead of an eager launch: raw triton vs wrap_triton (ours) vs torch.library.wrap_triton.

The launch itself is stubbed out (JITFunction.run does nothing), so the numbers are pure
Python-side overhead and need no GPU. Ratios are taken in one run, side by side.

    python benchmarks/eager_overhead.py [--calls 20000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.pop("TRITON_INTERPRET", None)  # a real JITFunction, as on a GPU machine

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.runtime.jit import JITFunction  # noqa: E402

import torch_triton_hop  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs), mask=offs < n)


def per_call_us(fn, calls: int, repeats: int = 7) -> float:
    for _ in range(calls // 10):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--real-launch", action="store_true", help="do not stub the launch (needs a GPU)")
    args = parser.parse_args()
    device = "cuda" if args.real_launch else "cpu"
    if not args.real_launch:
        JITFunction.run = lambda self, *a, **k: None  # stub: measure the Python around the launch

    x, y, out = (torch.randn(4096, device=device) for _ in range(3))
    grid = (triton.cdiv(4096, 1024),)
    ours = torch_triton_hop.wrap_triton(add_kernel)
    theirs = torch.library.wrap_triton(add_kernel)
    cases = {
        "raw kernel[grid](...)": lambda: add_kernel[grid](x, y, out, 4096, BLOCK=1024),
        "torch_triton_hop.wrap_triton": lambda: ours[grid](x, y, out, 4096, BLOCK=1024),
        "torch.library.wrap_triton": lambda: theirs[grid](x, y, out, 4096, BLOCK=1024),
    }
    results = {name: per_call_us(fn, args.calls if "torch.library" not in name else max(200, args.calls // 50))
                for name, fn in cases.items()}
    raw = results["raw kernel[grid](...)"]
    print(f"torch {torch.__version__}, triton {triton.__version__}, launch {'real' if args.real_launch else 'stubbed'}")
    print(f"{'path':32s} {'us/call':>9s} {'overhead us':>12s} {'x raw':>7s}")
    for name, us in results.items():
        print(f"{name:32s} {us:9.2f} {us - raw:12.2f} {us / raw:7.2f}")


if __name__ == "__main__":
    main()
