"""Read/write analysis: time against TTIR size on a kernel whose values are reused many
times, and the cost of a repeated (cached) analysis.

    python benchmarks/analysis_scaling.py

Each step k makes  p_k = tl.where(v > k, p_{k-1}, p_{k-1} + 1): every pointer value is used
twice by the next, so the number of paths from the store back to `out_ptr` doubles each
step. A walk without memoisation is exponential in the steps; ours stays linear.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile
import time

os.environ.pop("TRITON_INTERPRET", None)

import torch  # noqa: E402

from torch_triton_hop import _compat, _ttir  # noqa: E402
from torch_triton_hop._analysis import _FunctionAnalysis, identify_mutated_tensors  # noqa: E402


def make_kernel(steps: int):
    lines = [
        "import triton, triton.language as tl",
        "@triton.jit",
        "def shared_dag(x_ptr, out_ptr, BLOCK: tl.constexpr):",
        "    offs = tl.arange(0, BLOCK)",
        "    v = tl.load(x_ptr + offs)",
        "    p = out_ptr + offs",
    ]
    lines += [f"    p = tl.where(v > {k}.0, p, p + 1)" for k in range(steps)]
    lines += ["    tl.store(p, v)"]
    path = os.path.join(tempfile.mkdtemp(), f"shared_dag_{steps}.py")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(f"shared_dag_{steps}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.shared_dag


def best_of(fn, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    args = {"x_ptr": torch.empty(64), "out_ptr": torch.empty(64), "BLOCK": 64}
    print(f"torch {torch.__version__}")
    print(f"{'steps':>6s} {'TTIR ops':>9s} {'triton TTIR gen ms':>19s} {'ours: parse+analyse ms':>23s} {'us/op':>7s}")
    for steps in (125, 250, 500, 1000, 2000):
        kernel = make_kernel(steps)
        start = time.perf_counter()
        text, _ = _compat.generate_ttir_text(kernel, args)
        generate = time.perf_counter() - start

        def analyse():
            functions, aliases = _ttir.parse_module(text)
            entry = next(iter(functions))
            summary = _FunctionAnalysis(functions, aliases).summary(entry)
            assert set(summary.writes) == {1}, summary.writes  # out_ptr, and only it

        ops = sum(1 for fn in _ttir.parse_module(text)[0].values() for _ in _ttir.walk(fn.body))
        ours = best_of(analyse)
        print(f"{steps:6d} {ops:9d} {generate * 1e3:19.1f} {ours * 1e3:23.2f} {ours / ops * 1e6:7.2f}")

    kernel = make_kernel(8)
    identify_mutated_tensors(kernel, args)  # first analysis fills the cache
    calls = 20000
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            identify_mutated_tensors(kernel, args)
        samples.append((time.perf_counter() - start) / calls * 1e6)
    print(f"repeated analysis of the same call (cache lookup): {statistics.median(samples):.1f} us")


if __name__ == "__main__":
    sys.exit(main())
