"""A kernel module with a visible side effect on import: it appends to the file named by
TTH_IMPORT_MARKER. The loading tests check that loading a program imports it only when allowed."""

import os

import triton
import triton.language as tl

if os.environ.get("TTH_IMPORT_MARKER"):
    with open(os.environ["TTH_IMPORT_MARKER"], "a") as marker:
        marker.write("marker_kernels imported\n")


@triton.jit
def add_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)
