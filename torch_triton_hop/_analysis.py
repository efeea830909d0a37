"""Which tensor arguments a kernel reads and writes, from its TTIR.

Functionalization clones what a kernel writes: a wrong "not written" loses data, a
wrong "written" costs a copy. So: exact where the TTIR says, and every time the
analysis cannot decide, every tensor argument is treated as written, with one
warning per kernel saying why.

# [Note: Reachability by bitmask]
# TL;DR: each SSA value carries a bitmask of the function parameters its pointer may
# derive from; masks flow forward along def-use edges to a fixpoint, then a store's
# pointer operand names what it writes. Time is O(edges x params / word size): linear
# in TTIR size for any fixed kernel signature, and shared sub-DAGs are visited once.
# Context: torch walks back from every store separately and went exponential on
# kernels that reuse values (pytorch#193703: 59 minutes for one kernel).
#   %x = tt.splat %x_ptr          mask(%x)   = {x_ptr}
#   %p = tt.addptr %x, %offs      mask(%p)   = {x_ptr} | mask(%offs)
#   tt.store %p, %v               writes       {x_ptr}
# Loads end a chain (a loaded value is data, not a pointer we know); a pointer loaded
# from memory and then written through is "unknown", which falls back.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import re
import threading
from typing import Any

import torch

from . import _compat
from ._side_table import DERIVED_KERNEL_MODULE, base_kernel, kernel_side_table, module_constants, unwrap_user_object
from ._ttir import Function, Op, parse_module, resolve_location, walk

log = logging.getLogger(__name__)

__all__ = ["TensorAccesses", "identify_accessed_tensors", "identify_mutated_tensors", "explain"]

# Ops that write memory through operand 0 (TritonOps.td: the MemWrite ops), and read it.
WRITE_OPS = {
    "tt.store", "tt.atomic_store", "tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_store", "tt.descriptor_reduce",
    "tt.descriptor_scatter", "tt.experimental_descriptor_store", "tt.experimental_tensormap_create",
}
_READ_OPS = {
    "tt.load", "tt.atomic_load", "tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_load", "tt.descriptor_gather",
    "tt.descriptor_reduce", "tt.experimental_descriptor_load",
}
# Ops whose results follow only their base pointer (operand 0); the rest is shape/offset data.
_BASE_POINTER_OPS = {"tt.make_tensor_ptr", "tt.advance", "tt.make_tensor_descriptor",
                     "tt.reinterpret_tensor_descriptor"}
_MEMORY_WORDS = ("store", "atomic", "scatter", "tensormap", "memcpy", "copy")


# Pointers that come from no argument, as bits above the parameters' bits.
_LOADED = 1    # loaded from memory (a pointer table)
_FROM_INT = 2  # made from an integer (tt.int_to_ptr), e.g. an address loaded as int64
_ORIGIN_TEXT = {
    _LOADED: "a pointer loaded from memory",
    _FROM_INT: "a pointer made from an integer (tt.int_to_ptr)",
}


class AnalysisFallback(Exception):
    """The analysis cannot decide; the message says why."""


class OtherMemoryWritten(AnalysisFallback):
    """The kernel stores through a pointer no argument gives (made from an integer, loaded from
    memory): what it writes may be memory that is none of its arguments."""


@dataclasses.dataclass(frozen=True)
class TensorAccesses:
    """Tensor arguments a kernel may read and may write, by name, in parameter order.

    ``write_sites`` maps each written argument to the source lines ("file:line") of the
    ops that write it. ``fallback_reason`` is set when the analysis could not decide and
    every tensor argument is reported as read and written.
    """

    reads: list[str]
    writes: list[str]
    write_sites: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    fallback_reason: str | None = None
    # Per argument, the TTIR ops that write / read it (e.g. ["tt.store"]), also through calls;
    # empty where the analysis fell back or writes were declared.
    write_ops: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    read_ops: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    # The kernel reduces or scans (tt.reduce / tt.scan, also in called functions): the order
    # in which it combines values follows the layout triton gives them, so a recompiled
    # kernel whose memory accesses differ may sum in another order (see _fusion). True
    # where the analysis fell back or writes were declared.
    reduces: bool = True
    # The writes were declared (wrap_triton(kernel, writes=[...])), not found.
    declared: bool = False
    # The kernel stores through a pointer no argument gives (grouped GEMM's table of
    # addresses): it may write memory that is none of its arguments. False where writes were
    # declared: the user says what it writes.
    other_memory_written: bool = False
    # The loads through such a pointer ("a load through ... at file:line"): the kernel may read
    # memory that is none of its arguments. Empty where writes were declared.
    other_memory_read: list[str] = dataclasses.field(default_factory=list)
    # Source lines where the kernel adds the quotient of an fp32 (or narrower) division
    # (see [Note: Divisions that ptxas may fuse into an add]).
    approximate_sums: list[str] = dataclasses.field(default_factory=list)
    # Source lines where the kernel rounds to float16 an add, subtract, multiply or division
    # of bfloat16 values (see [Note: Float16 roundings of bfloat16 arithmetic]).
    mixed_half_roundings: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class _Summary:
    writes: dict[int, list[str]]      # parameter index -> write sites
    reads: set[int]
    returns: list[int]                # per returned value, mask of parameters it derives from
    write_ops: dict[int, set[str]] = dataclasses.field(default_factory=dict)  # parameter index -> ops
    read_ops: dict[int, set[str]] = dataclasses.field(default_factory=dict)
    return_origins: list[int] = dataclasses.field(default_factory=list)  # per returned value, _LOADED | _FROM_INT
    other_memory_reads: list[str] = dataclasses.field(default_factory=list)  # loads through such a pointer


class _FunctionAnalysis:
    """Summaries of the functions of one TTIR module, computed once each, callees first."""

    def __init__(self, functions: dict[str, Function], aliases: dict[str, str]) -> None:
        self.functions = functions
        self.aliases = aliases
        self.summaries: dict[str, _Summary | None] = {}

    def summary(self, name: str) -> _Summary:
        if name in self.summaries:
            result = self.summaries[name]
            if result is None:
                raise AnalysisFallback(f"recursive call of {name}")
            return result
        if name not in self.functions:
            raise AnalysisFallback(f"call of {name}, which the module does not define")
        self.summaries[name] = None
        result = self._summarize(self.functions[name])
        self.summaries[name] = result
        return result

    def where(self, op: Op) -> str:
        return resolve_location(op.loc, self.aliases) or "<unknown location>"

    def _summarize(self, function: Function) -> _Summary:
        params = function.params
        unknown_bit = 1 << len(params)          # _LOADED
        from_int_bit = 1 << (len(params) + 1)  # _FROM_INT
        origin_bits = {_LOADED: unknown_bit, _FROM_INT: from_int_bit}

        def origin_of(mask: int) -> str | None:
            for origin, bit in origin_bits.items():
                if mask & bit:
                    return _ORIGIN_TEXT[origin]
            return None
        deps: dict[int, list[int]] = {}   # value -> values its pointer may derive from
        fixed: dict[int, int] = {p: 1 << i for i, p in enumerate(params)}
        write_roots: list[tuple[int, str, str]] = []
        read_roots: list[tuple[int, str, str]] = []
        call_effects: list[tuple[Op, _Summary]] = []
        returns: list[list[int]] = []

        def add(values: list[int], sources: list[int]) -> None:
            for value in values:
                deps.setdefault(value, []).extend(sources)

        for op in walk(function.body):
            name = op.name
            if name in WRITE_OPS and op.operands:
                write_roots.append((op.operands[0], self.where(op), name))
            if name in _READ_OPS and op.operands:
                read_roots.append((op.operands[0], name, self.where(op)))
            if name == "tt.elementwise_inline_asm" and "pure = true" not in op.text:
                raise AnalysisFallback(f"impure inline assembly at {self.where(op)}")
            if name not in WRITE_OPS and name not in _READ_OPS and name.startswith("tt.") and any(
                word in name for word in _MEMORY_WORDS
            ):
                raise AnalysisFallback(f"{name} at {self.where(op)}, an op this analysis does not know")

            if name in _READ_OPS:
                if "!tt.ptr<!tt.ptr" in op.text:  # a pointer loaded from memory
                    for r in op.results:
                        fixed[r] = unknown_bit
                continue  # loaded data is not a pointer we can follow
            if name == "tt.int_to_ptr":
                for r in op.results:
                    fixed[r] = from_int_bit
                continue
            if name in _BASE_POINTER_OPS:
                add(op.results, op.operands[:1])
            elif name == "tt.call":
                callee = self.summary(op.callee)
                call_effects.append((op, callee))
                for k, (result, mask) in enumerate(zip(op.results, callee.returns)):
                    add([result], [v for i, v in enumerate(op.operands) if mask >> i & 1])
                    origins = callee.return_origins[k] if k < len(callee.return_origins) else 0
                    for origin, bit in origin_bits.items():
                        if origins & origin:
                            fixed[result] = fixed.get(result, 0) | bit
            elif name == "tt.return":
                returns.append(op.operands)
            elif op.regions:
                self._wire_regions(op, add)
            else:
                add(op.results, op.operands)

        # Unstructured branches (cf.br / cf.cond_br, e.g. from an early return) pass values
        # to later blocks' arguments; wire every such argument to every branch operand:
        # an over-approximation, never a missed write.
        branch_operands = [v for op in walk(function.body) if op.name.startswith("cf.") for v in op.operands]
        if branch_operands:
            for block in _non_entry_blocks(function):
                add(block.args, branch_operands)
        masks = _propagate(deps, fixed)
        writes: dict[int, list[str]] = {}
        write_ops: dict[int, set[str]] = {}
        read_ops: dict[int, set[str]] = {}
        for value, site, op_name in write_roots:
            mask = masks.get(value, 0)
            origin = origin_of(mask)
            if origin:
                raise OtherMemoryWritten(f"a store through {origin} at {site}: the kernel may write memory that is "
                                         "none of its arguments")
            for i in _bits(mask, len(params)):
                writes.setdefault(i, []).append(site)
                write_ops.setdefault(i, set()).add(op_name)
        other_memory_reads: list[str] = []
        for value, op_name, site in read_roots:
            mask = masks.get(value, 0)
            if origin := origin_of(mask):
                other_memory_reads.append(f"a load through {origin} at {site}")
            for i in _bits(mask, len(params)):
                read_ops.setdefault(i, set()).add(op_name)
        reads = set(read_ops)
        for op, callee in call_effects:
            call_site = self.where(op)
            for i, sites in callee.writes.items():
                mask = masks.get(op.operands[i], 0) if i < len(op.operands) else 0
                origin = origin_of(mask)
                if origin:
                    raise OtherMemoryWritten(f"{origin} is written by a call at {call_site}: the kernel may write "
                                             "memory that is none of its arguments")
                for j in _bits(mask, len(params)):
                    writes.setdefault(j, []).extend(f"{s} (called at {call_site})" for s in sites)
                    write_ops.setdefault(j, set()).update(callee.write_ops.get(i, ()))
            other_memory_reads.extend(f"{read} (called at {call_site})" for read in callee.other_memory_reads)
            for i in callee.reads:
                if i < len(op.operands):
                    mask = masks.get(op.operands[i], 0)
                    if origin := origin_of(mask):
                        other_memory_reads.append(f"a load through {origin} by a call at {call_site}")
                    for j in _bits(mask, len(params)):
                        reads.add(j)
                        read_ops.setdefault(j, set()).update(callee.read_ops.get(i, ()))
        result_masks = [0] * max((len(r) for r in returns), default=0)
        result_origins = [0] * len(result_masks)
        for operands in returns:
            for k, value in enumerate(operands):
                mask = masks.get(value, 0)
                result_masks[k] |= mask & (unknown_bit - 1)
                result_origins[k] |= sum(origin for origin, bit in origin_bits.items() if mask & bit)
        return _Summary(writes=writes, reads=reads, returns=result_masks, return_origins=result_origins,
                        write_ops=write_ops, read_ops=read_ops, other_memory_reads=other_memory_reads)

    @staticmethod
    def _wire_regions(op: Op, add: Any) -> None:
        """Block arguments and results of a region op, from its operands and terminators."""
        regions = op.regions
        terminators = [block.ops[-1].operands if block.ops else [] for region in regions for block in region]
        if op.name == "scf.for":
            body = regions[0][0]
            add(body.args[:1], op.operands[:3])
            yields = terminators[0] if terminators else []
            for j, arg in enumerate(body.args[1:]):
                add([arg], op.operands[3 + j : 4 + j] + yields[j : j + 1])  # init, then the back edge
            for j, result in enumerate(op.results):
                add([result], op.operands[3 + j : 4 + j] + yields[j : j + 1])
        elif op.name == "scf.while":
            before, after = regions[0][0], regions[1][0]
            condition = regions[0][-1].ops[-1].operands[1:] if regions[0][-1].ops else []
            yields = regions[1][-1].ops[-1].operands if regions[1][-1].ops else []
            for j, arg in enumerate(before.args):
                add([arg], op.operands[j : j + 1] + yields[j : j + 1])
            for k, arg in enumerate(after.args):
                add([arg], condition[k : k + 1])
            for k, result in enumerate(op.results):
                add([result], condition[k : k + 1])
        elif op.name in ("tt.reduce", "tt.scan"):
            n = len(op.operands) or 1
            for region in regions:
                for block in region:
                    for i, arg in enumerate(block.args):
                        add([arg], op.operands[i % n : i % n + 1])
            for k, result in enumerate(op.results):
                add([result], [t[k] for t in terminators if k < len(t)])
        else:  # scf.if and anything else: results from every terminator, positionally
            for region in regions:
                for block in region:
                    add(block.args, op.operands)
            for k, result in enumerate(op.results):
                sources = [t[k] for t in terminators if k < len(t)]
                add([result], sources if op.name == "scf.if" else sources + op.operands)


def _non_entry_blocks(function: Function) -> list[Any]:
    blocks = list(function.body[1:])
    for op in walk(function.body):
        for region in op.regions:
            blocks.extend(region[1:])
    return blocks


def _propagate(deps: dict[int, list[int]], fixed: dict[int, int]) -> dict[int, int]:
    """Masks to a fixpoint: mask(v) = fixed(v) | OR of mask(d) for d in deps(v)."""
    users: dict[int, list[int]] = {}
    for value, sources in deps.items():
        for source in sources:
            users.setdefault(source, []).append(value)
    masks = dict(fixed)
    work = list(fixed)
    while work:
        source = work.pop()
        mask = masks[source]
        for user in users.get(source, ()):
            old = masks.get(user, 0)
            if mask & ~old:
                masks[user] = old | mask
                work.append(user)
    return masks


def _bits(mask: int, limit: int) -> list[int]:
    return [i for i in range(limit) if mask >> i & 1]


# --- kernel level ----------------------------------------------------------------------

def complete_arguments(kernel: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Every parameter's value: autotune config 0, heuristics and defaults fill what the call leaves out."""
    args = dict(kwargs)
    layer = unwrap_user_object(kernel)
    while not _compat.is_base_kernel(layer):
        if isinstance(layer, _compat.Autotuner) and layer.configs:
            for name, value in layer.configs[0].all_kwargs().items():
                args.setdefault(name, value)
        elif isinstance(layer, _compat.Heuristics):
            for name, fn in layer.values.items():
                if name not in args:
                    args[name] = fn(args)
        layer = layer.fn
    for name, parameter in inspect.signature(_compat.python_function(layer)).parameters.items():
        if name not in args and parameter.default is not inspect.Parameter.empty:
            args[name] = parameter.default
    return args


def ttir_argument_names(base: Any, args: dict[str, Any], folded: set[tuple[int, ...]]) -> list[str | None]:
    """Kernel parameter name for each TTIR entry-function parameter, in order.

    Parameters triton folded into constants (index paths in `folded`) have none; a host
    TensorDescriptor becomes itself plus one shape and one stride per dimension; a tuple
    argument becomes one TTIR parameter per leaf, in order, each named by the tuple's
    parameter (triton 3.6-3.9).
    """
    names: list[str | None] = []

    def add(name: str, path: tuple[int, ...], value: Any, is_constexpr: bool) -> None:
        if path in folded or is_constexpr or value is None:
            return
        if isinstance(value, tuple):
            for index, item in enumerate(value):
                add(name, (*path, index), item, False)
        elif isinstance(value, list) and _is_tensor_argument(value):
            raise AnalysisFallback(f"argument {name} is a list holding tensors")  # triton takes tuples
        elif _compat.is_host_tensor_descriptor(value):
            if len(path) > 1:  # how triton flattens one inside a tuple is not followed here
                raise AnalysisFallback(f"argument {name} is a tuple holding a TensorDescriptor")
            names.extend([name] + [None] * (2 * len(value.block_shape)))
        else:
            names.append(name)

    for index, param in enumerate(_compat.kernel_params(base)):
        add(param.name, (index,), args.get(param.name), param.is_constexpr)
    return names


def entry_function(functions: dict[str, Function], base: Any) -> Function:
    """The kernel's own function in its TTIR module (the others are functions it calls)."""
    entry_name = _compat.python_function(base).__name__
    entries = [f for f in functions.values() if f.name == entry_name or f.name.endswith("." + entry_name)]
    entries = entries or list(functions.values())[:1]
    if not entries:
        raise AnalysisFallback("the TTIR module has no function")
    return entries[0]


def _is_tensor_argument(value: Any) -> bool:
    """A tensor, a host TensorDescriptor, or a tuple holding one (reported by the tuple's name)."""
    if isinstance(value, (tuple, list)):
        return any(_is_tensor_argument(v) for v in value)
    return isinstance(value, torch.Tensor) or _compat.is_host_tensor_descriptor(value)


def _specialization_key(base: Any, args: dict[str, Any]) -> tuple:
    """What the TTIR depends on besides the source: dtypes, constexprs, ints equal to 1."""
    return tuple(_value_key(args.get(param.name), param.is_constexpr) for param in _compat.kernel_params(base))


def _value_key(value: Any, is_constexpr: bool = False) -> tuple:
    if isinstance(value, torch.Tensor):
        return ("tensor", value.dtype)
    if _compat.is_host_tensor_descriptor(value):
        return ("descriptor", value.base.dtype, tuple(value.block_shape))
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return ("symbolic", type(value).__name__)
    if isinstance(value, tuple) and not is_constexpr:  # each leaf specialises as a parameter does
        return ("tuple", tuple(_value_key(item) for item in value))
    if is_constexpr or value is None or isinstance(value, bool):
        return ("value", repr(value))
    if isinstance(value, int):
        return ("int", value == 1, value % 16 == 0, -(2**31) <= value < 2**31)
    return ("other", type(value).__name__)


def _analyse(base: Any, args: dict[str, Any]) -> tuple[dict[str, list[str]], set[str], dict[str, Any]]:
    text, folded = _compat.generate_ttir_text(base, args)
    log.debug("TTIR of %s:\n%s", base, text)
    functions, aliases = parse_module(text)
    entry = entry_function(functions, base)
    names = ttir_argument_names(base, args, folded)
    if len(names) != len(entry.params):
        raise AnalysisFallback(
            f"the kernel's TTIR has {len(entry.params)} parameters where {len(names)} were expected"
        )
    summary = _FunctionAnalysis(functions, aliases).summary(entry.name)
    # By parameter name: a tuple's leaves are reported together, by the tuple's name.
    writes: dict[str, list[str]] = {}
    for i, sites in summary.writes.items():
        if names[i] is not None:
            writes.setdefault(names[i], []).extend(sites)
    reads = {names[i] for i in summary.reads if names[i] is not None}
    ops = {}
    for kind, by_param in (("write", summary.write_ops), ("read", summary.read_ops)):
        found_by_name: dict[str, set] = {}
        for i, found in by_param.items():
            if names[i] is not None:
                found_by_name.setdefault(names[i], set()).update(found)
        ops[kind] = {name: sorted(found) for name, found in found_by_name.items()}
    ops["reduces"] = _REDUCTION.search(text) is not None
    ops["other_memory_read"] = list(dict.fromkeys(summary.other_memory_reads))
    ops["approximate_sums"] = _approximate_divisions_added(functions, aliases)
    ops["mixed_half_roundings"] = _mixed_half_roundings(functions, aliases)
    return writes, reads, ops


_REDUCTION = re.compile(r'"?\btt\.(reduce|scan)"?\(')
# Ops that pass a value on unchanged in each element (a multiply in PTX stays the value).
_SAME_VALUES = {"tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans", "tt.view"}
_ADDING = {"arith.addf", "arith.subf", "tt.reduce", "tt.scan", "tt.call"}


def _forward_through(ops: list[Op], start: dict[int, Op], passing: set[str]) -> dict[int, Op]:
    """`start` (value -> the op it comes from) and every value an op of `passing` makes from
    one of them, to a fixpoint."""
    reached = dict(start)
    grew = True
    while grew:
        grew = False
        for op in ops:
            if op.name in passing:
                source = next((reached[o] for o in op.operands if o in reached), None)
                if source is not None:
                    for result in op.results:
                        if result not in reached:
                            reached[result], grew = source, True
    return reached


def _approximate_divisions_added(functions: dict[str, Function], aliases: dict[str, str]) -> list[str]:
    """Source lines of each fp32 (or narrower) division whose quotient is added to or from
    something (an add, a subtract, a reduction or scan, or a call that may do either).
    See [Note: Divisions that ptxas may fuse into an add]."""
    found = set()
    for function in functions.values():
        ops = list(walk(function.body))
        quotients = _forward_through(ops, {result: op for op in ops if op.name == "arith.divf"
                                           and "f64" not in op.text.rsplit(":", 1)[-1] for result in op.results},
                                     _SAME_VALUES)  # the quotient through splats, broadcasts and reshapes
        for op in ops:
            if op.name in _ADDING and any(o in quotients for o in op.operands):
                division = next(quotients[o] for o in op.operands if o in quotients)
                found.add(resolve_location(division.loc, aliases) or "?")
    return sorted(str(f) for f in found)


# [Note: Float16 roundings of bfloat16 arithmetic]
# TL;DR: LLVM (triton 3.6-3.9) rewrites fptrunc-to-half(fop(fpext a, fpext b)) as the op in
# half precision on the operands truncated to half, where a and b are bfloat16 or half
# values: its check compares mantissa widths only, so a bfloat16 operand outside half's
# range (or in half's subnormals) is rounded before the op. Whether it does so depends on
# how the operands reach the op (a select between the fpext and the op stops it), so a
# fused kernel whose prologue feeds such an op may compute otherwise than the kernel.
# Found by the fusion fuzzer (seed 15 #4772, H200, triton 3.6): `(x.to(f32) *
# c.to(f32)).to(f16)` with x fp16 = inf and c bf16 = 1e-30 is NaN in the kernel (PTX: c
# converted to half, mul.f16) and inf in the fused kernel, whose c came through a select.
# Kernels with such a rounding are not fused on a GPU (_fusion); the interpreter computes
# in numpy and is unaffected.
_NARROW_FLOAT_OPS = {"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf"}
_PASS_VALUES = _SAME_VALUES | {"ttg.convert_layout", "arith.select"}


def _mixed_half_roundings(functions: dict[str, Function], aliases: dict[str, str]) -> list[str]:
    """Source lines of each rounding to float16 (arith.truncf) of an add, subtract, multiply,
    division or remainder with a bfloat16 operand (arith.extf from bf16, through splats,
    broadcasts, reshapes, layout conversions and selects)."""
    found = set()
    for function in functions.values():
        ops = list(walk(function.body))
        types = {op: op.text.rsplit(":", 1)[-1] for op in ops}
        from_bf16 = _forward_through(ops, {r: op for op in ops if op.name == "arith.extf"
                                           and "bf16" in types[op].split(" to ")[0] for r in op.results}, _PASS_VALUES)
        # results of float ops on a bfloat16 operand, passed on
        mixed = _forward_through(ops, {r: op for op in ops if op.name in _NARROW_FLOAT_OPS
                                       and any(o in from_bf16 for o in op.operands) for r in op.results}, _PASS_VALUES)
        for op in ops:
            if op.name == "arith.truncf" and re.search(r"(^|[x\s])f16>?\s*$", types[op].split(" to ")[-1]) \
                    and any(o in mixed for o in op.operands):
                found.add(resolve_location(op.loc, aliases) or "?")
    return sorted(str(f) for f in found)


class _Cache:
    """Analysis results by (kernel key, specialisation); a second analysis is a lookup."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.results: dict[tuple, tuple[dict[str, list[str]], set[str], str | None, dict[str, Any]]] = {}
        self.warned: set[str] = set()


_cache = _Cache()


def identify_accessed_tensors(kernel: Any, kwargs: dict[str, Any]) -> TensorAccesses:
    """The tensor arguments `kernel` may read and may write, given its call arguments.

    Works without a GPU driver (TTIR is generated for an explicit target), on JIT and
    interpreted kernels, under autotune (first config) and heuristics. Scalars are never
    reported. If the analysis cannot decide it logs one warning per kernel and reports
    every tensor argument as read and written.

    Args:
        kernel: a ``@triton.jit`` kernel (optionally autotuned / under heuristics) or a
            :func:`wrap_triton` wrapper; a wrapper's declared ``writes=`` skips the analysis.
        kwargs: every argument of the launch by parameter name (tensors, scalars, constexprs).

    Returns:
        ``TensorAccesses``: ``.reads`` and ``.writes`` (names, parameter order),
        ``.write_sites`` (each written name's source lines), ``.fallback_reason``
        (``None`` unless the analysis fell back) and ``.reduces`` (the kernel reduces or
        scans; ``True`` where the analysis fell back).

    Example (``add_one`` from :func:`wrap_triton`'s example)::

        >>> from torch_triton_hop import identify_accessed_tensors
        >>> x = torch.zeros(8)
        >>> acc = identify_accessed_tensors(add_one, {"x_ptr": x, "out_ptr": torch.empty_like(x),
        ...                                           "n": 8, "BLOCK": 16})
        >>> acc.reads, acc.writes
        (['x_ptr'], ['out_ptr'])
    """
    user_object = kernel
    kernel = unwrap_user_object(kernel)
    base = base_kernel(kernel)
    order = [p.name for p in _compat.kernel_params(base)]
    tensors = [name for name in order if _is_tensor_argument(kwargs.get(name))]
    declared = getattr(user_object, "writes", None)
    if declared is not None:
        writes = [name for name in tensors if name in declared]
        return TensorAccesses(reads=tensors, writes=writes, fallback_reason="declared with wrap_triton(writes=...)",
                              declared=True)
    args = complete_arguments(kernel, kwargs)
    # Module constants the kernel reads decide what it writes as its constexpr arguments do.
    # See [Note: Module constants of a kernel].
    # Keyed (and entered in the side table) as the user's object, as a capture enters it.
    cache_key = (kernel_side_table.add_kernel(user_object), _specialization_key(base, args), module_constants(base))
    cached = _cache.results.get(cache_key)
    if cached is None:
        try:
            writes, reads, ops = _analyse(base, args)
            cached = (writes, reads, None, ops)
        except Exception as e:  # any failure: the safe answer, with the reason
            reason = str(e) if isinstance(e, AnalysisFallback) else f"{type(e).__name__}: {e}"
            cached = ({name: [] for name in tensors}, set(tensors), reason,
                      {"write": {}, "read": {}, "other_memory_written": isinstance(e, OtherMemoryWritten)})
            with _cache.lock:
                # A fused kernel is ours: the fusion refuses it and logs why (debug), the user
                # never wrote it.
                first = cache_key[0] not in _cache.warned and not cache_key[0].startswith(DERIVED_KERNEL_MODULE + ":")
                _cache.warned.add(cache_key[0])
            if first and _compat.is_kernel_compilation_error(e):  # the user's kernel, not the analysis
                log.warning(
                    "wrap_triton: cannot tell which arguments kernel %s writes: triton did not compile it for "
                    "these arguments (%s). If its launch fails the same way, fix the kernel's source; if it runs, "
                    "pass wrap_triton(kernel, writes=[...]). Until then every tensor argument (%s) is taken as "
                    "written.", cache_key[0], reason, ", ".join(tensors), exc_info=log.isEnabledFor(logging.DEBUG),
                )
            elif first:
                log.warning(
                    "wrap_triton: cannot tell which arguments kernel %s writes (%s); treating every "
                    "tensor argument (%s) as written. Pass wrap_triton(kernel, writes=[...]) to say.",
                    cache_key[0], reason, ", ".join(tensors), exc_info=log.isEnabledFor(logging.DEBUG),
                )
        with _cache.lock:
            _cache.results[cache_key] = cached
    writes, reads, reason, ops = cached
    return TensorAccesses(
        reads=[name for name in tensors if name in reads],
        writes=[name for name in tensors if name in writes],
        write_sites={name: list(dict.fromkeys(writes[name])) for name in tensors if name in writes},
        fallback_reason=reason,
        write_ops={name: ops["write"][name] for name in tensors if name in ops["write"]},
        read_ops={name: ops["read"][name] for name in tensors if name in ops["read"]},
        reduces=ops.get("reduces", True),
        other_memory_written=ops.get("other_memory_written", False),
        other_memory_read=ops.get("other_memory_read", []),
        approximate_sums=ops.get("approximate_sums", []),
        mixed_half_roundings=ops.get("mixed_half_roundings", []),
    )


def identify_mutated_tensors(kernel: Any, kwargs: dict[str, Any]) -> list[str]:
    """Names of the tensor arguments `kernel` may write, in parameter order.

    The single source of the written set for functionalization (see _hops.tensors_written):
    functionalization clones exactly these. Same arguments as :func:`identify_accessed_tensors`.

    Example (``add_one`` from :func:`wrap_triton`'s example)::

        >>> from torch_triton_hop import identify_mutated_tensors
        >>> x = torch.zeros(8)
        >>> identify_mutated_tensors(add_one, {"x_ptr": x, "out_ptr": torch.empty_like(x), "n": 8, "BLOCK": 16})
        ['out_ptr']
    """
    return identify_accessed_tensors(kernel, kwargs).writes


def explain(kernel: Any, kwargs: dict[str, Any]) -> str:
    """A human-readable account: each written argument with the source lines that write it.

    The command line does the same for a kernel in an importable module:
    ``python -m torch_triton_hop explain my_pkg.kernels:add_kernel x_ptr=f32[1024] ...``.

    Example (``add_one`` from :func:`wrap_triton`'s example)::

        >>> from torch_triton_hop import explain
        >>> x = torch.zeros(8)
        >>> print(explain(add_one, {"x_ptr": x, "out_ptr": torch.empty_like(x), "n": 8, "BLOCK": 16}))
        kernel add_one
          reads:  x_ptr
          writes: out_ptr
            out_ptr <- ...
    """
    accesses = identify_accessed_tensors(kernel, kwargs)
    base = base_kernel(kernel)
    lines = [f"kernel {_compat.python_function(base).__qualname__}"]
    if accesses.fallback_reason:
        lines.append(f"  every tensor argument is treated as written: {accesses.fallback_reason}")
    lines.append(f"  reads:  {', '.join(accesses.reads) or '(none)'}")
    lines.extend(f"    and memory that is none of its arguments: {read}" for read in accesses.other_memory_read)
    lines.append(f"  writes: {', '.join(accesses.writes) or '(none)'}")
    for name, sites in accesses.write_sites.items():
        for site in sites:
            lines.append(f"    {name} <- {site}")
    return "\n".join(lines)


def reset_cache() -> None:
    with _cache.lock:
        _cache.results.clear()
        _cache.warned.clear()
