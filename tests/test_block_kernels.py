"""The Triton transformer block of benchmarks/block_kernels.py matches plain PyTorch.

Each op's forward and gradients are checked against ``reference_ops()`` for raw triton
launches and for ``wrap_triton`` (eager), then the whole block under
``torch.compile(fullgraph=True)`` (inductor) with ``wrap_triton`` against the reference block.
Tiny sizes and 16-wide blocks keep the Triton interpreter fast on CPU.
"""

import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from block_kernels import Block, make_block_ops, reference_ops, rope_tables  # noqa: E402
from torch_triton_hop import wrap_triton  # noqa: E402

pytestmark = pytest.mark.interpreter  # CPU-interpreter sizes; on a GPU benchmarks/compile_inductor.py runs it

BATCH, SEQ, HEADS, HEAD_DIM, HIDDEN = 1, 32, 2, 16, 64
DIM = HEADS * HEAD_DIM
BLOCKS = dict(block_m=16, block_n=16, rms_rows_per_prog=4, elementwise_block=256)
WRAPS = {"raw": lambda kernel: kernel, "wrap_triton": wrap_triton}
TOL = dict(atol=1e-4, rtol=1e-4)


def leaves(*shape_list, dtype=torch.float32):
    # Drawn in float32, then cast (here and for cotangents): torch 2.11 draws other numbers in float16.
    gen = torch.Generator().manual_seed(0)
    return [torch.randn(*shape, generator=gen).to(dtype).requires_grad_() for shape in shape_list]


def outputs_and_grads(fn, inputs):
    """fn's outputs and the gradients of a fixed random projection of them w.r.t. inputs."""
    outs = fn(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    gen = torch.Generator().manual_seed(1)
    cotangents = [torch.randn(o.shape, generator=gen).to(o.dtype) for o in outs]
    grads = torch.autograd.grad(outs, inputs, cotangents)
    return [o.detach() for o in outs], list(grads)


def op_cases(ops, head_dim=HEAD_DIM, seq=SEQ):
    cos, sin = rope_tables(seq, head_dim)
    heads = (BATCH, seq, HEADS, head_dim)
    # attention takes (B, H, S, D) as transposed views of (B, S, H, D): strided, like in Block.
    return {
        "rmsnorm": (lambda x, w: ops.rmsnorm(x, w, 1e-6), [(BATCH, seq, HEADS * head_dim), (HEADS * head_dim,)]),
        "rope": (lambda q, k: ops.rope(q, k, cos, sin), [heads, heads]),
        "attention": (lambda q, k, v: ops.attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)),
                      [heads, heads, heads]),
        "swiglu": (ops.swiglu, [(BATCH, seq, HIDDEN), (BATCH, seq, HIDDEN)]),
    }


@pytest.mark.parametrize("op", ["rmsnorm", "rope", "attention", "swiglu"])
@pytest.mark.parametrize("wrap", list(WRAPS))
def test_op_matches_reference(wrap, op):
    fn, shapes = op_cases(make_block_ops(WRAPS[wrap], **BLOCKS))[op]
    ref_fn, _ = op_cases(reference_ops())[op]
    got = outputs_and_grads(fn, leaves(*shapes))
    expected = outputs_and_grads(ref_fn, leaves(*shapes))
    torch.testing.assert_close(got, expected, **TOL)


def test_attention_ragged_seq_and_fp16():
    """A sequence that is not a multiple of the block (masked tails), in float16."""
    seq = 40
    fn, shapes = op_cases(make_block_ops(wrap_triton, **BLOCKS), seq=seq)["attention"]
    ref_fn, _ = op_cases(reference_ops(), seq=seq)["attention"]
    got = outputs_and_grads(fn, leaves(*shapes, dtype=torch.float16))
    expected = outputs_and_grads(ref_fn, leaves(*shapes))  # float32 reference
    torch.testing.assert_close([t.float() for g in got for t in g], [t for e in expected for t in e],
                               atol=2e-2, rtol=2e-2)


def test_compiled_block_matches_reference():
    """torch.compile(fullgraph=True), default backend, of the wrap_triton block: forward and
    parameter gradients equal the plain-PyTorch block's (run eagerly)."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    ref_block = Block(DIM, HEADS, HIDDEN, reference_ops())
    with torch.no_grad():  # non-trivial norm weights, so their gradients are checked meaningfully
        ref_block.attn_norm.uniform_(0.5, 1.5)
        ref_block.mlp_norm.uniform_(0.5, 1.5)
    block = Block(DIM, HEADS, HIDDEN, make_block_ops(wrap_triton, **BLOCKS))
    block.load_state_dict(ref_block.state_dict())
    cos, sin = rope_tables(SEQ, HEAD_DIM)
    (x,) = leaves((BATCH, SEQ, DIM))

    def block_fn(x, cos, sin):
        return block(x, cos, sin)

    compiled = torch.compile(block_fn, fullgraph=True)
    results = []
    for fn, module in ((compiled, block), (ref_block, ref_block)):
        out = fn(x, cos, sin)
        gen = torch.Generator().manual_seed(1)
        out.backward(torch.randn(out.shape, generator=gen))
        results.append((out.detach(), {n: p.grad for n, p in module.named_parameters()}, x.grad.clone()))
        x.grad = None
    torch.testing.assert_close(results[0], results[1], atol=1e-3, rtol=1e-3)
    torch._dynamo.reset()
