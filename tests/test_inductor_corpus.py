"""Every corpus kernel through torch.compile(fullgraph=True) with inductor: the tensors after
the compiled launch equal those after an eager launch. On CPU the interpretable ones run on
the Triton interpreter; on a GPU all of them run on the GPU."""

import json
import os
import re
import subprocess
import sys

import pytest
import torch
import triton
from triton.runtime.errors import InterpreterError

from torch_triton_hop import wrap_triton

from kernels import CASES
from test_fusion_corpus import known_eager_failure

pytestmark = pytest.mark.any_device
ON_GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"
TRITON_VERSION = tuple(int(p) for p in triton.__version__.split(".")[:2])


# Results that depend on the order the GPU runs programs in: compared as sorted values.
ORDER_DEPENDENT = {"atomic_counter_scalar"}


def make_kwargs(case):
    kwargs = case.make_kwargs()
    return {k: v.cuda() if ON_GPU and isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}


def launch(case):
    kernel = wrap_triton(case.kernel)

    def fn(kwargs):
        kernel[case.grid](**kwargs)
        return kwargs

    return fn


@pytest.mark.parametrize("case", [c for c in CASES if c.interpretable or ON_GPU], ids=lambda c: c.name)
def test_compiled_launch_matches_eager(case):
    torch._dynamo.reset()
    eager_kwargs, compiled_kwargs = make_kwargs(case), make_kwargs(case)
    known = known_eager_failure(case)  # a listed limitation, asserted; any other exception fails
    if known:
        with pytest.raises(Exception, match=re.escape(known[0])):
            launch(case)(eager_kwargs)
        pytest.skip(f"does not run eagerly here either: {known[1]}")
    try:
        launch(case)(eager_kwargs)
    except InterpreterError as e:
        if TRITON_VERSION >= (3, 7):
            raise
        pytest.skip(f"triton 3.6's interpreter cannot run this kernel (loop-carried pointers): {e}")
    torch.compile(launch(case), fullgraph=True)(compiled_kwargs)
    for name, value in eager_kwargs.items():
        if isinstance(value, torch.Tensor) and case.name in ORDER_DEPENDENT:
            torch.testing.assert_close(compiled_kwargs[name].flatten().sort().values, value.flatten().sort().values)
        elif isinstance(value, torch.Tensor):
            torch.testing.assert_close(compiled_kwargs[name], value, equal_nan=True, msg=lambda m: f"{name}: {m}")


# Signature differences inductor's code generation forces and the package cannot change; the
# kernel computes the same results. See [Note: Scalar argument types under inductor].
KNOWN_SIGNATURE_DIFFERENCES = {
    "runtime_flag_do_not_specialize": "inductor makes an int argument equal to 1 a constant even where "
                                      "do_not_specialize says not to (torch 2.11-2.13)",
}


@pytest.mark.gpu
def test_inductor_compiles_every_kernel_with_the_signature_triton_compiles_eagerly():
    """For each corpus kernel, the argument types, constants and specialization attributes of the
    kernel inductor compiles equal those triton's JIT compiles for the same call eagerly."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "signature_parity.py")
    # Fusion off: a fused kernel has more parameters than the user's, which is not what this compares.
    env = {**os.environ, "TORCH_TRITON_HOP_FUSION": "0"}
    done = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=1200, env=env)
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"case"')]
    assert len(results) == len(CASES), done.stderr[-3000:]
    compared = [r for r in results if "skipped" not in r]
    differing = {r["case"]: r for r in compared if not r["equal"] and r["case"] not in KNOWN_SIGNATURE_DIFFERENCES}
    print(f"{len(compared)} kernels compared, {len(results) - len(compared)} skipped (do not run eagerly), "
          f"{len(differing)} differ")
    assert not differing, json.dumps(differing, indent=1)
