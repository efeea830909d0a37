"""The store-coverage proof over symbolic sizes is sound: on a fixed batch of random kernels
(benchmarks/fuzz_symbolic_proof.py; see [Note: A proof over symbolic sizes, by translation]),
every question proven for a symbolic size s is proven concretely at each value of s checked
(whether the output is stored, each element once, loaded once, and, for an output written over
the kernel's input, loaded only by the program that stores it and before it stores it).

No kernel runs (the proof reads the TTIR and the launch's layouts, on meta and fake tensors):
no mark. A failure prints each soundness bug with its kernel, symbolic launch, value of s and
concrete reason; `python benchmarks/fuzz_symbolic_proof.py --seed SEED --index N --verbose`
reproduces one; larger batches: --count.
"""

import inspect
import os
import sys
import time

import pytest
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import fuzz_symbolic_proof  # noqa: E402

SEED = 0
COUNT = 80  # about 38 s on the 2-core CPU machine (about a third of the questions proven symbolically)


def test_what_is_proven_for_a_symbolic_size_is_proven_at_each_size(tmp_path):
    start = time.perf_counter()
    checks = fuzz_symbolic_proof.run_batch(SEED, 0, COUNT, str(tmp_path))
    summary = fuzz_symbolic_proof.summarize(checks)
    print(f"{summary} ({time.perf_counter() - start:.1f} s)")
    wrong = [c for c in checks if c.bugs]
    assert not wrong, "\n\n".join(c.report() for c in wrong)
    # The premises: a good share of the questions is proven symbolically (about 34% of them;
    # each proof then checked at about a dozen sizes), the refusals are exercised (questions
    # the concrete proof holds for at every size asked), and the proof over symbolic sizes
    # raises nothing but NoProof ("could not be made" is an exception inside it).
    assert summary.proven >= 0.25 * summary.questions, summary
    assert summary.concrete_checks >= 5 * summary.proven, summary
    assert summary.refused_but_concrete > 0, summary
    # read_after_store_reason (an output written over its input) is asked and, in its plain
    # forms, proven symbolically (about a quarter of those asked; the rest are mutations it
    # must refuse: a load of another program's row, a load back after a store, another shift).
    assert summary.read_after_store >= 40, summary
    assert summary.read_after_store_proven >= 0.15 * summary.read_after_store, summary
    assert summary.not_made == 0, "\n\n".join(c.report() for c in checks
                                             if (c.symbolic or "").startswith(fuzz_symbolic_proof.NOT_MADE))


def test_cases_are_the_same_whatever_the_batch():
    """Case N of a seed is one kernel with its launches and sizes: a bug found in a large batch reproduces alone."""
    alone = fuzz_symbolic_proof.generate_case(SEED, 7)
    again = fuzz_symbolic_proof.generate_case(SEED, 7)

    def described(case):
        return case.source, [(launch.describe(), launch.values, launch.questions) for launch in case.launches]

    assert described(alone) == described(again)
    assert fuzz_symbolic_proof.generate_case(SEED, 8).source != alone.source


# --- the smallest kernels of the soundness bugs the fuzzer found ----------------------------------

@triton.jit
def unmasked_block_kernel(out_ptr, n, BLOCK: tl.constexpr):
    # n equals the output's number of elements, but no access compares with it: the 1-D block
    # form must not apply (the last program stores past the end where BLOCK does not divide n).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 1.0)


@triton.jit
def wrapped_then_extended_kernel(out_ptr, BLOCK: tl.constexpr):
    # pid * 2**31 wraps at 32 bits (0 or -2**31) before its sign extension; the int64 pid * 2**31
    # taken off does not: the shifts add up to BLOCK, yet every program but the first stores
    # 2**32 elements before the output.
    pid = tl.program_id(0)
    offs = (pid * 65536 * 32768) - pid.to(tl.int64) * 2147483648 + pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 1.0)


@triton.jit
def oversized_grid_kernel(out_ptr, n, BLOCK: tl.constexpr):
    # A grid far past cdiv(n, BLOCK): pid * BLOCK wraps at 32 bits to a negative offset, which
    # passes `offs < n` and stores before the output.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 1.0, mask=offs < n)


@triton.jit
def constexpr_offset_kernel(out_ptr, W: tl.constexpr):
    # A constexpr given a symbolic value: a TTIR made for one value proves nothing for the others.
    pid = tl.program_id(0)
    tl.store(out_ptr + pid * 2 + tl.arange(0, 2) + (W - 2), 1.0)


REPROS = {
    "oversized_grid": (oversized_grid_kernel, fuzz_symbolic_proof.Launch(
        {"out_ptr": "empty(3 * s)"}, {"n": "3 * s", "BLOCK": 1024}, ("s * 2048", "1", "1"), values=[2, 3])),
    "symbolic_constexpr": (constexpr_offset_kernel, fuzz_symbolic_proof.Launch(
        {"out_ptr": "empty(s, 2)"}, {"W": "s"}, ("s", "1", "1"), values=[2, 3, 5])),
    "symbolic_constexpr_static_layout": (constexpr_offset_kernel, fuzz_symbolic_proof.Launch(
        {"out_ptr": "empty(3, 2)"}, {"W": "s"}, ("3", "1", "1"), values=[2, 3, 5])),
    "unmasked_block": (unmasked_block_kernel, fuzz_symbolic_proof.Launch(
        {"out_ptr": "empty(3 * s)"}, {"n": "3 * s", "BLOCK": 4}, ("(3 * s + 3) // 4", "1", "1"), values=[2, 3, 5, 7])),
    "wrapped_then_extended": (wrapped_then_extended_kernel, fuzz_symbolic_proof.Launch(
        {"out_ptr": "empty(s, 64)"}, {"BLOCK": 64}, ("s", "1", "1"), values=[2, 3, 5, 7])),
}


@pytest.mark.parametrize("name", sorted(REPROS))
def test_the_smallest_soundness_repros(name):
    kernel, launch = REPROS[name]
    source = inspect.getsource(getattr(kernel, "fn", kernel))
    case = fuzz_symbolic_proof.Case(SEED, -1, "repro", name, source, [launch], kernel)
    for question in [("unstored", "out_ptr", False), ("unstored", "out_ptr", True)]:
        check = fuzz_symbolic_proof.check(case, launch, question)
        assert not check.bugs, check.report()
