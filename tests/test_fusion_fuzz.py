"""The fusion against eager and unfused inductor on a fixed batch of random programs
(tests/fusion_fuzzer.py): random kernels with random pointwise prologues and epilogues, compiled
with fusion on; every result equal bit for bit to eager's (or, where inductor without fusion
differs from eager, to one of the two), no compile error eager does not have, no warning.

A failure prints each failing program as a standalone reproducer;
`python benchmarks/fuzz_fusion.py --seed SEED --index N --minimize` reproduces and shrinks one.
"""

import dataclasses
import logging
import time

import pytest

import fusion_fuzzer
from generated_code import ON_GPU

pytestmark = pytest.mark.any_device
SEED = 13          # issue 13: the fusion
COUNT = 100        # programs: about 2 minutes of one CPU core (interpreter); larger batches: benchmarks/fuzz_fusion.py
BATCH = 50         # programs per torch.compile: inductor's fixed cost per compile is paid once per batch
PLANTED_SEED = 23  # issue 23: programs that show a planted bug
SECOND_LAUNCH_COUNT = 30  # programs with a second launch (about 40 s)
OVER_INPUT_COUNT = 40     # programs with an output written over the kernel's input (about 50 s)
VIEWS_IN_REGIONS_COUNT = 25  # programs with pointwise code under a transposed operand (about 30 s)
KEYWORD_OPS_COUNT = 25       # programs with ops taking keyword-only arguments (about 30 s)
INDEX_OPS_COUNT = 25         # programs with operands flipped, rolled or padded (about 30 s)


def test_fused_programs_compute_eagers_results(tmp_path):
    start = time.perf_counter()
    results = []
    for first in range(0, COUNT, BATCH):
        results += fusion_fuzzer.check_range(SEED, first, BATCH, str(tmp_path))
    print(fusion_fuzzer.summarize(results, time.perf_counter() - start))
    failed = [r for r in results if r.failed]
    assert not failed, f"{len(failed)} programs failed:\n\n" + "\n\n".join(r.report() for r in failed[:5])
    # The premise: the programs ran (the generator makes valid programs) and fusion happened in
    # many of them, prologues and epilogues both, so the comparisons tested fused code.
    ran = [r for r in results if r.verdict != "invalid"]
    assert len(ran) >= 0.97 * COUNT, [r.detail for r in results if r.verdict == "invalid"][:5]
    fused = [r for r in ran if r.record.fused]
    kinds = [kind for r in ran for kind in r.record.fused.values()]
    assert len(fused) >= 0.3 * len(ran), fusion_fuzzer.summarize(results)
    # Programs 0-99 of seed 13 fuse 31 prologues and 4 epilogues (an epilogue needs a fresh
    # output and code whose result depends on the stored value, which the fuzzer's random
    # comparisons often do not; its second-launch test and the GPU batches fuse more).
    assert kinds.count("prologue") >= 0.1 * len(ran) and kinds.count("epilogue") >= 0.04 * len(ran)


def test_programs_with_a_second_launch(tmp_path):
    """Programs whose pointwise code launches a copy kernel too, so one launch's fusion meets
    another launch: an operand computed after the launch from a launch written in place,
    launches fused or refused in either order (the first GPU find of this kind: an operand
    moved before the launch that wrote what it reads)."""
    seed = fusion_fuzzer.FIRST_SEED_WITH_SECOND_LAUNCHES
    programs = [p for p in (fusion_fuzzer.generate_program(seed, i) for i in range(200))
                if "second_launch" in p.features][:SECOND_LAUNCH_COUNT]
    results = fusion_fuzzer.check_programs(programs, str(tmp_path))
    print(fusion_fuzzer.summarize(results))
    failed = [r for r in results if r.failed]
    assert not failed, f"{len(failed)} programs failed:\n\n" + "\n\n".join(r.report() for r in failed[:5])
    ran = [r for r in results if r.verdict != "invalid"]
    assert len(ran) >= 0.9 * SECOND_LAUNCH_COUNT and sum(bool(r.record.fused) for r in ran) >= 0.3 * len(ran)
    # The premise: some operand would have moved past a launch written in place.
    assert any("between the launch and an operand computed after it writes" in reason
               for r in ran for reason in r.record.refused.values()), fusion_fuzzer.summarize(results)


def test_programs_that_write_an_output_over_their_input(tmp_path):
    """Programs that launch the kernel with its input passed again as its output (Liger's
    RMSNorm backward passes dY as dX), with pointwise code on both sides: the fusion gives
    the output a buffer of its own only where the kernel provably stores every element and
    reads each only in the program that stores it, before it does ([Note: An output written
    over the kernel's own input]); the elements it leaves unwritten keep the input's values,
    and the program's results are compared on every element."""
    seed = fusion_fuzzer.FIRST_SEED_WITH_OUTPUTS_OVER_INPUTS
    programs = [p for p in (fusion_fuzzer.generate_program(seed, i) for i in range(200))
                if "output_over_input" in p.kernel.features][:OVER_INPUT_COUNT]
    results = fusion_fuzzer.check_programs(programs, str(tmp_path))
    print(fusion_fuzzer.summarize(results))
    failed = [r for r in results if r.failed]
    assert not failed, f"{len(failed)} programs failed:\n\n" + "\n\n".join(r.report() for r in failed[:5])
    ran = [r for r in results if r.verdict != "invalid"]
    assert len(ran) >= 0.9 * OVER_INPUT_COUNT
    # The premise: the pair was split and fused on either side in some programs, and refused
    # for stores that leave elements unwritten in others.
    split = [r for r in ran if {"x0", "o0"} & set(r.record.fused)]
    assert len(split) >= 0.15 * len(ran), fusion_fuzzer.summarize(results)
    assert any("the kernel writes it over x0" in reason and "unwritten" in reason
               for r in ran for reason in r.record.refused.values()), fusion_fuzzer.summarize(results)


def _checked_with_fused_regions(programs, tmp_path):
    """The programs' results, checked, and per fused launch the fusion log's `{arg: [nodes]}`."""
    class Records(logging.Handler):
        def __init__(self):
            super().__init__(logging.DEBUG)
            self.fused_lines = []

        def emit(self, record):
            message = record.getMessage()
            if message.startswith("launch ") and "): fused {" in message:  # what fused, by argument
                self.fused_lines.append(message.split("): fused ")[1].split("; not fused")[0])

    records, logger = Records(), logging.getLogger("torch_triton_hop._fusion")
    level = logger.level
    logger.addHandler(records)
    logger.setLevel(logging.DEBUG)
    try:
        results = fusion_fuzzer.check_programs(programs, str(tmp_path))
    finally:
        logger.removeHandler(records)
        logger.setLevel(level)
    print(fusion_fuzzer.summarize(results))
    failed = [r for r in results if r.failed]
    assert not failed, f"{len(failed)} programs failed:\n\n" + "\n\n".join(r.report() for r in failed[:5])
    return [r for r in results if r.verdict != "invalid"], records.fused_lines


def test_programs_with_pointwise_code_under_a_transposed_operand(tmp_path):
    """Programs whose regions read `(op(a)).transpose(-1, -2)`: the region holds the op and the
    transpose, reading `a` through it ([Note: Views inside a fused region])."""
    seed = fusion_fuzzer.FIRST_SEED_WITH_VIEWS_IN_REGIONS
    programs = [p for p in (fusion_fuzzer.generate_program(seed, i) for i in range(300))
                if "view_in_region" in p.features][:VIEWS_IN_REGIONS_COUNT]
    ran, fused_lines = _checked_with_fused_regions(programs, tmp_path)
    assert len(ran) >= 0.9 * VIEWS_IN_REGIONS_COUNT and sum(bool(r.record.fused) for r in ran) >= 0.2 * len(ran)
    # The premise: some fused region holds a transpose (a permute in the post-grad graph).
    assert any("'permute" in line for line in fused_lines), fused_lines[:5]


def test_programs_with_ops_taking_keyword_only_arguments(tmp_path):
    """Programs drawing addcmul / addcdiv (`value=`) and floor / trunc division (`rounding_mode=`),
    which inductor's lowerings take as they are."""
    seed = fusion_fuzzer.FIRST_SEED_WITH_KEYWORD_OPS
    programs = [p for p in (fusion_fuzzer.generate_program(seed, i) for i in range(100))
                if "keyword_op" in p.features][:KEYWORD_OPS_COUNT]
    ran, fused_lines = _checked_with_fused_regions(programs, tmp_path)
    assert len(ran) >= 0.9 * KEYWORD_OPS_COUNT
    # The premise: regions holding such ops fused (integer floor division on a GPU only)...
    keyword_ops = {**fusion_fuzzer._KEYWORD_UNARY, **fusion_fuzzer._KEYWORD_BINARY}
    assert any(region.argument in r.record.fused for r in ran for region in r.program.regions
               if any(step.op in keyword_ops for step in region.steps)), fusion_fuzzer.summarize(ran)
    # ... and on CPU some fused region holds addcmul or addcdiv themselves (torch 2.11's inductor
    # decomposes them on a GPU into the multiplies and add the region holds then).
    assert ON_GPU or any("'addc" in line for line in fused_lines), fused_lines[:5]


def test_programs_with_operands_read_at_other_indices(tmp_path):
    """Programs whose regions take an operand flipped, rolled or padded with a value: the
    fused code meets an operand that is no elementwise view of a buffer (inductor computes it
    into one, or its index arithmetic joins the region)."""
    seed = fusion_fuzzer.FIRST_SEED_WITH_INDEX_OPS
    programs = [p for p in (fusion_fuzzer.generate_program(seed, i) for i in range(100))
                if "index_op" in p.features][:INDEX_OPS_COUNT]
    ran, _fused_lines = _checked_with_fused_regions(programs, tmp_path)
    assert len(ran) >= 0.9 * INDEX_OPS_COUNT
    # The premise: regions taking such operands fused.
    assert any(region.argument in r.record.fused for r in ran for region in r.program.regions
               if any(step.op.startswith("index_") for step in region.steps)), fusion_fuzzer.summarize(ran)


def test_programs_are_the_same_whatever_the_batch():
    """Program N of a seed is one program: a failure found in a large batch reproduces alone."""
    alone = fusion_fuzzer.generate_program(SEED, 7)
    assert fusion_fuzzer.generate_program(SEED, 7).module_source() == alone.module_source()
    assert fusion_fuzzer.generate_program(SEED, 8).module_source() != alone.module_source()
    assert [l.values for l in fusion_fuzzer.generate_program(SEED, 7).leaves] == [l.values for l in alone.leaves]


def test_the_comparison_is_bitwise_and_nan_insensitive():
    import torch

    a = torch.tensor([0.0, float("nan"), 1.0])
    assert not fusion_fuzzer.same_bits(a, torch.tensor([-0.0, float("nan"), 1.0])).all()
    assert fusion_fuzzer.same_bits(a, torch.tensor([0.0, -float("nan"), 1.0])).all()
    assert not fusion_fuzzer.same_bits(a.to(torch.bfloat16), a.to(torch.float16)).any()


@pytest.mark.interpreter  # which programs fuse differs on a GPU
def test_a_planted_fusion_bug_is_caught(tmp_path, monkeypatch):
    """The oracle's premise: wrong fused code shows as a mismatch, not as inductor's numerics.
    Planted: issue 23's first bug, a prologue computed in the lanes a load without `other=`
    masks off (the program loads 0 there), on programs where the kernel reduces such lanes."""
    import torch

    from torch_triton_hop import _fusion

    original = _fusion.helper_source

    def planted(*args, **kwargs):
        return original(*args, **kwargs).replace("result = tl.where(mask, result, tl.zeros_like(result))",
                                                 "result = result")

    monkeypatch.setattr(_fusion, "helper_source", planted)
    # Seed 23's programs with a masked load without other= and a prologue nonzero at 0 where
    # the plant changes a result under the interpreter: 5 of the first 420 such programs.
    # As they were found: without the prologue values some programs also return now (a stored
    # prologue, whose fused kernel must store every element, may not fuse where it did).
    programs = [fusion_fuzzer.generate_program(PLANTED_SEED, i) for i in (282, 425, 621, 775, 812)]
    programs = [dataclasses.replace(p, outputs=[o for o in p.outputs if o.source]) for p in programs]
    fusion_fuzzer.load_programs(programs, str(tmp_path), "planted_fusion_bug")
    with torch._inductor.config.patch(fx_graph_cache=False):  # compile with the plant, not from a cache
        results = fusion_fuzzer.run_batch(programs)
    assert [r.verdict for r in results] == ["mismatch"] * len(programs), fusion_fuzzer.summarize(results)
    assert all("prologue" in r.record.fused.values() for r in results)
