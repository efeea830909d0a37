"""Liger-Kernel's ops through wrap_triton: eager, make_fx, torch.export and torch.compile.

The user recipe (tests/liger_helpers.py): every module-level kernel that `liger_kernel.ops.*`
launches is replaced by `wrap_triton(kernel)`, so Liger's own `torch.autograd.Function`s
launch through the package. Each op is checked against a pure-torch reference, forward and
backward. On a GPU the kernels run compiled; without one, on CPU under the Triton
interpreter, with the interpreter workarounds that liger_helpers.py applies (none in the
package). Shapes are tiny: the interpreter runs every program in Python.

Failures that come from Liger's host code are marked xfail(strict=True) with the cause.
SwiGLU's backward writes its gradients into the tensors saved in forward, here the caller's
leaves (on torch 2.11 this needs the package's AOTAutograd backport). GroupNorm under torch.compile covers two
equal torch.zeros that AOTAutograd's CSE merges into one node (Mean, RSTD): separate buffers.
"""

import logging
import re
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("liger_kernel")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode  # noqa: E402
from torch._inductor.utils import run_and_get_code  # noqa: E402

from torch_triton_hop import triton_kernel_wrapper_mutation  # noqa: E402
from torch_triton_hop._wrap import TritonKernelWrapper  # noqa: E402

from generated_code import launch_arguments, launches  # noqa: E402
from liger_helpers import interpreter_float_arguments, wrap_liger_kernels  # noqa: E402

WRAPPED = wrap_liger_kernels()

from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction  # noqa: E402
from liger_kernel.ops.group_norm import LigerGroupNormFunction  # noqa: E402
from liger_kernel.ops.layer_norm import LigerLayerNormFunction  # noqa: E402
from liger_kernel.ops.rms_norm import LigerRMSNormFunction  # noqa: E402
from liger_kernel.ops.rope import LigerRopeFunction  # noqa: E402
from liger_kernel.ops.swiglu import LigerSiLUMulFunction  # noqa: E402

pytestmark = pytest.mark.any_device

HERE = os.path.dirname(os.path.abspath(__file__))
ON_GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"
DEVICE = "cuda" if ON_GPU else "cpu"
TOL = dict(atol=1e-4, rtol=1e-4)

# Liger's cross entropy host code reads tensor values: cross_entropy_forward calls
# `target_mask.sum().item()` and asserts `(target * target_mask).max() < V`. Tracing cannot
# follow either (make_fx: a data-dependent guard; Dynamo: a graph break on the assert).
CE_HOST_CODE = (
    "Liger host code: cross_entropy_forward reads tensor values (target_mask.sum().item(), "
    "assert (target * target_mask).max() < V), which tracing cannot follow"
)
# GroupNorm: group_norm_forward allocates Mean and RSTD with two identical torch.zeros((B, G));
# AOTAutograd's CSE merges them into one `full` node. A package that inferred aliasing from
# graph values gave both ONE copy (RSTD overwrote Mean, the backward was wrong); aliasing is now
# recorded at functionalization ([Note: Arguments that share memory]), and test_compile checks it.


@pytest.fixture(autouse=True)
def liger_environment():
    torch._dynamo.reset()
    with interpreter_float_arguments():
        yield
    torch._dynamo.reset()


# --- the ops and their references --------------------------------------------------------

def rms_norm_ref(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope_ref(q, k, cos, sin):
    def rotate_half(t):
        half = t.shape[-1] // 2
        return torch.cat((-t[..., half:], t[..., :half]), dim=-1)

    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def rope_inputs():
    bsz, n_head, seq, head_dim = 2, 2, 8, 16
    inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    freqs = torch.outer(torch.arange(seq, dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)[None]  # (1, seq, head_dim)
    return [torch.randn(bsz, n_head, seq, head_dim), torch.randn(bsz, n_head, seq, head_dim), emb.cos(), emb.sin()]


class Op:
    def __init__(self, name, fn, ref, make_inputs, differentiable, kernels, marks=()):
        self.name, self.fn, self.ref, self.make_inputs = name, fn, ref, make_inputs
        self.differentiable = differentiable  # indices of inputs that get gradients
        self.kernels = kernels  # the Liger kernels that forward and backward launch
        self.marks = dict(marks)  # test kind -> pytest mark

    def inputs(self, seed=0):
        torch.manual_seed(seed)
        return [t.to(DEVICE) for t in self.make_inputs()]


RMS_NORM_KERNELS = ("_rms_norm_forward_kernel", "_rms_norm_backward_kernel")
OPS = [
    Op("rms_norm_in_place",
       lambda x, w: LigerRMSNormFunction.apply(x, w, 1e-6, 0.0, "llama", True),
       rms_norm_ref, lambda: [torch.randn(4, 64), torch.randn(64)], (0, 1), RMS_NORM_KERNELS),
    Op("rms_norm_out_of_place",
       lambda x, w: LigerRMSNormFunction.apply(x, w, 1e-6, 0.0, "llama", False),
       rms_norm_ref, lambda: [torch.randn(2, 3, 64), torch.randn(64)], (0, 1), RMS_NORM_KERNELS),
    Op("swiglu", lambda a, b: LigerSiLUMulFunction.apply(a, b), lambda a, b: F.silu(a) * b,
       lambda: [torch.randn(4, 64), torch.randn(4, 64)], (0, 1), ("_swiglu_forward_kernel", "_swiglu_backward_kernel")),
    Op("rope", lambda q, k, cos, sin: LigerRopeFunction.apply(q, k, cos, sin), rope_ref, rope_inputs, (0, 1),
       ("_triton_rope",)),
    Op("layer_norm", lambda x, w, b: LigerLayerNormFunction.apply(x, w, b, 1e-5),
       lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
       lambda: [torch.randn(4, 64), torch.randn(64), torch.randn(64)], (0, 1, 2),
       ("_layer_norm_forward_kernel", "_layer_norm_backward_kernel")),
    # atomics: the backward accumulates dW and dB with tl.atomic_add; a tl.dtype constexpr argument
    Op("group_norm", lambda x, w, b: LigerGroupNormFunction.apply(x, w, b, 4, 2, 1e-5),
       lambda x, w, b: F.group_norm(x, 2, w, b, 1e-5),
       lambda: [torch.randn(2, 4, 16), torch.randn(4), torch.randn(4)], (0, 1, 2),
       ("_group_norm_forward_kernel", "_group_norm_backward_kernel")),
    # reductions (online softmax over the vocabulary); the forward writes the logits' gradient
    # into the logits, the backward scales it with element_mul_kernel (liger_kernel.ops.utils)
    Op("cross_entropy", lambda logits, target: LigerCrossEntropyFunction.apply(logits, target, None)[0],
       lambda logits, target: F.cross_entropy(logits, target),
       lambda: [torch.randn(4, 64), torch.randint(0, 64, (4,))], (0,),
       ("liger_cross_entropy_kernel", "element_mul_kernel"),
       marks={"make_fx": pytest.mark.xfail(strict=True, reason=CE_HOST_CODE,
                                           raises=(GuardOnDataDependentSymNode, RuntimeError)),
              "compile": pytest.mark.xfail(strict=True, reason=CE_HOST_CODE,
                                           raises=torch._dynamo.exc.Unsupported)}),
]


def params(kind):
    return [pytest.param(op, id=op.name, marks=[op.marks[kind]] if kind in op.marks else []) for op in OPS]


def as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def run_forward_backward(fn, op, seed=0):
    """fn's outputs and the gradients of sum(out * cotangent) w.r.t. op's differentiable inputs."""
    inputs = op.inputs(seed)
    for i in op.differentiable:
        inputs[i].requires_grad_(True)
    outs = as_tuple(fn(*inputs))
    torch.manual_seed(seed + 1)
    # Through a mul, so grad_output is a fresh tensor (Liger's in-place backward writes into it);
    # cross entropy's scalar cotangent 2.0 (not 1.0) makes its backward launch element_mul_kernel.
    cotangents = [torch.randn(o.shape, device=o.device) if o.dim() else torch.tensor(2.0, device=o.device)
                  for o in outs]
    sum((o * c).sum() for o, c in zip(outs, cotangents)).backward()
    return [o.detach() for o in outs], [inputs[i].grad for i in op.differentiable]


def check_against_reference(fn, op):
    """Returns the code inductor generated, if fn is compiled."""
    (outs, grads), code = run_and_get_code(run_forward_backward, fn, op)
    ref_outs, ref_grads = run_forward_backward(op.ref, op)
    torch.testing.assert_close(outs, ref_outs, **TOL)
    torch.testing.assert_close(grads, ref_grads, **TOL)
    return "\n".join(code)


# --- tests -------------------------------------------------------------------------------

def test_liger_kernels_are_wrapped():
    import liger_kernel.ops.rms_norm as rms_norm
    import liger_kernel.ops.swiglu as swiglu

    assert "_rms_norm_forward_kernel" in WRAPPED["liger_kernel.ops.rms_norm"]
    assert isinstance(rms_norm._rms_norm_forward_kernel, TritonKernelWrapper)
    assert not isinstance(swiglu.silu, TritonKernelWrapper)  # a helper called from kernel bodies
    assert wrap_liger_kernels() == WRAPPED  # idempotent
    assert isinstance(rms_norm._rms_norm_forward_kernel.kernel, type(swiglu.silu))  # not wrapped twice


@pytest.mark.parametrize("op", params("eager"))
def test_eager(op):
    check_against_reference(op.fn, op)


@pytest.mark.parametrize("op", params("compile"))
def test_compile(op):
    code = check_against_reference(torch.compile(op.fn, fullgraph=True), op)
    # Forward and backward launch the Liger kernels from inductor's code: on CPU through the
    # package's launch (_tth_launch(kernel='liger_kernel.ops....')), on a GPU compiled by inductor.
    for kernel in op.kernels:
        assert kernel in code, f"{kernel} is not launched from the compiled code"


def test_in_place_rms_norm_backward_launches_on_the_gradient_it_was_given():
    """Liger's in-place RMSNorm backward passes dY as dX: the compiled backward launches on the
    incoming gradient itself, with no copy of it (as eager and torch's built-in path do)."""
    op = OPS[0]
    code = check_against_reference(torch.compile(op.fn, fullgraph=True), op)
    (line,) = launches(code, "_rms_norm_backward_kernel", module="liger_kernel.ops.rms_norm")
    import liger_kernel.ops.rms_norm as rms_norm

    arguments = launch_arguments(line, rms_norm._rms_norm_backward_kernel.kernel)
    assert arguments["dY_ptr"] == arguments["dX_ptr"] and arguments["dY_ptr"].startswith("tangents"), line


@pytest.mark.parametrize("shape", [(4, 64), (2, 2, 64)], ids=["rows", "batch_seq_hidden"])
def test_residual_add_and_cast_after_rms_norm_fuse_into_the_norm_kernel(shape):
    """The user pattern of issue 13: RMSNorm, residual add, cast: one launch of Liger's forward
    kernel storing the cast sum, in inference and in a training step. On (batch, seq, hidden)
    activations Liger launches on X.view(-1, hidden) and returns Y.view(*shape)."""
    x, w, r = (torch.randn(*s, device=DEVICE) for s in (shape, (64,), shape))

    def block(x, w, r):
        return (LigerRMSNormFunction.apply(x, w, 1e-6, 0.0, "llama", False) + r).to(torch.float16)

    with interpreter_float_arguments():
        torch._dynamo.reset()
        with torch.no_grad():
            out, code = run_and_get_code(torch.compile(block, fullgraph=True), x, w, r)
        torch.testing.assert_close(out, (rms_norm_ref(x, w) + r).half(), **TOL)
        forward = [line for line in "\n".join(code).splitlines() if "_rms_norm_forward_kernel" in line
                   and ("_tth_launch(" in line or ".run(" in line)]
        assert len(forward) == 1 and "_fused" in forward[0], forward
        assert "cpp_fused" not in "\n".join(code) and "triton_poi" not in "\n".join(code)
        leaves = [t.clone().requires_grad_() for t in (x, w, r)]
        torch._dynamo.reset()
        torch.compile(block, fullgraph=True)(*leaves).float().sum().backward()
        expected = [t.clone().requires_grad_() for t in (x, w, r)]
        (rms_norm_ref(expected[0], expected[1]) + expected[2]).half().float().sum().backward()
    for got, want in zip(leaves, expected):
        torch.testing.assert_close(got.grad, want.grad, **TOL)


@pytest.mark.parametrize("narrow", [False, True], ids=["fp32", "bf16_residual_fp16_output"])
def test_a_residual_stream_fuses_into_rms_norm_with_symbolic_rows(narrow):
    """The pre-norm residual stream (`h = x + r` feeds the norm and the next layer) with the rows
    symbolic, as automatic dynamic shapes make them once the batch or sequence length changes:
    Liger's forward kernel computes h at its loads and stores it (a proof over symbolic sizes,
    see [Note: A proof over symbolic sizes, by translation]), and the compiled graph serves other
    row counts without recompiling. `narrow`: as under autocast, a residual operand and the
    norm's output narrower than the kernel's fp32 accesses, so the fused accesses carry the
    vector-width cap (see [Note: Keeping the kernel's vector width]); it fuses all the same (on
    an H100 it did not: the proof over symbolic sizes refused the cap's division)."""
    def block(x, w, r):
        h = x + r
        y = LigerRMSNormFunction.apply(h, w, 1e-6, 0.0, "llama", False)
        return (y.half() if narrow else y), h * 2.0

    def inputs(rows):
        x, r = torch.randn(rows, 64, device=DEVICE), torch.randn(rows, 64, device=DEVICE)
        r = r.bfloat16() if narrow else r
        for t in (x, r):
            torch._dynamo.mark_dynamic(t, 0)
        return x, torch.randn(64, device=DEVICE), r

    def check(args, y, h2):
        h = args[0] + args[2]
        want = rms_norm_ref(h, args[1])
        torch.testing.assert_close(y, want.half() if narrow else want, **TOL)
        torch.testing.assert_close(h2, h * 2.0, rtol=0, atol=0)

    with interpreter_float_arguments(), torch.no_grad():
        torch._dynamo.reset()
        compiled = torch.compile(block, fullgraph=True)
        args = inputs(6)
        (y, h2), code = run_and_get_code(compiled, *args)
        check(args, y, h2)
        forward = [line for line in "\n".join(code).splitlines() if "_rms_norm_forward_kernel" in line
                   and ("_tth_launch(" in line or ".run(" in line)]
        assert len(forward) == 1 and "_fused" in forward[0], forward
        assert not re.search(r"(cpp|triton_\w+)_fused_(add|_to_copy|convert)", "\n".join(code))
        with torch._dynamo.config.patch(error_on_recompile=True):
            for rows in (3, 17):
                args = inputs(rows)
                check(args, *compiled(*args))


def test_the_gradients_fuse_into_rms_norm_backward_with_symbolic_rows(caplog):
    """Training with the rows symbolic, as in a Llama layer: Liger's RMSNorm backward (in place,
    LigerRMSNorm's default) runs a fixed number of programs (the SM count), each over
    `rows_per_program = ceil(n_rows / programs)` rows in a loop. The sum of the gradients of
    the norm's two users fuses into its dY loads, and the residual stream's gradient into its
    dX stores (see [Note: A row loop of symbolic length]), as with static sizes; other row
    counts run without recompiling."""
    torch.manual_seed(0)
    weights = [torch.randn(64, 64, device=DEVICE) / 8 for _ in range(3)]

    def block(x, w, r):
        h = x + r
        y = LigerRMSNormFunction.apply(h, w, 1e-6, 0.0, "llama", True)
        return (y @ weights[0]).pow(2).sum() + (y @ weights[1]).pow(2).sum() + (h @ weights[2]).pow(2).sum()

    def reference(x, w, r):
        h = x + r
        y = rms_norm_ref(h, w)
        return (y @ weights[0]).pow(2).sum() + (y @ weights[1]).pow(2).sum() + (h @ weights[2]).pow(2).sum()

    def leaves(rows):
        made = [torch.randn(rows, 64, device=DEVICE), torch.randn(64, device=DEVICE),
                torch.randn(rows, 64, device=DEVICE)]
        for t in (made[0], made[2]):
            torch._dynamo.mark_dynamic(t, 0)
        return [t.requires_grad_() for t in made]

    def check_gradients(args):
        copies = [t.detach().clone().requires_grad_() for t in args]
        reference(*copies).backward()
        for got, want in zip(args, copies):
            torch.testing.assert_close(got.grad, want.grad, **TOL)

    with interpreter_float_arguments():
        torch._dynamo.reset()
        compiled = torch.compile(block, fullgraph=True)
        args = leaves(6)
        with caplog.at_level(logging.DEBUG, logger="torch_triton_hop._fusion"):
            _, code = run_and_get_code(lambda *a: compiled(*a).backward(), *args)
        planned = [r.getMessage()[:2000] for r in caplog.records if "launch _rms_norm_backward_kernel (kernel" in r.getMessage()]
        assert len(planned) == 1 and "fused {'dX_ptr': ['" in planned[0] and "'dY_ptr': ['add" in planned[0], planned
        backward = [line for line in "\n".join(code).splitlines() if "_rms_norm_backward_kernel" in line
                    and ("_tth_launch(" in line or ".run(" in line)]
        assert len(backward) == 1 and "_fused" in backward[0], backward
        check_gradients(args)
        with torch._dynamo.config.patch(error_on_recompile=True):
            for rows in (3, 17):
                args = leaves(rows)
                compiled(*args).backward()
                check_gradients(args)


@pytest.mark.parametrize("op", params("make_fx"))
def test_make_fx(op):
    gm = make_fx(op.fn, tracing_mode="fake")(*op.inputs())
    launches = [n for n in gm.graph.nodes if n.target is triton_kernel_wrapper_mutation]
    assert launches, gm.code
    assert all(n.kwargs["kernel"].startswith("liger_kernel.ops.") for n in launches), gm.code
    torch.testing.assert_close(as_tuple(gm(*op.inputs())), as_tuple(op.ref(*op.inputs())), **TOL)


# --- export, save, load in a fresh process -----------------------------------------------

class Block(torch.nn.Module):
    """RMSNorm, then a SwiGLU MLP: two Liger ops."""

    def __init__(self, dim=64, hidden=64):
        super().__init__()
        self.norm_weight = torch.nn.Parameter(torch.randn(dim))
        self.gate = torch.nn.Linear(dim, hidden, bias=False)
        self.up = torch.nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        h = LigerRMSNormFunction.apply(x, self.norm_weight, 1e-6, 0.0, "llama", False)
        return LigerSiLUMulFunction.apply(self.gate(h), self.up(h))

    def reference(self, x):
        h = rms_norm_ref(x, self.norm_weight)
        return F.silu(self.gate(h)) * self.up(h)


LOAD_AND_RUN = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {here!r})
    import torch
    import torch_triton_hop
    if {import_liger}:
        # The user's imports: Liger's modules, with their kernels wrapped as when the program
        # was saved (and, on CPU, the interpreter workarounds, which the kernels' keys include).
        from liger_helpers import wrap_liger_kernels
        wrap_liger_kernels()
    else:
        assert not any(m.startswith("liger_kernel") for m in sys.modules)
    from liger_helpers import interpreter_float_arguments
    x, expected = torch.load({data!r})
    ep = torch.export.load({program!r})
    torch_triton_hop.check_kernels(ep)
    with torch.no_grad(), interpreter_float_arguments():
        out = ep.module()(x)
    torch.testing.assert_close(out, expected, atol=1e-4, rtol=1e-4)
    print("fresh process OK")
""")


@pytest.mark.parametrize("resolve", ["import_and_wrap", "allowed_by_env"])
def test_export_save_load_fresh_process(tmp_path, resolve):
    if resolve == "allowed_by_env" and not ON_GPU:
        pytest.skip("on CPU the kernels' keys include the interpreter workaround (a @triton.jit rsqrt helper), "
                    "which a module imported only by the loader does not have")
    torch.manual_seed(0)
    model = Block().to(DEVICE)
    x = torch.randn(2, 3, 64, device=DEVICE)
    with torch.no_grad():
        ep = torch.export.export(model, (x,), strict=False)
        expected = model.reference(x)
        torch.testing.assert_close(ep.module()(x), expected, **TOL)
    keys = [n.kwargs["kernel"] for n in ep.graph.nodes if n.target is triton_kernel_wrapper_mutation]
    assert [k.partition("@")[0] for k in keys] == [
        "liger_kernel.ops.rms_norm:_rms_norm_forward_kernel", "liger_kernel.ops.swiglu:_swiglu_forward_kernel"]
    program, data = str(tmp_path / "block.pt2"), str(tmp_path / "data.pt")
    torch.export.save(ep, program)
    torch.save((x, expected), data)

    env = dict(os.environ)
    env.pop("TORCH_TRITON_HOP_KERNEL_MODULES", None)
    if resolve == "allowed_by_env":
        env["TORCH_TRITON_HOP_KERNEL_MODULES"] = "liger_kernel.ops.*"
    script = LOAD_AND_RUN.format(here=HERE, import_liger=resolve == "import_and_wrap", data=data, program=program)
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "fresh process OK" in result.stdout
