"""Views inside a fused region: pointwise code seen through a permute, transpose, squeeze or
unsqueeze, as in `(x + 2).t().contiguous()` before a kernel. See _fusion_candidates.

# [Note: Views inside a fused region]
# TL;DR: a fused region computes one lane per element of the tensor it fuses into, every op of
# it at that lane. A view that only relabels its input's elements keeps that: the view's
# element at a lane is its input's element at the relabeled index. So a region may hold such a
# view and the pointwise ops above it, each operand above it read through the same relabeling:
# the operand broadcast to the view's input shape and viewed by the same op, a strided view of
# the same memory at the same storage offset, whose strides operand_offset turns into each
# lane's offset. In the region's code the view is the identity.
# Taken: permute / t / transpose / squeeze / unsqueeze, which inductor lowers by re-indexing the
# pointwise code they view, never by storing it, so the unfused program holds values across the
# view as the fused code does (in fp32 for fp16 / bf16). Not taken: expand (inductor may store a
# broadcast input it would recompute often: mark_reuse, rounding it to its dtype), view /
# reshape (they may store theirs where the sizes do not re-index), slice / select (they move
# the storage offset).
# A member read through two different chains of views (`p.t() + p` of a square p) would need
# two lanes at once: refused.
"""

from __future__ import annotations

from typing import Any

import torch

from ._fx_values import node_value

__all__ = ["LANE_RELABELS", "ViewsRefused", "lane_views", "relabeled_operands", "view_chain_above"]

aten = torch.ops.aten

LANE_RELABELS = {aten.permute.default, aten.t.default, aten.transpose.int, aten.squeeze.default, aten.squeeze.dim,
                 aten.squeeze.dims, aten.unsqueeze.default}


def _is_relabel(node: Any) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in LANE_RELABELS


def view_chain_above(arg: torch.fx.Node, grown: set[torch.fx.Node]) -> list[torch.fx.Node]:
    """The relabeling views from `arg` up to the node they view ([] if `arg` is none), each used
    only by `grown` or the view below it; the last element's input is what they view."""
    chain: list[torch.fx.Node] = []
    node, users = arg, grown
    while _is_relabel(node) and set(node.users) <= users:
        chain.append(node)
        node, users = node.args[0], {node}
    return chain


class ViewsRefused(Exception):
    """The region cannot hold its views: a node of it read through two different chains of
    them, or an operand that cannot be viewed as they view the values it feeds."""


def lane_views(region: list[torch.fx.Node], sink: torch.fx.Node) -> dict[torch.fx.Node, tuple[torch.fx.Node, ...]]:
    """Per node of `region` (graph order), the relabeling views between it and `sink`, top to
    bottom; raises ViewsRefused where two of its uses see it through different ones."""
    below: dict[torch.fx.Node, tuple[torch.fx.Node, ...]] = {sink: ()}
    for node in reversed(region):  # every user before what it uses
        if node is sink:
            continue
        seen = {((user,) if _is_relabel(user) else ()) + below[user] for user in node.users if user in below}
        if len(seen) > 1:
            raise ViewsRefused(f"{node.name} is read through different views")
        below[node] = next(iter(seen), ())
    return below


def relabeled_operands(region: list[torch.fx.Node], below: dict[torch.fx.Node, tuple[torch.fx.Node, ...]],
                       operands: list[torch.fx.Node]) -> dict[torch.fx.Node, torch.Tensor]:
    """The value each operand read above a view has as the fused code indexes it (see [Note:
    Views inside a fused region]); operands read below every view are not in it."""
    relabeled: dict[torch.fx.Node, torch.Tensor] = {}
    for operand in operands:
        chains = {below[node] for node in region if operand in node.all_input_nodes}
        if len(chains) > 1:
            raise ViewsRefused(f"operand {operand.name} is read through different views")
        chain = next(iter(chains), ())
        if not chain:
            continue
        value = node_value(operand)
        try:
            for view in chain:
                value = value.expand(node_value(view.args[0]).shape)  # broadcast as the ops above it did
                value = view.target(value, *view.args[1:], **view.kwargs)
        except Exception as e:  # noqa: BLE001 - an operand these views do not apply to: no views then
            raise ViewsRefused(f"operand {operand.name} cannot be viewed as {chain[0].name}: {e}") from e
        relabeled[operand] = value
    return relabeled
