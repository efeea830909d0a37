"""The value an FX node of a traced graph carries (its fake tensor, SymInt or constant)."""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["node_value"]


def node_value(node: Any) -> Any:
    """`node.meta["val"]` for an FX node (None if it has none); None for anything else."""
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None
