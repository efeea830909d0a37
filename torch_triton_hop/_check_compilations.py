"""The compilations the fusion's compiled-code checks read (TTGIR layouts, SASS, folded math):
each made once per kernel, specialisation and options, in a pool of threads, so that they run
beside each other and beside the planning that needs them later.

# [Note: The checks' compilations in threads]
# TL;DR: a compiled-code check (see _layouts, _contractions, _host_folds) asks for its
# compilations through `compiled`, which returns the result of one computed once; `submit`
# starts one in a thread and returns at once. Most of a SASS compilation's time is spent in
# triton's ptxas and in nvdisasm (0.3-0.4 s each to start, whatever the kernel), separate
# processes that run in parallel with each other and with the Python thread: the kernel's and
# the fused kernel's compilations run at once. The kernel's own start when its launch is first
# planned; the fused kernel's (of every argument planned) before the per-argument
# store-coverage proofs, beside them. The stages up to TTGIR hold the GIL, so a kernel both
# the layout and the division checks read is compiled once, to SASS (sass_and_layouts in
# _layouts). A failure is the check's to handle: `compiled` raises what the compilation
# raised, where the check asks for it. `settle` ends each launch's planning: what no check
# asked for is cancelled if it has not started and waited for if it has, so no compilation
# outlives the planning that started it (under the interpreter, making TTIR swaps module
# attributes that a running kernel uses).
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from typing import Any, Callable

__all__ = ["compiled", "submit", "settle"]

Derive = Callable[[Any, dict[str, Any], dict[str, Any]], Any]

_MAX_ENTRIES = 1024
_WORKERS = max(2, min(8, os.cpu_count() or 2))

_lock = threading.Lock()
_results: dict[tuple, concurrent.futures.Future] = {}
_pool: concurrent.futures.ThreadPoolExecutor | None = None


def _value_key(value: Any) -> Any:
    """What a compilation depends on of an argument: a stand-in's dtype and alignment, or the value."""
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        return ("pointer", str(value.dtype), value.data_ptr() % 16)
    try:
        hash(value)
        return ("value", type(value).__name__, value)
    except TypeError:
        return ("repr", repr(value))


def submit(derive: Derive, kernel: Any, args: dict[str, Any], options: dict[str, Any]) -> concurrent.futures.Future:
    """derive(kernel, args, options) (a compilation and what is read from it), started in a
    thread unless it was started before; its future."""
    global _pool
    # The kernel itself is kept in the key (not its id): a kernel collected and another made at
    # the same address must not find the first one's result.
    key = (derive, kernel, tuple((name, _value_key(v)) for name, v in sorted(args.items())),
           tuple(sorted(options.items())))
    with _lock:
        future = _results.get(key)
        if future is None:
            if len(_results) > _MAX_ENTRIES:
                _results.clear()
            if _pool is None:
                _pool = concurrent.futures.ThreadPoolExecutor(_WORKERS, thread_name_prefix="torch_triton_hop_check")
            future = _results[key] = _pool.submit(derive, kernel, args, options)
    return future


def compiled(derive: Derive, kernel: Any, args: dict[str, Any], options: dict[str, Any]) -> Any:
    """derive(kernel, args, options), computed once (in a thread; this waits for it)."""
    return submit(derive, kernel, args, options).result()


def settle() -> None:
    """Cancels the compilations not started, waits for those running (their results kept)."""
    with _lock:
        pending = [(key, future) for key, future in _results.items() if not future.done()]
    for key, future in pending:
        if future.cancel():
            with _lock:
                if _results.get(key) is future:
                    del _results[key]
    concurrent.futures.wait([future for _, future in pending if not future.cancelled()])
