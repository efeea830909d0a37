"""The integer index arithmetic of TTIR ops, on numpy, for many programs at once.

Each value has a leading program axis (of size 1 where it is the same in every program); a
pointer is the parameter it derives from and element offsets from it. An op this does not know
(a load, a float, a call) gives UNKNOWN, and what is computed from it is UNKNOWN too. Integers
wrap at their width as in the kernel. Used by the store-coverage proof (see [Note: A proof that
a kernel stores every element] in _store_coverage).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any

import numpy as np

from ._ttir import Op

__all__ = ["NoProof", "UNKNOWN", "Pointer", "FORWARD", "POINTER_OPS", "EVALUATED_OPS", "evaluate", "select",
           "where_live", "same_size_pointer_cast", "type_shape"]


class NoProof(Exception):
    """The proof does not hold or cannot be made (here: the arithmetic may fault); the message
    says why, and `op` where."""

    def __init__(self, message: str, op: Op | None = None) -> None:
        super().__init__(message)
        self.op = op


UNKNOWN = object()  # a value computed from something the evaluator does not follow


@dataclasses.dataclass(frozen=True)
class Pointer:
    param: int                  # the TTIR parameter it derives from
    offsets: Any                # element offsets from it (numpy, leading program axis), or UNKNOWN


FORWARD = "tth.forward"  # a callee's returned value, as the call's result
# Ops that carry a pointer's provenance from operand 0 (and arith.select from operands 1, 2).
POINTER_OPS = {"tt.addptr", "tt.splat", "tt.unsplat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans",
               FORWARD}


# Bytes per element of a pointee: a cast between two of one size keeps every element offset.
_POINTEE_BYTES = {"i1": 1, "i8": 1, "f8E4M3FN": 1, "f8E5M2": 1, "f8E4M3FNUZ": 1, "f8E5M2FNUZ": 1, "i16": 2, "f16": 2,
                  "bf16": 2, "i32": 4, "f32": 4, "i64": 8, "f64": 8}


def same_size_pointer_cast(op: Op) -> bool:
    """A tt.bitcast between pointers to elements of one size (a bool tensor is stored through
    an i8 pointer cast from its i1 one)."""
    if op.name != "tt.bitcast":
        return False
    pointees = re.findall(r"!tt\.ptr<([\w]+)>", _types(op))
    return len(pointees) == 2 and pointees[0] in _POINTEE_BYTES and \
        _POINTEE_BYTES[pointees[0]] == _POINTEE_BYTES.get(pointees[1])


def select(condition: Any, one: Any, two: Any) -> Any:
    """Per program, `one` where `condition` holds, else `two`."""
    if one is two:
        return one
    if one is UNKNOWN or two is UNKNOWN or condition is UNKNOWN:
        return UNKNOWN
    if isinstance(one, Pointer) or isinstance(two, Pointer):
        if not (isinstance(one, Pointer) and isinstance(two, Pointer)) or one.param != two.param or \
                one.offsets is UNKNOWN or two.offsets is UNKNOWN:
            return UNKNOWN
        return Pointer(one.param, select(condition, one.offsets, two.offsets))
    # A per-program condition (one value per program) selecting tensors gets their dimensions.
    ndim = max(one.ndim, two.ndim, condition.ndim)
    return np.where(condition.reshape(condition.shape + (1,) * (ndim - condition.ndim)), one, two)


# -- op semantics -----------------------------------------------------------------------------
_ATTRIBUTES = re.compile(r"\{[^{}]*\}")


def _types(op: Op) -> str:
    """The op's trailing type signature (after the last ' : ', attribute dicts removed)."""
    text = _ATTRIBUTES.sub("", op.text)
    return text.rsplit(" : ", 1)[1].strip() if " : " in text else ""


def _split_types(types: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(types):
        depth += char in "<(["
        depth -= char in ">)]"
        if char == "," and depth == 0:
            parts.append(types[start:i].strip())
            start = i + 1
    parts.append(types[start:].strip())
    return parts


@functools.lru_cache(maxsize=None)
def _parse_type(text: str) -> tuple[tuple[int, ...], str]:
    """(shape, element type) of 'tensor<4x8xi32>', 'i32', '!tt.ptr<f32>'."""
    text = text.strip()
    if text.startswith("tensor<") and text.endswith(">"):
        inner = text[len("tensor<"):-1]
        dims = re.match(r"^((?:\d+x)*)(.*)$", inner)
        shape = tuple(int(d) for d in dims.group(1).split("x") if d)
        return shape, dims.group(2)
    return (), text


def type_shape(text: str) -> tuple[int, ...]:
    return _parse_type(text)[0]


def _result_type(op: Op) -> tuple[tuple[int, ...], str]:
    types = _types(op)
    if "->" in types:
        return _parse_type(types.rsplit("->", 1)[1])
    if " to " in types:
        return _parse_type(types.rsplit(" to ", 1)[1])
    parts = _split_types(types)
    return _parse_type(parts[-1] if op.name == "arith.select" else parts[0])


_WIDTHS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64}


def _width(element: str) -> int:
    if element not in _WIDTHS:
        raise _Unsupported(element)
    return _WIDTHS[element]


class _Unsupported(Exception):
    pass


def _wrap(values: np.ndarray, width: int) -> np.ndarray:
    """Signed two's complement at `width` bits (numpy int64 wraps at 64 by itself)."""
    if width == 1:
        return (values & 1).astype(bool)
    if width == 64:
        return values
    half = 1 << (width - 1)
    # Index arithmetic seldom leaves its width: two reductions instead of three passes.
    if values.size == 0 or (values.min() >= -half and values.max() < half):
        return values
    wrapped = values + half
    wrapped &= (1 << width) - 1
    wrapped -= half
    return wrapped


def _unsigned(values: np.ndarray, width: int) -> np.ndarray:
    if width == 64:
        return values.view(np.uint64)
    return values.astype(np.int64) & ((1 << width) - 1)


def _signed(values: np.ndarray, width: int) -> np.ndarray:
    return _wrap(values.astype(np.int64) if width < 64 else values.view(np.int64), width)


def where_live(condition: np.ndarray, live: Any) -> np.ndarray:
    """`condition` (a leading program axis) only where a program runs the op: the programs
    that returned early or take an scf.if's other branch compute it too, and a fault only
    they would hit is none."""
    if live is UNKNOWN:
        return condition
    return condition & live.reshape(live.shape + (1,) * (condition.ndim - 1))


def _divisor(values: np.ndarray, op: Op, live: Any) -> np.ndarray:
    zero = values == 0
    if where_live(zero, live).any():
        raise NoProof(f"{op.name} may divide by zero", op)
    return np.where(zero, 1, values) if zero.any() else values


def _truncated_quotient(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b rounded toward zero (C's, LLVM's), from numpy's floor division."""
    quotient = a // b
    if quotient.size == 0 or (b.min() > 0 and a.min() >= 0):  # usual index arithmetic: floor is truncation
        return quotient
    # Round up the quotients floor rounded down: a remainder where the signs differ. The
    # remainder by multiplication: a second integer division (a % b) costs several times more.
    return quotient + (((a - b * quotient) != 0) & ((a < 0) != (b < 0)))


_PREDICATES = {
    "eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal, "sgt": np.greater,
    "sge": np.greater_equal, "ult": np.less, "ule": np.less_equal, "ugt": np.greater, "uge": np.greater_equal,
}
_AXES = {"x": 0, "y": 1, "z": 2}


def grid_axis(op: Op) -> int:
    """The grid axis a tt.get_program_id / tt.get_num_programs reads (`tt.get_program_id x`)."""
    return _AXES[re.search(r"\b([xyz])\b", op.text.split(op.name, 1)[1]).group(1)]


def _integer_binary(name: str, a: np.ndarray, b: np.ndarray, width: int, op: Op, live: Any) -> np.ndarray:
    if width == 1:
        a, b = a.astype(bool), b.astype(bool)
        table = {"arith.andi": np.logical_and, "arith.ori": np.logical_or, "arith.xori": np.logical_xor}
        if name not in table:
            raise _Unsupported(name)
        return table[name](a, b)
    a, b = a.astype(np.int64, copy=False), b.astype(np.int64, copy=False)
    if name in ("arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori"):
        result = {"arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
                  "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor}[name](a, b)
        return _wrap(result, width)
    if name in ("arith.maxsi", "arith.minsi"):
        return (np.maximum if name == "arith.maxsi" else np.minimum)(a, b)
    if name in ("arith.maxui", "arith.minui"):
        ua, ub = _unsigned(a, width), _unsigned(b, width)
        return _signed((np.maximum if name == "arith.maxui" else np.minimum)(ua, ub), width)
    if name in ("arith.divsi", "arith.remsi", "arith.ceildivsi", "arith.floordivsi"):
        b = _divisor(b, op, live)
        if width == 64 and where_live((a == np.iinfo(np.int64).min) & (b == -1), live).any():
            raise NoProof(f"{name} may overflow", op)
        if name == "arith.floordivsi":
            return _wrap(a // b, width)
        quotient = _truncated_quotient(a, b)
        if name == "arith.remsi":
            return _wrap(a - b * quotient, width)
        if name == "arith.ceildivsi":
            return _wrap(quotient + ((a - b * quotient != 0) & ((a < 0) == (b < 0))), width)
        return _wrap(quotient, width)
    if name in ("arith.divui", "arith.remui", "arith.ceildivui"):
        ua, ub = _unsigned(a, width), _unsigned(_divisor(b, op, live), width)
        if name == "arith.divui":
            return _signed(ua // ub, width)
        if name == "arith.remui":
            return _signed(ua % ub, width)
        return _signed(ua // ub + (ua % ub != 0), width)
    if name in ("arith.shli", "arith.shrsi", "arith.shrui"):
        out_of_range = (b < 0) | (b >= width)
        if where_live(out_of_range, live).any():
            raise NoProof(f"{name} may shift by {width} bits or more", op)
        b = np.where(out_of_range, 0, b)
        if name == "arith.shli":
            return _wrap(_unsigned(a, width) << _unsigned(b, width), width) if width < 64 else \
                (a.view(np.uint64) << b.view(np.uint64)).view(np.int64)
        if name == "arith.shrsi":
            return a >> b
        return _signed(_unsigned(a, width) >> _unsigned(b, width), width)
    raise _Unsupported(name)


_BINARY = {"arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori", "arith.maxsi",
           "arith.minsi", "arith.maxui", "arith.minui", "arith.divsi", "arith.remsi", "arith.ceildivsi",
           "arith.floordivsi", "arith.divui", "arith.remui", "arith.ceildivui", "arith.shli", "arith.shrsi",
           "arith.shrui"}
EVALUATED_OPS = _BINARY | POINTER_OPS | {
    "arith.constant", "tt.get_program_id", "tt.get_num_programs", "tt.make_range", "arith.cmpi", "arith.select",
    "arith.extsi", "arith.extui", "arith.trunci", "arith.bitcast", "tt.bitcast", "tt.join", "tt.split"}


def evaluate(op: Op, operands: list[Any], evaluator: Any) -> list[Any]:
    """The op's results, each UNKNOWN where it is not integer index arithmetic this knows.
    `evaluator` gives the launch: `program_ids` (per axis), `grid` (three sizes) and `live`
    (the programs that run the op: see where_live)."""
    if op.name not in EVALUATED_OPS or any(v is UNKNOWN for v in operands):
        return [UNKNOWN] * len(op.results)
    try:
        if op.name == "tt.split":  # a last dimension of 2 into two values
            (value,) = operands
            if isinstance(value, Pointer):
                return [Pointer(value.param, half) for half in _halves(value.offsets)]
            return list(_halves(value))
        return [_evaluate_one(op, operands, evaluator)]
    except _Unsupported:
        return [UNKNOWN] * len(op.results)


def _halves(value: Any) -> tuple[Any, Any]:
    if value is UNKNOWN:
        raise _Unsupported("tt.split")
    return value[..., 0], value[..., 1]


def _evaluate_one(op: Op, operands: list[Any], evaluator: Any) -> Any:
    name = op.name
    shape, element = _result_type(op)
    if name == "arith.constant":
        return _constant(op, shape, element)
    if name in ("tt.get_program_id", "tt.get_num_programs"):
        axis = grid_axis(op)
        if name == "tt.get_program_id":
            return evaluator.program_ids[axis]
        return np.array([evaluator.grid[axis]], dtype=np.int64)
    if name == "tt.make_range":
        start = int(re.search(r"start = (-?\d+)", op.text).group(1))
        end = int(re.search(r"end = (-?\d+)", op.text).group(1))
        return np.arange(start, end, dtype=np.int64)[None]
    if name == "tt.bitcast":
        if not (same_size_pointer_cast(op) and isinstance(operands[0], Pointer)):
            raise _Unsupported(name)
        return operands[0]
    if name == "tt.join":  # two values side by side in a new last dimension
        one, two = operands
        if isinstance(one, Pointer) or isinstance(two, Pointer):
            if not (isinstance(one, Pointer) and isinstance(two, Pointer)) or one.param != two.param or \
                    one.offsets is UNKNOWN or two.offsets is UNKNOWN:
                raise _Unsupported(name)
            return Pointer(one.param, np.stack(np.broadcast_arrays(one.offsets, two.offsets), axis=-1))
        return np.stack(np.broadcast_arrays(one, two), axis=-1)
    if name in POINTER_OPS or name == "arith.select":
        return _shaped(op, operands, shape)
    if name == "arith.cmpi":
        predicate = op.text.split(name, 1)[1].split(",", 1)[0].strip()
        width = _width(_parse_type(_split_types(_types(op))[0])[1])
        a, b = operands
        if predicate.startswith("u"):
            a, b = _unsigned(a.astype(np.int64), width), _unsigned(b.astype(np.int64), width)
        return _PREDICATES[predicate](a, b)
    if name in ("arith.extsi", "arith.extui", "arith.trunci", "arith.bitcast"):
        source = _width(_parse_type(_types(op).split(" to ")[0])[1])
        width = _width(element)
        (value,) = operands
        if name == "arith.bitcast":
            if source != width:
                raise _Unsupported(name)
            return value
        if name == "arith.extui":
            return _unsigned(value.astype(np.int64), source) if source < 64 else value
        if name == "arith.extsi" and source == 1:
            return -value.astype(np.int64)
        return _wrap(value.astype(np.int64), width)
    return _integer_binary(name, *operands, _width(element), op, evaluator.live)


def _constant(op: Op, shape: tuple[int, ...], element: str) -> np.ndarray:
    value = op.text.split("arith.constant", 1)[1].strip()
    value = value.split(" : ")[0].strip()
    if value.startswith("dense<"):
        value = value[len("dense<"):-1]
    if value in ("true", "false"):
        number = int(value == "true")
        element = "i1"
    elif re.fullmatch(r"-?\d+", value):
        number = int(value)
    else:
        raise _Unsupported("a constant that is not an integer")
    width = _width(element)
    # A view of one element: the same value in every lane (an evaluation by rows reads it as such).
    array = np.broadcast_to(np.array(number, dtype=bool if width == 1 else np.int64), (1, *shape))
    return array if width == 1 else _wrap(array, width)


def _shaped(op: Op, operands: list[Any], shape: tuple[int, ...]) -> Any:
    """The shape ops, the pointer add and select, on values or on pointers."""
    name = op.name
    if name == "arith.select":
        condition, one, two = operands
        return select(condition.astype(bool, copy=False), one, two)
    if name == "tt.addptr":
        pointer, offsets = operands
        if not isinstance(pointer, Pointer) or pointer.offsets is UNKNOWN:
            raise _Unsupported(name)
        return Pointer(pointer.param, pointer.offsets + offsets.astype(np.int64))
    (value,) = operands
    if name == FORWARD:
        return value
    if isinstance(value, Pointer):
        return Pointer(value.param, _reshape(op, value.offsets, shape))
    return _reshape(op, value, shape)


def _reshape(op: Op, value: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    programs = value.shape[0]
    if op.name == "tt.splat":
        return np.broadcast_to(value.reshape((programs,) + (1,) * len(shape)), (programs, *shape))
    if op.name == "tt.unsplat":  # a one-element tensor to its element
        return value.reshape((programs,))
    if op.name == "tt.broadcast":
        return np.broadcast_to(value, (programs, *shape))
    if op.name == "tt.expand_dims":
        axis = int(re.search(r"axis = (\d+)", op.text).group(1))
        return np.expand_dims(value, 1 + axis)
    if op.name == "tt.reshape":
        if "allow_reorder" in op.text or "efficient_layout" in op.text:
            raise _Unsupported("a reshape that may reorder elements")
        return np.ascontiguousarray(value).reshape((programs, *shape))
    if op.name == "tt.trans":
        order = [int(d) for d in re.search(r"order = array<i32:([^>]*)>", op.text).group(1).split(",")]
        return np.transpose(value, (0, *(1 + d for d in order)))
    raise _Unsupported(op.name)
