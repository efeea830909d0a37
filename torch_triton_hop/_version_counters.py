"""Autograd version counters of the tensors a launch writes.

# [Note: Launches bump version counters]
# TL;DR: a launch of a wrapped kernel bumps the autograd version counter of every tensor
# argument the kernel writes, as torch's in-place ops and custom_op(mutates_args=...) do. A
# kernel that overwrites a tensor an earlier op saved for backward then makes backward raise
# torch's "one of the variables needed for gradient computation has been modified by an
# inplace operation", where before it computed a wrong gradient without a word (triton's own
# launch and torch.library.wrap_triton bump nothing).
#
# Written: the tensors _analysis.identify_accessed_tensors reports as written for the launch's
# arguments: those the kernel may write (a store under a runtime condition counts, as a
# custom_op's mutates_args does); a declared writes=... as declared; where the analysis cannot
# tell, every tensor argument, as functionalization takes them, with the analysis's warning. A
# descriptor's or a tuple's tensors count as the argument does.
#
# Where:
#   - eagerly, the fast launch: each cache entry holds the written parameters (an itemgetter
#     over the bound parameters, found once when the entry is recorded); a hit bumps them with
#     one call (~0.15 us of the ~8 us a launch takes). Every slower path (triton's own launch, a new specialization, the
#     layers) asks bump_written, which looks the analysis up per call;
#   - through the HOP (a mode that sees launches, selective checkpointing, a traced program):
#     the mutation HOP's ADInplaceOrView rule (_hops), so AOTAutograd's joint trace meets the
#     bump where the op is and raises as it does for torch's in-place ops;
#   - after a compiled graph wrote an input in place: AOTAutograd's runtime bumps inputs whose
#     mutation autograd may see. Functionalization hides from autograd only a write, in grad
#     mode, of an input that requires grad: seen, AOTAutograd would replay it outside the graph
#     as a copy_ autograd records (a leaf raises; a non-leaf's gradient stops there), where
#     eagerly autograd never sees a kernel's write. Hidden, it stays in the graph (as before)
#     and is not bumped after it (eagerly it is). Under no_grad (an optimizer-style update of
#     a parameter) AOTAutograd keeps it in the graph anyway, and bumps it.
# The first launch of each specialization now asks the analysis (TTIR, cached per
# specialization and shared with every capture of the kernel).
"""

from __future__ import annotations

import inspect
import logging
from operator import itemgetter
from typing import Any, Callable

import torch

from . import _compat
from ._analysis import complete_arguments, identify_accessed_tensors
from ._side_table import base_kernel

log = logging.getLogger(__name__)
_warned: set[int] = set()  # kernels (by id) whose source could not be read: warned once

__all__ = ["bump_written", "bump_names", "increment_versions", "run_and_bump", "written_getter", "written_names"]

increment_versions = _compat.increment_versions  # always given a tuple of tensors


def bound_arguments(kernel: Any, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """A launch's arguments by parameter name, and its launch options (a heuristic may give
    num_warps: present, it is not computed again)."""
    names = inspect.signature(_compat.python_function(base_kernel(kernel))).parameters
    return {**dict(zip(names, args)), **kwargs}


def written_names(user_kernel: Any, bound: dict[str, Any]) -> list[str]:
    """The parameters holding tensors that a launch with these arguments writes, in order.
    user_kernel: what the user launched (a wrap_triton wrapper: its writes=... if declared, and
    the side-table entry tracing makes), or a kernel layer."""
    try:
        return identify_accessed_tensors(user_kernel, complete_arguments(user_kernel, bound)).writes
    except (OSError, ValueError) as e:  # no source to analyse (python -c, exec): every tensor, as the analysis falls back
        written = [name for name, value in bound.items() if _tensors_in(value)]
        if id(user_kernel) not in _warned:
            _warned.add(id(user_kernel))
            log.warning("wrap_triton: cannot tell which arguments kernel %s writes (%s); taking every tensor "
                        "argument (%s) as written. Pass wrap_triton(kernel, writes=[...]) to say.",
                        _compat.python_function(base_kernel(user_kernel)).__name__, e, ", ".join(written))
        return written


def written_getter(user_kernel: Any, bound: dict[str, Any], names: list[str]) -> Callable | None:
    """f(values of `names`, as a tuple) -> the written tensors, for a fast-launch entry; None when
    it writes no tensor. Only plain tensor arguments reach the fast launch."""
    written = [names.index(name) for name in written_names(user_kernel, bound) if name in names]
    if not written:
        return None
    # itemgetter of one index returns the item itself; of a slice, the 1-tuple.
    return itemgetter(*written) if len(written) > 1 else itemgetter(slice(written[0], written[0] + 1))


def bump_written(user_kernel: Any, args: tuple, kwargs: dict[str, Any]) -> None:
    """After a launch that took a slower path: bump what it wrote. See [Note: Launches bump version counters]."""
    bound = bound_arguments(user_kernel, args, kwargs)
    bump_names(bound, written_names(user_kernel, bound))


def bump_names(values: dict[str, Any], names: list[str]) -> None:
    tensors = tuple(t for name in names for t in _tensors_in(values.get(name)))
    if tensors:
        increment_versions(tensors)


def _tensors_in(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors_in(item)]
    if _compat.is_host_tensor_descriptor(value):
        return [value.base]
    return []


def run_and_bump(layer: Any, user_kernel: Any, grid: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """triton's own launch of a layer (a JITFunction, an Autotuner, a Heuristics) of user_kernel,
    then the bump of what it wrote: the fast launch's slower paths. The arguments are the
    layer's (with the values the layers above it added); an Autotuner's writes are those of the
    config it chose."""
    result = layer.run(*args, grid=grid, warmup=False, **kwargs)
    config = layer.best_config if isinstance(layer, _compat.Autotuner) else None
    bound = bound_arguments(layer, args, {**kwargs, **config.all_kwargs()} if config is not None else kwargs)
    bump_names(bound, written_names(user_kernel, bound))
    return result
