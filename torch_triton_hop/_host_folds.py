"""Whether triton's compiler computes a fused kernel's math on the host, from the TTIR and TTGIR
of the fused kernel (no driver needed).

# [Note: Math folded on the host]
# TL;DR: triton's MLIR passes fold a math op whose operand they prove constant (math.cos,
# math.exp, ...) with the host's C library, while the GPU computes the same op with libdevice
# or an approximate instruction, which may round otherwise: cos(2.0) folded is -0.41614684, on
# an H200 -0.41614681. What they can prove constant depends on the code around the op. On a
# scalar, `(x != 0) ^ (float(x) != 0)` folds to false (the float compare of a converted integer
# becomes an integer compare, then x ^ x); on a block of elements the same text does not fold.
# So an epilogue at a scalar store (a row's sum, a row's rstd) computed
# `cos(2 + 2 * ((x != 0) ^ (float(x) != 0)))` on the host, where inductor's kernel, which
# computes the epilogue on a block, called libdevice (GPU fuzzer seed 23 #230, 1 ulp).
# A fused kernel on a GPU whose TTGIR has fewer of these ops than its TTIR is therefore not
# fused. Left unseen: a fold already done when the TTIR is made (the first canonicalization),
# which needs an operand constant in the helper's own text; the fuzzer has not found one.
# Exact ops (abs, floor, fma, ...) fold to the GPU's own result and are not counted.
"""

from __future__ import annotations

import collections
import re
from typing import Any

from . import _compat
from ._check_compilations import compiled
from ._layouts import Launches, specialisations

__all__ = ["host_folds"]

_MATH_OP = re.compile(r"=\s+\"?(math\.\w+|tt\.extern_elementwise)\b")
_EXACT = {"math.absf", "math.absi", "math.ceil", "math.floor", "math.trunc", "math.round", "math.roundeven",
          "math.fma", "math.copysign", "math.ctlz", "math.cttz", "math.ctpop"}


def _math_ops(text: str) -> collections.Counter:
    return collections.Counter(op for op in _MATH_OP.findall(text) if op not in _EXACT)


def _folded(kernel: Any, args: dict[str, Any], options: dict[str, Any]) -> tuple[str, ...]:
    ttir, ttgir = _compat.generate_ttir_and_ttgir_text(kernel, args, options)
    return tuple(sorted((_math_ops(ttir) - _math_ops(ttgir)).elements()))


def host_folds(fused: Any, fused_args: dict[str, Any], launches: Launches) -> str | None:
    """Why the fused kernel may compute some math on the host, or None where, under every
    specialisation and (config arguments, launch options), no math op of its TTIR is folded
    away in its TTGIR."""
    try:
        for config_args, options in launches:
            for (args,) in specialisations(fused_args):
                folded = compiled(_folded, fused, {**args, **config_args}, options)
                if folded:
                    return (f"triton's compiler folds {', '.join(sorted(set(folded)))} of a value it proves constant, "
                            "computing it on the host, where the GPU may round otherwise (see [Note: Math folded on "
                            "the host])")
    except ValueError as e:  # too many symbolic choices
        return str(e)
    return None
