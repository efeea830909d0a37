"""AOTInductor: an exported program with wrapped kernels compiles to a package that runs in
another process (GPU), and a clear error where a kernel can only be interpreted (CPU)."""

import os
import re
import subprocess
import sys
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


class Plain(torch.nn.Module):
    def forward(self, x, y):
        return ((x + y) * 2.0).relu()


LOAD_SCRIPT = """
import torch
runner = torch._inductor.aoti_load_package({path!r})
for n in (7, 1000, 4096, 100003):
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    torch.testing.assert_close(runner(x, y), ((x + y) * 2.0).relu())
print("ok")
"""


def load_in_another_process(path):
    # Neither torch_triton_hop nor the kernels are importable there: the package stands alone.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", LOAD_SCRIPT.format(path=path)], capture_output=True, text=True,
                          env=env, timeout=600)


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("aoti") / "add_then_scale.pt2")
    torch._inductor.aoti_compile_and_package(export(), package_path=path)
    return path


@pytest.mark.gpu
def test_package_holds_the_compiled_kernels_and_launches_them_from_cpp(package):
    archive = zipfile.ZipFile(package)
    names = archive.namelist()
    assert sum(name.endswith(".cubin") for name in names) >= 2, names  # add_autotuned, scale_inplace (+ relu)
    (wrapper,) = [name for name in names if name.endswith(".wrapper.cpp")]
    source = archive.read(wrapper).decode()
    for kernel in ("add_autotuned", "scale_inplace"):
        assert re.search(rf"launchKernel\(kernels_\.{kernel}_\d+,", source), kernel
    assert "_tth_launch" not in source and "import torch_triton_hop" not in source


@pytest.mark.gpu
def test_package_runs_in_another_process_at_several_sizes(package, tmp_path):
    done = load_in_another_process(package)
    if done.returncode == -11:
        # Seen on the device image: aoti_load_package crashes in _load_aoti for every package.
        plain = str(tmp_path / "plain.pt2")
        x = torch.randn(64, device="cuda")
        batch = torch.export.Dim("batch", min=2, max=1 << 20)
        ep = torch.export.export(Plain(), (x, x), dynamic_shapes=({0: batch}, {0: batch}))
        torch._inductor.aoti_compile_and_package(ep, package_path=plain)
        if load_in_another_process(plain).returncode == -11:
            pytest.skip("aoti_load_package segfaults on this machine for a plain model without Triton too; "
                        "the package's contents and launch code are checked by the test above")
    assert done.returncode == 0 and "ok" in done.stdout, (done.returncode, done.stderr[-3000:])


class ResidualThenAdd(torch.nn.Module):
    """A prologue the fused kernel also stores: h feeds the kernel and h - y (see [Note: A
    prologue the fused kernel also stores])."""

    def forward(self, x, y):
        h = x * 2.0 + 1.0
        out = torch.empty_like(x)
        wrap_triton(K.add_autotuned)[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](h, y, out, x.numel())
        return out, h - y


@pytest.mark.gpu
def test_a_package_holds_a_fused_kernel_that_also_stores_its_prologue(tmp_path, caplog):
    x, y = torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")
    ep = torch.export.export(ResidualThenAdd(), (x, y), strict=False)  # static sizes: the store needs its proof
    path = str(tmp_path / "residual.pt2")
    with caplog.at_level("DEBUG", logger="torch_triton_hop._fusion"), \
            torch._inductor.config.patch(fx_graph_cache=False):
        torch._inductor.aoti_compile_and_package(ep, package_path=path)
    assert re.search(r"_tth_\w+_stored", caplog.text), caplog.text
    archive = zipfile.ZipFile(path)
    (wrapper,) = [name for name in archive.namelist() if name.endswith(".wrapper.cpp")]
    source = archive.read(wrapper).decode()
    assert re.search(r"launchKernel\(kernels_\.add_autotuned_fused_\d+,", source), source[-3000:]
