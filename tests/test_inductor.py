"""torch.compile with the default backend (inductor) compiles wrapped kernels.

Run on CPU under the Triton interpreter (the generated code calls our launch through an
extern kernel) and, unchanged, on a GPU (the generated code launches the kernel that
inductor compiled). Generated-code checks look for the launch and for the absence of
clones and copies, not at whole files, which change between torch versions.
"""

import os
import re
import subprocess
import sys
import textwrap
from unittest.mock import ANY

import pytest
import torch
import triton
import triton.language as tl

from torch_triton_hop import wrap_triton

from generated_code import ON_GPU, compile_and_code, copies, launch_arguments, launches

from core_kernels import (
    add_autotuned,
    add_heuristics_above,
    add_heuristics_below,
    add_kernel,
    add_pruned,
    add_rows,
    mul_kernel,
    scale_inplace,
    swiglu_backward_in_place,
    swiglu_forward,
    two_outputs,
    uses_num_warps,
)

pytestmark = pytest.mark.any_device
HERE = os.path.dirname(os.path.abspath(__file__))
DEVICE = "cuda" if ON_GPU else "cpu"


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def grid_1d(meta):
    n = meta["n"]
    if not isinstance(n, (int, torch.SymInt)):  # triton 3.6's interpreter passes a 1-element tensor that numpy 2 cannot index()
        n = int(n.handle.data.item())
    return ((n + meta["BLOCK"] - 1) // meta["BLOCK"],)


def rand(*shape):
    return torch.randn(*shape, device=DEVICE)


# --- the four reinplacing cases ------------------------------------------------------

def write_into_empty_like(x, y):
    out = torch.empty_like(x)
    wrap_triton(add_kernel)[grid_1d](x, y, out, x.numel(), BLOCK=16)
    return out


def in_place_on_input(x):
    scale_inplace[grid_1d](x, x.numel(), 2.0, BLOCK=16)
    return x


def in_place_on_view_of_input(x):
    view = x[2:]
    scale_inplace[grid_1d](view, view.numel(), 2.0, BLOCK=16)
    return x


def two_kernels_in_a_row(x, y):
    out = torch.empty_like(x)
    wrap_triton(add_kernel)[grid_1d](x, y, out, x.numel(), BLOCK=16)
    scale_inplace[grid_1d](out, out.numel(), 3.0, BLOCK=16)
    return out


REINPLACE_CASES = {
    "empty_like_output": (write_into_empty_like, 2, ["add_kernel"]),
    "in_place_on_input": (in_place_on_input, 1, ["scale_inplace"]),
    "in_place_on_view_of_input": (in_place_on_view_of_input, 1, ["scale_inplace"]),
    "two_kernels_in_a_row": (two_kernels_in_a_row, 2, ["add_kernel", "scale_inplace"]),
}


@pytest.mark.parametrize("case", list(REINPLACE_CASES))
def test_written_tensors_are_not_cloned(case):
    """Each launch writes in place; the generated code holds the launches and no copy."""
    fn, n_inputs, kernels = REINPLACE_CASES[case]
    inputs = [rand(40) for _ in range(n_inputs)]
    eager_inputs = [t.clone() for t in inputs]
    expected = fn(*eager_inputs)
    out, code = compile_and_code(fn, *inputs)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(inputs, eager_inputs)  # inputs mutated exactly as eagerly
    for kernel in kernels:
        assert len(launches(code, kernel)) == 1, code
    assert copies(code) == [], code
    if ON_GPU:
        assert "_tth_launch" not in code, code  # no Python call of our launch path


def test_reinplacing_pass_clones_only_what_a_later_use_needs():
    """A functional launch writing an empty_like output and an input the program never
    mutates: the pass writes the output in place and clones the input; the graph computes
    what it computed before."""
    from torch_triton_hop import kernel_side_table, triton_kernel_wrapper_functional
    from torch_triton_hop._inductor_bridge import reinplace_functional_launches
    from torch.fx.experimental.proxy_tensor import make_fx

    key = kernel_side_table.add_kernel(two_outputs)

    def functional(x, b):
        a = torch.empty_like(x)
        new_a, new_b = triton_kernel_wrapper_functional(
            kernel=key, constant_args="{}", configs="[]", grids=[3, 1, 1],
            kwargs={"x_ptr": x, "a_ptr": a, "b_ptr": b, "n": 40, "BLOCK": 16},
            tensors_to_clone=["a_ptr", "b_ptr"],
        )
        return new_a, new_b, b + 0  # b's old value is read after the launch

    x, b = rand(40), rand(40)
    gm = make_fx(functional, tracing_mode="fake")(x, b)
    reinplace_functional_launches(gm.graph)
    gm.recompile()
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert "user_triton_kernel_functional" not in targets
    assert targets.count("user_triton_kernel_mutation") == 1
    assert targets.count("aten.clone.default") == 1, gm.code
    b_before = b.clone()
    new_a, new_b, old_b = gm(x, b)
    torch.testing.assert_close((new_a, new_b, old_b), (x + 1, x * 2, b_before))
    torch.testing.assert_close(b, b_before)  # the input was not written


@pytest.mark.parametrize("case", list(REINPLACE_CASES))
def test_without_the_pattern_pass_every_written_tensor_is_cloned_and_results_hold(case):
    """config.pattern_matcher=False skips our reinplacing pass: the functional lowering clones."""
    fn, n_inputs, kernels = REINPLACE_CASES[case]
    inputs = [rand(40) for _ in range(n_inputs)]
    eager_inputs = [t.clone() for t in inputs]
    expected = fn(*eager_inputs)
    with torch._inductor.config.patch(pattern_matcher=False):
        out, code = compile_and_code(fn, *inputs)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(inputs, eager_inputs)
    for kernel in kernels:
        assert len(launches(code, kernel)) == 1, code


def test_input_not_mutated_by_the_program_keeps_its_value():
    """A kernel writing a clone of an input never writes the input itself."""

    def fn(x):
        y = x.clone()
        scale_inplace[grid_1d](y, y.numel(), 2.0, BLOCK=16)
        return y

    x = rand(40)
    before = x.clone()
    out, _ = compile_and_code(fn, x)
    torch.testing.assert_close(out, before * 2)
    torch.testing.assert_close(x, before)


def test_strided_rows_keep_their_layout():
    """Strides passed as kernel arguments stay true: the compiled buffers keep the traced layout."""

    def fn(x, out):
        wide = torch.zeros(out.shape[0], 64, device=out.device)[:, :out.shape[1]]
        wide.copy_(out)
        add_rows_k[(x.shape[0],)](x, wide, x.shape[1], x.stride(0), wide.stride(0), BLOCK=32)
        out.copy_(wide)
        return wide.sum(1)

    add_rows_k = wrap_triton(add_rows)
    x, out = rand(6, 20), rand(6, 20)
    eager_out = out.clone()
    expected = fn(x, eager_out)
    got = torch.compile(fn, fullgraph=True)(x, out)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(out, eager_out)


# --- autotune, heuristics, launch options, shapes ---------------------------------------

def two_input_call(kernel, **kwargs):
    def fn(x, y):
        out = torch.empty_like(x)
        wrap_triton(kernel)[grid_1d](x, y, out, x.numel(), **kwargs)
        return out

    return fn


def num_warps_as_parameter(x, y):
    out = torch.empty_like(x)
    wrap_triton(uses_num_warps)[grid_1d](x, out, x.numel())
    return out


KERNEL_CALLS = {
    "plain": two_input_call(add_kernel, BLOCK=16),
    "plain_num_warps_num_stages": two_input_call(add_kernel, BLOCK=16, num_warps=2, num_stages=2),
    "autotuned": two_input_call(add_autotuned),
    "heuristics_below_autotune": two_input_call(add_heuristics_below),
    "heuristics_above_autotune": two_input_call(add_heuristics_above),
}


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("call", list(KERNEL_CALLS))
def test_compiled_results_equal_eager(call, dynamic):
    fn = KERNEL_CALLS[call]
    compiled = torch.compile(fn, fullgraph=True, dynamic=dynamic)
    for n in (40, 100, 33):
        x, y = rand(n), rand(n)
        torch.testing.assert_close(compiled(x, y), fn(x, y))


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_config_launch_option_reaches_a_parameter_of_the_same_name(dynamic):
    """uses_num_warps adds its num_warps (2 or 4, whichever config runs) to x."""
    x = rand(100)
    out = torch.compile(num_warps_as_parameter, fullgraph=True, dynamic=dynamic)(x, x)
    assert any(torch.allclose(out, x + w) for w in (2.0, 4.0)), out - x


def test_pruned_autotune_restores_and_resets_as_eager():
    fn = two_input_call(add_pruned)
    x, y = rand(100), rand(100)
    y_compiled = y.clone()
    expected = fn(x, y)
    torch.testing.assert_close(torch.compile(fn, fullgraph=True)(x, y_compiled), expected)


def test_mark_dynamic_and_automatic_dynamic_compile_once():
    fn = two_input_call(add_autotuned)
    compiled = torch.compile(fn, fullgraph=True)
    x, y = rand(64), rand(64)
    torch._dynamo.mark_dynamic(x, 0)
    torch._dynamo.mark_dynamic(y, 0)
    torch.testing.assert_close(compiled(x, y), x + y)
    for n in (77, 130):
        x, y = rand(n), rand(n)
        torch.testing.assert_close(compiled(x, y), x + y)

    torch._dynamo.reset()
    frames = torch._dynamo.utils.counters["stats"]
    frames.clear()
    compiled = torch.compile(fn)  # automatic dynamic: static first, dynamic on a new size
    for n in (40, 41, 42, 43):
        x, y = rand(n), rand(n)
        torch.testing.assert_close(compiled(x, y), x + y)
    assert frames["unique_graphs"] == 2, dict(frames)


def test_graph_breaks_between_launches():
    def fn(x):
        scale_inplace[grid_1d](x, x.numel(), 2.0, BLOCK=16)
        torch._dynamo.graph_break()
        y = x + 1
        scale_inplace[grid_1d](y, y.numel(), 3.0, BLOCK=16)
        return y

    x = rand(50)
    x_eager = x.clone()
    torch.testing.assert_close(torch.compile(fn)(x), fn(x_eager))
    torch.testing.assert_close(x, x_eager)


# --- training ---------------------------------------------------------------------------

class Mul(torch.autograd.Function):
    """x * y with a wrapped kernel forward and backward."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return _mul(x, y)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return _mul(grad, y), _mul(grad, x)


def _mul(a, b):
    out = torch.empty_like(a)
    wrap_triton(mul_kernel)[grid_1d](a, b, out, a.numel(), BLOCK=16)
    return out


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_autograd_function_gradients_equal_eager(dynamic):
    def loss(x, y):
        return (Mul.apply(x, y) * 3.0).sum()

    x, y = rand(40).requires_grad_(), rand(40).requires_grad_()
    loss(x, y).backward()
    expected = (x.grad.clone(), y.grad.clone())
    x.grad = y.grad = None
    torch.compile(loss, fullgraph=True, dynamic=dynamic)(x, y).backward()
    torch.testing.assert_close((x.grad, y.grad), expected)


# --- caches -----------------------------------------------------------------------------

CACHE_SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, {here!r})
    import torch, triton
    import triton.language as tl
    from torch_triton_hop import wrap_triton
    {before}

    @wrap_triton
    @triton.jit
    def k(x_ptr, out_ptr, n, PAD: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=PAD) {op} 1.0, mask=offs < n)

    def f(x):
        out = torch.empty_like(x)
        k[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), PAD={pad}, BLOCK=16)
        return out

    # The kinds of launchers inductor makes for the kernel (none on CPU: C++ calls it).
    from torch._inductor.runtime import triton_heuristics as th
    launchers = []
    for kind, cls in (("static", th.StaticTritonCompileResult), ("triton", th.TritonCompileResult)):
        def make_launcher(self, _real=cls.make_launcher, _kind=kind):
            launchers.append(_kind)
            return _real(self)
        cls.make_launcher = make_launcher

    x = torch.arange(8.0, device={device!r})
    start = time.perf_counter()
    out = torch.compile(f, fullgraph=True)(x)
    seconds = time.perf_counter() - start
    c = torch._dynamo.utils.counters["inductor"]
    print(out.tolist(), c["fxgraph_cache_hit"], c["fxgraph_cache_miss"], f"{{seconds:.2f}}", ",".join(launchers) or "none")
    """
)


def run_cache_script(tmp_path, op, pad="0.0", before=""):
    """(values, FX graph cache hits, misses, seconds, launcher kinds) of a compile in a new
    process that shares the caches under `tmp_path`; `before` runs after the imports."""
    script = tmp_path / "model.py"
    script.write_text(CACHE_SCRIPT.format(here=HERE, op=op, pad=pad, device=DEVICE, before=before))
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("TORCHINDUCTOR_FORCE_DISABLE_CACHES", None)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    values, hits, misses, seconds, launchers = done.stdout.strip().splitlines()[-1].rsplit(" ", 4)
    return eval(values), int(hits), int(misses), float(seconds), launchers


def test_fx_graph_cache_hits_in_a_new_process_and_misses_when_the_kernel_changes(tmp_path):
    plus = [i + 1.0 for i in range(8)]
    minus = [i - 1.0 for i in range(8)]
    assert run_cache_script(tmp_path, "+")[:3] == (plus, 0, 1)
    values, hits, misses, _, _ = run_cache_script(tmp_path, "+")
    assert (values, hits, misses) == (plus, 1, 0)
    # Same file, same names, another kernel body: a cached graph must not be reused.
    assert run_cache_script(tmp_path, "-")[:3] == (minus, 0, 1)


@pytest.mark.gpu
def test_a_warm_cache_launches_statically_in_a_new_process(tmp_path):
    """Where the caches hold the compiled graph, inductor runs no codegen of ours before it
    makes the kernel's launcher: it is still the static one (see [Note: Our launches use
    inductor's static launcher])."""
    plus = [i + 1.0 for i in range(8)]
    assert run_cache_script(tmp_path, "+") == (plus, 0, 1, ANY, "static")
    assert run_cache_script(tmp_path, "+") == (plus, 1, 0, ANY, "static")


@pytest.mark.gpu
def test_a_constexpr_inf_launches_from_a_warm_cache_in_a_new_process(tmp_path):
    """Triton's launcher holds each constexpr as repr(value): `-inf` must launch from a warm
    cache, where nothing of the package ran at codegen, with either launcher (see
    test_a_constexpr_that_is_not_a_finite_float_compiles)."""
    plus = [i + 1.0 for i in range(8)]
    assert run_cache_script(tmp_path, "+", pad="float('-inf')")[:3] == (plus, 0, 1)
    assert run_cache_script(tmp_path, "+", pad="float('-inf')")[:3] == (plus, 1, 0)
    with_tritons = "import torch_triton_hop; torch_triton_hop.config.static_launch = False; "
    assert run_cache_script(tmp_path, "+", pad="float('-inf')", before=with_tritons) == (plus, 1, 0, ANY, "triton")


# --- errors ------------------------------------------------------------------------------

@pytest.mark.skipif(ON_GPU, reason="interpreted kernels only")
def test_cpp_wrapper_refuses_interpreted_kernels_clearly():
    fn = REINPLACE_CASES["empty_like_output"][0]
    with torch._inductor.config.patch(cpp_wrapper=True):
        with pytest.raises(Exception, match="Triton interpreter .* cannot call a Python kernel"):
            torch.compile(fn, fullgraph=True)(rand(8), rand(8))


def test_a_descriptor_made_outside_the_compiled_function_is_refused_naming_the_argument():
    """Its tensor is not an input of the graph; tests/test_tensor_descriptors.py has the supported uses."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    x = rand(16)
    desc = TensorDescriptor(x, list(x.shape), list(x.stride()), [16])

    def fn(out):
        scale_inplace[(1,)](desc, 16, 2.0, BLOCK=16)
        return out

    with pytest.raises(Exception, match="argument 'x_ptr' of kernel 'scale_inplace' is a host-side TMA descriptor "
                       "that was not made by TensorDescriptor.from_tensor inside the compiled function"):
        torch.compile(fn, fullgraph=True)(x)


# --- GPU only ----------------------------------------------------------------------------

@pytest.mark.gpu
def test_autotuned_kernel_is_compiled_with_every_traced_config():
    fn = two_input_call(add_autotuned)
    x, y = rand(4096), rand(4096)
    out, code = compile_and_code(fn, x, y)
    torch.testing.assert_close(out, x + y)
    assert len(launches(code, "add_autotuned")) == 1, code
    for block in (16, 32):
        assert re.search(rf"['\"]BLOCK['\"]: {block}", code), code


@pytest.mark.gpu
def test_reduce_overhead_runs_under_cuda_graphs():
    def fn(x, y):
        out = torch.empty_like(x)
        wrap_triton(add_kernel)[grid_1d](x, y, out, x.numel(), BLOCK=128)
        return out.relu()

    compiled = torch.compile(fn, mode="reduce-overhead", fullgraph=True)
    torch._dynamo.utils.counters["inductor"].clear()
    x, y = rand(1000), rand(1000)
    for _ in range(4):
        torch.testing.assert_close(compiled(x, y), (x + y).relu())
    assert torch._dynamo.utils.counters["inductor"]["cudagraph_skips"] == 0


class SwiGLUWritingSavedInputs(torch.autograd.Function):
    """Liger-Kernel's SwiGLU: backward writes the gradients into the tensors saved in forward."""

    @staticmethod
    def forward(ctx, a, b):
        c = torch.empty_like(a)
        wrap_triton(swiglu_forward)[grid_1d](a, b, c, a.numel(), BLOCK=16)
        ctx.save_for_backward(a, b)
        return c

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        wrap_triton(swiglu_backward_in_place)[grid_1d](dc.contiguous(), a, b, a.numel(), BLOCK=16)
        return a, b


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_backward_writing_tensors_saved_in_forward_gives_eager_gradients(backend):
    def loss(x, y):
        a, b = x * 1.0, y * 1.0  # intermediates, as in a model: Liger saves its inputs
        return (SwiGLUWritingSavedInputs.apply(a, b) * 2.0).sum()

    def reference(x, y):
        return ((torch.nn.functional.silu(x) * y) * 2.0).sum()

    x, y = rand(40).requires_grad_(), rand(40).requires_grad_()
    reference(x, y).backward()
    expected = (x.grad.clone(), y.grad.clone())
    for fn in (loss, torch.compile(loss, fullgraph=True, backend=backend)):
        x.grad = y.grad = None
        fn(x, y).backward()
        torch.testing.assert_close((x.grad, y.grad), expected)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_backward_writing_saved_leaf_inputs_gives_eager_gradients(backend):
    """The saved tensors are the leaves themselves: backward overwrites the caller's inputs' data
    (as Liger does eagerly), and compiled code does the same, with eager's gradients. On torch
    2.11 this needs the package's AOTAutograd backport (_compat.backport_backward_writes_to_leaf_inputs)."""

    def loss(x, y):
        return SwiGLUWritingSavedInputs.apply(x, y).sum()

    def run(fn):
        x, y = x0.clone().requires_grad_(), y0.clone().requires_grad_()
        out = fn(x, y)
        out.backward()
        return out.detach(), (x.grad, y.grad), (x.detach(), y.detach())

    x0, y0 = rand(40), rand(40)
    out, grads, inputs_after = run(loss)
    assert not torch.equal(inputs_after[0], x0)  # eager leaves da in x
    torch.testing.assert_close(run(torch.compile(loss, fullgraph=True, backend=backend)), (out, grads, inputs_after))


def _swiglu_of_projections(x, w1, w2):
    # Matmul outputs, which the partitioner saves rather than recomputes (Liger's a and b).
    return (SwiGLUWritingSavedInputs.apply(x @ w1, x @ w2) * 2.0).sum()


def _backward_code_and_gradient(compiled, x, w1, w2, retain_graph):
    """The compiled backward's code, and x's gradient from each of one or two backward calls."""
    from torch._inductor.utils import run_and_get_code

    def step():
        out = compiled(x, w1, w2)
        out.backward(retain_graph=retain_graph)
        first = x.grad.clone()
        if retain_graph:
            out.backward()
        return first

    x.grad = None
    first, codes = run_and_get_code(step)
    return codes[-1], first, x.grad


def _saved_activations_written(code):
    """The backward launch's a_ptr and b_ptr arguments, and the backward's input names."""
    # The fusion folds the gradient's expand into the launch (a fused kernel), or does not.
    (line,) = set(launches(code, "swiglu_backward_in_place")
                  + launches(code, "swiglu_backward_in_place_fused", module="torch_triton_hop.fused"))
    arguments = launch_arguments(line, swiglu_backward_in_place)
    inputs = re.search(r"^\s*(.*) = args$", code, re.M).group(1).split(", ")
    return (arguments["a_ptr"], arguments["b_ptr"]), inputs


def test_backward_writes_the_saved_activations_it_was_donated_in_place():
    """Liger's SwiGLU backward writes its gradients into the activations saved in forward.
    AOTAutograd donates those to the compiled backward, so the launch writes them in place, as
    eager does: no copy of either (inductor emitted it as an in-place identity copy, a read and
    a write of each activation for nothing, 0.36 ms of an H200's Llama step)."""
    w1, w2 = rand(16, 16), rand(16, 16)
    x = rand(8, 16).requires_grad_()
    _swiglu_of_projections(x, w1, w2).backward()  # eager: the same kernels, the same roundings
    expected = x.grad.clone()
    code, gradient, _ = _backward_code_and_gradient(torch.compile(_swiglu_of_projections, fullgraph=True),
                                                    x, w1, w2, retain_graph=False)
    torch.testing.assert_close(gradient, expected)
    written, inputs = _saved_activations_written(code)
    assert all(name in inputs for name in written), (written, inputs)
    assert not any(re.search(rf"\b{name}\b", line) for line in copies(code) for name in written), code


def test_under_retain_graph_saved_activations_are_copied_and_a_second_backward_sees_them():
    """Nothing is donated to a backward that runs with retain_graph: the launch writes copies,
    and the second backward computes from the saved values as they were. Compiled after the
    same graph was compiled with donation, in one process: the donated indices are part of
    inductor's cache key for graphs with our launches (without that, its FX-graph cache hands
    back the donating backward, whose second call reads overwritten activations; torch 2.13's
    own graphs have the same hole where the AOTAutograd cache is off)."""
    w1, w2 = rand(16, 16), rand(16, 16)
    x = rand(8, 16).requires_grad_()
    _swiglu_of_projections(x, w1, w2).backward()  # eager: the same kernels, the same roundings
    expected = x.grad.clone()
    _backward_code_and_gradient(torch.compile(_swiglu_of_projections, fullgraph=True), x, w1, w2, False)
    torch._dynamo.reset()
    code, first, both = _backward_code_and_gradient(torch.compile(_swiglu_of_projections, fullgraph=True),
                                                    x, w1, w2, retain_graph=True)
    torch.testing.assert_close(first, expected)
    torch.testing.assert_close(both, 2 * expected, rtol=1e-5, atol=1e-4)  # a sum of two: rounding differs
    written, inputs = _saved_activations_written(code)
    assert not any(name in inputs for name in written), (written, inputs)


class _AddThenScale(torch.nn.Module):
    def forward(self, x, y):
        out = two_kernels_in_a_row(x, y)
        return out.relu()


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_an_exported_program_saved_and_loaded_compiles(backend, tmp_path):
    """torch.compile(ep.module()): Dynamo meets the mutation HOP itself, not a wrapped kernel."""
    x, y = rand(40), rand(40)
    n = torch.export.Dim("n", min=2)
    ep = torch.export.export(_AddThenScale(), (x, y), dynamic_shapes=({0: n}, {0: n}), strict=False)
    torch.export.save(ep, tmp_path / "program.pt2")
    module = torch.export.load(tmp_path / "program.pt2").module()
    compiled = torch.compile(module, fullgraph=True, backend=backend)
    for size in (40, 77):
        x, y = rand(size), rand(size)
        torch.testing.assert_close(compiled(x, y), ((x + y) * 3.0).relu())


@triton.jit
def load_with_padding(x_ptr, out_ptr, n, PAD: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets % 4 != 1, other=PAD), mask=offsets < n)


@pytest.mark.parametrize("launcher", ["static", "tritons", "cpp_wrapper"])
@pytest.mark.parametrize("fusion", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("pad", [float("-inf"), float("inf"), float("nan")])
def test_a_constexpr_that_is_not_a_finite_float_compiles(pad, fusion, launcher, monkeypatch, launcher_kinds):
    """On a GPU inductor writes a user kernel's constexprs into the module that defines it,
    which has no `inf` or `nan`: PAD=-inf failed with "NameError: name 'inf' is not defined"
    (torch's built-in path too; GPU hunt, H100). So did triton's launcher, which inductor
    writes each constexpr into as repr(value): where the static launcher is off, and under
    cpp_wrapper, whose compile-time autotuning block launches that way (GPU hunt under
    cpp_wrapper=True, H100)."""
    import torch_triton_hop

    if launcher == "cpp_wrapper" and not ON_GPU:
        pytest.skip("cpp_wrapper compiles GPU launches only (the interpreter's launches are refused)")
    monkeypatch.setattr(torch_triton_hop.config, "static_launch", launcher == "static")
    monkeypatch.setattr(torch_triton_hop.config, "fusion", fusion)

    def f(x):
        out = torch.empty(64, device=x.device)
        wrap_triton(load_with_padding)[(1,)](x * 2.0, out, 64, PAD=pad, BLOCK=64)
        return out

    x = rand(64)
    with torch._inductor.config.patch(cpp_wrapper=launcher == "cpp_wrapper"):
        got, code = compile_and_code(f, x)
    assert "load_with_padding" in code  # launched (as load_with_padding_fused where fused), not graph-broken
    if ON_GPU:
        assert any(name.startswith("load_with_padding") for name in launcher_kinds["triton"]) == (launcher != "static")
    torch.testing.assert_close(got, f(x), equal_nan=True, rtol=0, atol=0)
