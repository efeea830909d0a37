"""The store-coverage evaluation by rows: where every address a kernel's accesses use is a value
per program plus a value per lane, the accesses are followed per row of lanes, not per element.

# [Note: Evaluating a proof by rows]
# TL;DR: the proof's evaluation (see [Note: A proof that a kernel stores every element]) first
# runs with every program at once and keeps a sum of a per-program value and a per-lane value
# as its two parts (Separable), never as the programs x lanes array it stands for. An access
# through such an address is one row per program: the row's start (the per-program part) and
# its pattern, the lanes it reaches (the per-lane part where the mask holds). A mask is per
# program, per lane, or compares such a sum (`offs < n`): per program it then holds in every
# lane, in none, or (a last block) is evaluated on that program's lanes alone. Where each start
# has one pattern and no two rows share an element, each row is a unit: the stores, loads and
# their programs are replayed per row with the element-wise code, and each row counts the
# elements of its pattern. The cost is the programs' plus the lanes', not their product:
# Liger's RMSNorm backward at 16384 x 4096 ran past the element-wise evaluation's cap on work
# (no proof, no fusion); by rows it takes milliseconds. Rows that interleave (a matmul's 2D
# tiles) or a layout that is not dense: the rows' elements are replayed, in parts, each element
# once per access (the index arithmetic is still evaluated per row).
#   %row  = tt.get_program_id x             -> per program        [0, 1, ..., P-1]
#   %base = arith.muli %row, %stride        -> per program
#   %cols = tt.make_range {0, 2048}         -> per lane           [0, ..., 2047]
#   %ptrs = tt.addptr splat(%out + %base), %cols  -> Separable(base, cols)
#   tt.store %ptrs, %v, %cols < %n          -> one row per program: start base, lanes cols < n
# Exactness: a Separable is kept only where the sum cannot wrap at its width (bounds of each
# part, as Python integers); a product by a constant, the shape ops, and a division or
# remainder of a non-negative sum by a positive constant d keep it where the per-program part's
# rest modulo d is the same in every program, or where no lane crosses a multiple of d.
# Anything else that would combine per-program and per-lane values (a select, an op that would
# make a programs x lanes array), a row that may fall outside the output, or any reason the
# proof does not hold: NotSeparable, and the element-wise evaluation answers (with its own
# message where the proof fails). Its program order differs (all programs at once, not in
# chunks), which changes no answer that holds: an element two programs reach, one storing it,
# fails either way.
"""

from __future__ import annotations

from typing import Any, Iterator, NamedTuple

import numpy as np

from ._index_values import (
    EVALUATED_OPS, FORWARD, UNKNOWN, Pointer, _parse_type, _result_type, _types, _width, select)
from ._ttir import Op

__all__ = ["NotSeparable", "SharedElements", "Separable", "RowMask", "check_size", "needs_rows", "separable_op",
           "select_rows", "RowAccesses"]


class NotSeparable(Exception):
    """The evaluation by rows cannot follow this; the element-wise one will."""


class SharedElements(NotSeparable):
    """Rows that are not units (two may share an element, one reaches an element twice): their
    accesses are replayed element by element."""


class Separable(NamedTuple):
    """programs + lanes, an integer value per program and lane, kept as its two parts."""
    programs: np.ndarray  # (P or 1, 1, ..., 1): the part that differs between programs
    lanes: np.ndarray     # (1, *shape): the part that differs between lanes


class _Comparison(NamedTuple):
    value: Separable  # compared with zero
    predicate: str    # arith.cmpi's, signed: slt, sle, sgt, sge, eq, ne


class RowMask(NamedTuple):
    """A mask per program and lane: a per-program part, a per-lane part and comparisons of
    Separable values with zero, all of which hold where the mask does."""
    programs: np.ndarray  # bool (P or 1, 1, ..., 1)
    lanes: np.ndarray     # bool (1, *shape)
    comparisons: tuple[_Comparison, ...]


# Lanes of the programs whose mask is neither all true nor all false (a last block), evaluated
# one by one: past this many, the element-wise evaluation answers.
_PARTIAL_LANES = 1 << 22
_SIGNED = {"ult": "slt", "ule": "sle", "ugt": "sgt", "uge": "sge"}


def _varies(value: np.ndarray) -> tuple[bool, bool]:
    """Whether a value may differ between programs, and between lanes (a broadcast view does
    not along its zero strides)."""
    by_program = value.shape[0] > 1 and value.strides[0] != 0
    by_lane = any(size > 1 and stride != 0 for size, stride in zip(value.shape[1:], value.strides[1:]))
    return by_program, by_lane


def _offsets(value: Any) -> Any:
    return value.offsets if isinstance(value, Pointer) else value


# An op evaluated as numpy evaluates it, on all programs at once, may make at most this many
# elements (a per-program value splat over a tensor's lanes, then compared: programs x lanes).
_MATERIALIZED = 1 << 22
_VIEW_OPS = {FORWARD, "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.trans"}  # numpy views, never copies


def check_size(op: Op, operands: list[Any]) -> None:
    """NotSeparable where evaluating `op` as numpy does would make a programs x lanes array
    past _MATERIALIZED elements (the element-wise evaluation goes in chunks of programs)."""
    if op.name in _VIEW_OPS:
        return
    programs = max((_offsets(v).shape[0] for v in operands if isinstance(_offsets(v), np.ndarray)), default=1)
    if programs * int(np.prod(_result_type(op)[0])) > _MATERIALIZED:
        raise NotSeparable("an op on programs x lanes elements")


def needs_rows(operands: list[Any]) -> bool:
    """Whether an op's operands hold a Separable, or per-program and per-lane values that
    numpy would combine into a programs x lanes array."""
    by_program = by_lane = False
    for operand in operands:
        value = _offsets(operand)
        if isinstance(value, (Separable, RowMask)):
            return True
        if isinstance(value, np.ndarray):
            program, lane = _varies(value)
            by_program, by_lane = by_program or program, by_lane or lane
    return by_program and by_lane


def _as_separable(value: Any) -> Separable:
    if isinstance(value, Separable):
        return value
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "iu":
        raise NotSeparable("not an integer value")
    by_program, by_lane = _varies(value)
    if by_program and by_lane:
        raise NotSeparable("a value that differs between programs and between lanes")
    value = value.astype(np.int64, copy=False)
    if by_lane:
        return Separable(np.zeros((1,) * value.ndim, dtype=np.int64), value[:1])
    # The lanes part keeps the value's lanes: a tensor of one address per program is as many
    # accesses of it as it has lanes.
    return Separable(value[(slice(None),) + (slice(0, 1),) * (value.ndim - 1)],
                     np.broadcast_to(np.zeros((), dtype=np.int64), (1, *value.shape[1:])))


def _bounds(value: Separable) -> tuple[int, int]:
    return (int(value.programs.min()) + int(value.lanes.min()), int(value.programs.max()) + int(value.lanes.max()))


# Each part stays below this in magnitude, so that numpy's int64 sums of two parts are exact.
_PART_LIMIT = 1 << 62


def _fits(value: Separable, width: int) -> Separable:
    """`value`, where no element wraps at `width` bits (so it is what the kernel computes)."""
    if any(max(-int(part.min()), int(part.max())) >= _PART_LIMIT for part in value):
        raise NotSeparable("a part past int64")
    low, high = _bounds(value)
    if not -(1 << (width - 1)) <= low <= high < (1 << (width - 1)):
        raise NotSeparable("a value that may wrap at its width")
    return value


def _constant(value: Any) -> int:
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "iu" or value.size == 0 or \
            value.min() != value.max():
        raise NotSeparable("not a constant")
    return int(value.flat[0])


def separable_op(op: Op, operands: list[Any]) -> list[Any]:
    """The op's results where an operand is Separable or the op combines per-program and
    per-lane values; NotSeparable where the result would not be one."""
    if op.name not in EVALUATED_OPS or any(operand is UNKNOWN for operand in operands):
        return [UNKNOWN] * len(op.results)  # a load through a row's pointer: a value not followed
    name = op.name
    shape, element = _result_type(op)
    if name == "tt.addptr":
        pointer, offsets = operands
        if not isinstance(pointer, Pointer) or pointer.offsets is UNKNOWN:
            raise NotSeparable(name)
        return [Pointer(pointer.param, _sum(pointer.offsets, offsets, 1, 64))]
    if name in ("arith.addi", "arith.subi"):
        return [_sum(*operands, 1 if name == "arith.addi" else -1, _width(element))]
    if name == "arith.muli":
        one, two = operands
        value, factor = (one, two) if isinstance(one, Separable) else (two, one)
        if not isinstance(value, Separable):
            raise NotSeparable("a product of per-program and per-lane values")
        factor = _constant(factor)
        if any(max(-int(part.min()), int(part.max())) * abs(factor) >= _PART_LIMIT for part in value):
            raise NotSeparable("a product past int64")
        return [_fits(Separable(value.programs * factor, value.lanes * factor), _width(element))]
    if name in ("arith.divsi", "arith.divui", "arith.floordivsi", "arith.remsi", "arith.remui"):
        value, divisor = operands
        divisor = _constant(divisor)
        if not isinstance(value, Separable) or divisor <= 0 or _bounds(value)[0] < 0:
            raise NotSeparable("a division this does not split")
        # With p = d*q + r per program: (p + l) // d == q + (r + l) // d and (p + l) % d ==
        # (r + l) % d, floor or truncated alike where the sum is not negative. Separable where r
        # is the same in every program (the per-lane rest splits), or where r + l never reaches
        # d (no lane crosses a multiple of d: the quotient is q, the remainder r + l).
        quotient, rest = np.divmod(value.programs, divisor)
        remainder = name.startswith("arith.rem")
        if rest.min() == rest.max():
            lanes = value.lanes + int(rest.flat[0])
            return [lanes % divisor if remainder else Separable(quotient, lanes // divisor)]
        if int(rest.max()) + int(value.lanes.max()) < divisor and int(rest.min()) + int(value.lanes.min()) >= 0:
            no_lanes = np.broadcast_to(np.zeros((), np.int64), value.lanes.shape)
            return [Separable(rest, value.lanes) if remainder else Separable(quotient, no_lanes)]
        raise NotSeparable("a division this does not split")
    if name in ("arith.extsi", "arith.extui", "arith.trunci", "arith.bitcast"):
        (value,) = operands
        if not isinstance(value, Separable):
            raise NotSeparable(name)
        source = _width(_parse_type(_types(op).split(" to ")[0])[1])
        low, high = _bounds(value)
        if source == 1 or (name == "arith.extui" and low < 0) or \
                (name == "arith.bitcast" and source != _width(element)):
            raise NotSeparable(name)
        return [_fits(value, _width(element)) if name == "arith.trunci" else value]
    if name == "arith.cmpi":
        predicate = op.text.split(name, 1)[1].split(",", 1)[0].strip()
        difference = _sum(*operands, -1, 64)
        if predicate in _SIGNED:  # unsigned: the same order where neither side is negative
            if min(_bounds(_as_separable(operand))[0] for operand in operands) < 0:
                raise NotSeparable("an unsigned comparison of negative values")
            predicate = _SIGNED[predicate]
        return [RowMask(np.ones((1,) * (1 + len(shape)), dtype=bool),
                        np.broadcast_to(np.ones((), dtype=bool), (1, *shape)), (_Comparison(difference, predicate),))]
    if name == "arith.andi" and element == "i1":
        masks = [_as_row_mask(operand, shape) for operand in operands]
        return [RowMask(masks[0].programs & masks[1].programs, masks[0].lanes & masks[1].lanes,
                        masks[0].comparisons + masks[1].comparisons)]
    if name in (FORWARD, "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans") and \
            isinstance(operands[0], RowMask):
        (mask,) = operands
        parts = _reshaped(op, Separable(mask.programs, mask.lanes), shape)
        return [RowMask(parts.programs, parts.lanes,
                        tuple(_Comparison(_reshaped(op, c.value, shape), c.predicate) for c in mask.comparisons))]
    if name in (FORWARD, "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans", "tt.unsplat"):
        (value,) = operands
        if isinstance(value, Pointer):
            return [Pointer(value.param, _reshaped(op, value.offsets, shape))]
        return [_reshaped(op, value, shape)]
    raise NotSeparable(name)


def _as_row_mask(value: Any, shape: tuple[int, ...]) -> RowMask:
    if isinstance(value, RowMask):
        return value
    if not isinstance(value, np.ndarray) or value.dtype != bool:
        raise NotSeparable("not a mask")
    by_program, by_lane = _varies(value)
    if by_program and by_lane:
        raise NotSeparable("a mask that differs between programs and between lanes")
    ones = np.ones((1,) * value.ndim, dtype=bool)
    if by_lane:
        return RowMask(ones, np.broadcast_to(value[:1], (1, *shape)), ())
    return RowMask(value[(slice(None),) + (slice(0, 1),) * (value.ndim - 1)],
                   np.broadcast_to(value[:1, ...] if not by_program else ones, (1, *shape)), ())


def _sum(one: Any, two: Any, sign: int, width: int) -> Separable:
    one, two = _as_separable(one), _as_separable(two)
    if one.programs.ndim != two.programs.ndim:
        raise NotSeparable("operands of different ranks")
    return _fits(Separable(one.programs + sign * two.programs, one.lanes + sign * two.lanes), width)


def _reshaped(op: Op, value: Any, shape: tuple[int, ...]) -> Any:
    if not isinstance(value, Separable):
        raise NotSeparable(op.name)
    name, (programs, lanes) = op.name, value
    count = programs.shape[0]
    if name == FORWARD:
        return value
    if name == "tt.broadcast":
        return Separable(programs, np.broadcast_to(lanes, (1, *shape)))
    if name == "tt.expand_dims":
        axis = 1 + int(op.text.split("axis = ", 1)[1].split()[0].rstrip("}:,"))
        return Separable(np.expand_dims(programs, axis), np.expand_dims(lanes, axis))
    if name == "tt.reshape":
        if "allow_reorder" in op.text or "efficient_layout" in op.text:
            raise NotSeparable("a reshape that may reorder elements")
        return Separable(programs.reshape((count,) + (1,) * len(shape)),
                         np.ascontiguousarray(lanes).reshape((1, *shape)))
    if name == "tt.trans":
        order = [int(d) for d in op.text.split("order = array<i32:", 1)[1].split(">", 1)[0].split(",")]
        axes = (0, *(1 + d for d in order))
        return Separable(np.transpose(programs, axes), np.transpose(lanes, axes))
    # tt.unsplat: a one-element tensor to its element, one per program.
    return programs.reshape((count,)) + int(lanes.reshape(-1)[0])


def select_rows(condition: Any, one: Any, two: Any) -> Any:
    """`select` (per program, `one` where `condition` holds, else `two`) without a programs x
    lanes array: where the condition picks one side for every program, or neither side varies
    by lane; else NotSeparable."""
    if one is two:
        return one
    if isinstance(condition, (Separable, RowMask)):
        raise NotSeparable("a choice per program and lane")
    if condition is not UNKNOWN and isinstance(condition, np.ndarray) and condition.size:
        if condition.all():
            return one
        if not condition.any():
            return two
    values = [_offsets(one), _offsets(two)]
    if max((v.shape[0] * int(np.prod(v.shape[1:])) for v in values if isinstance(v, np.ndarray)), default=0) > \
            _MATERIALIZED:
        raise NotSeparable("a choice on programs x lanes elements")
    if any(isinstance(v, (Separable, RowMask)) for v in values) or \
            any(isinstance(v, np.ndarray) and _varies(v)[1] for v in values):
        raise NotSeparable("a per-program choice between per-lane values")
    return select(condition, one, two)


class _Access(NamedTuple):
    op: Op
    starts: np.ndarray    # each chosen program's row start
    programs: np.ndarray  # the chosen programs (indices in the chunk)
    patterns: np.ndarray  # each one's lanes, as an index into RowAccesses.patterns


class Rows(NamedTuple):
    starts: np.ndarray   # the distinct row starts, sorted
    weights: np.ndarray  # the elements each reaches


class RowAccesses:
    """The accesses an evaluation by rows made, in order: one row per chosen program, each the
    row's start and its pattern of lanes (the lane offsets it reaches)."""

    def __init__(self) -> None:
        self.accesses: list[_Access] = []
        self.patterns: list[np.ndarray] = []  # sorted lane offsets, each without repeats
        self._pattern_ids: dict[bytes, int] = {}
        self._last: tuple[np.ndarray, int] | None = None  # the lanes last seen, in their order, and their pattern

    def _pattern(self, lanes: np.ndarray) -> int:
        lanes = lanes.reshape(-1)
        last = self._last
        if last is not None and np.array_equal(lanes, last[0]):  # a loop's next iteration: no sort
            return last[1]
        found = self._sorted_pattern(lanes)
        self._last = (lanes, found)
        return found

    def _sorted_pattern(self, lanes: np.ndarray) -> int:
        lanes = np.sort(lanes)
        key = lanes.tobytes()
        found = self._pattern_ids.get(key)
        if found is None:
            found = self._pattern_ids[key] = len(self.patterns)
            self.patterns.append(lanes)
        return found

    def record(self, op: Op, offsets: Any, mask: Any, active: np.ndarray, count: int) -> int:
        """An access through `offsets` where `mask` (None: every lane) holds, by the `active`
        programs of `count`; the lanes it evaluated one program at a time (its cost)."""
        value = _as_separable(offsets)
        lane_shape = value.lanes.shape[1:]
        mask = _as_row_mask(mask, lane_shape) if mask is not None else \
            RowMask(np.ones((1,) * (1 + len(lane_shape)), dtype=bool), np.ones((1, *lane_shape), dtype=bool), ())
        lane_shape = np.broadcast_shapes(lane_shape, mask.lanes.shape[1:])
        chosen = np.broadcast_to(active.astype(bool, copy=False).reshape(-1), (count,)) & \
            np.broadcast_to(mask.programs.reshape(-1), (count,))
        whole, empty = chosen.copy(), ~chosen
        for comparison in mask.comparisons:
            low = comparison.value.programs.reshape(-1) + int(comparison.value.lanes.min())
            high = comparison.value.programs.reshape(-1) + int(comparison.value.lanes.max())
            holds, fails = _everywhere(comparison.predicate, low, high)
            whole &= np.broadcast_to(holds, (count,))
            empty |= np.broadcast_to(fails, (count,))
        lanes = np.broadcast_to(value.lanes[0], lane_shape)
        lane_mask = np.broadcast_to(mask.lanes[0], lane_shape)
        programs = np.flatnonzero(whole)
        patterns = np.full(programs.shape, self._pattern(lanes[lane_mask]) if lane_mask.any() else -1)
        partial = np.flatnonzero(~whole & ~empty)
        if partial.size:  # programs whose comparisons hold in some lanes: each its own lanes
            if partial.size * lanes.size > _PARTIAL_LANES:
                raise NotSeparable("too many programs whose mask differs between lanes")
            held = np.broadcast_to(lane_mask, (partial.size, *lane_shape))
            for comparison in mask.comparisons:
                difference = comparison.value.programs[np.minimum(partial, comparison.value.programs.shape[0] - 1)] + \
                    comparison.value.lanes
                held = held & _PREDICATES[comparison.predicate](difference, 0)
            programs = np.concatenate([programs, partial])
            patterns = np.concatenate([patterns, [self._pattern(lanes[held[i]]) if held[i].any() else -1
                                                  for i in range(partial.size)]])
        reaching = patterns >= 0
        programs, patterns = programs[reaching], patterns[reaching]
        if programs.size:
            starts = np.broadcast_to(value.programs.reshape(-1), (count,))[programs]
            self.accesses.append(_Access(op, starts, programs, patterns.astype(np.int64)))
        return partial.size * lanes.size

    def rows(self, span: int) -> Rows:
        """The distinct rows, each a unit; NotSeparable where one may fall outside the span
        (the element-wise evaluation says how), SharedElements where they are not units."""
        if not self.accesses:
            return Rows(np.zeros((0,), dtype=np.int64), np.zeros((0,), dtype=np.int64))
        starts = np.concatenate([access.starts for access in self.accesses])
        patterns = np.concatenate([access.patterns for access in self.accesses])
        pairs = np.unique(np.stack([starts, patterns]), axis=1)
        starts, patterns = pairs
        low = starts + np.array([int(p[0]) for p in self.patterns])[patterns]
        high = starts + np.array([int(p[-1]) for p in self.patterns])[patterns]
        if int(low.min()) < 0 or int(high.max()) >= span:
            raise NotSeparable("a row that may fall outside the span")
        if (np.diff(starts) == 0).any() or (low[1:] <= high[:-1]).any() or \
                any((np.diff(self.patterns[p]) == 0).any() for p in np.unique(patterns)):
            raise SharedElements("rows that may share an element, or reach one twice")
        return Rows(starts, np.array([p.size for p in self.patterns], dtype=np.int64)[patterns])

    def elements(self, access: "_Access", with_programs: bool) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        """The elements an access reaches, in parts of at most _MATERIALIZED and, `with_programs`,
        the program (index in the chunk) reaching each."""
        for pattern in np.unique(access.patterns):
            lanes = self.patterns[pattern]
            chosen = np.flatnonzero(access.patterns == pattern)
            step = max(1, _MATERIALIZED // max(lanes.size, 1))
            for part in range(0, chosen.size, step):
                programs = chosen[part:part + step]
                elements = (access.starts[programs][:, None] + lanes[None, :]).reshape(-1)
                yield elements, np.repeat(access.programs[programs], lanes.size) if with_programs else None


_PREDICATES = {"slt": np.less, "sle": np.less_equal, "sgt": np.greater, "sge": np.greater_equal, "eq": np.equal,
               "ne": np.not_equal}


def _everywhere(predicate: str, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per program, whether `value <predicate> 0` holds in every lane, and in none, for values
    between `low` and `high`."""
    if predicate == "slt":
        return high < 0, low >= 0
    if predicate == "sle":
        return high <= 0, low > 0
    if predicate == "sgt":
        return low > 0, high <= 0
    if predicate == "sge":
        return low >= 0, high < 0
    if predicate == "eq":
        return (low == 0) & (high == 0), (low > 0) | (high < 0)
    if predicate == "ne":
        return (low > 0) | (high < 0), (low == 0) & (high == 0)
    raise NotSeparable(f"a comparison {predicate}")
