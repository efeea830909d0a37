"""Kernel corpus for the read/write analysis: each case names what the kernel really reads and writes."""
import dataclasses
from typing import Any, Callable

import torch
import triton
import triton.language as tl


@dataclasses.dataclass(frozen=True)
class Case:
    name: str                         # unique, snake_case
    kernel: Any                       # the @triton.jit (or @triton.autotune / @triton.heuristics wrapped) kernel
    make_kwargs: Callable[[], dict]   # returns a value for EVERY kernel parameter, by name
    reads: tuple[str, ...]            # tensor args whose memory the kernel may read, in parameter order
    writes: tuple[str, ...]           # tensor args whose memory the kernel may write, in parameter order
    grid: tuple = (1,)                # a grid that runs it correctly
    interpretable: bool = True        # False if it cannot run under TRITON_INTERPRET=1 on CPU
    note: str = ""                    # what construct it covers


# --------------------------------------------------------------------------------------
# deterministic small CPU tensors
# --------------------------------------------------------------------------------------

N = 128


def _randn(n, seed, *shape):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*(shape or (n,)), generator=g)


def _randint(n, lo, hi, seed, dtype=torch.int32):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, (n,), generator=g, dtype=torch.int64).to(dtype)


def _zeros(n, dtype=torch.float32):
    return torch.zeros(n, dtype=dtype)


# --------------------------------------------------------------------------------------
# plain loads / stores
# --------------------------------------------------------------------------------------

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def load_only_volatile_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0, volatile=True)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0, volatile=True)
    z = x + y  # noqa: F841  (nothing is stored)


@triton.jit
def load_only_unused_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    z = x * y  # noqa: F841


@triton.jit
def fill_kernel(out_ptr, n_elements, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    vals = tl.full([BLOCK], value, tl.float32)
    tl.store(out_ptr + offs, vals, mask=offs < n_elements)


@triton.jit
def mul2_inplace_kernel(x_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x * 2.0, mask=mask)


@triton.jit
def mixed_args_kernel(a_ptr, n_elements, b_ptr, BLOCK: tl.constexpr, out_ptr, alpha, prod_ptr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + alpha * b, mask=mask)
    tl.store(prod_ptr + offs, a * b, mask=mask)


@triton.jit
def strided_copy_kernel(x_ptr, stride_x, out_ptr, stride_out, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs * stride_x, mask=mask)
    tl.store(out_ptr + offs * stride_out, x, mask=mask)


@triton.jit
def optional_bias_kernel(x_ptr, bias_ptr, out_ptr, aux_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    if bias_ptr is not None:
        x += tl.load(bias_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)
    if aux_ptr is not None:
        tl.store(aux_ptr + offs, x * x, mask=mask)


@triton.jit
def double_strided_2d_kernel(in_ptr, out_ptr, in_y_stride, out_y_stride, X_BLOCK: tl.constexpr,
                             Y_BLOCK: tl.constexpr):
    xo = tl.arange(0, X_BLOCK)
    yo = tl.arange(0, Y_BLOCK)
    src = tl.load(in_ptr + yo[:, None] * in_y_stride + xo[None, :])
    tl.store(out_ptr + yo[:, None] * out_y_stride + xo[None, :], src * 2.0)


@triton.jit
def unused_tensor_kernel(x_ptr, unused_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


@triton.jit
def pointer_compare_kernel(a_ptr, b_ptr, x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    # a_ptr / b_ptr are only compared as addresses; their memory is never touched
    if a_ptr.to(tl.int64) == b_ptr.to(tl.int64):
        x = x * 2.0
    tl.store(out_ptr + offs, x, mask=mask)


@triton.jit
def multi_output_kernel(x_ptr, sq_ptr, neg_ptr, n_elements, scale, twice_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(sq_ptr + offs, x * x, mask=mask)
    tl.store(neg_ptr + offs, -x * scale, mask=mask)
    tl.store(twice_ptr + offs, x + x, mask=mask)


@triton.jit
def int64_offset_kernel(x_ptr, out_ptr, n_elements, row_stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * row_stride + tl.arange(0, BLOCK).to(tl.int64)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + 3.0, mask=mask)


@triton.jit
def pointer_bitcast_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x_bits_ptr = x_ptr.to(tl.pointer_type(tl.int32))      # fp32 tensor viewed as int32
    out_f_ptr = out_ptr.to(tl.pointer_type(tl.float32))   # int32 tensor written as fp32
    bits = tl.load(x_bits_ptr + offs, mask=mask)
    tl.store(out_f_ptr + offs, (bits & 0xFF).to(tl.float32), mask=mask)


@triton.jit
def pointer_shape_ops_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R * C)
    in_ptrs = tl.reshape(x_ptr + offs, (R, C))
    in_ptrs_t = tl.trans(in_ptrs)                                  # (C, R) block of pointers
    vals = tl.load(in_ptrs_t)
    out_rows = tl.expand_dims(out_ptr + tl.arange(0, C) * R, 1)     # (C, 1) pointers
    out_ptrs = tl.broadcast_to(out_rows, (C, R)) + tl.expand_dims(tl.arange(0, R), 0)
    tl.store(out_ptrs, vals)


@triton.jit
def hints_and_cache_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    tl.assume(n_elements > 0)
    start = tl.multiple_of(tl.program_id(0) * BLOCK, BLOCK)
    offs = tl.max_contiguous(start + tl.arange(0, BLOCK), BLOCK)
    mask = offs < n_elements
    end = x_ptr + n_elements
    src = end - n_elements + offs                        # pointer moved forward then back
    x = tl.load(src, mask=mask, other=0.0, cache_modifier=".cg", eviction_policy="evict_first")
    tl.store(out_ptr + offs, x, mask=mask, cache_modifier=".cs", eviction_policy="evict_last")


@triton.jit
def early_return_kernel(x_ptr, out_ptr, n_active, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid >= n_active:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 3.0)


@triton.jit
def bool_mask_kernel(x_ptr, keep_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    valid = offs < n_elements
    x = tl.load(x_ptr + offs, mask=valid)
    keep = tl.load(keep_ptr + offs, mask=valid, other=0) != 0
    tl.store(out_ptr + offs, tl.where(keep, x, 0.0), mask=valid)


# --------------------------------------------------------------------------------------
# runtime / constexpr branches choosing pointers
# --------------------------------------------------------------------------------------

@triton.jit
def runtime_if_ptr_kernel(src_ptr, a_ptr, b_ptr, flag, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    if flag > 0:
        p = a_ptr
    else:
        p = b_ptr
    tl.store(p + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def runtime_if_loaded_cond_kernel(cond_ptr, src_ptr, a_ptr, b_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(src_ptr + offs, mask=mask)
    c = tl.load(cond_ptr)
    if c > 0:
        tl.store(a_ptr + offs, x, mask=mask)
    else:
        tl.store(b_ptr + offs, -x, mask=mask)


@triton.jit
def runtime_ternary_ptr_kernel(src_ptr, a_ptr, b_ptr, flag, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    p = a_ptr if flag != 0 else b_ptr
    tl.store(p + offs, tl.load(src_ptr + offs, mask=mask) + 1.0, mask=mask)


@triton.jit(do_not_specialize=["flag"])
def runtime_flag_unspecialized_kernel(src_ptr, a_ptr, b_ptr, flag, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(src_ptr + offs, mask=mask)
    if flag == 1:
        tl.store(a_ptr + offs, x, mask=mask)
    else:
        tl.store(b_ptr + offs, x, mask=mask)


@triton.jit
def runtime_accumulate_kernel(x_ptr, out_ptr, accumulate, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    acc = tl.load(x_ptr + offs, mask=mask)
    if accumulate != 0:
        acc += tl.load(out_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, acc, mask=mask)


@triton.jit
def constexpr_branch_kernel(src_ptr, a_ptr, b_ptr, n_elements, WHICH: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(src_ptr + offs, mask=mask)
    if WHICH == 0:
        tl.store(a_ptr + offs, x, mask=mask)
    else:
        tl.store(b_ptr + offs, x, mask=mask)


@triton.jit
def constexpr_accumulate_kernel(x_ptr, out_ptr, n_elements, ACCUMULATE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    acc = tl.load(x_ptr + offs, mask=mask)
    if ACCUMULATE:
        acc += tl.load(out_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, acc, mask=mask)


@triton.jit
def constexpr_select_input_kernel(a_ptr, b_ptr, out_ptr, n_elements, USE_B: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    src = b_ptr if USE_B else a_ptr
    tl.store(out_ptr + offs, tl.load(src + offs, mask=mask), mask=mask)


# --------------------------------------------------------------------------------------
# helper functions receiving / returning pointers
# --------------------------------------------------------------------------------------

@triton.jit
def _store_block(ptr, offs, val, mask):
    tl.store(ptr + offs, val, mask=mask)


@triton.jit
def _load_block(ptr, offs, mask):
    return tl.load(ptr + offs, mask=mask, other=0.0)


@triton.jit
def _scale_and_store(src_ptr, dst_ptr, offs, mask, factor):
    v = _load_block(src_ptr, offs, mask)
    _store_block(dst_ptr, offs, v * factor, mask)


@triton.jit
def _outer_helper(src_ptr, dst_ptr, offs, mask):
    _scale_and_store(src_ptr, dst_ptr, offs, mask, 4.0)


@triton.jit
def _row_ptr(base, row, stride):
    return base + row * stride


@triton.jit
def _pick_ptr(a, b, FIRST: tl.constexpr):
    if FIRST:
        return a
    else:
        return b


@triton.jit
def _runtime_pick_ptr(a, b, flag):
    return a if flag > 0 else b


@triton.jit(noinline=True)
def _noinline_copy(src_ptr, dst_ptr, start, n_elements, BLOCK: tl.constexpr):
    # noinline functions may only take scalars (pointers, ints, constexprs)
    offs = start + tl.arange(0, BLOCK)
    mask = offs < n_elements
    v = tl.load(src_ptr + offs, mask=mask)
    tl.store(dst_ptr + offs, v + 0.5, mask=mask)


@triton.jit
def helper_store_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    _store_block(out_ptr, offs, x - 1.0, mask)


@triton.jit
def helper_load_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    s = _load_block(x_ptr, offs, mask) + _load_block(y_ptr, offs, mask)
    tl.store(out_ptr + offs, s, mask=mask)


@triton.jit
def helper_nested_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    _outer_helper(x_ptr, out_ptr, offs, mask)


@triton.jit
def helper_returns_ptr_kernel(x_ptr, out_ptr, stride_x, stride_out, COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, COLS)
    src = _row_ptr(x_ptr, row, stride_x)
    dst = _row_ptr(out_ptr, row, stride_out)
    tl.store(dst + cols, tl.load(src + cols) * 2.0)


@triton.jit
def helper_constexpr_pick_kernel(src_ptr, a_ptr, b_ptr, n_elements, FIRST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    dst = _pick_ptr(a_ptr, b_ptr, FIRST)
    tl.store(dst + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def helper_runtime_pick_kernel(src_ptr, a_ptr, b_ptr, flag, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    dst = _runtime_pick_ptr(a_ptr, b_ptr, flag)
    tl.store(dst + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _copy_plus_one(src_ptr, dst_ptr, offs, mask):
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask) + 1.0, mask=mask)


@triton.jit
def helper_called_twice_kernel(a_ptr, b_ptr, c_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    _copy_plus_one(a_ptr, b_ptr, offs, mask)    # same helper, two call sites, roles shift:
    _copy_plus_one(b_ptr, c_ptr, offs, mask)    # b is written by the first call and read by the second


@triton.jit
def helper_noinline_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    _noinline_copy(x_ptr, out_ptr, tl.program_id(0) * BLOCK, n_elements, BLOCK)


# --------------------------------------------------------------------------------------
# loops carrying pointers
# --------------------------------------------------------------------------------------

@triton.jit
def for_loop_ptr_load_kernel(x_ptr, out_ptr, n_rows, row_stride, COLS: tl.constexpr):
    cols = tl.arange(0, COLS)
    acc = tl.zeros([COLS], dtype=tl.float32)
    p = x_ptr
    for _ in range(n_rows):
        acc += tl.load(p + cols)
        p += row_stride
    tl.store(out_ptr + cols, acc)


@triton.jit
def for_loop_ptr_store_kernel(x_ptr, out_ptr, n_rows, row_stride, COLS: tl.constexpr):
    cols = tl.arange(0, COLS)
    v = tl.load(x_ptr + cols)
    q = out_ptr
    for i in range(n_rows):
        tl.store(q + cols, v * i)
        q += row_stride


@triton.jit
def while_loop_ptr_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    src = x_ptr
    dst = out_ptr
    start = 0
    while start < n_elements:
        mask = start + offs < n_elements
        tl.store(dst + offs, tl.load(src + offs, mask=mask) + 1.0, mask=mask)
        src += BLOCK
        dst += BLOCK
        start += BLOCK


@triton.jit
def swap_loop_kernel(a_ptr, b_ptr, steps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    src = a_ptr
    dst = b_ptr
    for _ in range(steps):
        tl.store(dst + offs, tl.load(src + offs) + 1.0)
        src, dst = dst, src


@triton.jit
def swap_loop_store_only_kernel(a_ptr, b_ptr, steps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = a_ptr
    q = b_ptr
    for i in range(steps):
        tl.store(p + offs, tl.full([BLOCK], i, tl.float32))
        p, q = q, p


@triton.jit
def nested_loop_ptr_kernel(x_ptr, out_ptr, n_rows, n_col_blocks, row_stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    row_src = x_ptr
    row_dst = out_ptr
    for _ in range(n_rows):
        s = row_src
        d = row_dst
        for _j in range(n_col_blocks):
            tl.store(d + offs, tl.load(s + offs) * 0.5)
            s += BLOCK
            d += BLOCK
        row_src += row_stride
        row_dst += row_stride


@triton.jit
def static_range_ptr_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, CHUNKS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = x_ptr
    q = out_ptr
    for _ in tl.static_range(CHUNKS):
        tl.store(q + offs, tl.load(p + offs) - 2.0)
        p += BLOCK
        q += BLOCK


@triton.jit
def runtime_if_then_loop_kernel(src_ptr, a_ptr, b_ptr, flag, n_rows, row_stride, COLS: tl.constexpr):
    cols = tl.arange(0, COLS)
    if flag > 0:
        dst = a_ptr
    else:
        dst = b_ptr
    s = src_ptr
    for _ in range(n_rows):
        tl.store(dst + cols, tl.load(s + cols))
        dst += row_stride
        s += row_stride


@triton.jit
def loop_loaded_branch_kernel(sel_ptr, x_ptr, a_ptr, b_ptr, n_items):
    for i in tl.range(0, n_items, num_stages=2):
        v = tl.load(x_ptr + i)
        if tl.load(sel_ptr + i) > 0:
            tl.store(a_ptr + i, v)
        else:
            tl.store(b_ptr + i, v)


# --------------------------------------------------------------------------------------
# tl.where on pointers
# --------------------------------------------------------------------------------------

@triton.jit
def where_ptr_store_kernel(x_ptr, even_ptr, odd_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    dst = tl.where(offs % 2 == 0, even_ptr + offs // 2, odd_ptr + offs // 2)
    tl.store(dst, x)


@triton.jit
def where_scalar_ptr_kernel(src_ptr, a_ptr, b_ptr, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    dst = tl.where(flag > 0, a_ptr, b_ptr)
    tl.store(dst + offs, tl.load(src_ptr + offs))


@triton.jit
def where_ptr_load_kernel(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    src = tl.where(offs < BLOCK // 2, a_ptr + offs, b_ptr + offs)
    tl.store(out_ptr + offs, tl.load(src))


@triton.jit
def join_ptr_kernel(x_ptr, a_ptr, b_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    both = tl.join(a_ptr + offs, b_ptr + offs)            # (BLOCK, 2) pointers into two tensors
    x = tl.load(x_ptr + offs)
    tl.store(both, tl.join(x, -x))


# --------------------------------------------------------------------------------------
# atomics
# --------------------------------------------------------------------------------------

@triton.jit
def atomic_add_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.atomic_add(out_ptr + offs % 16, x, mask=mask)


@triton.jit
def atomic_counter_kernel(counter_ptr, ticket_ptr):
    old = tl.atomic_add(counter_ptr, 1)
    tl.store(ticket_ptr + tl.program_id(0), old)


@triton.jit
def atomic_max_min_kernel(x_ptr, max_ptr, min_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.atomic_max(max_ptr + offs % 8, x, mask=mask)
    tl.atomic_min(min_ptr + offs % 8, x, mask=mask)


@triton.jit
def atomic_cas_lock_kernel(lock_ptr, x_ptr, acc_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    partial = tl.sum(tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0))
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(acc_ptr, tl.load(acc_ptr) + partial)
    tl.atomic_xchg(lock_ptr, 0)


@triton.jit
def atomic_xchg_kernel(x_ptr, buf_ptr, old_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    old = tl.atomic_xchg(buf_ptr + offs, x, mask=mask)
    tl.store(old_ptr + offs, old, mask=mask)


@triton.jit
def atomic_bitwise_kernel(bits_ptr, or_ptr, and_ptr, xor_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    b = tl.load(bits_ptr + offs, mask=mask)
    tl.atomic_or(or_ptr + offs % 4, b, mask=mask)
    tl.atomic_and(and_ptr + offs % 4, b, mask=mask)
    tl.atomic_xor(xor_ptr + offs % 4, b, mask=mask)


@triton.jit
def histogram_kernel(idx_ptr, hist_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    bins = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)


# --------------------------------------------------------------------------------------
# reductions and scans
# --------------------------------------------------------------------------------------

@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def _add_combine(a, b):
    return a + b


@triton.jit
def _argmax_combine(v1, i1, v2, i2):
    take1 = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(take1, v1, v2), tl.where(take1, i1, i2)


@triton.jit
def reduce_custom_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr, tl.reduce(x, 0, _max_combine))


@triton.jit
def reduce_argmax_kernel(x_ptr, val_ptr, idx_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    v, i = tl.reduce((x, offs), 0, _argmax_combine)
    tl.store(val_ptr, v)
    tl.store(idx_ptr, i)


@triton.jit
def sum_rows_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    r = tl.arange(0, ROWS)
    c = tl.arange(0, COLS)
    x = tl.load(x_ptr + r[:, None] * COLS + c[None, :])
    tl.store(out_ptr + r, tl.sum(x, axis=1))


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0))


@triton.jit
def associative_scan_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.associative_scan(x, 0, _max_combine))


# --------------------------------------------------------------------------------------
# device-side tensor descriptors
# --------------------------------------------------------------------------------------

@triton.jit
def tensor_desc_add_kernel(a_ptr, b_ptr, c_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    om = tl.program_id(0) * BLOCK_M
    on = tl.program_id(1) * BLOCK_N
    c_desc.store([om, on], a_desc.load([om, on]) + b_desc.load([om, on]))


@triton.jit
def tensor_desc_store_only_kernel(out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    desc.store([tl.program_id(0) * BLOCK_M, 0], tl.full([BLOCK_M, BLOCK_N], 5.0, tl.float32))


@triton.jit
def tensor_desc_inplace_kernel(x_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    om = tl.program_id(0) * BLOCK_M
    desc.store([om, 0], desc.load([om, 0]) * 3.0)


@triton.jit
def tensor_desc_loop_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # replaces make_block_ptr + tl.advance (block pointers were removed in triton 3.9):
    # the offsets move through the row in a loop; the last block is partly out of bounds (zero padded)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    od = tl.make_tensor_descriptor(out_ptr, shape=[M, BLOCK_N], strides=[BLOCK_N, 1], block_shape=[BLOCK_M, BLOCK_N])
    om = tl.program_id(0) * BLOCK_M
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for on in range(0, N, BLOCK_N):
        acc += xd.load([om, on])
    od.store([om, 0], acc)


@triton.jit
def _desc_scale(desc, om, factor):
    desc.store([om, 0], desc.load([om, 0]) * factor)


@triton.jit
def tensor_desc_helper_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    om = tl.program_id(0) * BLOCK_M
    _desc_scale(yd, om, 2.0)
    v = tl.load_tensor_descriptor(xd, [om, 0])         # free-function forms
    tl.store_tensor_descriptor(yd, [om, 0], tl.load_tensor_descriptor(yd, [om, 0]) + v)


@triton.jit
def tensor_desc_runtime_base_kernel(src_ptr, a_ptr, b_ptr, flag, M, N, BLOCK_M: tl.constexpr,
                                    BLOCK_N: tl.constexpr):
    base = a_ptr if flag > 0 else b_ptr
    sd = tl.make_tensor_descriptor(src_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    dd = tl.make_tensor_descriptor(base, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    om = tl.program_id(0) * BLOCK_M
    dd.store([om, 0], sd.load([om, 0]))


@triton.jit
def tensor_desc_atomic_add_kernel(x_ptr, acc_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    ad = tl.make_tensor_descriptor(acc_ptr, shape=[BLOCK_M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    ad.atomic_add([0, 0], xd.load([tl.program_id(0) * BLOCK_M, 0]))


@triton.jit
def atomic_load_store_kernel(flag_ptr, x_ptr, out_ptr, done_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    f = tl.atomic_load(flag_ptr, sem="acquire")
    x = tl.atomic_load(x_ptr + offs, sem="relaxed")
    tl.atomic_store(out_ptr + offs, x * f, sem="relaxed")
    tl.atomic_store(done_ptr, f + 1, sem="release")


# --------------------------------------------------------------------------------------
# shared DAGs, inline asm, dot
# --------------------------------------------------------------------------------------

@triton.jit
def shared_value_dag_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, DEPTH: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    ptrs = x_ptr + offs
    v = tl.load(ptrs)
    for _ in tl.static_range(DEPTH):
        w = tl.load(ptrs)                 # the same address re-read many times
        v = tl.where(v > w, v - w, v + w) * 0.5 + v * 0.25
    tl.store(out_ptr + offs, v)


@triton.jit
def shared_pointer_dag_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, DEPTH: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = x_ptr + offs
    q = out_ptr + offs
    for i in tl.static_range(DEPTH):
        # each level refers to the previous pointer twice: a naive tree walk is 2**DEPTH
        p = tl.where(offs % 2 == i % 2, p, p)
        q = tl.where(offs < BLOCK, q + 0, q)
    tl.store(q, tl.load(p) + 1.0)


@triton.jit
def inline_asm_pure_kernel(X, Y, Z, n: tl.constexpr, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    y = tl.load(Y + tl.arange(0, BLOCK))
    s = tl.full([BLOCK], n, tl.int32)
    z = tl.inline_asm_elementwise(
        "shf.l.wrap.b32 $0, $1, $2, $3;",
        "=r,r, r, r",
        [x, y, s],
        dtype=tl.int32,
        is_pure=True,
        pack=1,
    )
    tl.store(Z + tl.arange(0, BLOCK), z)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


# --------------------------------------------------------------------------------------
# autotune / heuristics
# --------------------------------------------------------------------------------------

def _wallclock_bench(kernel_call, quantiles):
    """Crude benchmark so autotuning also works without a GPU driver (e.g. under TRITON_INTERPRET=1)."""
    import time
    t0 = time.perf_counter()
    kernel_call()
    t = (time.perf_counter() - t0) * 1e3
    return [t for _ in quantiles] if quantiles else t


@triton.autotune(
    configs=[triton.Config({"BLOCK": 16}, num_warps=1), triton.Config({"BLOCK": 32}, num_warps=2)],
    key=["n_elements"],
    do_bench=_wallclock_bench,
)
@triton.jit
def autotuned_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.heuristics({"EVEN_N": lambda args: args["n_elements"] % args["BLOCK"] == 0})
@triton.jit
def heuristics_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN_N:
        x = tl.load(x_ptr + offs)
        tl.store(out_ptr + offs, x * x)
    else:
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x * x, mask=mask)


@triton.autotune(
    configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})],
    key=["n_elements"],
    do_bench=_wallclock_bench,
)
@triton.heuristics({"HAS_BIAS": lambda args: args["bias_ptr"] is not None})
@triton.jit
def autotuned_heuristics_bias_kernel(x_ptr, bias_ptr, out_ptr, n_elements, BLOCK: tl.constexpr,
                                     HAS_BIAS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    if HAS_BIAS:
        x += tl.load(bias_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


# --------------------------------------------------------------------------------------
# data-dependent masks / addresses
# --------------------------------------------------------------------------------------

@triton.jit
def loaded_mask_store_kernel(x_ptr, mask_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    valid = offs < n_elements
    m = tl.load(mask_ptr + offs, mask=valid, other=0) != 0
    x = tl.load(x_ptr + offs, mask=valid)
    tl.store(out_ptr + offs, x, mask=m & valid)


@triton.jit
def gather_kernel(idx_ptr, x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.load(x_ptr + idx, mask=mask), mask=mask)


@triton.jit
def scatter_kernel(x_ptr, idx_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + idx, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def indirect_row_kernel(rows_ptr, x_ptr, out_ptr, row_stride, COLS: tl.constexpr):
    pid = tl.program_id(0)
    row = tl.load(rows_ptr + pid).to(tl.int64)        # int64 row id loaded from memory
    cols = tl.arange(0, COLS)
    src = x_ptr + row * row_stride
    tl.store(out_ptr + pid * COLS + cols, tl.load(src + cols))


# --------------------------------------------------------------------------------------
# masked loads without other= feeding reductions
# --------------------------------------------------------------------------------------
# A masked load without `other` gives 0 in its masked-off lanes (on a GPU and in the
# interpreter); kernels that reduce such a load (a row shorter than the block) rely on it.

@triton.jit
def masked_row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@triton.jit
def masked_rms_norm_kernel(x_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    w = tl.load(w_ptr + cols, mask=mask)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(out_ptr + row * n_cols + cols, x * rstd * w, mask=mask)


@triton.jit
def masked_loop_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def masked_row_max_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + row, tl.max(x, axis=0))


# --------------------------------------------------------------------------------------
# the cases
# --------------------------------------------------------------------------------------

def _kw_add():
    return dict(x_ptr=_randn(N, 1), y_ptr=_randn(N, 2), out_ptr=_zeros(N), n_elements=N, BLOCK=32)


def _kw_load_only():
    return dict(x_ptr=_randn(N, 1), y_ptr=_randn(N, 2), n_elements=N, BLOCK=32)


def _kw_optional_bias(bias, aux):
    def make():
        return dict(x_ptr=_randn(N, 1), bias_ptr=_randn(N, 2) if bias else None, out_ptr=_zeros(N),
                    aux_ptr=_zeros(N) if aux else None, n_elements=N, BLOCK=32)
    return make


def _kw_src_ab(flag=None, **extra):
    def make():
        kw = dict(src_ptr=_randn(64, 3), a_ptr=_zeros(64), b_ptr=_zeros(64))
        if flag is not None:
            kw["flag"] = flag
        kw.update(extra)
        return kw
    return make


def _kw_single_in_out(n=N, block=32, **extra):
    def make():
        kw = dict(x_ptr=_randn(n, 1), out_ptr=_zeros(n), n_elements=n, BLOCK=block)
        kw.update(extra)
        return kw
    return make


CASES: list[Case] = [
    # ---- plain pointer arithmetic ---------------------------------------------------------
    Case("add_basic", add_kernel, _kw_add, ("x_ptr", "y_ptr"), ("out_ptr",), grid=(4,),
         note="plain masked loads and a store via pointer arithmetic"),
    Case("load_only_volatile", load_only_volatile_kernel, _kw_load_only, ("x_ptr", "y_ptr"), (), grid=(4,),
         note="volatile loads only, no store at all"),
    Case("load_only_unused_result", load_only_unused_kernel, _kw_load_only, ("x_ptr", "y_ptr"), (), grid=(4,),
         note="plain loads whose results are unused (present in raw TTIR; a DCE pass would remove them)"),
    Case("store_only_fill", fill_kernel, lambda: dict(out_ptr=_zeros(N), n_elements=N, value=2.5, BLOCK=32),
         (), ("out_ptr",), grid=(4,), note="store only, float scalar argument, nothing loaded"),
    Case("inplace_mul2", mul2_inplace_kernel, lambda: dict(x_ptr=_randn(N, 4), n_elements=N, BLOCK=32),
         ("x_ptr",), ("x_ptr",), grid=(4,), note="same argument loaded and stored (in-place)"),
    Case("mixed_scalar_constexpr_args", mixed_args_kernel,
         lambda: dict(a_ptr=_randn(N, 1), n_elements=N, b_ptr=_randn(N, 2), BLOCK=32, out_ptr=_zeros(N),
                      alpha=0.5, prod_ptr=_zeros(N)),
         ("a_ptr", "b_ptr"), ("out_ptr", "prod_ptr"), grid=(4,),
         note="tensors interleaved with int, constexpr and float parameters"),
    Case("int_arg_equal_to_1", strided_copy_kernel,
         lambda: dict(x_ptr=_randn(2 * N, 5), stride_x=2, out_ptr=_zeros(N), stride_out=1, n_elements=N, BLOCK=32),
         ("x_ptr",), ("out_ptr",), grid=(4,),
         note="stride_out == 1 is specialized to a constant by the JIT, shifting argument numbering"),
    Case("none_arg_optional_bias_absent", optional_bias_kernel, _kw_optional_bias(False, False),
         ("x_ptr",), ("out_ptr",), grid=(4,),
         note="None tensor arguments (bias and aux) resolved by `is not None` at compile time"),
    Case("none_arg_optional_bias_present", optional_bias_kernel, _kw_optional_bias(True, False),
         ("x_ptr", "bias_ptr"), ("out_ptr",), grid=(4,),
         note="same kernel, bias given, aux None"),
    Case("none_arg_optional_aux_present", optional_bias_kernel, _kw_optional_bias(False, True),
         ("x_ptr",), ("out_ptr", "aux_ptr"), grid=(4,),
         note="same kernel, bias None, optional second output given"),
    Case("double_strided_2d", double_strided_2d_kernel,
         lambda: dict(in_ptr=_randn(0, 6, 16, 16), out_ptr=torch.zeros(16, 32), in_y_stride=16, out_y_stride=32,
                      X_BLOCK=8, Y_BLOCK=16),
         ("in_ptr",), ("out_ptr",), note="2D broadcast pointer arithmetic with different row strides"),
    Case("unused_tensor_arg", unused_tensor_kernel,
         lambda: dict(x_ptr=_randn(N, 1), unused_ptr=_randn(N, 9), out_ptr=_zeros(N), n_elements=N, BLOCK=32),
         ("x_ptr",), ("out_ptr",), grid=(4,), note="a tensor argument that is never used at all"),
    Case("pointer_compare_only", pointer_compare_kernel,
         lambda: dict(a_ptr=_randn(16, 7), b_ptr=_randn(16, 8), x_ptr=_randn(N, 1), out_ptr=_zeros(N),
                      n_elements=N, BLOCK=32),
         ("x_ptr",), ("out_ptr",), grid=(4,),
         note="a_ptr/b_ptr only compared as addresses (a_ptr == b_ptr), never dereferenced"),
    Case("multiple_outputs", multi_output_kernel,
         lambda: dict(x_ptr=_randn(N, 1), sq_ptr=_zeros(N), neg_ptr=_zeros(N), n_elements=N, scale=3.0,
                      twice_ptr=_zeros(N), BLOCK=32),
         ("x_ptr",), ("sq_ptr", "neg_ptr", "twice_ptr"), grid=(4,), note="one input, three outputs"),
    Case("int64_offsets", int64_offset_kernel,
         lambda: dict(x_ptr=_randn(N, 1), out_ptr=_zeros(N), n_elements=N, row_stride=32, BLOCK=32),
         ("x_ptr",), ("out_ptr",), grid=(4,), note="pointer offsets computed in int64"),
    Case("pointer_bitcast", pointer_bitcast_kernel,
         lambda: dict(x_ptr=_randn(N, 1), out_ptr=torch.zeros(N, dtype=torch.int32), n_elements=N, BLOCK=32),
         ("x_ptr",), ("out_ptr",), grid=(4,),
         note="pointers reinterpreted with ptr.to(tl.pointer_type(...)) before load and store"),
    Case("pointer_shape_ops", pointer_shape_ops_kernel,
         lambda: dict(x_ptr=_randn(64, 11), out_ptr=_zeros(64), R=8, C=8),
         ("x_ptr",), ("out_ptr",),
         note="pointer tensors through reshape / trans / expand_dims / broadcast_to"),
    Case("hints_cache_modifiers", hints_and_cache_kernel, _kw_single_in_out(n=100),
         ("x_ptr",), ("out_ptr",), grid=(4,),
         note="tl.assume / multiple_of / max_contiguous, cache and eviction hints, ptr + n - n"),
    Case("early_return", early_return_kernel,
         lambda: dict(x_ptr=_randn(N, 1), out_ptr=_zeros(N), n_active=2, BLOCK=32),
         ("x_ptr",), ("out_ptr",), grid=(4,), note="runtime early `return` before the load/store"),
    Case("bool_tensor_arg", bool_mask_kernel,
         lambda: dict(x_ptr=_randn(N, 1), keep_ptr=_randn(N, 12) > 0, out_ptr=_zeros(N), n_elements=N, BLOCK=32),
         ("x_ptr", "keep_ptr"), ("out_ptr",), grid=(4,), note="torch.bool tensor (*i1) read as a mask"),

    # ---- branches ---------------------------------------------------------------------------
    Case("runtime_if_else_ptr", runtime_if_ptr_kernel, _kw_src_ab(flag=5, n_elements=64, BLOCK=64),
         ("src_ptr",), ("a_ptr", "b_ptr"), note="destination pointer chosen by runtime if/else on an int scalar"),
    Case("runtime_if_loaded_condition", runtime_if_loaded_cond_kernel,
         lambda: dict(cond_ptr=torch.tensor([3], dtype=torch.int32), src_ptr=_randn(64, 3), a_ptr=_zeros(64),
                      b_ptr=_zeros(64), n_elements=64, BLOCK=64),
         ("cond_ptr", "src_ptr"), ("a_ptr", "b_ptr"), note="runtime if on a loaded scalar; store in each branch"),
    Case("runtime_ternary_ptr", runtime_ternary_ptr_kernel, _kw_src_ab(flag=0, n_elements=64, BLOCK=64),
         ("src_ptr",), ("a_ptr", "b_ptr"), note="pointer chosen by a runtime conditional expression (x if c else y)"),
    Case("runtime_flag_do_not_specialize", runtime_flag_unspecialized_kernel,
         _kw_src_ab(flag=1, n_elements=64, BLOCK=64), ("src_ptr",), ("a_ptr", "b_ptr"),
         note="flag == 1 but do_not_specialize keeps it a runtime branch: both sides count"),
    Case("runtime_accumulate_flag", runtime_accumulate_kernel,
         lambda: dict(x_ptr=_randn(N, 1), out_ptr=_randn(N, 2), accumulate=0, n_elements=N, BLOCK=32),
         ("x_ptr", "out_ptr"), ("out_ptr",), grid=(4,),
         note="runtime-flagged read of the output (may-read even though flag is 0 here)"),
    Case("constexpr_branch_writes_a", constexpr_branch_kernel,
         _kw_src_ab(n_elements=64, WHICH=0, BLOCK=64), ("src_ptr",), ("a_ptr",),
         note="constexpr branch WHICH=0: only a is written"),
    Case("constexpr_branch_writes_b", constexpr_branch_kernel,
         _kw_src_ab(n_elements=64, WHICH=1, BLOCK=64), ("src_ptr",), ("b_ptr",),
         note="constexpr branch WHICH=1: only b is written"),
    Case("constexpr_accumulate_true", constexpr_accumulate_kernel,
         lambda: dict(x_ptr=_randn(N, 1), out_ptr=_randn(N, 2), n_elements=N, ACCUMULATE=True, BLOCK=32),
         ("x_ptr", "out_ptr"), ("out_ptr",), grid=(4,), note="constexpr ACCUMULATE=True reads the output"),
    Case("constexpr_accumulate_false", constexpr_accumulate_kernel,
         lambda: dict(x_ptr=_randn(N, 1), out_ptr=_randn(N, 2), n_elements=N, ACCUMULATE=False, BLOCK=32),
         ("x_ptr",), ("out_ptr",), grid=(4,), note="constexpr ACCUMULATE=False: output only written"),
    Case("constexpr_select_input", constexpr_select_input_kernel,
         lambda: dict(a_ptr=_randn(64, 1), b_ptr=_randn(64, 2), out_ptr=_zeros(64), n_elements=64, USE_B=True,
                      BLOCK=64),
         ("b_ptr",), ("out_ptr",), note="constexpr conditional expression picks which input is read"),

    # ---- helpers ----------------------------------------------------------------------------
    Case("helper_store", helper_store_kernel, _kw_single_in_out(), ("x_ptr",), ("out_ptr",), grid=(4,),
         note="store performed inside a @triton.jit helper receiving the pointer"),
    Case("helper_load", helper_load_kernel,
         lambda: dict(x_ptr=_randn(N, 1), y_ptr=_randn(N, 2), out_ptr=_zeros(N), n_elements=N, BLOCK=32),
         ("x_ptr", "y_ptr"), ("out_ptr",), grid=(4,), note="loads performed inside a helper that returns the value"),
    Case("helper_nested", helper_nested_kernel, _kw_single_in_out(), ("x_ptr",), ("out_ptr",), grid=(4,),
         note="three levels of helper calls; innermost helpers load and store"),
    Case("helper_returns_ptr", helper_returns_ptr_kernel,
         lambda: dict(x_ptr=_randn(0, 13, 4, 32), out_ptr=torch.zeros(4, 16), stride_x=32, stride_out=16, COLS=16),
         ("x_ptr",), ("out_ptr",), grid=(4,), note="helper computes and returns a pointer; caller loads/stores"),
    Case("helper_constexpr_pick_first", helper_constexpr_pick_kernel,
         _kw_src_ab(n_elements=64, FIRST=True, BLOCK=64), ("src_ptr",), ("a_ptr",),
         note="helper returns one of two pointers based on a constexpr (FIRST=True)"),
    Case("helper_constexpr_pick_second", helper_constexpr_pick_kernel,
         _kw_src_ab(n_elements=64, FIRST=False, BLOCK=64), ("src_ptr",), ("b_ptr",),
         note="helper returns one of two pointers based on a constexpr (FIRST=False)"),
    Case("helper_runtime_pick", helper_runtime_pick_kernel, _kw_src_ab(flag=3, n_elements=64, BLOCK=64),
         ("src_ptr",), ("a_ptr", "b_ptr"), note="helper returns one of two pointers based on a runtime value"),
    Case("helper_called_twice", helper_called_twice_kernel,
         lambda: dict(a_ptr=_randn(N, 1), b_ptr=_randn(N, 2), c_ptr=_zeros(N), n_elements=N, BLOCK=32),
         ("a_ptr", "b_ptr"), ("b_ptr", "c_ptr"), grid=(4,),
         note="one helper called at two sites with different pointers (needs per-call-site mapping)"),
    Case("helper_noinline", helper_noinline_kernel, _kw_single_in_out(), ("x_ptr",), ("out_ptr",), grid=(4,),
         note="@triton.jit(noinline=True) helper: separate tt.func reached via tt.call"),

    # ---- loops ------------------------------------------------------------------------------
    Case("for_loop_ptr_increment_load", for_loop_ptr_load_kernel,
         lambda: dict(x_ptr=_randn(0, 14, 8, 16), out_ptr=_zeros(16), n_rows=8, row_stride=16, COLS=16),
         ("x_ptr",), ("out_ptr",), note="loop-carried pointer (p += stride) used for loads"),
    Case("for_loop_ptr_increment_store", for_loop_ptr_store_kernel,
         lambda: dict(x_ptr=_randn(16, 15), out_ptr=torch.zeros(8, 16), n_rows=8, row_stride=16, COLS=16),
         ("x_ptr",), ("out_ptr",), note="loop-carried pointer used for stores"),
    Case("while_loop_ptr", while_loop_ptr_kernel,
         lambda: dict(x_ptr=_randn(100, 16), out_ptr=_zeros(100), n_elements=100, BLOCK=32),
         ("x_ptr",), ("out_ptr",), note="while loop carrying two pointers"),
    Case("loop_swap_pointers", swap_loop_kernel,
         lambda: dict(a_ptr=_randn(32, 17), b_ptr=_randn(32, 18), steps=3, BLOCK=32),
         ("a_ptr", "b_ptr"), ("a_ptr", "b_ptr"), note="ping-pong buffers: src, dst = dst, src each iteration"),
    Case("loop_swap_store_only", swap_loop_store_only_kernel,
         lambda: dict(a_ptr=_randn(32, 17), b_ptr=_randn(32, 18), steps=4, BLOCK=32),
         (), ("a_ptr", "b_ptr"), note="store through p while swapping p, q = q, p: both written, none read"),
    Case("nested_loops_ptr", nested_loop_ptr_kernel,
         lambda: dict(x_ptr=_randn(0, 19, 4, 64), out_ptr=torch.zeros(4, 64), n_rows=4, n_col_blocks=4,
                      row_stride=64, BLOCK=16),
         ("x_ptr",), ("out_ptr",), note="pointers carried through nested for loops"),
    Case("static_range_ptr", static_range_ptr_kernel,
         lambda: dict(x_ptr=_randn(64, 20), out_ptr=_zeros(64), BLOCK=16, CHUNKS=4),
         ("x_ptr",), ("out_ptr",), note="tl.static_range (unrolled) loop with pointer increments"),
    Case("runtime_if_then_loop", runtime_if_then_loop_kernel,
         lambda: dict(src_ptr=_randn(0, 57, 4, 16), a_ptr=torch.zeros(4, 16), b_ptr=torch.zeros(4, 16), flag=0,
                      n_rows=4, row_stride=16, COLS=16),
         ("src_ptr",), ("a_ptr", "b_ptr"), note="pointer chosen by runtime if, then carried through a for loop"),
    Case("loop_loaded_branch", loop_loaded_branch_kernel,
         lambda: dict(sel_ptr=_randint(16, -2, 3, 21), x_ptr=_randn(16, 22), a_ptr=_zeros(16), b_ptr=_zeros(16),
                      n_items=16),
         ("sel_ptr", "x_ptr"), ("a_ptr", "b_ptr"), note="tl.range loop with a branch on a loaded value inside"),

    # ---- tl.where / join on pointers -------------------------------------------------------------
    Case("where_ptr_store", where_ptr_store_kernel,
         lambda: dict(x_ptr=_randn(64, 23), even_ptr=_zeros(32), odd_ptr=_zeros(32), BLOCK=64),
         ("x_ptr",), ("even_ptr", "odd_ptr"), note="elementwise tl.where between two pointer tensors for a store"),
    Case("where_scalar_ptr", where_scalar_ptr_kernel, _kw_src_ab(flag=-4, BLOCK=64),
         ("src_ptr",), ("a_ptr", "b_ptr"), note="tl.where on a scalar condition between two scalar pointers"),
    Case("where_ptr_load", where_ptr_load_kernel,
         lambda: dict(a_ptr=_randn(64, 24), b_ptr=_randn(64, 25), out_ptr=_zeros(64), BLOCK=64),
         ("a_ptr", "b_ptr"), ("out_ptr",), note="tl.where selects load addresses from two tensors"),
    Case("join_ptr_store", join_ptr_kernel,
         lambda: dict(x_ptr=_randn(32, 26), a_ptr=_zeros(32), b_ptr=_zeros(32), BLOCK=32),
         ("x_ptr",), ("a_ptr", "b_ptr"), note="tl.join of pointer tensors into two buffers, one store"),

    # ---- atomics ----------------------------------------------------------------------------
    Case("atomic_add", atomic_add_kernel,
         lambda: dict(x_ptr=_randn(N, 1), out_ptr=_zeros(16), n_elements=N, BLOCK=32),
         ("x_ptr", "out_ptr"), ("out_ptr",), grid=(4,), note="tl.atomic_add: target counts as read and written"),
    Case("atomic_counter_scalar", atomic_counter_kernel,
         lambda: dict(counter_ptr=torch.zeros(1, dtype=torch.int32), ticket_ptr=torch.zeros(4, dtype=torch.int32)),
         ("counter_ptr",), ("counter_ptr", "ticket_ptr"), grid=(4,),
         note="scalar atomic_add whose returned old value is stored"),
    Case("atomic_max_min", atomic_max_min_kernel,
         lambda: dict(x_ptr=_randn(N, 1), max_ptr=torch.full((8,), -1e9), min_ptr=torch.full((8,), 1e9),
                      n_elements=N, BLOCK=32),
         ("x_ptr", "max_ptr", "min_ptr"), ("max_ptr", "min_ptr"), grid=(4,), note="tl.atomic_max and tl.atomic_min"),
    Case("atomic_cas_spinlock", atomic_cas_lock_kernel,
         lambda: dict(lock_ptr=torch.zeros(1, dtype=torch.int32), x_ptr=_randn(N, 1), acc_ptr=_zeros(1),
                      n_elements=N, BLOCK=32),
         ("lock_ptr", "x_ptr", "acc_ptr"), ("lock_ptr", "acc_ptr"), grid=(4,),
         note="spin lock: atomic_cas in a while condition, atomic_xchg release"),
    Case("atomic_xchg", atomic_xchg_kernel,
         lambda: dict(x_ptr=_randint(N, -100, 100, 1), buf_ptr=_randint(N, -100, 100, 2),
                      old_ptr=torch.zeros(N, dtype=torch.int32), n_elements=N, BLOCK=32),
         ("x_ptr", "buf_ptr"), ("buf_ptr", "old_ptr"), grid=(4,),
         note="tl.atomic_xchg returning the old values (int32: the interpreter rejects fp32 xchg)"),
    Case("atomic_bitwise", atomic_bitwise_kernel,
         lambda: dict(bits_ptr=_randint(64, 0, 1 << 20, 27), or_ptr=_randint(4, 0, 1 << 24, 58),
                      and_ptr=_randint(4, -(1 << 24), 1 << 24, 59), xor_ptr=_randint(4, 0, 1 << 24, 60),
                      n_elements=64, BLOCK=32),
         ("bits_ptr", "or_ptr", "and_ptr", "xor_ptr"), ("or_ptr", "and_ptr", "xor_ptr"), grid=(2,),
         note="tl.atomic_or / atomic_and / atomic_xor"),
    Case("histogram_atomic_scatter", histogram_kernel,
         lambda: dict(idx_ptr=_randint(N, 0, 16, 28), hist_ptr=_randint(16, 0, 5, 61), n_elements=N,
                      BLOCK=32),
         ("idx_ptr", "hist_ptr"), ("hist_ptr",), grid=(4,), note="atomic_add at addresses loaded from an index tensor"),

    # ---- reductions / scans ---------------------------------------------------------------------
    Case("reduce_custom_combine", reduce_custom_kernel,
         lambda: dict(x_ptr=_randn(64, 29), out_ptr=_zeros(1), BLOCK=64),
         ("x_ptr",), ("out_ptr",), note="tl.reduce with a @triton.jit combine function"),
    Case("reduce_argmax_tuple", reduce_argmax_kernel,
         lambda: dict(x_ptr=_randn(64, 30), val_ptr=_zeros(1), idx_ptr=torch.zeros(1, dtype=torch.int32), BLOCK=64),
         ("x_ptr",), ("val_ptr", "idx_ptr"), note="tl.reduce over a (value, index) tuple, two outputs"),
    Case("sum_rows", sum_rows_kernel,
         lambda: dict(x_ptr=_randn(0, 31, 8, 16), out_ptr=_zeros(8), ROWS=8, COLS=16),
         ("x_ptr",), ("out_ptr",), note="tl.sum along axis 1 of a 2D block"),
    Case("cumsum", cumsum_kernel, lambda: dict(x_ptr=_randn(64, 32), out_ptr=_zeros(64), BLOCK=64),
         ("x_ptr",), ("out_ptr",), note="tl.cumsum"),
    Case("associative_scan_custom", associative_scan_kernel,
         lambda: dict(x_ptr=_randn(64, 33), out_ptr=_zeros(64), BLOCK=64),
         ("x_ptr",), ("out_ptr",), note="tl.associative_scan with a custom combine function (running max)"),

    # ---- device-side tensor descriptors -----------------------------------------------------------
    Case("tensor_descriptor_add", tensor_desc_add_kernel,
         lambda: dict(a_ptr=_randn(0, 36, 32, 32), b_ptr=_randn(0, 37, 32, 32), c_ptr=torch.zeros(32, 32),
                      M=32, N=32, BLOCK_M=16, BLOCK_N=16),
         ("a_ptr", "b_ptr"), ("c_ptr",), grid=(2, 2), note="tl.make_tensor_descriptor + desc.load / desc.store"),
    Case("tensor_descriptor_store_only", tensor_desc_store_only_kernel,
         lambda: dict(out_ptr=torch.zeros(32, 16), M=32, N=16, BLOCK_M=16, BLOCK_N=16),
         (), ("out_ptr",), grid=(2,), note="device-side descriptor used only for a store"),
    Case("tensor_descriptor_inplace", tensor_desc_inplace_kernel,
         lambda: dict(x_ptr=_randn(0, 38, 32, 16), M=32, N=16, BLOCK_M=16, BLOCK_N=16),
         ("x_ptr",), ("x_ptr",), grid=(2,), note="one descriptor loaded and stored"),

    Case("tensor_descriptor_loop_oob", tensor_desc_loop_kernel,
         lambda: dict(x_ptr=_randn(0, 34, 24, 40), out_ptr=torch.zeros(24, 16), M=24, N=40, BLOCK_M=16, BLOCK_N=16),
         ("x_ptr",), ("out_ptr",), grid=(2,),
         note="descriptor loads at offsets moving in a loop, partly out of bounds (block_ptr+advance replacement)"),
    Case("tensor_descriptor_in_helper", tensor_desc_helper_kernel,
         lambda: dict(x_ptr=_randn(0, 52, 32, 16), y_ptr=_randn(0, 53, 32, 16), M=32, N=16, BLOCK_M=16, BLOCK_N=16),
         ("x_ptr", "y_ptr"), ("y_ptr",), grid=(2,),
         note="descriptor passed to a helper that loads+stores; tl.load/store_tensor_descriptor forms"),
    Case("tensor_descriptor_runtime_base", tensor_desc_runtime_base_kernel,
         lambda: dict(src_ptr=_randn(0, 54, 32, 16), a_ptr=torch.zeros(32, 16), b_ptr=torch.zeros(32, 16), flag=2,
                      M=32, N=16, BLOCK_M=16, BLOCK_N=16),
         ("src_ptr",), ("a_ptr", "b_ptr"), grid=(2,),
         note="descriptor built on a base pointer chosen at runtime: both candidates may be written"),
    Case("tensor_descriptor_atomic_add", tensor_desc_atomic_add_kernel,
         lambda: dict(x_ptr=_randn(0, 55, 32, 16), acc_ptr=torch.zeros(16, 16), M=32, N=16, BLOCK_M=16, BLOCK_N=16),
         ("x_ptr", "acc_ptr"), ("acc_ptr",), grid=(2,), interpretable=False,
         note="desc.atomic_add (tt.descriptor_reduce; the interpreter has no descriptor reduce)"),
    Case("atomic_load_store", atomic_load_store_kernel,
         lambda: dict(flag_ptr=torch.tensor([2.0]), x_ptr=_randn(32, 56), out_ptr=_zeros(32), done_ptr=_zeros(1),
                      BLOCK=32),
         ("flag_ptr", "x_ptr"), ("out_ptr", "done_ptr"),
         note="tl.atomic_load (read only) and tl.atomic_store (write only)"),

    # ---- DAGs, inline asm, dot ---------------------------------------------------------------------
    Case("shared_value_dag", shared_value_dag_kernel,
         lambda: dict(x_ptr=_randn(32, 39), out_ptr=_zeros(32), BLOCK=32, DEPTH=24),
         ("x_ptr",), ("out_ptr",), note="the same address re-loaded 24 times; values feed a deep shared DAG"),
    Case("shared_pointer_dag", shared_pointer_dag_kernel,
         lambda: dict(x_ptr=_randn(32, 40), out_ptr=_zeros(32), BLOCK=32, DEPTH=40),
         ("x_ptr",), ("out_ptr",), note="40 levels of tl.where(c, p, p): exponential if pointer origins not memoized"),
    Case("inline_asm_pure", inline_asm_pure_kernel,
         lambda: dict(X=_randint(64, 0, 1000, 41), Y=_randint(64, 0, 1000, 42),
                      Z=torch.zeros(64, dtype=torch.int32), n=3, BLOCK=64),
         ("X", "Y"), ("Z",), interpretable=False,
         note="tl.inline_asm_elementwise(is_pure=True) has no memory effect"),
    Case("matmul_dot", matmul_kernel,
         lambda: dict(a_ptr=_randn(0, 43, 32, 32), b_ptr=_randn(0, 44, 32, 32), c_ptr=torch.zeros(32, 32),
                      M=32, N=32, K=32, stride_am=32, stride_ak=1, stride_bk=32, stride_bn=1, stride_cm=32,
                      stride_cn=1, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16),
         ("a_ptr", "b_ptr"), ("c_ptr",), grid=(2, 2),
         note="tl.dot in a K loop with 2D pointer blocks advanced each iteration"),

    # ---- autotune / heuristics ----------------------------------------------------------------------
    Case("autotuned_add", autotuned_add_kernel,
         lambda: dict(x_ptr=_randn(N, 1), y_ptr=_randn(N, 2), out_ptr=_zeros(N), n_elements=N),
         ("x_ptr", "y_ptr"), ("out_ptr",), grid=(8,),
         note="@triton.autotune with 2 configs; BLOCK comes from the config (not in make_kwargs)"),
    Case("heuristics_even", heuristics_kernel, _kw_single_in_out(n=N, block=32),
         ("x_ptr",), ("out_ptr",), grid=(4,), note="@triton.heuristics computes constexpr EVEN_N (not in make_kwargs)"),
    Case("heuristics_uneven", heuristics_kernel, _kw_single_in_out(n=100, block=32),
         ("x_ptr",), ("out_ptr",), grid=(4,), note="same @triton.heuristics kernel, EVEN_N=False (masked branch)"),
    Case("autotuned_heuristics_bias", autotuned_heuristics_bias_kernel,
         lambda: dict(x_ptr=_randn(N, 1), bias_ptr=_randn(N, 2), out_ptr=_zeros(N), n_elements=N),
         ("x_ptr", "bias_ptr"), ("out_ptr",), grid=(4,),
         note="autotune stacked on heuristics (HAS_BIAS from bias_ptr is not None)"),

    # ---- data-dependent masks and addresses -------------------------------------------------------------
    Case("store_masked_by_loaded_value", loaded_mask_store_kernel,
         lambda: dict(x_ptr=_randn(N, 1), mask_ptr=_randint(N, 0, 2, 45), out_ptr=_zeros(N), n_elements=N, BLOCK=32),
         ("x_ptr", "mask_ptr"), ("out_ptr",), grid=(4,), note="store mask computed from a loaded tensor"),
    Case("gather_indexed_load", gather_kernel,
         lambda: dict(idx_ptr=_randint(N, 0, 64, 46), x_ptr=_randn(64, 47), out_ptr=_zeros(N), n_elements=N, BLOCK=32),
         ("idx_ptr", "x_ptr"), ("out_ptr",), grid=(4,), note="gather: load address from a loaded index"),
    Case("scatter_indexed_store", scatter_kernel,
         lambda: dict(x_ptr=_randn(N, 48), idx_ptr=torch.randperm(N, generator=torch.Generator().manual_seed(49)),
                      out_ptr=_zeros(N), n_elements=N, BLOCK=32),
         ("x_ptr", "idx_ptr"), ("out_ptr",), grid=(4,), note="scatter: store address from a loaded int64 index"),
    Case("indirect_row_int64", indirect_row_kernel,
         lambda: dict(rows_ptr=_randint(4, 0, 8, 50, dtype=torch.int64), x_ptr=_randn(0, 51, 8, 16),
                      out_ptr=torch.zeros(4, 16), row_stride=16, COLS=16),
         ("rows_ptr", "x_ptr"), ("out_ptr",), grid=(4,), note="row base pointer from a loaded int64 row id"),

    # ---- masked loads without other= feeding reductions ---------------------------------------------
    Case("masked_row_sum_no_other", masked_row_sum_kernel,
         lambda: dict(x_ptr=_randn(0, 62, 6, 40), out_ptr=_zeros(6), n_cols=40, BLOCK=64),
         ("x_ptr",), ("out_ptr",), grid=(6,),
         note="row sum of a masked load without other=: the 24 masked-off lanes of each row add 0"),
    Case("masked_rms_norm_no_other", masked_rms_norm_kernel,
         lambda: dict(x_ptr=_randn(0, 63, 6, 40), w_ptr=_randn(40, 64), out_ptr=torch.zeros(6, 40), n_cols=40,
                      eps=1e-6, BLOCK=64),
         ("x_ptr", "w_ptr"), ("out_ptr",), grid=(6,),
         note="RMSNorm whose sum of squares reduces a masked load without other= (masked-off lanes 0)"),
    Case("masked_loop_sum_no_other", masked_loop_sum_kernel,
         lambda: dict(x_ptr=_randn(0, 65, 6, 40), out_ptr=_zeros(6), n_cols=40, BLOCK=16),
         ("x_ptr",), ("out_ptr",), grid=(6,),
         note="masked loads without other= accumulated in a loop, the last block partly masked, then summed"),
    Case("masked_row_max_no_other", masked_row_max_kernel,
         lambda: dict(x_ptr=-_randn(0, 66, 6, 40).abs(), out_ptr=_zeros(6), n_cols=40, BLOCK=64),
         ("x_ptr",), ("out_ptr",), grid=(6,),
         note="row max of a masked load without other= over negative values: the masked-off lanes' 0 wins"),
]
