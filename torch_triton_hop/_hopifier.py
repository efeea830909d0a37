"""TritonHOPifier: turns ``kernel[grid](*args, **kwargs)`` into one mutation-HOP call.

The orchestration (autotune configs, heuristics, pruning, grids, constexpr
specialisation, constants) is written once in :class:`TritonHOPifier`; how a value
is read, a user function called or the HOP emitted differs between front ends and
lives in subclasses: :class:`TracingTritonHOPifier` for make_fx and non-strict
export (plain Python values), ``_dynamo.DynamoTritonHOPifier`` for Dynamo.
"""

from __future__ import annotations

import collections.abc
import contextvars
import inspect
import operator
import json
import logging
import math
from typing import Any, Callable, NoReturn

import torch

from . import _compat
from ._hops import triton_kernel_wrapper_mutation
from ._side_table import TensorDescriptorSpec, kernel_layers, kernel_side_table, unwrap_user_object
from .errors import raise_unsupported, warn_at_user_code

log = logging.getLogger(__name__)

__all__ = ["TritonHOPifier", "TracingTritonHOPifier", "tracing_hopifier"]

# Launch options triton takes at call time or from a Config; a kernel parameter may share the name.
LAUNCH_OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg")


class TritonHOPifier:
    """Rewrites a call of a (possibly autotuned / heuristics) triton kernel into a HOP call.

    Subclasses implement the front-end hooks: :meth:`is_callable`, :meth:`call_grid`,
    :meth:`call_user_defined_fn`, :meth:`as_python_constant`, :meth:`check_grid`,
    :meth:`specialize_symbolic` and :meth:`call_HOP`. :meth:`raise_unsupported` may be
    overridden to raise a front end's own exception type.

    Two front ends subclass it: :class:`TracingTritonHOPifier` (make_fx and non-strict
    export, where values are real, fake or SymInts) and the Dynamo front end (torch.compile
    and strict export, where values are Dynamo variables). The orchestration (autotune,
    heuristics, pruning, grids, launch checks) is shared; :meth:`call_triton_kernel` and
    :meth:`call_run` are its entry points.

    Example: a front end that records each launch it captures::

        >>> from torch_triton_hop import TracingTritonHOPifier, TritonHOPifier
        >>> class Recording(TracingTritonHOPifier):
        ...     launches = []
        ...     def call_HOP(self, **node):
        ...         self.launches.append(node["kernel"].split("@")[0])
        ...         return super().call_HOP(**node)
        >>> issubclass(Recording, TritonHOPifier)
        True
        >>> def g(x):
        ...     out = torch.empty_like(x)
        ...     Recording().call_triton_kernel(add_one, (1,), (x, out, x.numel()), {"BLOCK": 16})
        ...     return out
        >>> _ = make_fx(g)(torch.zeros(8))
        >>> Recording.launches
        ['...:add_one']
    """

    # --- hooks -----------------------------------------------------------------------
    def raise_unsupported(self, what: str, got: Any = None, *, fix: str = "", why: str = "") -> NoReturn:
        raise_unsupported(what, got, fix=fix, why=why)

    def is_callable(self, value: Any) -> bool:
        raise NotImplementedError

    def call_grid(self, grid: Any, meta: dict[str, Any]) -> Any:
        raise NotImplementedError

    def is_exporting(self) -> bool:
        """Whether the graph is for torch.export (a program the user may save and load elsewhere)."""
        return torch.compiler.is_exporting()

    def python_function_of(self, grid: Any) -> Any:
        """The Python callable behind a callable grid, for a look at its signature; None where
        the front end does not hold one."""
        return grid

    def call_user_defined_fn(self, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError

    def as_python_constant(self, value: Any, what: str) -> Any:
        """A heuristic's or pruning function's result as a plain Python value."""
        raise NotImplementedError

    def check_grid(self, grid: Any) -> tuple[Any, ...]:
        raise NotImplementedError

    def grid_value(self, size: Any) -> Any:
        """A grid size that check_grid returned as an int or a SymInt."""
        return size

    def specialize_symbolic(self, value: Any) -> Any:
        raise NotImplementedError

    def is_graphable(self, value: Any) -> bool:
        raise NotImplementedError

    def is_host_tensor_descriptor(self, value: Any) -> bool:
        return _compat.is_host_tensor_descriptor(value)

    def is_none(self, value: Any) -> bool:
        return value is None

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, torch.Tensor)

    def numpy_type(self, value: Any) -> str | None:
        """The numpy type of a value triton takes for no parameter (np.int64, an ndarray), else None."""
        return numpy_type(value)

    def split_tensor_descriptor(self, value: Any, name: str, kernel_name: str) -> tuple[Any, TensorDescriptorSpec]:
        """A host-side TensorDescriptor as (its tensor, what else it holds).

        See [Note: Host-side tensor descriptors]."""
        fields = _compat.tensor_descriptor_fields(value)
        base = fields["base"]
        if list(fields["shape"]) != list(base.shape) or list(fields["strides"]) != list(base.stride()):
            self.raise_unsupported(
                f"argument {name!r} of kernel {kernel_name!r} is a TensorDescriptor whose shape "
                f"{list(fields['shape'])} and strides {list(fields['strides'])} are not its tensor's",
                why="The graph records the tensor, and each launch rebuilds the descriptor from it",
                fix="Build it with TensorDescriptor.from_tensor(t, block_shape) from a tensor t that has that "
                "shape and those strides, e.g. base.as_strided(shape, strides)",
            )
        return base, TensorDescriptorSpec(tuple(int(self.specialize_symbolic(b)) for b in fields["block_shape"]),
                                          fields.get("padding", "zero"), bool(fields.get("round_f32_to_tf32")))

    def constant_value(self, value: Any) -> Any:
        """A non-graphable argument (None, a triton dtype, ...) as a plain Python value."""
        return value

    def call_HOP(self, *, kernel: str, constant_args: str, configs: str, grids: list, kwargs: dict) -> Any:
        raise NotImplementedError

    # --- orchestration ---------------------------------------------------------------
    def call_run(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``kernel.run(*args, grid=..., warmup=False, **kwargs)``."""
        if "grid" not in kwargs:
            self.raise_unsupported("kernel.run(...) was called without grid=", fix="Pass grid=(n,) or a callable")
        kwargs = dict(kwargs)
        grid = kwargs.pop("grid")
        if kwargs.pop("warmup", False):
            self.raise_unsupported("kernel.run(..., warmup=True) compiles without launching",
                                   why="A graph records launches", fix="Call it outside the traced code")
        return self.call_triton_kernel(kernel, grid, args, kwargs)

    def call_triton_kernel(self, kernel: Any, grid: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``kernel[grid](*args, **kwargs)`` as one mutation-HOP call."""
        layers = self._check_layers(unwrap_user_object(kernel))
        base = layers[-1]
        param_names = [p.name for p in _compat.kernel_params(base)]
        kernel_name = _compat.python_function(base).__name__
        if grid is None:
            self.raise_unsupported(**no_grid_error(kernel_name))
        if "num_ctas" in kwargs:
            # 1 is triton's default (triton's tutorials pass it); launches in a graph take no other.
            if self.as_python_constant(kwargs["num_ctas"], "num_ctas") != 1:
                self.raise_unsupported(
                    f"num_ctas passed at call time to kernel {kernel_name!r}", kwargs["num_ctas"],
                    fix="Set num_ctas in a triton.Config of @triton.autotune instead",
                )
            kwargs = {name: value for name, value in kwargs.items() if name != "num_ctas"}
        if len(args) > len(param_names):
            self.raise_unsupported(**too_many_arguments_error(kernel_name, len(args), param_names))
        token = _LAUNCHING.set(kernel_name)
        try:
            return self._call_triton_kernel(kernel, grid, args, kwargs, layers, param_names, kernel_name)
        finally:
            _LAUNCHING.reset(token)

    def _call_triton_kernel(self, kernel: Any, grid: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                            layers: list[Any], param_names: list[str], kernel_name: str) -> Any:
        base = layers[-1]
        positional = dict(zip(param_names, args))
        call_kwargs = dict(kwargs)
        unknown = [k for k in call_kwargs if k not in param_names and k not in _compat.launch_option_names()]
        if unknown:
            self.raise_unsupported(**unknown_arguments_error(kernel_name, unknown, param_names))
        duplicated = [k for k in call_kwargs if k in positional]
        if duplicated:
            self.raise_unsupported(**duplicated_arguments_error(kernel_name, duplicated))
        # Before anything of the user's (heuristics, pruning, the grid) reads them: those
        # would fail with a KeyError of their own. Configs and heuristics may supply some.
        missing = missing_arguments(layers, {**positional, **call_kwargs})
        if missing:
            self.raise_unsupported(**missing_arguments_error(kernel_name, missing, param_names))
        for name, value in {**positional, **call_kwargs}.items():
            numpy_type_name = self.numpy_type(value)
            if numpy_type_name is not None:  # triton fails on one, constexpr or not, with an error of its own
                self.raise_unsupported(**numpy_argument_error(kernel_name, name, numpy_type_name))
        descriptors = {name: self.split_tensor_descriptor(value, name, kernel_name)
                       for name, value in {**positional, **call_kwargs}.items()
                       if self.is_host_tensor_descriptor(value)}
        autotuner = None
        inner_heuristics: list[Any] = []
        for layer in layers[:-1]:
            if isinstance(layer, _compat.Autotuner):
                autotuner = layer
            elif autotuner is None:  # heuristics above the autotuner see only the call's arguments
                for name, fn in layer.values.items():
                    value = self.call_user_defined_fn(fn, [{**positional, **call_kwargs}], {})
                    call_kwargs[name] = self._heuristic_value(value, name, kernel_name)
            else:
                inner_heuristics.append(layer)

        combined = {**positional, **call_kwargs}
        tuned = tuned_arguments_given(layers[:-1], combined)
        if tuned:
            self.raise_unsupported(**tuned_arguments_error(kernel_name, tuned))
        configs = self._configs(autotuner, inner_heuristics, positional, call_kwargs, param_names, base,
                                descriptors)
        # triton's grid sees every parameter, defaults included (JITFunction.run's bound args).
        defaults = _parameter_defaults(base)
        grids = [self._grid(grid, {**defaults, **combined, **(c["kwargs"] if c else {})}, kernel_name)
                 for c in (configs or [None])]

        for name in LAUNCH_OPTION_NAMES:
            if name in combined and name not in param_names:
                # Launch options pick the compiled binary: constants, never symbols.
                combined[name] = self.specialize_symbolic(combined[name])
        for param in _compat.kernel_params(base):
            if param.is_constexpr and param.name in combined:
                # [Note: constexpr arguments given SymInts]
                # TL;DR: triton compiles one kernel per constexpr value, so we specialise
                # (guard) on the value instead of carrying a symbol the kernel cannot take.
                # Same choice as torch (pytorch#136504).
                combined[param.name] = self.specialize_symbolic(combined[param.name])
        missing = [n for n in param_names if n not in combined and not any(n in c["kwargs"] for c in configs)]
        if missing and not all(n in defaults for n in missing):
            self.raise_unsupported(**missing_arguments_error(kernel_name, missing, param_names))

        # Heuristics, pruning and grids above saw the descriptors themselves, as triton shows them.
        combined.update({name: tensor for name, (tensor, _) in descriptors.items()})
        graphable = {k: v for k, v in combined.items() if self.is_graphable(v)}
        constants = {k: self.constant_value(v) for k, v in combined.items() if k not in graphable}
        constants.update({name: spec for name, (_, spec) in descriptors.items()})
        constexprs = {p.name for p in _compat.kernel_params(base) if p.is_constexpr}
        for name, value in constants.items():
            if name in param_names and name not in constexprs and value is not None and name not in descriptors:
                self.raise_unsupported(**argument_type_error(kernel_name, name, value))
        self._check_launch(base, kernel_name, graphable, grids)
        key = kernel_side_table.add_kernel(kernel)
        if self.is_exporting():
            _warn_if_only_this_process_can_load(key)
        return self.call_HOP(
            kernel=key,
            constant_args=kernel_side_table.add_constants(constants),
            configs=self._configs_json(configs),
            grids=[g for grid in grids for g in grid],
            kwargs=graphable,
        )

    def _check_layers(self, kernel: Any) -> list[Any]:
        layers = [kernel]
        while not _compat.is_base_kernel(layers[-1]):
            layer = layers[-1]
            if not isinstance(layer, _compat.TRITON_WRAPPER_TYPES):
                self.raise_unsupported(
                    "expected a @triton.jit kernel, optionally under @triton.autotune / @triton.heuristics",
                    layer, fix="Pass the kernel object that triton's decorators return",
                )
            layers.append(layer.fn)
        autotuners = [layer for layer in layers if isinstance(layer, _compat.Autotuner)]
        if len(autotuners) > 1:
            self.raise_unsupported(
                f"{len(autotuners)} @triton.autotune decorators on one kernel",
                fix="Merge them into a single @triton.autotune with all the configs",
            )
        for autotuner in autotuners:
            hooks = _compat.autotuner_user_hooks(autotuner)
            if hooks:
                self.raise_unsupported(
                    f"@triton.autotune / triton.Config with {' and '.join(hooks)}",
                    why="Hooks run arbitrary Python at launch, which a graph (and AOTInductor) cannot replay",
                    fix="Remove the hooks; restore_value= and reset_to_zero= cover the common uses",
                )
            # How triton times the configs, never what a config computes: left out of the graph
            # (inductor times them its own way), as libraries pass them on every kernel
            # (FlagGems' LibTuner: warmup=, rep=), where the user cannot remove them.
            settings = {name: value for name, value in _compat.autotuner_benchmark_settings(autotuner).items()
                        if value not in (None, False)}
            if settings:
                log.debug("wrap_triton: the autotuning settings %s of kernel %s are not captured: they only say "
                          "how to time its configs", settings, _compat.python_function(layers[-1]).__name__)
        return layers

    def _configs(
        self,
        autotuner: Any,
        inner_heuristics: list[Any],
        positional: dict[str, Any],
        call_kwargs: dict[str, Any],
        param_names: list[str],
        base: Any,
        descriptors: dict[str, Any],
    ) -> list[dict[str, Any]]:
        if autotuner is None:
            return []
        configs = list(autotuner.configs)
        if autotuner.early_config_prune or autotuner.perf_model:
            configs = self._prune(autotuner, configs, positional, call_kwargs)
        result = []
        for config in configs:
            fields = _compat.config_fields(config)
            all_kwargs = config.all_kwargs()
            for name in LAUNCH_OPTION_NAMES:
                # triton binds a config's launch option to a parameter of the same name.
                if name in param_names and name not in fields["kwargs"] and name in all_kwargs:
                    fields["kwargs"][name] = all_kwargs[name]
            for layer in inner_heuristics:
                for name, fn in layer.values.items():
                    meta = {**positional, **call_kwargs, **all_kwargs, **fields["kwargs"]}
                    value = self.call_user_defined_fn(fn, [meta], {})
                    fields["kwargs"][name] = self._heuristic_value(value, name, _compat.python_function(base).__name__)
            hook = _compat.config_pre_hook(config)
            if hook is not None:
                fields.update(self._pre_hook_record(hook, {**positional, **call_kwargs}, fields, base, descriptors))
            result.append(fields)
        return result

    def _pre_hook_record(self, hook: Any, arguments: dict[str, Any], fields: dict[str, Any], base: Any,
                         descriptors: dict[str, Any]) -> dict[str, Any]:
        """What a Config's pre_hook does, found by running it once on stand-ins: the descriptor
        block shapes it sets ("block_shapes") and the tensor arguments it zeroes ("zeroed"),
        as config fields. See [Note: Config pre_hooks the graph records]."""
        kernel_name = _compat.python_function(base).__name__
        constexprs = {p.name for p in _compat.kernel_params(base) if p.is_constexpr}
        zeroed: list[str] = []
        nargs: dict[str, Any] = {}
        for name, value in arguments.items():
            if name in descriptors:
                spec = descriptors[name][1]
                nargs[name] = _compat.tensor_descriptor(
                    _Untouchable(name), spec.block_shape, spec.padding, spec.round_f32_to_tf32, validate=False,
                    shape=_Untouchable(f"{name}.shape"), strides=_Untouchable(f"{name}.strides"))
            elif name in constexprs:
                nargs[name] = self.as_python_constant(value, f"constexpr {name!r}")
            elif self.is_none(value):  # `if nargs[name] is not None` (mamba's init_to_zero) sees it
                nargs[name] = None
            elif self.is_tensor(value):
                nargs[name] = _Zeroable(name, zeroed)
            else:
                nargs[name] = _Untouchable(name)
        nargs.update(fields["kwargs"])
        nargs.update({k: v for k, v in fields.items() if k in LAUNCH_OPTION_NAMES})
        before = {name: list(nargs[name].block_shape) for name in descriptors}
        try:
            hook(nargs)
            changed = {name: [int(self.specialize_symbolic(b)) for b in nargs[name].block_shape]
                       for name in descriptors if list(nargs[name].block_shape) != before[name]}
        except _Touched as touched:
            self.raise_unsupported(
                f"a triton.Config pre_hook of kernel {kernel_name!r} uses argument {touched.name!r}",
                why="A graph records two things a pre_hook may do, found by running it once per config at trace "
                "time: set descriptor block shapes and zero tensor arguments; anything else it does would happen "
                "once, at trace time",
                fix="Keep only `nargs[<descriptor>].block_shape = [...]` (from config values and constexpr "
                "arguments) and `nargs[<tensor>].zero_()` in the hook; do the rest in host code before the launch "
                "(for a tensor the kernel accumulates into, `t.zero_()` before each launch)",
            )
        record: dict[str, Any] = {}
        if changed:
            record["block_shapes"] = changed
        if zeroed:
            record["zeroed"] = list(dict.fromkeys(zeroed))
        if not record:  # e.g. triton's attention tutorial's hook, given tensors rather than descriptors
            log.debug("kernel %s: a triton.Config pre_hook set nothing and used no argument of the launch; the "
                      "graph leaves it out", kernel_name)
        return record

    def _prune(self, autotuner: Any, configs: list[Any], positional: dict, call_kwargs: dict) -> list[Any]:
        # Same steps as triton's Autotuner.prune_configs, run once here on the traced
        # arguments so the graph lists exactly the configs that survive.
        if autotuner.early_config_prune:
            pruned = self.call_user_defined_fn(autotuner.early_config_prune, [configs, positional], call_kwargs)
            configs = list(self.as_python_constant(pruned, "early_config_prune"))
            if not configs:
                self.raise_unsupported("early_config_prune returned no configs", fix="Return at least one config")
        if autotuner.perf_model:
            top_k = _compat.autotuner_top_k(autotuner)
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(configs) * top_k))
            elif not isinstance(top_k, int):
                self.raise_unsupported("prune_configs_by top_k must be an int or a float <= 1.0", top_k)
            if len(configs) > top_k:
                timings = []
                for config in configs:
                    t = self.call_user_defined_fn(
                        autotuner.perf_model, [], {**positional, **call_kwargs, **config.all_kwargs()}
                    )
                    timings.append(float(self.as_python_constant(t, "perf_model")))
                order = sorted(range(len(configs)), key=timings.__getitem__)
                configs = [configs[i] for i in order[:top_k]]
        return configs

    def _grid(self, grid: Any, meta: dict[str, Any], kernel_name: str) -> tuple[Any, ...]:
        if self.is_callable(grid):
            function = self.python_function_of(grid)
            if function is not None and not takes_one_argument(function):
                self.raise_unsupported(**grid_signature_error(kernel_name, function))
            try:
                grid = self.call_grid(grid, meta)
            except KeyError as e:  # meta["N"] of a name that is no argument: a typo, or a launch option
                key = e.args[0] if len(e.args) == 1 else None
                if not isinstance(e, GridKeyError) and (not isinstance(key, str) or key in meta):
                    raise
                self.raise_unsupported(**grid_key_error(kernel_name, key, list(meta)))
        grid = self.check_grid(grid)
        if not 1 <= len(grid) <= 3:
            self.raise_unsupported(**grid_rank_error(kernel_name, grid))
        sizes = tuple(self.grid_value(size) for size in grid)
        if any(_compat.guard_or_false(size < 0) for size in sizes):  # See [Note: Launch checks]
            self.raise_unsupported(**negative_grid_error(kernel_name, sizes))
        return tuple(grid) + (1,) * (3 - len(grid))

    def _check_launch(self, base: Any, kernel_name: str, arguments: dict[str, Any], grids: list) -> None:
        """Refuse what a launch would silently get wrong. See [Note: Launch checks]."""
        values = {name: self.constant_value(value) for name, value in arguments.items()}
        tensor_devices = {name: v.device for name, v in values.items() if isinstance(v, torch.Tensor)}
        devices = list(dict.fromkeys(tensor_devices.values()))
        interpreted = _compat.is_interpreted_kernel(base)
        error = device_error(kernel_name, tensor_devices, interpreted)
        if error is not None:
            self.raise_unsupported(**error)
        for param in _compat.kernel_params(base):
            value = values.get(param.name)
            if param.is_constexpr or type(value) not in (int, float):
                continue
            if type(value) is int and not -2**63 <= value < 2**64:
                self.raise_unsupported(
                    f"argument {param.name!r} of kernel {kernel_name!r} is an int outside the 64-bit range", value,
                    why="Triton passes an int scalar as int32, int64 or uint64",
                    fix="Pass a value in [-2**63, 2**64), or the number as a tensor",
                )
            if type(value) is float and math.isfinite(value) and abs(value) > _FLOAT32_MAX:
                self.raise_unsupported(
                    f"argument {param.name!r} of kernel {kernel_name!r} is a float beyond float32's range", value,
                    why="Triton passes a float scalar as float32, where it would become infinity",
                    fix="Pass float('inf') if that is meant, or the number as a float64 tensor",
                )
        limits = None if interpreted or not devices else _compat.max_grid(devices[0])
        for grid in grids:
            sizes = [self.grid_value(size) for size in grid]
            if not all(type(size) is int for size in sizes):
                continue  # symbolic: a guard on a size's upper bound would cost every dynamic launch
            too_large = limits is not None and any(size > limit for size, limit in zip(sizes, limits))
            if too_large or (not interpreted and math.prod(sizes) > _compat.LAUNCHER_MAX_PROGRAMS):
                self.raise_unsupported(
                    f"the grid of kernel {kernel_name!r} is larger than a launch"
                    + (f" on {devices[0]}" if devices else "") + " allows", tuple(sizes),
                    why=(f"{devices[0]} runs at most {limits} programs per dimension; " if too_large else "")
                    + f"Triton's launcher counts the programs in a 32-bit int (at most "
                    f"{_compat.LAUNCHER_MAX_PROGRAMS}). Beyond that the launch fails or runs nothing",
                    fix="Give each program more work (a larger BLOCK), or launch in several parts",
                )

    def _heuristic_value(self, value: Any, name: str, kernel_name: str) -> Any:
        """What a @triton.heuristics function returned, as the constexpr it sets. Checked here,
        before the grid reads it: Dynamo fails on a tensor in the grid's META with an error of
        its own."""
        value = self.as_python_constant(value, f"heuristic {name!r}")
        if value is not None and not isinstance(value, (bool, int, float, str)):
            self.raise_unsupported(
                f"the heuristic for {name!r} of kernel {kernel_name!r} returned a "
                f"{'Tensor' if isinstance(value, torch.Tensor) else type(value).__name__}",
                why="Its value is a constexpr, which picks the kernel triton compiles: the graph records it as a "
                    "constant (None, bool, int, float or str)",
                fix="Compute it from sizes, dtypes and Python arguments (e.g. `args['n'] % 64 == 0`), not from a "
                    "tensor's data")
        return value

    def _configs_json(self, configs: list[dict[str, Any]]) -> str:
        try:
            return json.dumps(configs, sort_keys=True, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError):
            self.raise_unsupported(
                "autotune config values must be None, bool, int, float or str", configs,
                fix="Pass other values as kernel arguments",
            )


# [Note: Launch checks]
# TL;DR: inputs a launch would silently get wrong are refused when the launch is captured
# (make_fx, export, Dynamo) and, for a negative size in a tuple grid, eagerly too:
#  - a negative grid size: triton launches no program and raises nothing (interpreter:
#    range(-1) is empty; CUDA launcher: `if (gridX * gridY * gridZ > 0)`). A symbolic size is
#    guarded non-negative, which the symbols' ranges usually decide without a guard. 0 is valid.
#  - a grid beyond the device's limits (CUDA: 2**31-1 x 65535 x 65535) or with 2**31 programs
#    or more (the launcher's int product overflows): the launch fails or runs nothing.
#    Concrete grids only; not under the interpreter, which has no such limits.
#  - an int argument outside [-2**63, 2**64) (triton raises only at launch) and a finite
#    float beyond float32's range (triton passes it as float32: infinity, silently).
#  - tensor arguments on several devices, outside the interpreter: the kernel would read
#    every pointer as memory of the device it runs on.
#  - a tensor on the meta device among tensors with data, everywhere (the interpreter too):
#    the HOP's Meta rule is chosen whenever any argument is on meta, so a captured launch
#    would skip the kernel without a word, and an eager one fails inside triton (or, on a
#    GPU, reads a null pointer). The Meta rules refuse it too (a graph run on such inputs).
#    A launch whose tensor arguments are all on meta computes nothing, eagerly as captured,
#    as any operation on meta tensors does.
# And, so that every mode says the same: a grid that is not a tuple / list / callable of
# ints, of rank 0 or beyond 3, a callable grid returning something else, arguments no launch
# takes (a list, a str, a numpy array), missing arguments (before a grid function, heuristic
# or pruning function reads them), a grid function's KeyError for a name the launch lacks and
# a keyword that names neither a parameter nor a launch option (triton would ignore it, so a
# misspelled parameter with a default would run with the default).
# Context: issue 15, part 3. Eagerly, the fast path checks only `min(grid) < 0` of a tuple
# grid, and `kernel[grid]` the type of a grid that is not a tuple (tens of nanoseconds);
# check_eager_launch checks the rest where a launch leaves the fast path (the interpreter
# always does) and where the fast path meets a specialization it has not seen, never on its
# hits: a launch that differs from one already made only in its grid's values is not checked
# again. Arguments that do not bind stay triton's TypeError there (it names the kernel and
# the parameter; tests/test_fast_launch.py pins it). tests/test_launch_checks.py lists each case.

_FLOAT32_MAX = 3.4028234663852886e38


def negative_grid_error(kernel_name: str, grid: Any) -> dict[str, Any]:
    """raise_unsupported's arguments for a grid with a negative size."""
    return dict(
        what=f"the grid of kernel {kernel_name!r} has a negative size", got=tuple(grid),
        why="Triton launches no program for it and raises nothing, so whatever the kernel should write "
        "keeps its old contents",
        fix="Check the grid computation (a size of 0 is valid and runs no program)",
    )


# The name of the kernel whose launch is being captured, for the hooks' messages (check_grid
# takes the grid alone).
_LAUNCHING: contextvars.ContextVar[str | None] = contextvars.ContextVar("torch_triton_hop_launching", default=None)


def launching_kernel() -> str | None:
    """The name of the kernel whose launch a HOPifier is capturing (None outside one)."""
    return _LAUNCHING.get()


# raise_unsupported's arguments for each bad launch, shared by the eager launch and every
# front end (make_fx, export, Dynamo), so that each mode says the same thing.

def no_grid_error(kernel_name: str) -> dict[str, Any]:
    return dict(what=f"kernel {kernel_name!r} was called without a grid", fix="Call it as kernel[grid](...)")


_warned_unloadable: set[str] = set()


def _warn_if_only_this_process_can_load(key: str) -> None:
    """At export: a kernel another process cannot import (one defined in __main__ or in a
    function) makes a program that loads in this process only; say so now, not at the load."""
    module_name, _, rest = key.partition(":")
    if (module_name != "__main__" and "<locals>" not in rest) or key in _warned_unloadable:
        return
    _warned_unloadable.add(key)
    where = "__main__" if module_name == "__main__" else "a function's local scope"
    warn_at_user_code(
        f"wrap_triton: the exported program launches kernel {rest.rpartition('@')[0]!r}, defined in {where}, which "
        "another process cannot import: saved, the program loads in this process only. Define the kernel at "
        "module level in an importable module to load the program elsewhere.")


def grid_signature_error(kernel_name: str, grid: Any) -> dict[str, Any]:
    return dict(what=f"the grid function of kernel {kernel_name!r} does not take one argument",
                got=f"{getattr(grid, '__name__', type(grid).__name__)}{_signature_text(grid)}",
                why="Triton calls it with one dict (meta) of the launch's arguments by parameter name and an "
                "autotune config's values", fix="Define it as lambda meta: (triton.cdiv(n, meta['BLOCK']),)")


def _signature_text(function: Any) -> str:
    try:
        return str(inspect.signature(function))
    except (TypeError, ValueError):
        return ""


def takes_one_argument(function: Any) -> bool:
    """Whether function(meta) binds; True where Python cannot tell (a builtin without a signature)."""
    try:
        inspect.signature(function).bind({})
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def grid_type_error(kernel_name: str | None, grid: Any) -> dict[str, Any]:
    return dict(
        what=(f"kernel {kernel_name!r}: " if kernel_name else "")
        + "the grid must be a tuple or list of ints / SymInts, or a callable returning one",
        got=grid, fix="Return e.g. (triton.cdiv(n, meta['BLOCK']),)",
    )


def grid_rank_error(kernel_name: str, grid: Any) -> dict[str, Any]:
    return dict(what=f"kernel {kernel_name!r}: a grid of rank {len(grid)}", got=tuple(grid),
                fix="Use 1 to 3 dimensions")


class GridKeyError(KeyError):
    """A front end's KeyError raised by a grid function for a name the launch lacks (None: the
    front end could not tell which)."""


def grid_key_error(kernel_name: str, key: str | None, names: list[str]) -> dict[str, Any]:
    why = "Triton calls it with a dict (meta) of the launch's arguments by parameter name and an autotune config's values"
    if key is None:
        return dict(what=f"the grid function of kernel {kernel_name!r} raised a KeyError for a name the launch "
                    "does not have", why=why, fix=f"Pass it to the launch if it is a parameter, or read one of {names}")
    if key in LAUNCH_OPTION_NAMES:
        return dict(
            what=f"the grid function of kernel {kernel_name!r} raised KeyError({key!r}): {key!r} is a launch option, "
            "which triton gives a grid function only from an autotune config",
            why=why, fix=f"Compute the grid from the kernel's arguments {names}, or give {key!r} to the grid another way",
        )
    return dict(
        what=f"the grid function of kernel {kernel_name!r} raised KeyError({key!r}), and {key!r} is no argument of "
        "the launch", why=why, fix=f"Pass {key!r} to the launch if it is a parameter, or read one of {names}",
    )


def too_many_arguments_error(kernel_name: str, count: int, param_names: list[str]) -> dict[str, Any]:
    return dict(what=f"{count} positional arguments for kernel {kernel_name!r}, which has {len(param_names)} "
                f"parameters {param_names}", fix="Check the call's arguments")


def unknown_arguments_error(kernel_name: str, unknown: list[str], param_names: list[str]) -> dict[str, Any]:
    return dict(
        what=f"kernel {kernel_name!r} has no parameter {unknown[0]!r}" + (f" (nor {unknown[1:]})" if unknown[1:]
                                                                         else ""),
        why="Triton takes a keyword it does not know as a launch option and ignores it, so the parameter it was "
        "meant for would keep its default",
        fix=f"Use one of its parameters {param_names} or a launch option such as num_warps",
    )


def duplicated_arguments_error(kernel_name: str, duplicated: list[str]) -> dict[str, Any]:
    return dict(what=f"kernel {kernel_name!r} got {duplicated} both by position and by name",
                fix="Pass each argument once")


def missing_arguments_error(kernel_name: str, missing: list[str], param_names: list[str]) -> dict[str, Any]:
    return dict(
        what=f"missing kernel arguments {missing} in a launch of kernel {kernel_name!r}",
        why="The kernel, its grid function and its heuristics read every parameter",
        fix=f"Pass them by position or by name (its parameters are {param_names})",
    )


def missing_arguments(layers: list[Any], given: dict[str, Any]) -> list[str]:
    """Parameters of layers[-1] (the base kernel) that neither the call (`given`), an autotune
    config, a heuristic nor a default supplies; layers: the kernel's, outermost first."""
    base = layers[-1]
    supplied = set(given) | _names_configs_set(layers[:-1]) | set(_parameter_defaults(base))
    for layer in layers[:-1]:
        if not isinstance(layer, _compat.Autotuner):
            supplied.update(layer.values)
    return [p.name for p in _compat.kernel_params(base) if p.name not in supplied]


def _names_configs_set(layers: list[Any]) -> set[str]:
    """What the autotune configs among `layers` (autotune / heuristics layers) set: their
    kwargs and launch options (Config.all_kwargs)."""
    return {name for layer in layers if isinstance(layer, _compat.Autotuner)
            for config in layer.configs for name in config.all_kwargs()}


def tuned_arguments_given(layers: list[Any], given: dict[str, Any]) -> list[str]:
    """Arguments of a launch that an autotune config sets too. `layers`: the kernel's autotune /
    heuristics layers; `given`: the call's arguments by position and by name, and what
    heuristics above the autotuner set. triton launches with the call's arguments and the
    chosen config's (Autotuner.run: ``fn.run(*args, **kwargs, **config.all_kwargs())``), so it
    refuses these ("Conflicting meta-parameters", or a TypeError of its own); on a CPU the
    interpreter's one config may agree with the call, which hid the error there."""
    tuned = _names_configs_set(layers)
    return [name for name in given if name in tuned]


def tuned_arguments_error(kernel_name: str, tuned: list[str]) -> dict[str, Any]:
    return dict(what=f"kernel {kernel_name!r} got {tuned}, which its @triton.autotune configs set",
                why="Triton refuses a value both passed to the launch and tuned (Conflicting meta-parameters)",
                fix="Leave them out of the call, the autotuner picks them; or take them out of the configs")


def device_error(kernel_name: str, devices: dict[str, torch.device], interpreted: bool) -> dict[str, Any] | None:
    """raise_unsupported's arguments for tensor arguments (name -> device) that a launch cannot
    take, or None. See [Note: Launch checks]."""
    if len(set(devices.values())) < 2:
        return None
    on_meta = [name for name, device in devices.items() if device.type == "meta"]
    if on_meta:
        real = {name: str(device) for name, device in devices.items() if device.type != "meta"}
        named = f"arguments {on_meta} are" if len(on_meta) > 1 else f"argument {on_meta[0]!r} is"
        return dict(
            what=f"{named} on the meta device in a launch of kernel {kernel_name!r} whose other tensor "
            f"arguments have data ({real})",
            why="A meta tensor has no memory for the kernel to read or write. With every tensor argument on "
            "meta a launch computes nothing, as any operation on meta tensors does; with some on a real device "
            "the kernel has to run, and would skip silently or fail",
            fix=f"Allocate {named.split(' ', 2)[1]} on {next(iter(real.values()))} (e.g. torch.empty(..., "
            "device=x.device)), or put every tensor argument on the meta device",
        )
    if interpreted:
        return None  # the interpreter runs every kernel on host copies of its tensors
    return dict(
        what=f"the tensor arguments of kernel {kernel_name!r} are on several devices",
        got={name: str(device) for name, device in devices.items()},
        why="A kernel runs on one device and reads every pointer as that device's memory",
        fix="Move them to one device first, e.g. t.to(device)",
    )


def argument_type_error(kernel_name: str, name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, tuple):
        return dict(
            what=f"argument {name!r} of kernel {kernel_name!r} is a tuple: triton's tuple "
            "arguments are not supported by wrap_triton",
            why="The launch records each tensor and scalar argument by its parameter's name",
            fix=f"Give the kernel one parameter per element of {name!r} and pass them one by one",
        )
    return dict(
        what=f"argument {name!r} of kernel {kernel_name!r} is a {type(value).__name__}, where the kernel takes a "
        "tensor (a pointer) or a scalar",
        why="A graph records tensors, ints, floats and bools; anything else would be baked in as a constant that "
        "a saved program cannot rebuild",
        fix=f"Pass a Python int, float or bool for a scalar parameter, a torch.Tensor for a pointer "
        f"(torch.as_tensor({name}, device=...))",
    )


def numpy_type(value: Any) -> str | None:
    """The name of a numpy value's type where triton takes it for no parameter, else None. A
    numpy float64 is a Python float, which triton takes; an int64, a bool_ or an array are not
    (triton: "cannot convert ... to tensor", "Unsupported type")."""
    cls = type(value)
    if cls.__module__ != "numpy" or isinstance(value, (int, float)):
        return None
    return f"numpy {cls.__name__}"


def numpy_argument_error(kernel_name: str, name: str, type_name: str) -> dict[str, Any]:
    return dict(
        what=f"argument {name!r} of kernel {kernel_name!r} is a {type_name}, which triton takes for no parameter",
        fix=f"Pass a Python number for a scalar or constexpr parameter (int({name}), or {name}.item()), a "
        f"torch.Tensor for a pointer (torch.from_numpy({name}))",
    )


def _not_an_argument(value: Any) -> bool:
    """A value no triton launch takes for a non-constexpr parameter (triton fails on it with an
    AttributeError of its own); what it might take (tuples, descriptors, objects with a
    data_ptr) is left to triton."""
    return isinstance(value, (str, bytes, list, dict, set, frozenset))


def _int_like(size: Any) -> bool:
    if isinstance(size, (int, torch.SymInt)):
        return True
    if isinstance(size, (float, str, bytes, torch.SymFloat)) or _float_valued(size):
        return False
    try:
        operator.index(size)  # numpy ints, 0-d integer tensors: triton's launchers take them
    except TypeError:
        return False
    return True


def _float_valued(size: Any) -> bool:
    """A tensor of a float dtype: torch's, or triton's (the interpreter hands a grid function
    its scalar arguments as triton tensors, so meta["n"] / 64 is one, and it has __index__)."""
    dtype = getattr(size, "dtype", None)
    if isinstance(dtype, torch.dtype):
        return dtype.is_floating_point or dtype.is_complex
    is_floating = getattr(dtype, "is_floating", None)
    return callable(is_floating) and bool(is_floating())


def check_eager_grid(kernel_name: str, grid: Any) -> Any:
    """The grid an eager launch gives triton, refused where triton would fail with an error of its
    own or launch nothing; a callable is wrapped to check what it returns."""
    if grid is None:
        raise_unsupported(**no_grid_error(kernel_name))
    if callable(grid):
        return _CheckedGridFunction(grid, kernel_name)
    if not isinstance(grid, (tuple, list)) or not all(_int_like(size) for size in grid):
        raise_unsupported(**grid_type_error(kernel_name, grid))
    if not 1 <= len(grid) <= 3:
        raise_unsupported(**grid_rank_error(kernel_name, grid))
    if any(size < 0 for size in grid):
        raise_unsupported(**negative_grid_error(kernel_name, grid))
    return grid


class _CheckedGridFunction:
    """A grid function whose KeyError for a missing name, and whose bad result, get our errors."""

    def __init__(self, grid: Any, kernel_name: str) -> None:
        self.grid = grid
        self.kernel_name = kernel_name

    def __call__(self, meta: dict[str, Any]) -> Any:
        try:
            result = self.grid(meta)
        except TypeError:
            if takes_one_argument(self.grid):
                raise
            raise_unsupported(**grid_signature_error(self.kernel_name, self.grid))
        except KeyError as e:
            key = e.args[0] if len(e.args) == 1 else None
            if not isinstance(key, str) or key in meta:
                raise
            raise_unsupported(**grid_key_error(self.kernel_name, key, list(meta)))
        if result is None or callable(result):
            raise_unsupported(**grid_type_error(self.kernel_name, result))
        if isinstance(result, (tuple, list)):
            result = type(result)(_compat.interpreter_grid_size(size) for size in result)
        return check_eager_grid(self.kernel_name, result)


def check_eager_launch(kernel: Any, grid: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, bool]:
    """An eager ``kernel[grid](*args, **kwargs)`` checked before triton sees it, where triton would
    fail with an error about its own internals or run wrongly without one: the grid, arguments
    of types no launch takes, tensors on the meta device among real ones or (outside the
    interpreter) on several devices, a keyword that names no parameter and no launch option
    (triton would ignore it). Arguments that do not bind (missing, too many, given twice) are
    left to triton's own TypeError, which names the kernel and the parameter.

    Returns (the grid to give triton, whether to skip the launch: every tensor argument on the
    meta device, where a launch computes nothing). `kernel`: any layer (autotune / heuristics /
    base). Runs where an eager launch leaves the fast path and where the fast path meets a new
    specialization, never on its hits. See [Note: Launch checks]."""
    base = kernel
    while not _compat.is_base_kernel(base):
        base = base.fn
    kernel_name = _compat.python_function(base).__name__
    grid = check_eager_grid(kernel_name, grid)
    try:
        params = [(p.name, p.is_constexpr) for p in _compat.kernel_params(base)]
    except (OSError, ValueError):  # no source file (python -c, exec): the interpreter runs it all the same
        params = [(name, True) for name in inspect.signature(_compat.python_function(base)).parameters]
    param_names = [name for name, _ in params]
    unknown = [k for k in kwargs if k not in param_names and k not in _compat.launch_option_names()]
    if unknown:  # triton takes them as launch options and ignores them: a misspelled default runs
        raise_unsupported(**unknown_arguments_error(kernel_name, unknown, param_names))
    given = {**dict(zip(param_names, args)), **kwargs}
    tuned = tuned_arguments_given(kernel_layers(kernel), given)
    if tuned:
        raise_unsupported(**tuned_arguments_error(kernel_name, tuned))
    for name, is_constexpr in params:
        if name not in given:
            continue
        numpy_type_name = numpy_type(given[name])
        if numpy_type_name is not None:
            raise_unsupported(**numpy_argument_error(kernel_name, name, numpy_type_name))
        if not is_constexpr and _not_an_argument(given[name]):
            raise_unsupported(**argument_type_error(kernel_name, name, given[name]))
    devices = {name: value.device for name, value in given.items() if isinstance(value, torch.Tensor)}
    error = device_error(kernel_name, devices, _compat.is_interpreted_kernel(base))
    if error is not None:
        raise_unsupported(**error)
    return grid, bool(devices) and all(device.type == "meta" for device in devices.values())


# [Note: Config pre_hooks the graph records]
# TL;DR: a Config pre_hook runs before every launch with that config. Two uses are common:
# autotuned TMA kernels set each host descriptor's block shape per config (triton's
# tutorials), and kernels that accumulate with atomics zero the output first (mamba's and
# flash-attention's `init_to_zero`). At trace time we run each hook once on stand-ins:
# descriptors over an argument that refuses any use, tensor arguments that allow only
# `.zero_()` (recorded), None arguments as None, every other non-constexpr argument refusing
# any use, config values and constexprs as themselves. The block shapes it sets and the
# tensors it zeroes go into that config's record ("block_shapes", "zeroed"); a launch does
# both again from the record (_compat.config_from_fields, _compat.run_recorded_pre_hook),
# so no user code runs at launch. A hook that uses anything else is refused. One that uses
# nothing and sets nothing (the attention tutorial's, which returns at once when given
# tensors rather than descriptors) is left out; what a hook does outside its arguments (a
# global) is not seen. A zeroed argument counts as written (functionalization clones it and
# the launch zeroes the clone), and nothing is fused into such a launch: a prologue would
# replace the loads of memory the hook zeroes. inductor's generated launch takes one block
# shape per descriptor and runs no hook, so such kernels launch through the package there.


class _Touched(Exception):
    def __init__(self, name: str) -> None:
        self.name = name


class _Untouchable:
    """An argument a pre_hook must not use at trace time (its value is the launch's)."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr: str) -> Any:
        raise _Touched(object.__getattribute__(self, "_name"))

    def __setattr__(self, attr: str, value: Any) -> None:
        raise _Touched(object.__getattribute__(self, "_name"))

    def _touched(self, *args: Any, **kwargs: Any) -> Any:
        raise _Touched(object.__getattribute__(self, "_name"))

    __bool__ = __int__ = __index__ = __float__ = __len__ = __iter__ = __getitem__ = __setitem__ = _touched
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __floordiv__ = __truediv__ = _touched
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __call__ = _touched
    __hash__ = None  # type: ignore[assignment]


class _Zeroable(_Untouchable):
    """A tensor argument whose only use a pre_hook may make is ``.zero_()``, recorded."""

    def __init__(self, name: str, zeroed: list[str]) -> None:
        super().__init__(name)
        object.__setattr__(self, "_zeroed", zeroed)

    def __getattr__(self, attr: str) -> Any:
        if attr != "zero_":
            return super().__getattr__(attr)
        name, zeroed = object.__getattribute__(self, "_name"), object.__getattribute__(self, "_zeroed")

        def zero_() -> "_Zeroable":
            zeroed.append(name)
            return self
        return zero_


def _parameter_defaults(kernel: Any) -> dict[str, Any]:
    """name -> default of the parameters of `kernel` (a base kernel) that have one."""
    return {name: parameter.default
            for name, parameter in inspect.signature(_compat.python_function(kernel)).parameters.items()
            if parameter.default is not inspect.Parameter.empty}


class TracingTritonHOPifier(TritonHOPifier):
    """The HOPifier for make_fx and non-strict export: values are real, fake or SymInt.

    A wrapped kernel's ``kernel[grid](...)`` calls one instance of it; calling it directly
    records a launch the same way (``add_one`` from :func:`wrap_triton`'s example)::

        >>> from torch_triton_hop import TracingTritonHOPifier
        >>> def g(x):
        ...     out = torch.empty_like(x)
        ...     TracingTritonHOPifier().call_triton_kernel(add_one, (1,), (x, out, x.numel()), {"BLOCK": 16})
        ...     return out
        >>> "user_triton_kernel_mutation" in make_fx(g)(torch.zeros(8)).code
        True
    """

    def is_callable(self, value: Any) -> bool:
        return callable(value)

    def call_grid(self, grid: Any, meta: dict[str, Any]) -> Any:
        return grid(meta)

    def call_user_defined_fn(self, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
        return fn(*args, **kwargs)

    def as_python_constant(self, value: Any, what: str) -> Any:
        # A heuristic of a size under symbolic tracing (n % BLOCK == 0) is a SymBool: guarded
        # to its value, as Dynamo's HOPifier does (export then reports the guard).
        return self.specialize_symbolic(value)

    def check_grid(self, grid: Any) -> tuple[Any, ...]:
        if not isinstance(grid, collections.abc.Sequence) or not all(
            isinstance(g, (int, torch.SymInt)) for g in grid
        ):
            self.raise_unsupported(**grid_type_error(launching_kernel(), grid))
        return tuple(grid)

    def specialize_symbolic(self, value: Any) -> Any:
        if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return _compat.guard_scalar(value)
        return value

    def is_graphable(self, value: Any) -> bool:
        return isinstance(value, (torch.Tensor, torch.SymInt, torch.SymFloat, torch.SymBool, bool, int, float))

    def call_HOP(self, *, kernel: str, constant_args: str, configs: str, grids: list, kwargs: dict) -> Any:
        return triton_kernel_wrapper_mutation(
            kernel=kernel, constant_args=constant_args, configs=configs, grids=grids, kwargs=kwargs
        )


tracing_hopifier = TracingTritonHOPifier()
