"""Which of the fusion's refusals a test depends on: mutation testing, one refusal at a time.

Each `raise Refused(...)`, `raise NotFusible(...)`, `raise NoProof(...)` (and the like) and
`self._refuse(...)` of the named modules is replaced by `pass` in a copy of the package, and the
fusion tests run on the copy with `-x`. A refusal whose removal no test notices ("survived") is
either redundant (a later check refuses the same programs, or the planning then fails and the
launch runs unfused), needs a GPU to matter (the tests here run on CPU), or is a gap in the tests:
write the program that shows it (the hunt, `benchmarks/fusion_hunt.py`, is a good place to look).

    python benchmarks/refusal_mutants.py _fusion_candidates.py,_fusion.py results.jsonl
    SLOTS=2 python benchmarks/refusal_mutants.py _fusion.py results.jsonl   # two mutants at a time

A site already in the results file (same module and line) is not run again, so an interrupted
run goes on where it stopped; a new results file runs every site but those in the files that
`DONE=earlier.jsonl,...` names (an earlier session's results).

A killed mutant takes 20 s to 4 min, a surviving one the whole kill set (about 5 min on one core).
"""

import ast
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KILL_SET = ["tests/test_fusion_trust.py", "tests/test_fusion.py", "tests/test_stored_prologue.py",
            "tests/test_output_over_input.py"]
# The store-coverage proofs' own tests, for the modules that refuse proofs (NoProof is no
# fusion where the kernel may leave elements unwritten).
COVERAGE_TESTS = ["tests/test_store_coverage.py", "tests/test_symbolic_row_loops.py",
                  "tests/test_symbolic_proof_fuzz.py", "tests/test_store_proof_fuzz.py"]
COVERAGE_MODULES = {"_symbolic_coverage.py", "_store_coverage.py", "_row_coverage.py", "_symbolic_row_loops.py",
                    "_index_values.py"}
# A test that needs the inductor cache this run disables per mutant (a fresh cache each).
DESELECTED = ["tests/test_fusion.py::test_a_cached_fused_program_runs_in_a_new_process"]
# NoProof: a store-coverage proof that does not hold (no fusion where the kernel may leave
# elements of a fused output unwritten).
REFUSALS = {"Refused", "NotFusible", "_CompiledDifferently", "ViewsRefused", "NoProof"}


def refusal_sites(module: str) -> list[tuple[int, int, int]]:
    """(first line, last line, column) of each refusal statement in the package's `module`."""
    tree = ast.parse(open(os.path.join(ROOT, "torch_triton_hop", module)).read())
    sites = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            func = node.exc.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in REFUSALS:
                sites.append((node.lineno, node.end_lineno, node.col_offset))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute) and func.attr == "_refuse" and getattr(func.value, "id", "") == "self":
                sites.append((node.lineno, node.end_lineno, node.col_offset))
    return sorted(sites)


def run_mutant(work: str, module: str, site: tuple[int, int, int]) -> dict:
    first, last, column = site
    shutil.rmtree(work, ignore_errors=True)
    for folder in ("torch_triton_hop", "tests", "benchmarks"):  # the proof fuzz tests import benchmarks/
        shutil.copytree(os.path.join(ROOT, folder), os.path.join(work, folder),
                        ignore=shutil.ignore_patterns("results", "__pycache__"))
    path = os.path.join(work, "torch_triton_hop", module)
    lines = open(path).read().split("\n")
    statement = " ".join(line.strip() for line in lines[first - 1:last])
    lines[first - 1:last] = [" " * column + "pass  # mutant"] + [""] * (last - first)  # line numbers kept
    open(path, "w").write("\n".join(lines))
    env = dict(os.environ, PYTHONPATH=work, TORCHINDUCTOR_CACHE_DIR=os.path.join(work, "inductor_cache"),
               TRITON_CACHE_DIR=os.path.join(work, "triton_cache"))
    tests = (COVERAGE_TESTS if module in COVERAGE_MODULES else []) + KILL_SET  # the likelier killers first
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests,
               *(arg for test in DESELECTED for arg in ("--deselect", test))]
    start = time.time()
    try:  # run from the copy: `python -m` puts the working directory first on sys.path
        done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=900)
        status, output = done.returncode, done.stdout
    except subprocess.TimeoutExpired:
        status, output = "timeout", ""
    failed = [line for line in output.splitlines() if line.startswith(("FAILED", "ERROR"))]
    # Killed only where a test failed (pytest's exit 1): a collection error (2) or a timeout is
    # no verdict on the mutant (a first run counted tests that could not import as kills).
    return dict(module=module, line=first, statement=statement[:200], killed=status == 1,
                status=status, killed_by=failed[:1], seconds=round(time.time() - start))


def main() -> None:
    modules, out = sys.argv[1].split(","), sys.argv[2]
    slots = int(os.environ.get("SLOTS", "1"))
    done = set()
    for results in [out, *filter(None, os.environ.get("DONE", "").split(","))]:
        if os.path.exists(results):
            done |= {(record["module"], record["line"]) for record in map(json.loads, filter(str.strip, open(results)))}
    jobs = [(module, site) for module in modules for site in refusal_sites(module) if (module, site[0]) not in done]
    print(f"{len(jobs)} mutants", flush=True)
    scratch = tempfile.mkdtemp(prefix="refusal_mutants_")
    free, lock = [os.path.join(scratch, str(i)) for i in range(slots)], threading.Lock()

    def job(module: str, site: tuple[int, int, int]) -> dict:
        with lock:
            work = free.pop()
        try:
            return run_mutant(work, module, site)
        finally:
            with lock:
                free.append(work)

    with open(out, "a") as log, concurrent.futures.ThreadPoolExecutor(slots) as pool:
        for result in pool.map(lambda args: job(*args), jobs):
            log.write(json.dumps(result) + "\n")
            log.flush()
            verdict = "KILLED" if result["killed"] else "SURVIVED"
            print(f"{verdict} {result['module']}:{result['line']} [{result['seconds']}s] "
                  f"{result['statement'][:110]} {result['killed_by']}", flush=True)


if __name__ == "__main__":
    main()
