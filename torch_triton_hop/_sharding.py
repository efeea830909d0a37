"""Sharding rules: how a kernel launched on DTensors runs on each rank's local shards.

# [Note: Sharding rules for user kernels]
# TL;DR: register_sharding(kernel, placements=[...], local_scalars=fn, grid=fn) states once per
# kernel which placements of its tensor arguments it accepts, and how its scalar arguments
# and grid follow from the LOCAL tensors. A launch on DTensors then picks the first accepted
# placement (redistributing arguments the kernel only reads, never one it writes), launches
# on the local shards with the rule's scalars and grid, and the written DTensors keep their
# placements (functional launches return DTensors with them).
# Context: host code computes a kernel's sizes and grid from the tensors it holds; from a
# DTensor that is the global shape, and a local launch with a global size reads and writes
# past the shard. So no number computed by host code reaches a local launch: every int or
# float argument must be returned by local_scalars (which sees the local tensors and the
# arguments as called, and passes through what is not a size, e.g. eps), or the launch is
# refused naming it; the grid is always the rule's. Constexprs, bools and None pass through.
# Without a rule a launch on DTensors is refused with both ways out (a rule, or local_map).
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, Callable

import torch

from . import _compat
from ._hops import tensors_written
from ._side_table import base_kernel, kernel_key_name, kernel_side_table
from .errors import raise_unsupported

__all__ = ["register_sharding", "ShardingRule", "rule_for"]


@dataclasses.dataclass(frozen=True)
class ShardingRule:
    kernel: str  # stable key
    placements: tuple[dict[str, tuple[Any, ...]], ...]  # accepted, in order of preference
    local_scalars: Callable[..., dict[str, Any]]
    grid: Callable[[dict[str, Any]], tuple]


_rules: dict[str, ShardingRule] = {}
_lock = threading.Lock()


def register_sharding(kernel: Any, *, placements: list[dict[str, Any]], local_scalars: Callable[..., dict[str, Any]],
                      grid: Callable[[dict[str, Any]], tuple]) -> None:
    """State how `kernel` runs on DTensors: launched on them, it runs on each rank's local shards.

    Args:
        kernel: a ``@triton.jit`` kernel (autotuned / heuristics too) or its :func:`wrap_triton`.
        placements: the accepted placements, most preferred first: each a dict from tensor
            parameter name to a placement (1-D mesh) or a tuple of placements (one per mesh
            dimension), covering every tensor argument. A launch uses the first one its
            arguments have; otherwise the first one reachable by redistributing only arguments
            the kernel reads (a written argument is written in place and is never moved).
        local_scalars: called with the local tensors and the other arguments as the launch
            passed them (by parameter name); returns every int and float argument of the local
            launch. An int or float argument it does not return is refused: it would be the
            value host code computed from global shapes.
        grid: called with the local launch's arguments (and each autotune config's values);
            returns its grid, as a grid callable of ``kernel[grid]`` would.

    Example (``add_one`` from :func:`wrap_triton`'s example)::

        >>> import triton
        >>> from torch.distributed.tensor import Replicate, Shard
        >>> torch_triton_hop.register_sharding(
        ...     add_one,
        ...     placements=[{"x_ptr": Shard(0), "out_ptr": Shard(0)},
        ...                 {"x_ptr": Replicate(), "out_ptr": Replicate()}],
        ...     local_scalars=lambda x_ptr, **args: {"n": x_ptr.numel()},
        ...     grid=lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),))

    Raises:
        TypeError: `local_scalars` or `grid` is not callable, or `placements` is empty.
    """
    if not callable(local_scalars) or not callable(grid):
        raise TypeError("register_sharding: local_scalars and grid must be callables (see the docstring)")
    if not placements:
        raise TypeError("register_sharding: give at least one accepted placement")
    key = kernel_side_table.add_kernel(kernel)
    params = {p.name for p in _compat.kernel_params(base_kernel(kernel_side_table.get_kernel(key)))}
    normalized = []
    for option in placements:
        unknown = sorted(set(option) - params)
        if unknown:
            raise TypeError(f"register_sharding: {unknown} are not parameters of kernel {kernel_key_name(key)!r}")
        normalized.append({name: tuple(p) if isinstance(p, (tuple, list)) else (p,) for name, p in option.items()})
    with _lock:
        _rules[key] = ShardingRule(key, tuple(normalized), local_scalars, grid)


def rule_for(kernel_key: str) -> ShardingRule | None:
    return _rules.get(kernel_key)


def _normalized(option: dict[str, tuple[Any, ...]], dtensors: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """The option with Shard(-1) as Shard(ndim - 1), as DTensor stores it (a rule may say either)."""
    def one(placement: Any, ndim: int) -> Any:
        dim = getattr(placement, "dim", None)
        if not (placement.is_shard() and isinstance(dim, int) and dim < 0):
            return placement
        split_factor = getattr(placement, "split_factor", None)  # _StridedShard
        return type(placement)(dim + ndim) if split_factor is None else \
            type(placement)(dim + ndim, split_factor=split_factor)

    return {name: tuple(one(p, dtensors[name].ndim) for p in placements) if name in dtensors else placements
            for name, placements in option.items()}


def _choose(rule: ShardingRule, dtensors: dict[str, Any], written: set[str]) -> dict[str, tuple[Any, ...]]:
    current = {name: tuple(t.placements) for name, t in dtensors.items()}
    covering = [_normalized(option, dtensors) for option in rule.placements if set(option) >= set(dtensors)]
    if not covering:
        missing = sorted(set(dtensors) - set().union(*rule.placements))
        raise_unsupported(f"kernel {kernel_key_name(rule.kernel)!r}: its sharding rule gives no placement for "
                          f"the DTensor arguments {missing or sorted(dtensors)}",
                          fix="Name every tensor argument in each accepted placement of register_sharding")
    for option in covering:
        if all(option[name] == current[name] for name in dtensors):
            return option
    for option in covering:
        if all(option[name] == current[name] for name in dtensors if name in written):
            return option
    raise_unsupported(
        f"kernel {kernel_key_name(rule.kernel)!r}: no placement its sharding rule accepts can be reached",
        {name: str(p) for name, p in current.items()},
        why=f"the rule accepts {[{n: str(p) for n, p in o.items()} for o in rule.placements]}, and an argument the "
            f"kernel writes ({sorted(written)}) cannot be redistributed: the write would land in a copy",
        fix="Redistribute the written tensors before the launch, or add their placement to the rule",
    )
    raise AssertionError("unreachable")


def launch_on_dtensors(hop: Any, dtensor_type: type, node: dict[str, Any]) -> Any:
    """Run launch `node` (a HOP's keyword arguments) whose tensors are DTensors, by its kernel's rule."""
    from torch.distributed.tensor import DTensor

    kernel, kwargs = node["kernel"], node["kwargs"]
    name = kernel_key_name(kernel)
    dtensors = {n: v for n, v in kwargs.items() if isinstance(v, dtensor_type)}
    rule = rule_for(kernel)
    if rule is None:
        raise_unsupported(
            f"kernel {name!r} was launched on DTensor arguments",
            {n: f"{tuple(v.placements)} on {v.device_mesh}" for n, v in dtensors.items()},
            why="Its sizes and grid come from host code, which sees a DTensor's global shape, while the kernel "
                "would run on each rank's local shard; the package cannot tell how the kernel shards",
            fix="Say how it shards with torch_triton_hop.register_sharding(kernel, placements=..., "
                "local_scalars=..., grid=...), or launch it on local tensors: wrap the function that launches it "
                "in torch.distributed.tensor.experimental.local_map, or pass dtensor.to_local()",
        )
    plain = [n for n, v in kwargs.items() if isinstance(v, torch.Tensor) and not isinstance(v, dtensor_type)]
    if plain:
        raise_unsupported(f"kernel {name!r} was launched on DTensors and plain tensors ({plain})",
                          fix="Make every tensor argument a DTensor (DTensor.from_local / distribute_tensor)")
    meshes = {v.device_mesh for v in dtensors.values()}
    if len(meshes) != 1:
        raise_unsupported(f"kernel {name!r}: its DTensor arguments live on different meshes",
                          fix="Redistribute them onto one mesh")
    (mesh,) = meshes
    local_view = {n: v.to_local() for n, v in dtensors.items()}
    written = set(tensors_written(kernel, node["constant_args"], node["configs"], {**kwargs, **local_view}))
    option = _choose(rule, dtensors, written)
    moved = {n: v.redistribute(mesh, option[n]) if tuple(v.placements) != option[n] else v for n, v in dtensors.items()}
    local = {n: v.to_local() for n, v in moved.items()}
    params = _compat.kernel_params(base_kernel(kernel_side_table.get_kernel(kernel)))
    constexprs = {p.name for p in params if p.is_constexpr}
    others = {n: v for n, v in kwargs.items() if n not in dtensors}
    scalars = dict(rule.local_scalars(**local, **others))
    sizes = [n for n, v in others.items() if n not in constexprs and n not in scalars
             and isinstance(v, (int, float, torch.SymInt, torch.SymFloat)) and not isinstance(v, bool)]
    if sizes:
        raise_unsupported(
            f"kernel {name!r} on DTensors: its sharding rule's local_scalars does not give {sizes}",
            why="host code computed these from the DTensors' global shapes; the local launch needs local values",
            fix="Return them from local_scalars (from the local tensors, or passed through if not a size)",
        )
    arguments = {**others, **{n: v for n, v in scalars.items() if n not in local}, **local}
    configs = kernel_side_table.get_configs(node["configs"])
    grids: list[Any] = []
    for config in configs or [{"kwargs": {}}]:
        grid = tuple(rule.grid({**arguments, **config["kwargs"]}))
        grids.extend((*grid, *[1] * (3 - len(grid))))
    result = hop(**{**node, "kwargs": arguments, "grids": grids})
    if result is None:
        return None
    outputs = []
    for n, out in zip(node["tensors_to_clone"], result):
        source = moved[n]
        outputs.append(DTensor.from_local(out, mesh, option[n], run_check=False, shape=source.shape,
                                          stride=source.stride()))
    return tuple(outputs)
