"""Which tensor arguments a kernel reads and writes (placeholder until the TTIR analysis lands)."""

from __future__ import annotations

from typing import Any

import torch


def identify_mutated_tensors(kernel: Any, kwargs: dict[str, Any]) -> list[str]:
    """Names of the tensor arguments `kernel` may write, in parameter order."""
    return [name for name, value in kwargs.items() if isinstance(value, torch.Tensor)]
