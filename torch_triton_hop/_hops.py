"""The two higher-order operators and their dispatch rules.

``triton_kernel_wrapper_mutation`` launches a kernel that writes its arguments in
place; it is what tracing records. ``triton_kernel_wrapper_functional`` is its
functional form: it clones the tensors the kernel writes, launches on the clones and
returns them. Functionalization turns the first into the second, cloning only the
tensors the read/write analysis says are written.

Both take keyword arguments only::

    kernel          stable kernel key           "pkg.kernels:add_kernel@3f2a9c0d1b7e4a55"
    constant_args   constants key               '{"ACT":null}'
    configs         JSON list of configs        '[{"kwargs":{"BLOCK":64},"num_warps":4}]' or '[]'
    grids           3 ints/SymInts per config   [s0 // 64, 1, 1]  (flat: export can't serialise nested lists)
    kwargs          graphable kernel arguments  {"x": x, "out": out, "n": s0}

Everything in a node is an int, SymInt, str, tensor or a list/dict of them, so
graphs print, pickle and round-trip through torch.export.save / load.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import torch
import torch.utils._pytree as pytree
import triton

from . import _compat
from ._trace import accesses as trace_accesses
from ._analysis import TensorAccesses, identify_accessed_tensors
from ._fx_values import node_value, view_source
from ._compat import DispatchKey
from ._version_counters import bump_names
from ._side_table import (RECORDED_PRE_HOOK_FIELDS, TensorDescriptorSpec, base_kernel, kernel_key_name, kernel_layers,
                          kernel_side_table)
from .errors import raise_unsupported

log = logging.getLogger(__name__)

__all__ = ["triton_kernel_wrapper_mutation", "triton_kernel_wrapper_functional", "launch", "kernel_arguments",
           "launcher_for_inductor",
           "tensors_accessed", "tensors_written", "functionalization_hooks",
           "alias_groups", "parse_shared_memory", "storage_span", "member_offset", "clone_written", "check_kernels"]


class _TritonKernelHOP(_compat.HigherOrderOperator):
    def _get_overloaded_args(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[torch.Tensor, ...]:
        # Tensor subclasses hide inside the `kwargs` dict; the default only looks one level deep.
        kernel_args = kwargs.get("kwargs") or {}
        return tuple(
            value
            for value in kernel_args.values()
            if isinstance(value, torch.Tensor) and _compat.dispatch_keys(value).has("Python")
        )

    if not _compat.HOP_ASKS_FOR_OVERLOADED_ARGS:
        def dispatch(self, /, dispatch_key: Any, *args: Any, **kwargs: Any) -> Any:
            # torch 2.11-2.12 never call _get_overloaded_args: find the subclasses ourselves, or
            # their Python-key dispatch fails with "Input types: []".
            # Under a mode, the mode's rule first, as torch 2.13 does, then the subclasses'.
            if dispatch_key == DispatchKey.Python:
                tensors = self._get_overloaded_args(args, kwargs)
                if tensors:
                    if _compat.current_dispatch_mode() is not None:
                        result = _compat.dispatch_to_current_mode(self, args, kwargs)
                        if result is not NotImplemented:
                            return result
                    return _compat.dispatch_to_tensor_subclass(self, tensors, kwargs)
            return super().dispatch(dispatch_key, *args, **kwargs)


class TritonKernelWrapperMutation(_TritonKernelHOP):
    """``torch.ops.higher_order.user_triton_kernel_mutation``: one kernel launch, in place.

    What tracing records for ``kernel[grid](...)``: the kernel's key, its constant
    arguments and autotune configs (JSON strings), the grid per config and the tensors and
    scalars by parameter name. It returns nothing; the kernel writes its arguments.
    Functionalization turns it into :data:`triton_kernel_wrapper_functional`.

    Example (``f`` from :func:`wrap_triton`'s example)::

        >>> from torch_triton_hop import triton_kernel_wrapper_mutation
        >>> gm = make_fx(f)(torch.zeros(8))
        >>> [n.target for n in gm.graph.nodes if n.op == "call_function"][1] is triton_kernel_wrapper_mutation
        True
    """

    def __init__(self) -> None:
        super().__init__("user_triton_kernel_mutation", cacheable=True)

    def __call__(self, *, kernel: str, constant_args: str, configs: str, grids: list, kwargs: dict[str, Any]) -> None:
        return super().__call__(kernel=kernel, constant_args=constant_args, configs=configs, grids=grids, kwargs=kwargs)


class TritonKernelWrapperFunctional(_TritonKernelHOP):
    """``torch.ops.higher_order.user_triton_kernel_functional``: a launch without side effects.

    Functionalization (``torch.export``'s ``run_decompositions()``, AOTAutograd in
    ``torch.compile``, ``torch.func.functionalize``) replaces each mutation node by this
    one: it clones only the tensors the kernel writes (``tensors_to_clone``), launches on the
    clones and returns them. Under inductor the clones are removed where writing in place is
    safe.

    Example (``f`` from :func:`wrap_triton`'s example)::

        >>> gm = make_fx(torch.func.functionalize(f))(torch.zeros(8))
        >>> print(gm.code.strip())
        def forward(self, x_1):
            empty_like = torch.ops.aten.empty_like.default(x_1, pin_memory = False)
            add_one = torch.ops.higher_order.user_triton_kernel_functional(kernel = '...:add_one@...', constant_args = '{}', configs = '[]', grids = [1, 1, 1], kwargs = {'x_ptr': x_1, 'out_ptr': empty_like, 'n': 8, 'BLOCK': 16}, tensors_to_clone = ['out_ptr']);  x_1 = empty_like = None
            getitem = add_one[0];  add_one = None
            return getitem
    """

    def __init__(self) -> None:
        super().__init__("user_triton_kernel_functional", cacheable=True)

    def __call__(
        self,
        *,
        kernel: str,
        constant_args: str,
        configs: str,
        grids: list,
        kwargs: dict[str, Any],
        tensors_to_clone: list[str],
        shared_memory: list[str] | None = None,
    ) -> tuple[torch.Tensor, ...]:
        # shared_memory: groups of arguments that share memory in the user's program, each as
        # "a_ptr,b_ptr" (flat strings: export cannot serialise nested lists); left out when none.
        # See [Note: Arguments that share memory].
        extra = {"shared_memory": shared_memory} if shared_memory else {}
        return super().__call__(
            kernel=kernel,
            constant_args=constant_args,
            configs=configs,
            grids=grids,
            kwargs=kwargs,
            tensors_to_clone=tensors_to_clone,
            **extra,
        )


triton_kernel_wrapper_mutation = TritonKernelWrapperMutation()
triton_kernel_wrapper_functional = TritonKernelWrapperFunctional()
_compat.mark_side_effectful(triton_kernel_wrapper_mutation)

# Called (no arguments) before each functionalization of a launch. The package's top level
# registers the inductor bridge here, so this module need not know about inductor.
functionalization_hooks: list[Any] = []


# --- launching -------------------------------------------------------------------------

def _select_grid(configs: list, grids: list) -> Any:
    """A triton grid callable that picks the grid traced for the config the autotuner chose.

    triton calls it with the kernel's bound arguments, which hold a config's kwargs but not
    its num_warps / num_stages; the traced grids depend on the same kwargs only.
    """
    if all(g == grids[0] for g in grids):
        return grids[0]
    keyed = [(c["kwargs"], g) for c, g in zip(configs, grids)]

    def grid(meta: dict[str, Any]) -> Any:
        for kwargs, g in keyed:
            if all(meta.get(name) == value for name, value in kwargs.items()):
                return g
        raise RuntimeError(f"wrap_triton: the autotuner chose a config that was not traced: {meta}")

    return grid


class _Launcher:
    """What `launch` runs for one (kernel, configs) pair; built once, cached in the side table."""

    def __init__(self, kernel: Any, configs: list[dict[str, Any]], grid_index: int | None = None,
                 reset_to_zero: tuple[str, ...] = (), key: tuple[str, ...] = ()) -> None:
        self.kernel = kernel            # a base kernel, or triton.autotune over the traced configs
        self.configs = configs          # the configs `kernel` chooses from (one: no choice)
        self.grid_index = grid_index    # which traced grid goes with the single config
        self.reset_to_zero = reset_to_zero  # interpreter: zeroed where the GPU autotuner would have benchmarked
        self.key = key
        self.seen_keys: set[tuple[Any, ...]] = set()


def _launcher(kernel_key: str, configs_json: str) -> _Launcher:
    def build() -> _Launcher:
        kernel = kernel_side_table.get_kernel(kernel_key)
        configs = kernel_side_table.get_configs(configs_json)
        base = base_kernel(kernel)
        autotuner = _outermost_autotuner(kernel)
        if _compat.autotuning_unavailable(base) and len(configs) > 1:
            # [Note: Autotuned kernels on the interpreter]
            # TL;DR: one config runs, the first that survived pruning unless
            # wrap_triton(kernel, interpreter_config=...) names another (an index into the
            # traced configs, or a dict matching a config's kwargs / launch options).
            # Context: triton's autotuner benchmarks on a GPU driver, which the interpreter
            # lacks. On a GPU the autotuner zeroes reset_to_zero arguments after it has
            # benchmarked (once per autotune key), then launches; we do the same for the
            # chosen config. restore_value only undoes benchmark runs, of which there are none.
            index = _interpreter_config_index(kernel, configs)
            options = _compat.autotuner_options(autotuner) if autotuner is not None else {}
            return _Launcher(base, [configs[index]], index, tuple(options.get("reset_to_zero") or ()),
                             tuple(options.get("key") or ()))
        if len(configs) <= 1:
            return _Launcher(base, configs, 0)
        return _Launcher(_autotuned_over(kernel, base, configs), configs)

    return kernel_side_table.cached_launcher((kernel_key, configs_json), build)


def _interpreter_config_index(kernel: Any, configs: list[dict[str, Any]]) -> int:
    choice = getattr(kernel, "interpreter_config", None)
    if choice is None:
        return 0
    if isinstance(choice, int) and not isinstance(choice, bool):
        if 0 <= choice < len(configs):
            return choice
    elif isinstance(choice, dict):
        for index, config in enumerate(configs):
            fields = {**config["kwargs"], **{k: v for k, v in config.items() if k != "kwargs"}}
            if all(fields.get(name) == value for name, value in choice.items()):
                return index
    raise_unsupported(
        f"interpreter_config={choice!r} names none of the {len(configs)} configs that survived pruning", configs,
        fix="Pass an index below the number of configs, or a dict of a config's kwargs (and num_warps, ...)",
    )


def _outermost_autotuner(kernel: Any) -> Any:
    return next((layer for layer in kernel_layers(kernel) if isinstance(layer, _compat.Autotuner)), None)


def _autotuned_over(kernel: Any, base: Any, configs: list[dict[str, Any]], *, own_benchmark: bool = True) -> Any:
    """``triton.autotune`` over `configs` (as graph nodes hold them), keeping the kernel's own
    key / restore_value / reset_to_zero (and its do_bench unless `own_benchmark` is False:
    inductor benchmarks with its own)."""
    autotuner = _outermost_autotuner(kernel)
    options = _compat.autotuner_options(autotuner) if autotuner is not None else {"key": []}
    if not own_benchmark:
        options.pop("do_bench", None)
    return triton.autotune([_compat.config_from_fields(c) for c in configs], **options)(base)


def launcher_for_inductor(kernel_key: str, configs_json: str, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """What inductor compiles for a launch, and the arguments it passes.

    The base JITFunction (heuristics were evaluated at trace time, their values are in the
    arguments or the configs), or ``triton.autotune`` over the traced configs with the
    original key / restore_value / reset_to_zero: inductor benchmarks those configs as it
    does for torch's own path. ``num_warps`` / ``num_stages`` given at call time (not kernel
    parameters) become a one-config autotuner, since inductor reads launch options from
    configs only.
    """
    configs = kernel_side_table.get_configs(configs_json)
    kernel = kernel_side_table.get_kernel(kernel_key)
    base = base_kernel(kernel)
    params = {p.name for p in _compat.kernel_params(base)}
    options = {k: kwargs[k] for k in ("num_warps", "num_stages") if k in kwargs and k not in params}
    args = {k: v for k, v in kwargs.items() if k not in options}

    def build() -> Any:
        if configs or options:
            fields = [{**options, **c} for c in configs] or [{"kwargs": {}, **options}]
            return _autotuned_over(kernel, base, fields, own_benchmark=False)
        return base

    cache_key = ("inductor", kernel_key, configs_json, tuple(sorted(options.items())))
    return kernel_side_table.cached_launcher(cache_key, build), args


def kernel_arguments(kwargs: dict[str, Any], constant_args: str, *, validate: bool = True) -> dict[str, Any]:
    """The kernel's arguments from a node's tensors and scalars and its constants: each
    TensorDescriptorSpec becomes a descriptor over the tensor of the same name. See
    [Note: Host-side tensor descriptors]; validate=False is for the analysis."""
    arguments = dict(kwargs)
    for name, value in kernel_side_table.get_constants(constant_args).items():
        if isinstance(value, TensorDescriptorSpec):
            value = _compat.tensor_descriptor(kwargs[name], value.block_shape, value.padding,
                                              value.round_f32_to_tf32, validate=validate)
        arguments[name] = value
    return arguments


def launch(*, kernel: str, constant_args: str, configs: str, grids: list, kwargs: dict[str, Any]) -> None:
    """Launch a kernel as a graph node describes it (what the dense HOP implementation runs)."""
    launcher = _launcher(kernel, configs)
    config_list = launcher.configs
    grids = [tuple(grids[i : i + 3]) for i in range(0, len(grids), 3)]
    all_args = kernel_arguments(kwargs, constant_args)
    if len(config_list) == 1:
        (config,) = config_list
        all_args.update(config["kwargs"])
        all_args.update({k: v for k, v in config.items() if k not in ("kwargs", *RECORDED_PRE_HOOK_FIELDS)})
        _compat.run_recorded_pre_hook(config, all_args)  # See [Note: Config pre_hooks the graph records]
        grid = grids[launcher.grid_index or 0]
    elif config_list:
        grid = _select_grid(config_list, grids)
    else:
        grid = grids[0]
    if launcher.reset_to_zero:  # See [Note: Autotuned kernels on the interpreter]
        key = tuple(all_args.get(k) for k in launcher.key) + tuple(
            str(v.dtype) for v in all_args.values() if isinstance(v, torch.Tensor))
        if key not in launcher.seen_keys:
            launcher.seen_keys.add(key)
            for name in launcher.reset_to_zero:
                all_args[name].zero_()
    # Positional where possible: triton's hooks (restore_value, reset_to_zero) read
    # named args, and older triton mishandles kwargs there (triton#5082).
    run = launcher.kernel
    positional = []
    for param in _compat.kernel_params(base_kernel(run) if not _compat.is_base_kernel(run) else run):
        if param.name not in all_args:
            break
        positional.append(all_args.pop(param.name))
    run[grid](*positional, **all_args)


# --- mutation HOP ----------------------------------------------------------------------

@triton_kernel_wrapper_mutation.py_impl(DispatchKey.CompositeExplicitAutograd)
def _mutation_dense(*, kernel, constant_args, configs, grids, kwargs):
    launch(kernel=kernel, constant_args=constant_args, configs=configs, grids=grids, kwargs=kwargs)


@triton_kernel_wrapper_mutation.py_impl(DispatchKey.ADInplaceOrView)
def _mutation_bumps_versions(*, kernel, constant_args, configs, grids, kwargs):
    # See [Note: Launches bump version counters]: as torch's in-place ops, here and then below.
    bump_names(kwargs, tensors_written(kernel, constant_args, configs, kwargs))
    with _compat.dispatch_below_ad_inplace_or_view():
        return triton_kernel_wrapper_mutation(kernel=kernel, constant_args=constant_args, configs=configs,
                                              grids=grids, kwargs=kwargs)


@triton_kernel_wrapper_mutation.py_impl(_compat.FakeTensorMode)
def _mutation_fake(mode, *, kernel, constant_args, configs, grids, kwargs):
    return None


def _refuse_meta_among_real(kernel: str, kwargs: dict[str, Any]) -> None:
    """The Meta rule is chosen when any tensor argument is on meta: a launch on meta tensors
    computes nothing, but one whose other tensors have data must run. Capture refuses such a
    launch; this catches a graph run on such inputs. See [Note: Launch checks]."""
    devices = {name: v.device for name, v in kwargs.items() if isinstance(v, torch.Tensor)}
    if any(device.type != "meta" for device in devices.values()):
        from ._hopifier import device_error  # _hopifier imports this module

        raise_unsupported(**device_error(kernel_key_name(kernel), devices, interpreted=True))


@triton_kernel_wrapper_mutation.py_impl(DispatchKey.Meta)
def _mutation_meta(*, kernel, constant_args, configs, grids, kwargs):
    _refuse_meta_among_real(kernel, kwargs)
    return None


def _trace(mode: Any, hop: Any, node_kwargs: dict[str, Any]) -> Any:
    with _compat.disable_proxy_modes_tracing():
        out = hop(**node_kwargs)
    # A symbolic scalar specialized to a number is recorded as the number, as make_fx records
    # an op's arguments: mamba's dropout_p (a float input under dynamic=True, compared with 0.0
    # in the backward) kept its `.item()` node, which inductor then could not lower.
    proxy_kwargs = pytree.tree_map(lambda value: mode.tracer.unwrap_proxy(_compat.concrete_scalar(value)),
                                   node_kwargs)
    name = kernel_key_name(node_kwargs["kernel"]).rpartition(".")[2] or hop.__name__
    proxy = mode.tracer.create_proxy("call_function", hop, (), proxy_kwargs, name=name)
    if out is None:
        # The mutation HOP returns nothing. torch.export's verifier wants a "val" on every
        # call_function node; export fills it in on the top-level graph only, so a launch
        # inside a torch.cond / while_loop branch was refused ("missing val field").
        proxy.node.meta["val"] = None
    return _compat.track_tensor_tree(out, proxy, constant=None, tracer=mode.tracer)


@triton_kernel_wrapper_mutation.py_impl(_compat.ProxyTorchDispatchMode)
def _mutation_proxy(mode, *, kernel, constant_args, configs, grids, kwargs):
    _trace(mode, triton_kernel_wrapper_mutation,
           dict(kernel=kernel, constant_args=constant_args, configs=configs, grids=grids, kwargs=kwargs))
    return None


# [Note: Launches under selective activation checkpointing]
# TL;DR: run eagerly, a launch always runs, in the forward and in the recomputation, is never
# cached, and bumps the version counters of the tensors it writes; traced by torch.compile,
# it goes through the checkpoint mode like any op, which tags it with the policy.
# Context: selective checkpointing (torch.utils.checkpoint's context_fn) runs the region under
# a caching mode, then recomputes under a cached one, each asking its policy whether an op's
# outputs are saved or recomputed. A launch's effect is a write, not an output: torch's own
# HOP lets the policy cache its None and skips the launch when recomputing, so whatever it
# wrote is missing from the recomputed values. A version bump makes torch raise its own
# "cached tensor has been mutated" error where a kernel writes a tensor the policy saved, as
# an in-place torch op would, instead of writing it a second time.
def _mutation_under_checkpoint(mode, *, kernel, constant_args, configs, grids, kwargs):
    node_kwargs = dict(kernel=kernel, constant_args=constant_args, configs=configs, grids=grids, kwargs=kwargs)
    if _compat.checkpoint_is_compiling(triton_kernel_wrapper_mutation, (), node_kwargs):
        return mode.__torch_dispatch__(triton_kernel_wrapper_mutation, [], (), node_kwargs)
    triton_kernel_wrapper_mutation(**node_kwargs)  # its version bump came before the mode, at ADInplaceOrView
    return None


def _functional_under_checkpoint(mode, **node_kwargs):
    return mode.__torch_dispatch__(triton_kernel_wrapper_functional, [], (), node_kwargs)


for _mode in _compat.checkpoint_modes():
    triton_kernel_wrapper_mutation.py_impl(_mode)(_mutation_under_checkpoint)
    triton_kernel_wrapper_functional.py_impl(_mode)(_functional_under_checkpoint)


def _under_a_transform(transform: str, fix: str) -> Any:
    def refuse(interpreter: Any, **node_kwargs: Any) -> None:
        name = kernel_key_name(node_kwargs["kernel"]).rpartition(".")[2]
        raise_unsupported(f"a launch of {name} under {transform}",
                          why="A Triton kernel runs on the tensors it is given: it has no batching rule and no "
                              "derivative the package could know", fix=fix)
    return refuse


# torch.func's transforms other than functionalize (which has its own rules above): without
# these, dispatch fails with a KeyError naming the transform.
for _transform, _name, _fix in (
        ("Vmap", "torch.func.vmap", "Launch it outside vmap, on the whole batch or in a loop over it"),
        ("Grad", "torch.func.grad (or vjp, jacrev)",
         "Give it a derivative (a torch.autograd.Function whose backward launches your backward kernel) and "
         "compute gradients with torch.autograd.grad or .backward(), not torch.func: torch.func runs a "
         "Function's backward under the transform too, where its launches are refused as well"),
        ("Jvp", "torch.func.jvp (or jacfwd)",
         "Give it a derivative: a torch.autograd.Function with a jvp, or compute it outside the transform")):
    for _hop in (triton_kernel_wrapper_mutation, triton_kernel_wrapper_functional):
        _compat.register_transform_rule(_hop, _transform, _under_a_transform(_name, _fix))


def tensors_accessed(kernel: str, constant_args: str, configs: str, kwargs: dict[str, Any]) -> Any:
    """The tensor arguments the kernel reads and writes (``.reads`` / ``.writes``, parameter order).

    The one place functionalization and inductor ask; see _analysis.identify_accessed_tensors.
    """
    triton_kernel = kernel_side_table.get_kernel(kernel)
    all_args = kernel_arguments(kwargs, constant_args, validate=False)
    config_list = kernel_side_table.get_configs(configs)
    if config_list:
        # Any config: the written set does not depend on the config (constexpr branches
        # on a config value are rare; the analysis falls back safely where it cannot tell).
        all_args = {**all_args, **config_list[0]["kwargs"]}
        _compat.set_block_shapes(config_list[0].get("block_shapes") or {}, all_args)
    result = identify_accessed_tensors(triton_kernel, all_args)
    zeroed = {name for config in config_list for name in config.get("zeroed", ())}
    if zeroed - set(result.writes):  # a pre_hook's zero_() writes too: See [Note: Config pre_hooks the graph records]
        written = set(result.writes) | zeroed
        result = dataclasses.replace(result, writes=[name for name in kwargs if name in written])
    trace_accesses(kernel, result)
    return result


def tensors_written(kernel: str, constant_args: str, configs: str, kwargs: dict[str, Any]) -> list[str]:
    """Names of the tensor arguments the kernel writes, in parameter order."""
    return tensors_accessed(kernel, constant_args, configs, kwargs).writes


# [Note: Arguments that share memory]
# TL;DR: when tensor arguments share storage and the kernel writes one of them, they are
# given views of ONE copy of the memory they span, in the same positions, so the kernel
# reads through one alias what it wrote through another, as it does eagerly.
# Context: functionalization clones written tensors; cloning each alias separately would
# split the memory and lose writes (Liger's in-place RMSNorm backward passes one tensor as
# both dY and dX). At functionalization we take one view spanning every member's elements
# (as_strided over the storage), unwrap it and rebuild each member as a view of it with its
# own sizes, strides and offset, so the aliasing is visible to the functional HOP. Its
# dense / fake rules clone per storage group (one copy, views of it) instead of per tensor,
# and the results are written back through each written member. Arguments the kernel
# neither reads nor writes are left alone. Members of other dtypes (an fp16 view of fp32
# memory, a kernel reinterpreting bits) are views of the copy reinterpreted as their dtype.
# The span is counted in elements of the widest member's dtype, rounded outward to whole
# elements, so every member starts at a whole element of its own dtype within it. A member
# of the span's width is placed, then reinterpreted (as_strided, then view(dtype)); a
# narrower one is the whole span reinterpreted, then placed: a view of another width is only
# possible of contiguous memory, and inductor makes one (an eager call, whose result it
# treats as a buffer of its own) correctly only of a fresh copy, so such a group is never
# written in place (see [Note: Reinplacing functional launches]).


def _extent(t: torch.Tensor) -> Any:
    """Elements of storage, from storage_offset, that `t` can touch."""
    if any(s == 0 for s in t.size()):
        return 0
    return 1 + sum((s - 1) * st for s, st in zip(t.size(), t.stride()))


def alias_groups(kwargs: dict[str, Any], involved: set[str]) -> list[list[str]]:
    """Names of tensor arguments that share storage, for groups with a member in `involved`."""
    groups: dict[int, list[str]] = {}
    for name, value in kwargs.items():
        if isinstance(value, torch.Tensor):
            groups.setdefault(_compat.storage_identity(value), []).append(name)
    return [names for names in groups.values() if len(names) > 1 and involved & set(names)]


def parse_shared_memory(shared_memory: Any) -> list[list[str]]:
    return [group.split(",") for group in (shared_memory or ())]


def storage_span(tensors: list[torch.Tensor]) -> tuple[Any, Any, int]:
    """The storage `tensors` touch: [lo, hi) in elements of the widest one's dtype (rounded
    outward) from the start of their storage, and that tensor's index."""
    widest = max(range(len(tensors)), key=lambda i: tensors[i].element_size())
    unit = tensors[widest].element_size()
    lo = min(t.storage_offset() * t.element_size() for t in tensors) // unit
    hi = -(-max((t.storage_offset() + _extent(t)) * t.element_size() for t in tensors) // unit)
    return lo, hi, widest


def member_offset(t: torch.Tensor, lo: Any, unit: int) -> Any:
    """Where `t` starts, in its own elements, in a span of its storage from element `lo` of `unit` bytes."""
    return (t.storage_offset() * t.element_size() - lo * unit) // t.element_size()


def member_view(span: torch.Tensor, lo: Any, t: torch.Tensor) -> torch.Tensor:
    """`t` as a view of `span`, a 1-d tensor holding t's storage from element `lo` on."""
    offset = span.storage_offset() * span.element_size() // t.element_size() + member_offset(t, lo, span.element_size())
    if t.element_size() == span.element_size():
        return torch.as_strided(span, t.size(), t.stride(), offset).view(t.dtype)
    return torch.as_strided(span.view(t.dtype), t.size(), t.stride(), offset)


def clone_written(kwargs: dict[str, Any], tensors_to_clone: list[str], shared_memory: Any = None) -> dict[str, Any]:
    """The launch's arguments with each written tensor replaced by a copy (same strides).

    The members of each shared_memory group get views of one copy of their common span.
    Other tensors are copied one by one, even if they are one tensor in the graph: in a
    functional graph two equal values may be one node (CSE merges two torch.zeros), which
    says nothing about the user's program. See [Note: Arguments that share memory].
    """
    result = dict(kwargs)
    grouped: set[str] = set()
    for names in parse_shared_memory(shared_memory):
        tensors = [kwargs[n] for n in names]
        lo, hi, widest = storage_span(tensors)
        copy = torch.as_strided(tensors[widest], (hi - lo,), (1,), lo).clone()
        for name, t in zip(names, tensors):
            result[name] = member_view(copy, lo, t)
        grouped.update(names)
    for name in tensors_to_clone:
        if name not in grouped:
            result[name] = _compat.clone_preserve_strides(kwargs[name])
    return result


def _share_memory_exactly(ctx: Any, kwargs: dict[str, Any], unwrapped: dict[str, Any], accessed: Any,
                          kernel: str, declared: Any) -> tuple[dict[str, Any], list[str]]:
    """Unwrapped arguments in which aliases of a written tensor are views of one tensor, and
    the groups as the functional HOP's shared_memory.

    `declared` is None for a launch seen first (the mutation HOP: storage says what aliases
    in the user's program), else the groups an earlier functionalization recorded.
    """
    statically_known_true = _compat.statically_known_true
    involved = set(accessed.reads) | set(accessed.writes)
    if declared is None:
        groups = [[n for n in g if n in involved]  # untouched arguments never block anything
                  for g in alias_groups(kwargs, set(accessed.writes)) if len(involved & set(g)) > 1]
    else:
        groups = parse_shared_memory(declared)
    if not groups:
        return unwrapped, []
    unwrapped = dict(unwrapped)
    for names in groups:
        if len({_compat.storage_identity(unwrapped[n]) for n in names}) > 1:
            # torch.func.functionalize(remove="mutations_and_views"): each view is a copy of
            # its own below functionalization, so no span of one memory holds the members.
            raise_unsupported(
                f"kernel {kernel_key_name(kernel)!r}: arguments {names} are views of one tensor and the kernel "
                "writes one of them, where each view is a copy of its own (torch.func.functionalize with "
                "remove='mutations_and_views')",
                why="The kernel reads through one view what it writes through another; separate copies cannot "
                    "hold what it does",
                fix="Use torch.func.functionalize(f) (remove='mutations', the default), or pass the kernel one "
                    "tensor and offsets into it",
            )
        tensors = [kwargs[n] for n in names]
        lo, hi, widest = storage_span(tensors)
        storage = unwrapped[names[widest]].untyped_storage()
        if len({t.element_size() for t in tensors}) > 1 and statically_known_true(
                hi * tensors[widest].element_size() > storage.nbytes()):
            raise_unsupported(
                f"kernel {kernel_key_name(kernel)!r}: arguments {names} share memory that ends within an element of "
                f"the widest one's dtype ({tensors[widest].dtype}) and the kernel writes one of them",
                why="their common memory is copied in whole elements of the widest dtype",
                fix="Allocate the memory with a size that is a multiple of the widest dtype's size",
            )
        with _compat.functional_ops_context(ctx):
            span_view = torch.as_strided(tensors[widest], (hi - lo,), (1,), lo)
        span = ctx.unwrap_tensors(span_view)
        with ctx.redispatch_to_next():
            for name, t in zip(names, tensors):
                unwrapped[name] = member_view(span, lo, t)
    return unwrapped, [",".join(names) for names in groups]


def _several_elements_in_one_place(t: torch.Tensor) -> bool:
    """Whether two elements of `t` are one memory location for certain: a dimension of stride 0
    and more than one element (an expand()), what torch's has_internal_overlap calls YES."""
    return any(_compat.statically_known_true(stride == 0) and not _compat.statically_known_true(size <= 1)
               for size, stride in zip(t.size(), t.stride()))


def _refuse_writes_to_overlapping(kernel: str, kwargs: dict[str, Any], written: list[str],
                                  fallback_reason: str | None) -> None:
    """Functionalization replaces what a launch writes by a new value of each written tensor,
    and writes that value back element by element: where elements share memory, eager's last
    store is not what comes back. torch refuses an in-place op there (`x.expand(4).add_(1)`:
    "more than one element of the written-to tensor refers to a single memory location")."""
    overlapping = [name for name in written if _several_elements_in_one_place(kwargs[name])]
    if overlapping:
        name = overlapping[0]
        unsure = (f" (every tensor argument is taken as written: {fallback_reason}; if it is only read, declare "
                  "what the kernel writes with wrap_triton(kernel, writes=[...]))" if fallback_reason else "")
        raise_unsupported(
            f"kernel {kernel_key_name(kernel)!r} writes argument {name!r}{unsure}, in which several elements are one "
            f"memory location (sizes {list(kwargs[name].size())}, strides {list(kwargs[name].stride())}: an expand() "
            "or a stride-0 view)",
            why="torch.compile, torch.func.functionalize and AOTAutograd record the write as a new value for each "
                "element, which cannot say what the kernel's stores to one location leave there; torch refuses an "
                "in-place op on such a tensor too",
            fix=f"Pass a tensor with a memory location per element as {name!r} (the .contiguous() or .clone() of "
                "this one, and read the result from that), or the tensor the expand() was taken of",
        )


def other_memory_error(kernel: str, accessed: TensorAccesses) -> dict[str, Any] | None:
    """raise_unsupported's arguments for a launch that may write or read memory that is none of
    its arguments (a pointer made from an integer, as grouped GEMM's table of data_ptr()s
    gives); None for one that accesses its arguments only. A functional program orders, copies
    and reuses memory by what each op reads and writes: such an access is invisible there (a
    read of that tensor moved before the launch; an in-place update before the launch written
    back only when the graph ends, so the kernel reads the old values). Eager launches and
    graphs that keep the launch as written (make_fx, torch.export) run it in program order;
    under torch.compile without fullgraph=True the graph breaks there and the launch runs
    eagerly (_dynamo). A custom_op around the launch is no way out: functionalization runs it
    on copies of what it mutates."""
    if accessed.other_memory_written:
        what = accessed.fallback_reason
    elif accessed.other_memory_read:
        what = "; ".join(accessed.other_memory_read) + ": the kernel may read memory that is none of its arguments"
    else:
        return None
    return dict(
        what=f"kernel {kernel_key_name(kernel)!r}: {what}",
        why="torch.compile, torch.func.functionalize and AOTAutograd order, copy and reuse tensors by what each "
            "launch reads and writes among its arguments: other code's accesses to that memory could move across "
            "the launch (an in-place update made before it is written back only when the compiled graph ends)",
        fix="Compile without fullgraph=True: torch.compile then breaks the graph at this launch and runs it "
            "eagerly, in program order (as it runs a function decorated with @torch.compiler.disable). If each "
            "such pointer is one of the kernel's own tensor arguments, declare what it writes: "
            "wrap_triton(kernel, writes=[...]) (a declaration is trusted)",
    )


def _functionalized_launch(ctx: Any, node: dict[str, Any], tensors_to_clone: list[str] | None,
                           shared_memory: Any = None) -> tuple[list, Any]:
    """The functional HOP called below functionalization: (written names, its outputs)."""
    for hook in functionalization_hooks:
        hook()
    kwargs = node["kwargs"]
    unwrapped = ctx.unwrap_tensors(kwargs)
    accessed = tensors_accessed(node["kernel"], node["constant_args"], node["configs"], unwrapped)
    written = accessed.writes if tensors_to_clone is None else tensors_to_clone
    if error := other_memory_error(node["kernel"], accessed):
        raise_unsupported(**error)
    _refuse_writes_to_overlapping(node["kernel"], unwrapped, written,
                                  None if accessed.declared else accessed.fallback_reason)
    declared = shared_memory if tensors_to_clone is not None else None
    unwrapped, groups = _share_memory_exactly(ctx, kwargs, unwrapped, accessed, node["kernel"], declared)
    with ctx.redispatch_to_next():
        outputs = triton_kernel_wrapper_functional(**{**node, "kwargs": unwrapped}, tensors_to_clone=written,
                                                   shared_memory=groups)
    return written, outputs


@triton_kernel_wrapper_mutation.py_functionalize_impl
def _mutation_functionalize(ctx, *, kernel, constant_args, configs, grids, kwargs):
    node = dict(kernel=kernel, constant_args=constant_args, configs=configs, grids=grids, kwargs=kwargs)
    written, outputs = _functionalized_launch(ctx, node, None)
    for name, output in zip(written, outputs):
        original = kwargs[name]
        ctx.replace(original, output)
        if original.requires_grad and torch.is_grad_enabled():  # See [Note: Launches bump version counters]
            ctx.mark_mutation_hidden_from_autograd(original)  # so AOTAutograd keeps it in the graph
        ctx.commit_update(original)
        ctx.sync(original)
    return None


# --- functional HOP --------------------------------------------------------------------

@triton_kernel_wrapper_functional.py_impl(DispatchKey.CompositeExplicitAutograd)
def _functional_dense(*, kernel, constant_args, configs, grids, kwargs, tensors_to_clone, shared_memory=None):
    kwargs = clone_written(kwargs, tensors_to_clone, shared_memory)
    launch(kernel=kernel, constant_args=constant_args, configs=configs, grids=grids, kwargs=kwargs)
    return tuple(kwargs[name] for name in tensors_to_clone)


@triton_kernel_wrapper_functional.py_impl(_compat.FakeTensorMode)
def _functional_fake(mode, *, kernel, constant_args, configs, grids, kwargs, tensors_to_clone, shared_memory=None):
    with mode:
        copies = clone_written(kwargs, tensors_to_clone, shared_memory)
        return tuple(copies[name] for name in tensors_to_clone)


@triton_kernel_wrapper_functional.py_impl(DispatchKey.Meta)
def _functional_meta(*, kernel, constant_args, configs, grids, kwargs, tensors_to_clone, shared_memory=None):
    _refuse_meta_among_real(kernel, kwargs)
    copies = clone_written(kwargs, tensors_to_clone, shared_memory)
    return tuple(copies[name] for name in tensors_to_clone)


# [Note: A span is taken of its base, not of a view]
# TL;DR: in a traced graph, the as_strided that gives a shared_memory group its span reads
# the storage's base node, not the member view it was called on.
# Context: functionalization records `torch.as_strided(member, span...)` (see [Note:
# Arguments that share memory]) as an op on the member, e.g. as_strided(buf[:n], (2n,), ...)
# for `k(buf[:n], buf[n:])`. That is the same view of the same storage as as_strided(buf,
# ...): as_strided's offset counts from the storage's start, whatever view it is called on.
# But inductor computes a slice of an intermediate it has not stored as a buffer of the
# slice's own (torch 2.11-2.13: `torch.as_strided((x * 1)[:4], (8,), (1,), 0)` compiles to
# a read past a 4-element buffer), so the launch wrote a copy of half of `buf` and the rest
# of the program read `buf` as it was. Rebased on `buf`, inductor stores `buf` whole and
# the launch writes it. Only views of the same dtype are looked through (as_strided counts
# in elements of its input's dtype); where a view of another dtype stands between, inductor
# refuses the launch (see [Note: Groups inductor cannot keep in one memory]).


def _view_base(node: Any) -> Any:
    """The node `node` views, through views of the same storage and dtype (itself if none)."""
    while (source_node := view_source(node)) is not None:
        source, value = node_value(source_node), node_value(node)
        if not (isinstance(source, torch.Tensor) and isinstance(value, torch.Tensor) and source.dtype == value.dtype
                and _compat.storage_identity(source) == _compat.storage_identity(value)):
            break
        node = source_node
    return node


def _rebase_spans(tracer: Any, kwargs: dict[str, Any]) -> None:
    """See [Note: A span is taken of its base, not of a view]."""
    for value in kwargs.values():
        if not isinstance(value, torch.Tensor):
            continue
        node = getattr(tracer.unwrap_proxy(value), "node", None)  # None: a tensor the graph does not hold
        while view_source(node) is not None:
            offset = node.args[3] if len(node.args) > 3 else node.kwargs.get("storage_offset")
            if node.target is torch.ops.aten.as_strided.default and offset is not None:  # else: the view's own
                node.update_arg(0, _view_base(node.args[0]))
            node = node.args[0]


@triton_kernel_wrapper_functional.py_impl(_compat.ProxyTorchDispatchMode)
def _functional_proxy(mode, *, kernel, constant_args, configs, grids, kwargs, tensors_to_clone, shared_memory=None):
    node = dict(kernel=kernel, constant_args=constant_args, configs=configs, grids=grids, kwargs=kwargs,
                tensors_to_clone=tensors_to_clone)
    if shared_memory:
        node["shared_memory"] = shared_memory
        _rebase_spans(mode.tracer, kwargs)
    return _trace(mode, triton_kernel_wrapper_functional, node)


@triton_kernel_wrapper_functional.py_functionalize_impl
def _functional_functionalize(ctx, *, kernel, constant_args, configs, grids, kwargs, tensors_to_clone,
                              shared_memory=None):
    node = dict(kernel=kernel, constant_args=constant_args, configs=configs, grids=grids, kwargs=kwargs)
    _, outputs = _functionalized_launch(ctx, node, list(tensors_to_clone), shared_memory)
    return ctx.wrap_tensors(outputs)


# A launch is the same whatever autograd, autocast or the Python TLS keys say: let them
# fall through to the rules above.
_FALLTHROUGH_KEYS = [
    DispatchKey.PythonDispatcher,
    DispatchKey.PythonTLSSnapshot,
    DispatchKey.BackendSelect,
    DispatchKey.AutocastCPU,
    DispatchKey.AutocastCUDA,
    DispatchKey.AutogradCPU,
    DispatchKey.AutogradCUDA,
]
for _hop in (triton_kernel_wrapper_mutation, triton_kernel_wrapper_functional):
    for _key in _FALLTHROUGH_KEYS:
        _hop.fallthrough(_key)
triton_kernel_wrapper_functional.fallthrough(DispatchKey.ADInplaceOrView)  # it writes only its own copies


def check_kernels(program: Any) -> list[str]:
    """Resolve every kernel a program launches now, rather than at its first call.

    ``program`` is an ``ExportedProgram`` (e.g. from ``torch.export.load``) or an
    ``fx.GraphModule``. Raises ``KernelResolutionError`` naming the first kernel that cannot
    be found (module not imported and not allowed, or source changed / program edited), or
    the first launch whose constants or autotune configs are malformed; returns the kernel keys.

    Raises:
        KernelResolutionError: a kernel's module is neither imported nor allowed (see
            :func:`allow_kernel_modules`), it has no kernel with the saved digest (its source,
            the @triton.jit functions it calls, the module constants they read and its autotune
            configs), the kernel was defined in ``__main__`` or a local scope of another
            process, or a launch's constants or configs are not what a traced launch records.

    Example (``f`` from :func:`wrap_triton`'s example)::

        >>> import os, tempfile, torch_triton_hop
        >>> class AddOne(torch.nn.Module):
        ...     def forward(self, x):
        ...         return f(x)
        >>> path = os.path.join(tempfile.mkdtemp(), "add_one.pt2")
        >>> torch.export.save(torch.export.export(AddOne(), (torch.zeros(8),)), path)
        >>> ep = torch.export.load(path)
        >>> torch_triton_hop.check_kernels(ep)
        ['...:add_one@...']
    """
    module = getattr(program, "graph_module", program)
    keys = []
    for graph_module in module.modules():
        graph = getattr(graph_module, "graph", None)
        if not isinstance(graph, torch.fx.Graph):
            continue
        for node in graph.nodes:
            if node.op == "call_function" and node.target in (triton_kernel_wrapper_mutation,
                                                              triton_kernel_wrapper_functional):
                kernel_side_table.get_kernel(node.kwargs["kernel"])
                kernel_side_table.get_constants(node.kwargs["constant_args"])
                kernel_side_table.get_configs(node.kwargs["configs"])
                keys.append(node.kwargs["kernel"])
    return list(dict.fromkeys(keys))
