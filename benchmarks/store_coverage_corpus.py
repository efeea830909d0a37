"""Adversarial corpus for the store-coverage proof (see [Note: A proof that a kernel stores every element]).

Written by a helper in the sixteenth session; it found two wrong results in the first version of
the proof (a bool argument, a per-lane pointer select), now tests in tests/test_store_coverage.py.
The `cfg_` cases (seventeenth session, a second helper) attack early returns and while loops: no
wrong result; they found that the frontend passes reassigned names between blocks (now followed).

Each case: a @triton.jit kernel writes a fresh torch.empty output, launched with
wrap_triton(kernel)[grid](...) inside fn(x, y), then an epilogue whose result is defined where
the kernel stores nothing (y is NaN there: `out + y`, `out * y`, `maximum(out, y)` are NaN,
`where(y > 0, out, 0.)` is 0). Expected coverage:
  full       every element stored, provable from addresses / masks / grid / scalar args:
             the proof should fuse (and the result must equal eager, bit for bit);
  full-data  every element stored *with these data* (mask or offsets loaded from memory):
             not provable, the proof must refuse;
  partial    some element never stored: the proof must refuse;
  partial-strict  partial, but the epilogue is strict in the stored value (int `out + y`):
             fusing is fine today (garbage in, garbage out); compared only where written.

Garbage is made visible: every buffer the compiled code allocates (empty_strided_cpu) and every
torch.empty* in eager is filled with a sentinel (a different one per run), so an element a fused
kernel leaves unwritten holds the sentinel, not NaN / 0. The written elements are measured, not
assumed: the kernel alone (eager) under two sentinels; y is NaN exactly where it wrote nothing.

Run from the repository root (about 4 minutes on 2 cores):
    TRITON_INTERPRET=1 python benchmarks/store_coverage_corpus.py [name-substring ...]
Writes the table to store_coverage_report.txt in the current directory (STORE_COVERAGE_REPORT=path).
"""

import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    import tempfile

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="store_coverage_")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)
# STORE_COVERAGE_PACKAGE_ROOT=<a checkout> runs the corpus against that checkout's torch_triton_hop
# (e.g. an export of HEAD, to compare with the working tree).
if os.environ.get("STORE_COVERAGE_PACKAGE_ROOT"):
    sys.path.insert(0, os.environ["STORE_COVERAGE_PACKAGE_ROOT"])
REPORT = os.environ.get("STORE_COVERAGE_REPORT", "store_coverage_report.txt")

import ast  # noqa: E402
import contextlib  # noqa: E402
import logging  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402
from torch._prims_common import is_non_overlapping_and_dense_or_false as is_non_overlapping_and_dense  # noqa: E402,E501

np.seterr(all="ignore")  # int32 overflow in the interpreter is intended in two cases

import torch_triton_hop  # noqa: E402
from torch_triton_hop import wrap_triton  # noqa: E402
from generated_code import run_and_get_code  # noqa: E402
from test_fusion import fused_launches  # noqa: E402

torch._inductor.config.fx_graph_cache = False
torch._functorch.config.enable_autograd_cache = False
torch.set_num_threads(2)

# --------------------------------------------------------------------------------------------
# Poison: a sentinel in every fresh buffer
# --------------------------------------------------------------------------------------------

FLOAT_SENTINELS = [1536.0, -7.25, 30000.0]
INT_SENTINELS = [0x5A5A5A5, -123457, 777]
_SENTINEL = [None]  # index into the lists above, or None
_POISONED = [0]


def _fill(t):
    i = _SENTINEL[0]
    if i is None or t.numel() == 0:
        return t
    if t.dtype.is_floating_point:
        t.fill_(FLOAT_SENTINELS[i])
    elif t.dtype == torch.bool:
        t.fill_(bool(i % 2))
    else:
        info = torch.iinfo(t.dtype)
        t.fill_(max(info.min, min(info.max, INT_SENTINELS[i])))
    _POISONED[0] += 1
    return t


_guards = torch._C._dynamo.guards
_orig_empty_strided_cpu = _guards._empty_strided_cpu


def _poisoned_empty_strided_cpu(*args, **kwargs):
    return _fill(_orig_empty_strided_cpu(*args, **kwargs))


# inductor's generated modules bind `empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu`
# when loaded: every module compiled after this line allocates through the poisoned one.
_guards._empty_strided_cpu = _poisoned_empty_strided_cpu

_EMPTIES = {torch.empty, torch.empty_like, torch.empty_strided, torch.Tensor.new_empty,
            torch.Tensor.new_empty_strided}


class PoisonEmpty(TorchFunctionMode):
    """Eager: every torch.empty* result filled with the current sentinel."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in _EMPTIES:
            _fill(out)
        return out


class sentinel:
    def __init__(self, i):
        self.i = i

    def __enter__(self):
        self.prev = _SENTINEL[0]
        _SENTINEL[0] = self.i

    def __exit__(self, *exc):
        _SENTINEL[0] = self.prev


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------

@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def copy_int_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3, mask=m)


@triton.jit
def copy_nomask_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 0.5)


@triton.jit
def mask_le_kernel(x_ptr, out_ptr, last, BLOCK: tl.constexpr):
    """Mask `offs <= last` (last = numel - 1)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs <= last
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) - 3.0, mask=m)


@triton.jit
def mask_minus_k_kernel(x_ptr, out_ptr, n, k, BLOCK: tl.constexpr):
    """Mask `offs < n - k` (k a run-time scalar: 1 is specialized, 16 is divisible by 16)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n - k
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def shift_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Offsets shifted by -8: negative ones masked away; covers [0, n) only with cdiv(n + 8) programs."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) - 8
    m = (offs >= 0) & (offs < n)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)


@triton.jit
def rows_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_o, BLOCK: tl.constexpr):
    """Layer-norm style: one row per program, BLOCK >= n_cols."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    v = tl.load(x_ptr + row * stride_x + cols, mask=m, other=0.0)
    mean = tl.sum(v, axis=0) / n_cols
    tl.store(out_ptr + row * stride_o + cols, v - mean, mask=m)


@triton.jit
def tile_kernel(x_ptr, out_ptr, M, N, sxm, sxn, som, son, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=m)
    tl.store(out_ptr + rm[:, None] * som + rn[None, :] * son, v + 1.0, mask=m)


@triton.jit
def nchw_kernel(x_ptr, out_ptr, total, C, H, W, sn, sc, sh, sw, BLOCK: tl.constexpr):
    """x contiguous NCHW, out indexed by the strides passed (channels_last)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    w = offs % W
    h = (offs // W) % H
    c = (offs // (W * H)) % C
    b = offs // (W * H * C)
    v = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + b * sn + c * sc + h * sh + w * sw, v * 2.0, mask=m)


@triton.jit
def grid_stride_kernel(x_ptr, out_ptr, n, EXTRA: tl.constexpr, BLOCK: tl.constexpr):
    """Grid-stride loop with step (num_programs + EXTRA) * BLOCK."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for start in range(pid * BLOCK, n, (nprog + EXTRA) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3.0, mask=m)


@triton.jit
def row_loop_kernel(x_ptr, out_ptr, n_rows, n_cols, R: tl.constexpr, SKIP: tl.constexpr, BLOCK: tl.constexpr):
    """Rows [pid * R, min((pid + 1) * R, n_rows) - SKIP)."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    cm = cols < n_cols
    for r in range(pid * R, tl.minimum((pid + 1) * R, n_rows) - SKIP):
        v = tl.load(x_ptr + r * n_cols + cols, mask=cm)
        tl.store(out_ptr + r * n_cols + cols, v * v, mask=cm)


@triton.jit
def row_loop_min_kernel(x_ptr, out_ptr, n_rows, n_cols, R: tl.constexpr, BLOCK: tl.constexpr):
    """The same with Python's min."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    cm = cols < n_cols
    for r in range(pid * R, min((pid + 1) * R, n_rows)):
        v = tl.load(x_ptr + r * n_cols + cols, mask=cm)
        tl.store(out_ptr + r * n_cols + cols, v - 2.0, mask=cm)


@triton.jit
def while_kernel(x_ptr, out_ptr, n, STOP: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    start = pid * BLOCK
    while start < n - STOP:
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) - 1.0, mask=m)
        start += nprog * BLOCK


@triton.jit
def step_loop_kernel(x_ptr, out_ptr, n, STEP: tl.constexpr, BLOCK: tl.constexpr):
    """Each program: 4 blocks, visited with a step of STEP elements."""
    base = tl.program_id(0) * 4 * BLOCK
    for j in range(0, 4 * BLOCK, STEP):
        offs = base + j + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + 4.0, mask=m)


@triton.jit
def parity_kernel(x_ptr, out_ptr, n, BOTH: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    if pid % 2 == 0:
        tl.store(out_ptr + offs, v, mask=m)
    else:
        if BOTH:
            tl.store(out_ptr + offs, -v, mask=m)


@triton.jit
def data_mask_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, v * 5.0, mask=m & (v > 0))


@triton.jit
def scatter_kernel(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    i = tl.load(idx_ptr + offs, mask=m, other=0)
    tl.store(out_ptr + i, tl.load(x_ptr + offs, mask=m), mask=m)


@triton.jit
def overflow_compare_kernel(x_ptr, out_ptr, n, big, BLOCK: tl.constexpr):
    """(offs + big) < (n + big): offs < n in integers; int32 wraps for big = 2**31 - 100."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = (offs + big) < (n + big)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def overflow_mul_kernel(x_ptr, out_ptr, n, big, BLOCK: tl.constexpr):
    """(pid * big) // (big // BLOCK) == pid * BLOCK in integers; int32 wraps for big = 2**30."""
    pid = tl.program_id(0)
    base = (pid * big) // (big // BLOCK)
    offs = base + tl.arange(0, BLOCK)
    m = (offs >= 0) & (offs < n)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def overflow_wrap_full_kernel(x_ptr, out_ptr, n, big, BLOCK: tl.constexpr):
    """offs + (big * 4) * pid: huge in integers, + 0 in int32 for big = 2**30."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK) + (big * 4) * pid
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit(noinline=True)
def _cov_store_helper(ptr, offs, v, m):
    tl.store(ptr + offs, v, mask=m)


@triton.jit
def noinline_kernel(x_ptr, out_ptr, n, SHORT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n - SHORT
    _cov_store_helper(out_ptr, offs, tl.load(x_ptr + offs, mask=m) * 2.0, m)


@triton.jit
def where_ptr_kernel(x_ptr, out_ptr, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = (offs >= SHIFT) & (offs < n)
    p = tl.where(offs % 2 == 0, out_ptr + offs, out_ptr + offs - SHIFT)
    tl.store(p, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def hints_kernel(x_ptr, out_ptr, n, SHORT: tl.constexpr, BLOCK: tl.constexpr):
    start = tl.multiple_of(tl.program_id(0) * BLOCK, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(start + tl.arange(0, BLOCK), BLOCK), BLOCK)
    m = offs < n - SHORT
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def descriptor_kernel(x_ptr, out_ptr, M, N, MO, NO, sm, BM: tl.constexpr, BN: tl.constexpr):
    """Device-side tensor descriptors (block pointers are gone in triton 3.9); the store clips at (MO, NO)."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[sm, 1], block_shape=[BM, BN])
    od = tl.make_tensor_descriptor(out_ptr, shape=[MO, NO], strides=[sm, 1], block_shape=[BM, BN])
    v = xd.load([pm * BM, pn * BN])
    od.store([pm * BM, pn * BN], v * 0.5)


def _bench_by_block(prefer_small):
    """A do_bench that times nothing: it ranks configs by BLOCK, so the choice is fixed."""
    def do_bench(kernel_call, quantiles=None, **_):
        cells = dict(zip(kernel_call.__code__.co_freevars, (c.cell_contents for c in kernel_call.__closure__)))
        block = float(cells["current"]["BLOCK"])
        t = block if prefer_small else 1.0 / block
        return [t, t, t]
    return do_bench


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"],
                 do_bench=_bench_by_block(prefer_small=True))
@triton.jit
def autotuned_small_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"],
                 do_bench=_bench_by_block(prefer_small=False))
@triton.jit
def autotuned_large_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.heuristics({"BLOCK": lambda args: 32 if args["n"] < 2000 else 64})
@triton.jit
def heuristic_block_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def heuristic_even_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)
    else:
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def twice_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, v, mask=m)
    tl.store(out_ptr + offs, v + 1.0, mask=m)


@triton.jit
def halves_kernel(x_ptr, out_ptr, n, h, GAP: tl.constexpr, BLOCK: tl.constexpr):
    """Two stores, complementary masks: [0, h) and [h + GAP, n)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, v, mask=offs < h)
    tl.store(out_ptr + offs, -v, mask=(offs >= h + GAP) & m)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, COLMASK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    m = rm[:, None] < M
    if COLMASK:
        m = m & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=m)


@triton.jit
def grid2d_halves_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """program_id(1) picks the half of a 2 * BLOCK chunk."""
    offs = tl.program_id(0) * 2 * BLOCK + tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def batch3d_kernel(x_ptr, out_ptr, M, N, sb, BM: tl.constexpr, BN: tl.constexpr):
    """program_id(2) is the batch."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    b = tl.program_id(2)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    p = b * sb + rm[:, None] * N + rn[None, :]
    tl.store(out_ptr + p, tl.load(x_ptr + p, mask=m) + 2.0, mask=m)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------

EPILOGUES = {
    "add": ("out + y", lambda o, y: o + y),
    "mul": ("out * y", lambda o, y: o * y),
    "max": ("maximum(out, y)", lambda o, y: torch.maximum(o, y)),
    "where": ("where(y > 0, out, 0.)", lambda o, y: torch.where(y > 0, o, 0.0)),
    "mfill": ("out.masked_fill(y.isnan(), 0.)", lambda o, y: o.masked_fill(y.isnan(), 0.0)),
    "chain": ("(out * 2 + 1) * y", lambda o, y: (o * 2 + 1) * y),
    "cast_add": ("out.float() + y", lambda o, y: o.to(torch.float32) + y),
    "iadd": ("out + y (int)", lambda o, y: o + y),
    "iwhere": ("where(y > 0, out, 0) (int)", lambda o, y: torch.where(y > 0, o, 0)),
}

CASES = []
# expected coverage labels, see the module docstring; also:
#   partial-config  the config that runs here covers, another config of the kernel does not (GPU
#                   autotuning may pick it): the proof must refuse;
#   partial-hook    the kernel leaves elements unwritten but an autotuner hook writes the buffer
#                   first (measured "written" then is full): no label check; fused must equal unfused.
FULL_LABELS = {"full", "full-data"}
PARTIAL_LABELS = {"partial", "partial-strict"}
MUST_REFUSE = {"full-data", "partial", "partial-config"}


class Case:
    def __init__(self, name, expected, epilogue, produce, x, note="", out_args=None, setup=None, extra_x=(),
                 compile_kwargs=None, expect_error=None):
        self.expect_error = expect_error  # a refusal of the package the case documents
        self.name, self.epilogue, self.produce, self.x, self.note = name, epilogue, produce, x, note
        self.expected = expected if isinstance(expected, tuple) else (expected,)
        self.out_args, self.setup, self.extra_x = out_args, setup, list(extra_x)
        self.compile_kwargs = compile_kwargs or {}

    @property
    def label(self):
        return ",".join(self.expected)


def case(name, expected, epilogue, x, note="", **options):
    def register(produce):
        CASES.append(Case(name, expected, epilogue, produce, x, note, **options))
        return produce
    return register


g = torch.Generator().manual_seed(0)


def rand(*shape):
    return torch.randn(*shape, generator=g)


cdiv = triton.cdiv

# --- 1-D elementwise ---


@case("copy_n512_b64", "full", "add", rand(512))
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("copy_n1000_b64", "full", "where", rand(1000))
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("copy_grid_oversized", "full", "mul", rand(1000), "cdiv(n, B) + 3 programs, extras masked off")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64) + 3,)](x, out, x.numel(), BLOCK=64)
    return out


@case("copy_2d_flat_grid3", "full", "add", rand(30, 33), "2-D output written flat; grid given as (g, 1, 1)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 128), 1, 1)](x, out, x.numel(), BLOCK=128)
    return out


@case("nomask_exact_n1024", "full", "max", rand(1024), "no mask, grid n // B exactly")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_nomask_kernel)[(x.numel() // 128,)](x, out, BLOCK=128)
    return out


@case("mask_le_last", "full", "mul", rand(1000), "offs <= n - 1 (n - 1 passed)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(mask_le_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel() - 1, BLOCK=64)
    return out


@case("mask_minus_k0", "full", "add", rand(1000), "offs < n - k, k = 0")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(mask_minus_k_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 0, BLOCK=64)
    return out


@case("shift_neg_masked", "full", "add", rand(1000), "offs - 8, negative masked, cdiv(n + 8) programs")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(shift_kernel)[(cdiv(x.numel() + 8, 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("n_equals_1", "full", "add", rand(1), "n = 1 (specialized), one element")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(1,)](x, out, x.numel(), BLOCK=16)
    return out


@case("copy_grid_one_short", "partial", "add", rand(1000), "cdiv(n, B) - 1 programs")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64) - 1,)](x, out, x.numel(), BLOCK=64)
    return out


@case("mask_n_minus_1", "partial", "where", rand(1000), "offs < n - 1 written as n - 1 passed to `< n`")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel() - 1, BLOCK=64)
    return out


@case("mask_le_n_minus_2", "partial", "max", rand(1000), "offs <= n - 2 (off by one, `<=` form)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(mask_le_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel() - 2, BLOCK=64)
    return out


@case("mask_minus_k1", "partial", "add", rand(1000), "offs < n - k, k = 1 (specialized to a constant)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(mask_minus_k_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 1, BLOCK=64)
    return out


@case("mask_minus_k16", "partial", "mul", rand(1024), "offs < n - k, k = 16, n = 1024 (divisible by 16)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(mask_minus_k_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 16, BLOCK=64)
    return out


@case("shift_neg_grid_short", "partial", "add", rand(1024), "offs - 8 but cdiv(n) programs, n = 16 B: last 8 missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(shift_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("out_bigger_than_n", "partial", "add", rand(1000), "out has 1024 elements, kernel's n = 1000")
def _(x):
    out = torch.empty(1024)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("out_bigger_than_n_grid_covers", "partial", "where", rand(1000),
      "out 1024, grid cdiv(1024, B) (covers out), mask < 1000")
def _(x):
    out = torch.empty(1024)
    wrap_triton(copy_kernel)[(cdiv(out.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


# --- rows ---


@case("rows_layernorm", "full", "add", rand(37, 50), "one row per program, BLOCK 64 >= 50")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(rows_kernel)[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=64)
    return out


@case("rows_padded_out", "full", "add", rand(37, 50), "out empty_strided((37, 50), (53, 1))")
def _(x):
    out = torch.empty_strided(x.shape, (53, 1))
    wrap_triton(rows_kernel)[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=64)
    return out


@case("rows_ncols_1", "full", "max", rand(64, 1), "n_cols = 1, strides 1 (specialized)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(rows_kernel)[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=16)
    return out


@case("rows_block_too_small", "partial", "add", rand(37, 50), "BLOCK 32 < n_cols 50")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(rows_kernel)[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=32)
    return out


@case("rows_ncols_1_grid_short", "partial", "where", rand(64, 1), "n_cols = 1, grid rows - 1")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(rows_kernel)[(x.shape[0] - 1,)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=16)
    return out


@case("rows_padded_out_flat_write", "partial", "add", rand(37, 50),
      "padded out (53, 1) written flat as if contiguous")
def _(x):
    out = torch.empty_strided(x.shape, (53, 1))
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


# --- 2-D ---


@case("tile2d", "full", "add", rand(45, 70), "16x32 tiles, both masks")
def _(x):
    out = torch.empty_like(x)
    M, N = x.shape
    wrap_triton(tile_kernel)[(cdiv(M, 16), cdiv(N, 32))](x, out, M, N, *x.stride(), *out.stride(), BM=16, BN=32)
    return out


@case("tile2d_transposed_out", "full", "where", rand(45, 70), "out = empty(70, 45).t(), its strides passed")
def _(x):
    out = torch.empty(x.shape[1], x.shape[0]).t()
    M, N = x.shape
    wrap_triton(tile_kernel)[(cdiv(M, 16), cdiv(N, 32))](x, out, M, N, *x.stride(), *out.stride(), BM=16, BN=32)
    return out


@case("flat_into_transposed", "full", "mul", rand(45, 70), "dense transposed out written flat over storage")
def _(x):
    out = torch.empty(x.shape[1], x.shape[0]).t()
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("tile2d_grid_dim1_short", "partial", "add", rand(45, 70), "grid (cdiv(M), cdiv(N) - 1)")
def _(x):
    out = torch.empty_like(x)
    M, N = x.shape
    wrap_triton(tile_kernel)[(cdiv(M, 16), cdiv(N, 32) - 1)](x, out, M, N, *x.stride(), *out.stride(), BM=16, BN=32)
    return out


@case("tile2d_col_mask_uses_M", "partial", "max", rand(40, 50), "N argument given M (40 < 50)")
def _(x):
    out = torch.empty_like(x)
    M, N = x.shape
    wrap_triton(tile_kernel)[(cdiv(M, 16), cdiv(N, 32))](x, out, M, M, *x.stride(), *out.stride(), BM=16, BN=32)
    return out


@case("tile2d_row_stride_short", "partial", "add", rand(40, 50), "out row stride N - 1: rows overlap")
def _(x):
    out = torch.empty_like(x)
    M, N = x.shape
    wrap_triton(tile_kernel)[(cdiv(M, 16), cdiv(N, 32))](x, out, M, N, *x.stride(), N - 1, 1, BM=16, BN=32)
    return out


@case("grid2d_halves", "full", "add", rand(1000), "program_id(1) picks a half, grid (cdiv(n, 2B), 2)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(grid2d_halves_kernel)[(cdiv(x.numel(), 128), 2)](x, out, x.numel(), BLOCK=64)
    return out


@case("grid2d_halves_dim1_short", "partial", "add", rand(1000), "grid (cdiv(n, 2B), 1)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(grid2d_halves_kernel)[(cdiv(x.numel(), 128), 1)](x, out, x.numel(), BLOCK=64)
    return out


@case("batch3d", "full", "add", rand(3, 20, 40), "program_id(2) = batch, grid (.., .., 3)")
def _(x):
    out = torch.empty_like(x)
    _, M, N = x.shape
    wrap_triton(batch3d_kernel)[(cdiv(M, 16), cdiv(N, 16), x.shape[0])](x, out, M, N, M * N, BM=16, BN=16)
    return out


@case("batch3d_dim2_short", "partial", "mul", rand(3, 20, 40), "grid (.., .., 2) for 3 batches")
def _(x):
    out = torch.empty_like(x)
    _, M, N = x.shape
    wrap_triton(batch3d_kernel)[(cdiv(M, 16), cdiv(N, 16), x.shape[0] - 1)](x, out, M, N, M * N, BM=16, BN=16)
    return out


# --- channels_last ---


def _cl(shape):
    return rand(*shape).contiguous(memory_format=torch.channels_last)


@case("channels_last_flat", "full", "add", _cl((2, 4, 5, 3)), "channels_last x and out, flat copy")
def _(x):
    out = torch.empty_like(x, memory_format=torch.channels_last)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("channels_last_strided_index", "full", "add", rand(2, 4, 5, 3), "NCHW x into channels_last out by strides")
def _(x):
    out = torch.empty_like(x, memory_format=torch.channels_last)
    N, C, H, W = x.shape
    wrap_triton(nchw_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), C, H, W, *out.stride(), BLOCK=64)
    return out


@case("channels_last_swapped_hw_strides", "partial", "add", rand(2, 4, 5, 3), "stride_h / stride_w swapped (H != W)")
def _(x):
    out = torch.empty_like(x, memory_format=torch.channels_last)
    N, C, H, W = x.shape
    sn, sc, sh, sw = out.stride()
    wrap_triton(nchw_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), C, H, W, sn, sc, sw, sh, BLOCK=64)
    return out


# --- loops ---


@case("grid_stride_ok", "full", "add", rand(1000), "4 programs, step num_programs * B")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(grid_stride_kernel)[(4,)](x, out, x.numel(), EXTRA=0, BLOCK=64)
    return out


@case("grid_stride_overlapping", "full", "max", rand(1000), "step (num_programs - 1) * B: blocks written twice")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(grid_stride_kernel)[(4,)](x, out, x.numel(), EXTRA=-1, BLOCK=64)
    return out


@case("grid_stride_off_by_one", "partial", "add", rand(1000), "step (num_programs + 1) * B")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(grid_stride_kernel)[(4,)](x, out, x.numel(), EXTRA=1, BLOCK=64)
    return out


@case("row_loop_ok", "full", "add", rand(30, 20), "rows [pid*R, tl.minimum((pid+1)*R, n_rows)), R = 4")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(row_loop_kernel)[(cdiv(x.shape[0], 4),)](x, out, x.shape[0], x.shape[1], R=4, SKIP=0, BLOCK=32)
    return out


@case("row_loop_builtin_min", "full", "where", rand(30, 20), "the same with Python min")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(row_loop_min_kernel)[(cdiv(x.shape[0], 4),)](x, out, x.shape[0], x.shape[1], R=4, BLOCK=32)
    return out


@case("row_loop_skip_last", "partial", "add", rand(30, 20), "upper bound - 1: each program's last row missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(row_loop_kernel)[(cdiv(x.shape[0], 4),)](x, out, x.shape[0], x.shape[1], R=4, SKIP=1, BLOCK=32)
    return out


@case("row_loop_grid_floor", "partial", "mul", rand(30, 20), "grid n_rows // R (30 // 4)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(row_loop_kernel)[(x.shape[0] // 4,)](x, out, x.shape[0], x.shape[1], R=4, SKIP=0, BLOCK=32)
    return out


@case("while_ok", "full", "where", rand(1000), "while start < n, start += num_programs * B")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(while_kernel)[(3,)](x, out, x.numel(), STOP=0, BLOCK=64)
    return out


@case("while_stop_early", "partial", "add", rand(1000), "while start < n - B")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(while_kernel)[(3,)](x, out, x.numel(), STOP=64, BLOCK=64)
    return out


@case("step_loop_ok", "full", "add", rand(1000), "range(0, 4B, B)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(step_loop_kernel)[(cdiv(x.numel(), 128),)](x, out, x.numel(), STEP=32, BLOCK=32)
    return out


@case("step_loop_skips", "partial", "max", rand(1000), "range(0, 4B, 2B): every other block")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(step_loop_kernel)[(cdiv(x.numel(), 128),)](x, out, x.numel(), STEP=64, BLOCK=32)
    return out


# --- control flow and data ---


@case("parity_both_branches", "full", "add", rand(1000), "if pid % 2 == 0: store else: store")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(parity_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BOTH=True, BLOCK=64)
    return out


@case("parity_even_only", "partial", "add", rand(1000), "store under if pid % 2 == 0 only")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(parity_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BOTH=False, BLOCK=64)
    return out


@case("data_mask_all_positive", "full-data", "add", rand(1000).abs() + 0.1, "mask & (load(x) > 0), x > 0 here")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(data_mask_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("data_mask_mixed", "partial", "where", rand(1000), "mask & (load(x) > 0), x of both signs")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(data_mask_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("scatter_permutation", "full-data", "add", (rand(1000), torch.randperm(1000, generator=g).to(torch.int32)),
      "out[idx[i]] = x[i], idx a permutation")
def _(x):
    x, idx = x
    out = torch.empty_like(x)
    wrap_triton(scatter_kernel)[(cdiv(x.numel(), 64),)](x, idx, out, x.numel(), BLOCK=64)
    return out


@case("scatter_not_permutation", "partial", "add",
      (rand(1000), torch.randint(0, 1000, (1000,), generator=g, dtype=torch.int32)), "idx with repeats")
def _(x):
    x, idx = x
    out = torch.empty_like(x)
    wrap_triton(scatter_kernel)[(cdiv(x.numel(), 64),)](x, idx, out, x.numel(), BLOCK=64)
    return out


# --- int32 arithmetic ---


@case("int32_overflow_compare", "partial", "add", rand(1000),
      "(offs + big) < (n + big), big = 2**31 - 100: true for offs < n over integers, wraps in int32")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(overflow_compare_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 2**31 - 100, BLOCK=64)
    return out


@case("int32_overflow_mul", "partial", "add", rand(1000),
      "(pid * 2**30) // 2**24 == pid * 64 over integers, wraps for pid >= 2")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(overflow_mul_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 2**30, BLOCK=64)
    return out


@case("int32_overflow_wraps_to_full", "full", "add", rand(1000), "+ (2**30 * 4) * pid: 0 in int32")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(overflow_wrap_full_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 2**30, BLOCK=64)
    return out


# --- helpers, pointer selects, hints, block pointers ---


@case("noinline_helper_ok", "full", "add", rand(1000), "store in a @triton.jit(noinline=True) helper")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(noinline_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), SHORT=0, BLOCK=64)
    return out


@case("noinline_helper_short", "partial", "add", rand(1000), "noinline helper, mask offs < n - 2")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(noinline_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), SHORT=2, BLOCK=64)
    return out


@case("where_of_pointers_ok", "full", "add", rand(1000), "tl.where(even, out + offs, out + offs - 0)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(where_ptr_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), SHIFT=0, BLOCK=64)
    return out


@case("where_of_pointers_shift", "partial", "add", rand(1000), "odd lanes to out + offs - 1 (lane 0 masked): odd elements missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(where_ptr_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), SHIFT=1, BLOCK=64)
    return out


@case("hints_ok", "full", "mul", rand(1000), "tl.multiple_of / tl.max_contiguous")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(hints_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), SHORT=0, BLOCK=64)
    return out


@case("hints_short", "partial", "add", rand(1000), "hints, mask offs < n - 3")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(hints_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), SHORT=3, BLOCK=64)
    return out


@case("descriptor_ok", "full", "add", rand(45, 72), "tl.make_tensor_descriptor store, clipped at (M, N)")
def _(x):
    out = torch.empty_like(x)
    M, N = x.shape
    wrap_triton(descriptor_kernel)[(cdiv(M, 16), cdiv(N, 32))](x, out, M, N, M, N, x.stride(0), BM=16, BN=32)
    return out


@case("descriptor_shape_short", "partial", "where", rand(45, 72), "out descriptor's shape (M, N - 1)")
def _(x):
    out = torch.empty_like(x)
    M, N = x.shape
    wrap_triton(descriptor_kernel)[(cdiv(M, 16), cdiv(N, 32))](x, out, M, N, M, N - 1, x.stride(0), BM=16, BN=32)
    return out


# --- autotune / heuristics ---


@case("autotune_both_cover", "full", "add", rand(1000), "configs BLOCK 32 / 64, grid cdiv(n, meta['BLOCK'])")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(autotuned_small_kernel)[lambda meta: (cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out


@case("autotune_chosen_partial", "partial", "add", rand(1001), "grid cdiv(n, 64) fixed; BLOCK 32 chosen")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(autotuned_small_kernel)[lambda meta: (cdiv(n, 64),)](x, out, n)
    return out


@case("autotune_other_config_partial", "partial-config", "add", rand(1002),
      "grid cdiv(n, 64) fixed; BLOCK 64 runs (interpreter_config; covers), BLOCK 32 would not")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(autotuned_large_kernel, interpreter_config={"BLOCK": 64})[lambda meta: (cdiv(n, 64),)](x, out, n)
    return out


@case("heuristic_block_ok", "full", "add", rand(1000), "heuristics sets BLOCK, grid from meta['BLOCK']")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(heuristic_block_kernel)[lambda meta: (cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out


@case("heuristic_block_grid_fixed", "partial", "mul", rand(1000), "heuristics BLOCK = 32, grid cdiv(n, 64)")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(heuristic_block_kernel)[(cdiv(n, 64),)](x, out, n)
    return out


@case("heuristic_even", "full", "add", rand(1024), "EVEN heuristic: unmasked store")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(heuristic_even_kernel)[(cdiv(n, 64),)](x, out, n, BLOCK=64)
    return out


# --- several stores ---


@case("store_twice", "full", "add", rand(1000), "every element stored twice")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(twice_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("complementary_masks", "full", "max", rand(1000), "stores [0, h) and [h, n)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(halves_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 500, GAP=0, BLOCK=64)
    return out


@case("complementary_masks_gap", "partial", "add", rand(1000), "stores [0, h) and [h + 1, n): element h missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(halves_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 500, GAP=1, BLOCK=64)
    return out


# --- matmul ---


def _mm(a, b, grid_n, colmask):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N)
    wrap_triton(matmul_kernel)[(cdiv(M, 16), grid_n)](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(),
                                                      BM=16, BN=16, BK=16, COLMASK=colmask)
    return c


@case("matmul_ok", "full", "add", (rand(40, 40), rand(40, 40)), "K loop, tile store with both masks")
def _(x):
    return _mm(*x, cdiv(x[1].shape[1], 16), True)


@case("matmul_no_col_mask_N_mult", "full", "where", (rand(40, 24), rand(24, 48)), "row mask only, N = 48 = 3 * BN")
def _(x):
    return _mm(*x, cdiv(x[1].shape[1], 16), False)


@case("matmul_grid_floor", "partial", "add", (rand(40, 24), rand(24, 40)), "grid N // BN (40 // 16)")
def _(x):
    return _mm(*x, x[1].shape[1] // 16, True)


# --- dtypes ---


@case("bf16_out_full", "full", "add", rand(1000), "bfloat16 out, float32 y")
def _(x):
    out = torch.empty(x.shape, dtype=torch.bfloat16)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("fp16_out_full", "full", "max", rand(1000), "float16 out, float32 y")
def _(x):
    out = torch.empty(x.shape, dtype=torch.float16)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("bf16_out_grid_short", "partial", "add", rand(1000), "bfloat16 out, grid one short")
def _(x):
    out = torch.empty(x.shape, dtype=torch.bfloat16)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64) - 1,)](x, out, x.numel(), BLOCK=64)
    return out


@case("fp16_out_mask_n_minus_1", "partial", "where", rand(1000), "float16 out, mask < n - 1")
def _(x):
    out = torch.empty(x.shape, dtype=torch.float16)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel() - 1, BLOCK=64)
    return out


@case("int32_full", "full", "iadd", torch.randint(-50, 50, (1000,), generator=g, dtype=torch.int32), "int out + int y")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_int_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("int32_partial_strict", "partial-strict", "iadd",
      torch.randint(-50, 50, (1000,), generator=g, dtype=torch.int32), "int out + int y, grid short (strict: ok)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_int_kernel)[(cdiv(x.numel(), 64) - 1,)](x, out, x.numel(), BLOCK=64)
    return out


@case("int32_partial_where", "partial", "iwhere", torch.randint(-50, 50, (1000,), generator=g, dtype=torch.int32),
      "int out, where(y > 0, out, 0), grid short")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_int_kernel)[(cdiv(x.numel(), 64) - 1,)](x, out, x.numel(), BLOCK=64)
    return out



# ============================================================================================
# Cases aimed at the evaluator of the proof (_store_coverage): pointer selects, pointers
# through scf.if and loop-carried, nested / negative-step loops, narrow integer widths,
# unsigned compares, bit tricks, clamps, reshapes, per-config heuristics, hooks, stale
# module constants, several outputs, views, dynamic shapes.
# ============================================================================================


@triton.jit
def if_ptr_kernel(x_ptr, out_ptr, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    """The store's pointer chosen by scf.if: odd programs shift by -SHIFT."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = (offs >= SHIFT) & (offs < n)
    if pid % 2 == 0:
        p = out_ptr + offs
    else:
        p = out_ptr + offs - SHIFT
    tl.store(p, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def carried_ptr_kernel(x_ptr, out_ptr, n_rows, n_cols, R: tl.constexpr, DRIFT: tl.constexpr, BLOCK: tl.constexpr):
    """Loop-carried pointers advanced by n_cols + DRIFT per row."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    cm = cols < n_cols
    p = out_ptr + pid * R * n_cols + cols
    q = x_ptr + pid * R * n_cols + cols
    for r in range(R):
        rm = cm & ((pid * R + r + tl.zeros_like(cols)) < n_rows)
        tl.store(p, tl.load(q, mask=rm), mask=rm)
        p += n_cols + DRIFT
        q += n_cols


@triton.jit
def nested_loop_kernel(x_ptr, out_ptr, n_rows, n_cols, R: tl.constexpr, SKIP: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for r in range(pid * R, tl.minimum(pid * R + R, n_rows)):
        for c0 in range(0, n_cols - SKIP, BLOCK):
            cols = c0 + tl.arange(0, BLOCK)
            m = cols < n_cols
            tl.store(out_ptr + r * n_cols + cols, tl.load(x_ptr + r * n_cols + cols, mask=m) + 1.0, mask=m)


@triton.jit
def neg_step_kernel(x_ptr, out_ptr, n_rows, n_cols, R: tl.constexpr, BLOCK: tl.constexpr):
    """Rows of the program visited backwards: range(hi - 1, lo - 1, -1)."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    cm = cols < n_cols
    for r in range(tl.minimum(pid * R + R, n_rows) - 1, pid * R - 1, -1):
        tl.store(out_ptr + r * n_cols + cols, tl.load(x_ptr + r * n_cols + cols, mask=cm) * 2.0, mask=cm)


@triton.jit
def scalar_store_kernel(x_ptr, out_ptr):
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, tl.load(x_ptr + pid) * 2.0)


@triton.jit
def overflow_mul_i64_kernel(x_ptr, out_ptr, n, big, BLOCK: tl.constexpr):
    """The int32-overflow pattern computed in int64: pid * BLOCK exactly."""
    pid = tl.program_id(0).to(tl.int64)
    base = (pid * big) // (big // BLOCK)
    offs = base + tl.arange(0, BLOCK)
    m = (offs >= 0) & (offs < n)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def unsigned_mask_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """offs - 8 compared unsigned: the negative ones become huge and fail `< n`."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) - 8
    m = offs.to(tl.uint32) < n.to(tl.uint32)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)


@triton.jit
def int8_rows_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """Row offset computed in int8 (row * n_cols): wraps past 127."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    base = (row.to(tl.int8) * n_cols.to(tl.int8)).to(tl.int32)
    offs = base + cols
    m = (cols < n_cols) & (offs >= 0) & (offs < n_rows * n_cols)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def bitwise_kernel(x_ptr, out_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    if MODE == 0:
        idx = offs ^ 1             # swaps pairs: a permutation (n even)
    elif MODE == 1:
        idx = offs & ~1            # even elements only
    elif MODE == 2:
        idx = (offs >> 1) << 1     # even elements only
    else:
        idx = (offs << 1) >> 1     # identity
    tl.store(out_ptr + idx, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def clamp_idx_kernel(x_ptr, out_ptr, n, LOW: tl.constexpr, BLOCK: tl.constexpr):
    """No mask: lanes past the end clamp to n - 1; LOW = 1 also clamps 0 away."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = tl.maximum(tl.minimum(offs, n - 1), LOW)
    tl.store(out_ptr + idx, tl.load(x_ptr + idx) * 2.0)


@triton.jit
def where_idx_kernel(x_ptr, out_ptr, n, SHORT: tl.constexpr, BLOCK: tl.constexpr):
    """No mask: lanes at or past n - SHORT redirected to element 0."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = tl.where(offs < n - SHORT, offs, 0)
    tl.store(out_ptr + idx, tl.load(x_ptr + idx) * 2.0)


@triton.jit
def reshape_tile_kernel(x_ptr, out_ptr, n, TRANS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    o = tl.program_id(0) * BM * BN + tl.reshape(tl.arange(0, BM * BN), (BM, BN))
    if TRANS:
        o = tl.trans(o)
    m = o < n
    tl.store(out_ptr + o, tl.load(x_ptr + o, mask=m) * 2.0, mask=m)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.heuristics({"SHORT": lambda args: 0 if args["BLOCK"] == 32 else 1})
@triton.jit
def autotune_heuristic_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, SHORT: tl.constexpr):
    """A heuristic computed from each config's BLOCK: BLOCK 64 leaves element n - 1 unwritten."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n - SHORT
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


def _zero_out(nargs):
    nargs["out_ptr"].zero_()


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, pre_hook=_zero_out)], key=["n"])
@triton.jit
def prehook_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


G_SHORT = tl.constexpr(0)  # changed to 1 by the case global_constexpr_changed, after a first compile


@triton.jit
def global_short_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n - G_SHORT
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def two_out_kernel(x_ptr, o1_ptr, o2_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    tl.store(o1_ptr + offs, v * 2.0, mask=m)
    tl.store(o2_ptr + offs, v * 3.0, mask=m & (offs < n - 1))


@triton.jit
def flag_kernel(x_ptr, out_ptr, n, flag, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    if flag:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def static_range_kernel(x_ptr, out_ptr, n, UNROLL: tl.constexpr, STAGED: tl.constexpr, BLOCK: tl.constexpr):
    base = tl.program_id(0) * UNROLL * BLOCK
    if STAGED:
        for j in tl.range(0, UNROLL, num_stages=2, loop_unroll_factor=2):
            offs = base + j * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)
    else:
        for j in tl.static_range(UNROLL):
            offs = base + j * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def default_short_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, SHORT: tl.constexpr = 1):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n - SHORT
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def size_dependent_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Stores [0, n - n // 1024): all of n = 1000, not of n = 1024."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n - n // 1024
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def to_bool_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) > 0, mask=m)


@triton.jit
def to_u8_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.abs(tl.load(x_ptr + offs, mask=m)) * 10.0
    tl.store(out_ptr + offs, v.to(tl.uint8), mask=m)


# --- pointer selects ---


@case("where_of_pointers_one_program", "full", "add", rand(64), "tl.where(even, out + offs, out + offs - 0), 1 program")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(where_ptr_kernel)[(1,)](x, out, x.numel(), SHIFT=0, BLOCK=64)
    return out


@case("where_of_pointers_shift_one_program", "partial", "add", rand(64),
      "odd lanes to out + offs - 1 (lane 0 masked), grid (1,): odd elements missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(where_ptr_kernel)[(1,)](x, out, x.numel(), SHIFT=1, BLOCK=64)
    return out


@case("where_of_pointers_shift_one_program_where", "partial", "where", rand(64),
      "the same, epilogue where(y > 0, out, 0.)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(where_ptr_kernel)[(1,)](x, out, x.numel(), SHIFT=1, BLOCK=64)
    return out


@case("if_pointer_ok", "full", "add", rand(1000), "pointer chosen by if pid % 2 (same offsets)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(if_ptr_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), SHIFT=0, BLOCK=64)
    return out


@case("if_pointer_shift", "partial", "add", rand(1000), "odd programs' pointer shifted by -1")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(if_ptr_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), SHIFT=1, BLOCK=64)
    return out


@case("carried_pointer_ok", "full", "add", rand(30, 20), "p += n_cols in a loop, R = 4 rows per program")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(carried_ptr_kernel)[(cdiv(x.shape[0], 4),)](x, out, x.shape[0], x.shape[1], R=4, DRIFT=0, BLOCK=32)
    return out


@case("carried_pointer_drift", "partial", "max", rand(30, 20), "p += n_cols - 1: rows drift left")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(carried_ptr_kernel)[(cdiv(x.shape[0], 4),)](x, out, x.shape[0], x.shape[1], R=4, DRIFT=-1, BLOCK=32)
    return out


# --- loops ---


@case("nested_loops_ok", "full", "add", rand(30, 50), "rows x column blocks")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(nested_loop_kernel)[(cdiv(x.shape[0], 4),)](x, out, x.shape[0], x.shape[1], R=4, SKIP=0, BLOCK=16)
    return out


@case("nested_loops_inner_short", "partial", "add", rand(30, 50), "inner range(0, n_cols - 16, 16): cols 48, 49 missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(nested_loop_kernel)[(cdiv(x.shape[0], 4),)](x, out, x.shape[0], x.shape[1], R=4, SKIP=16, BLOCK=16)
    return out


@case("negative_step_loop", "full", "add", rand(30, 20), "range(hi - 1, lo - 1, -1)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(neg_step_kernel)[(cdiv(x.shape[0], 4),)](x, out, x.shape[0], x.shape[1], R=4, BLOCK=32)
    return out


@case("static_range_ok", "full", "add", rand(1000), "tl.static_range(4) blocks per program")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(static_range_kernel)[(cdiv(x.numel(), 256),)](x, out, x.numel(), UNROLL=4, STAGED=False, BLOCK=64)
    return out


@case("static_range_grid_short", "partial", "add", rand(1000), "tl.static_range(4), grid one short")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(static_range_kernel)[(cdiv(x.numel(), 256) - 1,)](x, out, x.numel(), UNROLL=4, STAGED=False,
                                                                 BLOCK=64)
    return out


@case("tl_range_staged_ok", "full", "where", rand(1000), "tl.range(0, 4, num_stages=2, loop_unroll_factor=2)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(static_range_kernel)[(cdiv(x.numel(), 256),)](x, out, x.numel(), UNROLL=4, STAGED=True, BLOCK=64)
    return out


# --- one element per program ---


@case("scalar_store_grid_n", "full", "add", rand(300), "tl.store(out + pid, ...), grid n")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(scalar_store_kernel)[(x.numel(),)](x, out)
    return out


@case("scalar_store_grid_n_minus_1", "partial", "add", rand(300), "tl.store(out + pid, ...), grid n - 1")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(scalar_store_kernel)[(x.numel() - 1,)](x, out)
    return out


# --- integer widths, signedness, bit tricks ---


@case("int64_pid_no_overflow", "full", "add", rand(1000), "(pid.to(int64) * 2**30) // 2**24")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(overflow_mul_i64_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 2**30, BLOCK=64)
    return out


@case("unsigned_mask_ok", "full", "add", rand(1000), "offs - 8, mask offs.to(uint32) < n, cdiv(n + 8) programs")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(unsigned_mask_kernel)[(cdiv(x.numel() + 8, 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("unsigned_mask_grid_short", "partial", "mul", rand(1024), "the same with cdiv(n) programs, n = 16 B")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(unsigned_mask_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("int8_row_offset_fits", "full", "add", rand(20, 6), "row * n_cols in int8, at most 114")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(int8_rows_kernel)[(x.shape[0],)](x, out, x.shape[0], x.shape[1], BLOCK=8)
    return out


@case("int8_row_offset_wraps", "partial", "add", rand(20, 100), "row * n_cols in int8 wraps for rows >= 2")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(int8_rows_kernel)[(x.shape[0],)](x, out, x.shape[0], x.shape[1], BLOCK=128)
    return out


@case("xor_pair_swap", "full", "add", rand(1000), "out + (offs ^ 1): a permutation")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(bitwise_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), MODE=0, BLOCK=64)
    return out


@case("and_not_1", "partial", "add", rand(1000), "out + (offs & ~1): even elements only")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(bitwise_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), MODE=1, BLOCK=64)
    return out


@case("shift_right_left", "partial", "where", rand(1000), "out + ((offs >> 1) << 1): even elements only")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(bitwise_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), MODE=2, BLOCK=64)
    return out


@case("shift_left_right", "full", "add", rand(1000), "out + ((offs << 1) >> 1): identity")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(bitwise_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), MODE=3, BLOCK=64)
    return out


@case("clamp_index_no_mask", "full", "add", rand(1000), "idx = min(offs, n - 1), no mask")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(clamp_idx_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), LOW=0, BLOCK=64)
    return out


@case("clamp_index_low_1", "partial", "add", rand(1000), "idx = max(min(offs, n - 1), 1): element 0 missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(clamp_idx_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), LOW=1, BLOCK=64)
    return out


@case("where_index_ok", "full", "mul", rand(1000), "idx = where(offs < n, offs, 0), no mask")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(where_idx_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), SHORT=0, BLOCK=64)
    return out


@case("where_index_short", "partial", "add", rand(1000), "idx = where(offs < n - 1, offs, 0): element n - 1 missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(where_idx_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), SHORT=1, BLOCK=64)
    return out


@case("reshape_offsets", "full", "add", rand(1000), "offsets tl.reshape(arange(512), (16, 32))")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(reshape_tile_kernel)[(cdiv(x.numel(), 512),)](x, out, x.numel(), TRANS=False, BM=16, BN=32)
    return out


@case("reshape_trans_offsets", "full", "add", rand(1000), "the same, tl.trans")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(reshape_tile_kernel)[(cdiv(x.numel(), 512),)](x, out, x.numel(), TRANS=True, BM=16, BN=32)
    return out


@case("reshape_trans_grid_short", "partial", "add", rand(1100), "tl.trans, grid one short")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(reshape_tile_kernel)[(cdiv(x.numel(), 512) - 1,)](x, out, x.numel(), TRANS=True, BM=16, BN=32)
    return out


# --- autotuning: heuristics per config, hooks ---


@case("autotune_heuristic_per_config_runs_partial", "partial", "add", rand(1000),
      "heuristic SHORT from each config's BLOCK; BLOCK 64 (SHORT 1) runs (interpreter_config)")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(autotune_heuristic_kernel, interpreter_config={"BLOCK": 64})[
        lambda meta: (cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out


@case("autotune_heuristic_per_config_other_partial", "partial-config", "add", rand(1000),
      "the same, BLOCK 32 (SHORT 0, covers) runs; BLOCK 64 would not cover")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(autotune_heuristic_kernel)[lambda meta: (cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out


@case("config_pre_hook_zeroes_out", "partial-hook", "add", rand(1000),
      "Config(pre_hook=zero out); grid one short: the hook's zeros are the unwritten elements",
      expect_error="UnsupportedTritonKernelError")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(prehook_kernel)[lambda meta: (cdiv(n, meta["BLOCK"]) - 1,)](x, out, n)
    return out


# --- constants the launch does not show ---


def _global_short_produce(x):
    out = torch.empty_like(x)
    wrap_triton(global_short_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


def _warm_with_global_short_0(c):
    """Compile and run with G_SHORT = 0 (full, fused), then make it 1: same kernel, same launch."""
    global G_SHORT
    G_SHORT = tl.constexpr(0)
    torch._dynamo.reset()
    y = torch.randn(c.x.shape)
    _, codes = run_and_get_code(torch.compile(lambda x, y: _global_short_produce(x) + y, fullgraph=True),
                                c.x.clone(), y)
    G_SHORT = tl.constexpr(1)
    return f"setup: the first compile (G_SHORT = 0) fused: {bool(fused_launches(chr(10).join(codes)))}"


@case("global_constexpr_changed", "partial", "add", rand(1000),
      "module constant G_SHORT 0 -> 1 after a first compile (mask offs < n - G_SHORT)", setup=_warm_with_global_short_0)
def _(x):
    return _global_short_produce(x)


@case("default_constexpr_short", "partial", "add", rand(1000), "SHORT: tl.constexpr = 1 by default, not passed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(default_short_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("default_constexpr_overridden", "full", "add", rand(1000), "SHORT=0 passed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(default_short_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64, SHORT=0)
    return out


@case("runtime_flag_true", "full", "add", rand(1000), "if flag: store (flag = True, an i1 argument)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(flag_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), True, BLOCK=64)
    return out


@case("runtime_flag_false", "partial", "where", rand(1000), "if flag: store (flag = False): nothing stored")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(flag_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), False, BLOCK=64)
    return out


@case("grid_zero", "partial", "add", rand(100), "grid (0,): no program runs")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(0,)](x, out, x.numel(), BLOCK=64)
    return out


# --- dynamic shapes ---


@case("dynamic_size_dependent", "full", "add", rand(1000),
      "compiled dynamic=True at n = 1000 (full), then called at n = 1024 (mask < n - n // 1024: partial)",
      compile_kwargs={"dynamic": True}, extra_x=[rand(1024)])
def _(x):
    out = torch.empty_like(x)
    wrap_triton(size_dependent_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("dynamic_grid_short", "partial", "add", rand(1000), "dynamic=True, grid one short",
      compile_kwargs={"dynamic": True})
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64) - 1,)](x, out, x.numel(), BLOCK=64)
    return out


# --- several outputs, views, layouts ---


@case("two_outputs_full_and_partial", ("full", "partial"), "add", rand(1000),
      "o1 stored everywhere, o2 misses n - 1; epilogue on each", out_args=("o1_ptr", "o2_ptr"))
def _(x):
    o1, o2 = torch.empty_like(x), torch.empty_like(x)
    wrap_triton(two_out_kernel)[(cdiv(x.numel(), 64),)](x, o1, o2, x.numel(), BLOCK=64)
    return o1, o2


@case("view_after_launch_full", "full", "where", rand(1000), "out.view(40, 25) then the epilogue")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out.view(40, 25)


@case("view_after_launch_partial", "partial", "add", rand(1000), "grid short, out.view(40, 25) then the epilogue")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64) - 1,)](x, out, x.numel(), BLOCK=64)
    return out.view(40, 25)


@case("view_of_empty_before_launch_full", "full", "add", rand(1000), "out = empty(40, 25).view(1000)")
def _(x):
    out = torch.empty(40, 25).view(1000)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("view_of_empty_before_launch_partial", "partial", "add", rand(1000), "the same, grid one short")
def _(x):
    out = torch.empty(40, 25).view(1000)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64) - 1,)](x, out, x.numel(), BLOCK=64)
    return out


@case("empty_like_transposed_input", "full", "add", rand(70, 45).t(), "out = empty_like(x.t()): strides (1, 45)")
def _(x):
    out = torch.empty_like(x)
    M, N = x.shape
    wrap_triton(tile_kernel)[(cdiv(M, 16), cdiv(N, 32))](x, out, M, N, *x.stride(), *out.stride(), BM=16, BN=32)
    return out


@case("empty_like_transposed_grid_short", "partial", "where", rand(70, 45).t(), "the same, grid dim 0 one short")
def _(x):
    out = torch.empty_like(x)
    M, N = x.shape
    wrap_triton(tile_kernel)[(cdiv(M, 16) - 1, cdiv(N, 32))](x, out, M, N, *x.stride(), *out.stride(), BM=16, BN=32)
    return out


@case("empty_like_transposed_row_major_indexing", "full", "add", rand(70, 45).t(),
      "strides (1, 45) but the kernel indexes out with row-major (70, 1) strides: every storage element once")
def _(x):
    out = torch.empty_like(x)
    M, N = x.shape
    # row-major strides (N, 1) over a (M, N) = (45, 70) buffer with strides (1, 45): offsets r * 70 + c
    # cover 0 .. 3149 exactly once: every element, scrambled
    wrap_triton(tile_kernel)[(cdiv(M, 16), cdiv(N, 32))](x, out, M, N, *x.stride(), N, 1, BM=16, BN=32)
    return out


@case("channels_last_grid_short", "partial", "add", _cl((2, 4, 5, 3)), "channels_last flat copy, grid one short")
def _(x):
    out = torch.empty_like(x, memory_format=torch.channels_last)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64) - 1,)](x, out, x.numel(), BLOCK=64)
    return out


# --- more dtypes and epilogues ---


@case("bool_out_full", "full", "cast_add", rand(1000), "bool out (x > 0), epilogue out.float() + y")
def _(x):
    out = torch.empty(x.shape, dtype=torch.bool)
    wrap_triton(to_bool_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("u8_out_grid_short", "partial", "cast_add", rand(1000), "uint8 out, grid one short, out.float() + y")
def _(x):
    out = torch.empty(x.shape, dtype=torch.uint8)
    wrap_triton(to_u8_kernel)[(cdiv(x.numel(), 64) - 1,)](x, out, x.numel(), BLOCK=64)
    return out


@case("masked_fill_full", "full", "mfill", rand(1000), "epilogue out.masked_fill(y.isnan(), 0.)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("masked_fill_partial", "partial", "mfill", rand(1000), "the same, mask < n - 1")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel() - 1, BLOCK=64)
    return out


@case("chain_full", "full", "chain", rand(1000), "epilogue (out * 2 + 1) * y")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("chain_partial", "partial", "chain", rand(1000), "the same, grid one short")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(copy_kernel)[(cdiv(x.numel(), 64) - 1,)](x, out, x.numel(), BLOCK=64)
    return out


# --- bool (i1) arguments, resets, float index math, one buffer twice ---


@case("runtime_flag_false_one_program", "partial", "add", rand(64),
      "if flag: store, flag = False, grid (1,): nothing stored")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(flag_kernel)[(1,)](x, out, x.numel(), False, BLOCK=64)
    return out


@case("runtime_flag_true_two_programs_mask_short", "partial", "add", rand(128),
      "if flag: store, flag = True, grid (2,), kernel's n = 127: element 127 missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(flag_kernel)[(2,)](x, out, x.numel() - 1, True, BLOCK=64)
    return out


@triton.jit
def flag_mask_kernel(x_ptr, out_ptr, n, flag, BLOCK: tl.constexpr):
    """The store's mask is the bool argument itself (and offs < n)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=tl.where(m, flag, False))


@case("flag_as_mask_false", "partial", "where", rand(64), "mask where(m, flag, False), flag = False, grid (1,)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(flag_mask_kernel)[(1,)](x, out, x.numel(), False, BLOCK=64)
    return out


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"],
                 reset_to_zero=["out_ptr"])
@triton.jit
def reset_to_zero_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@case("autotune_reset_to_zero_grid_short", "partial-hook", "add", rand(1000),
      "autotune(reset_to_zero=['out_ptr']), grid cdiv(n, BLOCK) - 1")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(reset_to_zero_kernel)[lambda meta: (cdiv(n, meta["BLOCK"]) - 1,)](x, out, n)
    return out


@triton.jit
def float_index_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Offsets through a float round trip: the proof does not follow floats."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = (offs.to(tl.float32) * 1.0).to(tl.int32)
    m = idx < n
    tl.store(out_ptr + idx, tl.load(x_ptr + idx, mask=m) * 2.0, mask=m)


@case("float_index_math", "full", "add", rand(1000), "offs.to(float32).to(int32): not followed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(float_index_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@triton.jit
def halves_two_params_kernel(x_ptr, lo_ptr, hi_ptr, n, h, BLOCK: tl.constexpr):
    """[0, h) through lo_ptr, [h, n) through hi_ptr."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    tl.store(lo_ptr + offs, v, mask=offs < h)
    tl.store(hi_ptr + offs, -v, mask=(offs >= h) & m)


@case("one_buffer_as_two_arguments", "full", "add", rand(1000), "out passed as lo_ptr and hi_ptr, halves each")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(halves_two_params_kernel)[(cdiv(x.numel(), 64),)](x, out, out, x.numel(), 500, BLOCK=64)
    return out


@case("one_buffer_as_two_arguments_gap", "partial", "add", rand(1000),
      "out passed as lo_ptr and hi_ptr; only the lo half stored (h = n // 2, hi masked by h = n)")
def _(x):
    out = torch.empty_like(x)
    # h = 500 for lo; the hi store's mask (offs >= h) & (offs < n) with n = 500: nothing
    wrap_triton(halves_two_params_kernel)[(cdiv(x.numel(), 64),)](x, out, out, 500, 500, BLOCK=64)
    return out


@triton.jit
def where_ptr_2d_kernel(x_ptr, out_ptr, M, N, SHIFT: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """2-D tile; odd rows' pointers shifted up one row (row 0 masked)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] >= SHIFT) & (rm[:, None] < M) & (rn[None, :] < N)
    o = rm[:, None] * N + rn[None, :]
    p = tl.where(rm[:, None] % 2 == 0, out_ptr + o, out_ptr + o - SHIFT * N)
    tl.store(p, tl.load(x_ptr + o, mask=m) * 2.0, mask=m)


@case("where_of_pointers_2d_one_program", "partial", "max", rand(16, 32),
      "2-D tile, odd rows to the row above (row 0 masked), grid (1, 1): odd rows missed")
def _(x):
    out = torch.empty_like(x)
    M, N = x.shape
    wrap_triton(where_ptr_2d_kernel)[(1, 1)](x, out, M, N, SHIFT=1, BM=16, BN=32)
    return out


@case("where_of_pointers_2d_ok", "full", "max", rand(45, 70), "2-D tile, tl.where of two equal pointers, 3x3 grid")
def _(x):
    out = torch.empty_like(x)
    M, N = x.shape
    wrap_triton(where_ptr_2d_kernel)[(cdiv(M, 16), cdiv(N, 32))](x, out, M, N, SHIFT=0, BM=16, BN=32)
    return out


@triton.jit
def flag_loop_kernel(x_ptr, out_ptr, n, flag, BLOCK: tl.constexpr):
    """A bool argument gating stores inside a loop."""
    base = tl.program_id(0) * 2 * BLOCK
    for j in range(2):
        offs = base + j * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        if flag:
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@case("flag_in_loop_false", "partial", "add", rand(128), "for j in range(2): if flag: store; flag = False, grid (1,)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(flag_loop_kernel)[(1,)](x, out, x.numel(), False, BLOCK=64)
    return out


@case("flag_in_loop_true", "full", "add", rand(1000), "the same, flag = True, cdiv(n, 2B) programs")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(flag_loop_kernel)[(cdiv(x.numel(), 128),)](x, out, x.numel(), True, BLOCK=64)
    return out


@triton.jit
def triangle_kernel(x_ptr, out_ptr, n_cols, EXTRA: tl.constexpr, BLOCK: tl.constexpr):
    """Program p stores rows 0 .. p - 1 + EXTRA: a loop bound from program_id."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    cm = cols < n_cols
    for r in range(0, pid + EXTRA):
        tl.store(out_ptr + r * n_cols + cols, tl.load(x_ptr + r * n_cols + cols, mask=cm) * 2.0, mask=cm)


@case("pid_loop_bound_ok", "full", "add", rand(12, 20), "program p stores rows 0..p (range(0, pid + 1)), grid rows")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(triangle_kernel)[(x.shape[0],)](x, out, x.shape[1], EXTRA=1, BLOCK=32)
    return out


@case("pid_loop_bound_short", "partial", "add", rand(12, 20), "range(0, pid): the last row is never stored")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(triangle_kernel)[(x.shape[0],)](x, out, x.shape[1], EXTRA=0, BLOCK=32)
    return out


@triton.jit
def early_return_kernel(x_ptr, out_ptr, n, LAST: tl.constexpr, BLOCK: tl.constexpr):
    """`return` early: programs past the end (LAST = 0), or the last program too (LAST = 1)."""
    pid = tl.program_id(0)
    if pid * BLOCK >= n - LAST * BLOCK:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@case("early_return_ok", "full", "add", rand(1024), "if pid * B >= n: return; grid cdiv(n, B) + 2")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(early_return_kernel)[(cdiv(x.numel(), 64) + 2,)](x, out, x.numel(), LAST=0, BLOCK=64)
    return out


@case("early_return_last_block", "partial", "add", rand(1024), "if pid * B >= n - B: return: last block missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(early_return_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), LAST=1, BLOCK=64)
    return out


@triton.jit
def carried_mask_kernel(x_ptr, out_ptr, n, CUT: tl.constexpr, BLOCK: tl.constexpr):
    """A mask carried through the loop, narrowed each iteration by offs < n - j * CUT."""
    base = tl.program_id(0) * 4 * BLOCK
    m = tl.full((BLOCK,), True, tl.int1)
    for j in range(4):
        offs = base + j * BLOCK + tl.arange(0, BLOCK)
        m = m & (offs < n - j * CUT)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@case("carried_mask_ok", "full", "add", rand(1000), "loop-carried mask m &= offs < n")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(carried_mask_kernel)[(cdiv(x.numel(), 256),)](x, out, x.numel(), CUT=0, BLOCK=64)
    return out


@case("carried_mask_narrowing", "partial", "add", rand(1000), "m &= offs < n - 8 j: lanes drop out for good")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(carried_mask_kernel)[(cdiv(x.numel(), 256),)](x, out, x.numel(), CUT=8, BLOCK=64)
    return out


# ============================================================================================
# cfg_: early returns (cf.cond_br / cf.br between the entry function's blocks). Written by a
# helper attacking the control-flow support of the proof: grids over / under the rows on each
# axis, returns on scalars (0, negative, i32 overflow), num_programs, constexprs, bool and
# loaded and float conditions, nested returns, returns on both sides, stores before / after /
# in dead blocks, loops and static_range around returns, autotune, helpers, layouts, dtypes.
# ============================================================================================


@triton.jit
def cfg_rows_kernel(x_ptr, out_ptr, n_rows, n_cols, skip, AXIS: tl.constexpr, BLOCK: tl.constexpr):
    """One row per program along AXIS; programs past n_rows return, and so does row `skip`."""
    row = tl.program_id(AXIS)
    if row >= n_rows:
        return
    if row == skip:
        return
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=m) * 2.0, mask=m)


@case("cfg_rows_axis0_grid_over", "full", "add", rand(13, 20), "if row >= n_rows: return; grid rows + 5")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(R + 5,)](x, out, R, C, -1, AXIS=0, BLOCK=32)
    return out


@case("cfg_rows_axis1_grid_over", "full", "where", rand(13, 20), "row = program_id(1), grid (2, rows + 3)")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(2, R + 3)](x, out, R, C, -1, AXIS=1, BLOCK=32)
    return out


@case("cfg_rows_axis2_grid_over", "full", "max", rand(13, 20), "row = program_id(2), grid (1, 2, rows + 1)")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(1, 2, R + 1)](x, out, R, C, -1, AXIS=2, BLOCK=32)
    return out


@case("cfg_rows_axis2_grid_under", "partial", "add", rand(13, 20), "row = program_id(2), grid (3, 1, rows - 1)")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(3, 1, R - 1)](x, out, R, C, -1, AXIS=2, BLOCK=32)
    return out


@case("cfg_rows_skip_one_row", "partial", "add", rand(13, 20), "if row == 3: return (nested after the grid test)")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(R + 2,)](x, out, R, C, 3, AXIS=0, BLOCK=32)
    return out


@case("cfg_rows_skip_last_row", "partial", "mul", rand(13, 20), "if row == n_rows - 1: return")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(R,)](x, out, R, C, R - 1, AXIS=0, BLOCK=32)
    return out


@case("cfg_rows_skip_equals_n_rows", "full", "add", rand(13, 20), "skip = n_rows: only programs already returned")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(R + 4,)](x, out, R, C, R, AXIS=0, BLOCK=32)
    return out


@case("cfg_rows_n_rows_negative", "partial", "add", rand(13, 20), "n_rows = -1: every program returns")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(R,)](x, out, -1, C, -1, AXIS=0, BLOCK=32)
    return out


@case("cfg_rows_n_rows_zero_empty_out", "full", "add", rand(0, 20),
      "0 rows, n_rows = 0, grid 4: all return, nothing to store")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(4,)](x, out, R, C, -1, AXIS=0, BLOCK=32)
    return out


@case("cfg_rows_n_rows_one_specialized", "full", "where", rand(1, 20), "n_rows = 1 (specialized to a constant), grid 4")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(4,)](x, out, R, C, -1, AXIS=0, BLOCK=32)
    return out


@case("cfg_rows_chunk_boundary_skip", "partial", "add", rand(550, 2048),
      "BLOCK 2048 (512 programs a chunk), grid 600, row 512 (first of the 2nd chunk) returns")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(600,)](x, out, R, C, 512, AXIS=0, BLOCK=2048)
    return out


@case("cfg_rows_chunk_boundary_ok", "full", "add", rand(550, 2048),
      "BLOCK 2048 (512 programs a chunk), grid 600, rows 550: the return cut inside the 2nd chunk")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(600,)](x, out, R, C, -1, AXIS=0, BLOCK=2048)
    return out


@triton.jit
def cfg_overflow_kernel(x_ptr, out_ptr, n, big, TWICE: tl.constexpr, BLOCK: tl.constexpr):
    """if pid * big (* 2) >= n: return, in i32 (wraps)."""
    pid = tl.program_id(0)
    t = pid * big
    if TWICE:
        t = t * 2
    if t >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@case("cfg_overflow_pid_times_2pow30", "partial", "add", rand(1000),
      "if pid * 2**30 >= n (i32 wraps): programs 1, 5, 9, 13 return, the others store")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_overflow_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 2 ** 30, TWICE=False, BLOCK=64)
    return out


@case("cfg_overflow_wraps_negative_full", "full", "where", rand(1000),
      "if pid * (2**31 - 1) * 2 >= n: i32 gives -2 pid: no program returns")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_overflow_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 2 ** 31 - 1, TWICE=True, BLOCK=64)
    return out


@case("cfg_big_i64_returns_after_first", "partial", "add", rand(1000),
      "if pid * big >= n with big = 2**40 (an i64 argument): every program but 0 returns")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_overflow_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 2 ** 40, TWICE=False, BLOCK=64)
    return out


@triton.jit
def cfg_num_programs_kernel(x_ptr, out_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    """MODE 0: if pid >= num_programs: return (never); 1: the last program returns;
    blocks stored in reverse program order."""
    pid = tl.program_id(0)
    np_ = tl.num_programs(0)
    if MODE == 0:
        if pid >= np_:
            return
    else:
        if pid == np_ - 1:
            return
    offs = (np_ - 1 - pid) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)


@case("cfg_num_programs_never", "full", "add", rand(1000), "if pid >= num_programs(0): return; reversed blocks")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_num_programs_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), MODE=0, BLOCK=64)
    return out


@case("cfg_num_programs_last_returns", "partial", "max", rand(1000),
      "if pid == num_programs(0) - 1: return; reversed: block 0 missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_num_programs_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), MODE=1, BLOCK=64)
    return out


@triton.jit
def cfg_bool_kernel(x_ptr, out_ptr, n, flag, NEGATE: tl.constexpr, BLOCK: tl.constexpr):
    """if flag: return (NEGATE: if not flag: return)."""
    if NEGATE:
        if not flag:
            return
    else:
        if flag:
            return
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@case("cfg_bool_true_returns", "partial", "add", rand(1000), "if flag: return, flag = True: nothing stored")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_bool_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), True, NEGATE=False, BLOCK=64)
    return out


@case("cfg_bool_false_stores", "full", "add", rand(1000), "if flag: return, flag = False")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_bool_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), False, NEGATE=False, BLOCK=64)
    return out


@case("cfg_bool_not_false_returns", "partial", "where", rand(1000), "if not flag: return, flag = False")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_bool_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), False, NEGATE=True, BLOCK=64)
    return out


@case("cfg_bool_not_true_stores", "full", "where", rand(1000), "if not flag: return, flag = True")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_bool_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), True, NEGATE=True, BLOCK=64)
    return out


@triton.jit
def cfg_loaded_kernel(x_ptr, nr_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """The row count read from memory: if row >= *nr_ptr: return."""
    row = tl.program_id(0)
    if row >= tl.load(nr_ptr):
        return
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=m) * 2.0, mask=m)


@case("cfg_loaded_row_count", "full-data", "add", rand(13, 20), "if row >= load(nr_ptr): return; *nr_ptr = rows")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    nr = torch.full((1,), R, dtype=torch.int32)
    wrap_triton(cfg_loaded_kernel)[(R + 3,)](x, nr, out, C, BLOCK=32)
    return out


@triton.jit
def cfg_float_cond_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """if row * 0.5 >= n_rows * 0.5 (floats): return."""
    row = tl.program_id(0)
    if row.to(tl.float32) * 0.5 >= n_rows.to(tl.float32) * 0.5:
        return
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=m) * 2.0, mask=m)


@case("cfg_float_condition", "full", "add", rand(13, 20), "the return's condition in float32: not followed")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_float_cond_kernel)[(R + 3,)](x, out, R, C, BLOCK=32)
    return out


@triton.jit
def cfg_both_branches_kernel(x_ptr, out_ptr, n, ODD_STORES: tl.constexpr, BLOCK: tl.constexpr):
    """Both branches of an if/else return (even programs store first); the store after the
    if/else is dead code."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    if pid % 2 == 0:
        tl.store(out_ptr + offs, v * 2.0, mask=m)
        return
    else:
        if ODD_STORES:
            tl.store(out_ptr + offs, v * 3.0, mask=m)
        return
    tl.store(out_ptr + offs, v * 5.0, mask=m)


@case("cfg_both_branches_return_full", "full", "add", rand(1000),
      "if even: store; return else: store; return; dead store")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_both_branches_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), ODD_STORES=True, BLOCK=64)
    return out


@case("cfg_both_branches_return_odd_missing", "partial", "add", rand(1000),
      "the same, odd programs return without storing; the dead store after the if/else would cover them")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_both_branches_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), ODD_STORES=False, BLOCK=64)
    return out


@triton.jit
def cfg_store_then_return_kernel(x_ptr, out_ptr, n, h, LANES: tl.constexpr, BLOCK: tl.constexpr):
    """Programs < h store every LANES-th lane then return; the others store after the branch."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    if pid < h:
        tl.store(out_ptr + offs, v * 2.0, mask=m & (offs % LANES == 0))
        return
    tl.store(out_ptr + offs, v * 3.0, mask=m)


@case("cfg_store_then_return_full", "full", "chain", rand(1000), "pid < h: store all lanes, return; others store after")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_store_then_return_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 7, LANES=1, BLOCK=64)
    return out


@case("cfg_store_then_return_half_lanes", "partial", "add", rand(1000),
      "pid < h: store even lanes, return: odd lanes of the first h blocks missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_store_then_return_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 7, LANES=2, BLOCK=64)
    return out


@case("cfg_store_then_return_h_zero", "full", "add", rand(1000), "the same, h = 0: no program takes the branch")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_store_then_return_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), 0, LANES=2, BLOCK=64)
    return out


@triton.jit
def cfg_dead_store_kernel(x_ptr, out_ptr, n, CONST_RETURN: tl.constexpr, BLOCK: tl.constexpr):
    """Every program returns first (a constexpr return, or pid >= 0); the store is dead."""
    pid = tl.program_id(0)
    if CONST_RETURN:
        return
    if pid >= 0:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@case("cfg_dead_store_pid_ge_0", "partial", "add", rand(1000), "if pid >= 0: return; the store no program reaches")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_dead_store_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), CONST_RETURN=False, BLOCK=64)
    return out


@case("cfg_dead_store_constexpr_return", "partial", "where", rand(1000),
      "if CONST: return (static): the store is a dead block")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_dead_store_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), CONST_RETURN=True, BLOCK=64)
    return out


@triton.jit
def cfg_last_block_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """if (pid + 1) * BLOCK > n: return: skips the last block exactly when it is partial."""
    pid = tl.program_id(0)
    if (pid + 1) * BLOCK > n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@case("cfg_last_partial_block_skipped", "partial", "add", rand(1000), "n = 1000, B = 64: the partial block returns")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_last_block_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@case("cfg_last_block_even_ok", "full", "add", rand(1024), "n = 1024: no partial block, grid + 2")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_last_block_kernel)[(cdiv(x.numel(), 64) + 2,)](x, out, x.numel(), BLOCK=64)
    return out


@triton.jit
def cfg_rpp_kernel(x_ptr, out_ptr, n_rows, n_cols, last, RPP: tl.constexpr, BLOCK: tl.constexpr):
    """RPP rows a program: return past the rows, then for r in range(start, min(start + RPP, last))."""
    pid = tl.program_id(0)
    start = pid * RPP
    if start >= n_rows:
        return
    end = tl.minimum(start + RPP, last)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    for r in range(start, end):
        tl.store(out_ptr + r * n_cols + cols, tl.load(x_ptr + r * n_cols + cols, mask=m) * 2.0, mask=m)


@case("cfg_loop_after_return_ok", "full", "add", rand(23, 20), "return then a loop over min(start + 4, n_rows)")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rpp_kernel)[(cdiv(R, 4) + 2,)](x, out, R, C, R, RPP=4, BLOCK=32)
    return out


@case("cfg_loop_after_return_last_row", "partial", "where", rand(23, 20),
      "the loop's bound min(.., n_rows - 1): last row missed")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rpp_kernel)[(cdiv(R, 4) + 2,)](x, out, R, C, R - 1, RPP=4, BLOCK=32)
    return out


@triton.jit
def cfg_static_range_kernel(x_ptr, out_ptr, n_rows, n_cols, CUT: tl.constexpr, BLOCK: tl.constexpr):
    """A return inside tl.static_range (unrolled: allowed): 4 rows a program."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    for i in tl.static_range(4):
        r = pid * 4 + i
        if r >= n_rows - CUT:
            return
        tl.store(out_ptr + r * n_cols + cols, tl.load(x_ptr + r * n_cols + cols, mask=m) * 2.0, mask=m)


@case("cfg_static_range_return_ok", "full", "add", rand(23, 20), "static_range(4) with `if r >= n_rows: return` inside")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_static_range_kernel)[(cdiv(R, 4) + 1,)](x, out, R, C, CUT=0, BLOCK=32)
    return out


@case("cfg_static_range_return_cut", "partial", "add", rand(23, 20), "the same, r >= n_rows - 1: last row missed")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_static_range_kernel)[(cdiv(R, 4) + 1,)](x, out, R, C, CUT=1, BLOCK=32)
    return out


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"],
                 do_bench=_bench_by_block(prefer_small=False))
@triton.jit
def cfg_autotune_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@case("cfg_autotune_grid_meta_ok", "full", "add", rand(1000),
      "autotune BLOCK 32/64, if pid * B >= n: return, grid cdiv(n, B) + 2")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(cfg_autotune_kernel)[lambda meta: (cdiv(n, meta["BLOCK"]) + 2,)](x, out, n)
    return out


@case("cfg_autotune_fixed_grid_both_cover", "full", "max", rand(1000), "grid cdiv(n, 32) fixed: both configs cover")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(cfg_autotune_kernel)[lambda meta: (cdiv(n, 32),)](x, out, n)
    return out


@case("cfg_autotune_other_config_partial", "partial-config", "add", rand(1000),
      "grid cdiv(n, 64) fixed; BLOCK 64 runs (covers), BLOCK 32 would not")
def _(x):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(cfg_autotune_kernel, interpreter_config={"BLOCK": 64})[lambda meta: (cdiv(n, 64),)](x, out, n)
    return out


@triton.jit
def _cfg_store_row(x_ptr, out_ptr, row, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=m) * 2.0, mask=m)


@triton.jit
def _cfg_store_row_or_return(x_ptr, out_ptr, row, n_rows, n_cols, BLOCK: tl.constexpr):
    if row >= n_rows:
        return
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=m) * 2.0, mask=m)


@triton.jit
def cfg_helper_kernel(x_ptr, out_ptr, n_rows, n_cols, HELPER_RETURNS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if HELPER_RETURNS:
        _cfg_store_row_or_return(x_ptr, out_ptr, row, n_rows, n_cols, BLOCK)
    else:
        if row >= n_rows:
            return
        _cfg_store_row(x_ptr, out_ptr, row, n_cols, BLOCK)


@case("cfg_helper_after_return", "full", "add", rand(13, 20), "return in the kernel, then a helper stores the row")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_helper_kernel)[(R + 3,)](x, out, R, C, HELPER_RETURNS=False, BLOCK=32)
    return out


@case("cfg_helper_returns_early_full", "full", "add", rand(13, 20),
      "the helper has `if row >= n_rows: return` (refused)")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_helper_kernel)[(R + 3,)](x, out, R, C, HELPER_RETURNS=True, BLOCK=32)
    return out


@case("cfg_helper_returns_early_partial", "partial", "add", rand(13, 20), "the same helper, n_rows - 1 passed")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_helper_kernel)[(R + 3,)](x, out, R - 1, C, HELPER_RETURNS=True, BLOCK=32)
    return out


@triton.jit
def cfg_strided_kernel(x_ptr, out_ptr, n_rows, n_cols, sxr, sxc, sor, soc, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_rows:
        return
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    v = tl.load(x_ptr + row * sxr + cols * sxc, mask=m)
    tl.store(out_ptr + row * sor + cols * soc, v * 2.0, mask=m)


@case("cfg_strided_empty_strided_colmajor", "full", "add", rand(13, 20), "out = empty_strided((13, 20), (1, 13))")
def _(x):
    R, C = x.shape
    out = torch.empty_strided((R, C), (1, R))
    wrap_triton(cfg_strided_kernel)[(R + 3,)](x, out, R, C, *x.stride(), *out.stride(), BLOCK=32)
    return out


@case("cfg_strided_transposed_view", "full", "where", rand(13, 20), "out = empty(20, 13).t() (a view of a fresh empty)")
def _(x):
    R, C = x.shape
    out = torch.empty(C, R).t()
    wrap_triton(cfg_strided_kernel)[(R + 3,)](x, out, R, C, *x.stride(), *out.stride(), BLOCK=32)
    return out


@case("cfg_strided_colmajor_skip_last_row", "partial", "add", rand(13, 20), "column-major out, n_rows - 1 passed")
def _(x):
    R, C = x.shape
    out = torch.empty_strided((R, C), (1, R))
    wrap_triton(cfg_strided_kernel)[(R + 3,)](x, out, R - 1, C, *x.stride(), *out.stride(), BLOCK=32)
    return out


@case("cfg_strided_non_dense_view", "full", "add", rand(13, 20), "out = empty(13, 40)[:, ::2] (not dense)")
def _(x):
    R, C = x.shape
    out = torch.empty(R, 2 * C)[:, ::2]
    wrap_triton(cfg_strided_kernel)[(R + 3,)](x, out, R, C, *x.stride(), *out.stride(), BLOCK=32)
    return out


@triton.jit
def cfg_dtype_kernel(x_ptr, out_ptr, n_rows, n_cols, skip, MODE: tl.constexpr, BLOCK: tl.constexpr):
    """MODE 0: v * 2 (cast to out's dtype), 1: v > 0, 2: v * 3 (ints)."""
    row = tl.program_id(0)
    if row >= n_rows:
        return
    if row == skip:
        return
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    v = tl.load(x_ptr + row * n_cols + cols, mask=m)
    if MODE == 0:
        w = v * 2.0
    elif MODE == 1:
        w = v > 0
    else:
        w = v * 3
    tl.store(out_ptr + row * n_cols + cols, w, mask=m)


IX = torch.randint(-50, 50, (13, 20), generator=g, dtype=torch.int32)


@case("cfg_int32_skip_row_strict", "partial-strict", "iadd", IX, "int out + int y, row 4 returns")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_dtype_kernel)[(R + 2,)](x, out, R, C, 4, MODE=2, BLOCK=32)
    return out


@case("cfg_int32_skip_row_where", "partial", "iwhere", IX, "int out, where(y > 0, out, 0), row 4 returns")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_dtype_kernel)[(R + 2,)](x, out, R, C, 4, MODE=2, BLOCK=32)
    return out


@case("cfg_int32_full_where", "full", "iwhere", IX, "int out, where(y > 0, out, 0), grid over")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_dtype_kernel)[(R + 2,)](x, out, R, C, -1, MODE=2, BLOCK=32)
    return out


@case("cfg_bool_out_full", "full", "cast_add", rand(13, 20), "bool out (v > 0), grid over, out.float() + y")
def _(x):
    out = torch.empty(x.shape, dtype=torch.bool)
    R, C = x.shape
    wrap_triton(cfg_dtype_kernel)[(R + 2,)](x, out, R, C, -1, MODE=1, BLOCK=32)
    return out


@case("cfg_bool_out_skip_row", "partial", "cast_add", rand(13, 20), "bool out, row 0 returns")
def _(x):
    out = torch.empty(x.shape, dtype=torch.bool)
    R, C = x.shape
    wrap_triton(cfg_dtype_kernel)[(R + 2,)](x, out, R, C, 0, MODE=1, BLOCK=32)
    return out


@case("cfg_bf16_out_full", "full", "add", rand(13, 20), "bf16 out, grid over")
def _(x):
    out = torch.empty(x.shape, dtype=torch.bfloat16)
    R, C = x.shape
    wrap_triton(cfg_dtype_kernel)[(R + 2,)](x, out, R, C, -1, MODE=0, BLOCK=32)
    return out


@case("cfg_bf16_out_skip_row", "partial", "max", rand(13, 20), "bf16 out, row 12 returns")
def _(x):
    out = torch.empty(x.shape, dtype=torch.bfloat16)
    R, C = x.shape
    wrap_triton(cfg_dtype_kernel)[(R + 2,)](x, out, R, C, 12, MODE=0, BLOCK=32)
    return out


@triton.jit
def cfg_two_out_kernel(x_ptr, o1_ptr, o2_ptr, n, skip, BLOCK: tl.constexpr):
    """o1 stored before the return, o2 after it."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    tl.store(o1_ptr + offs, v, mask=m)
    if pid == skip:
        return
    tl.store(o2_ptr + offs, v * 2.0, mask=m)


@case("cfg_two_outputs_before_after_return", ("full", "partial"), "add", rand(1000),
      "o1 stored before `if pid == 2: return`, o2 after", out_args=("o1_ptr", "o2_ptr"))
def _(x):
    o1, o2 = torch.empty_like(x), torch.empty_like(x)
    wrap_triton(cfg_two_out_kernel)[(cdiv(x.numel(), 64),)](x, o1, o2, x.numel(), 2, BLOCK=64)
    return o1, o2


@triton.jit
def cfg_dead_branch_values_kernel(x_ptr, out_ptr, n, PTR: tl.constexpr, BLOCK: tl.constexpr):
    """Values reassigned in the else of `if past the end: return`: the join's block argument
    takes the returning branch's (dead) value from a block no program reaches. PTR: the
    pointer (x_ptr in the dead branch), else the mask (nothing in the dead branch)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < 0
    p = x_ptr
    if pid * BLOCK >= n:
        return
    else:
        m = offs < n
        if PTR:
            p = out_ptr
    if PTR:
        tl.store(p + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)
    else:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@case("cfg_dead_branch_mask_block_arg", "full", "add", rand(1000),
      "m = offs < 0; if past: return else: m = offs < n; store with m (a block argument)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_dead_branch_values_kernel)[(cdiv(x.numel(), 64) + 2,)](x, out, x.numel(), PTR=False, BLOCK=64)
    return out


@case("cfg_dead_branch_pointer_block_arg", "full", "add", rand(1000),
      "p = x_ptr; if past: return else: p = out_ptr: the dead branch's x_ptr reaches the join")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_dead_branch_values_kernel)[(cdiv(x.numel(), 64) + 2,)](x, out, x.numel(), PTR=True, BLOCK=64)
    return out


@triton.jit
def cfg_unreached_div_kernel(x_ptr, out_ptr, n_rows, n_cols, STEP: tl.constexpr, BLOCK: tl.constexpr):
    """After `if row >= n_rows: return`, arithmetic that would fault only for the programs that
    returned: a division by n_rows - row (STEP 0) or a loop step of 0 (STEP 1)."""
    row = tl.program_id(0)
    if row >= n_rows:
        return
    k = n_rows - row
    cols = tl.arange(0, BLOCK)
    if STEP:
        step = tl.where(k > 0, BLOCK, 0)
        for c in range(0, n_cols, step):
            m = c + cols < n_cols
            tl.store(out_ptr + row * n_cols + c + cols, tl.load(x_ptr + row * n_cols + c + cols, mask=m) * 2.0, mask=m)
    else:
        m = cols < (n_cols * k) // k
        tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=m) * 2.0, mask=m)


@case("cfg_div_by_zero_only_in_returned_programs", "full", "add", rand(13, 20),
      "mask cols < n_cols * k // k with k = n_rows - row: 0 only for programs that returned")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_unreached_div_kernel)[(R + 2,)](x, out, R, C, STEP=0, BLOCK=32)
    return out


@case("cfg_loop_step_zero_only_in_returned_programs", "full", "add", rand(13, 40),
      "for c in range(0, n_cols, where(k > 0, B, 0)): step 0 only for programs that returned")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_unreached_div_kernel)[(R + 2,)](x, out, R, C, STEP=1, BLOCK=16)
    return out


@triton.jit
def cfg_unsigned_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """if (row - n_rows) as u32 < 1000: return (the rows past the end)."""
    row = tl.program_id(0)
    if (row - n_rows).to(tl.uint32) < 1000:
        return
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=m) * 2.0, mask=m)


@case("cfg_unsigned_condition", "full", "add", rand(13, 20), "return where (row - n_rows) as uint32 < 1000, grid + 3")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_unsigned_kernel)[(R + 3,)](x, out, R, C, BLOCK=32)
    return out


@triton.jit
def cfg_then_else_kernel(x_ptr, out_ptr, n, ELSE_STORES: tl.constexpr, BLOCK: tl.constexpr):
    """if in range: store the first half lanes, else: (store the second half; ELSE_STORES) return;
    after: the second half lanes (only in-range programs get there)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    first = tl.arange(0, BLOCK) < BLOCK // 2
    if pid * BLOCK < n:
        tl.store(out_ptr + offs, v * 2.0, mask=m & first)
    else:
        if ELSE_STORES:
            tl.store(out_ptr + offs, v * 2.0, mask=m & ~first)
        return
    if not ELSE_STORES:
        tl.store(out_ptr + offs, v * 2.0, mask=m & ~first)


@case("cfg_return_in_else_store_after", "full", "add", rand(1000),
      "then: first half lanes; else: return; after: second half")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_then_else_kernel)[(cdiv(x.numel(), 64) + 1,)](x, out, x.numel(), ELSE_STORES=False, BLOCK=64)
    return out


@case("cfg_return_in_else_second_half_in_else", "partial", "add", rand(1000),
      "the second half stored in the else (programs past the end only): second halves missed")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_then_else_kernel)[(cdiv(x.numel(), 64) + 1,)](x, out, x.numel(), ELSE_STORES=True, BLOCK=64)
    return out


@triton.jit
def cfg_nested3_kernel(x_ptr, out_ptr, n, nb, BLOCK: tl.constexpr):
    """Three nested ifs, returns at two depths; programs >= nb fall through to a store whose
    mask is empty for them."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    if pid < nb:
        if pid % 2 == 0:
            if pid % 4 == 0:
                tl.store(out_ptr + offs, v * 2.0, mask=m)
                return
        tl.store(out_ptr + offs, v * 3.0, mask=m)
        return
    tl.store(out_ptr + offs, v * 4.0, mask=m)


@case("cfg_nested_returns_three_deep", "full", "add", rand(1000), "returns at depth 1 and 3, grid nb + 2")
def _(x):
    out = torch.empty_like(x)
    nb = cdiv(x.numel(), 64)
    wrap_triton(cfg_nested3_kernel)[(nb + 2,)](x, out, x.numel(), nb, BLOCK=64)
    return out


@case("cfg_nested_returns_nb_short", "partial", "where", rand(1000),
      "the same, grid nb - 1: the last block is not launched")
def _(x):
    out = torch.empty_like(x)
    nb = cdiv(x.numel(), 64)
    wrap_triton(cfg_nested3_kernel)[(nb - 1,)](x, out, x.numel(), nb, BLOCK=64)
    return out


@triton.jit
def cfg_flag_join_kernel(x_ptr, out_ptr, n, nb, BLOCK: tl.constexpr):
    """An i1 decided on both sides of an if (one side may return), then `if not keep: return`."""
    pid = tl.program_id(0)
    if pid % 3 == 0:
        keep = pid < nb
    else:
        if pid >= nb + 5:
            return
        keep = pid < nb
    if not keep:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@case("cfg_i1_block_argument", "full", "add", rand(1000),
      "keep (i1) joined from both branches, then if not keep: return")
def _(x):
    out = torch.empty_like(x)
    nb = cdiv(x.numel(), 64)
    wrap_triton(cfg_flag_join_kernel)[(nb + 8,)](x, out, x.numel(), nb, BLOCK=64)
    return out


@case("cfg_i1_block_argument_nb_short", "partial", "add", rand(1000), "the same, nb - 1 passed: the last block returns")
def _(x):
    out = torch.empty_like(x)
    nb = cdiv(x.numel(), 64)
    wrap_triton(cfg_flag_join_kernel)[(nb + 8,)](x, out, x.numel(), nb - 1, BLOCK=64)
    return out


@triton.jit
def cfg_tile_kernel(x_ptr, out_ptr, M, N, n_lim, skip_b, BM: tl.constexpr, BN: tl.constexpr):
    """Batched tiles: program (pm, pn, b); returns past M, past n_lim, and for (skip_b, pm 0)."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    b = tl.program_id(2)
    if pm * BM >= M:
        return
    if pn * BN >= n_lim:
        return
    if (b == skip_b) & (pm == 0):
        return
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    o = b * M * N + rm[:, None] * N + rn[None, :]
    tl.store(out_ptr + o, tl.load(x_ptr + o, mask=m) * 2.0, mask=m)


@case("cfg_tile3d_grid_over_ok", "full", "add", rand(3, 45, 70), "(pm, pn, b) grid (cdiv + 1, cdiv + 2, 3)")
def _(x):
    out = torch.empty_like(x)
    B, M, N = x.shape
    wrap_triton(cfg_tile_kernel)[(cdiv(M, 16) + 1, cdiv(N, 32) + 2, B)](x, out, M, N, N, -1, BM=16, BN=32)
    return out


@case("cfg_tile3d_skip_last_col_block", "partial", "add", rand(3, 45, 70),
      "n_lim = 64: the last (partial) column block returns")
def _(x):
    out = torch.empty_like(x)
    B, M, N = x.shape
    wrap_triton(cfg_tile_kernel)[(cdiv(M, 16) + 1, cdiv(N, 32) + 2, B)](x, out, M, N, 64, -1, BM=16, BN=32)
    return out


@case("cfg_tile3d_n_lim_69_still_covers", "full", "where", rand(3, 45, 70),
      "n_lim = 69 (not N): block 64 still below it, covered")
def _(x):
    out = torch.empty_like(x)
    B, M, N = x.shape
    wrap_triton(cfg_tile_kernel)[(cdiv(M, 16), cdiv(N, 32), B)](x, out, M, N, 69, -1, BM=16, BN=32)
    return out


@case("cfg_tile3d_skip_one_tile", "partial", "max", rand(3, 45, 70), "(b == 2) & (pm == 0) returns: one tile row")
def _(x):
    out = torch.empty_like(x)
    B, M, N = x.shape
    wrap_triton(cfg_tile_kernel)[(cdiv(M, 16), cdiv(N, 32), B)](x, out, M, N, N, 2, BM=16, BN=32)
    return out


@case("cfg_tile3d_batch_grid_short", "partial", "add", rand(3, 45, 70), "grid axis 2 = B - 1")
def _(x):
    out = torch.empty_like(x)
    B, M, N = x.shape
    wrap_triton(cfg_tile_kernel)[(cdiv(M, 16), cdiv(N, 32), B - 1)](x, out, M, N, N, -1, BM=16, BN=32)
    return out


@triton.jit
def cfg_constexpr_rows_kernel(x_ptr, out_ptr, n_cols, NR: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= NR:
        return
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=m) * 2.0, mask=m)


@case("cfg_constexpr_row_count_ok", "full", "add", rand(13, 20), "if row >= NR (constexpr): return, NR = rows")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_constexpr_rows_kernel)[(R + 3,)](x, out, C, NR=R, BLOCK=32)
    return out


@case("cfg_constexpr_row_count_short", "partial", "add", rand(13, 20), "NR = rows - 1")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_constexpr_rows_kernel)[(R + 3,)](x, out, C, NR=R - 1, BLOCK=32)
    return out


@triton.jit
def cfg_neighbour_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """Odd rows return; even rows store their row and (scf.if) the next one."""
    row = tl.program_id(0)
    if row % 2 == 1:
        return
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=m) * 2.0, mask=m)
    if row + 1 < n_rows:
        r = row + 1
        tl.store(out_ptr + r * n_cols + cols, tl.load(x_ptr + r * n_cols + cols, mask=m) * 2.0, mask=m)


@case("cfg_odd_rows_stored_by_neighbour", "full", "add", rand(13, 20),
      "odd programs return; even ones store row and row + 1")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_neighbour_kernel)[(R,)](x, out, R, C, BLOCK=32)
    return out


@case("cfg_odd_rows_neighbour_grid_short", "partial", "add", rand(14, 20),
      "14 rows, grid 12: rows 12 and 13 missed")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_neighbour_kernel)[(R - 2,)](x, out, R, C, BLOCK=32)
    return out


@triton.jit
def cfg_while_rows_kernel(x_ptr, out_ptr, n_rows, n_cols, hop, BLOCK: tl.constexpr):
    """A grid-stride loop written as a while: r = pid, pid + hop, ... (hop = num_programs
    covers; num_programs + 1 skips rows)."""
    r = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    while r < n_rows:
        tl.store(out_ptr + r * n_cols + cols, tl.load(x_ptr + r * n_cols + cols, mask=m) * 2.0, mask=m)
        r += hop


@case("cfg_while_grid_stride_ok", "full", "add", rand(29, 20),
      "while r < n_rows: store row r; r += num_programs (grid 6)")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_while_rows_kernel)[(6,)](x, out, R, C, 6, BLOCK=32)
    return out


@case("cfg_while_grid_stride_gaps", "partial", "add", rand(29, 20),
      "the same, r += num_programs + 1: rows 6, 13, 20, 27 missed")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_while_rows_kernel)[(6,)](x, out, R, C, 7, BLOCK=32)
    return out


@triton.jit
def cfg_while_result_kernel(x_ptr, out_ptr, n, EQ: tl.constexpr, BLOCK: tl.constexpr):
    """k = pid rounded up to a multiple of 3 by a while (0 to 2 trips per program); then
    `if k % 3 == 0: return` (every program: nothing stored) or, EQ = 0, `!= 0` (none returns)."""
    pid = tl.program_id(0)
    k = pid
    while k % 3 != 0:
        k += 1
    if EQ:
        if k % 3 == 0:
            return
    else:
        if k % 3 != 0:
            return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@case("cfg_while_result_all_return", "partial", "add", rand(1000),
      "k rounded up to a multiple of 3 in a while; if k % 3 == 0: return")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_while_result_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), EQ=True, BLOCK=64)
    return out


@case("cfg_while_result_none_return", "full", "where", rand(1000), "the same, if k % 3 != 0: return (never)")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_while_result_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), EQ=False, BLOCK=64)
    return out


@triton.jit
def _cfg_store_chunk_and_continue(x_ptr, out_ptr, row, c, n_cols, BLOCK: tl.constexpr):
    cols = c + tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=m) * 2.0, mask=m)
    return c + BLOCK < n_cols


@triton.jit
def cfg_while_store_in_condition_kernel(x_ptr, out_ptr, n_rows, n_cols, HOP: tl.constexpr, BLOCK: tl.constexpr):
    """The store is in the while's condition (a helper that stores a chunk and says whether
    more follow): scf.while's before region; HOP chunks advanced per trip."""
    row = tl.program_id(0)
    if row >= n_rows:
        return
    c = 0
    while _cfg_store_chunk_and_continue(x_ptr, out_ptr, row, c, n_cols, BLOCK):
        c += HOP * BLOCK


@case("cfg_while_store_in_condition_ok", "full", "add", rand(13, 70),
      "while store_chunk(c): c += B (store in the before region)")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_while_store_in_condition_kernel)[(R + 2,)](x, out, R, C, HOP=1, BLOCK=16)
    return out


@case("cfg_while_store_in_condition_gaps", "partial", "add", rand(13, 70),
      "the same, c += 2 B: every other chunk missed")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_while_store_in_condition_kernel)[(R + 2,)](x, out, R, C, HOP=2, BLOCK=16)
    return out


@triton.jit
def cfg_while_ptr_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """The output pointer carried through a while (p += BLOCK)."""
    row = tl.program_id(0)
    if row >= n_rows:
        return
    p = out_ptr + row * n_cols
    c = 0
    cols = tl.arange(0, BLOCK)
    while c < n_cols:
        m = c + cols < n_cols
        tl.store(p + cols, tl.load(x_ptr + row * n_cols + c + cols, mask=m) * 2.0, mask=m)
        p += BLOCK
        c += BLOCK


@case("cfg_while_carried_pointer", "full", "add", rand(13, 70), "p = out + row * n; while c < n: store p; p += B")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_while_ptr_kernel)[(R + 2,)](x, out, R, C, BLOCK=16)
    return out


@triton.jit
def cfg_while_zero_trip_kernel(x_ptr, out_ptr, n_rows, n_cols, start, BLOCK: tl.constexpr):
    """while c < n_cols from c = start: start >= n_cols runs no trip for any program."""
    row = tl.program_id(0)
    if row >= n_rows:
        return
    c = start
    cols = tl.arange(0, BLOCK)
    while c < n_cols:
        m = c + cols < n_cols
        tl.store(out_ptr + row * n_cols + c + cols, tl.load(x_ptr + row * n_cols + c + cols, mask=m) * 2.0, mask=m)
        c += BLOCK


@case("cfg_while_after_return_ok", "full", "max", rand(13, 70), "return past the rows, then while c < n_cols from 0")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_while_zero_trip_kernel)[(R + 2,)](x, out, R, C, 0, BLOCK=16)
    return out


@case("cfg_while_zero_trips", "partial", "add", rand(13, 70), "the same from c = n_cols: no trip, nothing stored")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_while_zero_trip_kernel)[(R + 2,)](x, out, R, C, C, BLOCK=16)
    return out


@case("cfg_while_start_one_chunk_late", "partial", "add", rand(13, 70), "from c = 16: the first chunk missed")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_while_zero_trip_kernel)[(R + 2,)](x, out, R, C, 16, BLOCK=16)
    return out


@triton.jit
def _cfg_past_end(row, n_rows):
    return row >= n_rows


@triton.jit(noinline=True)
def _cfg_past_end_noinline(row, n_rows):
    return row >= n_rows


@triton.jit
def cfg_helper_cond_kernel(x_ptr, out_ptr, n_rows, n_cols, NOINLINE: tl.constexpr, BLOCK: tl.constexpr):
    """The return's condition from a helper (inlined, or noinline=True)."""
    row = tl.program_id(0)
    if NOINLINE:
        done = _cfg_past_end_noinline(row, n_rows)
    else:
        done = _cfg_past_end(row, n_rows)
    if done:
        return
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=m) * 2.0, mask=m)


@case("cfg_helper_condition", "full", "add", rand(13, 20), "if _past_end(row, n_rows): return (a jit helper)")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_helper_cond_kernel)[(R + 3,)](x, out, R, C, NOINLINE=False, BLOCK=32)
    return out


@case("cfg_helper_condition_noinline_short", "partial", "add", rand(13, 20),
      "the helper noinline=True, n_rows - 2 passed")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_helper_cond_kernel)[(R + 3,)](x, out, R - 2, C, NOINLINE=True, BLOCK=32)
    return out


@case("cfg_rows_dynamic_shapes", "full", "add", rand(13, 20), "compiled dynamic=True: n_rows symbolic",
      compile_kwargs={"dynamic": True})
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_rows_kernel)[(R + 2,)](x, out, R, C, -1, AXIS=0, BLOCK=32)
    return out


@triton.jit
def cfg_unsplat_cond_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """The condition a 1-element tensor (the frontend unsplats it, with a warning)."""
    row = tl.program_id(0)
    if row + tl.zeros((1,), tl.int32) >= n_rows:
        return
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=m) * 2.0, mask=m)


@case("cfg_one_element_tensor_condition", "full", "add", rand(13, 20), "if row + zeros((1,)) >= n_rows: return")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_unsplat_cond_kernel)[(R + 3,)](x, out, R, C, BLOCK=32)
    return out


@triton.jit
def cfg_readback_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Stores, returns for odd programs, then even ones read out back and store again."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)
    if pid % 2 == 1:
        return
    w = tl.load(out_ptr + offs, mask=m)
    tl.store(out_ptr + offs, w * 2.0, mask=m)


@case("cfg_readback_after_return", "full", "add", rand(1000),
      "store, odd return, even programs load out back and store again")
def _(x):
    out = torch.empty_like(x)
    wrap_triton(cfg_readback_kernel)[(cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@triton.jit
def cfg_data_paths_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """A data-dependent return, but both paths store the whole row (zeros, or v / max|v|)."""
    row = tl.program_id(0)
    if row >= n_rows:
        return
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    v = tl.load(x_ptr + row * n_cols + cols, mask=m, other=0.0)
    big = tl.max(tl.abs(v), axis=0)
    if big == 0.0:
        tl.store(out_ptr + row * n_cols + cols, tl.zeros((BLOCK,), tl.float32), mask=m)
        return
    tl.store(out_ptr + row * n_cols + cols, v / big, mask=m)


@case("cfg_data_return_both_paths_store", "full", "add", torch.cat([rand(6, 20), torch.zeros(3, 20), rand(4, 20)]),
      "if max|row| == 0: store zeros; return; else store v / max: every path stores the row")
def _(x):
    out = torch.empty_like(x)
    R, C = x.shape
    wrap_triton(cfg_data_paths_kernel)[(R + 2,)](x, out, R, C, BLOCK=32)
    return out


@triton.jit
def cfg_data_block_arg_kernel(x_ptr, out_ptr, n, nb, DEAD_RETURN: tl.constexpr, BLOCK: tl.constexpr):
    """Only the stored *value* goes through a block argument (addresses and masks do not):
    DEAD_RETURN = 0: `scale` set on both sides of an if whose else returns past nb;
    DEAD_RETURN = 1: the if's only return is under a constexpr False (never emitted), yet the
    frontend makes the if a branch because the AST holds a return, and passes v."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    if DEAD_RETURN:
        if pid % 2 == 0:
            if DEAD_RETURN == 2:
                return
            v = v * 2.0
    else:
        if pid % 2 == 0:
            v = v * 2.0
        else:
            if pid >= nb:
                return
            v = v * 3.0
    tl.store(out_ptr + offs, v, mask=m)


@case("cfg_block_arg_data_only", "full", "add", rand(1000),
      "v = v * 2 / (if past nb: return) v = v * 3: only the stored value is a block argument")
def _(x):
    out = torch.empty_like(x)
    nb = cdiv(x.numel(), 64)
    wrap_triton(cfg_data_block_arg_kernel)[(nb + 2,)](x, out, x.numel(), nb, DEAD_RETURN=0, BLOCK=64)
    return out


@case("cfg_dead_static_return_block_arg", "full", "add", rand(1000),
      "if pid even: (if CONST_FALSE: return) v = v * 2: no return emitted, still a branch passing v")
def _(x):
    out = torch.empty_like(x)
    nb = cdiv(x.numel(), 64)
    wrap_triton(cfg_data_block_arg_kernel)[(nb,)](x, out, x.numel(), nb, DEAD_RETURN=1, BLOCK=64)
    return out


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------

def as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


def clone(v):
    if isinstance(v, (tuple, list)):
        return type(v)(clone(t) for t in v)
    return v.clone() if isinstance(v, torch.Tensor) else v


def same_bits(a, b):
    """Element-wise: equal bits (NaN == NaN, signbit kept); None if dtypes or shapes differ."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return None
    if a.is_floating_point():
        a64, b64 = a.double(), b.double()
        return ((a64 == b64) & (torch.signbit(a64) == torch.signbit(b64))) | (a64.isnan() & b64.isnan())
    return a == b


def all_same(a, b, masks):
    """a, b: tuples of results; masks: where to compare, per result."""
    for u, v, m in zip(a, b, masks):
        eq = same_bits(u, v)
        if eq is None or not bool(eq[m].all()):
            return False
    return True


def written_masks(c, x):
    """Elements each output of the kernel gets, measured: the kernel alone under two sentinels."""
    runs = []
    for i in (0, 1):
        with sentinel(i), PoisonEmpty():
            runs.append(clone(as_tuple(c.produce(clone(x)))))
    return [same_bits(a, b) for a, b in zip(*runs)]


def make_y(epilogue, out_like, written, seed):
    """y: NaN (ints: -1) exactly where nothing is written, and NaN / +-inf at a few written
    elements too; laid out like the output where that is dense."""
    gy = torch.Generator().manual_seed(seed)
    shape = out_like.shape
    if EPILOGUES[epilogue][0].endswith("(int)"):
        y = torch.randint(-20, 20, shape, generator=gy, dtype=torch.int32)
        y[~written] = -1  # where(y > 0, out, 0) is 0 there
    else:
        y = torch.randn(shape, generator=gy)
        flat = y.view(-1)
        idx = torch.nonzero(written.reshape(-1)).view(-1)
        if idx.numel() >= 6:
            pick = idx[torch.randperm(idx.numel(), generator=gy)[:6]]
            flat[pick[0:2]] = float("nan")
            flat[pick[2:4]] = float("inf")
            flat[pick[4:6]] = float("-inf")
        y = flat.view(shape)
        y[~written] = float("nan")
    if is_non_overlapping_and_dense(out_like) and not out_like.is_contiguous():
        y = torch.empty_strided(shape, out_like.stride(), dtype=y.dtype).copy_(y)
    return y


class _Log(logging.Handler):
    """The fusion pass's log, with tracebacks of warnings that carry one."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.text = ""

    def emit(self, record):
        self.text += record.getMessage() + "\n"
        if record.exc_info:
            self.text += "".join(traceback.format_exception(*record.exc_info)) + "\n"


@contextlib.contextmanager
def fusion_log_with_tracebacks():
    handler, logger = _Log(), logging.getLogger("torch_triton_hop._fusion")
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def fused_args(log_text):
    """Arguments the fusion log says were fused, over all launches."""
    names = set()
    for m in re.finditer(r"\): fused (\{.*?\}); not fused", log_text):
        try:
            names |= set(ast.literal_eval(m.group(1)))
        except (ValueError, SyntaxError):
            names.add("?")
    return names


class Result:
    pass


def run_case(c):
    r = Result()
    r.case, r.error, r.log, r.fused, r.equal, r.notes = c, None, "", None, None, []
    r.written, r.epilogue, r.fused_outputs = None, EPILOGUES[c.epilogue][0], []
    t0 = time.time()
    try:
        epi = EPILOGUES[c.epilogue][1]
        if c.setup is not None:
            said = c.setup(c)
            if said:
                r.notes.append(said)

        def fn(x, y):
            outs = as_tuple(c.produce(x))
            results = tuple(epi(o, yy) for o, yy in zip(outs, y))
            return results if len(results) > 1 else results[0]

        inputs = [c.x, *c.extra_x]
        prepared = []
        for k, x in enumerate(inputs):
            written = written_masks(c, x)
            with sentinel(2), PoisonEmpty():
                outs_like = as_tuple(c.produce(clone(x)))
            ys = tuple(make_y(c.epilogue, o, w, seed=1 + 10 * k + j) for j, (o, w) in enumerate(zip(outs_like, written)))
            strict = c.epilogue == "iadd"
            cmp = [w if strict else torch.ones_like(w) for w in written]
            if strict and not all(bool(w.all()) for w in written):
                r.notes.append("strict int epilogue: compared where written only")
            # eager, twice under different sentinels: the result must not depend on garbage
            eagers = []
            for i in (0, 1):
                with sentinel(i), PoisonEmpty():
                    eagers.append(as_tuple(fn(clone(x), clone(ys))))
            if not all_same(eagers[0], eagers[1], cmp):
                r.notes.append(f"CASE ERROR: eager result depends on garbage (input {k})")
            prepared.append((x, ys, written, cmp, eagers[0]))
        r.written = [(int(w.sum()), w.numel()) for w in prepared[0][2]]

        def compiled_runs(fusion, first_sentinel, runs):
            torch._dynamo.reset()
            torch_triton_hop.config.fusion = fusion
            try:
                compiled = torch.compile(fn, fullgraph=True, **c.compile_kwargs)
                per_input, code = [], ""
                for k, (x, ys, _, _, _) in enumerate(prepared):
                    results = []
                    for i in range(runs):
                        with sentinel((first_sentinel + i) % 3):
                            if k == 0 and i == 0:
                                out, codes = run_and_get_code(compiled, clone(x), clone(ys))
                                code = "\n".join(codes)
                            else:
                                out = compiled(clone(x), clone(ys))
                        results.append(clone(as_tuple(out)))
                    per_input.append(results)
            finally:
                torch_triton_hop.config.fusion = True
            return per_input, code

        unfused, _ = compiled_runs(False, 0, 2)
        with fusion_log_with_tracebacks() as log:
            fused, code = compiled_runs(True, 1, 3)
        r.log, r.code = log.text, code
        r.fused = bool(fused_launches(code))
        if c.out_args:
            names = fused_args(log.text)
            r.fused_outputs = [a in names for a in c.out_args]
        else:
            r.fused_outputs = [r.fused]
        r.unfused_eq_eager = r.fused_eq_unfused = r.fused_eq_eager = True
        for k, (x, ys, written, cmp, eager) in enumerate(prepared):
            u_ok = all(all_same(u, eager, cmp) for u in unfused[k])
            fu_ok = all(all_same(f, unfused[k][0], cmp) for f in fused[k])
            fe_ok = all(all_same(f, eager, cmp) for f in fused[k])
            r.unfused_eq_eager &= u_ok
            r.fused_eq_unfused &= fu_ok
            r.fused_eq_eager &= fe_ok
            if not u_ok:
                r.notes.append(f"UNFUSED != EAGER (input {k})")
            if not (fu_ok and fe_ok):
                for j, (fo, uo, w) in enumerate(zip(fused[k][0], unfused[k][0], written)):
                    eq = same_bits(fo, uo)
                    if eq is None:
                        r.notes.append(f"input {k} output {j}: fused {fo.dtype} {tuple(fo.shape)} vs unfused "
                                       f"{uo.dtype} {tuple(uo.shape)}")
                        continue
                    bad = ~eq
                    if not bool(bad.any()):
                        continue
                    idx = torch.nonzero(bad.reshape(-1)).view(-1)[:6].tolist()
                    r.notes.append(f"input {k} output {j}: fused differs from unfused at {int(bad.sum())} of "
                                   f"{bad.numel()} elements ({int((bad & ~w).sum())} of them unwritten by the kernel)")
                    r.notes.append(f"   first at flat {idx}: fused {fo.reshape(-1)[idx].tolist()} "
                                   f"unfused {uo.reshape(-1)[idx].tolist()} eager {eager[j].reshape(-1)[idx].tolist()}")
        r.equal = r.fused_eq_unfused and r.fused_eq_eager
        said = proof_says(r)
        if said.startswith("misses") and r.written and len(r.written) == 1 and c.label != "partial-config":
            unwritten = r.written[0][1] - r.written[0][0]
            if int(said.split()[1]) != unwritten:
                r.notes.append(f"PROOF COUNT MISMATCH: the proof says {said.split()[1]} elements unwritten, the kernel "
                               f"left {unwritten} (measured)")
        if "fusion pass failed" in r.log:
            r.notes.append("FUSION PASS CRASHED (warning with traceback in the log)")
        if re.search(r"proof could not be made", r.log):
            r.notes.append("the proof raised inside (its message is in the log)")
    except Exception:  # noqa: BLE001 - recorded, never skipped
        r.error = traceback.format_exc()
    r.seconds = time.time() - t0
    return r


def proof_says(r):
    """What the proof concluded for the (first) output, from the log: 'full' (fused with an epilogue
    that needed it), 'misses K', or the start of another reason; '' where it did not run."""
    m = re.search(r"no proof that it stores every element: (.*?)\)\"?[,}]", r.log)
    if m:
        text = m.group(1)
        k = re.match(r"the kernel may leave (\d+) of the (\d+) elements", text)
        return f"misses {k.group(1)}" if k else "no: " + text[:60]
    if r.fused and r.case.epilogue not in ("iadd",):
        return "full"
    return ""


def label_problem(r):
    """A label that the measured writes contradict (a mistake in the corpus, not the package)."""
    if r.written is None:
        return None
    for label, (got, total) in zip(r.case.expected, r.written):
        if label in FULL_LABELS and got != total:
            return f"labelled {label} but the kernel wrote {got}/{total}"
        if label in PARTIAL_LABELS and got == total and not r.case.extra_x:
            return f"labelled {label} but the kernel wrote every element"
    return None


def verdict(r):
    if r.error and r.case.expect_error and r.case.expect_error in r.error:
        return "ok (refused: expected error)"
    if r.error:
        return "EXCEPTION"
    if label_problem(r):
        return "LABEL?"
    if any(n.startswith("CASE ERROR") for n in r.notes) or not r.unfused_eq_eager:
        return "BUG(unfused/case)"
    if not r.equal:
        return "WRONG RESULT"
    unsound = [label for label, fused in zip(r.case.expected, r.fused_outputs) if fused and label in MUST_REFUSE]
    if unsound:
        return "UNSOUND (fused; equal by luck)"
    if "FUSION PASS CRASHED" in " ".join(r.notes):
        return "ok (pass crashed)"
    if all(label == "full" and fused for label, fused in zip(r.case.expected, r.fused_outputs)):
        return "ok"
    if any(label == "full" and not fused for label, fused in zip(r.case.expected, r.fused_outputs)):
        return "ok (conservative)"
    return "ok"


def reason_lines(text):
    lines = []
    for line in text.splitlines():
        if line.startswith("launch ") or line.startswith("Traceback") or line.startswith("  File ") or \
                re.match(r"^\w+(Error|Exception)\b", line):
            lines.append(line.split(". Fused kernel")[0])
    return lines


def check_poison():
    """The sentinels reach buffers the compiled code allocates (else garbage could hide)."""
    torch._dynamo.reset()
    f = torch.compile(lambda x: torch.empty_like(x), fullgraph=True)
    for i in range(3):
        with sentinel(i):
            got = f(torch.ones(100))
        assert bool((got == FLOAT_SENTINELS[i]).all()), (i, got[:4])
    with sentinel(1), PoisonEmpty():
        assert bool((torch.empty(5) == FLOAT_SENTINELS[1]).all())


def main():
    check_poison()
    selected = sys.argv[1:]
    cases = [c for c in CASES if not selected or any(s in c.name for s in selected)]
    started = time.time()
    results = []
    print(f"{len(cases)} cases", flush=True)
    for c in cases:
        r = run_case(c)
        results.append(r)
        fused = "/".join("yes" if f else "no" for f in r.fused_outputs) if r.fused_outputs else "?"
        status = "EXC" if r.error else f"fused={fused} equal={'yes' if r.equal else 'NO'}"
        print(f"[{len(results):3d}/{len(cases)}] {c.name:44s} {c.label:14s} {status:24s} {verdict(r):22s} "
              f"{r.seconds:5.1f}s", flush=True)
        for line in reason_lines(r.log):
            print("      log:", line[:700], flush=True)
        for n in r.notes:
            print("      note:", n, flush=True)
        if r.error:
            print("      " + r.error.replace("\n", "\n      "), flush=True)
    total = time.time() - started
    report(results, total)


def _proof_state():
    import hashlib
    path = os.path.join(os.path.dirname(torch_triton_hop.__file__), "_store_coverage.py")
    if not os.path.exists(path):
        return "no _store_coverage.py (no coverage proof)"
    with open(path, "rb") as f:
        return f"_store_coverage.py sha1 {hashlib.sha1(f.read()).hexdigest()[:12]}"


def report(results, total):
    lines = ["Coverage-proof corpus: each kernel writes a fresh torch.empty; the epilogue is defined where",
             "nothing is stored (y NaN there).",
             "expected: full = every element stored, provable (should fuse); full-data = stored everywhere with",
             "these data only (must refuse); partial = some element never stored (must refuse); partial-config =",
             "the config run here covers, another does not (must refuse); partial-strict = partial with a strict",
             "int epilogue (fusing is fine); partial-hook = an autotuner hook writes the buffer first.",
             "written = elements the kernel stores, measured eagerly under two sentinels (per output).",
             "equal = fused compile (3 runs, fresh buffers filled with sentinels) bit-equal to the unfused compile",
             "(2 runs) and to eager. fused = the launch became a fused kernel (per output where several).",
             "", f"torch {torch.__version__}, triton {triton.__version__}; {len(results)} cases in {total:.0f} s",
             f"package: {os.path.dirname(torch_triton_hop.__file__)}; {_proof_state()}", ""]
    header = (f"{'case':44s} {'expected':14s} {'written':>11s} {'proof says':16s} {'epilogue':30s} {'fused':7s} "
              f"{'equal':5s} verdict")
    lines += [header, "-" * len(header)]
    for r in results:
        c = r.case
        w = ",".join(f"{a}/{b}" for a, b in r.written) if r.written else "?"
        fused = "EXC" if r.error else "/".join("yes" if f else "no" for f in r.fused_outputs)
        equal = "EXC" if r.error else ("yes" if r.equal else "NO")
        lines.append(f"{c.name:44s} {c.label:14s} {w:>11s} {proof_says(r)[:16]:16s} {r.epilogue:30s} {fused:7s} "
                     f"{equal:5s} {verdict(r)}")
    counts = {}
    for r in results:
        counts[verdict(r)] = counts.get(verdict(r), 0) + 1
    lines += ["", "verdicts: " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())), "",
              "Per case: what it does, the fusion log (why not fused / what was fused), notes", ""]
    for r in results:
        c = r.case
        lines.append(f"== {c.name} [{c.label}] {c.note}")
        problem = label_problem(r)
        if problem:
            lines.append("   LABEL: " + problem)
        for line in reason_lines(r.log):
            lines.append("   log: " + line)
        for n in r.notes:
            lines.append("   note: " + n)
        if r.error:
            lines.append("   " + r.error.replace("\n", "\n   "))
    text = "\n".join(lines) + "\n"
    with open(REPORT, "w") as f:
        f.write(text)
    print()
    print(text)
    print(f"sentinel fills: {_POISONED[0]}")


if __name__ == "__main__":
    main()
