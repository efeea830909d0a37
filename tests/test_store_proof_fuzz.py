"""The store-coverage proof by rows against the element-wise one on a fixed batch of random kernels
(benchmarks/fuzz_store_proof.py; see [Note: Evaluating a proof by rows]).

No kernel runs (the proof reads the TTIR and the launch's layouts, on meta tensors): no mark.
A failure prints each mismatch with its kernel and launch; `python benchmarks/fuzz_store_proof.py
--seed SEED --index N --verbose` reproduces one; larger batches: --count.
"""

import os
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import fuzz_store_proof  # noqa: E402

SEED = 0
COUNT = 120  # about 20 s on the 2-core CPU machine; 200 cases take about 35 s
# Rows that are not units replayed element by element in parts of this many elements (4M by
# default, which no case here reaches): the same answers.
SMALL_PARTS = 64


@pytest.mark.parametrize("materialized, count", [(None, COUNT), (SMALL_PARTS, COUNT // 3)])
def test_the_evaluation_by_rows_answers_as_the_element_wise_one(materialized, count, tmp_path):
    start = time.perf_counter()
    answers = fuzz_store_proof.run_batch(SEED, 0, count, str(tmp_path), materialized=materialized)
    summary = fuzz_store_proof.summarize(answers)
    print(f"{summary} ({time.perf_counter() - start:.1f} s)")
    wrong = [a for a in answers if a.mismatch]
    assert not wrong, "\n\n".join(a.report() for a in wrong)
    # The premise: the batch exercises both evaluations, the one by rows on a good share of the
    # questions (about 70%, a quarter with small parts), and the generator writes kernels the
    # proof reads.
    assert summary.by_rows >= (0.5 if materialized is None else 0.15) * summary.questions, summary
    assert summary.by_elements > 0, summary
    assert summary.not_made == 0, "\n\n".join(a.report() for a in answers if a.by_elements and
                                              a.by_elements.startswith("the proof could not be made"))
    # The evaluation by rows raises nothing but NotSeparable / NoProof (a grid of no programs too).
    unexpected = [a for a in answers if a.rows_error]
    assert not unexpected, "\n\n".join(a.report() for a in unexpected)


def test_cases_are_the_same_whatever_the_batch():
    """Case N of a seed is one kernel with its launches: a mismatch found in a large batch reproduces alone."""
    alone = fuzz_store_proof.generate_case(SEED, 7)
    again = fuzz_store_proof.generate_case(SEED, 7)
    assert (alone.source, [launch.describe() for launch in alone.launches]) == \
        (again.source, [launch.describe() for launch in again.launches])
    assert fuzz_store_proof.generate_case(SEED, 8).source != alone.source
