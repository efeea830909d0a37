"""Large batches of the read/write analysis fuzzer (tests/analysis_fuzzer.py).

    python benchmarks/fuzz_analysis.py --seed 0 --count 10000 --jobs 2
    python benchmarks/fuzz_analysis.py --seed 0 --index 1234      # one kernel: source and verdict

Generates random Triton kernels, runs each under the interpreter (TRITON_INTERPRET=1, forced
here) for ground truth, and compares `identify_accessed_tensors` with it. Prints progress and
a summary (kernels/s; writes exact / conservative / fallback / unsafe; reads exact /
conservative / missed; fallback reasons). Every unsafe, invalid or fallback kernel is
written as a standalone module to --out (and so are the conservative ones with
--keep-conservative); the exit status is 1 if any kernel was unsafe or invalid.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from types import SimpleNamespace

os.environ["TRITON_INTERPRET"] = "1"
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "tests"))


def _chunk(seed: int, start: int, count: int) -> list[dict]:
    import logging

    import torch

    import analysis_fuzzer

    torch.set_num_threads(1)
    logging.getLogger("torch_triton_hop._analysis").propagate = False  # the fuzzer checks fallback warnings itself
    directory = tempfile.mkdtemp(prefix="fuzz_analysis_")
    try:
        results = analysis_fuzzer.run_batch(seed, start, count, directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return [dict(index=r.case.index, verdict=r.verdict, reads_verdict=r.reads_verdict, detail=r.detail,
                 seconds=r.seconds, report=r.report() if r.verdict != "exact" else "") for r in results]


def _chunk_star(arguments: tuple[int, int, int]) -> list[dict]:
    return _chunk(*arguments)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--start", type=int, default=0, help="first kernel index")
    parser.add_argument("--index", type=int, help="check this one kernel only and print its source")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--chunk", type=int, default=100, help="kernels per generated module")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "fuzz_failures"),
                        help="where failing kernels are written")
    parser.add_argument("--keep-conservative", action="store_true", help="write conservative kernels too")
    parser.add_argument("--results", help="a JSON-lines file of per-kernel results: appended to as chunks finish, "
                                          "and chunks already in it are not run again (resume a long run)")
    args = parser.parse_args(argv)

    if args.index is not None:
        (result,) = _chunk(args.seed, args.index, 1)
        import analysis_fuzzer

        print(result["report"] or analysis_fuzzer.generate_kernel(args.seed, args.index).reproducer())
        print(f"# {result['verdict']} (reads {result['reads_verdict']})")
        return 1 if result["verdict"] in ("unsafe", "invalid") else 0

    starts = list(range(args.start, args.start + args.count, args.chunk))
    sizes = [min(args.chunk, args.start + args.count - s) for s in starts]
    print(f"fuzzing the read/write analysis: seed {args.seed}, kernels {args.start}..{args.start + args.count - 1}, "
          f"{args.jobs} job(s)", flush=True)
    results: list[dict] = []
    if args.results and os.path.exists(args.results):
        with open(args.results) as f:
            results = [r for r in map(json.loads, f) if args.start <= r["index"] < args.start + args.count]
        done = {r["index"] for r in results}
        todo = [(s, n) for s, n in zip(starts, sizes) if not all(i in done for i in range(s, s + n))]
        results = [r for r in results if any(s <= r["index"] < s + n for s, n in zip(starts, sizes)
                                             if (s, n) not in todo)]
        print(f"  {len(results)} kernels already in {args.results}", flush=True)
    else:
        todo = list(zip(starts, sizes))
    begin = time.perf_counter()
    previous = sum(r["seconds"] for r in results) / args.jobs
    # multiprocessing.Pool, not ProcessPoolExecutor: the latter's max_tasks_per_child hangs on
    # Python 3.11 once the first workers retire (none replaces them).
    with multiprocessing.get_context("spawn").Pool(args.jobs, maxtasksperchild=10) as pool:
        for chunk in pool.imap_unordered(_chunk_star, [(args.seed, s, n) for s, n in todo]):
            results += chunk
            if args.results:
                with open(args.results, "a") as f:
                    f.writelines(json.dumps(r) + "\n" for r in chunk)
            bad = sum(r["verdict"] in ("unsafe", "invalid") for r in results)
            print(f"  {len(results)}/{args.count} kernels, {time.perf_counter() - begin:.0f} s, "
                  f"{bad} unsafe or invalid", flush=True)
    seconds = time.perf_counter() - begin + previous

    import analysis_fuzzer

    results.sort(key=lambda r: r["index"])
    summary = analysis_fuzzer.summarize(
        [SimpleNamespace(verdict=r["verdict"], reads_verdict=r["reads_verdict"], detail=r["detail"]) for r in results],
        seconds)
    print(summary)
    print(f"per kernel: {1000 * sum(r['seconds'] for r in results) / max(len(results), 1):.0f} ms of one process "
          f"(ground truth and analysis)")
    keep = {"unsafe", "invalid", "fallback"} | ({"conservative"} if args.keep_conservative else set())
    kept = [r for r in results if r["verdict"] in keep]
    if kept:
        os.makedirs(args.out, exist_ok=True)
        for r in kept:
            path = os.path.join(args.out, f"fuzz_{args.seed}_{r['index']}_{r['verdict']}.py")
            with open(path, "w") as f:
                f.write(r["report"])
            print(f"  {r['verdict']}: {path}")
    conservative = [r["index"] for r in results if r["verdict"] == "conservative"]
    if conservative:
        more = " ..." if len(conservative) > 50 else ""
        print(f"conservative kernels (--index N shows one): {conservative[:50]}{more}")
    return 1 if any(r["verdict"] in ("unsafe", "invalid") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
