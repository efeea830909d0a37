"""The value an FX node of a traced graph carries (its fake tensor, SymInt or constant), and
the node a view node views."""

from __future__ import annotations

from typing import Any

import torch

from . import _compat

__all__ = ["node_value", "view_source"]


def node_value(node: Any) -> Any:
    """`node.meta["val"]` for an FX node (None if it has none); None for anything else."""
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def view_source(node: Any) -> Any:
    """The node `node` is a view of (a view op's first argument); None if it is not a view."""
    if (isinstance(node, torch.fx.Node) and node.op == "call_function" and _compat.is_view_op(node.target)
            and node.args and isinstance(node.args[0], torch.fx.Node)):
        return node.args[0]
    return None
