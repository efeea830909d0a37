"""Which of the ops a fused helper may use triton's interpreter computes otherwise than torch,
found by running them once in this process's interpreter.

The fusion under the interpreter uses only ops it computes exactly (`_pointwise_triton`'s
`_EXACT_ON_INTERPRETER`); whether some of those are exact depends on the triton and numpy
installed, so they are tried rather than listed by version. Found by the fusion fuzzer on torch
2.11 + triton 3.6 + numpy 2.3 (seed 6): the interpreter negates as ``0 - x`` (so -(+0.0) is
+0.0, where torch gives -0.0; #3801, #5541, #5771), and ``~x`` of a uint8 raises
``OverflowError: Python integer -1 out of bounds for uint8`` under numpy 2 (#144, #5172).
Triton 3.9's interpreter computes both as torch does. (``~`` of a bool is not ops.bitwise_not:
inductor lowers it as ``x == 0``.)
"""

from __future__ import annotations

import functools
import logging
import os

import torch

log = logging.getLogger(__name__)


@functools.cache
def inexact_ops() -> frozenset[str]:
    """Inductor op names (ops.<name>) this interpreter computes otherwise than torch; empty where
    the interpreter is not on (TRITON_INTERPRET unset or 0: kernels compile for a GPU)."""
    if os.environ.get("TRITON_INTERPRET", "0") in ("", "0"):
        return frozenset()
    import triton
    import triton.language as tl

    @triton.jit
    def negate(x_ptr, out_ptr):
        tl.store(out_ptr, -tl.load(x_ptr))

    @triton.jit
    def invert(x_ptr, out_ptr):
        tl.store(out_ptr, ~tl.load(x_ptr))

    def negates_zero() -> bool:
        out = torch.ones(1)
        negate[(1,)](torch.zeros(1), out)
        return bool(torch.signbit(out).item())

    def inverts_unsigned() -> bool:
        out = torch.zeros(1, dtype=torch.uint8)
        invert[(1,)](torch.zeros(1, dtype=torch.uint8), out)
        return out.item() == 255

    inexact = set()
    for op, probe in (("neg", negates_zero), ("bitwise_not", inverts_unsigned)):
        try:
            exact = probe()
        except Exception as e:  # noqa: BLE001 - an interpreter that raises computes nothing
            log.debug("triton's interpreter fails ops.%s: %s: %s", op, type(e).__name__, e)
            exact = False
        if not exact:
            inexact.add(op)
    if inexact:
        log.debug("triton's interpreter computes %s otherwise than torch: not fused under it", sorted(inexact))
    return frozenset(inexact)
