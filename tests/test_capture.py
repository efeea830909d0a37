"""make_fx, torch.export (strict and non-strict, save / load) and torch.compile capture wrapped kernels."""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest
import torch
import triton
import triton.language as tl
from expecttest import TestCase
from torch.fx.experimental.proxy_tensor import make_fx

from torch_triton_hop import wrap_triton
from torch_triton_hop._compat_dynamo import nested_regions_keep_kernel_writes, raw_kernels_as_on_a_gpu

from core_kernels import add_autotuned, add_heuristics_above, add_kernel, mul_kernel, scale_inplace

# Capture on CPU tensors under the interpreter; the classes marked any_device run on a GPU too
# (the kernels the compiled code launches, Dynamo's own variable for raw kernels there).
interpreter_only = pytest.mark.interpreter
DEVICE = "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"

HERE = os.path.dirname(os.path.abspath(__file__))


def add(x, y):
    out = torch.empty_like(x)
    # (n + B - 1) // B spelled out: triton.cdiv's expression differs between triton releases.
    wrap_triton(add_kernel)[lambda meta: ((meta["n"] + meta["BLOCK"] - 1) // meta["BLOCK"],)](
        x, y, out, x.numel(), BLOCK=16, ACT="relu"
    )
    return out


def add_then_scale(x, y):
    out = add(x, y)
    scale_inplace[((out.numel() + 15) // 16,)](out, out.numel(), 2.0, BLOCK=16)
    return out


class AddModule(torch.nn.Module):
    def forward(self, x, y):
        return add_then_scale(x, y)


def expected(x, y):
    return (x + y).relu() * 2.0


X, Y = torch.randn(40), torch.randn(40)


def temporary_directory(test_case):
    d = tempfile.mkdtemp()
    test_case.addCleanup(shutil.rmtree, d)
    return d


@interpreter_only
class TestMakeFx(TestCase):
    def test_real_and_fake_graphs_hold_the_mutation_hop(self):
        """Real and fake tracing record one node per launch, naming the kernel by its stable key."""
        for mode in ("real", "fake"):
            gm = make_fx(add_then_scale, tracing_mode=mode)(X, Y)
            torch.testing.assert_close(gm(X, Y), expected(X, Y))
        self.assertExpectedInline(gm.code.strip(), """\
def forward(self, x_1, y_1):
    empty_like = torch.ops.aten.empty_like.default(x_1, pin_memory = False)
    add_kernel = torch.ops.higher_order.user_triton_kernel_mutation(kernel = 'core_kernels:add_kernel@03df056ca1b9f536', constant_args = '{"ACT":"relu"}', configs = '[]', grids = [3, 1, 1], kwargs = {'x_ptr': x_1, 'y_ptr': y_1, 'out_ptr': empty_like, 'n': 40, 'BLOCK': 16});  x_1 = y_1 = add_kernel = None
    scale_inplace = torch.ops.higher_order.user_triton_kernel_mutation(kernel = 'core_kernels:scale_inplace@e737d4fc2060dbda', constant_args = '{}', configs = '[]', grids = [3, 1, 1], kwargs = {'x_ptr': empty_like, 'n': 40, 'scale': 2.0, 'BLOCK': 16});  scale_inplace = None
    return empty_like""")

    def test_symbolic_grid_is_a_sym_expression(self):
        """Under symbolic tracing the grid and sizes stay symbolic; one graph serves every size."""
        gm = make_fx(add_then_scale, tracing_mode="symbolic")(X, Y)
        for n in (7, 40, 100):
            x, y = torch.randn(n), torch.randn(n)
            torch.testing.assert_close(gm(x, y), expected(x, y))
        self.assertExpectedInline(gm.code.strip(), """\
def forward(self, x_1, y_1):
    empty_like = torch.ops.aten.empty_like.default(x_1, pin_memory = False)
    sym_numel_default = torch.ops.aten.sym_numel.default(x_1)
    add = sym_numel_default + 16
    sub = add - 1;  add = None
    floordiv = sub // 16;  sub = None
    add_kernel = torch.ops.higher_order.user_triton_kernel_mutation(kernel = 'core_kernels:add_kernel@03df056ca1b9f536', constant_args = '{"ACT":"relu"}', configs = '[]', grids = [floordiv, 1, 1], kwargs = {'x_ptr': x_1, 'y_ptr': y_1, 'out_ptr': empty_like, 'n': sym_numel_default, 'BLOCK': 16});  floordiv = x_1 = y_1 = sym_numel_default = add_kernel = None
    sym_numel_default_1 = torch.ops.aten.sym_numel.default(empty_like)
    add_1 = sym_numel_default_1 + 15
    floordiv_1 = add_1 // 16;  add_1 = None
    scale_inplace = torch.ops.higher_order.user_triton_kernel_mutation(kernel = 'core_kernels:scale_inplace@e737d4fc2060dbda', constant_args = '{}', configs = '[]', grids = [floordiv_1, 1, 1], kwargs = {'x_ptr': empty_like, 'n': sym_numel_default_1, 'scale': 2.0, 'BLOCK': 16});  floordiv_1 = sym_numel_default_1 = scale_inplace = None
    return empty_like""")

    def test_functionalize_clones_only_written_tensors(self):
        """make_fx(functionalize(f)) uses the functional HOP and copies back only what the kernel writes."""
        gm = make_fx(torch.func.functionalize(add_then_scale))(X, Y)
        torch.testing.assert_close(gm(X, Y), expected(X, Y))
        self.assertExpectedInline(gm.code.strip(), """\
def forward(self, x_1, y_1):
    empty_like = torch.ops.aten.empty_like.default(x_1, pin_memory = False)
    add_kernel = torch.ops.higher_order.user_triton_kernel_functional(kernel = 'core_kernels:add_kernel@03df056ca1b9f536', constant_args = '{"ACT":"relu"}', configs = '[]', grids = [3, 1, 1], kwargs = {'x_ptr': x_1, 'y_ptr': y_1, 'out_ptr': empty_like, 'n': 40, 'BLOCK': 16}, tensors_to_clone = ['out_ptr']);  x_1 = y_1 = empty_like = None
    getitem = add_kernel[0];  add_kernel = None
    scale_inplace = torch.ops.higher_order.user_triton_kernel_functional(kernel = 'core_kernels:scale_inplace@e737d4fc2060dbda', constant_args = '{}', configs = '[]', grids = [3, 1, 1], kwargs = {'x_ptr': getitem, 'n': 40, 'scale': 2.0, 'BLOCK': 16}, tensors_to_clone = ['x_ptr']);  getitem = None
    getitem_1 = scale_inplace[0];  scale_inplace = None
    return getitem_1""")


@interpreter_only
class TestExport(TestCase):
    def export(self, strict):
        n = torch.export.Dim("n")
        return torch.export.export(AddModule(), (X, Y), strict=strict, dynamic_shapes=({0: n}, {0: n}))

    def test_strict_and_non_strict_hold_the_hop(self):
        """Both export modes capture the same node and run correctly for new sizes."""
        graphs = []
        for strict in (False, True):
            ep = self.export(strict)
            x, y = torch.randn(70), torch.randn(70)
            torch.testing.assert_close(ep.module()(x, y), expected(x, y))
            graphs.append([getattr(n.target, "__name__", str(n.target)) for n in ep.graph.nodes if n.op == "call_function"])
        self.assertEqual(graphs[0], graphs[1])
        self.assertEqual(graphs[0].count("user_triton_kernel_mutation"), 2)

    def test_saved_program_loads_in_a_fresh_process(self):
        """torch.export.save, then load and run in another Python process after importing the package."""
        path = os.path.join(temporary_directory(self), "add.pt2")
        torch.export.save(self.export(strict=False), path)
        script = textwrap.dedent(f"""
            import torch, torch_triton_hop
            ep = torch.export.load({path!r})
            x, y = torch.randn(33), torch.randn(33)
            torch.testing.assert_close(ep.module()(x, y), (x + y).relu() * 2.0)
            print("ok")
        """)
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                env={**os.environ, "PYTHONPATH": HERE + os.pathsep + os.environ.get("PYTHONPATH", ""),
                                     "TORCH_TRITON_HOP_KERNEL_MODULES": "core_kernels"})
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertEqual(result.stdout.strip(), "ok")

    def test_a_decomposed_program_compiles(self):
        """run_decompositions() functionalizes the launches (user_triton_kernel_functional);
        torch.compile of that program keeps the nodes (it failed: no Dynamo handler)."""
        for backend in ("aot_eager", "inductor"):
            torch._dynamo.reset()
            ep = self.export(strict=False).run_decompositions()
            compiled = torch.compile(ep.module(), backend=backend, fullgraph=True)
            torch.testing.assert_close(compiled(X, Y), expected(X, Y))



def add_or_subtract(x, y):
    """A launch on a new tensor in each branch of a torch.cond."""
    return torch.cond(x.sum() > 0, lambda x, y: add(x, y), lambda x, y: add(x, -y), (x, y))


def expected_add_or_subtract(x, y):
    return (x + y).relu() if x.sum() > 0 else (x - y).relu()


class AddOrSubtract(torch.nn.Module):
    def forward(self, x, y):
        return add_or_subtract(x, y)


def scale_in_branch(x):
    def scaled(x):
        scale_inplace[((x.numel() + 15) // 16,)](x, x.numel(), 2.0, BLOCK=16)
        return x.clone()
    return torch.cond(x.sum() > 0, scaled, lambda x: x.clone(), (x,))


def scale_a_view_in_branch(x):
    def scaled(x):
        half = x[: x.numel() // 2]
        scale_inplace[((half.numel() + 15) // 16,)](half, half.numel(), 2.0, BLOCK=16)
        return x.clone()
    return torch.cond(x.sum() > 0, scaled, lambda x: x.clone(), (x,))


def scale_outer_tensor_in_branch(x, outer):
    def scaled(x):
        scale_inplace[((outer.numel() + 15) // 16,)](outer, outer.numel(), 2.0, BLOCK=16)
        return x.clone()
    return torch.cond(x.sum() > 0, scaled, lambda x: x.clone(), (x,))


def scale_in_loop_body(x):
    def body(i, x):
        scale_inplace[((x.numel() + 15) // 16,)](x, x.numel(), 2.0, BLOCK=16)
        return i + 1, x.clone()
    return torch.while_loop(lambda i, x: i < 3, body, (torch.tensor(0, device=x.device), x))


@torch.compiler.nested_compile_region
def scale_in_region(x):
    scale_inplace[((x.numel() + 15) // 16,)](x, x.numel(), 2.0, BLOCK=16)
    return x + 1


@pytest.mark.any_device
class TestControlFlow(TestCase):
    """Launches inside torch.cond / while_loop bodies."""

    def setUp(self):
        torch._dynamo.reset()
        self.x, self.y = X.to(DEVICE), Y.to(DEVICE)

    def test_launches_in_cond_branches_export_save_load_and_compile(self):
        """The branches' launch nodes carry the meta export's verifier asks for (export refused
        them: "Node.meta add_kernel is missing val field"); both branches run after a round trip
        through torch.export.save / load, and under torch.compile."""
        positive, negative = (self.x.abs() + 0.1, self.y), (-self.x.abs() - 0.1, self.y)
        path = os.path.join(temporary_directory(self), "cond.pt2")
        for strict in (False, True):
            ep = torch.export.export(AddOrSubtract(), positive, strict=strict)
            torch.export.save(ep, path)
            loaded = torch.export.load(path)
            for args in (positive, negative):
                torch.testing.assert_close(loaded.module()(*args), expected_add_or_subtract(*args))
        compiled = torch.compile(add_or_subtract, fullgraph=True)
        for args in (positive, negative):
            torch.testing.assert_close(compiled(*args), expected_add_or_subtract(*args))

    def test_a_launch_writing_an_input_of_a_body_is_refused(self):
        """torch's control-flow operators take their bodies to be pure; a kernel writing an input
        of one had its write dropped by torch.compile (the input kept its values). Refused, as
        torch refuses x.mul_(2) there, for the body's arguments, views of them and outer tensors,
        with grad on and off (where torch.cond allows an in-place torch op, it cannot see ours)."""
        x = self.x.abs() + 0.1
        cases = [
            (scale_in_branch, (x.clone(),), "inside torch.cond writes its argument 'x_ptr'"),
            (scale_a_view_in_branch, (x.clone(),), "inside torch.cond writes its argument 'x_ptr'"),
            (scale_outer_tensor_in_branch, (x.clone(), x.clone()), "inside torch.cond writes its argument 'x_ptr'"),
            (scale_in_loop_body, (x.clone(),), "inside torch.while_loop writes its argument 'x_ptr'"),
        ]
        for grad in (True, False):
            with torch.set_grad_enabled(grad):
                for fn, args, message in cases:
                    torch._dynamo.reset()
                    # Dynamo's error for x.mul_(2) there too (UncapturedHigherOrderOpError
                    # where torch.cond / while_loop rewrap their bodies' errors, else Unsupported)
                    with self.assertRaisesRegex(torch._dynamo.exc.TorchDynamoException, message):
                        torch.compile(fn, backend="aot_eager", fullgraph=True)(*args)
                with self.assertRaisesRegex(Exception, "Write into a new tensor made in the body"):
                    scale_in_branch(x.clone())  # torch.cond outside torch.compile traces its branches too

    def test_a_launch_writing_an_input_of_a_nested_compile_region(self):
        """torch 2.13's Dynamo inlines a region whose body writes its input, so the write stays, as
        eagerly. torch 2.11's records it as an invoke_subgraph whose functionalization dropped the
        kernel's write (a silent wrong result): refused there."""
        x = self.x.abs() + 0.1
        compiled = torch.compile(scale_in_region, backend="aot_eager", fullgraph=True)
        if nested_regions_keep_kernel_writes():
            written, eager_written = x.clone(), x.clone()
            torch.testing.assert_close(compiled(written), scale_in_region(eager_written))
            torch.testing.assert_close(written, eager_written)
            torch.testing.assert_close(written, 2 * x)
        else:
            with self.assertRaisesRegex(torch._dynamo.exc.TorchDynamoException,
                                        "inside torch.compiler.nested_compile_region writes its argument 'x_ptr'"):
                compiled(x.clone())


@interpreter_only
class TestCompile(TestCase):
    @pytest.mark.parametrize("backend", ["aot_eager"])
    def test_compile_fullgraph(self, backend="aot_eager"):
        """torch.compile(fullgraph=True) captures the launch without a graph break."""
        compiled = torch.compile(add_then_scale, backend=backend, fullgraph=True, dynamic=True)
        for n in (9, 40):
            x, y = torch.randn(n), torch.randn(n)
            torch.testing.assert_close(compiled(x, y), expected(x, y))


def launch(kernel, x, y, block=16):
    """block=None for an autotuned kernel, whose configs set BLOCK."""
    out = torch.empty_like(x)
    meta = {} if block is None else {"BLOCK": block}
    kernel[lambda meta: ((meta["n"] + meta["BLOCK"] - 1) // meta["BLOCK"],)](x, y, out, x.numel(), **meta)
    return out


def launch_wrapped_here(kernel, x, y):
    return launch(wrap_triton(kernel), x, y)


GLOBAL_KERNEL = wrap_triton(add_kernel)


def launch_global(x, y):
    return launch(GLOBAL_KERNEL, x, y)


class KernelModule(torch.nn.Module):
    def __init__(self, kernel):
        super().__init__()
        self.kernel = kernel

    def forward(self, x, y):
        return launch(self.kernel, x, y)


class CountingBackend:
    def __init__(self):
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return gm.forward


@pytest.mark.any_device
class TestCompiledCodeLaunchesTheKernelOfTheCall(TestCase):
    """Compiled code launches the kernel the wrapper holds at each call. Before, another
    kernel reached in the same place launched the first one (a silent wrong result)."""

    def setUp(self):
        torch._dynamo.reset()
        self.x, self.y = X.to(DEVICE), Y.to(DEVICE)

    def test_another_wrapper_passed_as_an_argument(self):
        compiled = torch.compile(launch, backend="aot_eager")
        torch.testing.assert_close(compiled(wrap_triton(add_kernel), self.x, self.y), self.x + self.y)
        torch.testing.assert_close(compiled(wrap_triton(mul_kernel), self.x, self.y), self.x * self.y)
        torch.testing.assert_close(compiled(wrap_triton(add_autotuned), self.x, self.y, None), self.x + self.y)

    def test_a_global_wrapper_rebound(self):
        global GLOBAL_KERNEL
        compiled = torch.compile(launch_global, backend="aot_eager")
        try:
            torch.testing.assert_close(compiled(self.x, self.y), self.x + self.y)
            GLOBAL_KERNEL = wrap_triton(mul_kernel)
            torch.testing.assert_close(compiled(self.x, self.y), self.x * self.y)
        finally:
            GLOBAL_KERNEL = wrap_triton(add_kernel)

    def test_a_module_whose_kernel_attribute_is_set_again(self):
        module = KernelModule(wrap_triton(add_kernel))
        compiled = torch.compile(module, backend="aot_eager")
        torch.testing.assert_close(compiled(self.x, self.y), self.x + self.y)
        module.kernel = wrap_triton(mul_kernel)
        torch.testing.assert_close(compiled(self.x, self.y), self.x * self.y)

    def test_a_raw_kernel_argument_wrapped_in_the_compiled_code(self):
        """torch's documented pattern with the kernel as an argument; on CPU Dynamo holds the raw
        kernel as a plain object, on a GPU as its TritonKernelVariable (reproduced here)."""
        for gpu_like in (False, True):
            torch._dynamo.reset()
            with raw_kernels_as_on_a_gpu() if gpu_like else contextlib.nullcontext():
                compiled = torch.compile(launch_wrapped_here, backend="aot_eager")
                torch.testing.assert_close(compiled(add_kernel, self.x, self.y), self.x + self.y)
                torch.testing.assert_close(compiled(mul_kernel, self.x, self.y), self.x * self.y)

    def test_a_new_wrapper_of_the_same_kernel_reuses_the_compiled_code(self):
        """The guards are on the wrapper's kernel and settings, not on the wrapper object: a
        wrapper made for each call does not recompile; other settings do."""
        backend = CountingBackend()
        compiled = torch.compile(launch, backend=backend)
        for _ in range(3):
            torch.testing.assert_close(compiled(wrap_triton(add_kernel), self.x, self.y), self.x + self.y)
        self.assertEqual(backend.graphs, 1)
        torch.testing.assert_close(compiled(wrap_triton(add_kernel, writes=["out_ptr"]), self.x, self.y), self.x + self.y)
        self.assertEqual(backend.graphs, 2)


def launch_in_a_frame_dynamo_skips(kernel, x, y, block=16):
    torch._dynamo.skip_frame()  # what Dynamo does to a frame it gives up on ("falling back to eager")
    out = torch.empty_like(x)
    meta = {} if block is None else {"BLOCK": block}
    # A tuple for every BLOCK (16 or 32): a grid function's result is a 1-element array under
    # triton 3.6's interpreter, which numpy >= 2.4 does not take as an index.
    kernel[((x.numel() + 15) // 16,)](x, y, out, x.numel(), **meta)
    return out


def launch_from_a_skipped_frame(kernel, x, y, block=16):
    return launch_in_a_frame_dynamo_skips(kernel, x, y, block) * 2


@pytest.mark.any_device
class TestALaunchInCodeDynamoRunsAsPythonIsNotCompiled(TestCase):
    """Where Dynamo gives up on a frame, the frame runs as Python, and each function it calls is
    a new frame for Dynamo to compile. The eager launch is not compiled: before, Dynamo traced
    the package and triton (its interpreter raised; on a GPU the launch machinery was traced)."""

    def setUp(self):
        torch._dynamo.reset()
        self.x, self.y = X.to(DEVICE), Y.to(DEVICE)

    def test_plain_autotuned_and_heuristics_kernels(self):
        for kernel, block in [(add_kernel, 16), (add_autotuned, None), (add_heuristics_above, None)]:
            torch._dynamo.reset()
            backend = CountingBackend()
            compiled = torch.compile(launch_from_a_skipped_frame, backend=backend)
            for _ in range(2):  # the first launch, then the generated fast launch
                torch.testing.assert_close(compiled(wrap_triton(kernel), self.x, self.y, block),
                                           (self.x + self.y) * 2)
            self.assertEqual(backend.graphs, 1)  # `* 2`, and nothing of the launch

SHIFT = 1


@triton.jit
def shift_kernel(x_ptr, out_ptr, n, SHIFT_BY: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + SHIFT_BY, mask=mask)


@pytest.mark.any_device
class TestCompiledCodeFollowsTheTuningLayers(TestCase):
    """What @triton.autotune and @triton.heuristics decide with, changed after a compile: the
    compiled code follows, as eager launches do. Before, it kept the captured config (torch's
    test_triton_kernel_prune_configs_by_recompile)."""

    def setUp(self):
        torch._dynamo.reset()
        self.x = X.to(DEVICE)
        self.autotuned = triton.autotune(configs=[triton.Config({"SHIFT_BY": 1, "BLOCK": 16})], key=["n"])(
            shift_kernel)
        self.with_heuristic = triton.heuristics({"SHIFT_BY": lambda args: 1, "BLOCK": lambda args: 16})(shift_kernel)

    def check_follows(self, compiled, kernel, change, shift_after):
        backend = CountingBackend()
        torch.testing.assert_close(compiled(backend)(kernel, self.x), self.x + 1)
        change()
        torch.testing.assert_close(compiled(backend)(kernel, self.x), self.x + shift_after)
        self.assertEqual(backend.graphs, 2)

    def test_configs_replaced(self):
        def replace():
            self.autotuned.configs = [triton.Config({"SHIFT_BY": 5, "BLOCK": 16})]
        self.check_follows(self.compiled_wrapping_outside, self.autotuned, replace, 5)

    def test_a_config_replaced_in_the_list_with_the_kernel_wrapped_in_the_compiled_code(self):
        for gpu_like in (False, True):
            torch._dynamo.reset()
            self.autotuned.configs = [triton.Config({"SHIFT_BY": 1, "BLOCK": 16})]
            with raw_kernels_as_on_a_gpu() if gpu_like else contextlib.nullcontext():
                self.check_follows(self.compiled_wrapping_inside, self.autotuned,
                                   lambda: self.autotuned.configs.__setitem__(0, triton.Config({"SHIFT_BY": 3,
                                                                                                "BLOCK": 16})), 3)

    def test_a_config_added(self):
        def add():  # the pruning keeps the last
            self.autotuned.configs.append(triton.Config({"SHIFT_BY": 4, "BLOCK": 16}))
            self.autotuned.early_config_prune = lambda configs, named_args, **kwargs: configs[-1:]
        self.check_follows(self.compiled_wrapping_outside, self.autotuned, add, 4)

    def test_a_heuristic_replaced(self):
        self.check_follows(self.compiled_wrapping_outside, self.with_heuristic,
                           lambda: self.with_heuristic.values.__setitem__("SHIFT_BY", lambda args: 2), 2)

    @staticmethod
    def compiled_wrapping_outside(backend):
        return lambda kernel, x: torch.compile(shift_tuned, backend=backend, fullgraph=True)(wrap_triton(kernel), x)

    @staticmethod
    def compiled_wrapping_inside(backend):
        return torch.compile(lambda kernel, x: shift_tuned(wrap_triton(kernel), x), backend=backend, fullgraph=True)


def shift_tuned(kernel, x):
    out = torch.empty_like(x)
    kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
    return out


shift_by_global = wrap_triton(triton.heuristics({"SHIFT_BY": lambda args: SHIFT})(shift_kernel))
# A heuristic that reads data: under torch.compile it runs on fake tensors, which have none.
shift_by_address = wrap_triton(triton.heuristics({"SHIFT_BY": lambda args: args["x_ptr"].data_ptr() % 1 + 7})(
    shift_kernel))


def shift(kernel, x):
    out = torch.empty_like(x)
    kernel[((x.numel() + 15) // 16,)](x, out, x.numel(), BLOCK=16)
    return out


@pytest.mark.any_device
class TestHeuristicsUnderCompile(TestCase):
    def setUp(self):
        torch._dynamo.reset()
        self.x = X.to(DEVICE)

    def test_a_global_a_heuristic_reads_guards_the_compiled_code(self):
        """Dynamo traces the heuristic, as torch's own front end does: the global it reads is guarded."""
        global SHIFT
        compiled = torch.compile(shift, backend="aot_eager", fullgraph=True)
        try:
            torch.testing.assert_close(compiled(shift_by_global, self.x), self.x + 1)
            SHIFT = 5
            torch.testing.assert_close(compiled(shift_by_global, self.x), self.x + 5)
        finally:
            SHIFT = 1

    def test_a_heuristic_that_cannot_run_at_capture_is_a_clear_error_or_a_graph_break(self):
        """fullgraph=True: an error naming the heuristic and why. Without it, the graph breaks at
        the launch, which runs eagerly (before: a RecursionError)."""
        with self.assertRaisesRegex(Exception, r"<lambda>, a heuristic or pruning function of the kernel, raised "
                                               r"RuntimeError.*fake tensors and symbolic sizes"):
            torch.compile(shift, backend="aot_eager", fullgraph=True)(shift_by_address, self.x)
        torch._dynamo.reset()
        breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
        torch.testing.assert_close(torch.compile(shift, backend="aot_eager")(shift_by_address, self.x), self.x + 7)
        self.assertGreater(sum(torch._dynamo.utils.counters["graph_break"].values()), breaks)



@triton.jit
def copy_to_address(table_ptr, x_ptr, n, BLOCK: tl.constexpr):
    """Grouped GEMM's pattern: the output's address is read from a table of data_ptr()s."""
    offs = tl.arange(0, BLOCK)
    out = tl.load(table_ptr).to(tl.pointer_type(tl.float32))
    tl.store(out + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def double_through_its_address(x_ptr, n, BLOCK: tl.constexpr):
    """A pointer to its own argument, made again from the argument's address."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr.to(tl.int64).to(tl.pointer_type(tl.float32)) + offs, x * 2, mask=offs < n)


def read_around_a_copy_to_an_address(x, table, out):
    before = out + 1
    wrap_triton(copy_to_address)[(1,)](table, x, x.numel(), BLOCK=16)
    return before, out * 2


@pytest.mark.any_device
class TestMemoryThatIsNoArgument(TestCase):
    """A kernel storing through a pointer made from an integer may write memory that is none of
    its arguments. Before, torch.compile read `out` after the launch as if the launch had not
    written it (inductor: zeros for 0, 2, 4, ...; a silent wrong result). Now torch.compile
    breaks the graph there (fullgraph=True: the error) and functionalization refuses it."""

    def inputs(self):
        x, out = torch.arange(16.0, device=DEVICE), torch.zeros(16, device=DEVICE)
        return x, torch.tensor([out.data_ptr()], device=DEVICE), out

    def test_runs_eagerly_and_under_make_fx_in_program_order(self):
        expected = (torch.ones(16, device=DEVICE), torch.arange(16.0, device=DEVICE) * 2)
        for run in (read_around_a_copy_to_an_address, make_fx(read_around_a_copy_to_an_address)(*self.inputs())):
            for got, want in zip(run(*self.inputs()), expected):
                torch.testing.assert_close(got, want)

    def test_torch_compile_breaks_the_graph_there_and_launches_it_eagerly(self):
        torch._dynamo.reset()
        breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
        before, after = torch.compile(read_around_a_copy_to_an_address)(*self.inputs())
        torch.testing.assert_close(before, torch.ones(16, device=DEVICE))
        torch.testing.assert_close(after, torch.arange(16.0, device=DEVICE) * 2)
        self.assertGreater(sum(torch._dynamo.utils.counters["graph_break"].values()), breaks)

    def test_an_autotuned_kernel_wrapped_in_the_compiled_code_launches_after_the_break(self):
        """The wrapper is made while Dynamo traces; its launch runs eagerly. Before, under the
        interpreter it took triton's autotuner, which cannot run there ("0 active drivers")."""
        tuned = triton.autotune([triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])(
            copy_to_address)

        def copy(x, table, out):
            wrap_triton(tuned)[(1,)](table, x, x.numel())
            return out * 2

        torch._dynamo.reset()
        torch.testing.assert_close(torch.compile(copy)(*self.inputs()), torch.arange(16.0, device=DEVICE) * 2)

    def test_is_refused_where_the_program_is_functionalized(self):
        functionalized = {
            "inductor": torch.compile(read_around_a_copy_to_an_address, fullgraph=True),
            "aot_eager": torch.compile(read_around_a_copy_to_an_address, fullgraph=True, backend="aot_eager"),
            "functionalize": lambda *args: make_fx(torch.func.functionalize(read_around_a_copy_to_an_address))(*args),
        }
        for name, run in functionalized.items():
            torch._dynamo.reset()
            with self.subTest(name), self.assertRaisesRegex(
                    Exception, r"kernel 'copy_to_address': a store through a pointer made from an integer "
                               r"\(tt.int_to_ptr\).* Compile without fullgraph=True"):
                run(*self.inputs())

    def test_a_kernel_whose_pointer_is_its_argument_compiles_with_its_writes_declared(self):
        def double(x):
            x = x + 1
            wrap_triton(double_through_its_address, writes=["x_ptr"])[(1,)](x, x.numel(), BLOCK=16)
            return x * 3

        x = torch.arange(16.0, device=DEVICE)
        torch._dynamo.reset()
        torch.testing.assert_close(torch.compile(double, fullgraph=True)(x), (x + 1) * 6)
        with self.assertRaisesRegex(Exception, r"kernel 'double_through_its_address': a store through a pointer "
                                               r"made from an integer"):
            torch._dynamo.reset()
            torch.compile(_double_undeclared, fullgraph=True)(x)


@triton.jit
def copy_from_address(table_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """The input's address is read from a table of data_ptr()s."""
    offs = tl.arange(0, BLOCK)
    source = tl.load(table_ptr).to(tl.pointer_type(tl.float32))
    tl.store(out_ptr + offs, tl.load(source + offs, mask=offs < n), mask=offs < n)


def double_then_copy_from_address(w, table):
    w.mul_(2)
    out = torch.empty(16, device=w.device)
    wrap_triton(copy_from_address)[(1,)](table, out, 16, BLOCK=16)
    return out


def copy_from_address_then_double(w, table):
    out = torch.empty(16, device=w.device)
    wrap_triton(copy_from_address)[(1,)](table, out, 16, BLOCK=16)
    w.mul_(2)
    return out + 1


@pytest.mark.any_device
class TestMemoryReadThatIsNoArgument(TestCase):
    """A kernel loading through a pointer made from an integer may read memory that is none of
    its arguments. Before, torch.compile moved an in-place update of that tensor across the
    launch: under aot_eager the launch read w before `w.mul_(2)` written before it (written back
    when the graph ends); under inductor it read w after `w.mul_(2)` written after it. Now
    torch.compile breaks the graph there (fullgraph=True: the error)."""

    def inputs(self):
        w = torch.arange(16.0, device=DEVICE)
        return w, torch.tensor([w.data_ptr()], device=DEVICE)

    def test_compiled_code_launches_it_in_program_order(self):
        w = torch.arange(16.0, device=DEVICE)
        expected = {double_then_copy_from_address: w * 2, copy_from_address_then_double: w + 1}
        for program, want in expected.items():
            for backend in ("inductor", "aot_eager"):
                with self.subTest(program=program.__name__, backend=backend):
                    torch._dynamo.reset()
                    breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
                    w, table = self.inputs()
                    torch.testing.assert_close(torch.compile(program, backend=backend)(w, table), want)
                    torch.testing.assert_close(w, torch.arange(16.0, device=DEVICE) * 2)
                    self.assertGreater(sum(torch._dynamo.utils.counters["graph_break"].values()), breaks)

    def test_fullgraph_says_where_it_loads(self):
        torch._dynamo.reset()
        with self.assertRaisesRegex(Exception, r"kernel 'copy_from_address': a load through a pointer made from an "
                                               r"integer \(tt.int_to_ptr\) at .*test_capture.py:\d+: the kernel may "
                                               r"read memory that is none of its arguments.* Compile without "
                                               r"fullgraph=True"):
            torch.compile(double_then_copy_from_address, fullgraph=True)(*self.inputs())

    def test_eager_make_fx_and_export_keep_it_in_program_order(self):
        class Program(torch.nn.Module):
            def forward(self, w, table):
                return double_then_copy_from_address(w, table)

        runs = {"eager": double_then_copy_from_address,
                "make_fx": make_fx(double_then_copy_from_address)(*self.inputs()),
                "export": torch.export.export(Program(), self.inputs()).module()}
        for name, run in runs.items():
            with self.subTest(name):
                torch.testing.assert_close(run(*self.inputs()), torch.arange(16.0, device=DEVICE) * 2)


def _double_undeclared(x):
    x = x + 1
    wrap_triton(double_through_its_address)[(1,)](x, x.numel(), BLOCK=16)
    return x * 3
