"""torch.compile (inductor) with wrapped kernels against torch's built-in path, side by side.

    python benchmarks/compile_inductor.py                 # everything (GPU)
    python benchmarks/compile_inductor.py --only percall  # percall | aliased | compile | cache | block
    python benchmarks/compile_inductor.py --smoke         # tiny sizes; CPU interpreter OK

Paths compared in one process (or, for compile time, one fresh process per measurement):
  ours     torch_triton_hop.wrap_triton(kernel)[grid](...)
  raw      the @triton.jit kernel called directly inside torch.compile (torch's built-in)
  library  torch.library.wrap_triton(kernel)[grid](...)  (torch's built-in, explicit)
  eager    the same model, not compiled (raw launch)
Per-call times are interleaved rounds; the ratio reported is the median of per-round ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

from _interpreter import use_interpreter_without_gpu  # noqa: E402

use_interpreter_without_gpu()  # before triton is imported

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import torch_triton_hop  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


WRAPPERS = {
    "ours": torch_triton_hop.wrap_triton,
    "raw": lambda k: k,
    "library": lambda k: torch.library.wrap_triton(k),
}


def small_model(wrap):
    # Wrapped inside the model, as torch.library.wrap_triton's documentation does (a
    # torch.library.wrap_triton object made outside fails under Dynamo on torch 2.11).
    def model(x, y):
        out = torch.empty_like(x)
        wrap(add_kernel)[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
        return out.relu()

    return model


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def time_per_call(fn, args, calls):
    sync()
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    sync()
    return (time.perf_counter() - start) / calls * 1e6


def peak_memory(fn, args):
    if DEVICE != "cuda":
        return float("nan")
    sync()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    fn(*args)
    sync()
    return (torch.cuda.max_memory_allocated() - base) / 2**20


def aliased_model(wrap):
    # The kernel writes its own input: x_ptr is out_ptr, a graph input (issue 13).
    def model(x, y):
        wrap(add_kernel)[(triton.cdiv(x.numel(), 1024),)](x, y, x, x.numel(), BLOCK=1024)
        return x.sum()

    return model


def compare_paths(make_model, args, modes, rounds, calls):
    """Per-call time and peak memory of make_model(wrap) compiled for every path (and eager)."""
    results = {}
    for mode in modes:
        torch._dynamo.reset()
        # Under the interpreter torch's built-in path does not capture kernels: ours only.
        paths = WRAPPERS if DEVICE == "cuda" else {"ours": WRAPPERS["ours"]}
        fns = {name: torch.compile(make_model(w), mode=mode, fullgraph=True) for name, w in paths.items()}
        fns["eager"] = make_model(WRAPPERS["raw"])
        for fn in fns.values():  # compile and warm up (cuda graphs record on the third call)
            for _ in range(5):
                fn(*args)
        times = {name: [] for name in fns}
        for _ in range(rounds):
            for name, fn in fns.items():
                times[name].append(time_per_call(fn, args, calls))
        ratio = {name: statistics.median(a / b for a, b in zip(times["ours"], times[name])) for name in fns}
        results[mode] = {
            "us_per_call": {name: statistics.median(t) for name, t in times.items()},
            "ours_over": ratio,
            "peak_MiB": {name: peak_memory(fn, args) for name, fn in fns.items()},
        }
    return results


def bench_percall(rounds, calls, n):
    x, y = torch.randn(n, device=DEVICE), torch.randn(n, device=DEVICE)
    torch.testing.assert_close(torch.compile(small_model(WRAPPERS["ours"]))(x, y), (x + y).relu())
    modes = ["default", "reduce-overhead"] if DEVICE == "cuda" else ["default"]
    return compare_paths(small_model, (x, y), modes, rounds, calls)


def bench_aliased(rounds, calls, n):
    x, y = torch.randn(n, device=DEVICE), torch.randn(n, device=DEVICE)
    expected = x + y
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(aliased_model(WRAPPERS["ours"]))(x, y), expected.sum(), rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(x, expected)
    return compare_paths(aliased_model, (x, y), ["default"], rounds, calls)


COMPILE_SCRIPT = """
import os, sys, time
sys.path.insert(0, {here!r})
import torch, triton
import compile_inductor as B
wrap = B.WRAPPERS[{path!r}]
def model(x, y):
    for _ in range({calls}):
        out = torch.empty_like(x)
        wrap(B.add_kernel)[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
        x = out
    return x
x, y = torch.randn(4096, device=B.DEVICE), torch.randn(4096, device=B.DEVICE)
compiled = torch.compile(model, fullgraph=True)
start = time.perf_counter()
out = compiled(x, y)
B.sync()
seconds = time.perf_counter() - start
torch.testing.assert_close(out, x + {calls} * y, rtol=1e-4, atol=1e-4)
c = torch._dynamo.utils.counters["inductor"]
print("CACHE", c["fxgraph_cache_hit"], c["fxgraph_cache_miss"])
print("SECONDS", seconds)
"""


def compile_seconds(path, calls, cache=None, with_counters=False):
    with tempfile.TemporaryDirectory() as fresh:
        cache = cache or fresh
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": os.path.join(cache, "inductor"),
               "TRITON_CACHE_DIR": os.path.join(cache, "triton"), "PYTHONPATH": HERE}
        script = COMPILE_SCRIPT.format(here=HERE, path=path, calls=calls)
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=900)
        if done.returncode != 0:
            return {"error": done.stderr.strip().splitlines()[-1][:300]}
        seconds = float(done.stdout.split("SECONDS")[-1])
        if with_counters:
            hits, misses = done.stdout.split("CACHE")[-1].split()[:2]
            return {"seconds": seconds, "fxgraph_cache_hit": int(hits), "fxgraph_cache_miss": int(misses)}
        return seconds


def bench_cache(calls):
    """The same model compiled in two fresh processes sharing one cache dir: miss, then hit."""
    with tempfile.TemporaryDirectory() as cache:
        return [compile_seconds("ours", calls, cache, with_counters=True) for _ in range(2)]


def bench_compile(counts, paths):
    results = {}
    for calls in counts:
        results[calls] = {path: compile_seconds(path, calls) for path in paths}
        print(f"compile {calls}: {results[calls]}", flush=True)
    return results


def bench_block(rounds, smoke):
    sys.path.insert(0, HERE)
    import block_kernels as BK

    torch.manual_seed(0)
    if smoke:
        batch, seq, dim, heads, hidden, dtype = 1, 32, 32, 2, 64, torch.float32
    else:
        batch, seq, dim, heads, hidden, dtype = 8, 1024, 1024, 16, 2816, torch.bfloat16
    head_dim = dim // heads
    x = torch.randn(batch, seq, dim, device=DEVICE, dtype=dtype, requires_grad=True)
    cos, sin = BK.rope_tables(seq, head_dim, device=DEVICE)
    cos, sin = cos.to(dtype), sin.to(dtype)
    block_sizes = dict(block_m=16, block_n=16, rms_rows_per_prog=4, elementwise_block=256) if smoke else {}
    variants = {"ours": BK.make_block_ops(WRAPPERS["ours"], **block_sizes)}
    if DEVICE == "cuda":
        variants["raw"] = BK.make_block_ops(WRAPPERS["raw"], **block_sizes)
        variants["library"] = BK.make_block_ops(WRAPPERS["library"], **block_sizes)
    variants["plain torch"] = BK.reference_ops()
    steps = {}
    for name, ops in variants.items():
        torch.manual_seed(0)
        block = BK.Block(dim, heads, hidden, ops).to(device=DEVICE, dtype=dtype)
        compiled = torch.compile(block)

        def step(compiled=compiled, block=block):
            compiled(x, cos, sin).float().square().mean().backward()
            block.zero_grad(set_to_none=True)
            x.grad = None

        steps[name] = step
    for step in steps.values():
        for _ in range(3):
            step()
    times = {name: [] for name in steps}
    for i in range(rounds):  # the order alternates each round (clocks and caches favour neither end)
        for name, step in (list(steps.items()) if i % 2 == 0 else list(steps.items())[::-1]):
            times[name].append(time_per_call(lambda: step(), (), 1 if smoke else 10) / 1000)
    return {
        "shape": dict(batch=batch, seq=seq, dim=dim, heads=heads, hidden=hidden, dtype=str(dtype)),
        "ms_per_step": {name: statistics.median(t) for name, t in times.items()},
        "ours_over": {name: statistics.median(a / b for a, b in zip(times["ours"], times[name])) for name in steps},
        "peak_MiB": {name: peak_memory(step, ()) for name, step in steps.items()},
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["percall", "aliased", "compile", "cache", "block"], action="append")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()
    only = set(args.only or ["percall", "aliased", "compile", "cache", "block"])
    print(f"torch {torch.__version__}, triton {triton.__version__}, device {DEVICE}"
          + (f" ({torch.cuda.get_device_name()})" if DEVICE == "cuda" else ""), flush=True)
    results = {}
    if "percall" in only:
        results["percall"] = bench_percall(3 if args.smoke else args.rounds, 10 if args.smoke else 2000, 4096)
        print(json.dumps(results["percall"], indent=1), flush=True)
    if "aliased" in only:
        results["aliased"] = bench_aliased(3 if args.smoke else args.rounds, 10 if args.smoke else 200,
                                           4096 if args.smoke else 2**26)
        print("aliased in-place model (x_ptr is out_ptr, then x.sum()):", json.dumps(results["aliased"], indent=1), flush=True)
    if "compile" in only:
        counts = [1, 3] if args.smoke else [1, 10, 100]
        results["compile"] = bench_compile(counts, ["ours", "raw", "library"] if DEVICE == "cuda" else ["ours"])
    if "cache" in only:
        results["cache"] = bench_cache(3 if args.smoke else 100)
        print(f"cache (cold process, then a new process with the same cache dir): {results['cache']}", flush=True)
    if "block" in only:
        results["block"] = bench_block(2 if args.smoke else args.rounds, args.smoke)
        print(json.dumps(results["block"], indent=1), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
