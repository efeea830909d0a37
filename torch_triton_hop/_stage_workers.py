"""The checks' compilations past TTIR in worker processes, so that they do not hold the GIL the
fusion planning runs on.

# [Note: The checks' compilations in worker processes]
# TL;DR: a compiled-code check's compilation (see [Note: The checks' compilations in threads])
# makes the kernel's TTIR in its thread, which needs the kernel's Python source, and hands the
# TTIR's text to a worker process for triton's later stages (TTGIR, LLVM IR, PTX, cubin). The
# worker runs _compat_triton_stages as a script: it imports triton alone (0.2-0.35 s to start,
# about 100 MB), and stays for the next compilation.
# Context: triton's MLIR and LLVM passes are pybind calls that keep the GIL. While two threads
# compiled Liger's RMSNorm backward in this process, the store-coverage proof of its dX (numpy
# and Python, in the planning's thread) took 1.0-1.1 s instead of 0.41-0.46 s (2-core CPU);
# on an H200's host a proof took 0.63 s in a compile where it took 0.13 s alone.
# The text read back is the same module: the same stages give the same PTX and cubin (value
# names of loop variables differ in the TTIR / TTGIR text, which no check reads). A worker that
# cannot start, dies or raises: the caller runs the stages in its own process, as before, so a
# check reads what it read before.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import subprocess
import sys
import threading
from typing import Any

from . import _compat_triton_stages

__all__ = ["compile_stages"]

log = logging.getLogger(__name__)

_MAX_WORKERS = max(2, min(8, os.cpu_count() or 2))  # as many as _check_compilations' threads

_lock = threading.Lock()
_available = threading.Condition(_lock)
_idle: list["_Worker"] = []
_started = 0  # workers of this process, idle or busy
_owner = os.getpid()  # a forked child starts its own (the parent's pipes are the parent's)
_unavailable = False  # a worker could not start: this process compiles in its own threads


class _Worker:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, _compat_triton_stages.__file__, json.dumps(sys.path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, close_fds=True)
        self.answered = False

    def compile(self, request: tuple) -> Any:
        _compat_triton_stages.write_message(self.process.stdin, request)
        reply = _compat_triton_stages.read_message(self.process.stdout)
        if reply is None:
            raise EOFError(f"the worker ended (exit status {self.process.poll()})")
        self.answered = True
        return reply

    def close(self) -> None:
        try:
            self.process.stdin.close()
            self.process.wait(timeout=5)
        except Exception:  # noqa: BLE001  at exit: whatever is left is killed
            self.process.kill()


def _checkout() -> "_Worker | None":
    global _started, _owner, _unavailable
    with _available:
        if _owner != os.getpid():
            _idle.clear()
            _started, _owner, _unavailable = 0, os.getpid(), False
        while not _unavailable:
            if _idle:
                return _idle.pop()
            if _started < _MAX_WORKERS:
                _started += 1
                break
            _available.wait()
        else:
            return None
    try:
        return _Worker()
    except OSError as e:  # no interpreter to start (an embedded Python): compile here
        log.debug("torch_triton_hop: no compile worker (%s); compiling in this process", e)
        _give_back(None, unavailable=True)
        return None


def _give_back(worker: "_Worker | None", unavailable: bool = False) -> None:
    global _started, _unavailable
    with _available:
        if worker is not None and _owner == os.getpid():
            _idle.append(worker)
        else:
            _started -= 1
            _unavailable = _unavailable or unavailable
        _available.notify()


def compile_stages(ttir: str, target: Any, options: Any, last_stage: str,
                   want_texts: bool) -> tuple[Any, dict | None] | None:
    """The output of triton's stages up to `last_stage` on `ttir` (cubin bytes, or a module's
    text) and, with `want_texts`, each stage's text, from a worker process; None where no worker
    gave it (the caller compiles in its own process)."""
    worker = _checkout()
    if worker is None:
        return None
    try:
        reply = worker.compile((ttir, target, options, last_stage, want_texts))
    except Exception as e:  # noqa: BLE001  a worker that died: the caller compiles instead
        log.debug("torch_triton_hop: a compile worker failed (%s); compiling in this process", e)
        worker.close()
        _give_back(None, unavailable=not worker.answered)  # one that never answered will not
        return None
    _give_back(worker)
    if reply[0] != "ok":
        log.debug("torch_triton_hop: a compile worker raised %s; compiling in this process", reply[1])
        return None
    return reply[1], reply[2]


@atexit.register
def _close_all() -> None:
    with _lock:
        workers = list(_idle) if _owner == os.getpid() else []
        _idle.clear()
    for worker in workers:
        worker.close()
