"""The store-coverage proof for a launch with symbolic sizes (dynamic shapes): reduced to the
concrete proof of its first program along the symbolic grid axis.

# [Note: A proof over symbolic sizes, by translation]
# TL;DR: the concrete proof (see [Note: A proof that a kernel stores every element]) evaluates
# every program for one grid and layout. With a symbolic grid axis k (rows of a batch that
# varies) it proves the property for every size at once when:
#  1. program p along k does what program 0 does, every address shifted by p * D: the
#     program id of axis k reaches the accesses' addresses only through +, -, a product by a
#     number the kernel holds (a constant, a concrete scalar), sign extension, shape ops and
#     pointer arithmetic, one shift D for every access, the same in each loop iteration; and
#     never a mask, a condition, a loop bound or a select (checked on the TTIR, translation_shift).
#     Other symbolic scalars are unknown to the evaluation: an address, mask or condition
#     computed from one is no proof, as before;
#  2. the output's layout is R rows of a concrete inner layout I, C elements apart (leading
#     dimensions that collapse into one, concrete strides), with D = m * C;
#  3. the concrete proof holds for program 0 (grid axis k of 1) over m rows: layout (m, I);
#  4. R = m * G_k for every value of the symbols (the shape environment says so, no guard).
# Then program p stores rows [p*m, p*m + m) as program 0 stores rows [0, m): each row once,
# nothing outside the layout, for every R.
# One more form, the 1-D block of elementwise kernels: `offs = pid * BLOCK + arange(BLOCK)`,
# stored through `out + offs` where `offs < n`, n a symbolic scalar equal to the output's
# number of elements (contiguous, so C = 1 and I is empty). The comparison is the one use of
# the program id in a mask the proof follows: every access masked by `offs < n` (possibly
# and-ed with masks free of the program id), on the very offsets it adds to the output's
# pointer. Program 0 is evaluated with n past every offset, so it stores D elements; with
# the shift, programs 0..G-1 store [0, G*D) cut at n, which is [0, R) where n = R and the
# grid is cdiv(n, BLOCK) (no program past n either, see below).
# Integers: the shifted values must be 32 or 64 bits wide. One computed in 32 bits (`pid *
# BLOCK` in i32) may wrap, and then equals p * D plus program 0's value only modulo 2^32;
# ring ops and sign extension keep that congruence, so where every address the model gives is
# below 2^31 the address is the model's. Hence a guard that the output has fewer than 2^31
# elements (with D to spare), the one inductor installs for its own 32-bit indexing: a larger
# output recompiles. A sum of two shifted values, one of them computed in 32 bits, is refused:
# one could bring the other's wrap back into the output.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np
import torch

from . import _compat
from ._fx_values import node_value
from ._index_values import (
    FORWARD, UNKNOWN, _WIDTHS, NoProof, Pointer, _result_type, evaluate, grid_axis, same_size_pointer_cast,
)
from ._ttir import Op

__all__ = ["Translation", "ReducedRun", "Shift", "symbolic", "reduced_runs", "translation_shift", "BOUND_VALUE"]

# What a bound (`offs < n`) holds in the evaluation of program 0: past every offset of an i32
# comparison (a symbol whose example value is 2^31 or more is refused: triton would pass it
# as i64).
BOUND_VALUE = 2**31 - 1


class Translation(NamedTuple):
    """How the launch's programs along a symbolic grid axis repeat program 0; or, with
    `row_loop`, how the iterations of a row loop repeat its first (see [Note: A row loop of
    symbolic length] in _symbolic_row_loops)."""
    axis: int          # the grid axis whose size is symbolic (row loop: whose program id its bounds read, or -1)
    shift: int         # D: elements between the accesses of programs p and p + 1 (iterations r and r + 1)
    bound: str | None  # the scalar n of `offs < n` (the 1-D block form), else None
    row_loop: bool = False
    ones: tuple[str, ...] = ()  # row loop: the parameters its bounds read, 1 in the reduced run


class ReducedRun(NamedTuple):
    """The concrete proof that stands for a launch with symbolic sizes."""
    grid: tuple[int, ...]                          # the symbolic axis of size 1
    layout: tuple[tuple[int, ...], tuple[int, ...]]  # m rows of the inner layout
    translation: Translation


def _concrete(value: Any) -> Any:
    """An int, SymInt or FX node (a grid size) as its value: an int where it is one."""
    return _compat.concrete_scalar(node_value(value) if isinstance(value, torch.fx.Node) else value)


def symbolic(values: Any) -> bool:
    """Whether any of `values` (sizes, strides, grid sizes) is symbolic."""
    return not all(isinstance(_concrete(v), int) for v in values)


def reduced_runs(args: dict[str, Any], grid: list[Any], output: str,
                 layout: tuple[tuple[Any, ...], tuple[Any, ...]], shift_of: Any) -> ReducedRun:
    """The concrete proof standing for one launch (`args`, `grid`) whose sizes are symbolic:
    `shift_of(axis, bound)` gives D (translation_shift on the kernel's TTIR), NoProof where the
    reduction does not apply (see [Note: A proof over symbolic sizes, by translation])."""
    grid = [_concrete(g) for g in grid]
    axes = [i for i, g in enumerate(grid) if not isinstance(g, int)]
    if len(axes) != 1 or not isinstance(grid[axes[0]], torch.SymInt):
        raise NoProof(f"the sizes of {output} are symbolic and the grid is not symbolic along one axis")
    axis, count = axes[0], grid[axes[0]]
    sizes, strides = ([_concrete(v) for v in part] for part in layout)
    for name, value in args.items():
        if isinstance(value, (torch.SymFloat, torch.SymBool)):
            raise NoProof(f"argument {name} is a symbolic {type(value).__name__}")
        hint = _compat.size_hint(value) if isinstance(value, torch.SymInt) else 0
        if hint is None or not -2**31 <= hint < 2**31:
            raise NoProof(f"argument {name} is symbolic, and its value may take 64 bits (the kernel would then "
                          "take it as i64)")
    numel = int(np.prod(sizes)) if all(isinstance(s, int) for s in sizes) else _product(sizes)
    bounds = [name for name, value in args.items()
              if isinstance(value, torch.SymInt) and _compat.statically_known_true(value == numel)]
    reason = f"no proof over the symbolic sizes of {output}"
    for bound in [None, *bounds]:
        try:
            shift = shift_of(axis, bound)
        except NoProof as e:
            reason = str(e)
            continue
        shift, wraps = shift.elements, shift.wraps
        for rows, row_stride, inner in _row_layouts(sizes, strides):
            if bound is not None and (row_stride != 1 or inner[0]):
                continue  # the 1-D block form: the layout's elements one after another
            if shift <= 0 or shift % row_stride:
                continue
            per_program = shift // row_stride
            if bound is None:
                holds = _compat.statically_known_true(rows == per_program * count)
            else:  # a grid of cdiv(n, BLOCK): the last program's block is cut at n, and no program is past it
                holds = _compat.statically_known_true(count == (rows + shift - 1) // shift)
            if not holds:
                continue
            # Offsets computed in 32 bits equal p * D plus program 0's modulo 2^32: where every
            # address is below 2^31 they are equal (the guard inductor installs for its own
            # 32-bit indexing; a larger output recompiles).
            if wraps and not _compat.guard_or_false(rows * row_stride + shift <= 2**31 - 1):
                reason = f"{output} may have 2^31 elements or more, where the kernel's 32-bit offsets wrap"
                break
            reduced = tuple(1 if i == axis else g for i, g in enumerate(grid))
            return ReducedRun(reduced, ((per_program, *inner[0]), (row_stride, *inner[1])),
                              Translation(axis, shift, bound))
        else:
            reason = (f"programs {shift} elements apart do not tile the rows of {output} "
                      f"(sizes {list(sizes)}, strides {list(strides)}, grid {list(grid)})")
    raise NoProof(reason)


def _product(values: list[Any]) -> Any:
    result = 1
    for value in values:
        result = result * value
    return result


def _row_layouts(sizes: list[Any], strides: list[Any]) -> list[tuple[Any, int, tuple[tuple[int, ...], tuple[int, ...]]]]:
    """Each way to read the layout as rows: (the number of rows, their concrete stride, the
    concrete inner layout), the leading dimensions collapsed into the rows where they are
    contiguous among themselves, and the inner layout within a row's stride."""
    ndim = len(sizes)
    first = max((i + 1 for i in range(ndim) if not isinstance(sizes[i], int) or not isinstance(strides[i], int)),
                default=1)
    found = []
    for split in range(max(first, 1), ndim + 1):
        row_stride = strides[split - 1]
        inner_sizes, inner_strides = sizes[split:], strides[split:]
        if not isinstance(row_stride, int) or row_stride <= 0 or \
                not all(isinstance(v, int) for v in (*inner_sizes, *inner_strides)):
            continue
        if not all(_compat.statically_known_true(strides[i] == sizes[i + 1] * strides[i + 1])
                   for i in range(split - 1)):
            continue
        span = 1 + sum((s - 1) * st for s, st in zip(inner_sizes, inner_strides)) if all(inner_sizes) else 0
        if span > row_stride:
            continue  # rows that overlap
        found.append((_product(sizes[:split]), row_stride, (tuple(inner_sizes), tuple(inner_strides))))
    return found


# --- the translation on the TTIR -----------------------------------------------------------

_PASSING = {FORWARD, "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans", "tt.unsplat",
            "arith.extsi"}


class _Uniform:
    """Stands for the evaluator where a number the kernel holds is computed (no program ids)."""
    program_ids = grid = None
    live = np.ones((1,), dtype=bool)


class Shift(NamedTuple):
    """What translation_shift found of a kernel's accesses."""
    elements: int  # D
    wraps: bool    # an address computed from the program id in 32-bit arithmetic


def _integer_width(op: Op) -> int | None:
    """The width of an op's integer (or integer tensor) result; None for pointers and floats."""
    return _WIDTHS.get(_result_type(op)[1]) if op.results else None


def translation_shift(program: Any, params: dict[int, Any], output: int, axis: int, bound: int | None,
                      read: int | None = None, loop: Op | None = None) -> Shift:
    """D of [Note: A proof over symbolic sizes, by translation] for the accesses of
    `program` (a _Program of _store_coverage) through parameter index `output`; `params`
    per TTIR parameter value what the evaluation gives it, `bound` the parameter index of
    the 1-D block form's n, `read` that of an argument the program's loads of which are
    followed too (an output written over the kernel's input): one shift for all. NoProof where
    program p does not repeat program 0 shifted. With `loop` (an scf.for of the program), the
    shift is between that loop's iterations r and r + 1 instead, and the program ids are not
    followed (see [Note: A row loop of symbolic length])."""
    return _Shift(program, params, output, axis, bound, read, loop).run()


class _Shift:
    def __init__(self, program: Any, params: dict[int, Any], output: int, axis: int, bound: int | None,
                 read: int | None, loop: Op | None = None) -> None:
        self.program, self.params, self.axis, self.loop = program, params, axis, loop
        self.source = "the program id along the grid's symbolic axis" if loop is None else \
            "the row loop's induction variable"
        entry = program.entry
        self.output = entry.params[output]
        self.bases = {self.output} | ({entry.params[read]} if read is not None else set())
        self.bound = entry.params[bound] if bound is not None else None
        self.shift: dict[int, int] = {}        # value -> its shift (absent: 0)
        self.bound_values: set[int] = set()    # n, splat or forwarded
        self.bounded: dict[int, int] = {}      # a mask `a < n` (and-ed with masks free of the id) -> a
        self.access_shifts: set[int] = set()
        self.wrapping: set[int] = set()        # shifted values computed in 32-bit arithmetic
        self.wraps = False                     # an access's address is one of them

    def run(self) -> Shift:
        program = self.program
        if self.bound is not None:
            self.bound_values.add(self.bound)
        for block in program.entry.body:
            for arg in block.args:
                if any(self._marked(v) for v in program.incoming.get(arg, [])):
                    raise NoProof(f"{self.source} is passed between blocks")
            self._ops(block.ops)
            last = block.ops[-1]
            if last.name == "cf.cond_br" and self._marked(last.operands[0]):
                raise NoProof(f"a branch's condition depends on {self.source}", last)
        if len(self.access_shifts) != 1:
            raise NoProof("the accesses are shifted apart by different amounts between programs"
                          if self.access_shifts else "no access")
        return Shift(self.access_shifts.pop(), self.wraps)

    def _marked(self, value: int) -> bool:
        return bool(self.shift.get(value)) or value in self.bound_values or value in self.bounded

    def _refuse(self, op: Op, what: str) -> None:
        raise NoProof(f"{what} ({op.name}) depends on {self.source}", op)

    def _ops(self, ops: list[Op]) -> None:
        program = self.program
        for op in ops:
            if op in program.accesses:
                self._access(op)
            if op.name == "tt.store":
                continue
            if op.name == "scf.for":
                if op in program.regions or any(r in program.needed for r in op.results):
                    self._for(op)
            elif op.name == "scf.if":
                if op in program.regions or any(r in program.needed for r in op.results):
                    self._if(op)
            elif op.name == "scf.while":
                if op in program.regions or any(r in program.needed for r in op.results):
                    if any(self._marked(o) for o in op.operands):
                        self._refuse(op, "a while loop")
                    for region in op.regions:
                        self._ops(region[0].ops)
                    if any(self._marked(o) for region in op.regions for o in region[0].ops[-1].operands):
                        self._refuse(op, "a while loop")
            elif any(r in program.needed for r in op.results):
                self._op(op)

    def _access(self, op: Op) -> None:
        pointer, *rest = op.operands
        mask = rest[1] if op.name == "tt.store" and len(rest) > 1 else rest[0] if op.name == "tt.load" and rest else None
        if self.bound is not None and mask not in self.bounded:
            raise NoProof("an access is not masked by `offsets < n`: past n it would store outside the output", op)
        if mask is not None and self._marked(mask):
            offset = self.bounded.get(mask)
            if offset is None:
                self._refuse(op, "a mask")
            address = self.program.defining.get(self._root(pointer))
            base = self.program.defining.get(self._root(address[0].operands[0])) \
                if address and address[0].name == "tt.addptr" else None
            if base is None or base[0].name != "tt.splat" or base[0].operands[0] not in self.bases or \
                    self._root(address[0].operands[1]) != offset:
                raise NoProof("a mask compares with a symbolic size other offsets than the access's", op)
        self.access_shifts.add(self.shift.get(pointer, 0))
        self.wraps |= pointer in self.wrapping

    def _root(self, value: int) -> int:
        """The value `value` equals in every lane, past sign extensions, a callee's returned
        value, and additions of zero (a fused kernel's offsets are `_tth_zero() + offs`)."""
        while value in self.program.defining:
            op = self.program.defining[value][0]
            if op.name in ("arith.extsi", FORWARD):
                value = op.operands[0]
            elif op.name in ("arith.addi", "tt.addptr") and self._number(op.operands[1]) == 0:
                value = op.operands[0]
            elif op.name == "arith.addi" and self._number(op.operands[0]) == 0:
                value = op.operands[1]
            else:
                return value
        return value

    def _for(self, op: Op) -> None:
        if op is self.loop:
            # Iteration r of the row loop repeats iteration 0 shifted: its induction variable is
            # the source, and nothing it carries from one iteration to the next may decide an
            # address (that would depend on where the program's rows start).
            if any(v in self.program.needed for v in (*op.header_defs[1:], *op.results)):
                raise NoProof("a value the row loop carries between iterations decides an address, mask or "
                              "condition", op)
            self.shift[op.header_defs[0]] = 1
            self._ops(op.regions[0][0].ops)
            return
        if any(self._marked(o) for o in op.operands[:3]):
            self._refuse(op, "a loop's bounds")
        carried = op.header_defs[1:]
        for arg, init in zip(carried, op.operands[3:]):
            if init in self.bound_values or init in self.bounded:
                self._refuse(op, "a loop-carried value")
            self.shift[arg] = self.shift.get(init, 0)
        body = op.regions[0][0]
        self._ops(body.ops)
        yielded = body.ops[-1].operands
        for j, arg in enumerate(carried):
            back = yielded[j] if j < len(yielded) else None
            if back in self.bound_values or back in self.bounded or self.shift.get(back, 0) != self.shift.get(arg, 0):
                raise NoProof("a loop-carried value changes its shift between programs from one iteration to the "
                              "next", op)
            if j < len(op.results):
                self.shift[op.results[j]] = self.shift.get(arg, 0)

    def _if(self, op: Op) -> None:
        if self._marked(op.operands[0]):
            self._refuse(op, "a condition")
        yields = []
        for region in op.regions:
            self._ops(region[0].ops)
            yields.append(region[0].ops[-1].operands if region[0].ops else [])
        for j, result in enumerate(op.results):
            sources = [y[j] for y in yields if j < len(y)]
            if any(s in self.bound_values or s in self.bounded for s in sources) or \
                    len({self.shift.get(s, 0) for s in sources}) > 1:
                self._refuse(op, "a value an scf.if selects")
            self.shift[result] = self.shift.get(sources[0], 0) if sources else 0

    def _op(self, op: Op) -> None:
        name, operands = op.name, op.operands
        if name in ("tt.get_program_id", "tt.get_num_programs"):
            if self.loop is not None:
                return  # only the row loop's bounds read them (row_loop_bounds checks)
            if grid_axis(op) == self.axis:
                if name == "tt.get_num_programs":
                    raise NoProof("the kernel reads the number of programs along the grid's symbolic axis", op)
                self.shift[op.results[0]] = 1
            return
        if not any(self._marked(o) for o in operands):
            return
        shifts = [self.shift.get(o, 0) for o in operands]
        if any(o in self.bound_values for o in operands):
            if name in (FORWARD, "tt.splat", "arith.extsi") and operands[0] in self.bound_values:
                self.bound_values.add(op.results[0])
                return
            if name == "arith.cmpi" and re.search(r"arith\.cmpi\s+slt\b", op.text) and \
                    operands[1] in self.bound_values and operands[0] not in self.bound_values \
                    and operands[0] not in self.bounded:
                self.bounded[op.results[0]] = self._root(operands[0])
                return
            raise NoProof("a symbolic size is used in an address, mask or condition other than as `offsets < n`", op)
        if any(o in self.bounded for o in operands):
            if name == "arith.andi" and len(operands) == 2 and not all(o in self.bounded for o in operands) and \
                    not any(shifts):
                self.bounded[op.results[0]] = next(self.bounded[o] for o in operands if o in self.bounded)
                return
            self._refuse(op, "a mask other than `offsets < n`")
        result = op.results[0] if op.results else None
        width = _integer_width(op)
        if width is not None and width < 32:
            self._refuse(op, "an integer narrower than 32 bits")
        tainted = [o for o in operands if self.shift.get(o)]
        if len(tainted) > 1 and any(o in self.wrapping for o in tainted):
            # Two values, each p * D plus a part, one computed in 32 bits: where it wraps, the
            # other may bring the sum back into the output (see the Note), no longer p * D apart.
            raise NoProof(f"{name} of two values computed from {self.source}, one of them in 32-bit arithmetic "
                          "(where it wraps, the other may bring the sum back into the output)", op)
        if any(o in self.wrapping for o in tainted) or (
                width == 32 and name in ("arith.addi", "arith.subi", "arith.muli") and tainted):
            self.wrapping.add(result)
        if name in _PASSING or same_size_pointer_cast(op):
            self.shift[result] = shifts[0]
        elif name in ("arith.addi", "tt.addptr"):
            self.shift[result] = shifts[0] + shifts[1]
        elif name == "arith.subi":
            self.shift[result] = shifts[0] - shifts[1]
        elif name == "arith.muli" and sum(map(bool, shifts)) == 1:
            factor = self._number(operands[1] if shifts[0] else operands[0])
            if factor is None:
                self._refuse(op, "a product by a number the kernel does not hold")
            self.shift[result] = (shifts[0] or shifts[1]) * factor
        elif name == "arith.select" and not shifts[0] and shifts[1] == shifts[2]:
            self.shift[result] = shifts[1]
        else:
            self._refuse(op, "an op other than +, -, a product by a number, a shape op or pointer arithmetic")

    def _number(self, value: int, depth: int = 0) -> int | None:
        """The value, where it is one number in every program and lane: a constant, a concrete
        scalar, or arithmetic of those."""
        if value in self.params:
            held = self.params[value]
            return int(held[0]) if isinstance(held, np.ndarray) and held.dtype != bool else None
        defining = self.program.defining.get(value)
        if defining is None or depth > 16:
            return None
        op = defining[0]
        if op.name == "arith.constant":
            (result,) = evaluate(op, [], _Uniform)
        elif op.name in _PASSING or op.name in ("arith.addi", "arith.subi", "arith.muli"):
            operands = [self._number(o, depth + 1) for o in op.operands]
            if any(o is None for o in operands):
                return None
            (result,) = evaluate(op, [np.array([o], dtype=np.int64) for o in operands], _Uniform)
        else:
            return None
        if result is UNKNOWN or isinstance(result, Pointer):
            return None
        flat = np.asarray(result).reshape(-1)
        return int(flat[0]) if flat.size and (flat == flat[0]).all() else None
