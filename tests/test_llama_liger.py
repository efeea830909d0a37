"""A HuggingFace Llama with Liger-Kernel's ops launched through wrap_triton: eager, torch.compile
of a training step, torch.export of the forward (saved, loaded here and in a fresh process).

The model is ``transformers.LlamaForCausalLM`` from a tiny ``LlamaConfig`` (random init,
nothing downloaded), patched with Liger's own ``apply_liger_kernel_to_llama(rope=True,
rms_norm=True, swiglu=True, cross_entropy=False, fused_linear_cross_entropy=False,
model=...)``, with Liger's kernels replaced by their wrappers (tests/liger_helpers.py). The
reference is the same model unpatched. On CPU the kernels run on the Triton interpreter.

Liger routes RoPE through its dispatcher, which it marks ``@torch.compiler.disable``: under
torch.compile RoPE runs eagerly between graphs (the graph breaks are Liger's, and are
checked to be the only ones); non-strict torch.export does not stop there and captures it.
The benchmark on a GPU is benchmarks/llama_liger.py.
"""

import contextlib
import copy
import logging
import os
import re
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("transformers")
pytest.importorskip("liger_kernel")

import torch  # noqa: E402
from torch._inductor.utils import run_and_get_code  # noqa: E402

from torch_triton_hop import triton_kernel_wrapper_mutation  # noqa: E402
from torch_triton_hop._side_table import base_kernel  # noqa: E402
from torch_triton_hop._wrap import TritonKernelWrapper  # noqa: E402

from generated_code import launches  # noqa: E402
from liger_helpers import interpreter_float_arguments, wrap_liger_kernels  # noqa: E402

WRAPPED = wrap_liger_kernels()

from liger_kernel.transformers import apply_liger_kernel_to_llama  # noqa: E402
from liger_kernel.transformers.rope import liger_rotary_pos_emb  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402
from transformers.models.llama import modeling_llama  # noqa: E402

pytestmark = pytest.mark.any_device

HERE = os.path.dirname(os.path.abspath(__file__))
ON_GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"
DEVICE = "cuda" if ON_GPU else "cpu"
TOL = dict(atol=1e-4, rtol=1e-4)
CONFIG = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
              intermediate_size=128, vocab_size=128, max_position_embeddings=64, use_cache=False,
              attn_implementation="sdpa")
BATCH, SEQ, LAYERS = 2, 16, CONFIG["num_hidden_layers"]
# What Liger's Llama patch swaps in modeling_llama, for the whole process.
PATCHED = ("apply_rotary_pos_emb", "LlamaRMSNorm", "LlamaMLP")
# The kernels one training step launches: (module, name), forward and backward.
RMS_NORM = ("liger_kernel.ops.rms_norm", ("_rms_norm_forward_kernel", "_rms_norm_backward_kernel"))
SWIGLU = ("liger_kernel.ops.swiglu", ("_swiglu_forward_kernel", "_swiglu_backward_kernel"))
ROPE = ("liger_kernel.ops.rope", ("_triton_rope",))


@pytest.fixture(autouse=True)
def liger_environment():
    torch._dynamo.reset()
    original = {name: getattr(modeling_llama, name) for name in PATCHED}
    with interpreter_float_arguments():
        yield
    for name, value in original.items():  # leave transformers as other tests expect it
        setattr(modeling_llama, name, value)
    torch._dynamo.reset()


class Models:
    """The plain model and its Liger copy (same initial weights), and the global each runs with."""

    def __init__(self):
        self.original_rope = modeling_llama.apply_rotary_pos_emb
        torch.manual_seed(0)
        self.plain = LlamaForCausalLM(LlamaConfig(**CONFIG)).to(DEVICE)
        self.liger = copy.deepcopy(self.plain)
        apply_liger_kernel_to_llama(rope=True, rms_norm=True, swiglu=True, cross_entropy=False,
                                    fused_linear_cross_entropy=False, model=self.liger)
        # Premises: Liger's patch took (the instance's modules, the module's RoPE), and its
        # modules launch our wrappers.
        assert modeling_llama.apply_rotary_pos_emb is liger_rotary_pos_emb
        assert self.liger.model.norm._get_name() == "LigerRMSNorm"
        assert self.liger.model.layers[0].mlp._get_name() == "LigerSwiGLUMLP"
        for module, names in (RMS_NORM, SWIGLU, ROPE):
            for name in names:
                assert isinstance(getattr(sys.modules[module], name), TritonKernelWrapper), (module, name)
        torch.manual_seed(1)
        self.ids = torch.randint(0, CONFIG["vocab_size"], (BATCH, SEQ), device=DEVICE)

    def use(self, model):
        """Set the RoPE global that `model` runs with (Liger's patch set it for everyone)."""
        modeling_llama.apply_rotary_pos_emb = liger_rotary_pos_emb if model is self.liger else self.original_rope

    def loss(self, model, runner=None):
        self.use(model)
        return (model if runner is None else runner)(input_ids=self.ids, labels=self.ids).loss


@pytest.fixture
def models():
    return Models()


def gradients(model):
    return {name: p.grad.clone() for name, p in model.named_parameters()}


@pytest.fixture
def launched(monkeypatch):
    """Names of the wrapped kernels launched eagerly while the test runs."""
    names = []
    getitem = TritonKernelWrapper.__getitem__

    def spy(self, grid):
        names.append(base_kernel(self.kernel).fn.__name__)
        return getitem(self, grid)

    monkeypatch.setattr(TritonKernelWrapper, "__getitem__", spy)
    return names


def test_eager_liger_through_wrap_triton_matches_plain_llama(models, launched):
    expected = models.loss(models.plain)
    expected.backward()
    got = models.loss(models.liger)
    got.backward()
    torch.testing.assert_close(got, expected, **TOL)
    torch.testing.assert_close(gradients(models.liger), gradients(models.plain), **TOL)
    # Premise: Liger's kernels ran, through the wrappers (one RMSNorm per layer's two norms and
    # the final one, SwiGLU and RoPE per layer; forward and backward).
    counts = {name: launched.count(name) for name in set(launched)}
    assert counts == {"_rms_norm_forward_kernel": 2 * LAYERS + 1, "_rms_norm_backward_kernel": 2 * LAYERS + 1,
                      "_swiglu_forward_kernel": LAYERS, "_swiglu_backward_kernel": LAYERS,
                      "_triton_rope": 2 * LAYERS}, counts


def training_steps(models, model, runner, steps=2, lr=0.1):
    """Losses of `steps` SGD steps, the last step's gradients, and the weights after them."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        loss = models.loss(model, runner)
        loss.backward()
        grads = gradients(model)
        optimizer.step()
        losses.append(loss.detach())
    return losses, grads, {name: p.detach().clone() for name, p in model.named_parameters()}


def test_compiled_training_step_matches_eager(models):
    eager = training_steps(models, models.plain, None)
    counters = torch._dynamo.utils.counters
    counters.clear()
    with torch._inductor.config.patch(force_disable_caches=True):  # the code of every graph, none from a cache
        compiled, code = run_and_get_code(training_steps, models, models.liger, torch.compile(models.liger))
    models.use(models.plain)
    torch.testing.assert_close(compiled, eager, **TOL)
    code = "\n".join(code)
    # Premises: inductor's code launches Liger's RMSNorm and SwiGLU kernels, forward and
    # backward; RoPE is not compiled (Liger's compiler.disable), and those are the only breaks.
    for module, names in (RMS_NORM, SWIGLU):
        for name in names:
            assert launches(code, name, module=module), f"{name} is not launched from the compiled code"
    assert not launches(code, "_triton_rope", module=ROPE[0])
    breaks = dict(counters["graph_break"])
    assert breaks and all("torch.compiler.disable" in reason and "dispatch" in reason for reason in breaks), breaks


def test_a_changing_sequence_length_keeps_the_fusion(models, caplog):
    """Training at a second sequence length: Dynamo's automatic dynamic shapes compile the graphs
    again with the length symbolic. That compile fuses what the first did (the residual add into
    the RMSNorm forward; the gradients into its backward, which loops over a symbolic number of
    rows per program: see [Note: A row loop of symbolic length]), a third length runs those
    graphs without recompiling, and each step's loss, gradients and weights equal plain eager's."""
    compiled = torch.compile(models.liger)

    def fused_arguments() -> list:
        found = []
        for record in caplog.records:
            message = record.getMessage()
            if message.startswith("launch ") and "): fused {" in message:
                kernel = message.split("(kernel ", 1)[1].split(")", 1)[0]
                found.append((kernel, tuple(sorted(re.findall(r"'(\w+)': \[", message.split("): fused ", 1)[1].split(
                    "; not fused", 1)[0])))))
        return sorted(found)

    fused = {}
    for seq in (SEQ, SEQ + 8, SEQ + 4):
        torch.manual_seed(seq)
        models.ids = torch.randint(0, CONFIG["vocab_size"], (BATCH, seq), device=DEVICE)
        eager = training_steps(models, models.plain, None, steps=1)
        caplog.clear()
        recompiles = torch._dynamo.config.patch(error_on_recompile=True) if seq == SEQ + 4 else contextlib.nullcontext()
        # No graph from inductor's cache (an earlier test compiles this model at SEQ): each
        # compile runs the fusion pass, whose decisions are compared.
        with caplog.at_level(logging.DEBUG, logger="torch_triton_hop._fusion"), recompiles, \
                torch._inductor.config.patch(force_disable_caches=True):
            got = training_steps(models, models.liger, compiled, steps=1)
        models.use(models.plain)
        torch.testing.assert_close(got, eager, **TOL)
        fused[seq] = fused_arguments()
    assert fused[SEQ] and fused[SEQ + 8] == fused[SEQ] and not fused[SEQ + 4], fused


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids).logits


LOAD_AND_RUN = textwrap.dedent("""
    import sys
    sys.path.insert(0, {here!r})
    import torch
    import torch_triton_hop
    # The user's imports: Liger's modules, with their kernels wrapped as when the program was
    # saved (on CPU with the interpreter workarounds, which the kernels' keys include).
    from liger_helpers import interpreter_float_arguments, wrap_liger_kernels
    wrap_liger_kernels()
    ids, expected = torch.load({data!r})
    ep = torch.export.load({program!r})
    torch_triton_hop.check_kernels(ep)
    with torch.no_grad(), interpreter_float_arguments():
        out = ep.module()(ids)
    torch.testing.assert_close(out, expected, atol=1e-4, rtol=1e-4)
    print("fresh process OK")
""")


def test_export_forward_save_load_fresh_process(models, tmp_path):
    with torch.no_grad():
        models.use(models.plain)
        expected = Logits(models.plain)(models.ids)
        models.use(models.liger)
        ep = torch.export.export(Logits(models.liger), (models.ids,), strict=False)
        torch.testing.assert_close(ep.module()(models.ids), expected, **TOL)
    keys = [n.kwargs["kernel"].partition("@")[0] for n in ep.graph.nodes if n.target is triton_kernel_wrapper_mutation]
    # Premise: every Liger launch of the forward is a node of our HOP, RoPE's too.
    counts = {key: keys.count(key) for key in set(keys)}
    assert counts == {"liger_kernel.ops.rms_norm:_rms_norm_forward_kernel": 2 * LAYERS + 1,
                      "liger_kernel.ops.swiglu:_swiglu_forward_kernel": LAYERS,
                      "liger_kernel.ops.rope:_triton_rope": LAYERS}, counts

    program, data = str(tmp_path / "llama.pt2"), str(tmp_path / "data.pt")
    torch.export.save(ep, program)
    torch.save((models.ids, expected), data)
    with torch.no_grad():
        torch.testing.assert_close(torch.export.load(program).module()(models.ids), expected, **TOL)

    env = dict(os.environ)
    env.pop("TORCH_TRITON_HOP_KERNEL_MODULES", None)
    script = LOAD_AND_RUN.format(here=HERE, data=data, program=program)
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "fresh process OK" in result.stdout
