"""AOTInductor: an exported program with wrapped kernels compiles to a package that runs in
another process (GPU), and a clear error where a kernel can only be interpreted (CPU)."""

import os
import subprocess
import sys
import textwrap
import zipfile

import pytest
import torch
import triton

from torch_triton_hop import wrap_triton

import core_kernels as K

HERE = os.path.dirname(os.path.abspath(__file__))
ON_GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"


class AddThenScale(torch.nn.Module):
    """An autotuned kernel, then an in-place kernel, then a pointwise op."""

    def forward(self, x, y):
        out = torch.empty_like(x)
        wrap_triton(K.add_autotuned)[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, out, x.numel())
        K.scale_inplace[(triton.cdiv(out.numel(), 64),)](out, out.numel(), 2.0, BLOCK=64)
        return out.relu()


def export(n=1024):
    x, y = torch.randn(n, device="cuda" if ON_GPU else "cpu"), torch.randn(n, device="cuda" if ON_GPU else "cpu")
    batch = torch.export.Dim("batch", min=2, max=1 << 20)
    return torch.export.export(AddThenScale(), (x, y), dynamic_shapes=({0: batch}, {0: batch}), strict=False)


@pytest.mark.interpreter
def test_interpreted_kernels_cannot_go_into_a_package_and_the_error_says_why():
    with pytest.raises(Exception, match="runs on the Triton interpreter .* AOTInductor / cpp_wrapper code cannot call "
                                        "a Python kernel. Compile it on a GPU machine"):
        torch._inductor.aoti_compile_and_package(export())


@pytest.mark.gpu
def test_package_runs_in_another_process_at_several_sizes(tmp_path):
    path = str(tmp_path / "add_then_scale.pt2")
    torch._inductor.aoti_compile_and_package(export(), package_path=path)
    names = zipfile.ZipFile(path).namelist()
    assert any(name.endswith((".cubin", ".fatbin")) for name in names), names  # compiled kernels inside
    script = textwrap.dedent(f"""
        import torch
        runner = torch._inductor.aoti_load_package({path!r})
        for n in (7, 1000, 4096, 100003):
            x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
            torch.testing.assert_close(runner(x, y), ((x + y) * 2.0).relu())
        print("ok")
    """)
    # The loading process imports neither torch_triton_hop nor the kernels: the package is self-contained.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and "ok" in done.stdout, (done.returncode, done.stderr[-3000:])
