"""The TritonHOPifier: autotune configs, heuristics, pruning, grids and the errors for what it rejects."""

import io
import json

import pytest
import torch
import triton
import triton.language as tl
from torch.fx.experimental.proxy_tensor import make_fx

from torch_triton_hop import wrap_triton
from torch_triton_hop.errors import UnsupportedTritonKernelError

import core_kernels as K

pytestmark = pytest.mark.interpreter  # launches kernels on CPU tensors


def hop_nodes(gm):
    return [n for n in gm.graph.nodes if n.op == "call_function" and "user_triton_kernel" in str(n.target)]


def trace_add(kernel, n=40, grid=None, mode="fake", **kwargs):
    grid = grid or (lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),))

    def f(x, y):
        out = torch.zeros_like(x)
        wrap_triton(kernel)[grid](x, y, out, n, **kwargs)
        return out

    x, y = torch.randn(n), torch.randn(n)
    gm = make_fx(f, tracing_mode=mode)(x, y)
    (node,) = hop_nodes(gm)
    return gm, node, (x, y)


def test_autotune_configs_and_one_grid_per_config():
    """Every config is in the node with its launch options, and the grid is evaluated once per config."""
    gm, node, (x, y) = trace_add(K.add_autotuned)
    assert json.loads(node.kwargs["configs"]) == [
        {"kwargs": {"BLOCK": 16}, "num_warps": 2, "num_stages": 3},
        {"kwargs": {"BLOCK": 32}, "num_warps": 4, "num_stages": 3},
    ]
    assert node.kwargs["grids"] == [3, 1, 1, 2, 1, 1]
    torch.testing.assert_close(gm(x, y), x + y)


def test_heuristics_below_autotune_are_folded_into_each_config():
    gm, node, (x, y) = trace_add(K.add_heuristics_below, n=48)
    assert [c["kwargs"] for c in json.loads(node.kwargs["configs"])] == [
        {"BLOCK": 16, "EVEN": True},
        {"BLOCK": 32, "EVEN": False},
    ]
    torch.testing.assert_close(gm(x, y), x + y)


@pytest.mark.parametrize("n, block", [(40, 16), (100, 32)])
def test_heuristics_above_autotune_become_call_arguments(n, block):
    gm, node, (x, y) = trace_add(K.add_heuristics_above, n=n)
    assert node.kwargs["kwargs"]["BLOCK"] == block
    torch.testing.assert_close(gm(x, y), x + y)


def test_pruning_keeps_top_k_and_restore_value():
    """early_config_prune, then perf_model with top_k=2 (triton's key), leave exactly two configs."""
    gm, node, (x, y) = trace_add(K.add_pruned, n=200)
    assert [c["kwargs"]["BLOCK"] for c in json.loads(node.kwargs["configs"])] == [32, 64]
    out = gm(x, y)
    torch.testing.assert_close(out, x + 1.0)


def test_kernel_parameter_named_like_a_launch_option_gets_the_config_value():
    def f(x):
        out = torch.empty_like(x)
        wrap_triton(K.uses_num_warps)[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, out, x.numel())
        return out

    x = torch.zeros(40)
    gm = make_fx(f)(x)
    (node,) = hop_nodes(gm)
    assert [c["kwargs"]["num_warps"] for c in json.loads(node.kwargs["configs"])] == [2, 4]
    assert set(gm(x).tolist()) <= {2.0, 4.0}


def test_call_time_num_warps_is_kept():
    _, node, _ = trace_add(K.add_kernel, BLOCK=16, num_warps=8)
    assert node.kwargs["kwargs"]["num_warps"] == 8


@pytest.mark.parametrize("grid, padded", [((3,), [3, 1, 1]), ([3, 2], [3, 2, 1]), ((3, 2, 2), [3, 2, 2])])
def test_grids_of_rank_one_to_three_are_padded(grid, padded):
    _, node, _ = trace_add(K.add_kernel, grid=grid, BLOCK=16)
    assert node.kwargs["grids"] == padded


def test_constexpr_given_a_symint_is_specialised():
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(K.add_kernel)[(1,)](x, y, out, x.numel(), BLOCK=x.shape[0])
        return out

    gm = make_fx(f, tracing_mode="symbolic")(torch.randn(16), torch.randn(16))
    (node,) = hop_nodes(gm)
    assert node.kwargs["kwargs"]["BLOCK"] == 16 and type(node.kwargs["kwargs"]["BLOCK"]) is int


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def _add_one_even_or_masked(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1)
    else:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def test_a_heuristic_of_a_size_under_autotune_is_guarded_to_its_value():
    """Under symbolic tracing `n % BLOCK == 0` is a SymBool per config: guarded, so export
    names the constraint (n a multiple of 32) instead of refusing the config's value."""
    def f(x):
        out = torch.empty_like(x)
        wrap_triton(_add_one_even_or_masked)[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, out, x.numel())
        return out

    x = torch.arange(64.0)
    gm = make_fx(f, tracing_mode="symbolic")(x)
    (node,) = hop_nodes(gm)
    assert [config["kwargs"]["EVEN"] for config in json.loads(node.kwargs["configs"])] == [True, True]
    torch.testing.assert_close(gm(x), x + 1)

    class M(torch.nn.Module):
        def forward(self, x):
            return f(x)

    with pytest.raises(torch._dynamo.exc.UserError, match=r"guard \(L\[.x.\]\.size\(\)\[0\] % 32\) == 0"):
        torch.export.export(M(), (x,), dynamic_shapes=({0: torch.export.Dim("n")},), strict=False)


def test_run_with_grid_keyword():
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(K.add_kernel).run(x, y, out, x.numel(), grid=(3,), BLOCK=16)
        return out

    x, y = torch.randn(40), torch.randn(40)
    gm = make_fx(f)(x, y)
    assert len(hop_nodes(gm)) == 1
    torch.testing.assert_close(gm(x, y), x + y)


@triton.jit
def _plain(x_ptr):
    pass


def _hook(*args, **kwargs):
    pass


REJECTED = {
    "pre_hook": (triton.autotune([triton.Config({})], key=[], pre_hook=_hook)(_plain), "pre_hook"),
    "post_hook": (triton.autotune([triton.Config({})], key=[], post_hook=_hook)(_plain), "post_hook"),
    "two_autotunes": (triton.autotune([triton.Config({})], key=[])(triton.autotune([triton.Config({})], key=[])(_plain)),
                      "2 @triton.autotune"),
}


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(REJECTED))
def test_unsupported_autotune_features_name_the_feature(name):
    kernel, feature = REJECTED[name]
    with pytest.raises(UnsupportedTritonKernelError, match=feature):
        make_fx(lambda x: wrap_triton(kernel)[(1,)](x))(torch.zeros(4))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("settings", [{"warmup": 5}, {"rep": 7}, {"use_cuda_graph": True}], ids=str)
def test_autotune_benchmark_settings_are_left_out_of_the_graph(settings):
    """How triton times the configs, never what one computes. Before, they were refused, and
    FlagGems' LibTuner passes warmup= and rep= on every kernel it tunes."""
    kernel = triton.autotune([triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"], **settings)(
        K.add_kernel)
    x, y = torch.randn(40), torch.randn(40)

    def add(x, y):
        out = torch.empty_like(x)
        wrap_triton(kernel)[lambda meta: (triton.cdiv(40, meta["BLOCK"]),)](x, y, out, 40)
        return out

    graph = make_fx(add)(x, y)
    assert "user_triton_kernel" in graph.code
    torch.testing.assert_close(graph(x, y), x + y)
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(add, fullgraph=True)(x, y), x + y)


class _LibraryEntry:
    """A library's own kernel wrapper (FlagGems' LibEntry): the kernel is its .fn."""

    def __init__(self, fn):
        self.fn = fn


def test_a_library_wrapper_holding_a_kernel_is_refused_naming_the_kernel_inside():
    with pytest.raises(UnsupportedTritonKernelError, match=r"\(got '_LibraryEntry'\)\. Wrap the kernel this "
                                                         r"_LibraryEntry holds: wrap_triton\(obj.fn\)"):
        wrap_triton(_LibraryEntry(K.add_kernel))


@pytest.mark.parametrize(
    "grid, kwargs, message",
    [
        ((1, 1, 1, 1), {}, r"grid of rank 4 \(got \(1, 1, 1, 1\)\)"),
        ("abc", {}, "grid must be a tuple"),
        (lambda meta: 3, {}, r"grid must be a tuple .* \(got 3\)"),
        ((1,), {"num_ctas": 2}, "num_ctas passed at call time"),
        (lambda meta: (torch.tensor(2),), {}, r"\(got \(a tensor of shape \[\] and dtype torch.int64,\)\)"),
    ],
)
def test_bad_calls_are_rejected_with_the_value(grid, kwargs, message):
    with pytest.raises(UnsupportedTritonKernelError, match=message):
        make_fx(lambda x: wrap_triton(_plain)[grid](x, **kwargs))(torch.zeros(4))


def _call_with(**kwargs_and_x):
    def f(x):
        out = torch.empty_like(x)
        x_arg = kwargs_and_x.pop("x_ptr", x)
        wrap_triton(K.add_kernel)[(3,)](x_arg, x, out, 40, **kwargs_and_x)
        return out

    return f


class _Module(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


TRACERS = {
    "make_fx": lambda f, x: make_fx(f)(x),
    "export": lambda f, x: torch.export.export(_Module(f), (x,), strict=False),
    "compile": lambda f, x: torch.compile(f, fullgraph=True, backend="aot_eager")(x),
}


@pytest.mark.parametrize("tracer", list(TRACERS))
def test_num_ctas_1_at_call_time_is_triton_default_and_other_values_name_the_value(tracer):
    # Triton's layer-norm tutorial launches with num_ctas=1.
    torch._dynamo.reset()
    x = torch.randn(40)
    traced = TRACERS[tracer](_call_with(BLOCK=16, num_ctas=1), x)  # compile: the result itself
    out = {"make_fx": lambda: traced(x), "export": lambda: traced.module()(x), "compile": lambda: traced}[tracer]()
    torch.testing.assert_close(out, x + x, rtol=0, atol=0)
    torch._dynamo.reset()
    with pytest.raises(Exception, match=r"num_ctas passed at call time to kernel 'add_kernel' \(got 2\)\."):
        TRACERS[tracer](_call_with(BLOCK=16, num_ctas=2), x)


@pytest.mark.parametrize("tracer", list(TRACERS))
def test_an_unknown_keyword_argument_is_an_error_naming_it(tracer):
    torch._dynamo.reset()
    with pytest.raises(Exception, match="kernel 'add_kernel' has no parameter 'BLOKC'"):
        TRACERS[tracer](_call_with(BLOKC=16, BLOCK=16), torch.randn(40))


@pytest.mark.parametrize("value", [[0.0] * 40, __import__("numpy").zeros(40, "float32")], ids=["list", "ndarray"])
@pytest.mark.parametrize("tracer", ["make_fx", "export"])
def test_a_non_tensor_where_the_kernel_takes_a_pointer_is_an_error_naming_it(tracer, value):
    with pytest.raises(UnsupportedTritonKernelError, match="argument 'x_ptr' of kernel 'add_kernel' is a"):
        TRACERS[tracer](_call_with(x_ptr=value, BLOCK=16), torch.randn(40))


def _host_descriptor_pre_hook(nargs):
    """Triton's attention tutorial's hook: it sets block shapes only when given descriptors."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    if not isinstance(nargs["x_ptr"], TensorDescriptor):
        return
    nargs["x_ptr"].block_shape = [nargs["BLOCK"]]


_add_with_a_hook_for_descriptors = triton.autotune(
    [triton.Config({"BLOCK": 16}, pre_hook=_host_descriptor_pre_hook)], key=["n"])(K.add_kernel)


@pytest.mark.parametrize("mode", ["eager", "fake", "compile", "export"])
def test_a_config_pre_hook_that_does_nothing_with_these_arguments_is_left_out(mode):
    """Given tensors, the hook returns at once. Before, every mode refused it ("sets no
    TensorDescriptor block shape")."""
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(_add_with_a_hook_for_descriptors)[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](
            x, y, out, x.numel())
        return out

    x, y = torch.randn(40), torch.randn(40)
    if mode == "eager":
        run = f
    elif mode == "fake":
        run = make_fx(f, tracing_mode="fake")(x, y)
    elif mode == "compile":
        torch._dynamo.reset()
        run = torch.compile(f, fullgraph=True)
    else:
        class M(torch.nn.Module):
            def forward(self, x, y):
                return f(x, y)
        run = torch.export.export(M(), (x, y)).module()
    torch.testing.assert_close(run(x, y), x + y)


@triton.jit
def _sum_with_atomics(x_ptr, acc_ptr, count_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(acc_ptr, tl.sum(tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)))
    if count_ptr is not None:
        tl.atomic_add(count_ptr, 1)


def test_a_config_pre_hook_that_fills_an_argument_is_refused_saying_to_zero_it_before_the_launch():
    kernel = triton.autotune([triton.Config({"BLOCK": 16}, pre_hook=lambda nargs: nargs["acc_ptr"].fill_(1.0))],
                             key=["n"])(_sum_with_atomics)

    def f(x):
        acc = torch.zeros(1)
        wrap_triton(kernel)[(3,)](x, acc, None, x.numel())
        return acc

    with pytest.raises(UnsupportedTritonKernelError,
                       match=r"(?s)uses argument 'acc_ptr'.*`nargs\[<tensor>\]\.zero_\(\)`.*`t\.zero_\(\)` before"):
        make_fx(f)(torch.arange(40, dtype=torch.float32))
