"""Which product does a GPU kernel contract into an FMA? No GPU needed.
(`python benchmarks/fma_choice_ptx.py`; triton's bundled ptxas and nvdisasm, target sm_90)

For each epilogue expression of `out` (the user kernel's stored value), `w` (a broadcast row)
and `r`, this compiles two kernels to SASS: the one inductor writes for the epilogue, unfused
(loads, then the ops in inductor's order), and the user's kernel with the fused epilogue as
torch_triton_hop writes it (the stored value through the opaque move, then the same ops), and
prints each kernel's FFMA / FMUL / FADD lines. Where they contract different products, fused
and unfused round differently: see [Note: Two products added] in _pointwise_triton.
"""

import importlib.util
import os
import re
import subprocess
import sys
import tempfile

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

EXPRESSIONS = {  # name -> the epilogue, in the variables both kernels define
    "out * w + r * 0.5": "t_out * t_w + t_r * 0.5",
    "(out + r * 0.5) * w": "(t_out + t_r * 0.5) * t_w",
    "out * w + r": "t_out * t_w + t_r",
}

TEMPLATE = '''
import triton
import triton.language as tl


@triton.jit
def unfused(in_out, in_w, in_r, out_ptr, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    t_out = tl.load(in_out + xindex, xmask)
    t_w = tl.load(in_w + xindex % 32, xmask, eviction_policy="evict_last")
    t_r = tl.load(in_r + xindex, xmask)
    tl.store(out_ptr + xindex, {expression}, xmask)


@triton.jit
def _epilogue(value, offset, mask, in_w, in_r, ones):
    t_out = ((value.to(tl.int32, bitcast=True) & ones) | (ones + 1)).to(tl.float32, bitcast=True)
    t_w = tl.load(in_w + offset % 32, mask=mask)
    t_r = tl.load(in_r + offset, mask=mask)
    return {expression}


@triton.jit
def fused(x_ptr, y_ptr, out_ptr, n, in_w, in_r, ones, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    value = tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, _epilogue(value, offs, m, in_w, in_r, ones), mask=m)
'''

SIGNATURES = {
    "unfused": ({"in_out": "*fp32", "in_w": "*fp32", "in_r": "*fp32", "out_ptr": "*fp32", "xnumel": "i32",
                 "XBLOCK": "constexpr"}, {"XBLOCK": 256}),
    "fused": ({"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "in_w": "*fp32", "in_r": "*fp32",
               "ones": "i32", "BLOCK": "constexpr"}, {"BLOCK": 256}),
}


def sass_arithmetic(kernel, signature, constexprs):
    compiled = triton.compile(ASTSource(kernel, signature, constexprs), target=GPUTarget("cuda", 90, 32))
    nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as cubin:
        cubin.write(compiled.asm["cubin"])
        cubin.flush()
        sass = subprocess.run([nvdisasm, cubin.name], capture_output=True, text=True, check=True).stdout
    return [re.sub(r"\s+", " ", line.split("*/")[1]).strip(" ;") for line in sass.splitlines()
            if "*/" in line and re.search(r"\b(FFMA|FMUL|FADD)\b", line)]


def main():
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # triton's default before 3.10, as on the GPU
    for name, expression in EXPRESSIONS.items():
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "fma_choice_kernels.py")
            with open(path, "w") as f:
                f.write(TEMPLATE.replace("{expression}", expression))
            spec = importlib.util.spec_from_file_location("fma_choice_kernels", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules["fma_choice_kernels"] = module
            spec.loader.exec_module(module)
            print(name)
            for kind, (signature, constexprs) in SIGNATURES.items():
                print(f"  {kind:8s}", sass_arithmetic(getattr(module, kind), signature, constexprs))


if __name__ == "__main__":
    main()
