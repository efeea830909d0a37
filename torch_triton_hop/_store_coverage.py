"""Whether a launch stores every element of one output: a proof from the kernel's TTIR.

# [Note: A proof that a kernel stores every element]
# TL;DR: where it holds, an epilogue may be fused whatever it computes, for no element of
# the output is left to the garbage of a fresh torch.empty (see [Note: Elements a kernel
# may leave unwritten], which refuses otherwise). It holds when:
#  1. every tt.store through the output's pointer has an address, a mask and enclosing
#     conditions (scf.if conditions, loop bounds, branches) computed only from the grid, the
#     integer scalars and constants: no load, no atomic, no float, nothing this evaluator
#     does not know (functions the kernel calls are inlined). The elements stored then
#     depend on nothing the kernel reads;
#  2. evaluating those values for the launch's concrete grid and scalars (each autotuning
#     config with its own grid) marks every element of the output's layout, and nothing
#     outside it.
# An early return (`if row >= n_rows: return`) is a branch (cf.cond_br) between the
# function's top-level blocks: the blocks run in order, each for the programs that branch
# to it (a mask over programs, as an scf.if's branches get), so a program that returns
# stores nothing after it. Only forward branches: one back would be a loop.
# An scf.while runs while any program's condition holds, each program's results taken when
# its own condition fails. Anything else (a symbolic size, a block pointer, a pointer that
# may be another argument's, a pointer carried through a while loop) is no proof, and the
# epilogue rules take the safe path.
# The evaluation runs on numpy, all programs at once (each value gets a leading program
# axis, of size 1 where it is the same in every program), with a cap on the work: it is the
# index arithmetic of the kernel, not its loads or its math. It runs by rows first (see
# [Note: Evaluating a proof by rows]): where each address is a per-program value plus a
# per-lane one, it follows rows of lanes, at the cost of the programs plus the lanes. Else it
# follows every element, in chunks of programs:
#   %pid = tt.get_program_id x        -> [0, 1, ..., P-1]           shape (P,)
#   %r   = tt.make_range {0, 32}      -> [[0, ..., 31]]             shape (1, 32)
#   %o   = arith.addi %pid*32, %r     -> the offsets of each program, shape (P, 32)
#   tt.store %out + %o, %v, %o < %n   -> marks the offsets where the mask holds
# Integers wrap at their width as in the kernel (an i32 offset that overflows is negative,
# and a store there is outside the output: no proof).
# The same evaluation counts accesses: stores past the first to an element (a prologue the
# fused kernel also stores must store each element once, see [Note: A prologue the fused
# kernel also stores]), and, run on a kernel's tt.loads of an argument instead, loads past
# the first (a prologue that reads more bytes fuses into a loop only where none is re-read).
# An evaluation that holds is kept for its slice (_Program.signature: the ops it reads, value
# names numbered apart) and answers any kernel with the same slice, grid and layout: a fused
# kernel planned with one argument and then with all, or one whose math alone differs.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from typing import Any, NamedTuple

import numpy as np
import torch

from . import _compat, _symbolic_coverage as _symbolic, _symbolic_row_loops as _row_loops
from ._analysis import WRITE_OPS, complete_arguments, entry_function, ttir_argument_names
from ._side_table import base_kernel, kernel_side_table, module_constants
from ._index_values import (
    FORWARD, POINTER_OPS, UNKNOWN, EVALUATED_OPS, NoProof, Pointer, evaluate, same_size_pointer_cast, select,
    type_shape, where_live)
from ._row_coverage import (
    NotSeparable, RowAccesses, SharedElements, check_size, needs_rows, select_rows, separable_op)
from ._ttir import Block, Function, Op, parse_module, resolve_location, walk

__all__ = ["unstored_reason", "reloaded_reason", "read_after_store_reason"]

log = logging.getLogger(__name__.rsplit(".", 1)[0] + "._fusion")

# Elements per value per chunk of programs: an int64 value of a chunk (2 MB) stays in the
# cache between the ops that use it; 1 << 20 took twice as long where a kernel's offsets go
# through divisions (a fused prologue's index: 8192 programs of 2048 lanes, 1.0 -> 0.5 s).
_CHUNK_ELEMENTS = 1 << 18
_WORK_LIMIT = 1 << 28      # elements computed in all (about 1.5 s), past which there is no proof
# The least an op counts for: an op on a few elements costs its Python time, about 40 us on a
# 2-core CPU, so a loop of a million scalar ops would take a minute. 2^15 of them at most.
_OP_COST = 1 << 13


def unstored_reason(kernel_key: str, kwargs: dict[str, Any], constant_args: str, configs: list[dict[str, Any]],
                    grids: list, output: str, once: bool = False) -> str | None:
    """None where every launch this node can make (each config with its grid) stores every
    element of `output` (with `once`: each exactly once); else why that is not proven.
    `kwargs` are the launch's tensors (fake ones will do: only their layouts matter) and
    scalars."""
    return _reason(kernel_key, kwargs, constant_args, configs, grids, output, "store", True, once)


def reloaded_reason(kernel_key: str, kwargs: dict[str, Any], constant_args: str, configs: list[dict[str, Any]],
                    grids: list, argument: str) -> str | None:
    """None where every launch this node can make loads each element of `argument` at most
    once (the same evaluation as unstored_reason's, of the argument's tl.loads); else why
    that is not proven."""
    return _reason(kernel_key, kwargs, constant_args, configs, grids, argument, "load", False, True)


def read_after_store_reason(kernel_key: str, kwargs: dict[str, Any], constant_args: str,
                            configs: list[dict[str, Any]], grids: list, written: str, read: str) -> str | None:
    """None where every launch this node can make stores every element of `written`, and loads
    an element through `read` (the same tensor passed again) only in the program that stores
    it and before it does; else why that is not proven.
    See [Note: An output written over the kernel's own input]."""
    return _reason(kernel_key, kwargs, constant_args, configs, grids, written, "store", True, False, read)


def _reason(kernel_key: str, kwargs: dict[str, Any], constant_args: str, configs: list[dict[str, Any]], grids: list,
            name: str, access: str, every: bool, once: bool, read: str | None = None) -> str | None:
    from ._hops import kernel_arguments  # the HOP module imports the fusion pass's modules

    tensor = kwargs[name]
    layout = (tuple(tensor.size()), tuple(tensor.stride()))
    symbolic = _symbolic.symbolic((*layout[0], *layout[1], *grids))
    arguments = kernel_arguments(kwargs, constant_args, validate=False)
    runs = [({**arguments, **c["kwargs"]}, grids[3 * i: 3 * i + 3]) for i, c in enumerate(configs)] or \
        [(arguments, grids[:3])]
    try:
        for args, grid in runs:
            if symbolic:
                _check_symbolic_run(kernel_key, args, list(grid), name, layout, access, every, once, read)
            else:
                _check_run(kernel_key, args, tuple(grid), name, layout, access, every, once, read)
    except NoProof as e:
        return str(e)
    except Exception as e:  # noqa: BLE001  TTIR this does not read: no proof, the safe path
        return f"the proof could not be made ({type(e).__name__}: {e})"
    return None


def _check_symbolic_run(kernel_key: str, args: dict[str, Any], grid: list[Any], output: str,
                        layout: tuple[tuple[Any, ...], tuple[Any, ...]], access: str, every: bool, once: bool,
                        read: str | None = None) -> None:
    """_check_run for a launch with symbolic sizes, by the concrete proof of its first program
    along the symbolic grid axis (see [Note: A proof over symbolic sizes, by translation])."""
    base, args = _kernel_and_arguments(kernel_key, args)

    def shift_of(axis: int, bound: str | None) -> _symbolic.Shift:
        program, params, names, _ = _program(base, args, _scalars(args, bound), output, access, read)
        return _symbolic.translation_shift(program, params, names.index(output), axis,
                                           names.index(bound) if bound is not None else None,
                                           names.index(read) if read is not None else None)

    def row_loop_of(concrete_grid: tuple[int, ...]) -> tuple[_row_loops.RowLoop, _symbolic.Shift]:
        program, params, names, _ = _program(base, args, _scalars(args), output, access, read)
        loop = _row_loops.find_row_loop(program)
        bounds = _row_loops.row_loop_bounds(program, names, concrete_grid, loop)
        return bounds, _symbolic.translation_shift(program, params, names.index(output), -1, None,
                                                   names.index(read) if read is not None else None, loop)

    concrete_grid = not _symbolic.symbolic(grid)
    try:
        if concrete_grid:
            reduced = _row_loops.reduced_run(args, grid, output, layout, row_loop_of)
        else:
            reduced = _symbolic.reduced_runs(args, grid, output, layout, shift_of)
        _check_run(kernel_key, args, reduced.grid, output, reduced.layout, access, every, once, read,
                   translation=reduced.translation)
    except NoProof as e:
        how = ("each program's row loop, whose every iteration must repeat the first shifted" if concrete_grid else
               "the first program along the grid's symbolic axis, which every other program must repeat shifted")
        raise NoProof(f"{e} (with symbolic sizes the proof is made on {how})") from None


def _kernel_and_arguments(kernel_key: str, args: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The base kernel and every argument of a launch (defaults filled in); NoProof for a
    symbolic constexpr, whose TTIR would be made for one value (capture specializes
    constexprs; a direct call may not)."""
    base = base_kernel(kernel_side_table.get_kernel(kernel_key))
    args = complete_arguments(kernel_side_table.get_kernel(kernel_key), args)
    for param in _compat.kernel_params(base):
        if param.is_constexpr and isinstance(args.get(param.name), (torch.SymInt, torch.SymFloat, torch.SymBool)):
            raise NoProof(f"constexpr {param.name} is symbolic")
    return base, args


def _scalars(args: dict[str, Any], bound: str | None = None, ones: tuple[str, ...] = ()) -> dict[str, int]:
    """The integer scalars the evaluation follows: a symbolic one is unknown to it, but for
    the bound of a 1-D block (see [Note: A proof over symbolic sizes, by translation]) and
    the bounds of a row loop, 1 (see [Note: A row loop of symbolic length])."""
    scalars = {}
    for name, value in args.items():
        if isinstance(value, (torch.SymFloat, torch.SymBool)):
            raise NoProof(f"argument {name} is symbolic")
        if name == bound:
            scalars[name] = _symbolic.BOUND_VALUE
        elif name in ones:
            scalars[name] = 1
        elif isinstance(value, int):  # bool too: an i1 parameter
            scalars[name] = value
    return scalars


def _check_run(kernel_key: str, args: dict[str, Any], grid: tuple[int, ...], output: str,
               layout: tuple[tuple[int, ...], tuple[int, ...]], access: str, every: bool, once: bool,
               read: str | None = None, translation: _symbolic.Translation | None = None) -> None:
    base, args = _kernel_and_arguments(kernel_key, args)
    scalars = _scalars(args, translation.bound if translation else None, translation.ones if translation else ())
    # Module constants decide the TTIR as constexprs do (see [Note: Module constants of a kernel]).
    arguments = tuple(sorted((n, "symbolic" if isinstance(v, torch.SymInt) else repr(v)
                              if not isinstance(v, torch.Tensor) else ("tensor", v.dtype)) for n, v in args.items()))

    def result_key(name: str, kind: str, followed_read: str | None) -> tuple:
        return (kernel_key, module_constants(base), grid, name, kind, followed_read, layout, arguments, translation)

    key = result_key(output, access, read)
    with _results_lock:
        cached = _results.get(key)
    if cached is None:
        try:
            with _compat.compile_timed("torch_triton_hop.store_coverage_proof"):
                counts, read_counts = _prove(base, args, scalars, grid, output, layout, access, read, translation)
            cached = _Verdict("", counts.missing, counts.repeated)
        except NoProof as e:
            cached, read_counts = _Verdict(str(e), 0, 0), None
        with _results_lock:
            _results[key] = cached
            if read_counts is not None:
                # A read-after-store proof evaluates the output's stores as a proof of them
                # alone would, and follows every load of the read argument as a proof of its
                # loads would: its counts answer both questions asked next (Liger's RMSNorm
                # backward: an epilogue on dX, a prologue into dY's loads in its row loop;
                # 0.6 and 0.2 s on an H200 host at 8192 x 2048).
                _results.setdefault(result_key(output, access, None), cached)
                if (tuple(args[read].size()), tuple(args[read].stride())) == layout:
                    _results.setdefault(result_key(read, "load", None),
                                        _Verdict("", read_counts.missing, read_counts.repeated))
    if cached.reason:
        raise NoProof(cached.reason)
    if every and cached.missing:
        raise NoProof(f"the kernel may leave {cached.missing} of the {int(np.prod(layout[0]))} elements of {output} "
                      f"unwritten (grid {list(grid)})")
    if once and cached.repeated:
        verb = "stores" if access == "store" else "loads"
        raise NoProof(f"the kernel {verb} {cached.repeated} elements of {output} more than once (grid {list(grid)})")


class _Counts(NamedTuple):
    """What an evaluation found of one argument's accesses (stores, or loads)."""
    missing: int   # elements of the layout no access reaches
    repeated: int  # accesses past the first to an element


class _Verdict(NamedTuple):
    reason: str    # why the evaluation does not hold; "" where it does (and the counts are its)
    missing: int
    repeated: int


# Per launch and access, the verdict of its evaluation.
_results: dict[tuple, _Verdict] = {}
# Per program slice (see _Program.signature), the counts of an evaluation that held: two
# kernels computing the accesses' addresses, masks and conditions alike get the same counts
# (a fused kernel's stored prologue, planned alone and then with the launch's epilogues).
_proven_slices: dict[tuple, tuple[_Counts, _Counts | None]] = {}
_results_lock = threading.Lock()


class _Parsed(NamedTuple):
    program: "_Program"
    params: dict[int, Any]     # per TTIR parameter, what the evaluation gives it
    names: list[str | None]    # per TTIR parameter, the kernel argument it is
    aliases: dict[str, str]    # the module's #loc aliases, for messages


def _program(base: Any, args: dict[str, Any], scalars: dict[str, int], output: str, access: str,
             read: str | None) -> _Parsed:
    """The kernel's accesses of `output` as a _Program, and what the evaluation gives each
    TTIR parameter: a pointer, a scalar's value, else UNKNOWN."""
    text, folded = _compat.generate_ttir_text(base, args)
    functions, aliases = parse_module(text)
    entry = entry_function(functions, base)
    names = ttir_argument_names(base, args, folded)
    if len(names) != len(entry.params):
        raise NoProof("the kernel's TTIR parameters could not be matched to its arguments")
    # Each must be one TTIR parameter (a tuple argument is several, each named by the tuple).
    if names.count(output) != 1:
        raise NoProof(f"{output} is not one parameter of the kernel's TTIR")
    if read is not None and names.count(read) != 1:
        raise NoProof(f"{read} is not one parameter of the kernel's TTIR")
    program = _Program(_Inliner(functions).inlined(entry), names.index(output), access,
                       names.index(read) if read is not None else None)
    params = {}
    for index, (param, name) in enumerate(zip(entry.params, names)):
        value = args.get(name) if name is not None else None
        if isinstance(value, torch.Tensor):
            params[param] = Pointer(index, np.zeros((1,), dtype=np.int64))
        elif name in scalars:
            value = scalars[name]
            params[param] = np.array([value], dtype=bool if isinstance(value, bool) else np.int64)
        else:
            params[param] = UNKNOWN
    return _Parsed(program, params, names, aliases)


def _prove(base: Any, args: dict[str, Any], scalars: dict[str, int], grid: tuple[int, ...], output: str,
           layout: tuple[tuple[int, ...], tuple[int, ...]], access: str,
           read: str | None = None, translation: Any = None) -> tuple[_Counts, _Counts | None]:
    """The counts of the `access`es (tt.store / tt.load) of `output`; NoProof where their
    addresses, masks or conditions are not followed, or an access may fall outside the
    layout's span. With `read` (stores only), also NoProof where a tt.load through `read`
    reaches an element after a store to it, or in another program than the one storing it;
    and the counts of those loads (over the same layout), else None. With a `translation`,
    also NoProof where the programs along its axis do not repeat this one shifted by its shift."""
    program, params, names, aliases = _program(base, args, scalars, output, access, read)
    if translation is not None:
        shift = _symbolic.translation_shift(program, params, names.index(output), translation.axis,
                                            names.index(translation.bound) if translation.bound else None,
                                            names.index(read) if read is not None else None,
                                            _row_loops.find_row_loop(program) if translation.row_loop else None)
        if shift.elements != translation.shift:
            raise NoProof(f"programs are {shift.elements} elements apart, not {translation.shift}")
    sizes, strides = layout
    span = 1 + sum((s - 1) * st for s, st in zip(sizes, strides)) if all(sizes) else 0
    signature = (program.signature(params), grid, layout, program.largest)
    with _results_lock:
        known = _proven_slices.get(signature)
    if known is not None:
        return known
    dense = span == int(np.prod(sizes))  # contiguous or permuted: every element of the span
    try:
        counts, read_counts = _by_rows(program, params, grid, layout, span, dense, read, output)
    except Exception as e:  # noqa: BLE001  the element-wise evaluation is the reference, and answers
        # (with its reason where the proof fails).
        if not isinstance(e, (NotSeparable, NoProof)):
            log.debug("the proof by rows raised %s: %s; evaluating every element", type(e).__name__, e)
        counts, read_counts = _by_elements(program, params, grid, layout, span, dense, read, output, aliases)
    with _results_lock:
        _proven_slices[signature] = (counts, read_counts)
    return counts, read_counts


def _by_elements(program: "_Program", params: dict[int, Any], grid: tuple[int, ...],
                 layout: tuple[tuple[int, ...], tuple[int, ...]], span: int, dense: bool, read: str | None, output: str,
                 aliases: dict) -> tuple[_Counts, _Counts | None]:
    """The counts from an evaluation of every element, in chunks of programs."""
    programs = int(np.prod(grid))
    chunk = max(1, _CHUNK_ELEMENTS // program.largest)
    evaluator = _Evaluator(program, np.zeros(max(span, 0), dtype=bool), grid, tracked=read is not None)
    try:
        for start in range(0, programs, chunk):
            evaluator.run(params, np.arange(start, min(start + chunk, programs), dtype=np.int64))
    except NoProof as e:
        where = resolve_location(e.op.loc, aliases) if e.op is not None else None
        raise NoProof(f"{e} ({where})" if where else str(e)) from None
    return _element_counts(evaluator, layout, dense, read, output, grid)


def _element_counts(evaluator: "_Evaluator", layout: tuple[tuple[int, ...], tuple[int, ...]], dense: bool,
                    read: str | None, output: str, grid: tuple[int, ...]) -> tuple[_Counts, _Counts | None]:
    """The counts of an evaluation that marked elements; NoProof where a program loads what
    another one stores."""
    if read is not None:
        crossed = _crossed(evaluator)
        if crossed:
            raise NoProof(f"{crossed} elements of {read} are loaded by another program than the one that stores them "
                          f"through {output} (grid {list(grid)})")
    if dense:
        required = slice(None)
    else:
        required = np.zeros((1,), dtype=np.int64)
        for size, stride in zip(*layout):
            required = (required[:, None] + np.arange(size, dtype=np.int64)[None, :] * stride).reshape(-1)
    written = evaluator.written
    counts = _Counts(int((~written[required]).sum()), evaluator.accesses - int(written.sum()))
    read_counts = None
    if read is not None:
        loaded = evaluator.loader != 0
        read_counts = _Counts(int((~loaded[required]).sum()), evaluator.loads - int(loaded.sum()))
    return counts, read_counts


def _by_rows(program: "_Program", params: dict[int, Any], grid: tuple[int, ...],
             layout: tuple[tuple[int, ...], tuple[int, ...]], span: int, dense: bool, read: str | None,
             output: str) -> tuple[_Counts, _Counts | None]:
    """The counts from an evaluation by rows (see [Note: Evaluating a proof by rows]): the
    accesses replayed on the rows they reach, each row counting the elements it reaches; where
    the rows are not units (2D tiles, a layout that is not dense), on the elements they reach."""
    if not int(np.prod(grid)):
        raise NotSeparable("no programs")  # nothing to evaluate either way
    accesses = RowAccesses()
    evaluator = _Evaluator(program, np.zeros((0,), dtype=bool), grid, rows=accesses)
    evaluator.run(params, np.arange(int(np.prod(grid)), dtype=np.int64))
    tracked = read is not None
    try:
        if not dense:
            raise SharedElements("a layout that is not dense")
        rows = accesses.rows(span)
    except SharedElements:
        replay = _Evaluator(program, np.zeros(max(span, 0), dtype=bool), grid, tracked=tracked)
        for access in accesses.accesses:
            for elements, programs in accesses.elements(access, with_programs=tracked):
                replay._charge(None, elements.size)
                if elements.size and (elements.min() < 0 or elements.max() >= span):
                    raise NotSeparable("an access that may fall outside the span")
                replay._record(access.op, elements, (programs + 1).astype(replay.id_type) if tracked else None)
        return _element_counts(replay, layout, dense, read, output, grid)
    replay = _Evaluator(program, np.zeros(rows.starts.shape, dtype=bool), grid, tracked=tracked)
    reached = loaded_through_read = 0
    for access in accesses.accesses:
        reached_rows = np.searchsorted(rows.starts, access.starts)
        replay._record(access.op, reached_rows, (access.programs + 1).astype(replay.id_type) if tracked else None)
        elements = int(rows.weights[reached_rows].sum())
        if tracked and access.op.name == "tt.load":
            loaded_through_read += elements
        else:
            reached += elements
    if tracked and _crossed(replay):
        raise NotSeparable("elements loaded by another program than the one that stores them")
    written = int(rows.weights[replay.written].sum())
    counts = _Counts(span - written, reached - written)
    read_counts = None
    if tracked:
        loaded = int(rows.weights[replay.loader != 0].sum())
        read_counts = _Counts(span - loaded, loaded_through_read - loaded)
    return counts, read_counts


def _crossed(evaluator: "_Evaluator") -> int:
    """Elements (rows) a program stores and another one loads. Elements no program stores keep
    the input's value in either buffer: what the kernel leaves unwritten is the coverage
    check's, with its own reason."""
    stored = evaluator.owner != 0
    return int((stored & (evaluator.loader != 0) & (evaluator.loader != evaluator.owner)).sum())


class _Inliner:
    """The entry function with every tt.call replaced by the callee's ops (fresh value ids per
    call; each result forwarded from what the callee returns): triton inlines them later, and
    the TTIR this reads is the frontend's."""

    def __init__(self, functions: dict[str, Function]) -> None:
        self.functions = functions
        self.next_id = 1 + max((v for f in functions.values() for op in walk(f.body)
                                for v in (*op.results, *op.operands, *op.header_defs)), default=0)

    def inlined(self, entry: Function) -> Function:
        # The entry's top-level blocks stay as they are (an early return branches between them).
        blocks = [Block(args=list(block.args), ops=self._ops(block.ops, None, 0), label=block.label)
                  for block in entry.body]
        return Function(entry.name, entry.params, blocks, entry.loc)

    def _ops(self, ops: list[Op], mapping: dict[int, int] | None, depth: int) -> list[Op]:
        out: list[Op] = []
        for op in ops:
            if op.name != "tt.call":
                out.append(self._clone(op, mapping, depth))
                continue
            callee = self.functions.get(op.callee or "")
            if callee is None or depth >= 16 or not callee.body[0].ops:
                raise NoProof(f"the kernel calls {op.callee}, which could not be followed")
            body = callee.body[0].ops
            if body[-1].name != "tt.return" or any(o.name == "tt.return" for o in walk([Block([], body[:-1])])):
                raise NoProof(f"the kernel calls {op.callee}, which returns early")
            inner = dict(zip(callee.params, (self._use(o, mapping) for o in op.operands)))
            out.extend(self._ops(body[:-1], inner, depth + 1))
            for result, value in zip(op.results, body[-1].operands):
                out.append(Op(name=FORWARD, results=[self._define(result, mapping)], operands=[inner.get(value, value)],
                              loc=op.loc, text=FORWARD))
        return out

    def _clone(self, op: Op, mapping: dict[int, int] | None, depth: int) -> Op:
        new = Op(name=op.name, results=[self._define(r, mapping) for r in op.results],
                 operands=[self._use(o, mapping) for o in op.operands], loc=op.loc, text=op.text, callee=op.callee,
                 successors=op.successors)
        new.header_defs = [self._define(h, mapping) for h in op.header_defs]
        new.regions = [[Block(args=[self._define(a, mapping) for a in block.args],
                              ops=self._ops(block.ops, mapping, depth)) for block in region] for region in op.regions]
        return new

    def _define(self, value: int, mapping: dict[int, int] | None) -> int:
        if mapping is None:
            return value
        if value not in mapping:
            mapping[value] = self.next_id
            self.next_id += 1
        return mapping[value]

    @staticmethod
    def _use(value: int, mapping: dict[int, int] | None) -> int:
        return value if mapping is None else mapping.get(value, value)


_EVALUATED_REGIONS = {"scf.for", "scf.if", "scf.while"}
_SSA_NAME = re.compile(r"%[\w.$-]+(?::\d+)?(?:#\d+)?")  # a value's printed name (numbered apart)


class _Program:
    """The entry function's stores (or loads) through the output and what their addresses need."""

    def __init__(self, entry: Function, output: int, access: str = "store", read: int | None = None) -> None:
        self.entry = entry
        self.parent: dict[Op, Op | None] = {}
        self.defining: dict[int, tuple[Op, int]] = {}   # result -> (op, index)
        self.block_arg: dict[int, tuple[Op, int]] = {}  # region argument -> (op, index)
        for op in walk(entry.body):
            for index, result in enumerate(op.results):
                self.defining[result] = (op, index)
            for index, arg in enumerate(op.header_defs):
                self.block_arg[arg] = (op, index)
            for region in op.regions:
                for block in region:
                    for inner in block.ops:
                        self.parent[inner] = op
        self.parent.update({op: None for block in entry.body for op in block.ops})
        if any(len(region) > 1 for op in walk(entry.body) for region in op.regions):
            raise NoProof("the kernel has unstructured control flow")
        self.branches, self.incoming = self._branches(entry.body)
        bases = self._bases(entry)
        self.role = "the output" if access == "store" else "the argument"  # for messages
        self.accesses = []  # the tt.stores (tt.loads) of the output
        kinds = WRITE_OPS if access == "store" else {"tt.load"}
        kinds = kinds | ({"tt.load"} if read is not None else set())
        self.read = read  # a parameter whose tt.loads are followed too, with the stores
        for op in walk(entry.body):
            if op.name not in kinds:
                continue
            base = bases.get(op.operands[0])
            if base is None:
                raise NoProof(f"{op.name} accesses memory through a pointer that may be {entry.name}'s output")
            if read is not None and base == read and op.name == "tt.load":
                enclosing = self._enclosing(op)
                if any(o.name not in _EVALUATED_REGIONS for o in enclosing):
                    raise NoProof(f"a load of the argument read is inside {enclosing[0].name}")
                self.accesses.append(op)
                continue
            if base != output:
                continue
            if op.name != "tt." + access:
                raise NoProof(f"the output is written by {op.name}")
            enclosing = self._enclosing(op)
            if any(o.name not in _EVALUATED_REGIONS for o in enclosing):
                raise NoProof(f"a {access} of {self.role} is inside {enclosing[0].name}")
            self.accesses.append(op)
        if not self.accesses:
            raise NoProof(f"the kernel has no tt.{access} of {self.role}")
        self.needed, self.regions = self._slice()
        shapes = [type_shape(t) for t in re.findall(r"tensor<[^>]*>", "\n".join(o.text for o in walk(entry.body)))]
        self.largest = max([int(np.prod(s)) for s in shapes] or [1])

    def signature(self, params: dict[int, Any]) -> tuple:
        """What an evaluation of this program reads, the values numbered in the order they
        appear and each parameter given what it holds: two programs with one signature mark
        the same elements for one grid and layout. It follows _Evaluator's walk: the blocks
        with their branches, and in them the accesses (address, mask), the regions evaluated
        (with their terminators) and the ops a later one needs; the rest of a kernel (its
        loads of other data, its math) is left out, as the evaluation leaves it."""
        numbers: dict[int, int] = {}

        def number(value: int) -> Any:
            if value in numbers:
                return numbers[value]
            numbers[value] = len(numbers)
            if value not in params:
                return numbers[value]
            held = params[value]
            what = "pointer" if isinstance(held, Pointer) else "unknown" if held is UNKNOWN else \
                (str(held.dtype), int(held[0]))
            return numbers[value], what

        def op_signature(op: Op, operands: list[int]) -> tuple:
            return (op.name, _SSA_NAME.sub("%", op.text), tuple(number(v) for v in operands),
                    tuple(number(v) for v in (*op.results, *op.header_defs)),
                    tuple(tuple(block_signature(block) for block in region) for region in op.regions))

        def block_signature(block: Block) -> tuple:
            walked: list[tuple] = [tuple(number(arg) for arg in block.args)]
            for op in block.ops:
                if op in self.accesses:
                    walked.append(("access", op_signature(op, op.operands[:1] + _mask_operand(op))))
                if op.name == "tt.store":
                    continue
                if op.name in _EVALUATED_REGIONS:
                    if op in self.regions:
                        walked.append(op_signature(op, op.operands))
                elif any(r in self.needed for r in op.results):
                    walked.append(op_signature(op, op.operands))
            if block.ops and not block.ops[-1].results:  # a region's yield or condition
                walked.append((block.ops[-1].name, tuple(number(v) for v in block.ops[-1].operands)))
            return tuple(walked)

        blocks = []
        for i, block in enumerate(self.entry.body):
            needed_args = tuple(arg in self.needed for arg in block.args)
            blocks.append((needed_args, block_signature(block),
                           tuple((target, tuple(number(v) for v in values)) for target, values in self.branches[i])))
        return self.read is not None, tuple(blocks)

    @staticmethod
    def _branches(blocks: list[Block]) -> tuple[dict[int, list[tuple[int, list[int]]]], dict[int, list[int]]]:
        """The top-level blocks' edges (an early return: `if pid >= n: return` branches to a
        block that returns): per block index, its terminator's (target index, values passed);
        and per block argument, the values its predecessors pass (the frontend passes the
        names an `if` holding a return reassigns). Forward edges only: a branch back would be
        a loop, which this does not follow."""
        index = {block.label: i for i, block in enumerate(blocks) if block.label is not None}
        branches: dict[int, list[tuple[int, list[int]]]] = {}
        incoming: dict[int, list[int]] = {arg: [] for block in blocks[1:] for arg in block.args}
        for i, block in enumerate(blocks):
            last = block.ops[-1] if block.ops else None
            if last is None or last.name not in ("tt.return", "cf.br", "cf.cond_br"):
                raise NoProof(f"the kernel's control flow ends a block with {last.name if last else 'nothing'}")
            branches[i] = [(index.get(label, -1), values) for label, values in last.successors]
            for target, values in branches[i]:
                if target <= i:
                    raise NoProof("the kernel's control flow branches backwards (a loop of branches)", last)
                if len(values) != len(blocks[target].args):
                    raise NoProof("a branch passes another number of values than its target block takes", last)
                for arg, value in zip(blocks[target].args, values):
                    incoming[arg].append(value)
        return branches, incoming

    def _enclosing(self, op: Op) -> list[Op]:
        chain = []
        parent = self.parent.get(op)
        while parent is not None:
            chain.append(parent)
            parent = self.parent.get(parent)
        return chain

    def _bases(self, entry: Function) -> dict[int, int | None]:
        """Per pointer value, the parameter it derives from: None where it may be more than
        one (loaded, made from an integer, cast, selected between two); absent for values
        that are not pointers. A loop-carried pointer takes its initial value's parameter,
        then is checked against what the body yields."""
        forced: set[int] = set()
        for _ in range(8):
            bases: dict[int, int | None] = {p: i for i, p in enumerate(entry.params)}
            violations: set[int] = set()
            for block in entry.body:
                for arg in block.args:  # a pointer passed to a block: the base all predecessors pass
                    sources = self.incoming.get(arg, [])
                    if any(v in bases for v in sources):
                        found = {bases.get(v, -1) for v in sources}
                        bases[arg] = found.pop() if len(found) == 1 else None
                self._propagate(block.ops, bases, forced, violations)
            if not violations - forced:
                return bases
            forced |= violations
        raise NoProof("the kernel's loop-carried pointers could not be followed")

    def _propagate(self, ops: list[Op], bases: dict[int, int | None], forced: set[int],
                   violations: set[int]) -> None:
        def merge(values: list[int]) -> int | None:
            found = {bases.get(v, -1) for v in values}
            return found.pop() if len(found) == 1 else None

        for op in ops:
            yields = [region[0].ops[-1].operands if region and region[0].ops else [] for region in op.regions]
            if op.name == "scf.for":
                carried = op.header_defs[1:]
                for arg, init in zip(carried, op.operands[3:]):
                    if init in bases:
                        bases[arg] = None if arg in forced else bases[init]
                self._propagate(op.regions[0][0].ops, bases, forced, violations)
                for j, (arg, init) in enumerate(zip(carried, op.operands[3:])):
                    back = yields[0][j] if j < len(yields[0]) else None
                    if init in bases or back in bases:
                        if bases.get(arg, -1) != bases.get(back, -1) or init not in bases:
                            violations.add(arg)
                        bases[op.results[j]] = bases.get(arg)
            elif op.regions:
                for region in op.regions:
                    self._propagate(region[0].ops if region else [], bases, forced, violations)
                if op.name == "scf.if" and len(yields) == 2:
                    for j, result in enumerate(op.results):
                        sources = [y[j] for y in yields if j < len(y)]
                        if any(s in bases for s in sources):
                            bases[result] = merge(sources)
                else:
                    bases.update({r: None for r in op.results if "ptr" in op.text})
            elif (op.name in POINTER_OPS or same_size_pointer_cast(op)) and op.operands and op.operands[0] in bases:
                bases[op.results[0]] = bases[op.operands[0]]
            elif op.name == "arith.select" and (op.operands[1] in bases or op.operands[2] in bases):
                bases[op.results[0]] = merge(op.operands[1:3])
            elif op.name == "tt.join" and (op.operands[0] in bases or op.operands[1] in bases):
                bases[op.results[0]] = merge(op.operands[:2])
            elif op.name == "tt.split" and op.operands[0] in bases:
                bases.update({r: bases[op.operands[0]] for r in op.results})
            elif op.results and "ptr" in op.text:  # a pointer from memory, an integer, a cast, a call
                bases.update({r: None for r in op.results if op.name != "tt.load" or "ptr<!tt.ptr" in op.text})

    def _slice(self) -> tuple[set[int], set[Op]]:
        """The values the stores' addresses, masks and enclosing conditions need, and the
        region ops to evaluate for them."""
        needed: set[int] = set()
        regions: set[Op] = set()
        work: list[int] = []

        def need_region(op: Op) -> None:
            for region_op in [op, *self._enclosing(op)] if op.name in _EVALUATED_REGIONS else self._enclosing(op):
                if region_op not in regions:
                    regions.add(region_op)
                    if region_op.name == "scf.while":  # every carried value decides the iterations
                        work.extend([*region_op.operands, *(o for region in region_op.regions
                                                            for o in region[0].ops[-1].operands)])
                    else:
                        work.extend(region_op.operands[:3] if region_op.name == "scf.for" else region_op.operands[:1])

        for access in self.accesses:
            work.extend(access.operands[:1] + _mask_operand(access))  # the pointer and the mask
            need_region(access)
        for block in self.entry.body:  # which blocks a program runs: the branches' conditions
            if block.ops[-1].name == "cf.cond_br":
                work.append(block.ops[-1].operands[0])
        while work:
            value = work.pop()
            if value in needed:
                continue
            needed.add(value)
            if value in self.defining:
                op, index = self.defining[value]
                need_region(op)
                if op.name == "scf.for":
                    work.append(op.operands[3 + index])
                    work.append(op.regions[0][0].ops[-1].operands[index])
                elif op.name == "scf.if":
                    work.extend(region[0].ops[-1].operands[index] for region in op.regions if region[0].ops)
                elif op.name in EVALUATED_OPS:
                    work.extend(op.operands)
            elif value in self.incoming:
                work.extend(self.incoming[value])
            elif value in self.block_arg:
                op, index = self.block_arg[value]
                need_region(op)
                if op.name == "scf.for" and index > 0:
                    work.append(op.operands[3 + index - 1])
                    work.append(op.regions[0][0].ops[-1].operands[index - 1])
        return needed, regions


def _mask_operand(op: Op) -> list[int]:
    """[the mask] of a tt.store (pointer, value, mask) or tt.load (pointer, mask, other); [] without one."""
    return op.operands[2:3] if op.name == "tt.store" else op.operands[1:2]


class _Evaluator:
    """Evaluates a _Program over chunks of programs, marking the output's stored elements."""

    def __init__(self, program: _Program, written: np.ndarray, grid: tuple[int, ...], tracked: bool = False,
                 rows: RowAccesses | None = None) -> None:
        self.program, self.written = program, written
        self.rows = rows  # evaluating by rows: the accesses are recorded there, not marked
        # With a followed read (_Program.read): per element of the span, the program that
        # stores it and the one that loads it, as its linear id + 1 (0: none yet; the dtype's
        # largest value: several). Two span-sized arrays, so in the narrowest unsigned type
        # every id fits (uint8 for Liger's 132-program grids: an eighth of int64's memory
        # traffic), and zeroed (calloc'd pages) rather than filled.
        self.id_type = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64)
                            if math.prod(grid) + 1 < np.iinfo(t).max)
        self.several = np.iinfo(self.id_type).max
        self.owner = np.zeros(written.shape, dtype=self.id_type) if tracked else None
        self.loader = np.zeros(written.shape, dtype=self.id_type) if tracked else None
        self.grid = tuple(grid) + (1,) * (3 - len(grid))
        self.work = 0
        self.accesses = 0  # elements accessed, each time
        self.loads = 0  # elements loaded through the followed read argument, each time
        self.live: Any = UNKNOWN  # the programs that run the op being evaluated
        self.needed_ops: dict[Op, bool] = {}

    def run(self, params: dict[int, Any], programs: np.ndarray) -> None:
        self.env: dict[int, Any] = dict(params)
        g0, g1, _ = self.grid
        self.program_ids = (programs % g0, (programs // g0) % g1, programs // (g0 * g1))
        self.tracked_ids = (programs + 1).astype(self.id_type)  # as owner / loader hold them
        self.count = programs.size
        self._blocks(self.program.entry.body)

    def _blocks(self, blocks: list[Block]) -> None:
        """The top-level blocks in order (every edge goes forward), each run for the programs
        that reach it: `reaching[i]` is the mask of programs that branch to block i, and a
        block argument is, per program, the value its own predecessor passed."""
        reaching: dict[int, Any] = {0: np.ones((1,), dtype=bool)}
        passed: dict[int, list[tuple[Any, list[Any]]]] = {}  # per block: (edge's mask, values) per edge taken
        for i, block in enumerate(blocks):
            active = reaching.get(i)
            if active is None or (active is not UNKNOWN and not active.any()):
                continue  # no program runs it: nothing it defines is used where one does
            for j, arg in enumerate(block.args):
                if arg in self.program.needed:
                    edges = passed[i]
                    value = edges[0][1][j]
                    for mask, values in edges[1:]:
                        value = self._select(mask, values[j], value)
                    self.env[arg] = value
            self._block(block.ops, active)
            last = block.ops[-1]
            masks = [active]
            if last.name == "cf.cond_br":
                condition = self.env.get(last.operands[0], UNKNOWN)
                if condition is UNKNOWN or active is UNKNOWN:
                    masks = [UNKNOWN, UNKNOWN]
                else:
                    condition = condition.astype(bool, copy=False)
                    masks = [active & condition, active & ~condition]
            for mask, (target, values) in zip(masks, self.program.branches[i]):
                if mask is not UNKNOWN and not mask.any():
                    continue  # an edge no program takes
                before = reaching.get(target)
                reaching[target] = mask if before is None else \
                    UNKNOWN if mask is UNKNOWN or before is UNKNOWN else before | mask
                passed.setdefault(target, []).append((mask, [self.env.get(v, UNKNOWN) for v in values]))

    def _needed(self, op: Op) -> bool:
        """Whether a later op uses one of `op`'s results (asked once per op: loops ask again)."""
        needed = self.needed_ops.get(op)
        if needed is None:
            needed = self.needed_ops[op] = any(r in self.program.needed for r in op.results)
        return needed

    def _charge(self, value: Any, size: int = 0) -> Any:
        """`value`, its elements (or `size`) counted in the work done; NoProof past the cap."""
        array = value.offsets if isinstance(value, Pointer) else value
        if isinstance(array, np.ndarray):  # a broadcast view costs what it holds, not its shape
            size = math.prod(d for d, stride in zip(array.shape, array.strides) if stride)
        self.work += max(size, _OP_COST)
        if self.work > _WORK_LIMIT:
            raise NoProof("checking that the kernel stores every element would take too long at this size")
        return value

    def _block(self, ops: list[Op], active: Any) -> None:
        program = self.program
        for op in ops:
            if op in program.accesses:
                self._mark(op, active)
            if op.name == "tt.store":
                continue
            elif op.name == "scf.for":
                if op in program.regions:
                    self._for(op, active)
            elif op.name == "scf.if":
                if op in program.regions:
                    self._if(op, active)
            elif op.name == "scf.while":
                if op in program.regions:
                    self._while(op, active)
            elif self._needed(op):
                self.live = active  # a fault only other programs would hit is none (see where_live)
                operands = [self.env.get(o, UNKNOWN) for o in op.operands]
                if self.rows is not None and needs_rows(operands):
                    values = separable_op(op, operands)
                else:
                    if self.rows is not None:
                        check_size(op, operands)
                    values = evaluate(op, operands, self)
                for result, value in zip(op.results, values):
                    self.env[result] = self._charge(value)

    def _mark(self, op: Op, active: Any) -> None:
        pointer = self.env.get(op.operands[0], UNKNOWN)
        mask = self.env.get(_mask_operand(op)[0], UNKNOWN) if _mask_operand(op) else None
        if not isinstance(pointer, Pointer) or pointer.offsets is UNKNOWN or mask is UNKNOWN or \
                active is UNKNOWN:
            raise NoProof(f"a {op.name.removeprefix('tt.')} of {self.program.role} has an address, mask or condition computed "
                          "from values the proof does not follow (loads, floats, calls)", op)
        if self.rows is not None:
            self._charge(None, self.rows.record(op, pointer.offsets, mask, active, self.count))
            return
        offsets = pointer.offsets
        shape = (self.count, *offsets.shape[1:])
        chosen = np.broadcast_to(active.reshape(active.shape + (1,) * (offsets.ndim - 1)), shape)
        if mask is not None:
            chosen = chosen & np.broadcast_to(mask.astype(bool, copy=False), shape)
        stored = np.broadcast_to(offsets, shape)[chosen]
        self._charge(stored)
        if stored.size and (stored.min() < 0 or stored.max() >= self.written.size):
            raise NoProof(f"a {op.name.removeprefix('tt.')} may fall outside {self.program.role}", op)
        ids = None
        if self.owner is not None:
            ids = np.broadcast_to(self.tracked_ids.reshape((-1,) + (1,) * (offsets.ndim - 1)), shape)[chosen]
        self._record(op, stored, ids)

    def _record(self, op: Op, stored: np.ndarray, ids: np.ndarray | None) -> None:
        """An access of the `stored` elements (rows, replaying an evaluation by rows), by the
        programs `ids` where the read argument is followed."""
        if ids is not None and self._track(op, stored, ids):
            self.loads += stored.size
            return  # a load through the read argument: nothing stored
        self.written[stored] = True
        self.accesses += stored.size

    def _select(self, condition: Any, one: Any, two: Any) -> Any:
        return select(condition, one, two) if self.rows is None else select_rows(condition, one, two)

    def _track(self, op: Op, elements: np.ndarray, ids: np.ndarray) -> bool:
        """Records which program stores / loads each element (ops run in program order, all
        programs of a chunk in step); True for a load. NoProof where a load follows a store to
        the element, or two programs store it."""
        if op.name == "tt.load":
            if self.written[elements].any():
                raise NoProof(f"the kernel loads {int(self.written[elements].sum())} elements through the argument "
                              "it reads after storing to them", op)
            before = self.loader[elements]
            self.loader[elements] = ids
            several = ((before != 0) & (before != ids)) | (self.loader[elements] != ids)
            self.loader[elements[several]] = self.several
            return True
        before = self.owner[elements]
        self.owner[elements] = ids
        if (((before != 0) & (before != ids)) | (self.owner[elements] != ids)).any():
            raise NoProof("two programs store the same element", op)
        return False

    def _for(self, op: Op, active: Any) -> None:
        lower, upper, step = (self.env.get(o, UNKNOWN) for o in op.operands[:3])
        body = op.regions[0][0]
        if any(v is UNKNOWN for v in (lower, upper, step, active)) or "unsigned" in op.text:
            raise NoProof("a loop has bounds the proof does not follow", op)
        if where_live(step <= 0, active).any():
            raise NoProof("a loop has a step that is not positive", op)
        step = np.where(step <= 0, 1, step)
        trips = np.where(active, np.maximum(0, -(-(upper - lower) // step)), 0)
        carried = [self.env.get(o, UNKNOWN) for o in op.operands[3:]]
        for k in range(int(trips.max()) if trips.size else 0):
            running = active & (trips > k)
            self.env[op.header_defs[0]] = self._charge(lower + k * step)
            for arg, value in zip(op.header_defs[1:], carried):
                self.env[arg] = value
            self._block(body.ops, running)
            yielded = [self.env.get(o, UNKNOWN) for o in body.ops[-1].operands]
            carried = [self._select(running, new, old) for new, old in zip(yielded, carried)]
        for result, value in zip(op.results, carried):
            self.env[result] = value

    def _while(self, op: Op, active: Any) -> None:
        """Iterates while any program's condition holds; each program's results are the
        values scf.condition forwarded when its own condition failed."""
        before, after = (region[0] for region in op.regions)
        carried = [self.env.get(o, UNKNOWN) for o in op.operands]
        running, results = active, None
        while True:
            self._charge(None)  # an iteration costs at least an op, however little it computes
            for arg, value in zip(before.args, carried):
                self.env[arg] = value
            self._block(before.ops, running)
            condition, *forwarded = (self.env.get(o, UNKNOWN) for o in before.ops[-1].operands)
            if condition is UNKNOWN or running is UNKNOWN:
                raise NoProof("a while loop has a condition the proof does not follow", op)
            condition = condition.astype(bool, copy=False)
            stopping = running & ~condition
            results = forwarded if results is None else \
                [self._select(stopping, new, old) for new, old in zip(forwarded, results)]
            running = running & condition
            if not running.any():
                break
            for arg, value in zip(after.args, forwarded):
                self.env[arg] = value
            self._block(after.ops, running)
            yielded = [self.env.get(o, UNKNOWN) for o in after.ops[-1].operands]
            carried = [self._select(running, new, old) for new, old in zip(yielded, forwarded)]
        for result, value in zip(op.results, results):
            self.env[result] = value

    def _if(self, op: Op, active: Any) -> None:
        condition = self.env.get(op.operands[0], UNKNOWN)
        if condition is UNKNOWN or active is UNKNOWN:
            branch_active = (UNKNOWN, UNKNOWN)
        else:
            condition = condition.astype(bool, copy=False)
            branch_active = (active & condition, active & ~condition)
        yields = []
        for region, running in zip(op.regions, branch_active):
            self._block(region[0].ops, running)
            last = region[0].ops[-1] if region[0].ops else None
            yields.append([self.env.get(o, UNKNOWN) for o in last.operands] if last else [])
        for j, result in enumerate(op.results):
            if condition is UNKNOWN or len(yields) < 2:
                self.env[result] = UNKNOWN
            else:
                self.env[result] = self._select(condition, yields[0][j], yields[1][j])
