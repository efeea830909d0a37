"""Epilogues and the elements of an output a kernel may leave unwritten.

# [Note: Elements a kernel may leave unwritten]
# TL;DR: a fused epilogue runs only where the kernel stores. Elements of the output (a fresh
# torch.empty) that the kernel never stores keep whatever memory held. Unfused, the epilogue
# runs on every element, those included. Where its result there does not depend on the stored
# value, the program's result is defined, and the fused one would not be. Example: a kernel
# storing the first k elements, then `torch.where(first_k, out, 5.0)`: 5.0 unfused, garbage
# fused (an adversarial hunt, eleventh session). Unless the kernel provably stores every
# element (_store_coverage), an epilogue is fused only where every op between the stored
# value and the result is strict in it: unknown stored value, unknown result.
# Not strict (refused):
#  - a select with the value in one branch only and not in its condition (where,
#    masked_fill; where(x > 0, x, 0) and where(x > 0, x, x * 0.01) are strict);
#  - ops one operand can absorb:
#    - logical and / or;
#    - bitwise and / or, integer or bool multiplication, unless the other operand is a
#      constant that absorbs nothing (x & 1, x * 3);
#    - pow, unless the other operand is a constant that absorbs nothing (x ** 2; not x ** 0, 1 ** x);
#    - lerp (weight 0).
#  - ops whose other operand is a tensor (or symbolic scalar) known only at run time, and
#    one of its values can absorb (a hunt, fifteenth session: `out + y` with y NaN where the
#    kernel stores nothing is NaN unfused, garbage fused):
#    - a floating-point operand: NaN absorbs every float op (arithmetic, comparisons,
#      maximum) but fmax, fmin and copysign;
#    - an integer or bool operand of an integer or bool op: its extremes absorb min, max,
#      clamp and <, <=, >, >= (x <= INT_MAX), 0 and 1 absorb shifts, // and %; only +, -,
#      ^, == and != are strict for every value (an int operand of a float op cannot absorb,
#      but for pow, above).
#    Constants (full, scalar_tensor) are known and go to the probes below instead.
# Where the kernel provably stores every element of the output, none of this applies and
# any epilogue fuses (see [Note: A proof that a kernel stores every element]); the proof is
# tried only where these rules refuse.
# Every other pointwise op is strict in each input for every value of its other operands, or
# for all but a vanishing set: maximum(x, inf) is inf unless x is NaN, still garbage-dependent.
# Strict op by op is not strict as a whole where the value meets itself or the constants fix
# the result: int `o - o`, `o ^ o`, `o != o`, `o.clamp(5, 5)`, `isnan` of an int, `u8 >= 0`,
# and for ordinary floats `maximum(o, inf)` (an adversarial hunt, thirteenth session). So
# the region is also run, on CPU, on probes of the stored value: ordinary numbers of its
# dtype, zeros among them, and each other operand's values (`out == labels`), each lane's
# other operands drawn once. Where the result is the same for every probe in more than a
# quarter of the lanes, the region is taken to ignore the value there. (A strict region
# repeats by chance in a few lanes: `o >= 0` when every probe is positive.)
"""

from __future__ import annotations

from typing import Any

import torch

from ._fx_values import node_value
from ._region_views import LANE_RELABELS

__all__ = ["absorbed_value", "ignored_value"]

_ops = torch.ops.aten
_SELECTS = {_ops.where, _ops.masked_fill}  # the value in a branch position: its lanes may be replaced
_ABSORBING = {_ops.logical_and, _ops.logical_or, _ops.bitwise_and, _ops.bitwise_or, _ops.pow, _ops.lerp}
_INTEGER_ABSORBING = {_ops.mul}  # 0 absorbs integers and bools; floats keep NaN, inf and the sign of 0
# Ops strict in each input for every value of the others, by the dtype the op computes in.
_STRICT_FOR_ANY_FLOAT_OPERAND = {_ops.fmax, _ops.fmin, _ops.copysign}  # fmax(x, NaN) is x
_STRICT_FOR_ANY_INTEGER_OPERAND = {_ops.add, _ops.sub, _ops.rsub, _ops.bitwise_xor, _ops.eq, _ops.ne}


def absorbed_value(region: list[torch.fx.Node], stored: set[torch.fx.Node]) -> str | None:
    """Why the epilogue `region` (graph order) may compute a result that does not depend on the
    kernel's stored value (`stored`: the launch's output and its views), or None where every op
    between them is strict in it. See [Note: Elements a kernel may leave unwritten]."""
    depends = set(stored)
    for node in region:
        positions = [i for i, arg in enumerate(node.args) if arg in depends]
        if not positions and not any(value in depends for value in node.kwargs.values()):
            continue
        depends.add(node)
        packet = getattr(node.target, "overloadpacket", None)
        reason = _why_not_strict(node, packet, positions)
        if reason is not None:
            return (f"{node.name} ({reason}) may not depend on the kernel's stored value, and the kernel may leave "
                    "elements of its output unwritten, which the unfused epilogue computes too")
    return None


def ignored_value(region: list[torch.fx.Node], stored: set[torch.fx.Node]) -> str | None:
    """Why the epilogue `region`, strict op by op (absorbed_value found nothing), may still
    compute a result that does not depend on the stored value, found by running it on probes
    of that value; None where it does. See [Note: Elements a kernel may leave unwritten]."""
    reason = _ignores_probes(region, stored)
    if reason is not None:
        return (f"{region[-1].name} {reason}, and the kernel may leave elements of its output unwritten, which the "
                "unfused epilogue computes too")
    return None


_LANES = 64
_CONSTANT_LANES_LIMIT = _LANES // 4


def _ignores_probes(region: list[torch.fx.Node], stored: set[torch.fx.Node]) -> str | None:
    """Why the region's result (its last node) may not depend on the stored value, found by
    running it on probes of that value; None where it does in all but a few lanes."""
    generator = torch.Generator().manual_seed(0)
    stored_dtype = node_value(next(iter(stored))).dtype
    probes = _probes(stored_dtype, generator)
    if probes is None:
        return f"computes on {stored_dtype}, which the check that it depends on the stored value does not draw"
    try:
        others = {arg: _constant(arg) if arg.target in _CONSTANTS else _ordinary(node_value(arg).dtype, generator)
                  for node in region for arg in node.all_input_nodes if arg not in stored and arg not in region}
        # The operands' own values too: `out == labels` depends on out where out may equal them.
        probes += [other.to(stored_dtype) for other in others.values() if stored_dtype != torch.bool]
        results = []
        for probe in probes:
            values: dict[torch.fx.Node, Any] = {**others, **dict.fromkeys(stored, probe)}
            for node in region:
                if node.target in LANE_RELABELS:  # one lane: [Note: Views inside a fused region]
                    values[node] = values[node.args[0]]
                    continue
                args = torch.fx.node.map_aggregate(node.args, lambda a: values[a] if isinstance(a, torch.fx.Node) else a)
                kwargs = torch.fx.node.map_aggregate(
                    {k: v for k, v in node.kwargs.items() if k != "device"},
                    lambda a: values[a] if isinstance(a, torch.fx.Node) else a)
                values[node] = node.target(*args, **kwargs)
            results.append(values[region[-1]].reshape(-1))
    except Exception as error:  # noqa: BLE001  an op CPU does not run for these dtypes: the safe path
        return f"could not be checked for dependence on the stored value on CPU ({type(error).__name__}: {error})"
    first = results[0]
    constant = torch.ones(first.shape, dtype=torch.bool)
    for result in results[1:]:
        constant &= _same_bits(result, first)
    if int(constant.sum()) > _CONSTANT_LANES_LIMIT:
        return "gives the same result for every value the kernel might store, in most lanes"
    return None


def _probes(dtype: torch.dtype, generator: torch.Generator) -> list[torch.Tensor] | None:
    """Stored values to run an epilogue on: ordinary numbers of `dtype` (no NaN, no inf)."""
    lanes = (_LANES,)
    if dtype == torch.bool:
        first = torch.rand(lanes, generator=generator) > 0.5
        return [first, ~first, torch.zeros(lanes, dtype=torch.bool)]
    if dtype.is_floating_point:
        largest = torch.finfo(dtype).max / 4
        normal = torch.randn(lanes, generator=generator, dtype=torch.float64)
        wide = [normal * 10, normal * -17 + 3.1, torch.randn(lanes, generator=generator, dtype=torch.float64) * 1e4,
                torch.randn(lanes, generator=generator, dtype=torch.float64) * 1e-3,
                (torch.rand(lanes, generator=generator, dtype=torch.float64) * 2 - 1) * largest,
                torch.randint(-100, 100, lanes, generator=generator).double() + 0.5, torch.zeros(lanes, dtype=torch.float64)]
        return [w.clamp(-largest, largest).to(dtype) for w in wide]
    if dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
        info = torch.iinfo(dtype)
        small = torch.randint(-100, 100, lanes, generator=generator)
        wide = [small, small * -3 + 7, torch.randint(info.min, info.max, lanes, generator=generator, dtype=torch.int64),
                torch.randint(info.min, info.max, lanes, generator=generator, dtype=torch.int64),
                torch.zeros(lanes, dtype=torch.int64)]
        return [w.to(dtype) for w in wide]  # wraps into the dtype's range, as a cast does
    return None


_CONSTANTS = {_ops.full.default, _ops.scalar_tensor.default}  # torch.tensor(float("inf")) in a graph


def _constant(node: torch.fx.Node) -> torch.Tensor:
    """The value of a constant operand (full, scalar_tensor), one per lane."""
    fill = node.args[1] if node.target is _ops.full.default else node.args[0]
    return torch.full((_LANES,), fill, dtype=node_value(node).dtype)


def _ordinary(dtype: torch.dtype, generator: torch.Generator) -> torch.Tensor:
    """One draw of another operand: ordinary numbers of `dtype`, one per lane."""
    probes = _probes(dtype, generator)
    if probes is None:
        raise TypeError(f"an operand of dtype {dtype}")
    return probes[0]


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dtype != b.dtype:
        return torch.zeros(a.shape, dtype=torch.bool)
    if a.is_floating_point():
        return ((a == b) & (torch.signbit(a) == torch.signbit(b))) | (a.isnan() & b.isnan())
    return a == b


def _why_not_strict(node: torch.fx.Node, packet: object, positions: list[int]) -> str | None:
    if packet in _SELECTS:  # where(c, a, b), masked_fill(a, c, b): strict where the choice or both branches are
        condition, branches = (0, {1, 2}) if packet is _ops.where else (1, {0, 2})
        return None if condition in positions or branches <= set(positions) else "a select"
    others = {i: arg for i, arg in enumerate(node.args) if i not in positions}
    for operand in [*others.values(), *node.kwargs.values()]:
        absorbing = _absorbing_run_time_operand(node, packet, operand)
        if absorbing:
            return absorbing
    if packet in _ABSORBING or packet in _INTEGER_ABSORBING and not _floating(node):
        if all(_absorbs_nothing(packet, i, arg) for i, arg in others.items()):
            return None  # every operand depends on the value, or the constants absorb nothing
        return f"{packet.__name__}, which one operand can absorb"
    return None


def _absorbing_run_time_operand(node: torch.fx.Node, packet: object, operand: object) -> str | None:
    """Why `operand`, a value known only at run time, may absorb the stored value in `node`;
    None for a constant, a Python number (the probes and the rules above check those) and
    where no value of its dtype absorbs."""
    if not isinstance(operand, torch.fx.Node) or operand.target in _CONSTANTS or packet in _SELECTS:
        return None  # a select: the rule for selects above holds for any operand value
    value = node_value(operand)
    dtype = value.dtype if isinstance(value, torch.Tensor) else {torch.SymFloat: torch.float64}.get(
        type(value), torch.int64)
    if dtype.is_floating_point or dtype.is_complex:
        if packet in _STRICT_FOR_ANY_FLOAT_OPERAND:
            return None
        return f"{_op_name(node, packet)} with {operand.name}, whose NaN elements would fix the result"
    if _floating(node) or packet in _STRICT_FOR_ANY_INTEGER_OPERAND:
        return None  # an integer operand of a float op: pow and lerp are checked below
    if packet in _ABSORBING or packet in _INTEGER_ABSORBING:
        return None  # checked below, with what absorbs them
    return f"{_op_name(node, packet)} with {operand.name}, some of whose values (extremes, 0 or 1) would fix the result"


def _op_name(node: torch.fx.Node, packet: object) -> str:
    return getattr(packet, "__name__", None) or str(node.target)


def _floating(node: torch.fx.Node) -> bool:
    value = node_value(node)
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def _absorbs_nothing(packet: object, position: int, constant: object) -> bool:
    """Whether the op's result still depends on its other operand with this constant operand at
    `position`; False for a tensor (any value) and for True / False (they absorb and / or)."""
    if isinstance(constant, bool) or not isinstance(constant, (int, float)):
        return False
    if packet is _ops.mul or packet is _ops.bitwise_and:
        return constant != 0
    if packet is _ops.bitwise_or:
        return constant != -1
    if packet is _ops.pow:  # x ** 0 and 1 ** x are 1
        return constant != 0 if position == 1 else constant != 1
    return False
