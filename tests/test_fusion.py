"""Pointwise prologues and epilogues fused into user kernels under torch.compile.

Each fused case: one launch of the user kernel, no separate inductor kernel for the pointwise
ops, no intermediate buffer, results equal to eager. Each refused case: the graph keeps the
pointwise kernel, the result is still eager's, and the debug log says why.
See [Note: Fusing pointwise code into user kernels].
"""

import contextlib
import logging
import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch
import triton
import triton.language as tl
from torch._dynamo.utils import counters
from torch._inductor.utils import run_and_get_code

import torch_triton_hop
from torch_triton_hop import wrap_triton
from torch_triton_hop._fusion_source import FusedArgument, NotFusible, rewrite_kernel_source

import fusion_kernels as F
from generated_code import ON_GPU, allocations, compile_and_code

pytestmark = pytest.mark.any_device
DEVICE = "cuda" if ON_GPU else "cpu"
FUSION_LOG = "torch_triton_hop._fusion"


def pointwise_kernels(code):
    """inductor's own kernels (a separate pass over memory for pointwise ops)."""
    call = code[code.index("def call("):]
    return re.findall(r"^(?!\s*#).*(?:cpp_fused_\w+\(|triton_\w+_fused_\w*\.run\().*$", call, re.M)


def user_launches(code):
    """Launches of user kernels: the package's launch (interpreter) or inductor's `<name>_0.run(`
    of a kernel it did not generate (GPU)."""
    call = code[code.index("def call("):]
    return re.findall(r"^\s*(?:_tth_launch\(kernel='[^']*|(?!triton_)\w+\.run\().*$", call, re.M)


def fused_launches(code):
    """Fused kernels are named <kernel>_fused (key torch_triton_hop.fused:<kernel>_fused@...)."""
    return [line for line in user_launches(code) if "_fused" in line]


def add(x, y, out=None, block=64):
    out = torch.empty_like(x) if out is None else out
    wrap_triton(F.add_kernel)[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), BLOCK=block)
    return out


def compiled(fn, *args, **options):
    torch._dynamo.reset()
    return compile_and_code(fn, *args, **options)


@contextlib.contextmanager
def fusion_log():
    """The fusion pass's debug log (.text) while compiling without compile caches (so the pass runs)."""
    handler, logger = _Records(), logging.getLogger(FUSION_LOG)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        with torch._inductor.config.patch(fx_graph_cache=False), \
                torch._functorch.config.patch(enable_autograd_cache=False):
            yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def compiled_with_log(fn, *args, **options):
    """fn compiled and run, with its generated code and the fusion pass's debug log."""
    with fusion_log() as log:
        out, code = compiled(fn, *args, **options)
    return out, code, log.text


# Results equal eager's bit for bit on CPU (fused code in the interpreter, unfused code in
# inductor's C++, both rounding each op as eager does). On a GPU triton contracts a * b + c
# into an FMA in inductor's kernels too, so a prologue such as x * 0.5 + 0.25 may differ in
# the last bit from eager's there.
EXACT_ON_CPU = {} if ON_GPU else {"rtol": 0, "atol": 0}


@pytest.fixture
def data():
    torch.manual_seed(0)
    return [torch.randn(16, 32, device=DEVICE) for _ in range(3)] + [torch.randn(32, device=DEVICE)]


# --- epilogues ----------------------------------------------------------------------------

def test_an_nary_epilogue_with_a_broadcast_operand_becomes_part_of_the_launch(data):
    x, y, r, b = data

    def f(x, y, r, b):
        return torch.relu(add(x, y) * 2 + b) - r

    out, code = compiled(f, x, y, r, b)
    torch.testing.assert_close(out, f(x, y, r, b), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and len(user_launches(code)) == 1
    assert pointwise_kernels(code) == []
    assert len(allocations(code)) == 1  # the result itself: no intermediate


def test_the_fusion_pass_shows_in_the_compilers_own_timers(data):
    """Where the first compile's time goes is read from torch's timers (compile_times(),
    TORCH_TRACE): the package's planning is one of their phases, beside inductor's."""
    from torch._dynamo.utils import compilation_time_metrics

    x, y, r, b = data
    # torch._dynamo.reset() (which compiled() calls) clears these timers: drop ours first so
    # that what is there afterwards can only come from this compile.
    compilation_time_metrics.pop("torch_triton_hop.fusion_planning", None)
    with fusion_log():  # compile caches off: the pass runs
        out, code = compiled(lambda x, y: add(x, y) * 2, x, y)
    assert len(fused_launches(code)) == 1
    assert compilation_time_metrics.get("torch_triton_hop.fusion_planning")


def test_an_epilogue_that_casts_writes_the_new_dtype_directly(data):
    x, y, _, b = data

    def f(x, y, b):
        return (add(x, y) + b).to(torch.float16)

    out, code = compiled(f, x, y, b)
    assert out.dtype == torch.float16
    torch.testing.assert_close(out, f(x, y, b), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []
    assert [line for line in allocations(code) if "float16" in line] == allocations(code)


def test_gelu_epilogue_and_a_scale_prologue_in_one_launch(data):
    x, y, _, b = data

    def f(x, y, b):
        return torch.nn.functional.gelu(add(x * 0.5 + 0.25, y) + b)

    out, code = compiled(f, x, y, b)
    torch.testing.assert_close(out, f(x, y, b))
    assert len(fused_launches(code)) == 1
    # GELU's erf fuses only where inductor writes Triton (a GPU): the interpreter has no
    # libdevice, and its erf is not the one of inductor's C++ code. The prologue fuses on both.
    assert (pointwise_kernels(code) == []) == ON_GPU


def test_every_store_gets_the_epilogue_and_the_output_dtype_read_from_the_pointer_is_the_original():
    x = torch.randn(6, 40, device=DEVICE)

    def f(x):
        out = torch.empty_like(x)
        wrap_triton(F.rows_kernel)[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=16)
        return (out + 1).to(torch.float16)

    out, code = compiled(f, x)
    torch.testing.assert_close(out, f(x), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []


def test_autotuned_heuristics_kernel_keeps_its_configs_when_fused():
    x, y = torch.randn(100, device=DEVICE), torch.randn(100, device=DEVICE)

    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(F.add_autotuned)[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, out, x.numel())
        return torch.relu(out) * y - 0.5

    out, code, log = compiled_with_log(f, x, y)
    torch.testing.assert_close(out, f(x, y), **EXACT_ON_CPU)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []
    # The fused kernel (its key from the fusion log, on either device) is autotuned over the same configs.
    fused_key = re.search(r"Fused kernel (torch_triton_hop\.fused:add_autotuned_fused@\w+)", log)
    assert fused_key, log
    fused = torch_triton_hop.kernel_side_table.get_kernel(fused_key.group(1))
    assert [c.kwargs for c in fused.configs] == [{"BLOCK": 16}, {"BLOCK": 32}]
    assert [c.num_warps for c in fused.configs] == [2, 4]
    if not ON_GPU:  # the interpreter's launch names the fused kernel by that key
        assert fused_key.group(1) in code


def test_an_epilogue_into_a_mutated_input_and_under_dynamic_shapes(data):
    x, y, _, _ = data

    def f(x, y):
        x.copy_(torch.clamp(add(x, y), -1.0, 1.0) * 3)

    expected = x.clone()
    f(expected, y)
    for dynamic in (False, True):
        got = x.clone()
        _, code = compiled(f, got, y, dynamic=dynamic)
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
        # The result still goes back into x by a copy, as without fusion (where inductor
        # computes the epilogue in that same copy kernel); the epilogue itself is fused.
        assert len(fused_launches(code)) == 1 and all("copy" in k for k in pointwise_kernels(code))


def test_exp_and_tanh_compute_what_inductor_computes_without_fusion(monkeypatch):
    """exp in a prologue (exp(0) = 1) and tanh near 0 in an epilogue, where a tanh built from
    other functions loses its relative precision. Fused or not (triton's interpreter has no
    libdevice: on CPU they may stay unfused), the result equals the unfused compiled program's
    bit for bit: inductor's exp and tanh differ from eager's in the last bit, fused code must
    not differ from inductor's."""
    torch.manual_seed(0)
    x, y = torch.randn(16, 256, device=DEVICE) * 1e-3, torch.randn(16, 256, device=DEVICE) * 1e-3

    def f(x, y):
        return torch.tanh(add(torch.exp(x), y) - 1)

    out, code, log = compiled_with_log(f, x, y)
    monkeypatch.setattr(torch_triton_hop.config, "fusion", False)
    unfused, unfused_code = compiled(f, x, y)
    assert fused_launches(unfused_code) == [] and len(user_launches(unfused_code)) == 1
    assert torch.equal(out, unfused)
    torch.testing.assert_close(out, f(x, y), rtol=1e-4, atol=1e-6)
    if ON_GPU:  # libdevice's exp and tanh, as inductor's kernels call them
        assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []
    else:  # fused, or refused for the interpreter's sake (and said so)
        assert fused_launches(code) or "interpreter" in log, log


def test_an_operand_computed_after_the_launch_moves_before_it(data):
    x, y, r, _ = data

    def f(x, y, r):
        out = add(x, y)
        gate = r.flip(-1)  # computed after the launch in program order
        return out * gate

    out, code = compiled(f, x, y, r)
    torch.testing.assert_close(out, f(x, y, r), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and len(user_launches(code)) == 1
    assert allocations(code)[-1:] and len(allocations(code)) == 2  # the gate and the result


def test_a_constant_tensor_the_program_builds_after_the_launch_fuses_into_an_epilogue(data):
    x, y, _, _ = data

    def f(x, y):
        out = add(x, y)
        return out * torch.tensor([1.0, -3.0, 0.5, -0.0] * 8, device=out.device)  # one per column

    out, code = compiled(f, x, y)
    torch.testing.assert_close(out, f(x, y), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []


def test_a_constant_tensor_the_program_builds_fuses_into_a_prologue(data):
    x, y, _, _ = data

    def f(x, y):
        return add(x * torch.tensor([1.0, -3.0, 0.5, -0.0] * 8, device=x.device), y)

    out, code = compiled(f, x, y)
    torch.testing.assert_close(out, f(x, y), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []


def test_an_epilogue_computes_the_operands_nothing_else_uses(data):
    """`(out + r * 0.5) * w.half().float()`: inductor computes the cast and the scaled residual
    inside its kernel for the epilogue; so does the fused kernel."""
    x, y, r, b = data

    def f(x, y, r, b):
        return (add(x, y) + r * 0.5) * b.half().float()

    out, code = compiled(f, x, y, r, b)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []
    torch_triton_hop.config.fusion = False
    try:
        unfused, _ = compiled(f, x, y, r, b)
    finally:
        torch_triton_hop.config.fusion = True
    # Bit for bit: inductor's Triton code (a GPU contracts the adds to FMAs, as eager does not),
    # or eager (inductor's C++ code skips the round trip through fp16: its `x * w.half().float()` is `x * w`).
    assert torch.equal(out, unfused if ON_GPU else f(x, y, r, b))


def test_two_products_added_are_not_fused_on_a_gpu(data, plan_for_a_gpu):
    """`out * w + r * 0.5` on a GPU: LLVM contracts one of the two products into an FMA, and
    which one depends on the kernel around them (inductor's own contracted `out * w`, the user's
    kernel `r * 0.5`): see [Note: Two products added]. On CPU, planned as for a GPU."""
    x, y, r, b = data
    refused(lambda x, y, r, b: add(x, y) * b + r * 0.5, x, y, r, b, reason="of two products")


def test_training_step_with_a_fused_epilogue_matches_eager(data):
    x, y, _, b = data

    class Add(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return add(x, y)

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    def f(x, y, b):
        return (torch.relu(Add.apply(x, y) + b) * 2).sum()

    leaves = [t.clone().requires_grad_() for t in (x, y, b)]
    f(*leaves).backward()
    compiled_leaves = [t.clone().requires_grad_() for t in (x, y, b)]

    def step(*leaves):
        torch.compile(f, fullgraph=True)(*leaves).backward()

    torch._dynamo.reset()
    with fusion_log() as log:
        _, codes = run_and_get_code(step, *compiled_leaves)
    code, log = "\n".join(codes), log.text
    for got, want in zip(compiled_leaves, leaves):
        torch.testing.assert_close(got.grad, want.grad)
    # The forward graph's relu(out + b) went into the launch (the backward has no user kernel).
    assert len(fused_launches(code)) == 1 and len(user_launches(code)) == 1, code
    assert re.search(r"\): fused \{'out_ptr': \[[^]]*'relu'", log), log


def test_ops_with_keyword_only_arguments_fuse(data, monkeypatch):
    """addcmul's `value` and div's `rounding_mode` are keyword-only: inductor's lowerings take
    them as they are, and so does the fused code. (Integer floor division is fused on a GPU
    only: the interpreter does not divide as inductor's C++ code does.)"""
    x, y, r, _ = data
    idx = torch.arange(-40, 40, device=DEVICE, dtype=torch.int32)

    def f(x, y, r, idx):
        return torch.addcmul(add(x, y), r, y, value=0.5), add(idx // 3, idx)

    out, code, log = compiled_with_log(f, x, y, r, idx)
    monkeypatch.setattr(torch_triton_hop.config, "fusion", False)
    unfused, _ = compiled(f, x, y, r, idx)
    for got, want in zip(out, unfused):
        assert torch.equal(got, want)
    assert torch.equal(out[1], f(x, y, r, idx)[1])
    # torch 2.11's inductor decomposes addcmul on a GPU: the epilogue holds its multiplies and add
    assert re.search(r"\): fused \{'out_ptr': \[('addcmul'|'mul', 'mul_1', 'add')\]", log), log
    assert ("'x_ptr': ['div']" in log) == ON_GPU, log


def test_a_launch_that_only_reads_graph_inputs_does_not_stop_an_epilogue_past_it(data):
    """Between the first launch and its epilogue stands a second launch (already in place) that
    reads graph inputs y and x and writes a fresh buffer: the epilogue's read of graph input b
    crosses no write to a graph input, so it fuses. (One that writes a graph input does not:
    test_fusion_trust.py::test_graph_inputs_that_share_memory_only_when_the_code_runs.)"""
    x, y, r, b = data

    def f(x, y, r, b):
        first = add(x, r)
        second = add(y, x)
        return first * b, second

    out, code, log = compiled_with_log(f, x, y, r, b)
    torch.testing.assert_close(out, f(x, y, r, b), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == [], log


# --- prologues ----------------------------------------------------------------------------

def test_a_cast_prologue_reads_the_narrow_tensor_inside_the_kernel(data):
    x, y, _, _ = data
    x16 = x.half()

    def f(x16, y):
        return add(x16.float() * 2 + 1, y)

    out, code = compiled(f, x16, y)
    torch.testing.assert_close(out, f(x16, y), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []


def rows(x):
    out = torch.empty(x.shape, device=x.device)
    wrap_triton(F.rows_kernel)[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=16)
    return out


def test_a_prologue_behind_a_view_whose_size_the_graph_cannot_rebuild_is_not_fused():
    """`hv = h.view(-1)` with `hv.shape[0]` read, where h's rows come from .item() (an unbacked
    size): fused, the view would go and its size query be rebuilt from the graph's inputs, which
    cannot be done. The prologue is refused and the compile goes on (a slip of the eighteenth
    session made it an InductorError)."""
    def f(x, y, count):
        n = count.item()
        torch._check(n >= 1)
        torch._check(n <= x.shape[0])
        hv = (x[:n] * 2.0).view(-1)
        numel = hv.shape[0]
        out = torch.empty_like(hv)
        wrap_triton(F.add_kernel)[(triton.cdiv(numel, 16),)](hv, y[:numel], out, numel, BLOCK=16)
        return out

    x, y = torch.randn(16, 8, device=DEVICE), torch.randn(128, device=DEVICE)
    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        refused(f, x, y, torch.tensor(5, device=DEVICE), reason="is not an input of the graph")


def test_a_prologue_behind_a_view_whose_size_is_a_power_of_a_size_is_not_fused():
    """A square input under dynamic shapes: `hv.shape[0]` is s**2, which the graph's size
    arithmetic (products, sums, floor divisions) does not rebuild; the compile goes on unfused
    (without the refusal it was an InductorError)."""
    def f(x, y):
        hv = (x * 2.0).view(-1)
        out = torch.empty_like(hv)
        wrap_triton(F.add_kernel)[(triton.cdiv(hv.shape[0], 16),)](hv, y[:hv.shape[0]], out, hv.shape[0], BLOCK=16)
        return out

    x, y = torch.randn(9, 9, device=DEVICE), torch.randn(128, device=DEVICE)
    with torch._dynamo.config.patch(assume_static_by_default=False):
        refused(f, x, y, reason="is not a product, sum or floor division of inputs")


def test_a_prologue_loaded_in_a_loop_is_fused_only_when_it_reads_no_more_bytes_or_each_element_once():
    x = torch.randn(6, 40, device=DEVICE)

    def widened(x16):  # fp16 loads in place of fp32 ones: fewer bytes, fused
        return rows(x16.float() * 0.5 - 0.25)

    def narrowed(x):  # fp32 loads in place of fp16 ones, each element loaded once (proven): fused
        return rows(x.half())

    def narrowed_reread(x):  # the same into a kernel that loads each element twice: not fused
        out = torch.empty(x.shape, device=x.device)
        wrap_triton(F.mirror_kernel)[(x.shape[0],)](x.half(), out, x.shape[1], BLOCK=16)
        return out

    for fn, arg in ((widened, x.half()), (narrowed, x)):
        out, code = compiled(fn, arg)
        torch.testing.assert_close(out, fn(arg), rtol=0, atol=0)
        assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []
    code = refused(narrowed_reread, x, reason="would load 4 bytes per element instead of 2, in a loop that may re-read "
                   "them (the kernel loads 240 elements of x_ptr more than once")
    assert len(pointwise_kernels(code)) == 1


@pytest.mark.parametrize("kernel", ["row_sum_kernel", "row_sum_padded_kernel"])
def test_the_masked_off_lanes_of_a_fused_load_hold_what_the_kernel_loads_there(kernel):
    """Rows of 40 in blocks of 64: each program sums 24 masked-off lanes, which the kernel's load
    gives as 0 (no other=) or as its other= (1.0). The fused load gives them the same, not the
    prologue of them (0.25 and 0.75 here)."""
    x = torch.randn(6, 40, device=DEVICE)

    def f(x):
        out = torch.empty(x.shape[0], device=x.device)
        wrap_triton(getattr(F, kernel))[(x.shape[0],)](x * 0.5 + 0.25, out, x.shape[1], BLOCK=64)
        return out

    out, code = compiled(f, x)
    torch.testing.assert_close(out, f(x), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []


def test_no_prologue_goes_into_a_matmul_main_loop():
    """Measured on an H200: a dequantising prologue in a tiled matmul's main loop made it 1.36x
    slower than the separate pass it saves."""
    a, b = torch.randn(32, 16, device=DEVICE), torch.randn(16, 32, device=DEVICE)

    def scaled_matmul(a, b):
        a = a * 0.5 + 0.25
        c = torch.empty(a.shape[0], b.shape[1], device=a.device)
        wrap_triton(F.matmul_kernel)[(2, 2)](a, b, c, 32, 32, 16, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                            c.stride(0), c.stride(1), BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
        return c

    refused(scaled_matmul, a, b, reason="calls tl.dot")


# --- views that only reshape -------------------------------------------------------------
# Kernels work on 2-D rows of activations shaped (batch, seq, hidden): Liger's ops launch on
# X.view(-1, dim) and return Y.view(*shape). Such views keep every element's offset.

def rows_3d(x):
    """A row kernel on a (batch, seq, hidden) tensor, launched on its 2-D view, as Liger does."""
    shape = x.shape
    x2 = x.view(-1, shape[-1])
    out = torch.empty(x2.shape, device=x.device)
    wrap_triton(F.rows_kernel)[(x2.shape[0],)](x2, out, x2.shape[1], x2.stride(0), out.stride(0), BLOCK=16)
    return out.view(*shape)


@pytest.mark.parametrize("dynamic", ["static", "batch_and_sequence", "every_size"])
def test_pointwise_code_beyond_a_reshaping_view_is_fused(dynamic):
    """Float operands with static shapes (the kernel provably stores every element); with
    symbolic sizes there is no such proof and a float operand would not fuse (its NaN would fix
    the result where a kernel stores nothing), so r and b are integers there."""
    def operands(*shape):
        if dynamic == "static":
            return torch.randn(*shape, device=DEVICE), torch.randn(shape[-1], device=DEVICE)
        return (torch.randint(-9, 9, shape, device=DEVICE),
                torch.randint(-9, 9, shape[-1:], device=DEVICE, dtype=torch.int32))

    x16, (r, b) = torch.randn(2, 3, 40, device=DEVICE).half(), operands(2, 3, 40)
    if dynamic == "batch_and_sequence":  # as automatic dynamic shapes make them after a new batch / length
        for t in (x16, r):
            torch._dynamo.mark_dynamic(t, 0)
            torch._dynamo.mark_dynamic(t, 1)

    def f(x16, r, b):  # a prologue before the view into the kernel, an epilogue after the view out
        return ((rows_3d(x16.float() * 0.5 + 0.25) + b) * r).to(torch.float16)

    # dynamic=True: the hidden size too is symbolic; the bias's index arithmetic takes it as an argument
    torch._dynamo.reset()
    fn = torch.compile(f, fullgraph=True, dynamic=dynamic == "every_size")
    out, codes = run_and_get_code(fn, x16, r, b)
    code = "\n".join(codes)
    assert out.shape == (2, 3, 40) and out.dtype == torch.float16
    torch.testing.assert_close(out, f(x16, r, b), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []
    assert len(allocations(code)) == 1  # the result itself
    hidden = 24 if dynamic == "every_size" else 40
    other = (torch.randn(3, 5, hidden, device=DEVICE).half(), *operands(3, 5, hidden))
    torch.testing.assert_close(fn(*other), f(*other), rtol=0, atol=0)  # no size baked into the fused code


def test_a_broadcast_operand_of_a_transposed_prologue_of_symbolic_size_is_not_fused():
    """`x.t() + c` keeps x's transposed layout; a broadcast operand's index in it needs the
    layout's strides, which are symbolic under dynamic=True: refused, with the reason, and
    without the fusion pass failing (the fixture would report that)."""
    x, c, y = torch.randn(8, 12, device=DEVICE), torch.randn(8, device=DEVICE), torch.randn(12, 8, device=DEVICE)

    def f(x, c, y):
        return add(x.t() + c, y)

    out, code, log = compiled_with_log(f, x, c, y, dynamic=True)
    torch.testing.assert_close(out, f(x, c, y), **EXACT_ON_CPU)
    assert fused_launches(code) == [], code
    assert "a stride of the fused tensor is symbolic" in log and "broadcasting operands need it static" in log, log


# A kernel indexes memory, so any view that keeps each element at its memory offset (one dtype,
# storage offset and element count, each dense) may stand between it and the pointwise code:
# a transpose, or a channels_last activation permuted to NHWC and flattened into rows.

def nhwc_rows(h):
    """A channels_last (N, C, H, W) tensor as the (N*H*W, C) rows of its memory."""
    return h.permute(0, 2, 3, 1).reshape(-1, h.shape[1])


def test_an_epilogue_beyond_a_transpose_is_fused():
    x, b = torch.randn(8, 40, device=DEVICE), torch.randn(8, device=DEVICE)

    def f(x, b):
        return rows(x).t() + b  # column-major (40, 8): the bias runs along the kernel's rows

    out, code = compiled(f, x, b)
    torch.testing.assert_close(out, f(x, b), rtol=0, atol=0)
    assert out.stride() == (1, 40)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []


def test_channels_last_activations_fuse_through_their_nhwc_rows():
    """Prologue: x * scale + shift over channels_last (N, C, H, W), fed to a row kernel as its
    NHWC rows. Epilogue: the rows viewed back as (N, C, H, W), plus a contiguous residual, whose
    elements sit in another order than the kernel's."""
    x = torch.randn(2, 16, 3, 5, device=DEVICE).contiguous(memory_format=torch.channels_last)
    scale, shift, residual = (torch.randn(1, 16, 1, 1, device=DEVICE), torch.randn(1, 16, 1, 1, device=DEVICE),
                              torch.randn(2, 16, 3, 5, device=DEVICE))

    def f(x, scale, shift, residual):
        n, c, h, w = x.shape
        out = rows(nhwc_rows(x * scale + shift))
        return out.view(n, h, w, c).permute(0, 3, 1, 2) + residual

    out, code = compiled(f, x, scale, shift, residual)
    torch.testing.assert_close(out, f(x, scale, shift, residual), **EXACT_ON_CPU)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []


def test_a_copy_to_another_memory_format_fuses_as_a_prologue():
    """`.contiguous(memory_format=...)` is a clone whose memory format sets only its result's
    layout: converting NCHW activations to channels_last for a kernel over their NHWC rows
    fuses, conversion and all."""
    x, scale = torch.randn(2, 16, 3, 5, device=DEVICE), torch.randn(1, 16, 1, 1, device=DEVICE)

    def f(x, scale):
        return rows(nhwc_rows((x * scale).contiguous(memory_format=torch.channels_last)))

    out, code = compiled(f, x, scale)
    torch.testing.assert_close(out, f(x, scale), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []


def test_pointwise_code_seen_through_a_transpose_fuses_into_one_prologue():
    """`((x + b).t() * 2).contiguous()`: the transpose relabels the sum's elements, so the add
    above it, the multiply below it and the copy all run at the kernel's loads, each operand
    read through the transpose (the masked-off lanes of each row read 0, not 2 * b)."""
    x, b = torch.randn(12, 9, device=DEVICE), torch.randn(9, device=DEVICE)

    def f(x, b):
        return rows(((x + b).t() * 2.0).contiguous())

    out, code = compiled(f, x, b)
    torch.testing.assert_close(out, f(x, b), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []


def test_a_value_seen_through_two_views_at_once_is_read_from_memory():
    """`p.t() + p` needs p at two elements per lane: the region stops at the view and reads p
    from the buffer inductor computes it into."""
    x = torch.randn(12, 12, device=DEVICE)

    def f(x):
        p = x * 2.0 + 1.0
        return rows((p.t() + p).contiguous())

    out, code = compiled(f, x)
    torch.testing.assert_close(out, f(x), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and len(pointwise_kernels(code)) == 1


def test_an_operand_read_above_and_below_a_view_stops_the_region_at_the_view():
    """`(x - w).t() + w`: the subtraction needs w at the transposed element, the add at the
    lane's own; one read of w cannot serve both, so the difference is computed by inductor and
    the add fused. (Not a product: on a GPU an operand that is a product is not fused, as
    inductor's kernel may contract it into an FMA.)"""
    x, w = torch.randn(12, 12, device=DEVICE), torch.randn(12, 12, device=DEVICE)

    def f(x, w):
        return rows(((x - w).t() + w).contiguous())

    out, code = compiled(f, x, w)
    torch.testing.assert_close(out, f(x, w), rtol=0, atol=0)
    assert len(fused_launches(code)) == 1 and len(pointwise_kernels(code)) == 1


def test_a_view_of_part_of_a_tensor_is_not_looked_through():
    """A slice of the prologue's result starts elsewhere and leaves elements out: the kernel's
    memory offsets no longer name the result's elements."""
    x = torch.randn(8, 41, device=DEVICE)
    code = refused(lambda x: rows((x * 2.0)[:, 1:]), x, reason="not computed by a pointwise op")
    assert len(pointwise_kernels(code)) == 1


# --- reducing kernels keep their layout ---------------------------------------------------
# See [Note: Keeping the kernel's vector width]: an access of narrower elements would change
# the layout triton gives the kernel's values, and so the order in which its reductions add.

def rms_norm(x, w):
    out = torch.empty_like(x)
    wrap_triton(F.rms_norm_kernel)[(x.shape[0],)](x, w, out, x.shape[1], 1e-6, BLOCK=x.shape[1])
    return out


def reduction_layouts(kernel, args):
    """The layouts of the values `kernel` reduces, compiled for an sm_90 GPU (no GPU needed)."""
    from triton.backends.compiler import Language
    from torch_triton_hop._compat_ttir import _make_backend, generate_ttir_module

    module, info = generate_ttir_module(kernel, args, options={"num_warps": 4})
    stages, metadata = {}, {}
    _make_backend(info["target"]).add_stages(stages, info["options"], Language.TRITON)
    ttgir = str(stages["ttgir"](stages["ttir"](module, metadata), metadata))
    layouts = dict(re.findall(r"^(#\w+) = (.*)$", ttgir, re.M))
    return [layouts[name] for name in re.findall(r'"tt.reduce"\(%\w+\).*?\}\) : \(tensor<\w+, (#\w+)>', ttgir, re.S)]


@pytest.mark.interpreter
def test_a_narrowing_epilogue_leaves_a_reducing_kernel_laid_out_as_before():
    from torch_triton_hop._side_table import kernel_side_table

    x, w, r = torch.randn(4, 1024), torch.randn(1024), torch.randn(4, 1024)

    def f(x, w, r):
        return (rms_norm(x, w) + r).to(torch.float16)

    out, code = compiled(f, x, w, r)
    torch.testing.assert_close(out, f(x, w, r), rtol=0, atol=0)
    (line,) = fused_launches(code)
    fused = kernel_side_table.get_kernel(re.search(r"kernel='([^']+)'", line).group(1))
    args = dict(x_ptr=x, w_ptr=w, n_cols=1024, eps=1e-6, BLOCK=1024)
    original = reduction_layouts(F.rms_norm_kernel, {**args, "out_ptr": x})
    # fp16 stores would move 8 elements per thread where the kernel's fp32 ones move 4.
    assert original and "sizePerThread = [4]" in original[0]
    assert reduction_layouts(fused, {**args, "out_ptr": out, "_tth_out_ptr_0": r}) == original


def test_rms_norm_with_a_residual_add_and_bf16_cast_is_bit_exact():
    """Before the vector width was kept, 258 of 33.5M outputs were 1 ulp off (H200). On CPU the
    result equals eager's too, whether or not the cast is fused (the interpreter rounds fp32 to
    bf16 by truncation, torch to nearest even: a fused cast there must not use the interpreter's)."""
    torch.manual_seed(0)
    rows_, cols = (2048, 4096) if ON_GPU else (16, 1024)
    x, w, r = (torch.randn(rows_, cols, device=DEVICE), torch.randn(cols, device=DEVICE),
               torch.randn(rows_, cols, device=DEVICE))

    def f(x, w, r):
        return (rms_norm(x, w) + r).to(torch.bfloat16)

    out, code, log = compiled_with_log(f, x, w, r)
    assert out.dtype == torch.bfloat16
    assert torch.equal(out, f(x, w, r))
    if ON_GPU:
        assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []
    else:  # fused (then exact, asserted above), or the cast refused for the interpreter's rounding
        assert fused_launches(code) or "torch.bfloat16" in log, log


def test_a_bf16_cast_prologue_is_bit_exact():
    """A kernel that loads bf16: the prologue rounds its fp32 result to bf16 (to nearest even, as
    torch does). Equal to eager on either device, fused or not (see the test above)."""
    torch.manual_seed(0)
    x, y = torch.randn(16, 256, device=DEVICE), torch.randn(16, 256, device=DEVICE).to(torch.bfloat16)

    def f(x, y):
        out = torch.empty(x.shape, device=x.device)
        wrap_triton(F.add_in_fp32_kernel)[(triton.cdiv(x.numel(), 64),)]((x * 0.5 + 0.25).to(torch.bfloat16), y, out,
                                                                          x.numel(), BLOCK=64)
        return out

    out, code, log = compiled_with_log(f, x, y)
    assert torch.equal(out, f(x, y))
    if ON_GPU:
        assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == []
    else:
        assert fused_launches(code) or "torch.bfloat16" in log, log


def test_a_widening_epilogue_is_not_fused_into_a_reducing_kernel():
    x, w = torch.randn(4, 64, device=DEVICE, dtype=torch.float16), torch.randn(64, device=DEVICE, dtype=torch.float16)
    refused(lambda x, w: rms_norm(x, w).float() * 2, x, w,
            reason="would access torch.float32 where the kernel accesses torch.float16")


# --- what is not fused --------------------------------------------------------------------

def refused(fn, *args, reason):
    """fn compiles to eager's result with its pointwise code left alone, for `reason`."""
    handler = _Records()
    logger = logging.getLogger(FUSION_LOG)
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        out, code = compiled(fn, *[a.clone() for a in args])
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    torch.testing.assert_close(out, fn(*[a.clone() for a in args]))
    assert fused_launches(code) == [], code
    assert reason in handler.text, handler.text
    return code


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.text = ""

    def emit(self, record):
        self.text += record.getMessage() + "\n"


def test_an_output_also_used_elsewhere_is_not_fused(data):
    x, y, _, _ = data
    refused(lambda x, y: (o := add(x, y), o * 2), x, y, reason="used elsewhere too")


def test_a_buffer_that_is_not_empty_is_not_fused(data):
    x, y, _, _ = data
    refused(lambda x, y: add(x, y, out=torch.zeros_like(x)) * 2, x, y, reason="not a fresh torch.empty")


@pytest.mark.parametrize("kernel, buffer, reason", [
    ("accumulate", torch.zeros_like, "the kernel also reads it"),
    ("atomic_sum", torch.zeros_like, "['tt.atomic_rmw'], not only tl.store"),
    ("stores_in_helper", torch.empty_like, "out_ptr is used in `_store_helper("),
])
def test_kernels_whose_stores_cannot_be_followed_are_not_fused(kernel, buffer, reason):
    x = torch.randn(64, device=DEVICE)

    def f(x):
        out = buffer(x)
        wrap_triton(getattr(F, kernel))[(4,)](x, out, x.numel(), BLOCK=16)
        return out + 1

    refused(f, x, reason=reason)


def test_fusion_switched_off(data, monkeypatch):
    x, y, _, b = data
    monkeypatch.setattr(torch_triton_hop.config, "fusion", False)
    out, code = compiled(lambda x, y, b: torch.relu(add(x, y) + b), x, y, b)
    assert fused_launches(code) == [] and len(pointwise_kernels(code)) == 1


@pytest.mark.fusion_pass_fails
def test_a_failure_inside_the_fusion_pass_leaves_the_launch_unfused_and_warns(data, monkeypatch, caplog):
    """Fusion is an optimisation: an unexpected error while planning it (here injected into the
    source rewrite) costs the fusion, not the compile, and is reported."""
    import torch_triton_hop._fusion as fusion

    def broken(*args, **kwargs):
        raise ValueError("injected failure")

    monkeypatch.setattr(fusion, "rewrite_kernel_source", broken)
    x, y, _, b = data
    f = lambda x, y, b: torch.relu(add(x, y) + b)  # noqa: E731
    with caplog.at_level(logging.WARNING, logger=FUSION_LOG):
        out, code = compiled(f, x, y, b)
    torch.testing.assert_close(out, f(x, y, b))
    assert fused_launches(code) == [] and len(pointwise_kernels(code)) == 1
    assert "the fusion pass failed" in caplog.text and "injected failure" in caplog.text


# --- the source rewrite -------------------------------------------------------------------

@pytest.mark.parametrize("body, reason", [
    ("tl.store(tl.make_block_ptr(out_ptr, (4,), (1,), (0,), (4,), (0,)), x)", "make_block_ptr"),
    ("tl.store(out_ptr.to(tl.pointer_type(tl.float16)), x)", "out_ptr.to"),
    ("p = out_ptr\n    p = x_ptr\n    tl.store(p, x)", "in some places and other values elsewhere"),
    ("tl.store(out_ptr + tl.arange(0, 4) * out_ptr, x)", "out_ptr"),
    # a swap: its targets are read by its values, so it is not two assignments
    ("p, q = out_ptr, x_ptr\n    p, q = q, p\n    tl.store(p, x)", "p is used in `(p, q)`"),
])
def test_rewrite_refuses_pointer_uses_it_cannot_follow(body, reason):
    source = f"def k(x_ptr, out_ptr):\n    x = tl.load(x_ptr)\n    {body}\n"
    with pytest.raises(NotFusible, match=re.escape(reason)):
        rewrite_kernel_source(source, {"tl": triton.language}, [FusedArgument("out_ptr", "epilogue", "_e", ())], [])


@triton.jit
def _add_unpacked_pointers_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x_ptrs, y_ptrs, out_ptrs = x_ptr + offsets, y_ptr + offsets, out_ptr + offsets
    mask = offsets < n
    tl.store(out_ptrs, tl.load(x_ptrs, mask=mask) + tl.load(y_ptrs, mask=mask), mask=mask)


@triton.jit
def _add_rows_unpacked_pointers_kernel(x_ptr, y_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """One program per row, its pointers advanced together."""
    row = tl.program_id(0) * n_cols
    x_ptrs, y_ptrs, out_ptrs = x_ptr + row + tl.arange(0, BLOCK), y_ptr + row + tl.arange(0, BLOCK), \
        out_ptr + row + tl.arange(0, BLOCK)
    for start in range(0, n_cols, BLOCK):
        mask = start + tl.arange(0, BLOCK) < n_cols
        tl.store(out_ptrs, tl.load(x_ptrs, mask=mask) + tl.load(y_ptrs, mask=mask), mask=mask)
        x_ptrs, y_ptrs, out_ptrs = x_ptrs + BLOCK, y_ptrs + BLOCK, out_ptrs + BLOCK


def _launch_flat(x, y, out):
    wrap_triton(_add_unpacked_pointers_kernel)[(triton.cdiv(x.numel(), 128),)](x, y, out, x.numel(), BLOCK=128)


def _launch_rows(x, y, out):
    wrap_triton(_add_rows_unpacked_pointers_kernel)[(x.shape[0],)](x, y, out, x.shape[1], BLOCK=64)


@pytest.mark.parametrize("launch", [_launch_flat, _launch_rows], ids=["offsets", "advanced_in_a_loop"])
def test_pointers_assigned_together_fuse(launch):
    """`a, b = x_ptr + o, y_ptr + o` (and `a, b = a + k, b + k` in a loop) is followed as two
    assignments: the prologue and the epilogue fuse, with the unfused program's result."""
    x, y = torch.randn(10, 100, device=DEVICE), torch.randn(10, 100, device=DEVICE)

    def f(x, y):
        out = torch.empty_like(x)
        launch(x * 2, y, out)
        return torch.relu(out) - 1

    out, code, log = compiled_with_log(f, x, y)
    assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == [], log
    torch.testing.assert_close(out, f(x, y), **EXACT_ON_CPU)


def test_rewritten_source_shadows_each_pointer_step():
    source = textwrap.dedent("""
        def k(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
            row = out_ptr + tl.program_id(0) * stride
            for i in range(2):
                tl.store(row + tl.arange(0, BLOCK), tl.load(x_ptr + i))
                row += BLOCK
    """)
    result = rewrite_kernel_source(source, {"tl": triton.language},
                                   [FusedArgument("out_ptr", "epilogue", "_e", ("_b",))], ["_b"])
    assert result.source == textwrap.dedent("""\
        def k(x_ptr, out_ptr, stride, BLOCK: tl.constexpr, _b):
            row = out_ptr + tl.program_id(0) * stride
            _tth_off_row = _tth_zero() + tl.program_id(0) * stride
            for i in range(2):
                tl.store(row + tl.arange(0, BLOCK), _e(tl.load(x_ptr + i), _tth_off_row + tl.arange(0, BLOCK), None, _b))
                row += BLOCK
                _tth_off_row = (_tth_off_row + BLOCK).to(_tth_off_row.dtype)
    """)


# --- a compiled program loaded in a new process -------------------------------------------

@pytest.mark.interpreter
def test_a_cached_fused_program_runs_in_a_new_process(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent("""
        import sys, torch, triton
        sys.path.insert(0, sys.argv[1])
        from torch._dynamo.utils import counters
        from torch._inductor.utils import run_and_get_code
        from torch_triton_hop import wrap_triton
        import fusion_kernels as F

        def f(x, y):
            out = torch.empty_like(x)
            wrap_triton(F.add_kernel)[(1,)](x, y, out, x.numel(), BLOCK=64)
            return torch.relu(out) * 3

        x, y = torch.randn(64), torch.randn(64)
        got, code = run_and_get_code(torch.compile(f, fullgraph=True), x, y)
        assert torch.equal(got, torch.relu(x + y) * 3)
        print("fused", sum(c.count("_tth_launch(kernel='torch_triton_hop.fused:add_kernel_fused@") for c in code))
        print("hits", counters["inductor"]["fxgraph_cache_hit"])
    """))
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache"), "TRITON_INTERPRET": "1"}
    tests = os.path.dirname(__file__)
    runs = [subprocess.run([sys.executable, str(script), tests], env=env, capture_output=True, text=True)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-3000:]
    assert [run.stdout.split()[-1] for run in runs] == ["0", "1"]
    # Both runs launch the fused kernel: compiled, then loaded from the cache.
    assert [run.stdout.split()[-3] for run in runs] == ["1", "1"], [run.stdout for run in runs]
    _ = counters


def test_rewrite_keeps_the_vector_width_from_the_argument_as_passed():
    source = textwrap.dedent("""
        def k(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
            out_ptr += tl.program_id(0) * stride
            tl.store(tl.max_contiguous(tl.multiple_of(out_ptr + tl.arange(0, BLOCK), 16), 16), tl.load(x_ptr))
    """)
    result = rewrite_kernel_source(source, {"tl": triton.language},
                                   [FusedArgument("out_ptr", "epilogue", "_e", (), vector_width=4)], [])
    offset = "_tth_limit_vector(tl.max_contiguous(_tth_off_out_ptr + tl.arange(0, BLOCK), 16), 4)"
    assert result.source == textwrap.dedent(f"""\
        def k(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
            _tth_off_out_ptr = _tth_zero()
            _tth_base_out_ptr = out_ptr
            out_ptr += tl.program_id(0) * stride
            _tth_off_out_ptr = (_tth_off_out_ptr + tl.program_id(0) * stride).to(_tth_off_out_ptr.dtype)
            tl.store(_tth_base_out_ptr + {offset}, _e(tl.load(x_ptr), {offset}, None))
    """)


def test_rewrite_follows_an_argument_advanced_in_place():
    source = textwrap.dedent("""
        def k(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
            "Docstring stays first."
            out_ptr += tl.program_id(0) * stride
            tl.store(out_ptr + tl.arange(0, BLOCK), tl.load(x_ptr))
    """)
    result = rewrite_kernel_source(source, {"tl": triton.language},
                                   [FusedArgument("out_ptr", "epilogue", "_e", ())], [])
    assert result.source == textwrap.dedent("""\
        def k(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
            \"\"\"Docstring stays first.\"\"\"
            _tth_off_out_ptr = _tth_zero()
            out_ptr += tl.program_id(0) * stride
            _tth_off_out_ptr = (_tth_off_out_ptr + tl.program_id(0) * stride).to(_tth_off_out_ptr.dtype)
            tl.store(out_ptr + tl.arange(0, BLOCK), _e(tl.load(x_ptr), _tth_off_out_ptr + tl.arange(0, BLOCK), None))
    """)


@triton.jit
def _mul_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * tl.load(y_ptr + offsets, mask=mask), mask=mask)


def _mul(x, y):
    out = torch.empty_like(y)  # not of x: the partitioner saves what empty_like reads
    wrap_triton(_mul_kernel)[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)
    return out


class _Square(torch.autograd.Function):
    """x * x by a kernel, saving x for the backward's kernel, as Liger's RMSNorm saves X."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _mul(x, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _mul(x, grad * 2)


def _saved_for_backward(step, a):
    """The names of the values the compiled step's forward saves for its backward."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.partitioners import min_cut_rematerialization_partition
    from torch._inductor import compile_fx  # noqa: F401  the package's hint is registered once inductor is loaded

    saved = []

    def backward_compiler(gm, example_inputs):
        saved.extend(n.name for n in gm.graph.find_nodes(op="placeholder") if not n.name.startswith("tangents"))
        return make_boxed_func(gm)

    backend = aot_autograd(fw_compiler=lambda gm, _: make_boxed_func(gm), bw_compiler=backward_compiler,
                           partition_fn=min_cut_rematerialization_partition)
    torch._dynamo.reset()
    torch.compile(step, backend=backend, fullgraph=True)(a).backward()
    return saved


class _TimesSaved(torch.autograd.Function):
    """A kernel's copy of x, whose backward multiplies the gradient by x before its kernel."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _mul(x, torch.ones_like(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _mul(grad * x, torch.ones_like(x))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_launch_input_narrower_than_fp32_is_saved_as_with_fusion_off(dtype, monkeypatch):
    """An fp16 / bf16 pointwise value a launch reads is saved, not recomputed: recomputed, the
    backward's inductor kernel computed grad * (x + w) without rounding x + w to the dtype, so
    the gradients differed from fusion off's (fusion hunt 8). See [Note: The partitioner and prologue fusion]."""
    def step(x, w):
        return _TimesSaved.apply(_TimesSaved.apply(x + w) * w).sum()

    generator = torch.Generator().manual_seed(0)
    x, w = ((torch.rand(64, generator=generator) * 8 - 4).to(DEVICE, dtype) for _ in range(2))
    monkeypatch.setattr(torch_triton_hop.config, "fusion", True)
    assert "add" in _saved_for_backward(lambda a: step(a, w), x.clone().requires_grad_(True))
    gradients = {}
    for fusion in (False, True):
        monkeypatch.setattr(torch_triton_hop.config, "fusion", fusion)
        torch._dynamo.reset()
        a, b = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
        torch.compile(step, fullgraph=True)(a, b).backward()
        gradients[fusion] = (a.grad, b.grad)
    for off, on in zip(gradients[False], gradients[True]):
        assert torch.equal(off, on)


@pytest.mark.parametrize("fusion", [True, False])
def test_with_fusion_the_partitioner_recomputes_a_backward_launch_input_instead_of_saving_it(fusion, monkeypatch):
    """A pointwise value a backward launch reads (x = a * 2 + 1) is recomputed in the backward,
    as for inductor's own kernels, instead of saved: the backward keeps the forward's input.
    See [Note: The partitioner and prologue fusion]."""
    def step(a):
        return _Square.apply(a * 2 + 1).sum()

    a = torch.randn(100, device=DEVICE, requires_grad=True)
    monkeypatch.setattr(torch_triton_hop.config, "fusion", fusion)
    assert _saved_for_backward(step, a) == (["primals_1"] if fusion else ["add"])
    expected, = torch.autograd.grad(step(a), a)
    got, = torch.autograd.grad(compiled(step, a)[0], a)  # inductor
    assert torch.equal(got, expected)


# --- inductor's numerics settings ----------------------------------------------------------

def _fused_and_unfused(f, *args, settings, monkeypatch):
    """f compiled under the inductor `settings`, with fusion on (its code and log) and off."""
    with torch._inductor.config.patch(settings):
        out, code, log = compiled_with_log(f, *args)
        monkeypatch.setattr(torch_triton_hop.config, "fusion", False)
        unfused, unfused_code = compiled(f, *args)
    monkeypatch.setattr(torch_triton_hop.config, "fusion", True)
    assert fused_launches(unfused_code) == [] and len(user_launches(unfused_code)) == 1
    return out, code, log, unfused


def test_under_emulate_precision_casts_fused_bf16_arithmetic_rounds_each_op_as_eager(monkeypatch):
    """emulate_precision_casts makes inductor round each bf16 op's result to bf16, as eager
    does, where it otherwise keeps fp32 between ops: a fused prologue rounds where inductor's
    kernel would (it lowers each node as inductor does). See [Note: Inductor's numerics settings]."""
    torch.manual_seed(0)
    x, y = (torch.randn(64, 256, device=DEVICE).to(torch.bfloat16) for _ in range(2))

    def f(x, y):
        out = torch.empty(x.shape, device=x.device)
        wrap_triton(F.add_in_fp32_kernel)[(triton.cdiv(x.numel(), 64),)](x * y * 3, y, out, x.numel(), BLOCK=64)
        return out

    out, code, log, unfused = _fused_and_unfused(f, x, y, settings={"emulate_precision_casts": True},
                                                 monkeypatch=monkeypatch)
    assert torch.equal(out, unfused)
    if ON_GPU:
        assert torch.equal(out, f(x, y))  # the setting's point (inductor's C++ code before torch 2.13 misses it)
        assert len(fused_launches(code)) == 1 and pointwise_kernels(code) == [], log
    else:  # bf16 arithmetic is fused on a GPU only
        assert fused_launches(code) == [] and "computes in torch.bfloat16" in log, log


def _subnormal_exp_data():
    """exp of these is subnormal in fp32 (exp(-95) ~ 5.5e-42)."""
    torch.manual_seed(0)
    return torch.rand(64, 256, device=DEVICE) * -10 - 88, torch.zeros(64, 256, device=DEVICE)


@pytest.mark.parametrize("setting, value, epilogue, data", [
    # an add of a product, which inductor's kernels do not contract into an FMA under the setting
    ("emulate_precision_casts", True, lambda out, w: out * w + 0.1,
     lambda: (torch.randn(64, 256, device=DEVICE), torch.randn(64, 256, device=DEVICE))),
    # the same with the product rounded to bf16 between, as the setting rounds it: LLVM still
    # contracts the pair into one bf16 FMA
    ("emulate_precision_casts", True, lambda out, w: (out.bfloat16() * w + 1).float(),
     lambda: (torch.randn(64, 256, device=DEVICE), torch.randn(64, 256, device=DEVICE).bfloat16())),
    # libdevice's exp of a subnormal result, which inductor's kernels do not flush under the setting
    ("eager_numerics.disable_ftz", True, lambda out, w: torch.exp(out) + w, _subnormal_exp_data),
    # fp16 arithmetic, which inductor's kernels compute in fp16 under the setting
    ("triton.codegen_upcast_to_fp32", False, lambda out, w: (out.half() * 3 + w - 1).float(),
     lambda: (torch.randn(64, 256, device=DEVICE), torch.randn(64, 256, device=DEVICE).half())),
], ids=["emulate_precision_casts", "emulate_precision_casts_bf16", "disable_ftz", "no_upcast_to_fp32"])
def test_under_inductors_numerics_settings_fused_code_computes_what_unfused_code_does(setting, value, epilogue, data,
                                                                                         monkeypatch):
    """Under these settings inductor compiles its own kernels without FMA contraction, without
    flush to zero, or computing fp16 in fp16, and the user's kernel (fused or not) with
    triton's defaults: an epilogue whose ops could round otherwise in the user's kernel stays
    unfused, the result bit for bit the unfused program's. w is a graph input of the dtype the
    epilogue reads, so that nothing but the setting leaves it unfused. See [Note: Inductor's
    numerics settings]."""
    x, w = data()

    def f(x, w):
        return epilogue(add(x, torch.zeros_like(x)), w)

    out, code, log, unfused = _fused_and_unfused(f, x, w, settings={setting: value}, monkeypatch=monkeypatch)
    assert torch.equal(out, unfused)
    if ON_GPU:  # refused, saying why
        assert setting in log, log


def _add_launched_with(x, y, **options):
    out = torch.empty_like(x)
    wrap_triton(F.add_kernel)[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64, **options)
    return out


@pytest.mark.parametrize("options, environment, epilogue, reason", [
    # inductor asks its own kernels to contract `out * w + 0.1` into an FMA; these launches do not
    ({"enable_fp_fusion": False}, {}, lambda out, w: out * w + 0.1, "the launch's enable_fp_fusion=False"),
    ({}, {"TRITON_DEFAULT_FP_FUSION": "0"}, lambda out, w: out * w + 0.1, "TRITON_DEFAULT_FP_FUSION=0"),
    # libdevice's exp of a subnormal result, flushed in inductor's kernels, not in this launch's
    ({"enable_reflect_ftz": False}, {}, lambda out, w: torch.exp(out) + w, "the launch's enable_reflect_ftz=False"),
], ids=["enable_fp_fusion", "TRITON_DEFAULT_FP_FUSION", "enable_reflect_ftz"])
def test_a_launch_compiled_with_other_numerics_options_than_inductors_keeps_such_ops_unfused(
        options, environment, epilogue, reason, plan_for_a_gpu, monkeypatch):
    """The fused kernel keeps the launch's compile options (and triton's defaults where it gives
    none), which may differ from those inductor compiles its own kernels with: ops that could
    round otherwise under them stay unfused, as under inductor's numerics settings. The same
    program launched with triton's defaults fuses. See [Note: Inductor's numerics settings]."""
    x, w = _subnormal_exp_data()

    def f(x, w):
        return epilogue(_add_launched_with(x, torch.zeros_like(x), **options), w)

    if "ftz" not in reason:  # the default launch fuses (exp's libdevice call does not run in the interpreter)
        _, code, log = compiled_with_log(lambda x, w: epilogue(_add_launched_with(x, torch.zeros_like(x)), w), x, w)
        assert len(fused_launches(code)) == 1, log
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    out, code, log = compiled_with_log(f, x, w)
    assert fused_launches(code) == [] and reason in log, log
    torch.testing.assert_close(out, f(x, w))
