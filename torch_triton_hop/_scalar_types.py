"""The types triton's JIT gives scalar kernel arguments, for the kernels inductor compiles.

# [Note: Scalar argument types under inductor]
# TL;DR: a user kernel compiled by inductor sees each scalar argument with the type triton's
# JIT gives the same Python value eagerly: a float (or a symbolic float) fp32, a bool u1, an
# int i32 / i64 / u64 by its value; an int equal to 1 stays the constant triton makes it; a
# bool tensor is a *u1 pointer (inductor: *i1).
# Context: inductor's code generation for user kernels (torch 2.11-2.13) types a float
# argument fp64 (config._use_fp64_for_unbacked_floats, on outside fbcode): a loop-carried fp32
# accumulator multiplied by it fails to compile ("Loop-carried variable acc has initial type
# fp32 but is re-assigned to fp64"), and kernels without a loop silently compute in fp64. A
# symbolic float (x.shape[0] ** -0.5 under dynamic shapes) is typed as an integer and fails
# at launch ("'float' object cannot be interpreted as an integer"). A bool True becomes the
# constant 1 and False an i1 marked divisible by 16. torch's built-in path has the same
# behaviour (it is inductor's code). While inductor defines one of our kernels, the types
# below replace its own for the parameters they name; see
# _compat_inductor.scalar_argument_types. Symbolic ints keep inductor's typing (i32 with a
# guard that the size fits, else i64), as triton's JIT would type the values they take.
"""

from __future__ import annotations

from typing import Any

import torch

from . import _compat

__all__ = ["eager_scalar_types"]


def eager_scalar_types(arguments: dict[str, Any], constexprs: set[str]) -> dict[str, str]:
    """Signature types, by parameter name, for the arguments whose type inductor would get
    wrong, as triton's JIT types the same values eagerly. `arguments` are trace-time
    values (ints, floats, bools, SymInts, SymFloats, tensors); constexpr parameters are left out."""
    types = {}
    for name, value in arguments.items():
        if name in constexprs or value is None:
            continue
        if isinstance(value, torch.Tensor):
            if value.dtype == torch.bool:  # inductor: *i1
                types[name] = "*" + _compat.jit_scalar_type(True)
            continue
        if isinstance(value, torch.SymFloat):
            types[name] = _compat.jit_scalar_type(1.0)  # any float: triton types them alike
        elif isinstance(value, torch.SymBool):
            types[name] = _compat.jit_scalar_type(True)
        elif isinstance(value, (bool, float)) or (isinstance(value, int) and value != 1):
            types[name] = _compat.jit_scalar_type(value)
    return types
