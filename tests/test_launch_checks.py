"""Launch inputs that triton would silently get wrong are refused (issue 15, part 3).

See [Note: Launch checks]. Covered here, each at capture (make_fx real / fake / symbolic,
torch.compile) and, for a negative size in a tuple grid, eagerly:
  - a grid with a negative size (a tuple, a list, a callable's result, a symbolic size
    whose value is negative; eager `k[grid]` and `k.run(grid=...)`), while a zero size runs
    no program and raises nothing;
  - a grid larger than the device allows (CUDA: 2**31-1 x 65535 x 65535) and one with
    2**31 programs or more (triton's launcher counts them in a C int);
  - an int argument outside [-2**63, 2**64) and a finite float beyond float32's range;
  - tensor arguments on two devices outside the interpreter (under it, allowed), and a
    tensor on the meta device among tensors with data (everywhere, eagerly too), while a
    launch whose tensors are all on meta computes nothing, as any operation on meta does;
  - bad grids (not a tuple / list / callable, floats, rank 0 or 4, a callable returning
    None), arguments no launch takes (a list, a str, a numpy array), missing arguments read
    by a grid function, a grid function reading a name the launch lacks and a keyword that
    names no parameter (a misspelled one with a default ran with the default): our error,
    naming the kernel, in every mode (eagerly too, where triton's would be about its
    internals; arguments that do not bind stay triton's TypeError there, which names them).
CPU tests use a non-interpreted JITFunction on fake CUDA tensors (capture never launches);
tests marked gpu launch for real.
"""

import pytest
import torch
import triton
import triton.language as tl
from torch.fx.experimental.proxy_tensor import make_fx
from triton.runtime.jit import JITFunction

from torch_triton_hop import wrap_triton
from torch_triton_hop.errors import UnsupportedTritonKernelError

MODES = ["eager", "real", "fake", "symbolic", "compile", "export", "export_nonstrict"]


def add_one_fn(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


def add_scalar_fn(x_ptr, out_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + value, mask=offs < n)


def add_with_default_fn(x_ptr, out_ptr, n, value=1.0, BLOCK: tl.constexpr = 16):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + value, mask=offs < n)


def add_one_even_fn(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


add_one = wrap_triton(triton.jit(add_one_fn))
add_with_default = wrap_triton(triton.jit(add_with_default_fn))
add_scalar = wrap_triton(triton.jit(add_scalar_fn))
# Compiled for a GPU even under TRITON_INTERPRET=1: capture checks it without launching.
add_one_compiled = wrap_triton(JITFunction(add_one_fn))

NEGATIVE = r"grid of kernel 'add_one_fn' has a negative size \(got \(-1,[ 1]*\)\)\. .*raises nothing.*size of 0 is valid"


def launch(grid, kernel=add_one):
    def f(x):
        out = torch.full_like(x, -7.0)
        kernel[grid](x, out, x.numel(), BLOCK=16)
        return out

    return f


def capture(fn, *args, mode="fake"):
    return make_fx(fn, tracing_mode=mode)(*args)


class _Module(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def run_in(mode, fn, *args):
    """fn(*args) eagerly, or captured by a front end and run."""
    if mode == "eager":
        return fn(*args)
    if mode in ("real", "fake", "symbolic"):
        return capture(fn, *args, mode=mode)(*args)
    if mode == "compile":
        torch._dynamo.reset()
        return torch.compile(fn, fullgraph=True)(*args)
    program = torch.export.export(_Module(fn), args, strict=mode == "export")
    return program.module()(*args)


def refused(mode, match):
    """Our error; Dynamo (torch.compile, strict export) raises its own, with ours as its explanation."""
    return pytest.raises(Exception if mode in ("compile", "export") else UnsupportedTritonKernelError, match=match)


# --- negative grids ----------------------------------------------------------------------

@pytest.mark.interpreter
@pytest.mark.parametrize("grid", [(-1,), (-1, 1)], ids=["rank1", "rank2"])
def test_a_negative_tuple_grid_is_refused_eagerly(grid):
    """Before: the interpreter ran range(-1) programs, none, and returned without a word."""
    with pytest.raises(UnsupportedTritonKernelError, match=NEGATIVE):
        launch(grid)(torch.zeros(8))


@pytest.mark.interpreter
def test_a_negative_grid_given_to_run_is_refused_eagerly():
    x = torch.zeros(8)
    with pytest.raises(UnsupportedTritonKernelError, match=NEGATIVE):
        add_one.run(x, torch.empty_like(x), 8, BLOCK=16, grid=(-1,), warmup=False)


@pytest.mark.interpreter
def test_a_zero_size_grid_stays_valid_and_runs_no_program():
    for fn in (launch((0,)), launch(lambda meta: (0,))):
        assert fn(torch.zeros(8)).tolist() == [-7.0] * 8
        gm = capture(fn, torch.zeros(8), mode="real")
        assert gm(torch.zeros(8)).tolist() == [-7.0] * 8


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
@pytest.mark.parametrize("grid", [(-1,), [-1], lambda meta: (-1,)], ids=["tuple", "list", "callable"])
def test_a_negative_grid_is_refused_at_capture(mode, grid):
    with pytest.raises(UnsupportedTritonKernelError, match=NEGATIVE):
        capture(launch(grid), torch.zeros(8), mode=mode)


@pytest.mark.interpreter
def test_a_symbolic_grid_size_is_checked_by_its_value_and_guarded():
    """(n - 10,) is negative for n = 8: refused; for n = 40 it is captured (with a guard
    n >= 10 under torch.compile, so an n < 10 recompiles and is refused)."""
    fn = launch(lambda meta: (meta["n"] - 10,))
    with pytest.raises(UnsupportedTritonKernelError, match=r"negative size \(got \(-2,\)\)"):
        capture(fn, torch.zeros(8), mode="real")
    with pytest.raises(UnsupportedTritonKernelError, match="negative size"):
        capture(fn, torch.zeros(8), mode="symbolic")
    assert "user_triton_kernel_mutation" in capture(fn, torch.zeros(40), mode="symbolic").code

    torch._dynamo.reset()
    compiled = torch.compile(fn, dynamic=True, fullgraph=True)
    assert compiled(torch.zeros(40)).tolist() == [1.0] * 40
    with pytest.raises(Exception, match="negative size"):
        compiled(torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("grid", [(-1,), lambda meta: (-1,)], ids=["tuple", "callable"])
def test_a_negative_grid_is_refused_by_torch_compile(grid):
    torch._dynamo.reset()
    with pytest.raises(Exception, match=NEGATIVE):
        torch.compile(launch(grid), fullgraph=True)(torch.zeros(8))


# --- grids beyond what a launch allows -----------------------------------------------------

def on_cuda(grid, kernel=add_one_compiled):
    """A launch on a fake CUDA tensor: the device's limits apply (capture only)."""
    def f(x):
        x = torch.empty(x.shape, device="cuda")
        out = torch.empty_like(x)
        kernel[grid](x, out, x.numel(), BLOCK=16)
        return out

    return f


@pytest.mark.parametrize("grid", [(1, 65536), (1, 1, 65536), (2**31,)], ids=["y", "z", "x"])
def test_a_grid_beyond_cudas_limits_is_refused_at_capture(grid):
    with pytest.raises(UnsupportedTritonKernelError,
                       match=r"grid of kernel 'add_one_fn' is larger than a launch on cuda:0 allows .*"
                       r"at most \(2147483647, 65535, 65535\) programs per dimension"):
        capture(on_cuda(grid), torch.zeros(8))


def test_a_grid_of_2_to_the_31_programs_is_refused_at_capture():
    """Within CUDA's per-dimension limits, but triton's launcher multiplies the sizes in a
    C int: 2**31 programs overflow to a negative count and it launches nothing."""
    with pytest.raises(UnsupportedTritonKernelError, match=r"larger than a launch on cuda:0 allows \(got "
                       r"\(65536, 32768, 1\)\)\. Triton's launcher counts the programs in a 32-bit int"):
        capture(on_cuda((2**16, 2**15)), torch.zeros(8))


def test_a_grid_at_cudas_limits_is_captured():
    gm = capture(on_cuda((2**15, 65535)), torch.zeros(8))
    assert "grids = [32768, 65535, 1]" in gm.code


@pytest.mark.interpreter
def test_the_interpreter_has_no_grid_limits():
    """It runs programs in a Python loop: a large grid is slow, not wrong."""
    gm = capture(launch((1, 70000)), torch.zeros(8))
    assert "grids = [1, 70000, 1]" in gm.code


# --- scalars out of their triton type's range ----------------------------------------------

def with_value(value):
    def f(x):
        out = torch.empty_like(x)
        add_scalar[(1,)](x, out, x.numel(), value, BLOCK=16)
        return out

    return f


@pytest.mark.interpreter
@pytest.mark.parametrize("value", [2**64, -2**63 - 1])
def test_an_int_outside_64_bits_is_refused_at_capture(value):
    with pytest.raises(UnsupportedTritonKernelError,
                       match=rf"argument 'value' of kernel 'add_scalar_fn' is an int outside the 64-bit range "
                       rf"\(got {value}\)"):
        capture(with_value(value), torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("value", [1e39, -3.5e38])
def test_a_float_beyond_float32_is_refused_at_capture(value):
    """Before: triton passed it as float32, infinity, without a word."""
    with pytest.raises(UnsupportedTritonKernelError, match=r"'value' .* is a float beyond float32's range"):
        capture(with_value(value), torch.zeros(8))
    with pytest.raises(Exception, match="float beyond float32"):
        torch._dynamo.reset()
        torch.compile(with_value(value), fullgraph=True)(torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("value", [2**63, -2**63, 3.0e38, float("inf"), float("-inf")])
def test_values_at_the_edges_of_the_range_are_captured(value):
    capture(with_value(value), torch.zeros(8))


# --- tensors on several devices ------------------------------------------------------------

def test_tensors_on_two_devices_are_refused_outside_the_interpreter():
    def f(x):
        out = torch.empty(8, device="cuda")
        add_one_compiled[(1,)](x, out, x.numel(), BLOCK=16)
        return out

    with pytest.raises(UnsupportedTritonKernelError,
                       match=r"tensor arguments of kernel 'add_one_fn' are on several devices "
                       r"\(got \{'x_ptr': 'cpu', 'out_ptr': 'cuda:0'\}\)"):
        capture(f, torch.zeros(8))


@pytest.mark.interpreter
def test_the_interpreter_accepts_tensors_on_several_devices():
    """It runs every kernel on host copies of its tensors (a fake CUDA tensor here: capture only)."""
    def f(x):
        out = torch.empty(8, device="cuda")
        add_one[(1,)](x, out, x.numel(), BLOCK=16)
        return out

    assert "user_triton_kernel_mutation" in capture(f, torch.zeros(8)).code


# --- tensors on the meta device --------------------------------------------------------------

META_OUT = (r"argument 'out_ptr' is on the meta device in a launch of kernel 'add_one_fn' whose other tensor "
            r"arguments have data \(\{'x_ptr': 'cpu'\}\)\. A meta tensor has no memory .* Allocate 'out_ptr' on cpu")


def into(device):
    def f(x):
        out = torch.full((8,), -7.0, device=device)
        add_one[(1,)](x, out, x.numel(), BLOCK=16)
        return out

    return f


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", MODES)
def test_a_meta_tensor_among_real_ones_is_refused_in_every_mode(mode):
    """Before: make_fx (real), fake / symbolic capture and export recorded the launch without
    a word; running it chose the HOP's Meta rule (any meta tensor among the arguments does),
    so the kernel never ran and the output kept what it was allocated with. Eagerly and under
    torch.compile triton failed on the meta tensor with "Cannot copy out of meta tensor"."""
    assert run_in(mode, into("cpu"), torch.zeros(8)).tolist() == [1.0] * 8  # the premise: the launch writes
    with refused(mode, META_OUT):
        run_in(mode, into("meta"), torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", ["eager", "real", "fake"])
def test_a_meta_input_among_real_ones_is_refused(mode):
    def f(x):
        out = torch.full((8,), -7.0)
        add_one[(1,)](torch.empty(8, device="meta"), out, x.numel(), BLOCK=16)
        return out

    with refused(mode, r"argument 'x_ptr' is on the meta device in a launch of kernel 'add_one_fn' whose other "
                 r"tensor arguments have data \(\{'out_ptr': 'cpu'\}\)"):
        run_in(mode, f, torch.zeros(8))


@pytest.mark.interpreter
def test_a_graph_run_with_a_meta_tensor_among_real_ones_refuses_it():
    """The graph was captured on CPU tensors; the Meta rule refuses what capture would have."""
    def f(x, out):
        add_one[(1,)](x, out, x.numel(), BLOCK=16)
        return out

    gm = capture(f, torch.zeros(8), torch.zeros(8))
    assert gm(torch.zeros(8), torch.zeros(8)).tolist() == [1.0] * 8
    with pytest.raises(UnsupportedTritonKernelError, match=r"argument 'out_ptr' is on the meta device"):
        gm(torch.zeros(8), torch.empty(8, device="meta"))


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", ["eager", "real", "fake", "symbolic"])
def test_a_launch_with_every_tensor_on_meta_computes_nothing(mode):
    """As any operation on meta tensors: no data, nothing to compute, no error (before: triton's
    "Cannot copy out of meta tensor" eagerly)."""
    x = torch.zeros(8, device="meta")
    out = run_in(mode, into("meta"), x)
    assert out.device.type == "meta" and out.shape == (8,)


# --- bad grids and arguments, in every mode --------------------------------------------------

def launch_with(grid, *args, **kwargs):
    def f(x):
        out = torch.full_like(x, -7.0)
        named = {"x": x, "out": out, "n": x.numel()}  # the names stand for these; other values are passed as is
        add_one[grid](*[named[a] if a in ("x", "out", "n") else a for a in args], **kwargs)
        return out

    return f


BAD_GRIDS = {
    "str": ("abc", r"kernel 'add_one_fn': the grid must be a tuple or list of ints / SymInts, or a callable "
                   r"returning one \(got 'abc'\)"),
    "int": (1, r"kernel 'add_one_fn': the grid must be a tuple .* \(got 1\)"),
    "floats": ((1.0,), r"kernel 'add_one_fn': the grid must be a tuple .* \(got [\[(]1\.0,?[)\]]\)"),
    "callable_floats": (lambda meta: (1.5,), r"kernel 'add_one_fn': the grid must be a tuple .* \(got [\[(]1\.5,?[)\]]\)"),
    "callable_quotient": (lambda meta: (meta["n"] / meta["BLOCK"],),
                          r"kernel 'add_one_fn': the grid must be a tuple .* \(got [\[(].*0\.5.*[)\]]\)"),
    "callable_none": (lambda meta: None, r"kernel 'add_one_fn': the grid must be a tuple .* callable returning one"),
    "rank0": ((), r"kernel 'add_one_fn': a grid of rank 0 \(got \(\)\)\. Use 1 to 3 dimensions"),
    "rank4": ((1, 1, 1, 1), r"kernel 'add_one_fn': a grid of rank 4 \(got \(1, 1, 1, 1\)\)"),
    "none": (None, r"kernel 'add_one_fn' was called without a grid\. Call it as kernel\[grid\]"),
}


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", ["eager", "real", "fake", "export_nonstrict"])
@pytest.mark.parametrize("name", sorted(BAD_GRIDS))
def test_a_bad_grid_gets_our_error_in_every_mode(name, mode):
    """Before, eagerly: triton's own errors ("can only concatenate str (not "tuple") to str" for
    a str grid, the interpreter's "'float' object cannot be interpreted as an integer", "grid
    must have at most 3 dimensions", "object of type 'NoneType' has no len()"), or (rank 0) a
    launch of one program."""
    grid, match = BAD_GRIDS[name]
    with refused(mode, match):
        run_in(mode, launch_with(grid, "x", "out", "n", BLOCK=16), torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("name", ["str", "floats", "rank4", "none"])
def test_a_bad_grid_gets_our_error_under_torch_compile(name):
    grid, match = BAD_GRIDS[name]
    with refused("compile", match):
        run_in("compile", launch_with(grid, "x", "out", "n", BLOCK=16), torch.zeros(8))


@pytest.mark.interpreter
def test_eagerly_a_grid_function_reading_a_launch_option_says_triton_does_not_give_it():
    """triton gives a plain kernel's grid function its arguments, not num_warps; before, the
    advice was to pass num_warps to the launch, which it was."""
    with refused("eager", r"raised KeyError\('num_warps'\): 'num_warps' is a launch option, which triton gives a "
                          r"grid function only from an autotune config"):
        run_in("eager", launch_with(lambda meta: (meta["num_warps"],), "x", "out", "n", BLOCK=16, num_warps=4),
               torch.zeros(8))


MISSING_N = (r"missing kernel arguments \['n'\] in a launch of kernel 'add_one_fn'\. .* Pass them by position or "
             r"by name \(its parameters are \['x_ptr', 'out_ptr', 'n', 'BLOCK'\]\)")


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", ["real", "fake", "symbolic", "compile", "export", "export_nonstrict"])
def test_a_grid_function_reading_a_missing_argument_names_the_parameter(mode):
    """Before: KeyError: 'n' from inside the user's lambda (torch.compile: "Observed exception"),
    where a tuple grid already named the missing parameter."""
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
    with refused(mode, MISSING_N):
        run_in(mode, launch_with(grid, "x", "out", BLOCK=16), torch.zeros(8))


def test_a_refused_launch_under_compile_names_nothing_the_user_did_not_write():
    """Refused while Dynamo traces (no kernel runs). Before, Dynamo headed our explanation with
    "Higher Order Operator: torch_triton_hop_dynamo_entry", the package's internal marker."""
    with pytest.raises(Exception, match=MISSING_N) as refusal:
        run_in("compile", launch_with((1,), "x", "out", BLOCK=16), torch.zeros(8))
    message = str(refusal.value)
    assert "Higher Order Operator" not in message and "dynamo_entry" not in message, message


@pytest.mark.interpreter
def test_eagerly_a_missing_argument_is_triton_s_type_error_which_names_it():
    """Arguments that do not bind are left to triton: it binds them before calling the grid."""
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
    with pytest.raises(TypeError, match=r"add_one_fn\(\) missing 1 required positional argument: 'n'"):
        launch_with(grid, "x", "out", BLOCK=16)(torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", MODES)
def test_a_misspelled_keyword_is_refused_in_every_mode(mode):
    """`BLOKC=` for BLOCK. Eagerly, before: triton's `missing 1 required positional argument:
    'BLOCK'`, which never names the typo; for a parameter with a default, no error at all."""
    with refused(mode, r"kernel 'add_one_fn' has no parameter 'BLOKC'\. .* Use one of its parameters "
                       r"\['x_ptr', 'out_ptr', 'n', 'BLOCK'\] or a launch option such as num_warps"):
        run_in(mode, launch_with((1,), "x", "out", "n", BLOKC=16), torch.zeros(8))


add_one_tuned = wrap_triton(triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})],
                                             key=["n"])(triton.jit(add_one_fn)))


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", MODES)
def test_an_argument_the_autotuner_sets_given_to_the_launch_is_refused_in_every_mode(mode):
    """BLOCK=16 for a kernel whose configs tune BLOCK: triton refuses it ("Conflicting
    meta-parameters", or on a GPU "got multiple values for argument 'BLOCK'" when the
    compiled code launched it). Before, the interpreter's one config, BLOCK=16, agreed with the
    call, so it ran on a CPU and failed only on a GPU."""
    with refused(mode, r"kernel 'add_one_fn' got \['BLOCK'\], which its @triton.autotune configs set\. "
                       r"Triton refuses .* Leave them out of the call"):
        run_in(mode, launch((1,), kernel=add_one_tuned), torch.zeros(8))


def _tensor_heuristic(args):
    return torch.zeros(1)


add_one_tensor_heuristic_below = wrap_triton(triton.autotune(configs=[triton.Config({"BLOCK": 16})], key=["n"])(
    triton.heuristics({"EVEN": _tensor_heuristic})(triton.jit(add_one_even_fn))))
add_one_tensor_heuristic_above = wrap_triton(triton.heuristics({"EVEN": _tensor_heuristic})(
    triton.autotune(configs=[triton.Config({"BLOCK": 16})], key=["n"])(triton.jit(add_one_even_fn))))


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kernel", [add_one_tensor_heuristic_below, add_one_tensor_heuristic_above],
                         ids=["below_autotune", "above_autotune"])
def test_a_heuristic_returning_a_tensor_is_refused_in_every_mode(kernel, mode):
    """Before, under torch.compile: Dynamo's "Unexpected type in sourceless builder ... FakeTensor"
    from the grid's META; elsewhere "autotune config values must be ...", naming no heuristic."""
    def f(x):
        out = torch.empty_like(x)
        kernel[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, out, x.numel())
        return out

    with refused(mode, r"the heuristic for 'EVEN' of kernel 'add_one_even_fn' returned a Tensor\. Its value is a "
                       r"constexpr"):
        run_in(mode, f, torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", MODES)
def test_a_grid_function_sees_the_defaults_of_parameters_not_passed(mode):
    """triton gives the grid every parameter, defaults included. Before, every capture refused
    `meta["BLOCK"]` for a BLOCK left at its default (a KeyError), which eager launches run."""
    def f(x):
        out = torch.full_like(x, -7.0)
        add_with_default[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, out, x.numel())
        return out

    x = torch.arange(40.0)
    torch.testing.assert_close(run_in(mode, f, x), x + 1.0)


@pytest.mark.interpreter
def test_eagerly_a_misspelled_parameter_with_a_default_is_refused_not_run_with_the_default():
    """Before: triton ignored `valeu=`, and the kernel added the default 1.0 instead of 5.0."""
    x = torch.zeros(8)
    out = torch.empty_like(x)
    add_with_default[(1,)](x, out, 8, value=5.0, BLOCK=16, num_warps=1)  # a launch option is still a keyword
    assert out.eq(5.0).all()
    with pytest.raises(UnsupportedTritonKernelError, match="kernel 'add_with_default_fn' has no parameter 'valeu'"):
        add_with_default[(1,)](x, out, 8, valeu=5.0, BLOCK=16)


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", ["eager", "real", "fake", "compile", "export_nonstrict"])
def test_a_grid_function_reading_a_name_the_launch_lacks_says_so(mode):
    """A typo (meta["N"] for n): before, KeyError: 'N' from inside the user's lambda (torch.compile:
    Dynamo's "Observed exception")."""
    grid = lambda meta: (triton.cdiv(meta["N"], meta["BLOCK"]),)  # noqa: E731
    named = r"KeyError\('N'\), and 'N' is no argument of the launch\. .* Pass 'N' to the launch"
    if mode == "compile" and torch.__version__ < "2.13":  # 2.11's Dynamo KeyError holds a message, not the key
        named = rf"(?:{named}|a KeyError for a name the launch does not have\. .* Pass it to the launch)"
    with refused(mode, rf"the grid function of kernel 'add_one_fn' raised {named} if it is a parameter, or read one "
                       r"of \['x_ptr', 'out_ptr', 'n', 'BLOCK'\]"):
        run_in(mode, launch_with(grid, "x", "out", "n", BLOCK=16), torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", ["eager", "real", "fake"])
@pytest.mark.parametrize("value, type_name", [([1, 2], "list"), ("8", "str")], ids=["list", "str"])
def test_an_argument_no_launch_takes_is_refused_in_every_mode(mode, value, type_name):
    """Before, eagerly: the interpreter's AttributeError("'list' object has no attribute 'dtype'")."""
    with refused(mode, rf"argument 'n' of kernel 'add_one_fn' is a {type_name}, where the kernel takes a tensor"):
        run_in(mode, launch_with((1,), "x", "out", value, BLOCK=16), torch.zeros(8))


@triton.jit
def add_pair_kernel(pair, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(pair[0] + offs, mask=offs < n)
    tl.store(out_ptr + offs, a + tl.load(pair[1] + offs, mask=offs < n), mask=offs < n)


def add_pair(x, y):
    out = torch.empty_like(x)
    wrap_triton(add_pair_kernel)[(1,)]((x, y), out, x.numel(), BLOCK=16)
    return out


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", MODES)
def test_a_tuple_argument_runs_eagerly_and_is_refused_at_capture(mode):
    """triton (>= 3.3) takes a tuple of tensors for one parameter. Before, under torch.compile:
    Dynamo's InternalTorchDynamoError (AsPythonConstantNotImplementedError); elsewhere advice to
    pass torch.as_tensor(pair)."""
    x, y = torch.randn(8), torch.randn(8)
    if mode == "eager":
        assert torch.equal(run_in(mode, add_pair, x, y), x + y)
        return
    with refused(mode, r"argument 'pair' of kernel 'add_pair_kernel' is a tuple: triton's tuple arguments are not "
                       r"supported by wrap_triton\. .* one parameter per element of 'pair'"):
        run_in(mode, add_pair, x, y)


@pytest.mark.interpreter
def test_a_numpy_array_argument_is_refused_eagerly():
    """Before: the interpreter's AttributeError("'numpy.ndarray' object has no attribute 'type'")."""
    x = torch.zeros(8)
    with pytest.raises(UnsupportedTritonKernelError,
                       match=r"argument 'x_ptr' of kernel 'add_one_fn' is a numpy ndarray, .*torch.from_numpy\(x_ptr\)"):
        add_one[(1,)](x.numpy(), torch.empty_like(x), 8, BLOCK=16)


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", ["eager", "real", "fake", "compile"])
@pytest.mark.parametrize("where", ["scalar", "constexpr"])
def test_a_numpy_int_is_refused_in_every_mode_saying_to_pass_an_int(mode, where):
    """triton takes a numpy int for no parameter ("cannot convert 8 of type numpy.int64").
    Before, under torch.compile, Dynamo made it a tensor, which the kernel was analysed with
    and launched with (triton's "invalid operands of type pointer<int64>"); elsewhere the
    advice was torch.as_tensor(n), which fails the same way."""
    import numpy as np

    def f(x):
        out = torch.empty_like(x)
        if where == "scalar":
            add_one[(1,)](x, out, np.int64(x.numel()), BLOCK=16)
        else:
            add_one[(1,)](x, out, x.numel(), BLOCK=np.int64(16))
        return out

    name = "n" if where == "scalar" else "BLOCK"
    with refused(mode, rf"argument '{name}' of kernel 'add_one_fn' is a numpy (int64|value), which triton takes for "
                       rf"no parameter\. Pass a Python number .*\(int\({name}\), or {name}\.item\(\)\)"):
        run_in(mode, f, torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", ["real", "fake", "compile", "export_nonstrict"])
def test_too_many_arguments_name_the_kernel(mode):
    with refused(mode, r"5 positional arguments for kernel 'add_one_fn', which has 4 parameters"):
        run_in(mode, launch_with((1,), "x", "out", "n", 16, 5), torch.zeros(8))


# --- on a GPU --------------------------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_negative_and_oversized_grids_and_mixed_devices_are_refused():
    """On a real device: eagerly, under make_fx and torch.compile."""
    kernel = wrap_triton(triton.jit(add_one_fn))
    x = torch.zeros(8, device="cuda")
    with pytest.raises(UnsupportedTritonKernelError, match="negative size"):
        launch((-1,), kernel)(x)
    for grid, match in (((-1,), "negative size"), ((1, 65536), "larger than a launch on cuda"),
                        ((2**16, 2**15), "32-bit int")):
        with pytest.raises(UnsupportedTritonKernelError, match=match):
            capture(launch(grid, kernel), x)
        torch._dynamo.reset()
        with pytest.raises(Exception, match=match):
            torch.compile(launch(grid, kernel), fullgraph=True)(x)

    def mixed(x):
        out = torch.empty(8)  # on the CPU
        kernel[(1,)](x, out, x.numel(), BLOCK=16)
        return out

    with pytest.raises(UnsupportedTritonKernelError, match="several devices"):
        capture(mixed, x)


@pytest.mark.gpu
def test_gpu_eager_launches_refuse_odd_devices_and_bad_grids_on_first_sight():
    """The eager fast path checks a launch where it meets a new specialization (and where it
    leaves the fast path): after a good launch, a CPU or meta tensor among CUDA ones gets our
    error instead of triton's "Pointer argument (at 1) cannot be accessed from Triton (cpu
    tensor?)" or a launch on a null pointer; every tensor on meta computes nothing."""
    kernel = wrap_triton(triton.jit(add_one_fn))
    x = torch.zeros(8, device="cuda")
    out = torch.full_like(x, -7.0)
    kernel[(1,)](x, out, 8, BLOCK=16)
    assert out.tolist() == [1.0] * 8  # the premise: this specialization launches
    for other, match in ((torch.empty(8), r"several devices \(got \{'x_ptr': 'cuda:0', 'out_ptr': 'cpu'\}\)"),
                         (torch.empty(8, device="meta"), r"argument 'out_ptr' is on the meta device")):
        with pytest.raises(UnsupportedTritonKernelError, match=match):
            kernel[(1,)](x, other, 8, BLOCK=16)
        with pytest.raises(UnsupportedTritonKernelError, match=match):
            capture(lambda x: kernel[(1,)](x, other.clone(), 8, BLOCK=16), x, mode="real")
    meta = torch.empty(8, device="meta")
    assert kernel[(1,)](meta, meta, 8, BLOCK=16) is None
    fresh = wrap_triton(triton.jit(add_one_fn))
    for grid, match in (((1.0,), "the grid must be a tuple"), ("abc", "the grid must be a tuple"),
                        ((1, 1, 1, 1), "a grid of rank 4")):
        with pytest.raises(UnsupportedTritonKernelError, match=match):
            fresh[grid](x, out, 8, BLOCK=16)


def _grid_without_meta():
    return (1,)


class _Grids:
    def grid(self, meta):  # a bound method takes meta as its one argument
        return (triton.cdiv(meta["n"], meta["BLOCK"]),)


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", ["eager", "real", "fake", "compile", "export_nonstrict"])
def test_a_grid_function_that_takes_no_argument_is_refused(mode):
    """Before, eagerly and under make_fx: TypeError: _grid_without_meta() takes 0 positional arguments
    but 1 was given, raised from inside the package."""
    with refused(mode, r"the grid function of kernel 'add_one_fn' does not take one argument \(got "
                       r"'_grid_without_meta\(\)'\)\. Triton calls it with one dict \(meta\)"):
        run_in(mode, launch_with(_grid_without_meta, "x", "out", "n", BLOCK=16), torch.zeros(8))


@pytest.mark.interpreter
@pytest.mark.parametrize("mode", ["eager", "real", "compile"])
def test_a_bound_method_as_grid_function_is_called_with_meta(mode):
    out = run_in(mode, launch_with(_Grids().grid, "x", "out", "n", BLOCK=16), torch.zeros(8))
    torch.testing.assert_close(out, torch.ones(8))
