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


@tl.constexpr
def accumulator_type(dtype):
    """A module-level constexpr function (FlagGems' get_scan_accum_type idiom)."""
    return tl.float32


@triton.jit
def add_one_accumulated(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc: tl.constexpr = accumulator_type(x_ptr.dtype.element_ty)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(acc) + 1.0, mask=mask)
