"""Kernels for the core tests. Importable by module path, so exported programs that name
them load in a fresh process."""

import triton
import triton.language as tl

from torch_triton_hop import wrap_triton


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, ACT: tl.constexpr = None):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    out = tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)
    if ACT == "relu":
        out = tl.maximum(out, 0.0)
    tl.store(out_ptr + offs, out, mask=mask)


@wrap_triton
@triton.jit
def scale_inplace(x_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)


@triton.autotune(
    configs=[triton.Config({"BLOCK": 16}, num_warps=2), triton.Config({"BLOCK": 32}, num_warps=4)],
    key=["n"],
)
@triton.jit
def add_autotuned(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def add_heuristics_below(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))
    else:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.heuristics({"BLOCK": lambda args: 16 if args["n"] <= 64 else 32})
@triton.autotune(configs=[triton.Config({}, num_warps=2), triton.Config({}, num_warps=4)], key=["n"])
@triton.jit
def add_heuristics_above(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def keep_big_blocks(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK"] >= 32]


def block_cost(**meta):
    return float(meta["BLOCK"])  # smaller "runs faster": top_k keeps the smallest blocks


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}) for b in (16, 32, 64, 128)],
    key=["n"],
    prune_configs_by={"early_config_prune": keep_big_blocks, "perf_model": block_cost, "top_k": 2},
    restore_value=["out_ptr"],
    reset_to_zero=["y_ptr"],
)
@triton.jit
def add_pruned(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}, num_warps=2), triton.Config({"BLOCK": 32}, num_warps=4)],
                 key=["n"])
@triton.jit
def uses_num_warps(x_ptr, out_ptr, n, BLOCK: tl.constexpr, num_warps: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + num_warps, mask=mask)


@triton.jit
def mul_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def add_rows(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    """out[row, :] += x[row, :]: strided rows, so layouts matter."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)
    out = tl.load(out_ptr + row * out_row_stride + cols, mask=mask)
    tl.store(out_ptr + row * out_row_stride + cols, out + x, mask=mask)


@triton.jit
def two_outputs(x_ptr, a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(a_ptr + offs, x + 1.0, mask=mask)
    tl.store(b_ptr + offs, x * 2.0, mask=mask)


@triton.jit
def write_then_read(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """a[i] = 7; out[i] = b[i] + 1: where b aliases a, out sees the 7 (one program per block)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(a_ptr + offs, tl.full((BLOCK,), 7.0, tl.float32), mask=mask)
    tl.debug_barrier()
    tl.store(out_ptr + offs, tl.load(b_ptr + offs, mask=mask) + 1.0, mask=mask)


@triton.jit
def untouched_argument(x_ptr, unused_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)


@triton.jit
def swiglu_forward(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(c_ptr + offs, a * tl.sigmoid(a) * b, mask=mask)


@triton.jit
def swiglu_backward_in_place(dc_ptr, a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    """Like Liger's SwiGLU backward: the gradients overwrite the saved inputs a and b."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    dc = tl.load(dc_ptr + offs, mask=mask)
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    sig = tl.sigmoid(a)
    silu = a * sig
    tl.store(a_ptr + offs, dc * b * (silu * (1 - sig) + sig), mask=mask)
    tl.store(b_ptr + offs, dc * silu, mask=mask)


@triton.jit
def scale_rows_desc(x_desc, out_desc, scale, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Host-side TensorDescriptor (TMA) arguments: reads x_desc, writes out_desc."""
    row = tl.program_id(0) * BLOCK_M
    out_desc.store([row, 0], x_desc.load([row, 0]) * scale)


@triton.jit
def add_rows_desc_inplace(x_desc, y_desc, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """x += y through descriptors: x_desc is read and written."""
    row = tl.program_id(0) * BLOCK_M
    x_desc.store([row, 0], x_desc.load([row, 0]) + y_desc.load([row, 0]))


def _set_row_block_shapes(nargs):
    """As in triton's TMA tutorials: each config sets its descriptors' block shapes."""
    nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_N"]]
    nargs["out_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_N"]]


@triton.autotune(
    configs=[triton.Config({"BLOCK_M": 16}, pre_hook=_set_row_block_shapes),
             triton.Config({"BLOCK_M": 32}, pre_hook=_set_row_block_shapes)],
    key=["M"],
)
@triton.jit
def scale_rows_desc_autotuned(x_desc, out_desc, M, scale, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0) * BLOCK_M
    out_desc.store([row, 0], x_desc.load([row, 0]) * scale)
