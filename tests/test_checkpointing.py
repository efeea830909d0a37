"""Activation checkpointing around wrapped kernels: `torch.utils.checkpoint.checkpoint(...,
use_reentrant=False)` and selective checkpointing (`create_selective_checkpoint_contexts`),
eager and under torch.compile (default backend, inductor).

The checkpointed block launches wrapped kernels in an autograd.Function (SiLU: forward and
backward kernels) and two IN-PLACE kernels on intermediates:

- `add_bias_in_place` adds the bias into the output of `x @ w` (an autograd.Function that
  marks it dirty), and
- `double_in_place` doubles `exp(c)`, an intermediate that needs no gradient (a bare launch).

Replaying either kernel on data it already updated (the cached output of `mm` or `exp`, or a
buffer the compiled forward reused) would use `x @ w + 2 b` or `4 exp(c)`, and change the
result and every gradient. Each test compares the result and the gradients with the
un-checkpointed block's, which equal plain torch's (test_the_blocks_equal_plain_torch).

Launches are counted eagerly (host-side counters next to each launch) and, compiled, in
inductor's generated code: checkpointing must recompute the kernels, not skip or replay them.
"""

import collections
import functools
import re

import pytest
import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

from torch_triton_hop import triton_kernel_wrapper_functional, triton_kernel_wrapper_mutation, wrap_triton

pytestmark = pytest.mark.interpreter

BLOCK = 32


def kernel_launches(code, name):
    """Lines of inductor's code (interpreter) that launch kernel `name`, or the kernel the
    package's prologue/epilogue fusion built from it (`torch_triton_hop.fused:<name>_fused`)."""
    return re.findall(rf"^\s*_tth_launch\(kernel='[\w.]+:{name}(?:_fused)?@", code, re.M)


def forward_and_backward_code(codes):
    """The generated code of the compiled forward and of the compiled backward."""
    kinds = {kind: [c for c in codes if re.match(rf"# AOT ID: \['\d+_{kind}'\]", c)]
             for kind in ("forward", "backward")}
    assert all(len(found) == 1 for found in kinds.values()), codes
    return kinds["forward"][0], kinds["backward"][0]


@wrap_triton
@triton.jit
def silu_forward(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * tl.sigmoid(x), mask=mask)


@wrap_triton
@triton.jit
def silu_backward(x_ptr, dy_ptr, dx_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    dy = tl.load(dy_ptr + offs, mask=mask)
    s = tl.sigmoid(x)
    tl.store(dx_ptr + offs, dy * s * (1.0 + x * (1.0 - s)), mask=mask)


@wrap_triton
@triton.jit
def add_bias_in_place(x_ptr, bias_ptr, n, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x + tl.load(bias_ptr + offs % n_cols, mask=mask), mask=mask)


@wrap_triton
@triton.jit
def double_in_place(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def grid(meta):
    return (triton.cdiv(meta["n"], meta["BLOCK"]),)


COUNTS = None  # a Counter of eager launches while a test counts (never under torch.compile)


def counted(name):
    if COUNTS is not None:
        COUNTS[name] += 1


class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        out = torch.empty_like(x)
        silu_forward[grid](x, out, x.numel(), BLOCK=BLOCK)
        counted("silu_forward")
        return out

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        dx = torch.empty_like(x)
        silu_backward[grid](x, dy.contiguous(), dx, x.numel(), BLOCK=BLOCK)
        counted("silu_backward")
        return dx


class AddBiasInPlace(torch.autograd.Function):
    """x += bias (broadcast over rows) by a kernel that writes x."""

    @staticmethod
    def forward(ctx, x, bias):
        add_bias_in_place[grid](x, bias, x.numel(), x.shape[-1], BLOCK=BLOCK)
        counted("add_bias_in_place")
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, dy):
        return dy, dy.sum(0)


def in_place_block(x, w, b, c):
    h = AddBiasInPlace.apply(x @ w, b)  # writes the output of mm
    s = torch.exp(c)
    double_in_place[grid](s, s.numel(), BLOCK=BLOCK)  # writes the output of exp (needs no grad)
    counted("double_in_place")
    return SiLU.apply(h * s)


def out_of_place_block(x, w, b, c):
    return SiLU.apply((x @ w + b) * (2.0 * torch.exp(c)))


def reference_block(x, w, b, c):
    return F.silu((x @ w + b) * (2.0 * torch.exp(c)))


BLOCKS = {"in_place": in_place_block, "out_of_place": out_of_place_block}


def inputs():
    g = torch.Generator().manual_seed(0)
    x, w, b = (torch.randn(*shape, generator=g) for shape in ((4, 8), (8, 8), (8,)))
    c = 0.5 * torch.randn(4, 8, generator=g)
    weights = torch.randn(4, 8, generator=g)  # the loss weighs every output differently
    return [t.requires_grad_() for t in (x, w, b)] + [c], weights


def run(block, compiled=False, checkpointed=False, **checkpoint_kwargs):
    """The block's output and the gradients of x, w and b; the block run through
    `checkpoint(..., use_reentrant=False, **checkpoint_kwargs)` if `checkpointed`."""
    (x, w, b, c), weights = inputs()

    def loss(x, w, b, c):
        if checkpointed:
            out = checkpoint(block, x, w, b, c, use_reentrant=False, **checkpoint_kwargs)
        else:
            out = block(x, w, b, c)
        return out, (out * weights).sum()

    if compiled:
        torch._dynamo.reset()
        loss = torch.compile(loss, fullgraph=True)
    out, total = loss(x, w, b, c)
    total.backward()
    return out.detach(), x.grad, w.grad, b.grad


@pytest.fixture
def counts():
    global COUNTS
    COUNTS = collections.Counter()
    yield COUNTS
    COUNTS = None


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture(scope="module")
def expected():
    """The un-checkpointed block's output and gradients, per block."""
    return {name: run(block) for name, block in BLOCKS.items()}


@pytest.mark.parametrize("name", BLOCKS)
def test_the_blocks_equal_plain_torch(name, expected):
    torch.testing.assert_close(expected[name], run(reference_block))


def test_in_place_kernels_replayed_on_updated_data_would_change_every_gradient(expected):
    """What the tests below guard against: the block fed `x @ w + 2 b` or `4 exp(c)` (what a
    replay of its in-place kernels on already-updated data computes) gives other gradients."""
    for replayed in (lambda x, w, b, c: reference_block(x, w, 2 * b, c),
                     lambda x, w, b, c: reference_block(x, w, b, c + torch.log(torch.tensor(2.0)))):
        for got, want in zip(run(replayed), expected["in_place"]):
            assert not torch.allclose(got, want, rtol=1e-3, atol=1e-3)


# --- checkpoint(use_reentrant=False) ---------------------------------------------------------

@pytest.mark.parametrize("name", BLOCKS)
def test_checkpoint_eager_recomputes_the_kernels_with_the_same_gradients(name, expected, counts):
    torch.testing.assert_close(run(BLOCKS[name], checkpointed=True), expected[name])
    if name == "in_place":
        # forward, then once more when backward recomputes the block (from fresh mm and exp)
        assert counts["add_bias_in_place"] == 2 and counts["double_in_place"] == 2, counts
    assert counts["silu_backward"] == 1, counts


@pytest.mark.parametrize("name", BLOCKS)
def test_checkpoint_compiled_gives_the_same_gradients(name, expected):
    torch.testing.assert_close(run(BLOCKS[name], compiled=True, checkpointed=True), expected[name])


def test_checkpoint_compiled_recomputes_the_in_place_kernels_in_backward(expected):
    """Without checkpointing the compiled backward launches no forward kernel; with it, the
    backward launches the in-place kernels again (recomputation), and the gradients are still
    right: the recomputed launches do not start from buffers the forward already updated."""
    from torch._inductor.utils import run_and_get_code

    def code_of(checkpointed):
        torch._dynamo.reset()
        result, codes = run_and_get_code(run, in_place_block, True, checkpointed)
        torch.testing.assert_close(result, expected["in_place"])
        return forward_and_backward_code(codes)

    for checkpointed in (False, True):
        forward, backward = code_of(checkpointed)
        for kernel in ("add_bias_in_place", "double_in_place", "silu_forward"):
            assert len(kernel_launches(forward, kernel)) == 1, (kernel, forward)
            recomputed = len(kernel_launches(backward, kernel))
            if not checkpointed or kernel == "silu_forward":
                assert recomputed == 0, (kernel, checkpointed, backward)
            elif kernel == "add_bias_in_place" and torch.__version__ < "2.12":
                # torch 2.11's partitioner saves the first launch's result rather than recompute it
                assert recomputed <= 1, (kernel, checkpointed, backward)
            else:
                assert recomputed == 1, (kernel, checkpointed, backward)
        assert len(kernel_launches(backward, "silu_backward")) == 1, backward


# --- selective checkpointing -----------------------------------------------------------------

KERNEL_LAUNCHES = (triton_kernel_wrapper_mutation, triton_kernel_wrapper_functional)
POLICIES = {
    # the usual policy: keep matmuls, recompute the rest. add_bias_in_place writes mm's output.
    "save_matmul": lambda op: op == torch.ops.aten.mm.default,
    # double_in_place writes exp's output with a bare launch
    "save_exp": lambda op: op == torch.ops.aten.exp.default,
    # keep what the kernels compute instead of launching them again
    "save_kernel_launches": lambda op: op in KERNEL_LAUNCHES,
}


def selective(policy_name):
    def policy(ctx, op, *args, **kwargs):
        return CheckpointPolicy.MUST_SAVE if POLICIES[policy_name](op) else CheckpointPolicy.PREFER_RECOMPUTE

    return functools.partial(create_selective_checkpoint_contexts, policy)


# torch's own answer when an op writes a tensor that selective checkpointing cached (it raises
# for `s.mul_(2)` after a saved `exp`, eagerly): an error, never a silently wrong gradient.
CACHED_TENSOR_MUTATED = "Tensor cached during selective activation checkpoint has been mutated"

def sac_case(name, policy, compiled):
    return pytest.param(name, policy, compiled, id=f"{name}-{policy}-{'compiled' if compiled else 'eager'}")


SAC_CASES = [sac_case("out_of_place", "save_matmul", compiled) for compiled in (False, True)] + [
    sac_case("in_place", policy, compiled) for policy in POLICIES for compiled in (False, True)]


@pytest.mark.parametrize("name, policy, compiled", SAC_CASES)
def test_selective_checkpoint_gives_the_same_gradients(name, policy, compiled, expected):
    """Equal to the un-checkpointed block, or (eagerly, where an in-place kernel writes a tensor
    the policy cached) torch's own error for that case. Never a replay on updated data."""
    try:
        result = run(BLOCKS[name], compiled=compiled, checkpointed=True, context_fn=selective(policy))
    except RuntimeError as error:
        if compiled or name != "in_place" or CACHED_TENSOR_MUTATED not in str(error):
            raise
        return
    torch.testing.assert_close(result, expected[name])
