"""Migrating from torch.library.wrap_triton (issue 24): torch's documented patterns, with ours.

torch documents `wrap_triton(kernel)[grid](...)` called inside the function being compiled, on
a raw @triton.jit kernel, often inside a `torch.library.triton_op` (or `custom_op`) body.
Replacing torch's `wrap_triton` by `torch_triton_hop.wrap_triton` in those places must work
with fullgraph=True and the default backend, give eager's results, and put our kernel in the
graph (a custom_op body stays opaque, as with torch's).

On a GPU, Dynamo holds a raw JITFunction / Autotuner as its own TritonKernelVariable (it does
so when torch.utils._triton.has_triton() is true); on CPU it holds it as a plain object.
Before the fix, wrap_triton inside the compiled function stopped there on a GPU ("Unsupported
hasattr call ... hasattr(TritonKernelVariable, __wrapped_triton_kernel__)"). The tests marked
interpreter reproduce that on CPU with _compat_dynamo.raw_kernels_as_on_a_gpu(); the
any_device tests run on a GPU unchanged, where Dynamo does it itself.
"""

import pytest
import torch
import triton
import triton.language as tl

from torch_triton_hop import wrap_triton
from torch_triton_hop._compat_dynamo import raw_kernels_as_on_a_gpu

from generated_code import ON_GPU, compile_and_code, launches

DEVICE = "cuda" if ON_GPU else "cpu"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def add_autotuned(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def inputs():
    g = torch.Generator().manual_seed(0)
    return torch.randn(40, generator=g).to(DEVICE), torch.randn(40, generator=g).to(DEVICE)


# --- wrap_triton inside the compiled function ------------------------------------------------

def tuple_grid(x, y):
    out = torch.empty_like(x)
    wrap_triton(add_kernel)[(triton.cdiv(x.numel(), 16),)](x, y, out, x.numel(), BLOCK=16)
    return out


def grid_function(x, y):
    out = torch.empty_like(x)
    n = out.numel()

    def grid(meta):
        return (triton.cdiv(n, meta["BLOCK"]),)

    wrap_triton(add_kernel)[grid](x, y, out, n, 16)  # BLOCK by position, as torch's example
    return out


def run_method(x, y):
    out = torch.empty_like(x)
    wrap_triton(add_kernel).run(x, y, out, x.numel(), BLOCK=16, grid=(triton.cdiv(x.numel(), 16),))
    return out


def with_writes(x, y):
    out = torch.empty_like(x)
    wrap_triton(add_kernel, writes=["out_ptr"])[(triton.cdiv(x.numel(), 16),)](x, y, out, x.numel(), BLOCK=16)
    return out


def autotuned(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    wrap_triton(add_autotuned)[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
    return out


def wrapped_again(x, y):
    """wrap_triton of a kernel already wrapped at module level: the same wrapper, as eagerly."""
    out = torch.empty_like(x)
    wrap_triton(add_kernel_wrapped)[(triton.cdiv(x.numel(), 16),)](x, y, out, x.numel(), BLOCK=16)
    return out


def wrapped_twice(x, y):
    out = torch.empty_like(x)
    wrap_triton(wrap_triton(add_kernel, writes=["out_ptr"]))[(triton.cdiv(x.numel(), 16),)](x, y, out, x.numel(),
                                                                                              BLOCK=16)
    return out


add_kernel_wrapped = wrap_triton(add_kernel)
INSIDE = {fn.__name__: fn for fn in (tuple_grid, grid_function, run_method, with_writes, autotuned, wrapped_again,
                                     wrapped_twice)}


def check_compiles_to_our_launch(fn, kernel_name):
    """fullgraph, default backend: eager's result, and the generated code launches the kernel.
    On CPU the launch is our launch path's, which names the kernel by our key
    (module:name@digest); on a GPU it is inductor's launch of the kernel it compiled."""
    x, y = inputs()
    expected = fn(x, y)
    torch.testing.assert_close(expected, x + y)  # the premise: eagerly the kernel adds
    out, code = compile_and_code(fn, x, y)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    assert len(launches(code, kernel_name, module=__name__)) == 1, code


def dynamo_graph(fn):
    """The graph Dynamo captures for fn (fullgraph), which inductor then compiles."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return torch._inductor.compile(gm, example_inputs)

    x, y = inputs()
    torch.testing.assert_close(torch.compile(fn, fullgraph=True, backend=backend)(x, y), fn(x, y), rtol=0, atol=0)
    (gm,) = graphs
    return gm


def our_launches(gm):
    from torch_triton_hop import triton_kernel_wrapper_mutation

    return [node for node in gm.graph.nodes if node.target is triton_kernel_wrapper_mutation]


@pytest.mark.any_device
@pytest.mark.parametrize("name", sorted(INSIDE))
def test_wrap_triton_inside_the_compiled_function(name):
    fn = INSIDE[name]
    kernel = "add_autotuned" if name == "autotuned" else "add_kernel"
    check_compiles_to_our_launch(fn, kernel)
    (launch,) = our_launches(dynamo_graph(fn))
    assert launch.kwargs["kernel"].startswith(f"{__name__}:{kernel}@")


@pytest.mark.interpreter
@pytest.mark.parametrize("name", sorted(INSIDE))
def test_wrap_triton_inside_the_compiled_function_where_dynamo_holds_the_kernel_as_on_a_gpu(name):
    """Before: Unsupported hasattr call ... hasattr(TritonKernelVariable, __wrapped_triton_kernel__)."""
    fn = INSIDE[name]
    kernel = "add_autotuned" if name == "autotuned" else "add_kernel"
    with raw_kernels_as_on_a_gpu():
        check_compiles_to_our_launch(fn, kernel)
        (launch,) = our_launches(dynamo_graph(fn))
    assert launch.kwargs["kernel"].startswith(f"{__name__}:{kernel}@")


def touches_the_raw_kernel(x):
    return x + hasattr(add_kernel, "fn")


@pytest.mark.interpreter
def test_the_reproduction_holds_raw_kernels_as_dynamo_does_on_a_gpu():
    """The premise of the test above: within raw_kernels_as_on_a_gpu(), Dynamo holds the raw
    kernel as its TritonKernelVariable (hasattr on it is what stopped wrap_triton); without
    it, as a plain object."""
    x = torch.zeros(4)
    assert torch.equal(torch.compile(touches_the_raw_kernel, fullgraph=True, backend="eager")(x), x + 1)
    torch._dynamo.reset()
    with raw_kernels_as_on_a_gpu(), pytest.raises(Exception, match="TritonKernelVariable"):
        torch.compile(touches_the_raw_kernel, fullgraph=True, backend="eager")(x)


@pytest.mark.gpu
def test_gpu_dynamo_holds_raw_kernels_as_its_own_variable():
    """The premise on a GPU: what raw_kernels_as_on_a_gpu() reproduces on CPU is Dynamo's own
    behaviour there."""
    with pytest.raises(Exception, match="TritonKernelVariable"):
        torch.compile(touches_the_raw_kernel, fullgraph=True, backend="eager")(torch.zeros(4, device="cuda"))


# --- inside a torch.library.triton_op body -----------------------------------------------------

@torch.library.triton_op("tth_migration::add", mutates_args=())
def add_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    output = torch.empty_like(x)
    n_elements = output.numel()

    def grid(meta):
        return (triton.cdiv(n_elements, meta["BLOCK"]),)

    wrap_triton(add_kernel)[grid](x, y, output, n_elements, 16)
    return output


@torch.library.triton_op("tth_migration::add_autotuned", mutates_args=())
def add_autotuned_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    output = torch.empty_like(x)
    n_elements = output.numel()
    wrap_triton(add_autotuned)[lambda meta: (triton.cdiv(n_elements, meta["BLOCK"]),)](x, y, output, n_elements)
    return output


def calls_add_op(x, y):
    return add_op(x, y)


def calls_add_autotuned_op(x, y):
    return add_autotuned_op(x, y)


TRITON_OPS = {"add_kernel": calls_add_op, "add_autotuned": calls_add_autotuned_op}


class _Module(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, y):
        return self.fn(x, y)


@pytest.mark.any_device
@pytest.mark.parametrize("kernel", sorted(TRITON_OPS))
def test_wrap_triton_inside_a_triton_op(kernel):
    """torch.compile sees through a triton_op (AOTAutograd decomposes it by running its body),
    so inductor launches our kernel itself; export keeps the op, and decomposing it gives our
    launch."""
    fn = TRITON_OPS[kernel]
    check_compiles_to_our_launch(fn, kernel)
    program = torch.export.export(_Module(fn), inputs()).run_decompositions(decompose_custom_triton_ops=True)
    ours = [node for node in program.graph.nodes if "user_triton_kernel" in str(node.target)]
    assert [node.kwargs["kernel"].rpartition("@")[0] for node in ours] == [f"{__name__}:{kernel}"], program.graph
    x, y = inputs()
    torch.testing.assert_close(program.module()(x, y), fn(x, y), rtol=0, atol=0)


@pytest.mark.interpreter
@pytest.mark.parametrize("kernel", sorted(TRITON_OPS))
def test_wrap_triton_inside_a_triton_op_where_dynamo_holds_kernels_as_on_a_gpu(kernel):
    with raw_kernels_as_on_a_gpu():
        check_compiles_to_our_launch(TRITON_OPS[kernel], kernel)


# --- inside a torch.library.custom_op body -----------------------------------------------------

@torch.library.custom_op("tth_migration::add_custom", mutates_args=())
def add_custom(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    output = torch.empty_like(x)
    wrap_triton(add_kernel)[(triton.cdiv(output.numel(), 16),)](x, y, output, output.numel(), BLOCK=16)
    return output


@add_custom.register_fake
def _(x, y):
    return torch.empty_like(x)


def calls_add_custom(x, y):
    return add_custom(x, y)


@pytest.mark.any_device
@pytest.mark.parametrize("on_a_gpu", [False, True], ids=["as_here", "dynamo_as_on_a_gpu"])
def test_wrap_triton_inside_a_custom_op(on_a_gpu):
    """A custom_op is opaque to torch.compile, as with torch's wrap_triton: the graph calls the
    op, whose body launches the kernel eagerly at run time."""
    if on_a_gpu and ON_GPU:
        pytest.skip("on a GPU the as_here case is this one")
    x, y = inputs()
    expected = calls_add_custom(x, y)
    torch.testing.assert_close(expected, x + y)
    with raw_kernels_as_on_a_gpu() if on_a_gpu else torch.no_grad():
        out, code = compile_and_code(calls_add_custom, x, y)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    assert "torch.ops.tth_migration.add_custom.default(" in code, code
    assert launches(code, "add_kernel", module=__name__) == [], code


def _not_a_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK):
    pass


@pytest.mark.interpreter
@pytest.mark.parametrize("on_a_gpu", [False, True], ids=["as_here", "dynamo_as_on_a_gpu"])
@pytest.mark.parametrize("not_a_kernel, type_name", [(_not_a_kernel, "function"), ([add_kernel], "list")],
                         ids=["function", "list"])
def test_wrap_triton_of_a_non_kernel_inside_the_compiled_function_says_what_it_got(not_a_kernel, type_name, on_a_gpu):
    """Before: for a function "could not find the triton kernel behind UserDefinedObjectVariable(...)",
    for a list Dynamo's InternalTorchDynamoError; now eager's message."""
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(not_a_kernel)[(1,)](x, y, out, x.numel(), BLOCK=16)
        return out

    x, y = inputs()
    with raw_kernels_as_on_a_gpu() if on_a_gpu else torch.no_grad():
        torch._dynamo.reset()
        with pytest.raises(Exception, match=rf"expected a @triton.jit kernel.*\(got '{type_name}'\)\. Decorate"):
            torch.compile(f, fullgraph=True)(x, y)
