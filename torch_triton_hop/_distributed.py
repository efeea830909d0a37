"""Launches on DTensors: refused with a way out, until kernels can declare how they shard.

# [Note: Kernels called on DTensors]
# TL;DR: a launch with a DTensor among its tensor arguments raises an error that names the
# kernel, the arguments and what to do (launch on the local shards: local_map, or
# .to_local()), instead of torch's internal "There was no rule registered for HOP
# user_triton_kernel_mutation and subclass DTensor".
# Context: a kernel's sizes and grid are computed by host code from the tensors it is given;
# from a DTensor that is the global size, and a launch on the local shards with global sizes
# would read and write past them. Until a kernel can state how it shards (which placements
# it accepts, what its writes become, sizes from local shapes: issue 18), only the user can
# say how the local launch looks, by writing it against local tensors. Registered when
# torch.distributed.tensor is imported, so `import torch_triton_hop` imports no
# distributed code.
"""

from __future__ import annotations

import functools
from typing import Any

from ._hops import triton_kernel_wrapper_functional, triton_kernel_wrapper_mutation
from ._side_table import kernel_key_name
from .errors import raise_unsupported

__all__ = ["register"]


def register() -> None:
    """Give both HOPs a rule for DTensor that refuses the launch (idempotent)."""
    from torch.distributed.tensor import DTensor

    for hop in (triton_kernel_wrapper_mutation, triton_kernel_wrapper_functional):
        if DTensor not in hop.python_key_table:
            hop.py_impl(DTensor)(functools.partial(_refuse, DTensor))


def _refuse(dtensor_type: type, *, kernel: str, kwargs: dict[str, Any], **node: Any) -> Any:
    placements = {name: f"{tuple(value.placements)} on {value.device_mesh}" for name, value in kwargs.items()
                  if isinstance(value, dtensor_type)}
    raise_unsupported(
        f"kernel {kernel_key_name(kernel)!r} was launched on DTensor arguments", placements,
        why="Its sizes and grid come from host code, which sees a DTensor's global shape, while the kernel "
            "would run on each rank's local shard; the package cannot tell how the kernel shards",
        fix="Launch it on local tensors: wrap the function that launches it in "
            "torch.distributed.tensor.experimental.local_map (placements in and out), or pass "
            "dtensor.to_local() and rebuild the result with DTensor.from_local",
    )
