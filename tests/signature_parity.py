"""Signature parity: the kernel inductor compiles for a launch against the one triton's JIT
compiles for the same call eagerly (argument types, constants, specialization attributes).

Run as a script in a fresh process on a GPU (tests/test_inductor_corpus.py does): every
triton.compiler.ASTSource made while a corpus kernel launches eagerly, then under
torch.compile, is recorded, and the two sets are compared per kernel. Prints one JSON line per
case: {"case": name, "equal": bool, "eager": [...], "inductor": [...]}.
See [Note: Scalar argument types under inductor].
"""

import json
import os
import sys

# Compile in this process, where we record, whatever the caller set: with compile workers inductor
# compiles in subprocesses and this script sees none of its kernels.
os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"

import torch  # noqa: E402
import triton  # noqa: E402
import triton.compiler  # noqa: E402
import triton.compiler.compiler as triton_compiler  # noqa: E402

from torch_triton_hop import wrap_triton  # noqa: E402
from torch_triton_hop._side_table import base_kernel  # noqa: E402

RECORDS = []


def _recording(compile_fn):
    """triton.compile, recording the sources it compiles (not the ones the TTIR analyses make)."""
    def compile(src, *args, **kwargs):
        if isinstance(src, triton_compiler.ASTSource):
            RECORDS.append(src)
        return compile_fn(src, *args, **kwargs)

    return compile


# Before any kernel runs: triton's JIT binds triton.compiler.compile at its first launch,
# inductor calls triton.compile.
triton.compile = triton.compiler.compile = triton_compiler.compile = _recording(triton_compiler.compile)


def describe(source):
    """What a compiled kernel was specialized on, comparable across the two paths."""
    def plain(value):
        return repr(value) if not isinstance(value, (int, float, bool, str, type(None))) else value

    return json.dumps({
        "signature": dict(sorted(source.signature.items())),
        "constants": sorted((list(k), plain(v)) for k, v in source.constants.items()),
        "attrs": sorted((list(k), [list(a) for a in v]) for k, v in (source.attrs or {}).items() if v),
    }, sort_keys=True)


def compiled_signatures(name, launch):
    RECORDS.clear()
    launch()
    torch.cuda.synchronize()
    return sorted({describe(s) for s in RECORDS if s.name == name})


def compare(case_name, kernel_name, eager_launch, compiled_launch, writes):
    try:
        eager = compiled_signatures(kernel_name, eager_launch)
    except Exception as e:  # noqa: BLE001 - e.g. ptxas refusing a cache-modifier combination
        return {"case": case_name, "skipped": f"does not run eagerly: {type(e).__name__}: {str(e)[:200]}"}
    try:
        inductor = compiled_signatures(kernel_name, compiled_launch)
    except Exception as e:  # noqa: BLE001 - a failure of ours: reported, the test fails
        return {"case": case_name, "equal": False, "error": f"{type(e).__name__}: {str(e)[:300]}"}
    if not inductor and not writes:
        return {"case": case_name, "skipped": "writes nothing: the compiled program drops the launch"}
    return {"case": case_name, "equal": eager == inductor, "eager": eager, "inductor": inductor}


def main(selected):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from kernels import CASES

    for case in CASES:
        if selected and case.name not in selected:
            continue

        def make():
            return {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in case.make_kwargs().items()}

        wrapped = wrap_triton(case.kernel)

        def launch(kwargs):
            wrapped[case.grid](**kwargs)

        torch._dynamo.reset()
        result = compare(case.name, base_kernel(case.kernel).__name__, lambda: launch(make()),
                         lambda: torch.compile(launch, fullgraph=True)(make()), case.writes)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(set(sys.argv[1:]))
