"""The TTIR read/write analysis: exact sets over the kernel corpus, safe fallback, override, cache, explain."""

import logging
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import triton
import triton.language as tl
from torch.fx.experimental.proxy_tensor import make_fx
from triton.runtime.errors import InterpreterError

from torch_triton_hop import explain, identify_accessed_tensors, identify_mutated_tensors, wrap_triton
from torch_triton_hop.errors import UnsupportedTritonKernelError

HERE = os.path.dirname(os.path.abspath(__file__))

from kernels import CASES

import core_kernels as K



@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_read_and_write_sets_are_exact(case):
    if "atomic_load" in case.name and not hasattr(tl, "atomic_load"):
        pytest.skip("tl.atomic_load is new in triton 3.7")
    accesses = identify_accessed_tensors(case.kernel, case.make_kwargs())
    assert accesses.fallback_reason is None
    assert (tuple(accesses.reads), tuple(accesses.writes)) == (case.reads, case.writes), case.note


def test_corpus_covers_the_constructs():
    assert len(CASES) >= 40


@pytest.mark.interpreter
@pytest.mark.parametrize("case", [c for c in CASES if c.interpretable][:: 4], ids=lambda c: c.name)
def test_corpus_writes_agree_with_running_the_kernel(case):
    """Tensors outside the analysed write set are untouched by a real (interpreted) run."""
    kwargs = case.make_kwargs()
    before = {k: v.clone() for k, v in kwargs.items() if isinstance(v, torch.Tensor)}
    try:
        case.kernel[case.grid](**kwargs)
    except InterpreterError as e:  # triton 3.6's interpreter cannot run loop-carried pointers
        pytest.skip(f"triton's interpreter cannot run this kernel: {e}")
    writes = identify_mutated_tensors(case.kernel, kwargs)
    changed = [k for k, v in before.items() if not torch.equal(v, kwargs[k])]
    assert set(changed) <= set(writes)


@triton.jit
def _impure_asm(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [tl.load(x_ptr + offs)], dtype=tl.int32,
                                  is_pure=False, pack=1)
    tl.store(out_ptr + offs, y)


def test_undecidable_kernels_fall_back_to_all_written_with_one_warning(caplog):
    kwargs = {"x_ptr": torch.zeros(16, dtype=torch.int32), "out_ptr": torch.zeros(16, dtype=torch.int32),
              "BLOCK": 16}
    with caplog.at_level(logging.WARNING, logger="torch_triton_hop._analysis"):
        for _ in range(3):
            accesses = identify_accessed_tensors(_impure_asm, kwargs)
    assert accesses.writes == ["x_ptr", "out_ptr"]
    assert "impure inline assembly" in accesses.fallback_reason
    warnings = [r for r in caplog.records if "cannot tell which arguments" in r.getMessage()]
    assert len(warnings) == 1 and "x_ptr, out_ptr" in warnings[0].getMessage()


def test_writes_override_skips_the_analysis():
    kernel = wrap_triton(_impure_asm, writes=["out_ptr"])
    kwargs = {"x_ptr": torch.zeros(16, dtype=torch.int32), "out_ptr": torch.zeros(16, dtype=torch.int32),
              "BLOCK": 16}
    assert identify_mutated_tensors(kernel, kwargs) == ["out_ptr"]


def test_scalars_and_constexprs_are_never_reported():
    kwargs = {"x_ptr": torch.ones(16), "n": 16, "scale": 2.0, "BLOCK": 16}
    assert identify_accessed_tensors(K.scale_inplace, kwargs).writes == ["x_ptr"]


def test_symbolic_and_fake_arguments_are_analysed():
    """Under make_fx(functionalize) with symbolic shapes, only the written tensor is cloned."""
    def f(x, y):
        out = torch.empty_like(x)
        wrap_triton(K.add_kernel)[(triton.cdiv(x.numel(), 16),)](x, y, out, x.numel(), BLOCK=16)
        return out

    gm = make_fx(torch.func.functionalize(f), tracing_mode="symbolic")(torch.randn(40), torch.randn(40))
    (node,) = [n for n in gm.graph.nodes if "user_triton_kernel" in str(n.target)]
    assert node.kwargs["tensors_to_clone"] == ["out_ptr"]


def test_explain_names_the_source_lines_of_each_write():
    kwargs = {"x_ptr": torch.ones(16), "y_ptr": torch.ones(16), "out_ptr": torch.ones(16), "n": 16,
              "BLOCK": 16, "ACT": None}
    text = explain(K.add_kernel, kwargs)
    store_line = next(i for i, line in enumerate(open(K.__file__).read().splitlines(), 1)
                      if "tl.store(out_ptr + offs, out" in line)
    assert "reads:  x_ptr, y_ptr" in text and "writes: out_ptr" in text
    assert f"out_ptr <- {K.__file__}:{store_line}" in text


def test_explain_on_the_command_line():
    result = subprocess.run(
        [sys.executable, "-m", "torch_triton_hop", "explain", "core_kernels:add_kernel",
         "x_ptr=f32[16]", "y_ptr=f32[16]", "out_ptr=f32[16]", "n=16", "BLOCK=16", "ACT=None"],
        capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": os.path.dirname(__file__) + os.pathsep + os.environ.get("PYTHONPATH", "")},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "writes: out_ptr" in result.stdout


TTIR = os.path.join(os.path.dirname(__file__), "ttir")


@pytest.mark.parametrize(
    "fixture, entry, reads, writes",
    [
        # tl.make_block_ptr: follow the base pointer only (block pointers are gone in triton 3.9).
        ("block_ptr_triton36.ttir", "block_ptr_kernel", {0}, {1}),
        # A host-side descriptor is its own parameter plus 2 shapes and 2 strides: out_desc is #5.
        ("host_desc_triton36.ttir", "host_desc_kernel", {0}, {5}),
        # cf.cond_br passes %a or %b to ^bb1's argument, which is stored to: both may be written.
        ("branch_to_block_argument.ttir", "k", set(), {0, 1, 2}),
    ],
)
def test_ttir_from_older_triton_releases(fixture, entry, reads, writes):
    from torch_triton_hop._analysis import _FunctionAnalysis
    from torch_triton_hop._ttir import parse_module

    functions, aliases = parse_module(open(os.path.join(TTIR, fixture)).read())
    summary = _FunctionAnalysis(functions, aliases).summary(entry)
    assert (summary.reads, set(summary.writes)) == (reads, writes)


def test_analysis_after_eager_interpreter_runs_is_unchanged():
    """Every corpus kernel launched eagerly on the interpreter, then every one analysed, in one
    fresh process: no fallback, exact sets. See [Note: Interpreter patches that outlive a run]."""
    script = textwrap.dedent("""
        import os
        os.environ["TRITON_INTERPRET"] = "1"
        from triton.runtime.errors import InterpreterError
        from torch_triton_hop import identify_accessed_tensors
        from kernels import CASES
        for case in CASES:
            if case.interpretable:
                try:
                    case.kernel[case.grid](**case.make_kwargs())
                except InterpreterError:
                    pass
        wrong = []
        for case in CASES:
            if "atomic_load" in case.name and not hasattr(__import__("triton.language").language, "atomic_load"):
                continue
            acc = identify_accessed_tensors(case.kernel, case.make_kwargs())
            if acc.fallback_reason or (tuple(acc.reads), tuple(acc.writes)) != (case.reads, case.writes):
                wrong.append((case.name, acc.fallback_reason))
        print("WRONG", wrong)
    """)
    env = {**os.environ, "PYTHONPATH": HERE + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WRONG []" in result.stdout, result.stdout[-3000:]


@triton.jit
def _row_sum(x_ptr, out_ptr, N: tl.constexpr):
    tl.store(out_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + tl.program_id(0) * N + tl.arange(0, N))))


@triton.jit
def _dropout_like(x_ptr, out_ptr, n, seed, BLOCK: tl.constexpr):
    # What the interpreter leaves patched with no trace of the original: static_assert,
    # static_range, multiple_of, max_contiguous; tl.rand uses them.
    tl.static_assert(BLOCK % 16 == 0)
    offsets = tl.max_contiguous(tl.multiple_of(tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), BLOCK), BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    for _ in tl.static_range(2):
        x = tl.where(tl.rand(seed, offsets) > 0.5, x * 2, 0.0)
    tl.store(out_ptr + offsets, x, mask=mask)


@pytest.mark.interpreter
def test_analysis_after_a_reducing_kernel_ran_on_the_interpreter_is_unchanged():
    """A kernel calling tl.sum, run by triton's interpreter (not through the package), leaves
    triton.language patched; a kernel analysed after it still gets its exact sets.
    See [Note: Interpreter patches that outlive a run]."""
    _row_sum[(4,)](torch.randn(4, 16), torch.empty(4), N=16)
    accesses = identify_accessed_tensors(_dropout_like, dict(x_ptr=torch.randn(64), out_ptr=torch.empty(64), n=64,
                                                             seed=1, BLOCK=32))
    assert accesses.fallback_reason is None
    assert (accesses.reads, accesses.writes) == (["x_ptr"], ["out_ptr"])


@triton.jit
def _store_through_int_address(table_ptr, x_ptr, BLOCK: tl.constexpr):
    # Grouped-GEMM style: an address read as an integer, turned into a pointer.
    address = tl.load(table_ptr)
    out = address.to(tl.pointer_type(tl.float32))
    tl.store(out + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)))


def test_store_through_a_pointer_made_from_an_integer_falls_back_and_explain_says_so():
    kwargs = {"table_ptr": torch.zeros(1, dtype=torch.int64), "x_ptr": torch.zeros(16), "BLOCK": 16}
    accesses = identify_accessed_tensors(_store_through_int_address, kwargs)
    assert accesses.writes == ["table_ptr", "x_ptr"]  # every tensor argument: the safe answer
    assert "tt.int_to_ptr" in accesses.fallback_reason
    assert "may write memory that is none of its arguments" in explain(_store_through_int_address, kwargs)


@triton.jit
def _load_through_int_address(table_ptr, out_ptr, BLOCK: tl.constexpr):
    # The other half of grouped GEMM's pattern: the input's address read from a table.
    source = tl.load(table_ptr).to(tl.pointer_type(tl.float32))
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.load(source + tl.arange(0, BLOCK)))


@triton.jit
def _load_from(source):
    return tl.load(source + tl.arange(0, 16))


@triton.jit
def _load_through_int_address_in_a_call(table_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), _load_from(tl.load(table_ptr).to(tl.pointer_type(tl.float32))))


@pytest.mark.parametrize("kernel", [_load_through_int_address, _load_through_int_address_in_a_call])
def test_a_load_through_a_pointer_made_from_an_integer_is_named_beside_exact_accesses(kernel):
    kwargs = {"table_ptr": torch.zeros(1, dtype=torch.int64), "out_ptr": torch.zeros(16), "BLOCK": 16}
    accesses = identify_accessed_tensors(kernel, kwargs)
    assert (accesses.fallback_reason, accesses.reads, accesses.writes) == (None, ["table_ptr"], ["out_ptr"])
    assert len(accesses.other_memory_read) == 1
    assert "tt.int_to_ptr" in accesses.other_memory_read[0] and "test_analysis.py" in accesses.other_memory_read[0]
    assert "memory that is none of its arguments: a load through a pointer made from an integer" in explain(
        kernel, kwargs)


@pytest.mark.parametrize("arguments, message", [
    (["core_kernels:add_kernel", "x_ptr=f32[8]", "y_ptr=f32[8]", "out_ptr=f32[8]", "n=8"], "missing BLOCK=..."),
    (["core_kernels:add_kernel", "x_ptr=f32[8]", "y_ptr=f32[8]", "out_ptr=f32[8]", "n=8", "BLOKC=4"],
     "has no parameter BLOKC"),
    (["no_such_module:k"], "cannot import module 'no_such_module'"),
    (["core_kernels"], "expected MODULE:KERNEL"),
])
def test_explain_command_line_usage_errors(arguments, message):
    result = subprocess.run([sys.executable, "-m", "torch_triton_hop", "explain", *arguments], capture_output=True,
                            text=True, cwd=HERE, env={**os.environ, "TRITON_INTERPRET": "1"})
    assert result.returncode == 2
    assert "usage:" in result.stderr and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_module_of_hundreds_of_interpreted_kernels_is_analysed(tmp_path, monkeypatch):
    """Found by the analysis fuzzer: translating one interpreted kernel's globals recursed through
    every other kernel of its module; at a few hundred, RecursionError and a fallback for each.
    See [Note: Translating a module of interpreted kernels]."""
    import importlib

    kernels = "".join(
        f"\n\n@triton.jit\ndef k{i}(x_ptr, out_ptr, BLOCK: tl.constexpr):\n"
        f"    offs = tl.arange(0, BLOCK)\n    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + {i})\n"
        for i in range(400)
    )
    (tmp_path / "many_interpreted_kernels.py").write_text("import triton\nimport triton.language as tl\n" + kernels)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("many_interpreted_kernels")
    kwargs = {"x_ptr": torch.zeros(16), "out_ptr": torch.zeros(16), "BLOCK": 16}
    for kernel in (module.k0, module.k399):
        accesses = identify_accessed_tensors(kernel, kwargs)
        assert accesses.fallback_reason is None
        assert (accesses.reads, accesses.writes) == (["x_ptr"], ["out_ptr"])


@triton.jit
def _store_through_a_tuple_argument(x_ptr, outs, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    tl.store(outs[0] + offs, v)
    tl.store(outs[1] + offs, v + 1)


@triton.jit
def _tuple_of_inputs_and_scales(ins, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    pair, scale = ins[1], ins[2]
    v = tl.load(ins[0] + offs, mask=mask) * scale + tl.load(pair[0] + offs, mask=mask) * pair[1]
    tl.store(out_ptr + offs, v, mask=mask)


def test_a_tuple_argument_is_analysed_leaf_by_leaf():
    """A tuple argument is one TTIR parameter per leaf (those triton folds, as an int equal to
    1, excepted); each is analysed, and reported by the tuple's name. The analysis once fell
    back here and took every tensor as written, so a read-only tuple of saved tensors made
    backward raise once launches bumped version counters."""
    x = torch.zeros(8)
    kwargs = {"x_ptr": x, "outs": (torch.zeros(8), torch.zeros(8)), "BLOCK": 8}
    accesses = identify_accessed_tensors(_store_through_a_tuple_argument, kwargs)
    assert accesses.fallback_reason is None
    assert (accesses.reads, accesses.writes) == (["x_ptr"], ["outs"])
    assert len(accesses.write_sites["outs"]) == 2  # both leaves' stores, under the tuple's name

    for scale, weight in ((2.0, 3), (2.0, 1), (1, 1)):  # an int equal to 1 is folded away
        kwargs = {"ins": (x, (torch.zeros(8), weight), scale), "out_ptr": torch.zeros(8), "n": 8, "BLOCK": 8}
        accesses = identify_accessed_tensors(_tuple_of_inputs_and_scales, kwargs)
        assert accesses.fallback_reason is None, (scale, weight)
        assert (accesses.reads, accesses.writes) == (["ins"], ["out_ptr"])


@triton.jit
def _copy_in_static_blocks(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    for i in tl.static_range(triton.cdiv(N, BLOCK)):  # a constexpr_function where a constexpr is needed
        offs = i * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)


def test_a_constexpr_function_in_static_range_is_analysed():
    """Under TRITON_INTERPRET=1 triton's constexpr_function (triton.cdiv) returns a plain int,
    and the TTIR of this kernel failed to generate: every tensor was taken as written, and a
    launch reading a tensor saved for backward made backward raise (Liger's fused MoE)."""
    x = torch.randn(40)
    accesses = identify_accessed_tensors(_copy_in_static_blocks, {"x_ptr": x, "out_ptr": torch.empty_like(x),
                                                                  "N": 40, "BLOCK": 16})
    assert accesses.fallback_reason is None
    assert (accesses.reads, accesses.writes) == (["x_ptr"], ["out_ptr"])
    x.requires_grad_()
    y = x.sin()  # saves x
    wrap_triton(_copy_in_static_blocks)[(1,)](x.detach(), torch.empty_like(y), N=40, BLOCK=16)
    y.sum().backward()
    assert triton.knobs.runtime.interpret == (os.environ.get("TRITON_INTERPRET") == "1")


@triton.jit
def _product_to_half(x_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    c = tl.load(c_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, (x * c[None, :].reshape(BLOCK)).to(tl.float16), mask=mask)


@pytest.mark.parametrize("factor", [torch.bfloat16, torch.float16, torch.float32])
def test_fp16_roundings_of_bf16_arithmetic_are_listed(factor):
    """See [Note: Float16 roundings of bfloat16 arithmetic]: only a bf16 operand (through
    reshapes) of an op rounded to fp16 is listed, by its source line."""
    kwargs = dict(x_ptr=torch.empty(16, dtype=torch.float16), c_ptr=torch.empty(16, dtype=factor),
                  out_ptr=torch.empty(16, dtype=torch.float16), n=16, BLOCK=16)
    found = identify_accessed_tensors(_product_to_half, kwargs).mixed_half_roundings
    assert len(found) == (factor == torch.bfloat16) and all("test_analysis.py:" in line for line in found), found


@triton.jit
def _undefined_name(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * undefined_scale)  # noqa: F821


def test_a_kernel_that_does_not_compile_is_named_as_the_cause(caplog):
    """Before, only "cannot tell which arguments ... writes. Pass writes=[...]", as if the analysis
    were at fault and writes= would help."""
    kwargs = {"x_ptr": torch.zeros(16), "out_ptr": torch.zeros(16), "BLOCK": 16}
    with caplog.at_level(logging.WARNING, logger="torch_triton_hop._analysis"):
        accesses = identify_accessed_tensors(_undefined_name, kwargs)
    assert accesses.writes == ["x_ptr", "out_ptr"] and "undefined_scale" in accesses.fallback_reason
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "triton did not compile it for these arguments (CompilationError" in warning
    assert "If its launch fails the same way, fix the kernel's source" in warning
