"""triton.compile's stages from TTIR on (TTGIR, LLVM IR, PTX, cubin), without a driver: in
this process, or in a worker process that imports only triton (see
[Note: The checks' compilations in worker processes] in _stage_workers).

Part of the compatibility layer: the private triton APIs of triton.compile's stage loop and
of reading a TTIR module back from its text, each commented with the versions that take it.
Run as a script (`python _compat_triton_stages.py SYS_PATH_JSON`), it answers requests on its
stdin and stdout; it must import nothing of the package (that would import torch).
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
import tempfile
from typing import Any, BinaryIO

_HEADER = struct.Struct(">Q")  # each message: its pickle's length, then the pickle


def run_stages(module: Any, target: Any, options: Any, last_stage: str, texts: dict[str, Any] | None = None) -> Any:
    """The module after triton.compile's stages up to `last_stage` ("ttgir", "cubin", ...) for
    `target` and parsed `options` (backend.parse_options); `texts`, if given, receives each
    stage's module as text.

    3.6-3.9: backend.add_stages(stages, options, language) fills the stages in order ("ttir",
    "ttgir", "llir", "ptx", "cubin" on CUDA), each called as stage(module, metadata);
    triton.compile's metadata starts as {"hash", "target", **options.__dict__}.
    """
    from triton.backends.compiler import Language
    from triton.compiler.compiler import make_backend

    stages: dict = {}
    make_backend(target).add_stages(stages, options, Language.TRITON)
    metadata = {"hash": last_stage, "target": target, **options.__dict__}
    for stage in list(stages)[:list(stages).index(last_stage) + 1]:
        module = stages[stage](module, metadata)
        if texts is not None:
            texts[stage] = str(module)
    return module


def parsed_ttir(text: str, target: Any) -> Any:
    """The TTIR module printed as `text`, read back as triton.compile reads a .ttir file.

    3.6-3.9 (triton.compiler.compiler.IRSource): ir.parse_mlir_module(path, context), the
    context holding triton's and the backend's dialects; the module keeps its context in
    `module.context`, which the stages' pass managers read.
    """
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    context = ir.context()
    ir.load_dialects(context)
    make_backend(target).load_dialects(context)
    with tempfile.NamedTemporaryFile("w", suffix=".ttir", delete=False) as file:
        file.write(text)
    try:
        module = ir.parse_mlir_module(file.name, context)
    finally:
        os.unlink(file.name)
    module.context = context
    return module


def compile_text(ttir: str, target: Any, options: Any, last_stage: str, want_texts: bool) -> tuple[Any, dict | None]:
    """run_stages on TTIR text: the last stage's output (cubin bytes, or a module's text) and,
    with `want_texts`, each stage's text."""
    texts: dict[str, Any] | None = {} if want_texts else None
    module = run_stages(parsed_ttir(ttir, target), target, options, last_stage, texts)
    return (module if isinstance(module, bytes) else str(module)), texts


def read_message(stream: BinaryIO) -> Any:
    """The next message on `stream` (a pickle written by write_message), None at its end."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return pickle.loads(payload)  # noqa: S301  between this package's own two processes


def write_message(stream: BinaryIO, message: Any) -> None:
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def _serve() -> None:
    """Answers (ttir, target, options, last_stage, want_texts) requests until stdin ends, each
    with ("ok", output, texts) or ("error", what was raised)."""
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # what triton prints must not reach the replies
    requests = sys.stdin.buffer
    while (request := read_message(requests)) is not None:
        try:
            reply = ("ok", *compile_text(*request))
        except Exception as e:  # noqa: BLE001  the caller compiles in its own process instead
            reply = ("error", f"{type(e).__name__}: {e}")
        write_message(replies, reply)


if __name__ == "__main__":
    import json

    sys.path[:] = json.loads(sys.argv[1])  # the parent's: where it found triton (not this file's folder)
    _serve()
