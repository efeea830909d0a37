"""Do fused epilogues that add two products round as inductor's own kernel does on a GPU?
(`python benchmarks/epilogue_products_probe.py [OUT_DIR]`, needs CUDA)

An epilogue `out * w + r * c` holds two multiplies feeding one add: LLVM / ptxas may contract
either into an FMA, and which one can depend on the code around it. For each expression this
compiles the program with fusion off and on and counts the elements where the fused result
differs from the unfused one (and from eager), printing the fused kernel's helper and the
FMAs in both kernels' PTX (TRITON_CACHE_DIR under OUT_DIR).
"""

import glob
import logging
import os
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/epilogue_products_probe"
os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(OUT, "triton_cache"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import torch_triton_hop  # noqa: E402
from torch_triton_hop import wrap_triton  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def add(x, y):
    out = torch.empty_like(x)
    wrap_triton(add_kernel)[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)
    return out


EXPRESSIONS = {
    "out*b.half().float() + r*0.5": lambda o, b, r, c: o * b.half().float() + r * 0.5,
    "out*b + r*0.5": lambda o, b, r, c: o * b + r * 0.5,
    "out*b + r*c": lambda o, b, r, c: o * b + r * c,
    "r*c + out*b": lambda o, b, r, c: r * c + o * b,
    "out*b + out*c": lambda o, b, r, c: o * b + o * c,
    "out*b.half().float() + r": lambda o, b, r, c: o * b.half().float() + r,
    "(out + r)*b + c": lambda o, b, r, c: (o + r) * b + c,
}


def run(name, expression, shape, fusion):
    torch._dynamo.reset()
    torch_triton_hop.config.fusion = fusion
    torch.manual_seed(0)
    x, y, r, c = (torch.randn(shape, device="cuda") for _ in range(4))
    b = torch.randn(shape[-1], device="cuda")

    def f(x, y, r, b, c):
        return expression(add(x, y), b, r, c)

    return torch.compile(f)(x, y, r, b, c), f(x, y, r, b, c)


def ptx_fmas(since):
    found = {}
    for path in glob.glob(os.path.join(os.environ["TRITON_CACHE_DIR"], "**", "*.ptx"), recursive=True):
        if os.path.getmtime(path) >= since:
            text = open(path).read()
            found[os.path.basename(path)] = (text.count("fma.rn.f32"), text.count("mul.f32") + text.count("mul.rn.f32"),
                                             text.count("add.f32") + text.count("add.rn.f32"))
    return found


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def main():
    import time
    records = Records()
    logger = logging.getLogger("torch_triton_hop._fusion")
    logger.addHandler(records)
    logger.setLevel(logging.DEBUG)
    for shape in [(16, 32), (1024, 1024)]:
        for name, expression in EXPRESSIONS.items():
            t0 = time.time()
            unfused, eager = run(name, expression, shape, False)
            unfused_ptx = ptx_fmas(t0)
            t1 = time.time()
            records.lines.clear()
            fused, _ = run(name, expression, shape, True)
            fused_ptx = ptx_fmas(t1)
            was_fused = any("fused {" in line and "'out_ptr'" in line.split("not fused")[0] for line in records.lines)
            print(f"{shape} {name:34s} fused={was_fused} fused!=unfused {int((fused != unfused).sum()):7d} "
                  f"fused!=eager {int((fused != eager).sum()):7d} unfused!=eager {int((unfused != eager).sum()):7d} "
                  f"of {fused.numel()}", flush=True)
            if shape == (16, 32):
                print(f"   PTX (fma, mul, add) unfused {unfused_ptx} fused {fused_ptx}")
                helper = [line for line in records.lines if "def _tth_epilogue" in line]
                if helper:
                    text = helper[0]
                    start = text.index("def _tth_epilogue")
                    print("   " + text[start:start + 900].replace("\n", "\n   "))


if __name__ == "__main__":
    main()
