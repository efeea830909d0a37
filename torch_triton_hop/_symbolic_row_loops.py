"""The store-coverage proof for a launch with symbolic sizes whose grid is concrete: each
program loops over its share of the rows, and the loop's bounds are symbolic. Reduced to the
concrete proof of one iteration.

# [Note: A row loop of symbolic length]
# TL;DR: persistent row kernels (Liger's RMSNorm backward: one program per SM, `for row in
# range(pid * R, min((pid + 1) * R, n))` with R = cdiv(n, SMs)) keep a concrete grid when the
# number of rows n is symbolic, so [Note: A proof over symbolic sizes, by translation] does
# not apply. The loop does what a symbolic grid does: iteration r repeats iteration 0 with
# every address shifted by r * D. The proof holds for every n when:
#  1. one top-level scf.for L holds every access of the output (and of the argument read);
#     its induction variable reaches their addresses only through translation
#     (translation_shift with the loop as source: no mask, condition or inner loop bound),
#     and nothing L carries between iterations decides an address;
#  2. L's bounds take one of three forms, read from the TTIR as expressions of the program id
#     P along one axis and the kernel's scalar parameters:
#       chunks:  range(P * R, min(P * R + R, n)), step 1 (programs p own rows [pR, pR + R) cut
#                at n: disjoint, and all of [0, n) where G * R >= n and R >= 0);
#       strided: range(P, n, G), G that axis's number of programs (each row once);
#       whole:   range(0, n), step 1, P absent (every program along that axis runs every
#                row; the concrete proof sees all programs, and counts repeats);
#  3. the program id along that axis and the parameters in the bounds are read nowhere else
#     in what the accesses need (their addresses, masks and conditions): the reduced run gives
#     them other values;
#  4. the output's layout is R' rows of a concrete inner layout with D = m * row stride, and
#     R' = m * n for every value of the symbols (the shape environment, no guard).
# The reduced run: that axis of the grid is 1 and every parameter in the bounds is 1, so
# program 0 runs iteration 0 alone; the concrete proof of it over m rows stands for every
# iteration. `G * R >= n` and `R >= 0` must hold for every value of the sizes, with no guard:
# shown by the shape environment, or R is ceil(a / G) with a >= n as the host computed it
# (`math.ceil(n / G)`, `triton.cdiv(n, G)`: sympy's value ranges do not show those alone). A
# guard would recompile where it fails (R = n // G holds for even n only). Bounds computed in
# 32-bit arithmetic add the guard that they stay below 2^31, as inductor's own indexing does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple

import numpy as np
import torch

from . import _compat, _compat_inductor
from ._index_values import FORWARD, UNKNOWN, NoProof, evaluate, grid_axis
from ._symbolic_coverage import ReducedRun, Shift, Translation, _concrete, _integer_width, _row_layouts, _Uniform
from ._ttir import Op, walk

if TYPE_CHECKING:  # the annotations only: sympy is imported when first needed
    import sympy

__all__ = ["RowLoop", "find_row_loop", "row_loop_bounds", "reduced_run"]

_INT32_MAX = 2**31 - 1


def _program_symbol() -> Any:
    """The program id in the bounds' expressions (sympy is imported when first needed: the
    package's import stays light)."""
    import sympy

    return sympy.Symbol("program_id", integer=True, nonnegative=True)


class RowLoop(NamedTuple):
    """What L's bounds say of the rows each program runs."""
    axis: int | None            # the grid axis whose program id the bounds read; None: no program id
    form: str                   # "chunks", "strided" or "whole"
    rows: sympy.Expr            # n, in the kernel's scalar parameters (sympy symbols named as them)
    per_program: sympy.Expr     # R (chunks), else 0
    ones: tuple[str, ...]       # the parameters the bounds read: 1 in the reduced run
    narrow: bool                # a bound computed in 32-bit arithmetic


def find_row_loop(program: Any) -> Op:
    """L of [Note: A row loop of symbolic length]: the one top-level scf.for holding every
    access `program` (a _Program of _store_coverage) follows."""
    loops = [op for op in program.regions if op.name == "scf.for" and program.parent.get(op) is None]
    holding = [loop for loop in loops if all(loop in program._enclosing(a) for a in program.accesses)]
    if len(holding) != 1:
        raise NoProof("no one loop at the kernel's top level holds every access")
    return holding[0]


def row_loop_bounds(program: Any, names: list[str | None], grid: tuple[int, ...], loop: Op) -> RowLoop:
    """The form of L's bounds, checked to be read only there (points 2 and 3 of the Note)."""
    import sympy

    program_id = _program_symbol()
    reader = _Bounds(program, names, grid)
    low, high, step = (reader.expression(v) for v in loop.operands[:3])
    axis = reader.axis
    if axis is None:
        form, rows, per_program = "whole", high, sympy.Integer(0)
        if low != 0 or step != 1:
            raise NoProof(f"the row loop runs range({low}, {high}, {step}), not range(0, n) or a program's share")
    elif program_id in step.free_symbols:
        raise NoProof("the row loop's step depends on the program id")
    elif step == grid[axis] and sympy.expand(low - program_id) == 0 and program_id not in high.free_symbols:
        form, rows, per_program = "strided", high, sympy.Integer(0)
    elif step == 1:
        form = "chunks"
        per_program = sympy.expand(low).coeff(program_id, 1)
        ends = high.args if isinstance(high, sympy.Min) and len(high.args) == 2 else ()
        rows = next((e for e in ends if program_id not in e.free_symbols), None)
        share = next((e for e in ends if program_id in e.free_symbols), None)
        if program_id in per_program.free_symbols or sympy.expand(low - program_id * per_program) != 0 or \
                rows is None or share is None or sympy.expand(share - low - per_program) != 0:
            raise NoProof(f"the row loop runs range({low}, {high}), not range(P * R, min(P * R + R, n))")
    else:
        raise NoProof(f"the row loop runs range({low}, {high}, {step}), not a program's share of the rows")
    ones = tuple(sorted(str(s) for s in (low.free_symbols | high.free_symbols | step.free_symbols) - {program_id}))
    at_one = {sympy.Symbol(name, integer=True): 1 for name in ones} | {program_id: 0}
    if low.subs(at_one) != 0 or high.subs(at_one) != 1:
        raise NoProof("the row loop does not run one iteration where its parameters are 1")
    reader.check_only_bounds(loop, ones)
    return RowLoop(axis, form, rows, per_program, ones, reader.narrow)


def reduced_run(args: dict[str, Any], grid: list[Any], output: str,
                layout: tuple[tuple[Any, ...], tuple[Any, ...]],
                analyze: Callable[[tuple[int, ...]], tuple[RowLoop, Shift]]) -> ReducedRun:
    """The concrete proof standing for a launch with a concrete grid whose sizes are symbolic:
    `analyze(grid)` gives L's bounds and the shift between its iterations (translation_shift
    with L as the source). NoProof where the reduction does not apply."""
    grid = tuple(_concrete(g) for g in grid)
    if not all(isinstance(g, int) for g in grid):
        raise NoProof(f"the sizes of {output} are symbolic and the grid is not symbolic along one axis")
    import sympy

    loop, shift = analyze(grid)
    values = {}
    for name in loop.ones:
        value = args.get(name)
        if not isinstance(value, (int, torch.SymInt)) or isinstance(value, bool):
            raise NoProof(f"the row loop's bound {name} is not an integer argument")
        values[sympy.Symbol(name, integer=True)] = value
    rows_value = _value(loop.rows, values)
    per_program = _value(loop.per_program, values)
    programs = grid[loop.axis] if loop.axis is not None else 1
    sizes, strides = ([_concrete(v) for v in part] for part in layout)
    for rows, row_stride, inner in _row_layouts(sizes, strides):
        if shift.elements <= 0 or shift.elements % row_stride:
            continue
        per_iteration = shift.elements // row_stride
        if not _compat.statically_known_true(rows == per_iteration * rows_value):
            continue
        if loop.form == "chunks" and not _shares_cover(per_program, programs, rows_value):
            raise NoProof(f"the programs' shares of the rows ({programs} x {loop.per_program}) may not reach "
                          f"{loop.rows} for every value of the sizes")
        largest = {"chunks": programs * per_program + per_program, "strided": rows_value + programs,
                   "whole": rows_value + 1}[loop.form]
        if loop.narrow and not _compat.guard_or_false(largest <= _INT32_MAX):
            raise NoProof("the row loop's bounds are computed in 32 bits and may wrap")
        if shift.wraps and not _compat.guard_or_false(rows * row_stride + shift.elements <= _INT32_MAX):
            raise NoProof(f"{output} may have 2^31 elements or more, where the kernel's 32-bit offsets wrap")
        reduced = tuple(1 if i == loop.axis else g for i, g in enumerate(grid))
        return ReducedRun(reduced, ((per_iteration, *inner[0]), (row_stride, *inner[1])),
                          Translation(-1 if loop.axis is None else loop.axis, shift.elements, None,
                                      row_loop=True, ones=loop.ones))
    raise NoProof(f"the row loop's iterations, {shift.elements} elements apart, do not tile the {loop.rows} rows of "
                  f"{output} (sizes {list(sizes)}, strides {list(strides)})")


def _shares_cover(per_program: Any, programs: int, rows: Any) -> bool:
    """Whether `programs` chunks of `per_program` rows reach `rows` for every value of the sizes,
    with no guard (one that held here but not at another size would recompile, and a guard
    that splits even from odd sizes would compile twice): shown by the shape environment, or R
    is ceil(a / programs) with a >= rows, as hosts compute it (Liger: `math.ceil(n_rows /
    sm_count)`; `triton.cdiv`)."""
    if not _compat.statically_known_true(per_program >= 0):
        return False
    if _compat.statically_known_true(programs * per_program >= rows):
        return True
    parts = _compat_inductor.ceiling_division_parts(_compat_inductor.sympy_value(per_program))
    if parts is None or parts[1] != programs:
        return False
    import sympy

    difference = sympy.expand(sympy.sympify(parts[0] - _compat_inductor.sympy_value(rows)))
    return bool(difference.is_Integer and difference >= 0)


def _value(expression: Any, values: dict[Any, Any]) -> Any:
    """A bound's expression (sympy) as the int / SymInt it has in this launch."""
    import sympy

    if isinstance(expression, sympy.Integer):
        return int(expression)
    if isinstance(expression, sympy.Symbol):
        return values[expression]
    parts = [_value(a, values) for a in expression.args]
    if isinstance(expression, sympy.Add):
        return sum(parts[1:], parts[0])
    if isinstance(expression, sympy.Mul):
        result = parts[0]
        for part in parts[1:]:
            result = result * part
        return result
    if isinstance(expression, (sympy.Min, sympy.Max)):
        pick = torch.sym_min if isinstance(expression, sympy.Min) else torch.sym_max
        result = parts[0]
        for part in parts[1:]:
            result = pick(result, part)
        return result
    raise NoProof(f"the row loop's bound {expression} is not a sum, product, min or max of the arguments")


class _Bounds:
    """Reads L's bounds as sympy expressions (the program id a symbol, each scalar parameter a
    symbol named as it), and checks that what they read is read nowhere else that matters."""

    def __init__(self, program: Any, names: list[str | None], grid: tuple[int, ...]) -> None:
        self.program, self.names, self.grid = program, names, grid
        self.params = {p: i for i, p in enumerate(program.entry.params)}
        self.axis: int | None = None
        self.narrow = False
        self.ops: set[Op] = set()  # the ops computing the bounds

    def expression(self, value: int, depth: int = 0) -> Any:
        import sympy

        arithmetic = {"arith.addi": sympy.Add, "arith.subi": lambda a, b: a - b, "arith.muli": sympy.Mul,
                      "arith.minsi": sympy.Min, "arith.maxsi": sympy.Max}
        if value in self.params:
            name = self.names[self.params[value]]
            if name is None:
                raise NoProof("the row loop's bounds read a parameter that is no argument")
            return sympy.Symbol(name, integer=True)
        defining = self.program.defining.get(value)
        if defining is None or depth > 32:
            raise NoProof("the row loop's bounds are not computed from the kernel's arguments and program id")
        op = defining[0]
        if self.program.parent.get(op) is not None:
            raise NoProof("the row loop's bounds are computed inside a region")
        self.ops.add(op)
        name = op.name
        if name in ("tt.get_program_id", "tt.get_num_programs"):
            axis = grid_axis(op)
            if name == "tt.get_num_programs":
                return sympy.Integer(self.grid[axis])
            if self.axis not in (None, axis):
                raise NoProof("the row loop's bounds read the program ids of two grid axes")
            self.axis = axis
            return _program_symbol()
        if name == "arith.constant":
            (result,) = evaluate(op, [], _Uniform)
            flat = np.asarray(result).reshape(-1) if result is not UNKNOWN else np.zeros(0)
            if flat.size != 1 or flat.dtype.kind not in "iu":
                raise NoProof("the row loop's bounds use a constant that is not one integer", op)
            return sympy.Integer(int(flat[0]))
        if name in ("arith.extsi", FORWARD) or (name == "arith.bitcast" and _integer_width(op) is not None):
            return self.expression(op.operands[0], depth + 1)
        if name in arithmetic:
            width = _integer_width(op)
            if width is None or width < 32:
                raise NoProof("the row loop's bounds are computed in integers narrower than 32 bits", op)
            self.narrow |= width == 32 and name in ("arith.addi", "arith.subi", "arith.muli")
            a, b = (self.expression(o, depth + 1) for o in op.operands)
            return arithmetic[name](a, b)
        raise NoProof(f"the row loop's bounds are computed by {name}, not +, -, *, min or max", op)

    def check_only_bounds(self, loop: Op, ones: tuple[str, ...]) -> None:
        """Point 3 of the Note: the program id along the bounds' axis, the parameters the
        bounds read and the bounds' own values reach nothing the accesses need but L's bounds."""
        program = self.program
        read = {p for p, i in self.params.items() if self.names[i] in ones}
        read |= {r for op in walk(program.entry.body) if op.name in ("tt.get_program_id", "tt.get_num_programs")
                 and self.axis is not None and grid_axis(op) == self.axis
                 for r in op.results}
        read |= {r for op in self.ops for r in op.results}
        for block in program.entry.body:
            if any(v in read for v in block.ops[-1].operands) and block.ops[-1].name != "tt.return":
                raise NoProof("a value the row loop's bounds read is passed between blocks")
        for op in walk(program.entry.body):
            if op in self.ops or not any(o in read for o in op.operands):
                continue
            if op is loop and not any(o in read for o in op.operands[3:]):
                continue
            if op in program.accesses or op in program.regions or any(r in program.needed for r in op.results):
                raise NoProof(f"a value the row loop's bounds read is also read by {op.name}, which an access needs",
                              op)
