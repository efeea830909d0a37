"""Tensor arguments that share memory, one of them written: every capture path gives eager's
result. See [Note: Arguments that share memory]."""

import logging
import os

import pytest
import torch
import triton
from torch.fx.experimental.proxy_tensor import make_fx

from torch_triton_hop import kernel_side_table, triton_kernel_wrapper_functional, wrap_triton

import core_kernels as K
from generated_code import allocations, compile_and_code, copies, launch_arguments, launches

pytestmark = pytest.mark.any_device
DEVICE = "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


def same_tensor_twice(buf):
    """Liger's in-place RMSNorm backward: dY and dX are one tensor."""
    wrap_triton(K.add_kernel)[(1,)](buf, buf, buf, buf.numel(), BLOCK=64)
    return buf


def overlapping_views(buf):
    """x = buf[0:8], out = buf[4:12]: writes land where later programs... one program reads x."""
    wrap_triton(K.add_kernel)[(1,)](buf[0:8], buf[0:8], buf[4:12], 8, BLOCK=8)
    return buf


def adjacent_views(buf):
    """x = buf[0:8], out = buf[8:16]: no element shared, one storage."""
    wrap_triton(K.add_kernel)[(1,)](buf[0:8], buf[0:8], buf[8:16], 8, BLOCK=8)
    return buf


def strided_alias(buf):
    """A (4, 4) block and its transpose: the same memory with other strides."""
    m = buf[:16].view(4, 4)
    wrap_triton(K.write_then_read)[(1,)](m.t().contiguous().view(-1), m.t(), buf[16:32], 16, BLOCK=16)
    return buf


def input_and_its_view(buf):
    """The input itself is written; a view of it is read after the write."""
    wrap_triton(K.write_then_read)[(1,)](buf, buf[4:], buf[4:8].new_empty(4), 4, BLOCK=4)
    return buf


def reads_its_own_write_through_an_alias(buf):
    out = torch.empty_like(buf)
    wrap_triton(K.write_then_read)[(1,)](buf, buf, out, buf.numel(), BLOCK=64)
    return buf, out


def untouched_alias(buf):
    """An argument the kernel never touches may alias a written one (Liger's modulated RMSNorm)."""
    out = buf[8:16]
    wrap_triton(K.untouched_argument)[(1,)](buf[:8], out, out, 8, BLOCK=8)
    return buf


def overlapping_views_off_the_start(buf):
    """The shared span starts past the start of the storage."""
    wrap_triton(K.add_kernel)[(1,)](buf[4:12], buf[4:12], buf[8:16], 8, BLOCK=8)
    return buf


CASES = [same_tensor_twice, overlapping_views, overlapping_views_off_the_start, adjacent_views, strided_alias,
         input_and_its_view, reads_its_own_write_through_an_alias, untouched_alias]
# Copies the program makes itself: strided_alias passes m.t().contiguous().
OWN_COPIES = {strided_alias: 1}


def eager(fn, buf):
    buf = buf.clone()
    out = fn(buf)
    return buf, out


def traced(fn):
    return {
        "make_fx(functionalize)": lambda buf: make_fx(torch.func.functionalize(fn))(buf.clone())(buf),
        "export": lambda buf: torch.export.export(_Module(fn), (buf.clone(),), strict=False).module()(buf),
        "compile aot_eager": lambda buf: torch.compile(fn, fullgraph=True, backend="aot_eager")(buf),
        "compile inductor": lambda buf: torch.compile(fn, fullgraph=True)(buf),
    }


class _Module(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, buf):
        return self.fn(buf)


@pytest.mark.parametrize("path", list(traced(same_tensor_twice)))
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_shared_memory_gives_eager_results(fn, path):
    torch._dynamo.reset()
    start = torch.arange(32.0, device=DEVICE)
    expected_buf, expected_out = eager(fn, start)
    buf = start.clone()
    out = traced(fn)[path](buf)
    torch.testing.assert_close(buf, expected_buf)  # the input is mutated exactly as eagerly
    torch.testing.assert_close(out, expected_out)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_shared_memory_is_written_in_place(fn, dynamic):
    """Under inductor, arguments sharing memory launch on that memory: one launch, no copy of
    their span before it and none back after it. See [Note: Reinplacing functional launches]."""
    torch._dynamo.reset()
    start = torch.arange(32.0, device=DEVICE)
    expected_buf, expected_out = eager(fn, start)
    buf = start.clone()
    out, code = compile_and_code(fn, buf, dynamic=dynamic)
    torch.testing.assert_close(buf, expected_buf)
    torch.testing.assert_close(out, expected_out)
    kernel = next(name for name in ("add_kernel", "write_then_read", "untouched_argument") if name in code)
    assert len(launches(code, kernel)) == 1, code
    assert len(copies(code)) == OWN_COPIES.get(fn, 0), code


def add_in_place_then_sum(x, y):
    """The issue's model: x is both an input and the output of the kernel, then read."""
    wrap_triton(K.add_kernel)[(triton.cdiv(x.numel(), 64),)](x, y, x, x.numel(), BLOCK=64)
    return x.sum()


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_kernel_writing_its_input_through_a_second_argument_launches_on_the_input(dynamic):
    x, y = torch.randn(256, device=DEVICE), torch.randn(256, device=DEVICE)
    expected_x = x.clone()
    expected = add_in_place_then_sum(expected_x, y)
    out, code = compile_and_code(add_in_place_then_sum, x, y, dynamic=dynamic)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(x, expected_x)
    (line,) = launches(code, "add_kernel")
    arguments = launch_arguments(line, K.add_kernel)
    assert arguments["x_ptr"] == arguments["out_ptr"] and arguments["x_ptr"].startswith("arg"), line  # the input
    assert all("((), ()" in a for a in allocations(code)), code  # only the sum's scalar


def _functional_launch(kernel, kwargs, written, shared_memory):
    key = kernel_side_table.add_kernel(kernel)
    return triton_kernel_wrapper_functional(kernel=key, constant_args="{}", configs="[]", grids=[1, 1, 1],
                                            kwargs=kwargs, tensors_to_clone=written, shared_memory=shared_memory)


def _reinplaced(functional, *args):
    from torch_triton_hop._inductor_bridge import reinplace_functional_launches

    gm = make_fx(functional, tracing_mode="fake")(*args)
    reinplace_functional_launches(gm.graph)
    gm.recompile()
    return gm, [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def test_a_group_whose_old_contents_are_read_later_keeps_its_copy(caplog):
    """The span of a shared_memory group is copied (by the functional lowering) when a later
    node reads the old contents; the debug log says why."""
    def functional(start):
        buf = start + 0  # an intermediate: no graph input to write back
        (new_out,) = _functional_launch(K.add_kernel, {"x_ptr": buf[0:8], "y_ptr": buf[0:8], "out_ptr": buf[4:12],
                                                       "n": 8, "BLOCK": 8}, ["out_ptr"], ["x_ptr,y_ptr,out_ptr"])
        return new_out, buf + 0

    buf = torch.arange(16.0, device=DEVICE)
    with caplog.at_level(logging.DEBUG, logger="torch_triton_hop._inductor_bridge"):
        gm, targets = _reinplaced(functional, buf)
    assert "user_triton_kernel_functional" in targets and "user_triton_kernel_mutation" not in targets
    assert "reads the old contents" in caplog.text, caplog.text
    new_out, old = gm(buf)
    expected = torch.arange(16.0, device=DEVICE)
    torch.testing.assert_close(old, expected)  # buf itself was not written
    torch.testing.assert_close(new_out, expected[0:8] * 2)


def test_a_group_is_written_in_place_while_another_argument_is_cloned():
    """a and b share memory and nothing reads it later: in place; out's old value is read
    later: cloned."""
    def functional(start):
        buf, out = start * 0, start + 5  # intermediates: no graph input to write back
        new_a, new_out = _functional_launch(K.write_then_read, {"a_ptr": buf, "b_ptr": buf, "out_ptr": out,
                                                                "n": 8, "BLOCK": 8}, ["a_ptr", "out_ptr"],
                                            ["a_ptr,b_ptr"])
        return new_a, new_out, out + 0

    gm, targets = _reinplaced(functional, torch.zeros(8, device=DEVICE))
    assert targets.count("user_triton_kernel_mutation") == 1 and "user_triton_kernel_functional" not in targets
    assert targets.count("aten.clone.default") == 1, gm.code
    new_a, new_out, old_out = gm(torch.zeros(8, device=DEVICE))
    torch.testing.assert_close((new_a, new_out, old_out), (torch.full((8,), 7.0, device=DEVICE),
                                                           torch.full((8,), 8.0, device=DEVICE),
                                                           torch.full((8,), 5.0, device=DEVICE)))


def reinterpreted_as_ints(buf):
    """The kernel writes floats and reads the same bytes as int32 (same width)."""
    wrap_triton(K.write_then_read)[(1,)](buf[:4], buf.view(torch.int32)[:4], buf[8:12], 4, BLOCK=4)
    return buf


def _eager_and_along(fn, path):
    """fn's buffer run along `path` (a traced() path, or inductor with every launch copied:
    pattern passes off), eager's buffer, and the start they both came from."""
    start = torch.arange(16.0, device=DEVICE)
    expected_buf, _ = eager(fn, start)
    buf = start.clone()
    _run_along(fn, path, buf)
    return buf, expected_buf, start


def _run_along(fn, path, arg):
    torch._dynamo.reset()
    if path == "inductor, every launch copied":
        with torch._inductor.config.patch(pattern_matcher=False):
            return torch.compile(fn, fullgraph=True)(arg)
    return traced(fn)[path](arg)


@pytest.mark.parametrize("path", [*traced(same_tensor_twice), "inductor, every launch copied"])
@pytest.mark.parametrize("fn", [reinterpreted_as_ints], ids=lambda f: f.__name__)
def test_shared_memory_of_different_dtypes_gives_eager_results(fn, path):
    """Members of dtypes of one width share one copy of their span where a copy is needed
    (forced here by turning inductor's pattern passes off), and launch in place otherwise."""
    buf, expected_buf, _ = _eager_and_along(fn, path)
    torch.testing.assert_close(buf, expected_buf)


def reinterpreted_as_halves(buf):
    """The kernel writes floats and reads their bytes as fp16 (another width), off the start."""
    wrap_triton(K.write_then_read)[(1,)](buf[2:6], buf.view(torch.float16)[4:8], buf[8:12], 4, BLOCK=4)
    return buf


def halves_written_floats_read(buf):
    """The kernel writes fp16 from the middle of a float on and reads the floats they fall in."""
    wrap_triton(K.write_then_read)[(1,)](buf.view(torch.float16)[3:7], buf[1:5], buf[12:16], 4, BLOCK=4)
    return buf


@pytest.mark.parametrize("path", [*traced(same_tensor_twice), "inductor, every launch copied"])
@pytest.mark.parametrize("fn", [reinterpreted_as_halves, halves_written_floats_read], ids=lambda f: f.__name__)
def test_shared_memory_of_different_widths_gives_eager_results(fn, path):
    """Members of different widths share one copy of their span, counted in the widest dtype."""
    buf, expected_buf, start = _eager_and_along(fn, path)
    assert not torch.equal(expected_buf, start)
    torch.testing.assert_close(buf, expected_buf, rtol=0, atol=0, equal_nan=True)


def test_shared_memory_of_different_widths_is_copied_once_and_says_why(caplog):
    torch._dynamo.reset()
    with caplog.at_level(logging.DEBUG, logger="torch_triton_hop._inductor_bridge"), \
            torch._inductor.config.patch(fx_graph_cache=False):
        _, code = compile_and_code(reinterpreted_as_halves, torch.arange(16.0, device=DEVICE))
    assert "dtypes of different widths" in caplog.text, caplog.text
    assert len(launches(code, "write_then_read")) == 1
    assert len(copies(code)) == 2, code  # the span copied, once, and the written members put back


def on_an_intermediate(fn):
    """fn's launch on views of a tensor the program computes, every element of which a
    pointwise op then reads (inductor computes such a tensor where it is used, unless stored)."""

    def program(x):
        buf = x * 2
        result = fn(buf)
        others = [r for r in (result if isinstance(result, tuple) else (result,)) if r is not buf]
        return buf * 3, *others  # buf itself not returned: inductor would store it whole for that

    program.__name__ = f"{fn.__name__}_on_an_intermediate"
    return program


@pytest.mark.parametrize("path", [*traced(same_tensor_twice), "inductor, every launch copied"])
@pytest.mark.parametrize("fn", [*CASES, reinterpreted_as_ints, reinterpreted_as_halves, halves_written_floats_read],
                         ids=lambda f: f.__name__)
def test_shared_memory_of_an_intermediate_gives_eager_results(fn, path):
    """A launch on two views of a computed buffer (`k(buf[:n], buf[n:])`) writes that buffer,
    for every later reader. See [Note: A span is taken of its base, not of a view]."""
    program = on_an_intermediate(fn)
    start = torch.arange(32.0, device=DEVICE)
    expected = program(start.clone())
    assert not torch.equal(expected[0], start * 6)  # the kernel changed what buf * 3 reads
    torch.testing.assert_close(_run_along(program, path, start.clone()), expected, rtol=0, atol=0, equal_nan=True)


class _TwoZeros(torch.autograd.Function):
    """Two equal torch.zeros written by one launch: AOTAutograd's CSE makes them one graph
    node, which must not make them one buffer (they never shared memory in the program)."""

    @staticmethod
    def forward(ctx, x):
        a, b = torch.zeros_like(x), torch.zeros_like(x)
        wrap_triton(K.two_outputs)[(1,)](x, a, b, x.numel(), BLOCK=64)
        ctx.save_for_backward(a, b)
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * a + b


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_equal_values_merged_by_cse_are_still_separate_buffers(backend):
    torch._dynamo.reset()
    x = torch.arange(8.0, device=DEVICE).requires_grad_()
    _TwoZeros.apply(x).sum().backward()
    expected = x.grad.clone()  # (x + 1) + 2x
    x.grad = None
    torch.compile(lambda t: _TwoZeros.apply(t).sum(), fullgraph=True, backend=backend)(x).backward()
    torch.testing.assert_close(x.grad, expected)


class _FromAParameter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.arange(32.0, device=DEVICE))

    def forward(self, x):
        buf = self.w * 2
        out = torch.empty(8, device=x.device)
        wrap_triton(K.write_then_read)[(1,)](buf[:8], buf[4:12], out, 8, BLOCK=8)
        return x + buf, out


def test_a_group_that_freezing_folds_apart_is_an_error_not_a_wrong_result():
    """Freezing folds each view of `self.w * 2` into a constant of its own; the launch would
    read a 12-element span out of an 8-element constant. See [Note: Groups inductor cannot
    keep in one memory]."""
    torch._dynamo.reset()
    model, x = _FromAParameter().eval(), torch.zeros(32, device=DEVICE)
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(model, fullgraph=True)(x), model(x))  # unfrozen: eager's
        torch._dynamo.reset()
        with torch._inductor.config.patch(freezing=True), \
                pytest.raises(Exception, match=r"arguments \['a_ptr', 'b_ptr'\] share memory in the program, and "
                                               r"inductor made them separate tensors .*freezing"):
            torch.compile(model, fullgraph=True)(x)


def int_view_of_a_slice(x):
    buf = x * 2
    s = buf[16:48]
    wrap_triton(K.write_then_read)[(1,)](s.view(torch.int32)[:8].view(torch.float32), s[4:12], buf[:8], 8, BLOCK=8)
    return buf * 3


def test_a_group_through_a_dtype_view_of_a_slice_of_an_intermediate_is_an_error_under_inductor():
    """Inductor stores `buf[16:48].view(torch.int32)` apart from buf (the span's as_strided
    cannot be rebased across the dtype view); aot_eager keeps the memory shared."""
    x = torch.arange(64.0, device=DEVICE)
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(int_view_of_a_slice, backend="aot_eager")(x), int_view_of_a_slice(x))
    torch._dynamo.reset()
    with pytest.raises(Exception, match=r"through a view of another dtype \(.*\.view\(torch\.int32\).*\) of a "
                                        r"tensor the program computes"):
        torch.compile(int_view_of_a_slice)(x)



def writes_an_expanded_intermediate(base):
    x = (base + 1).expand(4)
    K.scale_inplace[(1,)](x, 4, 3.0, BLOCK=4)
    return x


def writes_an_expanded_input(base):
    x = base.expand(4)
    K.scale_inplace[(1,)](x, 4, 3.0, BLOCK=4)
    return x


@pytest.mark.parametrize("path", list(traced(same_tensor_twice)))
@pytest.mark.parametrize("fn", [writes_an_expanded_intermediate, writes_an_expanded_input], ids=lambda f: f.__name__)
def test_a_write_through_an_expand_is_refused_where_the_program_is_functionalized(fn, path):
    """Every element of an expand() is one memory location. Eagerly (and through Dynamo alone)
    the kernel's stores land there; a functional program writes back a value per element. Before:
    a silent wrong result for an intermediate (5.0 for 2.0 under aot_eager and inductor), torch's
    "more than one element of the written-to tensor refers to a single memory location" for an
    input. torch refuses `base.expand(4).mul_(3)` eagerly too."""
    base = torch.ones(1, device=DEVICE)
    expected = fn(base.clone())
    torch._dynamo.reset()
    assert torch.equal(torch.compile(fn, backend="eager", fullgraph=True)(base.clone()), expected)
    if path == "export":  # torch.export keeps the write as written: no functionalization
        torch.testing.assert_close(traced(fn)[path](base.clone()), expected)
        return
    torch._dynamo.reset()
    with pytest.raises(Exception, match=r"kernel 'scale_inplace' writes argument 'x_ptr', in which several elements "
                                        r"are one memory location \(sizes \[4\], strides \[0\]: an expand\(\)"):
        traced(fn)[path](base.clone())


def add_one_half_to_the_other(x):
    first, second = x[:8], x[8:]
    wrap_triton(K.add_kernel)[(1,)](first, second, second, 8, BLOCK=8)
    return x + 0


def test_views_of_one_tensor_where_functionalize_makes_each_view_a_copy_are_refused():
    """torch.func.functionalize(remove="mutations_and_views") gives each view as a copy of its
    own. The launch's span of their common memory was taken of one member's copy, so the other
    member read that copy: x[8:] came out x[:8] * 2, a silent wrong result (capture hunt).
    remove="mutations" keeps them views of one memory."""
    x = torch.arange(16.0, device=DEVICE)
    expected = add_one_half_to_the_other(x.clone())
    kept = make_fx(torch.func.functionalize(add_one_half_to_the_other, remove="mutations"))(x.clone())
    assert torch.equal(kept(x.clone()), expected)
    with pytest.raises(Exception, match=r"kernel 'add_kernel': arguments \['x_ptr', 'y_ptr', 'out_ptr'\] are views "
                                        r"of one tensor .* remove='mutations_and_views'.* Use torch.func.functionalize"):
        make_fx(torch.func.functionalize(add_one_half_to_the_other, remove="mutations_and_views"))(x.clone())
