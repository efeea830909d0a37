"""Per-call time of an eager launch: raw triton vs wrap_triton (ours) vs torch.library.wrap_triton.

Four kernels: a small add; a kernel with 21 arguments; an autotuned kernel after tuning; a
@triton.heuristics kernel. Rounds are interleaved in one process (every path of every kernel
once per round); a ratio is the median over rounds of (path / raw) in that round.

    python benchmarks/eager_overhead.py                # launch stubbed: any machine, no GPU
    python benchmarks/eager_overhead.py --real-launch  # on a GPU
    python benchmarks/eager_overhead.py --without-wrapper  # also our generated launch alone

Stubbed: triton's own JITFunction.run runs in full (binding, specialization, cache lookup,
device and stream queries, grid, launch metadata), with a stub driver and a stub compiler
whose compiled kernel's launcher does nothing, so the figures are the Python work around
the launch. Real: kernels compiled and launched on the current CUDA device; each timed
block ends with a synchronize.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.pop("TRITON_INTERPRET", None)  # a real JITFunction, as on a GPU machine
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import torch_triton_hop  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def many_args_kernel(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, out_ptr, n, m0, m1, m2, m3, m4, m5, m6, m7,
                     BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(a0 + offs, mask=mask) * m0 + tl.load(a1 + offs, mask=mask) * m1
    acc += tl.load(a2 + offs, mask=mask) * m2 + tl.load(a3 + offs, mask=mask) * m3
    acc += tl.load(a4 + offs, mask=mask) * m4 + tl.load(a5 + offs, mask=mask) * m5
    acc += tl.load(a6 + offs, mask=mask) * m6 + tl.load(a7 + offs, mask=mask) * m7
    acc += tl.load(a8 + offs, mask=mask) + tl.load(a9 + offs, mask=mask)
    tl.store(out_ptr + offs, acc, mask=mask)


@triton.jit
def add_tuned_base(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def add_even_base(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))
    else:
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


# --- the stub: triton's run in full, no driver, no compiler, no launch ----------------------------


class _StubDriver:
    def get_current_device(self):
        return 0

    def get_current_stream(self, device):
        return 0

    def get_current_target(self):
        from triton.backends.compiler import GPUTarget

        return GPUTarget("cuda", 90, 32)

    def get_benchmarker(self):
        return lambda fn, quantiles=None, **_: (fn(), [1.0, 1.0, 1.0])[1]


class _StubKernel:
    def __init__(self, src):
        from triton.compiler.compiler import CompiledKernel

        self.src = src
        self.name = src.fn.__name__
        self.function = 1
        self.packed_metadata = (1, 1, 1)
        self.launch_metadata = CompiledKernel.launch_metadata.__get__(self)  # triton's own
        self.run = lambda *args: None  # the compiled kernel's launcher: a no-op

    def _init_handles(self):
        pass


def _stub_triton() -> None:
    import triton.compiler
    from triton.runtime.driver import driver

    driver.set_active(_StubDriver())
    triton.compiler.compile = lambda src, target=None, options=None, **_: _StubKernel(src)


# --- measurement ----------------------------------------------------------------------------------


def _time(fn, calls: int, sync) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - start) / calls * 1e6


def _cases(device: str, n: int, with_triton_launcher: bool = False, without_wrapper: bool = False):
    x, y, out = (torch.randn(n, device=device) for _ in range(3))
    inputs = [torch.randn(n, device=device) for _ in range(10)]
    multipliers = list(range(2, 10))
    grid_add = (triton.cdiv(n, 1024),)
    meta_grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731

    autotuned = triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=2),
                                         triton.Config({"BLOCK": 1024}, num_warps=4)], key=["n"])(add_tuned_base)
    heuristic = triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})(add_even_base)
    kernels = {
        "add": (add_kernel, grid_add, (x, y, out, n), {"BLOCK": 1024}),
        "21 arguments": (many_args_kernel, grid_add, (*inputs, out, n, *multipliers), {"BLOCK": 1024}),
        "autotuned (after tuning)": (autotuned, meta_grid, (x, y, out, n), {}),
        "heuristics": (heuristic, meta_grid, (x, y, out, n), {"BLOCK": 1024}),
    }
    cases = {}
    for name, (kernel, grid, args, kwargs) in kernels.items():
        ours = torch_triton_hop.wrap_triton(kernel)
        try:
            library = torch.library.wrap_triton(kernel)
        except RuntimeError:  # torch refuses a bare @triton.heuristics: give it a one-config autotuner on top
            library = torch.library.wrap_triton(triton.autotune(configs=[triton.Config({})], key=[])(kernel))
        cases[name] = {
            "raw kernel[grid](...)": lambda k=kernel, g=grid, a=args, kw=kwargs: k[g](*a, **kw),
            "torch_triton_hop.wrap_triton": lambda k=ours, g=grid, a=args, kw=kwargs: k[g](*a, **kw),
            "torch.library.wrap_triton": lambda k=library, g=grid, a=args, kw=kwargs: k[g](*a, **kw),
        }
        if with_triton_launcher:  # ours, launching through triton's launcher instead of torch's static one
            from torch_triton_hop._wrap import _build_launch

            ours_triton = torch_triton_hop.wrap_triton(kernel)  # a second wrapper of its own
            _build_launch(ours_triton, static_launch=None)
            cases[name]["wrap_triton, triton's launcher"] = (
                lambda k=ours_triton, g=grid, a=args, kw=kwargs: k[g](*a, **kw))
        if without_wrapper:  # our generated launch alone: what wrap_triton's kernel[grid](...) adds is the rest
            from torch_triton_hop._fast_launch import NOT_FAST, fast_launcher

            def direct(launch=fast_launcher(kernel).launch, g=grid, a=args, kw=kwargs):
                if launch(g, *a, **kw) is NOT_FAST:
                    raise RuntimeError("the fast launch declined a benchmark call")

            cases[name]["our launch, no wrapper"] = direct
    return cases, (x, y, out, inputs, multipliers)


def _check(device: str, data, cases) -> None:
    """On a GPU: every path of every kernel computes the right thing."""
    x, y, out, inputs, multipliers = data
    expected = {
        "add": x + y, "autotuned (after tuning)": x + y, "heuristics": x + y,
        "21 arguments": sum(a * m for a, m in zip(inputs, multipliers)) + inputs[8] + inputs[9],
    }
    for name, paths in cases.items():
        for path, fn in paths.items():
            out.zero_()
            fn()
            torch.cuda.synchronize()
            torch.testing.assert_close(out, expected[name], msg=f"{name}, {path}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000, help="calls per path per round")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--real-launch", action="store_true", help="launch real kernels (needs a GPU)")
    parser.add_argument("--without-wrapper", action="store_true",
                        help="also time our generated launch called directly (no kernel[grid] wrapper)")
    args = parser.parse_args()
    device = "cuda" if args.real_launch else "cpu"
    if not args.real_launch:
        _stub_triton()
    sync = torch.cuda.synchronize if args.real_launch else (lambda: None)

    cases, data = _cases(device, args.n, with_triton_launcher=args.real_launch, without_wrapper=args.without_wrapper)
    for paths in cases.values():  # compile, tune, and warm every path's caches
        for fn in paths.values():
            for _ in range(3):
                fn()
    sync()
    if args.real_launch:
        _check(device, data, cases)

    times = {(name, path): [] for name, paths in cases.items() for path in paths}
    for _ in range(args.rounds):
        for name, paths in cases.items():
            for path, fn in paths.items():
                calls = args.calls if "torch.library" not in path else max(50, args.calls // 20)
                fn()
                times[name, path].append(_time(fn, calls, sync))

    print(f"torch {torch.__version__}, triton {triton.__version__}, launch {'real' if args.real_launch else 'stubbed'}"
          f", {torch.cuda.get_device_name() if args.real_launch else 'CPU'}; {args.rounds} interleaved rounds, "
          f"{args.calls} calls per path per round (torch.library: 1/20 of that)")
    if args.real_launch:
        from torch_triton_hop import _compat

        print("torch's static CUDA launcher:", "available" if _compat.static_cuda_launch() else "not available")
    print(f"{'kernel':26s} {'path':32s} {'us/call':>9s} {'x raw':>7s}")
    for name, paths in cases.items():
        raw = times[name, "raw kernel[grid](...)"]
        for path in paths:
            ratio = statistics.median(t / r for t, r in zip(times[name, path], raw))
            print(f"{name:26s} {path:32s} {statistics.median(times[name, path]):9.2f} {ratio:7.2f}")


if __name__ == "__main__":
    main()
