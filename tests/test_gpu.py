"""What only a GPU shows: real launches, real autotuning, exported programs on CUDA.

Run on a GPU machine with the interpreter off: TRITON_INTERPRET=0 python -m pytest -m gpu tests
"""

import os
import subprocess
import sys
import tempfile
import textwrap

import pytest
import torch
import triton
from torch.fx.experimental.proxy_tensor import make_fx

from torch_triton_hop import wrap_triton

import core_kernels as K

pytestmark = pytest.mark.gpu
HERE = os.path.dirname(os.path.abspath(__file__))


def _grid(meta):
    return (triton.cdiv(meta["n"], meta["BLOCK"]),)


def add(x, y):
    out = torch.empty_like(x)
    wrap_triton(K.add_autotuned)[_grid](x, y, out, x.numel())
    return out


def test_real_launch_eager_and_traced():
    x, y = torch.randn(5000, device="cuda"), torch.randn(5000, device="cuda")
    torch.testing.assert_close(add(x, y), x + y)
    gm = make_fx(torch.func.functionalize(add), tracing_mode="symbolic")(x, y)
    x2, y2 = torch.randn(777, device="cuda"), torch.randn(777, device="cuda")
    torch.testing.assert_close(gm(x2, y2), x2 + y2)


def test_autotuning_benchmarks_every_traced_config_and_keeps_restore_value():
    """The rebuilt autotuner tunes over the traced configs; restore_value keeps out intact while benchmarking."""
    x, y = torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")

    def f(x, y):
        out = torch.zeros_like(x)
        wrap_triton(K.add_pruned)[_grid](x, y, out, x.numel())
        return out

    gm = make_fx(f)(x, y)
    torch.testing.assert_close(gm(x, y), x + 1.0)


def test_exported_program_runs_on_cuda_in_a_fresh_process():
    class M(torch.nn.Module):
        def forward(self, x, y):
            return add(x, y)

    x, y = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    n = torch.export.Dim("n")
    ep = torch.export.export(M(), (x, y), dynamic_shapes=({0: n}, {0: n}))
    path = os.path.join(tempfile.mkdtemp(), "m.pt2")
    torch.export.save(ep, path)
    script = textwrap.dedent(f"""
        import torch, torch_triton_hop
        ep = torch.export.load({path!r})
        x, y = torch.randn(3000, device="cuda"), torch.randn(3000, device="cuda")
        torch.testing.assert_close(ep.module()(x, y), x + y)
        print("ok")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": HERE + os.pathsep + os.environ.get("PYTHONPATH", ""),
                                 "TORCH_TRITON_HOP_KERNEL_MODULES": "core_kernels"})
    assert result.returncode == 0, result.stderr[-3000:]


def test_compile_fullgraph_on_cuda():
    compiled = torch.compile(add, backend="aot_eager", fullgraph=True, dynamic=True)
    x, y = torch.randn(3333, device="cuda"), torch.randn(3333, device="cuda")
    torch.testing.assert_close(compiled(x, y), x + y)
