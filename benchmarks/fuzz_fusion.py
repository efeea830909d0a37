"""Large batches of the fusion fuzzer (tests/fusion_fuzzer.py): random programs around user
kernels, eager against torch.compile with fusion on (and, where they differ, off).

    python benchmarks/fuzz_fusion.py --seed 0 --count 1000 --batch 40 --out /tmp/fuzz_fusion
    python benchmarks/fuzz_fusion.py --seed 0 --count 1000 --out /tmp/fuzz_fusion --resume
    python benchmarks/fuzz_fusion.py --seed 0 --index 9 --out /tmp/fuzz_fusion   # one program
    FUZZ_DYNAMIC=1 python benchmarks/fuzz_fusion.py ...   # every program compiled with dynamic=True

Programs run in batches, each batch one torch.compile (one inductor compile) of all its
programs. Prints progress, what fused, what was refused (counts by reason) and every failure: a
mismatch (fusion changed a result bit for bit), a compile error eager does not have, or a
warning of torch_triton_hop. Each failure is written to --out as a standalone reproducer
(fuzz_fusion_SEED_INDEX_VERDICT.py; with --minimize, a shrunk one too, *_min.py).
--out/progress_SEED.jsonl records every finished program; --resume skips those. The exit
status is 1 if any program failed. On a GPU (TRITON_INTERPRET unset or 0) tensors are on cuda;
without one the kernels run on the Triton interpreter (TRITON_INTERPRET=1, set here).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, os.pardir, "tests"))

from _interpreter import use_interpreter_without_gpu  # noqa: E402

use_interpreter_without_gpu()
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--start", type=int, default=0, help="first program index")
    parser.add_argument("--batch", type=int, default=40, help="programs per compiled function")
    parser.add_argument("--index", type=int, help="check this one program only and print its reproducer")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "fuzz_fusion"),
                        help="progress file and reproducers of failures")
    parser.add_argument("--resume", action="store_true", help="skip programs the progress file has")
    parser.add_argument("--feature", help="only the programs of --start .. --start + --count - 1 with this feature "
                        "(output_over_input, second_launch, prologue_used_twice, ...)")
    parser.add_argument("--minimize", action="store_true", help="also write a shrunk reproducer of each failure")
    parser.add_argument("--minimize-budget", type=int, default=24, help="compiles per failure while shrinking")
    args = parser.parse_args(argv)

    import logging

    import torch

    import fusion_fuzzer

    torch.set_num_threads(1)
    logging.getLogger("torch_triton_hop").propagate = False  # the fuzzer records the package's warnings itself
    device = fusion_fuzzer.fuzz_device()
    os.makedirs(args.out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="fuzz_fusion_")
    try:
        if args.index is not None:
            program = fusion_fuzzer.generate_program(args.seed, args.index)
            (result,) = fusion_fuzzer.check_range(args.seed, args.index, 1, workdir, device)
            if result.failed and args.minimize:
                result = fusion_fuzzer.minimize(result, workdir, device, args.minimize_budget, log=print)
            print(result.report() if result.verdict != "ok" else program.reproducer(result.summary()))
            return 1 if result.failed else 0
        return _run(args, fusion_fuzzer, device, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run(args: argparse.Namespace, fusion_fuzzer, device: str, workdir: str) -> int:
    progress = os.path.join(args.out, f"progress_{args.seed}.jsonl")
    wanted = range(args.start, args.start + args.count)
    done: dict[int, dict] = {}
    if args.resume and os.path.exists(progress):
        with open(progress) as f:
            for line in f:
                record = json.loads(line)
                if record["index"] in wanted:
                    done[record["index"]] = record
        print(f"  {len(done)} programs already in {progress}", flush=True)
    elif os.path.exists(progress):
        os.remove(progress)
    todo = [i for i in wanted if i not in done and (not args.feature or args.feature in _features(fusion_fuzzer, args.seed, i))]
    print(f"fuzzing the fusion: seed {args.seed}, programs {args.start}..{args.start + args.count - 1} "
          f"({len(todo)} to run), batches of {args.batch}, device {device}", flush=True)
    total = len(done) + len(todo)
    begin = time.perf_counter()
    ran = 0
    for first in range(0, len(todo), args.batch):
        indices = todo[first:first + args.batch]
        batch_start = time.perf_counter()
        # Consecutive indices share a batch; after --resume the remaining ones may not be consecutive.
        programs = [fusion_fuzzer.generate_program(args.seed, i) for i in indices]
        fusion_fuzzer.load_programs(programs, workdir, f"fuzz_fusion_{args.seed}_{indices[0]}")
        results = fusion_fuzzer.run_batch(programs, device)
        seconds = time.perf_counter() - batch_start
        with open(progress, "a") as f:
            for result in results:
                record = fusion_fuzzer.result_record(result, seconds / len(results))
                done[result.program.index] = record
                f.write(json.dumps(record) + "\n")
        ran += len(results)
        for result in results:
            if result.failed or result.verdict == "inductor_error":
                _write_failure(args, fusion_fuzzer, result, device, workdir)
        records = list(done.values())
        elapsed = time.perf_counter() - begin
        print(f"  {len(done)}/{total} programs, {elapsed:.0f} s ({ran / elapsed:.2f} programs/s), "
              f"{sum(bool(r['fused']) for r in records)} fused, "
              f"{sum(r['verdict'] in ('mismatch', 'compile_error', 'warning') for r in records)} failed, "
              f"{sum(r['verdict'] == 'invalid' for r in records)} invalid", flush=True)
    records = sorted(done.values(), key=lambda r: r["index"])
    elapsed = time.perf_counter() - begin
    print(fusion_fuzzer.summarize_records(records, elapsed if ran == len(records) else None))
    if ran:
        print(f"this run: {ran} programs in {elapsed:.0f} s, {ran / elapsed:.2f} programs/s")
    failed = [r for r in records if r["verdict"] in ("mismatch", "compile_error", "warning")]
    for r in failed:
        print(f"\n# {r['summary']}")
    inductor = [r["index"] for r in records if r["verdict"] == "inductor_error"]
    if inductor:
        print(f"inductor's own errors (nothing fused; not counted as failures): {inductor[:30]}")
    invalid = [r["index"] for r in records if r["verdict"] == "invalid"]
    if invalid:
        print(f"invalid programs (a generator bug; --index N shows one): {invalid[:30]}")
    if failed:
        print(f"\n{len(failed)} failures; reproducers in {args.out}")
    return 1 if failed else 0


def _features(fusion_fuzzer, seed: int, index: int) -> set[str]:
    program = fusion_fuzzer.generate_program(seed, index)
    return set(program.kernel.features + program.features)


def _write_failure(args, fusion_fuzzer, result, device: str, workdir: str) -> None:
    name = f"fuzz_fusion_{args.seed}_{result.program.index}_{result.verdict}"
    path = os.path.join(args.out, name + ".py")
    with open(path, "w") as f:
        f.write(result.report())
    print(f"  {result.verdict}: {path}", flush=True)
    if args.minimize:
        small = fusion_fuzzer.minimize(result, workdir, device, args.minimize_budget)
        path = os.path.join(args.out, name + "_min.py")
        with open(path, "w") as f:
            f.write(small.report())
        print(f"  shrunk: {path}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
