"""Host-side TensorDescriptor (TMA) arguments: the graph holds the tensor, each launch
rebuilds the descriptor ([Note: Host-side tensor descriptors]).

On CPU (interpreter): eager, make_fx, torch.export (saved, loaded in a fresh process) and
torch.compile of the exported program. Under torch.compile itself Dynamo models
TensorDescriptor.from_tensor only on a TMA-capable GPU (sm90+), so those tests are GPU tests.
"""

import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch
import triton
from torch._inductor.utils import run_and_get_code
from torch.fx.experimental.proxy_tensor import make_fx
from triton.tools.tensor_descriptor import TensorDescriptor

from torch_triton_hop import triton_kernel_wrapper_functional, triton_kernel_wrapper_mutation, wrap_triton
from torch_triton_hop.errors import UnsupportedTritonKernelError

import core_kernels
from core_kernels import add_rows_desc_inplace, scale_rows_desc

ON_GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"
DEVICE = "cuda" if ON_GPU else "cpu"
BLOCK_M, BLOCK_N = 16, 32


def scale_rows(x, scale=2.0):
    out = torch.empty_like(x)
    x_desc = TensorDescriptor.from_tensor(x, [BLOCK_M, BLOCK_N])
    out_desc = TensorDescriptor.from_tensor(out, [BLOCK_M, BLOCK_N])
    wrap_triton(scale_rows_desc)[(triton.cdiv(x.shape[0], BLOCK_M),)](x_desc, out_desc, scale,
                                                                     BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


def add_rows_(x, y):
    x_desc = TensorDescriptor.from_tensor(x, [BLOCK_M, BLOCK_N])
    y_desc = TensorDescriptor.from_tensor(y, [BLOCK_M, BLOCK_N])
    wrap_triton(add_rows_desc_inplace)[(triton.cdiv(x.shape[0], BLOCK_M),)](x_desc, y_desc, BLOCK_M=BLOCK_M,
                                                                           BLOCK_N=BLOCK_N)
    return x


class ScaleThenAdd(torch.nn.Module):
    def forward(self, x, y):
        out = scale_rows(x)
        add_rows_(out, y)  # in place on an intermediate
        return out.relu()


def rand(*shape):
    return torch.randn(*shape, device=DEVICE)


def reference(x, y):
    return (2.0 * x + y).relu()


pytestmark = pytest.mark.any_device


def test_eager():
    x, y = rand(40, BLOCK_N), rand(40, BLOCK_N)
    torch.testing.assert_close(ScaleThenAdd()(x, y), reference(x, y))


def test_make_fx_records_the_tensor_and_the_block_shape():
    gm = make_fx(ScaleThenAdd(), tracing_mode="symbolic")(rand(40, BLOCK_N), rand(40, BLOCK_N))
    nodes = [n for n in gm.graph.nodes if n.target is triton_kernel_wrapper_mutation]
    assert [n.kwargs["constant_args"] for n in nodes] == [
        '{"out_desc":{"tensor_descriptor":{"block_shape":[16,32]}},"x_desc":{"tensor_descriptor":{"block_shape":[16,32]}}}',
        '{"x_desc":{"tensor_descriptor":{"block_shape":[16,32]}},"y_desc":{"tensor_descriptor":{"block_shape":[16,32]}}}',
    ]
    assert all(isinstance(nodes[0].kwargs["kwargs"][name], torch.fx.Node) for name in ("x_desc", "out_desc"))
    x, y = rand(72, BLOCK_N), rand(72, BLOCK_N)  # another size: the descriptors are rebuilt per launch
    torch.testing.assert_close(gm(x, y), reference(x, y))


def test_functionalization_clones_only_what_the_kernel_writes_through_a_descriptor():
    ep = torch.export.export(ScaleThenAdd(), (rand(40, BLOCK_N), rand(40, BLOCK_N)), strict=False)
    nodes = [n for n in ep.run_decompositions().graph.nodes if n.target is triton_kernel_wrapper_functional]
    assert [n.kwargs["tensors_to_clone"] for n in nodes] == [["out_desc"], ["x_desc"]]


def test_export_saved_and_loaded_in_a_fresh_process(tmp_path):
    n = torch.export.Dim("n", min=BLOCK_M)
    ep = torch.export.export(ScaleThenAdd(), (rand(40, BLOCK_N), rand(40, BLOCK_N)),
                             dynamic_shapes=({0: n}, {0: n}), strict=False)
    torch.export.save(ep, tmp_path / "program.pt2")
    script = textwrap.dedent(f"""
        import torch, core_kernels
        module = torch.export.load({str(tmp_path / "program.pt2")!r}).module()
        for size in (40, 100):
            x, y = torch.randn(size, 32, device={DEVICE!r}), torch.randn(size, 32, device={DEVICE!r})
            torch.testing.assert_close(module(x, y), (2.0 * x + y).relu())
        print("ok")
    """)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(__file__) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert result.stdout.strip() == "ok", result.stderr[-3000:]


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_an_exported_program_compiles(backend):
    ep = torch.export.export(ScaleThenAdd(), (rand(40, BLOCK_N), rand(40, BLOCK_N)), strict=False)
    compiled = torch.compile(ep.module(), fullgraph=True, backend=backend)
    x, y = rand(40, BLOCK_N), rand(40, BLOCK_N)
    torch.testing.assert_close(compiled(x, y), reference(x, y))


def test_a_descriptor_that_is_not_its_tensors_shape_is_refused():
    x = rand(64, BLOCK_N)
    rows = TensorDescriptor(x, [32, BLOCK_N], list(x.stride()), [BLOCK_M, BLOCK_N])  # the first 32 rows

    def fn(x):
        out = torch.empty_like(x)
        wrap_triton(scale_rows_desc)[(2,)](rows, TensorDescriptor.from_tensor(out, [BLOCK_M, BLOCK_N]), 2.0,
                                           BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
        return out

    with pytest.raises(UnsupportedTritonKernelError,
                       match=r"argument 'x_desc' .* shape \[32, 32\] and strides \[32, 1\] are not its tensor's"):
        make_fx(fn)(x)


def test_compile_without_fullgraph_gives_the_programs_result():
    """On CPU Dynamo breaks the graph at TensorDescriptor.from_tensor and runs that code as
    Python, the launch included (before, it traced into triton's interpreter and raised
    InternalTorchDynamoError); on a GPU it builds the descriptors in the graph."""
    torch._dynamo.reset()
    x, y = rand(40, BLOCK_N), rand(40, BLOCK_N)
    torch.testing.assert_close(torch.compile(ScaleThenAdd())(x, y), reference(x, y))


# --- torch.compile: Dynamo models TensorDescriptor.from_tensor on sm90+ GPUs only ---------

def _tma_gpu():
    return ON_GPU and torch.cuda.get_device_capability() >= (9, 0)


needs_tma_gpu = pytest.mark.skipif(not _tma_gpu(), reason="Dynamo models TensorDescriptor.from_tensor on sm90+ only")


@pytest.mark.gpu
@needs_tma_gpu
@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_with_inductor_builds_the_descriptors_in_generated_code(dynamic):
    compiled = torch.compile(ScaleThenAdd(), fullgraph=True, dynamic=dynamic)
    x, y = rand(40, BLOCK_N), rand(40, BLOCK_N)
    out, codes = run_and_get_code(compiled, x, y)
    torch.testing.assert_close(out, reference(x, y))
    code = "\n".join(codes)
    assert len(re.findall(r"TensorDescriptor\.from_tensor\(", code)) >= 3, code
    assert re.search(r"scale_rows_desc\w*\.run\(", code) and re.search(r"add_rows_desc_inplace\w*\.run\(", code), code
    x, y = rand(72, BLOCK_N), rand(72, BLOCK_N)
    torch.testing.assert_close(compiled(x, y), reference(x, y))


@pytest.mark.gpu
@needs_tma_gpu
def test_compile_with_aot_eager_and_strict_export():
    x, y = rand(40, BLOCK_N), rand(40, BLOCK_N)
    torch.testing.assert_close(torch.compile(ScaleThenAdd(), fullgraph=True, backend="aot_eager")(x, y),
                               reference(x, y))
    ep = torch.export.export(ScaleThenAdd(), (x, y), strict=True)
    torch.testing.assert_close(ep.module()(x, y), reference(x, y))


@pytest.mark.gpu
@needs_tma_gpu
def test_aotinductor_package_builds_the_descriptors_in_cpp(tmp_path):
    import zipfile

    n = torch.export.Dim("n", min=BLOCK_M)
    ep = torch.export.export(ScaleThenAdd(), (rand(40, BLOCK_N), rand(40, BLOCK_N)),
                             dynamic_shapes=({0: n}, {0: n}), strict=False)
    path = str(tmp_path / "tma.pt2")
    torch._inductor.aoti_compile_and_package(ep, package_path=path)
    archive = zipfile.ZipFile(path)
    (wrapper,) = [name for name in archive.namelist() if name.endswith(".wrapper.cpp")]
    source = archive.read(wrapper).decode()
    assert len(re.findall(r"^\s*initTMADescriptor\(", source, re.M)) >= 3, source  # 4 arguments, 3+ tensors
    for kernel in ("scale_rows_desc", "add_rows_desc_inplace"):
        assert re.search(rf"launchKernel\(kernels_\.{kernel}_\d+,", source), kernel


# --- autotuned, with Config pre_hooks that set block shapes per config -------------------
# See [Note: Config pre_hooks the graph records]

# Wrapped outside the compiled code: Dynamo refuses to even load a raw autotuner whose configs
# have pre_hooks (torch's own check, when the global is read), so wrap_triton(...) inside
# a compiled function cannot see it.
SCALE_ROWS_AUTOTUNED = wrap_triton(core_kernels.scale_rows_desc_autotuned)


def scale_rows_autotuned(x, kernel=SCALE_ROWS_AUTOTUNED):
    out = torch.empty_like(x)
    dummy = [1, 1]  # the pre_hook of the chosen config sets the real block shapes
    x_desc, out_desc = TensorDescriptor.from_tensor(x, dummy), TensorDescriptor.from_tensor(out, dummy)
    grid = lambda meta: (triton.cdiv(x.shape[0], meta["BLOCK_M"]),)  # noqa: E731
    kernel[grid](x_desc, out_desc, x.shape[0], 3.0, BLOCK_N=BLOCK_N)
    return out


class ScaleAutotuned(torch.nn.Module):
    def forward(self, x):
        return scale_rows_autotuned(x).relu()


def test_autotuned_pre_hooks_are_recorded_as_block_shapes_per_config():
    x = rand(80, BLOCK_N)
    torch.testing.assert_close(scale_rows_autotuned(x), 3.0 * x)
    gm = make_fx(ScaleAutotuned(), tracing_mode="symbolic")(x)
    (node,) = [n for n in gm.graph.nodes if n.target is triton_kernel_wrapper_mutation]
    import json

    assert [c["block_shapes"] for c in json.loads(node.kwargs["configs"])] == [
        {"out_desc": [16, 32], "x_desc": [16, 32]}, {"out_desc": [32, 32], "x_desc": [32, 32]}]
    for size in (80, 48):
        x = rand(size, BLOCK_N)
        torch.testing.assert_close(gm(x), (3.0 * x).relu())


@pytest.mark.skipif(ON_GPU, reason="the interpreter runs one chosen config; on a GPU the autotuner picks")
def test_the_config_the_interpreter_runs_sets_its_block_shapes():
    from core_kernels import scale_rows_desc_autotuned

    kernel = wrap_triton(scale_rows_desc_autotuned, interpreter_config=1)  # BLOCK_M 32: 32-row blocks
    gm = make_fx(lambda x: scale_rows_autotuned(x, kernel))(rand(80, BLOCK_N))
    x = rand(80, BLOCK_N)
    torch.testing.assert_close(gm(x), 3.0 * x)


def test_autotuned_descriptors_export_and_compile_the_exported_program(tmp_path):
    n = torch.export.Dim("n", min=BLOCK_M)
    ep = torch.export.export(ScaleAutotuned(), (rand(80, BLOCK_N),), dynamic_shapes=({0: n},), strict=False)
    torch.export.save(ep, tmp_path / "program.pt2")
    module = torch.export.load(tmp_path / "program.pt2").module()
    compiled = torch.compile(module, fullgraph=True)
    for size in (80, 48):
        x = rand(size, BLOCK_N)
        torch.testing.assert_close(module(x), (3.0 * x).relu())
        torch.testing.assert_close(compiled(x), (3.0 * x).relu())


def _hook_reading_a_runtime_argument(nargs):
    nargs["x_desc"].block_shape = [nargs["M"], 32]


@pytest.mark.parametrize("hook, message", [
    (_hook_reading_a_runtime_argument, "a triton.Config pre_hook of kernel 'scale_rows_desc_autotuned' uses argument 'M'"),
])
def test_pre_hooks_that_do_more_than_set_block_shapes_are_refused(hook, message):
    from core_kernels import scale_rows_desc_autotuned

    kernel = triton.autotune([triton.Config({"BLOCK_M": 16}, pre_hook=hook)], key=["M"])(
        scale_rows_desc_autotuned.fn)
    with pytest.raises(UnsupportedTritonKernelError, match=re.escape(message)):
        make_fx(lambda x: scale_rows_autotuned(x, wrap_triton(kernel)))(rand(32, BLOCK_N))


@pytest.mark.gpu
@needs_tma_gpu
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compile_autotuned_descriptors(backend):
    compiled = torch.compile(ScaleAutotuned(), fullgraph=True, backend=backend, dynamic=True)
    for size in (80, 48, 200):
        x = rand(size, BLOCK_N)
        out, codes = run_and_get_code(compiled, x)
        torch.testing.assert_close(out, (3.0 * x).relu())
    if backend == "inductor":
        assert "_tth_launch(kernel='core_kernels:scale_rows_desc_autotuned@" in "\n".join(codes), codes


@pytest.mark.gpu
@needs_tma_gpu
def test_aotinductor_refuses_per_config_block_shapes_saying_why():
    ep = torch.export.export(ScaleAutotuned(), (rand(80, BLOCK_N),), strict=False)
    with pytest.raises(Exception, match="pre_hooks set descriptor block shapes or zero arguments, which inductor's "
                       "generated launch cannot do, and AOTInductor / cpp_wrapper code cannot call a Python kernel"):
        torch._inductor.aoti_compile_and_package(ep)
