"""wrap_triton as call and decorator, the eager fast path, interpreted kernels, writes=."""

import functools
from unittest import mock

import pytest
import torch
import triton
from torch.fx.experimental.proxy_tensor import make_fx
from torch.utils._python_dispatch import TorchDispatchMode

import torch_triton_hop
from torch_triton_hop import wrap_triton
from torch_triton_hop.errors import UnsupportedTritonKernelError

import core_kernels as K

pytestmark = pytest.mark.interpreter  # launches kernels on CPU tensors


def test_interpreted_kernels_are_traced():
    """Under TRITON_INTERPRET=1 the kernel is an InterpretedFunction; we still record a node."""
    assert type(K.add_kernel).__name__ == "InterpretedFunction"
    gm = make_fx(lambda x: K.scale_inplace[(1,)](x, 4, 3.0, BLOCK=16))(torch.ones(4))
    assert "user_triton_kernel_mutation" in gm.code


def test_eager_call_launches_without_hop_dispatch():
    x = torch.ones(8)
    with mock.patch.object(torch_triton_hop.triton_kernel_wrapper_mutation, "__call__",
                           side_effect=AssertionError("HOP dispatched")):
        K.scale_inplace[(1,)](x, 8, 3.0, BLOCK=16)
        K.scale_inplace.run(x, 8, 2.0, grid=(1,), BLOCK=16)
    torch.testing.assert_close(x, torch.full((8,), 6.0))


def test_a_grid_function_computing_from_its_arguments_launches_eagerly():
    """The interpreter gives a grid function the launch's scalars as triton tensors: the size it
    computes is one, holding a 1-element array, which triton 3.6-3.8's interpreter cannot take
    as an index with numpy >= 2.4 (raw triton fails there too); the launch takes it as an int."""
    x = torch.randn(40)
    out = torch.empty_like(x)
    wrap_triton(K.add_kernel)[lambda meta: ((meta["n"] + meta["BLOCK"] - 1) // meta["BLOCK"],)](
        x, x, out, x.numel(), BLOCK=16)
    torch.testing.assert_close(out, 2 * x)


class _Subclass(torch.Tensor):
    pass


class _PassThroughMode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("context", ["fake_mode", "function_mode", "subclass"])
def test_anything_that_could_intercept_takes_the_hop(context):
    calls = []
    real = type(torch_triton_hop.triton_kernel_wrapper_mutation).__call__

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    x = torch.ones(8)
    with mock.patch.object(type(torch_triton_hop.triton_kernel_wrapper_mutation), "__call__", spy):
        if context == "fake_mode":
            from torch._subclasses.fake_tensor import FakeTensorMode

            with FakeTensorMode() as mode:
                K.scale_inplace[(1,)](mode.from_tensor(x), 8, 3.0, BLOCK=16)
        elif context == "function_mode":
            with _PassThroughMode():
                K.scale_inplace[(1,)](x, 8, 3.0, BLOCK=16)
        else:
            K.scale_inplace[(1,)](x.as_subclass(_Subclass), 8, 3.0, BLOCK=16)
    assert calls


class _LoggingMode(TorchDispatchMode):
    """A user's mode that sees aten ops and knows nothing of higher-order operators."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


class _HigherOrderMode(_LoggingMode):
    supports_higher_order_operators = True


def test_a_launch_under_a_mode_that_knows_no_higher_order_operators_runs_the_kernel():
    x = torch.ones(8)
    with _LoggingMode() as mode:
        K.scale_inplace[(1,)](x, 8, 3.0, BLOCK=16)
        y = x * 2
    torch.testing.assert_close(y, torch.full((8,), 6.0))
    assert torch.ops.aten.mul.Tensor in mode.ops  # the mode still sees the ops around the launch


def test_a_launch_under_a_mode_that_takes_higher_order_operators_is_seen_by_it():
    x = torch.ones(8)
    with _HigherOrderMode() as mode:
        K.scale_inplace[(1,)](x, 8, 3.0, BLOCK=16)
    torch.testing.assert_close(x, torch.full((8,), 3.0))
    assert torch_triton_hop.triton_kernel_wrapper_mutation in mode.ops


def test_a_launch_a_mode_declines_still_runs():
    """FlopCounterMode takes higher-order operators and declines those it does not count
    (returns NotImplemented): the kernel must still run."""
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.ones(8)
    with FlopCounterMode(display=False):
        K.scale_inplace[(1,)](x, 8, 3.0, BLOCK=16)
    torch.testing.assert_close(x, torch.full((8,), 3.0))


def test_a_mode_that_knows_no_higher_order_operators_inside_make_fx_is_a_clear_error():
    def f(x):
        with _LoggingMode():
            K.scale_inplace[(1,)](x, 8, 3.0, BLOCK=16)
        return x

    with pytest.raises(UnsupportedTritonKernelError, match="_LoggingMode, which takes no higher-order operators"):
        make_fx(f)(torch.ones(8))


@pytest.mark.parametrize("transform", ["vmap", "grad", "jvp"])
def test_a_launch_under_a_torch_func_transform_is_a_clear_error(transform):
    def scaled(x):
        out = x.clone()
        K.scale_inplace[(1,)](out, 8, 3.0, BLOCK=16)
        return out

    x = torch.ones(2, 8)
    with pytest.raises(UnsupportedTritonKernelError, match=f"a launch of scale_inplace under torch.func.{transform}"):
        if transform == "vmap":
            torch.func.vmap(scaled)(x)
        elif transform == "grad":
            torch.func.grad(lambda t: scaled(t).sum())(x[0])
        else:
            torch.func.jvp(scaled, (x[0],), (torch.ones(8),))


def test_decorator_and_call_forms_agree():
    wrapped = wrap_triton(K.add_kernel)
    assert wrap_triton(wrapped) is wrapped
    assert wrapped.arg_names == K.add_kernel.arg_names  # behaves like the kernel for inspection
    x, y, out = torch.randn(40), torch.randn(40), torch.empty(40)
    wrapped[(3,)](x, y, out, 40, BLOCK=16)
    torch.testing.assert_close(out, x + y)


class _HoldsAKernel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.kernel = wrap_triton(K.add_kernel)

    def forward(self, x, y):
        out = torch.empty_like(x)
        self.kernel[(triton.cdiv(x.numel(), 16),)](x, y, out, x.numel(), BLOCK=16)
        return out


def test_a_deep_copied_module_shares_its_kernels():
    """Kernels are code: a deep copy shares them as it shares functions (before: copies of the
    kernel objects, each with caches of its own)."""
    import copy

    module = _HoldsAKernel()
    copied = copy.deepcopy(module)
    assert copied.kernel is module.kernel and copy.copy(module.kernel) is module.kernel
    x, y = torch.randn(40), torch.randn(40)
    torch.testing.assert_close(torch.compile(copied, backend="aot_eager")(x, y), x + y)


def test_rejects_non_kernels_and_bad_writes():
    with pytest.raises(UnsupportedTritonKernelError, match=r"expected a @triton.jit kernel.*\(got 'function'\)"):
        wrap_triton(lambda: None)
    with pytest.raises(UnsupportedTritonKernelError, match=r"expected a @triton.jit kernel.*\(got 'NoneType'\)"):
        wrap_triton(None)  # before: a decorator, and `'function' object is not subscriptable` at the launch
    with pytest.raises(UnsupportedTritonKernelError, match=r"\['BLOCK', 'nope'\], which are not tensor parameters"):
        wrap_triton(K.add_kernel, writes=["BLOCK", "nope"])
    with pytest.raises(UnsupportedTritonKernelError, match="without a grid"):
        wrap_triton(K.add_kernel)(torch.zeros(1))


def test_a_call_without_a_grid_names_the_kernel_under_torch_compile():
    """Before: Dynamo's "Observed exception", with the error raised inside the trace and no kernel name."""
    def f(x):
        K_add = wrap_triton(K.add_kernel)
        K_add(x, x, x, x.numel(), BLOCK=16)
        return x

    torch._dynamo.reset()
    with pytest.raises(Exception, match=r"kernel 'add_kernel' was called without a grid\. Call it as kernel\[grid\]"):
        torch.compile(f, fullgraph=True)(torch.zeros(8))


class _GridOfBlocks:
    def __call__(self, meta):
        return (triton.cdiv(meta["n"], meta["BLOCK"]),)


def _grid_of(meta, scale):
    return (triton.cdiv(meta["n"], meta["BLOCK"] * scale),)


@pytest.mark.parametrize("grid", [_GridOfBlocks(), functools.partial(_grid_of, scale=1)], ids=["object", "partial"])
def test_a_callable_object_grid_works_under_torch_compile(grid):
    """Before: under Dynamo an object with __call__ was 'not a callable returning a grid'."""
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(K.add_kernel)[grid](x, y, out, x.numel(), BLOCK=16)
        return out

    torch._dynamo.reset()
    x, y = torch.randn(40), torch.randn(40)
    torch.testing.assert_close(torch.compile(f, fullgraph=True)(x, y), x + y)


def test_autotuned_kernel_runs_eagerly_on_the_interpreter():
    """triton's own autotuner needs a GPU driver; our launch runs the first config instead."""
    x, y, out = torch.randn(40), torch.randn(40), torch.empty(40)
    wrap_triton(K.add_autotuned)[lambda meta: (triton.cdiv(40, meta["BLOCK"]),)](x, y, out, 40)
    torch.testing.assert_close(out, x + y)


def _add_pruned(**options):
    def f(x, y):
        out = torch.full_like(x, 5.0)
        wrap_triton(K.add_pruned, **options)[lambda m: (triton.cdiv(m["n"], m["BLOCK"]),)](x, y, out, x.numel())
        return out, y

    return f


def test_interpreter_runs_the_first_surviving_config_or_the_one_asked_for():
    """add_pruned keeps BLOCK 32 and 64 after pruning; its grid depends on BLOCK, so running
    BLOCK=32 with BLOCK=64's grid (or the reverse) would leave elements unwritten."""
    x, y = torch.randn(100), torch.ones(100)
    for options in ({}, {"interpreter_config": 1}, {"interpreter_config": {"BLOCK": 64}}):
        out, y_after = _add_pruned(**options)(x, y.clone())
        torch.testing.assert_close(out, x + 1.0)
        torch.testing.assert_close(y_after, torch.zeros(100))  # reset_to_zero, as after GPU autotuning


def test_interpreter_config_that_names_no_config_is_a_clear_error():
    with pytest.raises(UnsupportedTritonKernelError, match="names none of the 2 configs that survived pruning"):
        _add_pruned(interpreter_config={"BLOCK": 1024})(torch.randn(100), torch.ones(100))
    with pytest.raises(UnsupportedTritonKernelError, match="interpreter_config must be an int"):
        wrap_triton(K.add_pruned, interpreter_config="fast")


@pytest.mark.parametrize("options, added", [({}, 2.0), ({"interpreter_config": 1}, 4.0),
                                            ({"interpreter_config": {"num_warps": 4}}, 4.0)])
def test_the_chosen_config_is_the_one_that_runs(options, added):
    """uses_num_warps adds its config's num_warps (2 or 4): the result says which config ran."""
    x = torch.randn(64)

    def f(x):
        out = torch.empty_like(x)
        wrap_triton(K.uses_num_warps, **options)[lambda m: (triton.cdiv(m["n"], m["BLOCK"]),)](x, out, x.numel())
        return out

    torch.testing.assert_close(f(x), x + added)
    torch.testing.assert_close(make_fx(f)(x)(x), x + added)
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(f, fullgraph=True)(x), x + added)


SCRIPT_SETTING_TRITON_INTERPRET_AFTER_TORCH = """
import os, warnings
import torch  # with TORCH_LOGS naming torch_triton_hop, this imports the package and triton
os.environ["TRITON_INTERPRET"] = "1"
import triton, triton.language as tl
import torch_triton_hop

@triton.jit
def row_sum(x_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr, tl.sum(tl.load(x_ptr + tl.arange(0, BLOCK)), axis=0))

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    kernel = torch_triton_hop.wrap_triton(row_sum)
print("WARNINGS:", [str(w.message) for w in caught])
x, out = torch.ones(8), torch.empty(1)
kernel[(1,)](x, out, BLOCK=8)
print("SUM:", out.item())
"""


@pytest.mark.parametrize("torch_logs", [None, "+torch_triton_hop"])
def test_setting_triton_interpret_too_late_is_explained(torch_logs):
    """torch imports the modules TORCH_LOGS names while torch is imported, so a script that sets
    TRITON_INTERPRET=1 after `import torch` gets a triton whose own functions (tl.sum) were made
    for a GPU: wrapping a kernel says so, before the interpreter's bare RuntimeError."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "TORCH_LOGS")}
    if torch_logs:
        env["TORCH_LOGS"] = torch_logs
    run = subprocess.run([sys.executable, "-c", SCRIPT_SETTING_TRITON_INTERPRET_AFTER_TORCH], env=env,
                         capture_output=True, text=True, timeout=300)
    warned = "TRITON_INTERPRET=1 was set after triton was imported" in run.stdout
    if torch_logs:
        assert warned and "Set TRITON_INTERPRET=1 before importing torch" in run.stdout, run.stdout + run.stderr
        assert "Cannot call @triton.jit'd outside of the scope of a kernel" in run.stderr
    else:  # set in time: no warning, the kernel runs
        assert not warned and "SUM: 8.0" in run.stdout, run.stdout + run.stderr


class _ScaledByKernels(torch.autograd.Function):
    @staticmethod
    def forward(x):
        out = x.clone()
        K.scale_inplace[(1,)](out, 8, 3.0, BLOCK=16)
        return out

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        K.scale_inplace[(1,)](grad, 8, 3.0, BLOCK=16)
        return grad


def test_torch_func_grad_through_a_function_whose_backward_launches_says_to_use_torch_autograd():
    """The refusal's advice was to write such a Function, which the program had done: torch.func
    runs its backward under the transform too."""
    x = torch.ones(8)
    with pytest.raises(UnsupportedTritonKernelError, match=r"(?s)torch.func.grad.*with torch.autograd.grad or "
                                                           r"\.backward\(\), not torch.func"):
        torch.func.grad(lambda t: _ScaledByKernels.apply(t).sum())(x)
    x.requires_grad_(True)
    (grad,) = torch.autograd.grad(_ScaledByKernels.apply(x).sum(), x)
    assert torch.equal(grad, torch.full((8,), 3.0))
