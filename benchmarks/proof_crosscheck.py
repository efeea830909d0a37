"""Every store-coverage proof the evaluation by rows answers, made again element-wise (see
[Note: Evaluating a proof by rows]): any difference in counts or reason is appended, as a JSON
line, to $CROSSCHECK_LOG (default /tmp/crosscheck.log); $CROSSCHECK_LOG.stats keeps the counts
(proofs answered by rows, element-wise only, mismatches).

Import it before the proofs run, then run the program to check, e.g. the fusion fuzzer:
    TRITON_INTERPRET=1 CROSSCHECK_LOG=/tmp/cc.log PYTHONPATH=benchmarks python -c "import proof_crosscheck, runpy, \
        sys; sys.argv = ['benchmarks/fuzz_fusion.py', '--seed', '56', '--count', '300', '--out', '/tmp/fuzz']; \
        runpy.run_path('benchmarks/fuzz_fusion.py', run_name='__main__')"
(or benchmarks/store_coverage_corpus.py the same way).
"""
import json
import os
import sys
import threading

from torch_triton_hop import _store_coverage
from torch_triton_hop._index_values import NoProof
from torch_triton_hop._row_coverage import NotSeparable

LOG = os.environ.get("CROSSCHECK_LOG", "/tmp/crosscheck.log")
_lock = threading.Lock()
_prove = _store_coverage._prove
_by_rows = _store_coverage._by_rows
_stats = {"rows": 0, "elements_only": 0, "mismatch": 0}


def _element_wise_only(*args):
    raise NotSeparable("the cross-check's element-wise evaluation")


def _answer(*args):
    """(counts, None) or (None, the NoProof's reason) of _store_coverage._prove."""
    try:
        return _prove(*args), None
    except NoProof as e:
        return None, str(e)


def _checked_prove(*args):
    with _lock:
        answered = []
        _store_coverage._by_rows = lambda *a: answered.append(_by_rows(*a)) or answered[-1]
        try:
            first = _answer(*args)
            if not answered:  # element-wise already (or a slice proven before)
                _stats["elements_only"] += 1
            else:
                _stats["rows"] += 1
                proven = dict(_store_coverage._proven_slices)
                _store_coverage._proven_slices.clear()
                _store_coverage._by_rows = _element_wise_only
                second = _answer(*args)
                _store_coverage._proven_slices.clear()
                _store_coverage._proven_slices.update(proven)
                if first != second:
                    _stats["mismatch"] += 1
                    kernel = getattr(args[0], "__name__", str(args[0]))
                    with open(LOG, "a") as log:
                        log.write(json.dumps({"kernel": kernel, "arguments": repr(args[1:]), "by_rows": repr(first),
                                              "element_wise": repr(second)}) + "\n")
                    print(f"CROSSCHECK MISMATCH {kernel}: by rows {first}, element-wise {second}", file=sys.stderr,
                          flush=True)
        finally:
            _store_coverage._by_rows = _by_rows
        with open(LOG + ".stats", "w") as stats:
            json.dump(_stats, stats)
    counts, reason = first
    if reason is not None:
        raise NoProof(reason)
    return counts


_store_coverage._prove = _checked_prove
