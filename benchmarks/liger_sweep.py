"""Liger-Kernel's autograd ops under torch.compile: torch_triton_hop against torch's built-in path.

For each ``torch.autograd.Function`` of ``liger_kernel.ops`` (0.8.5; top-level modules only)
this runs the op on tiny float32 inputs, forward and backward, eagerly (the reference), then
under ``torch.compile(fn, fullgraph=True, backend=...)``, and compares outputs and input
gradients. Each op ends as one of

    pass                      compiled outputs and gradients match eager
    MISMATCH: <what>          compiled, but values differ from eager
    FAIL: <Type>: <message>   torch.compile (or the compiled forward/backward) raised
    EAGER FAIL: <...>         even eager failed; compile not attempted

Modes:
  ours     every launched module-level kernel of the Liger modules is replaced by
           ``torch_triton_hop.wrap_triton(kernel)`` (tests/liger_helpers.py), so Liger's
           Functions launch through the package and torch.compile captures our HOP
  builtin  Liger untouched: Dynamo meets raw ``kernel[grid](...)`` launches and captures them
           with torch's own machinery

    python benchmarks/liger_sweep.py --all                  # GPU: 4 combinations, one table
    python benchmarks/liger_sweep.py --mode ours --backend inductor --ops rms_norm,swiglu
    python benchmarks/liger_sweep.py --list                 # the ops, and those skipped
    python benchmarks/liger_sweep.py --all --device cpu --ops rms_norm,swiglu   # no GPU

Without a GPU (``--device cpu``) kernels run on the Triton interpreter, with the interpreter
workarounds of tests/liger_helpers.py; many Liger kernels do not run there (EAGER FAIL), and
torch's built-in path does not support the interpreter at all.
"""

from __future__ import annotations

import argparse
import atexit
import concurrent.futures
import contextlib
import importlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from typing import Callable, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(os.path.dirname(HERE), "tests")

MODES = ("ours", "builtin")
BACKENDS = ("aot_eager", "inductor")
COMBINATIONS = [f"{mode}/{backend}" for mode in MODES for backend in BACKENDS]

# Modules whose kernels the swept Functions launch. Besides the op modules: utils holds
# element_mul_kernel (cross entropy); fused_moe_kernels holds the MoE kernels; Liger's
# dispatcher runs the inner losses of jsd, fused_linear_jsd, fused_linear_kl_div and
# fused_linear_cross_entropy from backends._triton.*, which import the kernels by name and
# launch them from their own globals, so those attributes must hold the wrappers too.
ALL_MODULES = (
    "liger_kernel.ops.utils",
    "liger_kernel.ops.attn_res",
    "liger_kernel.ops.cross_entropy",
    "liger_kernel.ops.dyt",
    "liger_kernel.ops.fused_add_rms_norm",
    "liger_kernel.ops.fused_ce_tvd",
    "liger_kernel.ops.fused_linear_cross_entropy",
    "liger_kernel.ops.fused_linear_jsd",
    "liger_kernel.ops.fused_linear_kl_div",
    "liger_kernel.ops.fused_moe",
    "liger_kernel.ops.fused_moe_kernels",
    "liger_kernel.ops.fused_neighborhood_attention",
    "liger_kernel.ops.geglu",
    "liger_kernel.ops.group_norm",
    "liger_kernel.ops.grpo_loss",
    "liger_kernel.ops.jsd",
    "liger_kernel.ops.kl_div",
    "liger_kernel.ops.layer_norm",
    "liger_kernel.ops.llama4_rope",
    "liger_kernel.ops.mhc",
    "liger_kernel.ops.mlp",
    "liger_kernel.ops.modulated_rms_norm",
    "liger_kernel.ops.multi_token_attention",
    "liger_kernel.ops.poly_norm",
    "liger_kernel.ops.qwen2vl_mrope",
    "liger_kernel.ops.relu_squared",
    "liger_kernel.ops.rms_norm",
    "liger_kernel.ops.rope",
    "liger_kernel.ops.softmax",
    "liger_kernel.ops.sparsemax",
    "liger_kernel.ops.swiglu",
    "liger_kernel.ops.tiled_mlp",
    "liger_kernel.ops.tvd",
    "liger_kernel.ops.backends._triton.cross_entropy",
    "liger_kernel.ops.backends._triton.jsd",
    "liger_kernel.ops.backends._triton.kl_div",
)

# The dispatcher's ops (liger_kernel.backends) that the swept Functions reach.
DISPATCHED = ("jsd_loss_and_grad", "kl_loss_and_grad", "cross_entropy_loss_and_grad")

SKIPPED = {
    "vocab_parallel_cross_entropy": "LigerVocabParallelCEFunction needs a tensor-parallel process group",
    "fused_linear_scaled_cross_entropy (TP)": "_TensorParallelFusedLinearPPOFallbackFunction needs a process group",
    "fused_linear_scaled_cross_entropy": "_FusedLinearPPOFallbackFunction is pure PyTorch (no Triton kernel; "
                                         "the fast path is CuTe DSL)",
}


# --- the ops ------------------------------------------------------------------------------

@dataclass
class Case:
    fn: Callable  # applies the Liger Function to the inputs
    inputs: Callable[[], list]  # CPU tensors (seeded by the caller), moved to the device later
    grads: tuple[int, ...]  # indices of inputs that require grad


def log_probs(*shape):
    import torch

    return torch.randn(*shape).log_softmax(-1)


def probs(*shape):
    import torch

    return torch.randn(*shape).softmax(-1)


def rope_cos_sin(seq, head_dim):
    """cos, sin of shape (1, seq, head_dim)."""
    import torch

    inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    freqs = torch.outer(torch.arange(seq, dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)[None]
    return emb.cos(), emb.sin()


def moe_inputs(tokens=8, hidden=64, inter=64, experts=4, top_k=2):
    import torch

    scores = torch.randn(tokens, experts)
    top = scores.topk(top_k, dim=-1)
    return [torch.randn(tokens, hidden), torch.randn(experts, 2 * inter, hidden) / 8,
            torch.randn(experts, hidden, inter) / 8, top.indices.to(torch.int32), top.values.softmax(-1)]


def grpo_inputs(batch=2, length=4, vocab=64, temperature=0.9):
    import torch

    logits = torch.randn(batch, length + 1, vocab)
    ids = torch.randint(0, vocab, (batch, length))
    logp = (logits[:, :-1] / temperature).log_softmax(-1).gather(-1, ids[..., None]).squeeze(-1)
    mask = torch.ones(batch, length, dtype=torch.int64)
    mask[1, -1] = 0
    return [logits, logp + 0.1 * torch.randn_like(logp), logp + 0.1 * torch.randn_like(logp), ids,
            torch.randn(batch), mask]


def tiled_swiglu_mlp(weights, x):
    """The MLP that LigerTiledMLPFunction shards: fn(module, x_shard), here with Liger's SwiGLU."""
    from liger_kernel.ops.swiglu import LigerSiLUMulFunction

    gate, up, down = weights
    return LigerSiLUMulFunction.apply(x @ gate.t(), x @ up.t()) @ down.t()


def build_cases() -> dict[str, Case]:
    """name -> Case. Imports Liger: call it after the kernels are wrapped (mode ours)."""
    import torch
    from liger_kernel.ops.attn_res import LigerAttnResFunction
    from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
    from liger_kernel.ops.dyt import LigerDyTFunction
    from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
    from liger_kernel.ops.fused_ce_tvd import LigerFusedCETVDFunction
    from liger_kernel.ops.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyFunction
    from liger_kernel.ops.fused_linear_jsd import LigerFusedLinearJSDFunction
    from liger_kernel.ops.fused_linear_kl_div import LigerFusedLinearKLDivFunction
    from liger_kernel.ops.fused_moe import LigerFusedMoEFunction
    from liger_kernel.ops.fused_neighborhood_attention import LigerFusedNeighborhoodAttentionFunction
    from liger_kernel.ops.geglu import LigerGELUMulFunction
    from liger_kernel.ops.group_norm import LigerGroupNormFunction
    from liger_kernel.ops.grpo_loss import GrpoLossFunction
    from liger_kernel.ops.jsd import LigerJSDFunction
    from liger_kernel.ops.kl_div import LigerKLDivLossFunction
    from liger_kernel.ops.layer_norm import LigerLayerNormFunction
    from liger_kernel.ops.llama4_rope import LigerLlama4RopeFunction
    from liger_kernel.ops.mhc import LigerMHCCoeffsFunction, LigerMHCPostResFunction, LigerMHCPreFunction
    from liger_kernel.ops.mlp import LigerMLPFunction
    from liger_kernel.ops.modulated_rms_norm import LigerModulatedRMSNormFunction
    from liger_kernel.ops.multi_token_attention import LigerMultiTokenAttentionFunction
    from liger_kernel.ops.poly_norm import LigerPolyNormFunction
    from liger_kernel.ops.qwen2vl_mrope import LigerQwen2VLMRopeFunction
    from liger_kernel.ops.relu_squared import LigerReLUSquaredFunction
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    from liger_kernel.ops.rope import LigerRopeFunction
    from liger_kernel.ops.softmax import LigerSoftmaxFunction
    from liger_kernel.ops.sparsemax import LigerSparsemaxFunction
    from liger_kernel.ops.swiglu import LigerFusedGateUpSiLUMulFunction, LigerSiLUMulFunction
    from liger_kernel.ops.tiled_mlp import LigerTiledMLPFunction
    from liger_kernel.ops.tvd import LigerTVDLossFunction

    randn, randint = torch.randn, torch.randint
    hc, c = 4, 32  # mHC: 4 streams of width 32; M = hc*hc + 2*hc coefficients
    return {
        "attn_res": Case(lambda v, wq, wn: LigerAttnResFunction.apply(v, wq, wn, 1e-6),
                         lambda: [randn(4, 2, 4, 64), randn(64), randn(64)], (0, 1, 2)),
        "cross_entropy": Case(lambda x, t: LigerCrossEntropyFunction.apply(x, t, None),
                              lambda: [randn(8, 128), randint(0, 128, (8,))], (0,)),
        "dyt": Case(lambda x, a, g, b: LigerDyTFunction.apply(x, a, g, b),
                    lambda: [randn(4, 64), torch.full((1,), 0.5), randn(64), randn(64)], (0, 1, 2, 3)),
        "fused_add_rms_norm": Case(lambda x, r, w: LigerFusedAddRMSNormFunction.apply(x, r, w, 1e-6),
                                   lambda: [randn(4, 64), randn(4, 64), randn(64)], (0, 1, 2)),
        "fused_ce_tvd": Case(lambda s, t, y: LigerFusedCETVDFunction.apply(s, t, y),
                             lambda: [randn(8, 128), randn(8, 128), randint(0, 128, (8,))], (0,)),
        "fused_linear_cross_entropy": Case(
            lambda x, w, t: LigerFusedLinearCrossEntropyFunction.apply(x, w, t),
            lambda: [randn(8, 64), randn(256, 64) / 8, randint(0, 256, (8,))], (0, 1)),
        "fused_linear_jsd": Case(
            lambda xs, ws, xt, wt: LigerFusedLinearJSDFunction.apply(xs, ws, xt, wt),
            lambda: [randn(8, 64), randn(256, 64) / 8, randn(8, 64), randn(256, 64) / 8], (0, 1)),
        "fused_linear_kl_div": Case(
            lambda x, w, target: LigerFusedLinearKLDivFunction.apply(x, w, target),
            lambda: [randn(8, 64), randn(256, 64) / 8, probs(8, 256)], (0, 1)),
        "fused_moe": Case(lambda x, w1, w2, idx, s: LigerFusedMoEFunction.apply(x, w1, w2, idx, s),
                          moe_inputs, (0, 1, 2, 4)),
        "fused_neighborhood_attention": Case(
            lambda q, k, v: LigerFusedNeighborhoodAttentionFunction.apply(q, k, v, 7, 1),
            lambda: [randn(2, 2, 16, 16), randn(2, 2, 16, 16), randn(2, 2, 16, 16)], (0, 1, 2)),
        "geglu": Case(lambda a, b: LigerGELUMulFunction.apply(a, b), lambda: [randn(4, 64), randn(4, 64)], (0, 1)),
        "group_norm": Case(lambda x, w, b: LigerGroupNormFunction.apply(x, w, b, 4, 2, 1e-5),
                           lambda: [randn(2, 4, 16), randn(4), randn(4)], (0, 1, 2)),
        # temperature, beta, eps_low, eps_high, inplace=False (inplace overwrites the logits)
        "grpo_loss": Case(lambda logits, old, ref, ids, adv, mask: GrpoLossFunction.apply(
                              logits, old, ref, ids, adv, mask, 0.9, 0.04, 0.2, 0.4, False, "grpo"),
                          grpo_inputs, (0,)),
        "jsd": Case(lambda x, y: LigerJSDFunction.apply(x, y), lambda: [log_probs(8, 128), log_probs(8, 128)], (0,)),
        "kl_div": Case(lambda x, y: LigerKLDivLossFunction.apply(x, y, "batchmean", False),
                       lambda: [log_probs(8, 128), probs(8, 128)], (0,)),
        "layer_norm": Case(lambda x, w, b: LigerLayerNormFunction.apply(x, w, b, 1e-5),
                           lambda: [randn(4, 64), randn(64), randn(64)], (0, 1, 2)),
        # freqs_cis as real (seq, head_dim / 2, 2): the Function also takes complex, a separate concern
        "llama4_rope": Case(lambda q, k, f: LigerLlama4RopeFunction.apply(q, k, f),
                            lambda: [randn(2, 8, 2, 16), randn(2, 8, 2, 16),
                                     torch.view_as_real(torch.polar(torch.ones(8, 8), randn(8, 8)))], (0, 1)),
        # allow_fp32, tmax (Sinkhorn iterations), rms_eps, pre_eps, sinkhorn_eps, post_mult
        "mhc_coeffs": Case(lambda x, phi, b, ap, aq, ar: LigerMHCCoeffsFunction.apply(
                               x, phi, b, ap, aq, ar, True, 4, 1e-6, 0.0, 1e-6, 2.0),
                           lambda: [randn(2, 4, hc, c), randn(hc * c, hc * hc + 2 * hc) / 8,
                                    randn(hc * hc + 2 * hc), torch.tensor(1.0), torch.tensor(1.0),
                                    torch.tensor(1.0)], (0, 1, 2, 3, 4, 5)),
        "mhc_pre": Case(lambda x, h: LigerMHCPreFunction.apply(x, h),
                        lambda: [randn(2, 4, hc, c), randn(2, 4, hc).sigmoid()], (0, 1)),
        "mhc_post_res": Case(lambda x, f, hp, hr: LigerMHCPostResFunction.apply(x, f, hp, hr),
                             lambda: [randn(2, 4, hc, c), randn(2, 4, c), randn(2, 4, hc).sigmoid(),
                                      randn(2, 4, hc, hc).softmax(-1)], (0, 1, 2, 3)),
        # TMA tensor descriptors: CUDA only (the Function asserts input.is_cuda)
        "mlp": Case(lambda x, g, u, d: LigerMLPFunction.apply(x, g, u, d),
                    lambda: [randn(2, 8, 64), randn(128, 64) / 8, randn(128, 64) / 8, randn(64, 128) / 8],
                    (0, 1, 2, 3)),
        "modulated_rms_norm": Case(
            lambda x, w, scale, shift: LigerModulatedRMSNormFunction.apply(x, w, scale, shift, 1e-6, 0.0, "llama",
                                                                           False),
            lambda: [randn(2, 4, 64), randn(64), randn(2, 64), randn(2, 64)], (0, 1, 2, 3)),
        # scores (B, C, L, L), conv weight (C, C, 3, 3), bias, stride 1, padding 1
        "multi_token_attention": Case(
            lambda s, w, b: LigerMultiTokenAttentionFunction.apply(s, w, b, 1, 1),
            lambda: [randn(2, 2, 8, 8), randn(2, 2, 3, 3) / 3, randn(2)], (0, 1, 2)),
        "poly_norm": Case(lambda x, w, b: LigerPolyNormFunction.apply(x, w, b, 1e-6, False),
                          lambda: [randn(4, 64), randn(3), randn(())], (0, 1, 2)),
        # cos/sin (3, B, L, head_dim): temporal, height, width sections of head_dim / 2 = 8
        "qwen2vl_mrope": Case(lambda q, k, cos, sin: LigerQwen2VLMRopeFunction.apply(q, k, cos, sin, [2, 3, 3]),
                              lambda: [randn(2, 2, 8, 16), randn(2, 2, 8, 16),
                                       *(t.expand(3, 2, 8, 16).contiguous() for t in rope_cos_sin(8, 16))],
                              (0, 1)),
        "relu_squared": Case(lambda x: LigerReLUSquaredFunction.apply(x), lambda: [randn(4, 64)], (0,)),
        "rms_norm": Case(lambda x, w: LigerRMSNormFunction.apply(x, w, 1e-6),
                         lambda: [randn(4, 64), randn(64)], (0, 1)),
        "rope": Case(lambda q, k, cos, sin: LigerRopeFunction.apply(q, k, cos, sin),
                     lambda: [randn(2, 2, 8, 16), randn(2, 2, 8, 16), *rope_cos_sin(8, 16)], (0, 1)),
        "softmax": Case(lambda x: LigerSoftmaxFunction.apply(x), lambda: [randn(4, 128)], (0,)),
        "sparsemax": Case(lambda x: LigerSparsemaxFunction.apply(x, -1), lambda: [randn(4, 64)], (0,)),
        "swiglu": Case(lambda a, b: LigerSiLUMulFunction.apply(a, b), lambda: [randn(4, 64), randn(4, 64)], (0, 1)),
        "swiglu_fused_gate_up": Case(lambda y: LigerFusedGateUpSiLUMulFunction.apply(y, False),
                                     lambda: [randn(4, 128)], (0,)),
        # The Function takes fn(module, x_shard); the weights reach their gradients through the
        # backward it runs inside its own backward (torch.autograd.backward per shard).
        "tiled_mlp": Case(lambda x, g, u, d: LigerTiledMLPFunction.apply(tiled_swiglu_mlp, (g, u, d), x, 2),
                          lambda: [randn(2, 8, 64), randn(128, 64) / 8, randn(128, 64) / 8, randn(64, 128) / 8],
                          (0, 1, 2, 3)),
        "tvd": Case(lambda p, q: LigerTVDLossFunction.apply(p, q), lambda: [probs(8, 128), probs(8, 128)], (0,)),
    }


# --- one op: eager, then compiled ---------------------------------------------------------

class Mismatch(Exception):
    pass


def make_inputs(case: Case, device: str) -> list:
    import torch

    torch.manual_seed(0)
    return [t.to(device) for t in case.inputs()]


def forward_backward(fn, case: Case, base_inputs, cotangents=None):
    """Outputs (cloned before backward) and input gradients of sum(out * cotangent).

    Fresh clones of the inputs each run: several Liger ops write into their inputs. The
    cotangents of the first (eager) run are reused, so both runs see the same ones.
    """
    import torch

    inputs = [t.clone() for t in base_inputs]
    for i in case.grads:
        inputs[i].requires_grad_(True)
    outs = [o for o in as_tuple(fn(*inputs)) if isinstance(o, torch.Tensor)]
    values = [o.detach().clone() for o in outs]
    differentiable = [o for o in outs if o.requires_grad]
    if cotangents is None:
        generator = torch.Generator().manual_seed(1)
        cotangents = [torch.randn(o.shape, generator=generator).to(o.device, o.dtype) for o in differentiable]
    if len(cotangents) != len(differentiable):
        raise Mismatch(f"{len(differentiable)} outputs require grad, eager had {len(cotangents)}")
    if differentiable:
        # Through a mul, so grad_output is a fresh tensor (some Liger backwards write into it).
        sum((o * c).sum() for o, c in zip(differentiable, cotangents)).backward()
    return values, [inputs[i].grad for i in case.grads], cotangents


def as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def compare(what: str, got: Sequence, expected: Sequence, dtype_tol: dict) -> None:
    import torch

    if len(got) != len(expected):
        raise Mismatch(f"{what}: {len(got)} tensors, eager gave {len(expected)}")
    for i, (g, e) in enumerate(zip(got, expected)):
        if (g is None) != (e is None):
            raise Mismatch(f"{what}[{i}]: {'None' if g is None else 'a tensor'}, eager gave "
                           f"{'None' if e is None else 'a tensor'}")
        if g is None:
            continue
        tol = dtype_tol.get(e.dtype, {})
        try:
            torch.testing.assert_close(g, e, **tol)
        except AssertionError as err:
            raise Mismatch(f"{what}[{i}]: {summarize_mismatch(str(err))}") from None


def summarize_mismatch(message: str) -> str:
    keep = [line.strip() for line in message.splitlines()
            if line.strip().startswith(("Mismatched elements", "Greatest absolute", "The values for attribute"))]
    return "; ".join(keep) or first_line(message)


def first_line(message: str) -> str:
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    return lines[0] if lines else ""


def describe(err: BaseException) -> str:
    """'<Type>: <first line> (<where>)', looking through wrappers whose own message says little.

    <where> is the innermost Liger source line the message names (Dynamo's "from user code"),
    else the innermost frame of the traceback in Liger or torch_triton_hop.
    """
    from torch._dynamo.exc import BackendCompilerFailed

    names = []
    while isinstance(err, BackendCompilerFailed) and err.inner_exception is not None:
        names.append(type(err).__name__)
        err = err.inner_exception
    names.append(type(err).__name__)
    where = liger_location(str(err)) or traceback_location(err)
    return f"{' > '.join(names)}: {first_line(err)[:120]}" + (f" ({where})" if where else "")


def liger_location(message: str) -> str:
    frames = re.findall(r'File "([^"]*liger_kernel[^"]*)", line (\d+), in (\w+)', message)
    return short_frame(*frames[-1]) if frames else ""


def traceback_location(err: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if "liger_kernel" in f.filename or "torch_triton_hop" in f.filename]
    return short_frame(frames[-1].filename, frames[-1].lineno, frames[-1].name) if frames else ""


def short_frame(filename: str, line, function: str) -> str:
    package = "liger_kernel" if "liger_kernel" in filename else "torch_triton_hop"
    path = filename.split(f"/{package}/", 1)[-1]
    return f"{package}/{path}:{line} {function}"


def run_op(case: Case, backend: str, device: str, float_arguments) -> str:
    import torch

    # fp32 everywhere: the same kernels run in both, only the surrounding ops may be fused or
    # reordered (inductor), so tight tolerances.
    tol = {torch.float32: dict(atol=1e-4, rtol=1e-4), torch.float16: dict(atol=1e-2, rtol=1e-2),
           torch.bfloat16: dict(atol=2e-2, rtol=2e-2)}
    torch._dynamo.reset()
    base = make_inputs(case, device)
    with float_arguments():
        try:
            expected, expected_grads, cotangents = forward_backward(case.fn, case, base)
        except Exception as err:  # noqa: BLE001: every failure is a result here
            return f"EAGER FAIL: {describe(err)}"
        try:
            compiled = torch.compile(case.fn, fullgraph=True, backend=backend)
            got, got_grads, _ = forward_backward(compiled, case, base, cotangents)
            compare("output", got, expected, tol)
            compare("grad", got_grads, expected_grads, tol)
        except Mismatch as err:
            return f"MISMATCH: {err}"[:200]
        except Exception as err:  # noqa: BLE001
            return f"FAIL: {describe(err)}"
        finally:
            torch._dynamo.reset()
    return "pass"


# --- one combination: this process --------------------------------------------------------

def set_up_environment(device: str) -> None:
    """Before triton is imported."""
    import torch  # imports no triton

    if device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    elif os.environ.get("TRITON_INTERPRET") == "1":
        sys.exit("--device cuda with TRITON_INTERPRET=1: unset it to run compiled kernels")
    elif not torch.cuda.is_available():
        sys.exit("--device cuda, but torch sees no CUDA device")
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # triton 3.9 warns unless chosen
    # Liger's dispatcher runs the inner losses of jsd and fused_linear_* and would pick a CuTe DSL
    # implementation on Hopper when one is installed; this sweep is about Triton kernels.
    for op in DISPATCHED:
        os.environ.setdefault(f"LIGER_KERNEL_IMPL_{op.upper()}", "nvidia-triton")
    # One config per fused-MoE kernel: its full sweep (16-32 configs a kernel, each compiled and
    # benchmarked eagerly and again by torch.compile) would dominate the run. Autotuned kernels
    # are still covered (dyt, mlp, and the MoE kernels themselves keep @triton.autotune).
    os.environ.setdefault("LIGER_FUSED_MOE_AUTOTUNE", "0")
    if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        # Never reuse code compiled by an earlier checkout of the package.
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="liger_sweep_inductor_")
        atexit.register(shutil.rmtree, os.environ["TORCHINDUCTOR_CACHE_DIR"], ignore_errors=True)


tl = None  # triton.language, imported once TRITON_INTERPRET is settled (_interpreter_tanh uses it)


def _interpreter_tanh(x):
    return 2 * tl.sigmoid(2 * x) - 1


def more_interpreter_workarounds(liger_helpers, modules) -> None:
    """CPU only: what liger_helpers does for the modules of tests/test_liger.py, for the rest.

    libdevice ``rsqrt`` / ``tanh`` are stubs the interpreter cannot run (@triton.jit helpers
    computing them with tl take their place), and ``infer_device()`` without CUDA imports
    transformers inside try/except, which Dynamo cannot trace (answered once, eagerly).
    Applied before wrapping, so that wrap_liger_kernels sees the helpers as helpers.
    """
    global tl
    import triton
    import triton.language
    from triton.language.extra import libdevice

    tl = triton.language
    tanh = triton.jit(_interpreter_tanh)
    for module in modules:
        if getattr(module, "rsqrt", None) is libdevice.rsqrt:
            module.rsqrt = liger_helpers._interpreter_rsqrt
        if getattr(module, "tanh", None) is libdevice.tanh:
            module.tanh = tanh
        if hasattr(module, "infer_device"):
            module.infer_device = lambda _device=module.infer_device(): _device


def prepare_liger(mode: str, device: str):
    """Wrap the kernels (ours) and, on CPU, apply the interpreter workarounds.

    Returns the context manager each op runs in (interpreter float arguments, or nothing).
    Mode builtin on a GPU imports neither tests/liger_helpers.py nor torch_triton_hop.
    """
    if mode == "builtin" and device != "cpu":
        return contextlib.nullcontext
    sys.path.insert(0, TESTS)
    import liger_helpers

    if device == "cpu":
        modules = [importlib.import_module(name) for name in ALL_MODULES]
        # liger_helpers' own patches (rsqrt in 3 modules, the device arch); mode ours would
        # apply them in wrap_liger_kernels, builtin gets them too so that eager runs there.
        liger_helpers._apply_interpreter_workarounds(modules)
        more_interpreter_workarounds(liger_helpers, modules)
    if mode == "ours":
        wrapped = liger_helpers.wrap_liger_kernels(ALL_MODULES)
        kernels = {id(getattr(sys.modules[module], name)) for module, names in wrapped.items() for name in names}
        print(f"# wrapped {len(kernels)} kernels in {len(wrapped)} modules", flush=True)
    return liger_helpers.interpreter_float_arguments


def write_json(path: str | None, results: dict) -> None:
    if not path:
        return
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1)
    os.replace(tmp, path)  # complete after every op: a timed-out run keeps what it finished


def run_combination(args, names: list[str]) -> dict[str, str]:
    set_up_environment(args.device)
    float_arguments = prepare_liger(args.mode, args.device)
    cases = build_cases()
    results: dict[str, str] = {}
    print(f"# mode={args.mode} backend={args.backend} device={args.device}", flush=True)
    for name in names:
        start = time.perf_counter()
        results[name] = run_op(cases[name], args.backend, args.device, float_arguments)
        print(f"{name:30s} {time.perf_counter() - start:6.1f}s  {results[name]}", flush=True)
        write_json(args.json, results)
    passed = sum(status == "pass" for status in results.values())
    print(f"passes: {args.mode}/{args.backend} {passed}/{len(results)}", flush=True)
    return results


# --- --all: four subprocesses, one table ---------------------------------------------------

def run_subprocess(combination: str, args, names: list[str], workdir: str) -> dict[str, str]:
    mode, backend = combination.split("/")
    out = os.path.join(workdir, f"{mode}_{backend}.json")
    log = os.path.join(workdir, f"{mode}_{backend}.log")
    command = [sys.executable, os.path.abspath(__file__), "--mode", mode, "--backend", backend,
               "--device", args.device, "--ops", ",".join(names), "--json", out]
    env = dict(os.environ)
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(workdir, f"inductor_{mode}_{backend}"))
    if args.device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    with open(log, "w") as log_file:
        # Own session: on a timeout the whole group goes (inductor's compile workers too).
        proc = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            rc = proc.wait(timeout=args.timeout)
            ended = None if rc == 0 else f"CRASH: exit status {rc}; {last_line(log)}"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            ended = f"TIMEOUT: the {combination} run exceeded {args.timeout} s"
    results = {}
    if os.path.exists(out):
        with open(out) as f:
            results = json.load(f)
    for name in names:
        if name not in results:
            results[name] = ended or "CRASH: no result"
    return results


def last_line(path: str) -> str:
    with open(path, errors="replace") as f:
        lines = [line.strip() for line in f if line.strip()]
    return lines[-1][:120] if lines else "no output"


def cell_text(status: str) -> str:
    """A status without its location, a compile failure without "FAIL: " (room for the reason)."""
    status = re.sub(r" \((liger_kernel|torch_triton_hop)/[^)]*\)$", "", status)
    return status.removeprefix("FAIL: ")


def truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def print_table(results: dict[str, dict[str, str]], names: list[str], width: int) -> None:
    name_width = max(len(n) for n in names + ["op"])
    header = (f"{'op':{name_width}s} | " + " | ".join(f"{c:{width}s}" for c in COMBINATIONS)).rstrip()
    print(header)
    print("-" * len(header))
    for name in names:
        cells = [truncate(cell_text(results[c][name]), width) for c in COMBINATIONS]
        print((f"{name:{name_width}s} | " + " | ".join(f"{text:{width}s}" for text in cells)).rstrip())
    print("-" * len(header))
    print("cells: pass, MISMATCH, EAGER FAIL, TIMEOUT, CRASH, or what torch.compile raised (full reasons below)")
    counts = [f"{c} {sum(results[c][n] == 'pass' for n in names)}/{len(names)}" for c in COMBINATIONS]
    print("passes: " + ", ".join(counts))
    for name, why in SKIPPED.items():
        print(f"skipped {name}: {why}")

    failing = [n for n in names if any(results[c][n] != "pass" for c in COMBINATIONS)]
    if failing:
        print("\nfull reasons:")
    for name in failing:
        print(f"{name}")
        by_status: dict[str, list[str]] = {}
        for c in COMBINATIONS:
            by_status.setdefault(results[c][name], []).append(c)
        for status, combinations in by_status.items():
            print(f"  {', '.join(combinations)}: {status}")


def run_all(args, names: list[str]) -> None:
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="liger_sweep_") as workdir:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {c: pool.submit(run_subprocess, c, args, names, workdir) for c in COMBINATIONS}
            results = {c: future.result() for c, future in futures.items()}
    print(f"# device={args.device}, {len(names)} ops, {time.perf_counter() - start:.0f} s "
          f"({args.jobs} at a time)\n")
    print_table(results, names, args.cell_width)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


# --- command line ------------------------------------------------------------------------

def case_names() -> list[str]:
    """The op names without importing Liger (the driver only needs the names)."""
    import ast

    with open(os.path.abspath(__file__)) as f:
        tree = ast.parse(f.read())
    build = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "build_cases")
    returned = next(node for node in ast.walk(build) if isinstance(node, ast.Return))
    return [key.value for key in returned.value.keys]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=MODES, default="ours")
    parser.add_argument("--backend", choices=BACKENDS, default="inductor")
    parser.add_argument("--device", choices=("cuda", "cpu"), default=None,
                        help="default: cuda when available (and TRITON_INTERPRET is not 1), else cpu")
    parser.add_argument("--ops", default="", help="comma-separated op names (default: all; see --list)")
    parser.add_argument("--json", help="write the results as JSON ({op: status}; with --all, per combination)")
    parser.add_argument("--all", action="store_true", help="run the 4 mode/backend combinations, print a table")
    parser.add_argument("--timeout", type=float, default=900, help="--all: seconds per combination (default 900)")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1),
                        help="--all: combinations run at a time (default: min(4, CPUs))")
    parser.add_argument("--cell-width", type=int, default=36, help="--all: table cell width (default 36)")
    parser.add_argument("--list", action="store_true", help="list the ops and the skipped Functions")
    return parser.parse_args(argv)


def default_device() -> str:
    import torch  # imports no triton

    return "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


def main(argv=None) -> None:
    args = parse_args(argv)
    known = case_names()
    if args.list:
        print("ops: " + ", ".join(known))
        for name, why in SKIPPED.items():
            print(f"skipped {name}: {why}")
        return
    names = [n.strip() for n in args.ops.split(",") if n.strip()] or known
    unknown = sorted(set(names) - set(known))
    if unknown:
        sys.exit(f"unknown ops: {', '.join(unknown)} (see --list)")
    args.device = args.device or default_device()
    if args.all:
        run_all(args, names)
    else:
        run_combination(args, names)


if __name__ == "__main__":
    main()
