"""Launches on DTensors: run on the local shards by the kernel's sharding rule, or refused
with the ways out.

# [Note: Kernels called on DTensors]
# TL;DR: both HOPs get a rule for DTensor. A kernel with a sharding rule (register_sharding,
# see [Note: Sharding rules for user kernels]) launches on the local shards with local sizes;
# one without raises an error that names the kernel, the arguments and what to do (a rule,
# local_map, or .to_local()), instead of torch's internal "There was no rule registered for
# HOP user_triton_kernel_mutation and subclass DTensor". Registered when
# torch.distributed.tensor is imported, so `import torch_triton_hop` imports no distributed
# code.
"""

from __future__ import annotations

import functools
from typing import Any

from ._hops import triton_kernel_wrapper_functional, triton_kernel_wrapper_mutation
from ._sharding import launch_on_dtensors

__all__ = ["register"]


def register() -> None:
    """Give both HOPs their DTensor rule (idempotent)."""
    from torch.distributed.tensor import DTensor

    for hop in (triton_kernel_wrapper_mutation, triton_kernel_wrapper_functional):
        if DTensor not in hop.python_key_table:
            hop.py_impl(DTensor)(functools.partial(_on_dtensors, hop, DTensor))


def _on_dtensors(hop: Any, dtensor_type: type, **node: Any) -> Any:
    return launch_on_dtensors(hop, dtensor_type, node)
