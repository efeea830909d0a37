"""Whether ptxas rounded a kernel's divisions on their own: the instruction that reads each
reciprocal in the SASS of a kernel and of its fused version (triton's ptxas, no driver).

# [Note: Divisions that ptxas may fuse into an add]
# TL;DR: on a GPU, where a kernel adds, subtracts, reduces or scans the quotient of an fp32
# division, a launch of it is fused only if ptxas treats the divisions of the kernel and of
# the fused kernel alike: in the SASS of both every reciprocal is read by the multiply that
# makes its quotient (each quotient rounded before it is added), or the reciprocals are read
# by the same instructions in the same order. Pointwise code that adds a quotient is not
# fused (inductor's own kernel for it is not compiled here to compare with).
# Context: triton's fp32 `/` is PTX div.full.f32, which ptxas expands to a reciprocal
# (MUFU.RCP) and a multiply. With FMA contraction on (triton's default) ptxas may contract
# that multiply with an add of the quotient into one FFMA, and whether it does depends on
# the code around it: fuzzer seed 14 #1841 (H200, triton 3.6), `x - tl.sum(x * x) / C` was
# an exact 0 in the unfused kernel (FMUL, then FADD) and -2**-25 with a prologue fused into
# another load of the same kernel (one FFMA), from the same PTX for that line. LLVM's own
# contractions are decided from the code it sees, identical in both kernels for the
# kernel's lines, and need no such check; a square root (MUFU.SQRT on sm_90) or a libdevice
# call has no hidden multiply. Where no quotient is added (a softmax's x / sum) nothing is
# compiled here.
"""

from __future__ import annotations

import re
from typing import Any

from . import _compat
from ._layouts import Launches, compiled_pairs, prefetch, sass_and_layouts

__all__ = ["reciprocal_readers", "division_difference", "start_kernel_sass"]

# "/*0320*/   @!P2 FFMA R9, R9, R6, R0 ;" -> opcode, operands
_INSTRUCTION = re.compile(r"/\*[0-9a-f]+\*/\s+(?:@!?U?P[T\d]+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")


def reciprocal_readers(sass: str) -> list[str]:
    """For each MUFU.RCP of a SASS listing, in order, the opcode of the first instruction after
    it that reads its result ("none" if none does before the register is written again)."""
    instructions = [(m.group(1), [o.strip() for o in m.group(2).split(",")]) for m in _INSTRUCTION.finditer(sass)]
    readers = []
    for i, (opcode, operands) in enumerate(instructions):
        if not opcode.startswith("MUFU.RCP") or not operands:
            continue
        register = re.compile(rf"(?<![\w.]){operands[0]}(?![\d])")
        reader = "none"
        for later, later_operands in instructions[i + 1:]:
            if any(register.search(o) for o in later_operands[1:]):
                reader = later
                break
            if later_operands and register.fullmatch(later_operands[0].split(".")[0]):
                break  # written again before any read
        readers.append(reader)
    return readers


def _readers(kernel: Any, args: dict[str, Any], options: dict[str, Any]) -> tuple[str, ...]:
    return tuple(reciprocal_readers(_compat.generate_sass_text(kernel, args, options)))


def start_kernel_sass(kernel: Any, kernel_args: dict[str, Any], launches: Launches, with_layouts: bool) -> None:
    """Starts, in threads, the kernel's SASS that division_difference will read (`with_layouts`:
    with the layouts the layout check reads, from one compilation: sass_and_layouts)."""
    prefetch(sass_and_layouts if with_layouts else _readers, kernel, kernel_args, launches)


def division_difference(kernel: Any, fused: Any, kernel_args: dict[str, Any], fused_args: dict[str, Any],
                        launches: Launches, with_layouts: bool) -> str | None:
    """Why the fused kernel may round a quotient otherwise than the kernel, or None where, for
    each specialisation and (config arguments, launch options), ptxas reads every reciprocal of
    both with the multiply of its quotient, or reads the kernel's and the fused kernel's
    reciprocals alike, in the same order. `with_layouts`: read from the compilations the layout
    check reads too (sass_and_layouts)."""
    try:
        for before, after in compiled_pairs(sass_and_layouts if with_layouts else _readers, kernel, fused,
                                            kernel_args, fused_args, launches):
            if with_layouts:
                before, after = (tuple(reciprocal_readers(compiled.sass)) for compiled in (before, after))
            if before != after and set(before) | set(after) != {"FMUL"}:
                return (f"ptxas reads the reciprocals of its divisions with {', '.join(after)} where it reads "
                        f"the kernel's with {', '.join(before)}")
    except ValueError as e:  # too many symbolic choices
        return str(e)
    except Exception as e:  # no SASS to read (not a CUDA target, no nvdisasm): the safe reading
        return f"its SASS could not be read ({type(e).__name__}: {e})"
    return None
