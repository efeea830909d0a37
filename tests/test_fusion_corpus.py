"""Pointwise code around every corpus kernel under torch.compile: a prologue on each tensor the
kernel only reads, an epilogue on each tensor it only writes into a fresh buffer. Wherever the
fusion pass takes them (see [Note: Fusing pointwise code into user kernels]) the compiled
results equal eager's; where it refuses, they must still. The corpus covers the ways kernels
address memory (strides, int64 offsets, pointer shape ops, hints, loops, masks, bitcasts, ...).

Elements a kernel does not write stay undefined in a fresh torch.empty, so epilogue results are
compared where eager writes: found by running eager into buffers filled with 0 and with 1.
"""

import os

import pytest
import torch
from torch._inductor.utils import run_and_get_code
from triton.runtime.errors import InterpreterError

from torch_triton_hop import wrap_triton
from torch_triton_hop._hops import alias_groups

from kernels import CASES

pytestmark = pytest.mark.any_device
ON_GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"
ORDER_DEPENDENT = {"atomic_counter_scalar"}
RAN, FUSED = [], []  # cases compiled, and those where something fused


def make_kwargs(case):
    kwargs = case.make_kwargs()
    return {k: v.cuda() if ON_GPU and isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}


def floating(value):
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def program(case, fill=None, views=False):
    """The launch with a prologue on read-only inputs and an epilogue on written-only outputs;
    outputs in torch.empty buffers (fill=None) or filled ones (to see what eager writes).
    views: the pointwise code works on flattened views (reshape(-1), then back), as code
    around kernels launched on `x.view(-1, dim)` does."""

    def flat(t):
        return t.reshape(-1) if views else t

    def back(t, like):
        return t.reshape(like.shape) if views else t

    kernel = wrap_triton(case.kernel)
    kwargs = make_kwargs(case)
    inputs = [n for n in case.reads if n not in case.writes and floating(kwargs[n])]
    outputs = [n for n in case.writes if n not in case.reads and floating(kwargs[n])]

    def fn(kw):
        kw = dict(kw)
        for name in inputs:
            kw[name] = back(flat(kw[name]) * 1.5 - 0.25, kw[name])
        for name in outputs:
            kw[name] = torch.empty_strided(kw[name].size(), kw[name].stride(), dtype=kw[name].dtype,
                                           device=kw[name].device)
            if fill is not None:
                kw[name].fill_(fill)
        kernel[case.grid](**kw)
        return {name: back(flat(kw[name]) * 3.0 + 1.0, kw[name]) for name in outputs}

    return fn, kwargs, inputs, outputs


def eligible(case):
    kwargs = case.make_kwargs()
    return (case.name not in ORDER_DEPENDENT and (case.interpretable or ON_GPU)
            and not alias_groups(kwargs, set(kwargs)))


@pytest.mark.parametrize("case", [c for c in CASES if eligible(c)], ids=lambda c: c.name)
@pytest.mark.parametrize("variant", ["static", "views_dynamic"])
def test_pointwise_code_around_the_kernel_compiles_to_eager_results(case, variant):
    """views_dynamic: the pointwise code on reshaped views, compiled with dynamic=True (every size
    symbolic: broadcast index arithmetic takes sizes as arguments, views' sizes are rebuilt)."""
    views = variant == "views_dynamic"
    fn, kwargs, inputs, outputs = program(case, views=views)
    if not inputs and not outputs:
        pytest.skip("no floating-point tensor only read or only written")
    try:
        zeros = program(case, fill=0.0, views=views)[0](make_kwargs(case))
        ones = program(case, fill=1.0, views=views)[0](make_kwargs(case))
    except InterpreterError as e:  # triton 3.6's interpreter cannot run loop-carried pointers
        pytest.skip(f"triton's interpreter cannot run this kernel: {e}")
    except Exception as e:  # noqa: BLE001 - e.g. ptxas refusing a cache-modifier combination
        if not ON_GPU:
            raise
        pytest.skip(f"the kernel does not run eagerly on this GPU either: {type(e).__name__}: {str(e)[:200]}")
    torch._dynamo.reset()
    result, code = run_and_get_code(torch.compile(fn, fullgraph=True, dynamic=views), kwargs)
    RAN.append((case.name, variant))
    if any("torch_triton_hop.fused:" in c or "_fused_0.run(" in c for c in code):
        FUSED.append((case.name, variant))
    for name in outputs:
        written = (zeros[name] == ones[name]) | (zeros[name].isnan() & ones[name].isnan())
        torch.testing.assert_close(result[name][written], zeros[name][written], equal_nan=True,
                                   msg=lambda m: f"{name}: {m}")


def test_the_corpus_exercises_the_fusion():
    """Runs after the cases above (same module): in each variant most corpus kernels got a fused
    prologue or epilogue, so the comparisons above tested fused code, not only refusals (57 of
    75 on CPU in each)."""
    for variant in ("static", "views_dynamic"):
        ran = [name for name, v in RAN if v == variant]
        fused = [name for name, v in FUSED if v == variant]
        if len(ran) < 40:
            pytest.skip("needs the corpus cases of this module to have run first")
        assert len(fused) >= 0.6 * len(ran), (variant, len(fused), len(ran), sorted(set(ran) - set(fused)))
