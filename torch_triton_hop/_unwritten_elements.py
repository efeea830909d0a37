"""Epilogues and the elements of an output a kernel may leave unwritten.

# [Note: Elements a kernel may leave unwritten]
# TL;DR: a fused epilogue runs only where the kernel stores. Elements of the output (a fresh
# torch.empty) that the kernel never stores keep whatever memory held. Unfused, the epilogue
# runs on every element, those included. Where its result there does not depend on the stored
# value, the program's result is defined, and the fused one would not be. Example: a kernel
# storing the first k elements, then `torch.where(first_k, out, 5.0)`: 5.0 unfused, garbage
# fused (an adversarial hunt, eleventh session). The package cannot prove that a kernel's
# stores cover its output. So an epilogue is fused only where every op between the stored
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
# Every other pointwise op is strict in each input for all but a vanishing set of the other
# operands' values. Such a set: maximum(x, inf) is inf unless x is NaN, still garbage-dependent.
"""

from __future__ import annotations

import torch

from ._fx_values import node_value

__all__ = ["absorbed_value"]

_ops = torch.ops.aten
_SELECTS = {_ops.where, _ops.masked_fill}  # the value in a branch position: its lanes may be replaced
_ABSORBING = {_ops.logical_and, _ops.logical_or, _ops.bitwise_and, _ops.bitwise_or, _ops.pow, _ops.lerp}
_INTEGER_ABSORBING = {_ops.mul}  # 0 absorbs integers and bools; floats keep NaN, inf and the sign of 0


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


def _why_not_strict(node: torch.fx.Node, packet: object, positions: list[int]) -> str | None:
    if packet in _SELECTS:  # where(c, a, b), masked_fill(a, c, b): strict where the choice or both branches are
        condition, branches = (0, {1, 2}) if packet is _ops.where else (1, {0, 2})
        return None if condition in positions or branches <= set(positions) else "a select"
    others = {i: arg for i, arg in enumerate(node.args) if i not in positions}
    if packet in _ABSORBING or packet in _INTEGER_ABSORBING and not _floating(node):
        if all(_absorbs_nothing(packet, i, arg) for i, arg in others.items()):
            return None  # every operand depends on the value, or the constants absorb nothing
        return f"{packet.__name__}, which one operand can absorb"
    return None


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
