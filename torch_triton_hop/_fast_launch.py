"""The eager fast launch: cheap argument facts -> triton's compiled kernel, then its launcher.

# [Note: Fast launch]
# TL;DR: after the first launch of a specialization, an eager call of a wrapped kernel
# skips JITFunction.run: one generated function classifies the arguments into a key,
# finds the CompiledKernel triton chose for that key, and calls its launcher with the
# arguments in launch order. Triton itself decides every kernel: a key we have not seen
# runs triton's own run (which compiles or looks up), and we record what it returned.
#
# **Exactness.** Our key must never join two calls that triton keeps apart: it refines
# triton's key (tuple(specialization), str(options)) on the device's kernel cache.
#   - tensor (plain torch.Tensor / Parameter): its dtype and, where triton specializes
#     alignment, data_ptr() % 16 == 0. triton: ("*fp32", "D" | "").
#   - int: 1 (triton makes it a constexpr), i32 / i64 / u64 range, divisible by 16.
#     do_not_specialize drops 1 and 16; do_not_specialize_on_alignment drops 16.
#   - bool, float (always "u1" / "fp32"), None: a constant per kind.
#   - constexpr: the value itself (triton compares ("constexpr", value) the same way).
#   - launch options (num_warps=...): (name, type, value) in call order; the effective
#     debug flag and every knob JITFunction.run copies into the options
#     (_compat.jit_run_option_knobs); the current device.
# Anything else (a tensor subclass, a tuple, a TensorDescriptor, a numpy scalar, an
# unknown option type) is not fast: the call takes today's path (see **Calling convention**).
#
# **Calling convention.** Every generated launch is f(grid, /, *args, **kwargs) and binds the
# parameters itself (one branch per positional count, the rest from the kwargs), so the
# wrapper's kernel[grid] is the bound method MethodType(f, grid): kernel[grid](...) runs f with
# no frame of ours in between (a frame and a repacking of the arguments cost ~0.6 us). Where a
# call is not fast (and before any side effect) f returns _f_slow(grid, args, kwargs), the
# arguments as passed: the wrapper's own path (_wrap._launch_slowly: triton's launch or the
# HOP), or NOT_FAST for fast_launcher's default and for the layers under a generated launch.
# Arguments that do not bind (missing, given twice, too many) are not fast: triton's run
# raises its own TypeError.
#
# **Slow path, always.** Launch hooks (knobs.runtime.launch_enter/exit_hook with a hook in
# them), JITFunction.pre_run_hooks, triton >= 3.7's add_stages_inspection_hook, another
# active driver, a non-CUDA target, a triton whose run reads names we do not know
# (_compat.FAST_LAUNCH_*), an Autotuner config with a pre_hook, an autotuner key that is
# not yet tuned. A cleared or replaced triton kernel cache is noticed per call (our entry
# holds triton's key string and checks the cache still maps it to the same kernel).
#
# **Launch.** Exactly JITFunction.run's call: launcher(grid_0, grid_1, grid_2, stream,
# function, packed_metadata, launch_metadata, enter_hook, exit_hook, *all_params), with
# the hooks and launch_metadata None (the chains are empty: nothing could observe them).
# The stream is the driver's current stream of the current device (what triton uses;
# a CUDA graph capture sees its capture stream). Grid callables get the bound arguments.
#
# **Static launch.** Where torch has its launcher for triton cubins
# (_compat.static_cuda_launch, inductor's) and the compiled kernel needs nothing triton's
# launcher adds (_compat.static_launch_plan: one CTA, no scratch memory, no cooperative
# grid / PDL / descriptors / gsan, scalars i32 / i64 / u64 / fp32, no annotated scalars),
# the launch is one cuLaunchKernel of triton's own CUfunction: the non-constexpr arguments
# in order, tensors as their data_ptr() (read for the key anyway; every tensor must be on a
# CUDA device, a fact in the key, so triton's pointer check could not fail), then the two
# scratch pointers as None. A grid with a size <= 0 goes to triton's launcher.
# TORCH_TRITON_HOP_STATIC_LAUNCH=0 turns it off.
#
# **Layers.** @triton.heuristics over at most one @triton.autotune (innermost): one
# generated launch per layer; see [Note: Fast heuristics launch] and [Note: Fast autotuned
# launch]. Any other stack (an Autotuner over a Heuristics) goes through _AutotuneLayer /
# _HeuristicsLayer: values computed per call exactly as Heuristics.run does, the tuned
# config found per call and config.all_kwargs() passed down.
#
# [Note: Fast autotuned launch]
# TL;DR: one generated function binds the call with every parameter defaulting to a
# sentinel, classifies what was passed as the plain launch does and adds Autotuner.run's
# key values and the call shape (the names passed by keyword, in order: triton's tuning
# key lists str(dtype) in call order), one key for both keys. Its entry, recorded after
# Autotuner.run launched for that key (tuning it if new), holds the config, a snapshot of
# the config's __dict__ (a config edited later misses), triton's tuning key, the values
# the config or a default supplies per parameter, and the kernel with its launch parts.
# Per call: the entry is used only while Autotuner.run would pick the same config
# (at.cache[tuning key] is it, or configs[0] with one config) and the kernel cache still
# maps triton's key to the kernel; best_config is set as run sets it. Nothing else runs:
# on a hit Autotuner.run calls no hook (restore_value / reset_to_zero / post_hook act only
# while tuning; a config pre_hook keeps the call on Autotuner.run, never recorded). Not
# fast: kwargs that are not parameters (options go with the config), constexpr or key
# values other than int / bool / float / str / None, autotuner keys edited since.
#
# [Note: Fast heuristics launch]
# TL;DR: Heuristics.run (triton 3.6-3.9) is one loop, `kwargs[v] = heur({**dict(zip(
# self.arg_names, args)), **kwargs})`, kwargs being grid, warmup (as the launch passed
# them), the call's kwargs, then the values already computed; then fn.run(*args, **kwargs).
# Each function is called once per launch with a fresh dict holding exactly those items in
# that order: a value may depend on any argument, so nothing is cached. The generated
# _f_hlaunch has one branch per positional count: the positional arguments become locals
# and each dict is a literal. The checks _launch_directly makes (modes, tensor subclasses,
# grid) come first: once the user's functions have run, the launch never calls _f_slow
# (it ends in fn.run with the values computed, as Heuristics.run does). In the usual branch
# (the leading non-constexpr parameters by position) those are classified before the
# heuristics run, which covers the subclass check; anything not fast there (a subclass, a
# tuple) takes _f_slow, and triton's own Heuristics.run runs them once. Directly over the
# JITFunction, the branch then binds the other parameters from the kwargs (what is left
# are launch options) and the plain launch's classification, key and launch follow in the
# same frame (its entries shared with the plain launch: the same key). Over an Autotuner
# (or another Heuristics) it calls that layer's fast launch.
#
# Measured: benchmarks/eager_overhead.py, benchmarks/RESULTS.md (issue 14).
"""

from __future__ import annotations

import keyword
import os
from typing import Any, Callable

import torch

from . import _compat
from ._fast_launch_source import binding_sets, heuristics_source, launch_source
from ._hopifier import check_eager_launch
from ._version_counters import increment_versions, run_and_bump, written_getter

__all__ = ["NOT_FAST", "fast_launcher"]

NOT_FAST = object()  # "take today's path": returned before any side effect


def _not_fast(grid: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """The default fallback: a launch that is not fast returns NOT_FAST."""
    return NOT_FAST


class _Unset:
    pass


_UNSET = _Unset()
_MAX_ENTRIES = 4096
# TORCH_TRITON_HOP_STATIC_LAUNCH=0: every fast launch goes through triton's own launcher.
_STATIC_LAUNCH = os.environ.get("TORCH_TRITON_HOP_STATIC_LAUNCH", "1") != "0"
_PLAIN_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)
_SIMPLE_OPTION_TYPES = frozenset({int, bool, str, type(None), float})
_PLAIN_CLASSES = _SIMPLE_OPTION_TYPES | set(_PLAIN_TENSOR_TYPES)


def _options_key(options: dict[str, Any]) -> tuple | None:
    """Launch options as their items and types in call order, or None if one could differ in
    str() while comparing equal (triton keys on str(options))."""
    types = tuple(map(type, options.values()))
    if "grid" in options or "warmup" in options or not _SIMPLE_OPTION_TYPES.issuperset(types):
        return None
    if float not in types:
        return tuple(options.items()), types
    key = []  # floats: 0.0 == -0.0, and nan
    for name, value in options.items():
        if value.__class__ is float and value != value:
            return None
        key.append((name, repr(value) if value.__class__ is float else value))
    return tuple(key), types


def _split_options(kwargs: dict[str, Any], rest: frozenset, names: frozenset) -> dict[str, Any] | None:
    """The launch options among the kwargs (those that name no parameter), in call order; None
    when one names a parameter already given by position (triton raises its TypeError)."""
    options = {name: value for name, value in kwargs.items() if name not in rest}
    return options if names.isdisjoint(options) else None


def _check_globals(used_global_vals: dict) -> None:
    # JITFunction.run's own check, message included (triton 3.6-3.9).
    not_present = object()
    for (name, _), (val, globals_dict) in used_global_vals.items():
        if (new_val := globals_dict.get(name, not_present)) != val:
            raise RuntimeError(
                f"Global variable {name} has changed since we compiled this kernel, from {val} to {new_val}")


def _tuning_key(autotuner: Any, args: tuple, kwargs: dict[str, Any]) -> tuple:
    """The key Autotuner.run (triton 3.6-3.9) computes for a call: the values of its key
    arguments that were passed, then str(dtype) of every passed argument that has one, in
    call order."""
    arg_names = autotuner.arg_names
    passed = {name: value for name, value in {**dict(zip(arg_names, args)), **kwargs}.items() if name in arg_names}
    key = [passed[name] for name in autotuner.keys if name in passed]
    return tuple(key + [str(value.dtype) for value in passed.values() if hasattr(value, "dtype")])


class _JitLauncher:
    """The fast launch of one JITFunction: generated binders + classifiers + launchers."""

    def __init__(self, jit: Any, namespace: dict[str, Any], names: list[str], specializations: list[tuple],
                 defaults: dict[str, Any], static_launch: Any, user_kernel: Any) -> None:
        self.jit = jit
        # What the user launched (the wrapper): whose writes a launch bumps. See [Note: Launches bump version counters]
        self.user_kernel = user_kernel
        self.namespace = namespace
        self.names = names
        self.specializations = specializations
        self.defaults = defaults
        self.static_launch = static_launch
        self.cache: dict[tuple, tuple] = namespace["_f_cache"]
        self.tuned: dict[tuple, tuple] = namespace["_f_atcache"]  # See [Note: Fast autotuned launch]
        self.autotuner: Any = None
        self.launch: Any = None  # launch(grid, *args, **kwargs) -> result | _f_slow(grid, args, kwargs)
        self.slots: list[tuple[int, int] | None] = []
        self.tuned_slots: list[tuple[int, int] | None] = []

    def _read_driver(self) -> None:
        active = _compat.active_triton_driver()
        if active is not None:
            get_device, get_stream = _compat.launch_device_functions(active)
            self.namespace.update(_f_get_device=get_device, _f_get_stream=get_stream, _f_active=active)

    def setup(self, grid: Any, args: tuple, options: dict[str, Any]) -> Any:
        """First launch (or another active driver): triton's run, then read its driver."""
        grid, on_meta = check_eager_launch(self.jit, grid, args, options)  # See [Note: Launch checks]
        if on_meta:
            return None
        result = run_and_bump(self.jit, self.user_kernel, grid, args, options)
        self._read_driver()
        return result

    def miss(self, key: tuple, grid: Any, args: tuple, options: dict[str, Any]) -> Any:
        """A key not seen yet: triton's run decides (compiles or looks up); record its kernel."""
        grid, on_meta = check_eager_launch(self.jit, grid, args, options)  # See [Note: Launch checks]
        if on_meta:
            return None
        result = run_and_bump(self.jit, self.user_kernel, grid, args, options)
        self.record(key, result, args, options)
        return result

    def _parts(self, device: Any, kernel: Any) -> tuple | None:
        """(launcher, function, packed, device caches, triton's key) of a kernel triton returned."""
        parts = _compat.compiled_kernel_launch_parts(kernel)
        caches = self.jit.device_caches.get(device)
        if parts is None or caches is None or not _compat.is_cuda_target(caches[2]):
            return None
        triton_key = next((k for k, v in list(caches[0].items()) if v is kernel), None)
        return None if triton_key is None else (*parts, caches, triton_key)

    def record(self, key: tuple, kernel: Any, args: tuple, options: dict[str, Any]) -> None:
        found = self._parts(key[0], kernel)
        if found is None or len(self.cache) >= _MAX_ENTRIES:
            return
        kinds = [None if slot is None else (key[slot[0]], key[slot[1]]) for slot in self.slots]
        self.cache[key] = (kernel, self.static_function(kinds, kernel, *found[:3]), *found,
                           self.written(args, options))

    def written(self, args: tuple, kwargs: dict[str, Any]) -> Any:
        """An entry's written tensors: f(every parameter's value, as a tuple) -> them, or None."""
        return written_getter(self.user_kernel, {**dict(zip(self.names, args)), **kwargs}, self.names)

    def tuned_setup(self, grid: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        grid, on_meta = check_eager_launch(self.autotuner, grid, args, kwargs)  # See [Note: Launch checks]
        if on_meta:
            return None
        result = run_and_bump(self.autotuner, self.user_kernel, grid, args, kwargs)
        self._read_driver()
        return result

    def tuned_miss(self, key: tuple, grid: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        """Autotuner.run decides (tunes a new key, compiles or looks up); record what it chose."""
        grid, on_meta = check_eager_launch(self.autotuner, grid, args, kwargs)  # See [Note: Launch checks]
        if on_meta:
            return None
        result = run_and_bump(self.autotuner, self.user_kernel, grid, args, kwargs)
        self.tuned_record(key, args, kwargs, result)
        return result

    def tuned_record(self, key: tuple, args: tuple, kwargs: dict[str, Any], kernel: Any) -> None:
        """Everything the autotuned launch needs per key: the config and a snapshot of it,
        triton's tuning key, the parameters the config (or a default) supplies, the kernel.
        See [Note: Fast autotuned launch]."""
        at = self.autotuner
        config = at.best_config
        if config is None or _compat.config_pre_hook(config) is not None or len(self.tuned) >= _MAX_ENTRIES:
            return
        if len(at.configs) > 1:
            tuning_key = _tuning_key(at, args, kwargs)
            if at.cache.get(tuning_key) is not config:
                return
        elif at.configs[0] is config:
            tuning_key = None
        else:
            return
        extra = config.all_kwargs()
        given = set(self.names[:len(args)]) | set(kwargs)
        fill: list[Any] = []
        kinds: list[Any] = []
        for name, slot, (_, specialize, _, _) in zip(self.names, self.tuned_slots, self.specializations):
            if name in given:
                fill.append(_UNSET)
                kinds.append(None if slot is None else (key[slot[0]], key[slot[1]]))
                continue
            value = extra[name] if name in extra else self.defaults.get(name, _UNSET)
            if value is _UNSET or value.__class__ not in _SIMPLE_OPTION_TYPES:
                return
            fill.append(value)
            kinds.append(None if slot is None else (
                -3 if value is None else 1 if value.__class__ is int and value == 1 and specialize else 0, None))
        found = self._parts(key[0], kernel)
        if found is None:
            return
        snapshot = {**config.__dict__, "kwargs": dict(config.kwargs)}
        self.tuned[key] = (config, snapshot, tuning_key, kernel, self.static_function(kinds, kernel, *found[:3]),
                           *found, tuple(fill), self.written(args, {**kwargs, **extra}))

    def static_function(self, kinds: list, kernel: Any, launcher: Any, function: Any, packed: Any) -> Any:
        """f(g0, g1, g2, stream, *values) launching through torch's static launcher, values being
        the parameters with each tensor replaced by its data_ptr(); None where triton's
        launcher must launch. kinds: per parameter (dtype or code, alignment code) as in the
        key, None for a constexpr. See [Note: Fast launch], **Static launch**."""
        if self.static_launch is None:
            return None
        plan = _compat.static_launch_plan(kernel, self.names)
        if plan is None:
            return None
        function, num_warps, shared, types, scratch = plan
        for kind_align, ty in zip(kinds, types):
            if kind_align is None:
                if ty is not None:
                    return None
                continue
            kind, align = kind_align
            is_tensor = isinstance(kind, torch.dtype)
            if ty is None:
                if is_tensor or kind not in (1, -3):  # triton folds None and the int 1, nothing else here
                    return None
            elif (ty == "O") != is_tensor or is_tensor and align >= 2:
                return None  # a tensor not on a CUDA device
        values = [f"_f_p{i}" for i in range(len(types))]
        passed = [value for value, ty in zip(values, types) if ty is not None] + ["None"] * scratch
        arg_types = "".join(ty for ty in types if ty is not None) + "O" * scratch
        source = (
            f"def _f_static(_f_g0, _f_g1, _f_g2, _f_stream, {', '.join(values)}):\n"
            "    if _f_g0 > 0 and _f_g1 > 0 and _f_g2 > 0:\n"
            f"        _f_L(_f_fn, _f_g0, _f_g1, _f_g2, {int(num_warps)}, {int(shared)}, {arg_types!r}, "
            f"({', '.join(passed)},), _f_stream)\n"
            "    else:\n"  # no program, or a negative size from a grid callable: triton's launcher decides
            f"        _f_TL(_f_g0, _f_g1, _f_g2, _f_stream, _f_fn, _f_packed, None, None, None, {', '.join(values)})\n")
        ns = {"_f_L": self.static_launch, "_f_fn": function, "_f_TL": launcher, "_f_packed": packed}
        exec(compile(source, "<fast static launch>", "exec"), ns)
        return ns["_f_static"]


def _generate(jit: Any, static_launch: Any, assume_cuda: bool, user_kernel: Any) -> _JitLauncher | None:
    import inspect

    signature = inspect.signature(_compat.python_function(jit))
    params = _compat.kernel_params(jit)
    option_knobs = _compat.jit_run_option_knobs()
    reserved = {"debug", "grid", "warmup"} | {name for name, _, _ in option_knobs}
    names = list(signature.parameters)
    if len(names) != len(params) or any(
            p.kind not in (p.POSITIONAL_OR_KEYWORD,) or p.name.startswith("_f_") or p.name in reserved
            or keyword.iskeyword(p.name) for p in signature.parameters.values()):
        return None
    specializations = [_compat.jit_param_specialization(param) for param in params]
    if any(annotation and not is_constexpr for is_constexpr, _, _, annotation in specializations):
        static_launch = None  # triton's launcher converts annotated scalars its own way
    defaults = {name: p.default for name, p in signature.parameters.items() if p.default is not inspect.Parameter.empty}
    ns: dict[str, Any] = {
        "_f_NOT_FAST": NOT_FAST, "_f_Tensor": torch.Tensor, "_f_Parameter": torch.nn.Parameter,
        "_f_int": int, "_f_bool": bool, "_f_float": float, "_f_isinstance": isinstance,
        "_f_callable": callable, "_f_len": len, "_f_tuple": tuple, "_f_TypeError": TypeError,
        "_f_jit": jit, "_f_kr": _compat.triton_knobs.runtime, "_f_HookChain": _compat.HookChain,
        "_f_dcfg": _compat.triton_driver_config, "_f_active": _UNSET, "_f_U": _UNSET,
        "_f_get_device": None, "_f_get_stream": None, "_f_cache": {}, "_f_atcache": {},
        "_f_options_key": _options_key, "_f_check_globals": _check_globals,
        "_f_simple": _SIMPLE_OPTION_TYPES, "_f_simple_u": _SIMPLE_OPTION_TYPES | {_Unset},
        "_f_slow": _not_fast, "_f_split": _split_options, "_f_nameset": frozenset(names), **binding_sets(names),
        # What _launch_directly asks, without its frames. See [Note: Eager fast path].
        "_f_modes": _compat.dispatch_mode_stack_depth, "_f_function_modes": _compat.torch_function_mode_enabled,
        "_f_functorch": _compat.functorch_interpreter_top, "_f_inc": increment_versions,
    }
    for name, default in defaults.items():
        ns[f"_f_default_{name}"] = default
    for i, (_, namespace, _) in enumerate(option_knobs):
        ns[f"_f_knobs{i}"] = namespace
    launcher = _JitLauncher(jit, ns, names, specializations, defaults, static_launch, user_kernel)
    ns.update(_f_setup=launcher.setup, _f_miss=launcher.miss, _f_atsetup=launcher.tuned_setup,
              _f_atmiss=launcher.tuned_miss)
    cuda_check = launcher.cuda_check = static_launch is not None and not assume_cuda
    launcher.source, launcher.slots = launch_source(
        jit, names, specializations, defaults, option_knobs, cuda_check, "plain")
    exec(compile(launcher.source, f"<fast launch of {getattr(jit, '__qualname__', 'kernel')}>", "exec"), ns)
    launcher.launch = ns["_f_launch"]
    return launcher


def _generate_tuned(launcher: _JitLauncher, autotuner: Any) -> Any:
    """The autotuned launch of `autotuner` over launcher's JITFunction. See [Note: Fast autotuned launch]."""
    supplied = set().union(*(config.kwargs for config in autotuner.configs)) | set(launcher.defaults)
    ns = launcher.namespace
    ns.update(_f_at=autotuner, _f_keys=list(autotuner.keys))
    launcher.autotuner = autotuner
    source, launcher.tuned_slots = launch_source(
        launcher.jit, launcher.names, launcher.specializations, launcher.defaults, _compat.jit_run_option_knobs(),
        launcher.cuda_check, "tuned", supplied, autotuner.keys)
    launcher.source += source
    exec(compile(source, "<fast autotuned launch>", "exec"), ns)
    return ns["_f_atlaunch"]


class _JitLayer:
    """The innermost layer below heuristics / autotuning."""

    def __init__(self, jit_launcher: _JitLauncher) -> None:
        self.jit_launcher = jit_launcher

    def __call__(self, grid: Any, args: tuple, kw: dict[str, Any]) -> Any:
        result = self.jit_launcher.launch(grid, *args, **kw)  # its _f_slow is _not_fast
        if result is NOT_FAST:
            return run_and_bump(self.jit_launcher.jit, self.jit_launcher.user_kernel, grid, args, kw)
        return result


class _HeuristicsLayer:
    def __init__(self, heuristics: Any, inner: Any) -> None:
        self.heuristics = heuristics
        self.inner = inner

    def __call__(self, grid: Any, args: tuple, kw: dict[str, Any]) -> Any:
        # Heuristics.run, triton 3.6-3.9: each value sees a fresh dict of the arguments and
        # every kwarg (grid and warmup first, as the launch passed them), earlier values too.
        h = self.heuristics
        named = dict(zip(h.arg_names, args))
        for name, heuristic in h.values.items():
            kw[name] = heuristic({**named, "grid": grid, "warmup": False, **kw})
        return self.inner(grid, args, kw)


class _AutotuneLayer:
    def __init__(self, autotuner: Any, inner: Any, user_kernel: Any) -> None:
        self.autotuner = autotuner
        self.inner = inner
        self.user_kernel = user_kernel
        self.arg_names = list(autotuner.arg_names)
        self.arg_set = frozenset(self.arg_names)
        self.key_names = list(autotuner.keys)
        self.key_index = [(self.arg_names.index(k), k) for k in self.key_names]
        self.tuned: dict[tuple, tuple] = {}  # our tuning key -> (triton's tuning key, config)

    def _keys(self, args: tuple, kw: dict[str, Any]) -> tuple[tuple, list, list] | None:
        """Our tuning key, and what triton's is made of: Autotuner.run's key values, then
        str(dtype) of every argument with a dtype (ours keeps the dtype objects: no str() per
        call). None when an argument is of a kind we do not model."""
        if self.autotuner.keys != self.key_names:
            return None
        count = len(args)
        values = [args[i] if i < count else kw[name] for i, name in self.key_index if i < count or name in kw]
        dtypes = []
        for value in args:
            cls = value.__class__
            if cls is torch.Tensor or cls is torch.nn.Parameter:
                dtypes.append(value.dtype)
            elif cls not in _SIMPLE_OPTION_TYPES:
                return None
        for name, value in kw.items():
            if name in self.arg_set:
                cls = value.__class__
                if cls is torch.Tensor or cls is torch.nn.Parameter:
                    dtypes.append(value.dtype)
                elif cls not in _SIMPLE_OPTION_TYPES:
                    return None
        for value in values:
            if value.__class__ not in _SIMPLE_OPTION_TYPES:
                return None
        return tuple(values + dtypes), values, dtypes

    def _slow(self, grid: Any, args: tuple, kw: dict[str, Any]) -> Any:
        return run_and_bump(self.autotuner, self.user_kernel, grid, args, kw)

    def __call__(self, grid: Any, args: tuple, kw: dict[str, Any]) -> Any:
        at = self.autotuner
        configs = at.configs
        if len(configs) > 1:
            keys = self._keys(args, kw)
            if keys is None:
                return self._slow(grid, args, kw)
            ours, values, dtypes = keys
            hit = self.tuned.get(ours)
            if hit is None or at.cache.get(hit[0]) is not hit[1]:
                triton_key = tuple(values + [str(d) for d in dtypes])
                config = at.cache.get(triton_key)
                if config is None:  # not tuned for this key: Autotuner.run tunes and launches
                    return self._slow(grid, args, kw)
                self.tuned[ours] = (triton_key, config)
            else:
                config = hit[1]
        else:
            config = configs[0]
        if _compat.config_pre_hook(config) is not None:
            return self._slow(grid, args, kw)
        extra = config.all_kwargs()
        if not extra.keys().isdisjoint(kw):
            return self._slow(grid, args, kw)  # triton raises its own error for the duplicate
        at.best_config = config
        return self.inner(grid, args, {**kw, **extra})


def _has_tensor_subclass(values: Any) -> bool:
    return any(value.__class__ not in _PLAIN_CLASSES and isinstance(value, torch.Tensor) for value in values)


def _heuristics_namespace(heuristics: Any, names: list[str], user_kernel: Any) -> dict[str, Any]:
    """What a heuristics launch reads besides the plain launch's names."""
    return {"_f_H": heuristics, "_f_names": list(names), "_f_plain": _PLAIN_CLASSES, "_f_subclass": _has_tensor_subclass,
            "_f_hrun": lambda grid, args, kw: run_and_bump(heuristics.fn, user_kernel, grid, args, kw)}


def _generate_heuristics(launcher: _JitLauncher, heuristics: Any) -> Any:
    """The launch of `heuristics` directly over launcher's JITFunction: the heuristics, the key
    and the launch in one frame. See [Note: Fast heuristics launch]."""
    ns = launcher.namespace
    ns.update(_heuristics_namespace(heuristics, launcher.names, launcher.user_kernel))
    source, _ = launch_source(launcher.jit, launcher.names, launcher.specializations, launcher.defaults,
                              _compat.jit_run_option_knobs(), launcher.cuda_check, "heuristics")
    launcher.source += source
    exec(compile(source, "<fast heuristics launch>", "exec"), ns)
    return ns["_f_hlaunch"]


def _heuristics_launch(heuristics: Any, inner: Callable[..., Any], names: list[str],
                       specializations: list[tuple], user_kernel: Any) -> Callable[..., Any]:
    """launch(grid, *args, **kwargs) of a Heuristics over a kernel whose fast launch is `inner`
    (an Autotuner's, another Heuristics'; their fallback returns NOT_FAST). See [Note: Fast heuristics launch]."""
    ns = {
        **_heuristics_namespace(heuristics, names, user_kernel), "_f_NOT_FAST": NOT_FAST, "_f_Tensor": torch.Tensor,
        "_f_inner": inner, "_f_modes": _compat.dispatch_mode_stack_depth,
        "_f_function_modes": _compat.torch_function_mode_enabled, "_f_functorch": _compat.functorch_interpreter_top,
        "_f_isinstance": isinstance, "_f_tuple": tuple, "_f_len": len, "_f_slow": _not_fast,
    }
    exec(compile(heuristics_source(names, specializations, {}), "<fast heuristics launch>", "exec"), ns)
    return ns["_f_hlaunch"]


class FastLauncher:
    """`launch(grid, /, *args, **kwargs)`: the launch's result, or where the call is not fast (a
    mode, a subclass, anything it does not model, arguments that do not bind)
    fallback(grid, args, kwargs)'s, the arguments as passed. The wrapper binds grid to it, so
    kernel[grid](...) runs it with no frame in between. See [Note: Fast launch]."""

    def __init__(self, top: Any, jit_launcher: _JitLauncher, launch: Any, fallback: Any) -> None:
        self.top = top
        self.jit_launcher = jit_launcher
        self.fallback = fallback
        if launch is None:
            self.launch = self._layered
        else:  # the generated top launch's fallback; the layers below it keep _not_fast
            self.launch = launch
            launch.__globals__["_f_slow"] = fallback

    def _layered(self, grid: Any, /, *args: Any, **kwargs: Any) -> Any:
        # Layers run user code (heuristics) before the innermost classification: decide about
        # modes and tensor subclasses first, as _launch_directly does.
        if (_compat.dispatch_mode_stack_depth() or _compat.torch_function_mode_enabled()
                or _compat.functorch_interpreter_active()):
            return self.fallback(grid, args, kwargs)
        for value in args:
            cls = value.__class__
            if cls not in _PLAIN_CLASSES and isinstance(value, torch.Tensor):
                return self.fallback(grid, args, kwargs)
        for value in kwargs.values():
            cls = value.__class__
            if cls not in _PLAIN_CLASSES and isinstance(value, torch.Tensor):
                return self.fallback(grid, args, kwargs)
        if grid is None or "grid" in kwargs or "warmup" in kwargs or grid.__class__ is tuple and (
                not grid or min(grid) < 0):  # See [Note: Launch checks]
            return self.fallback(grid, args, kwargs)
        return self.top(grid, args, kwargs)

    def __call__(self, grid: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        return self.launch(grid, *args, **kwargs)

    def key(self, args: tuple, kwargs: dict[str, Any]) -> tuple | None:
        """The innermost key these arguments get (tests), or None when not fast."""
        captured: list[tuple] = []
        ns = self.jit_launcher.namespace
        saved = ns["_f_miss"], ns["_f_cache"], ns["_f_slow"]
        ns.update(_f_miss=lambda key, *rest: captured.append(key), _f_cache={}, _f_slow=_not_fast)
        try:
            self.jit_launcher.launch((1,), *args, **kwargs)
        finally:
            ns["_f_miss"], ns["_f_cache"], ns["_f_slow"] = saved
        return captured[0] if captured else None


def fast_launcher(kernel: Any, static_launch: Any = _UNSET, assume_cuda: bool = False,
                  fallback: Callable[[Any, tuple, dict], Any] = _not_fast, user_kernel: Any = None) -> FastLauncher | None:
    """The fast launch of a JITFunction, optionally under @triton.heuristics / @triton.autotune;
    None for anything else (an InterpretedFunction, a triton we do not know). fallback(grid,
    args, kwargs) is what a call that is not fast returns; user_kernel: what the user launched
    (the wrap_triton wrapper; default the kernel), whose writes a launch bumps. See [Note: Fast launch]."""
    user_kernel = kernel if user_kernel is None else user_kernel
    chain = []
    while not _compat.is_base_kernel(kernel):
        if type(kernel) is _compat.Autotuner and _compat.FAST_LAUNCH_AUTOTUNER:
            chain.append(kernel)
        elif type(kernel) is _compat.Heuristics and _compat.FAST_LAUNCH_HEURISTICS:
            chain.append(kernel)
        else:
            return None
        kernel = kernel.fn
    if type(kernel) is not _compat.JITFunction or not _compat.FAST_LAUNCH_JIT:
        return None
    if static_launch is _UNSET:
        static_launch = _compat.static_cuda_launch() if _STATIC_LAUNCH else None
    jit_launcher = _generate(kernel, static_launch, assume_cuda, user_kernel)
    if jit_launcher is None:
        return None
    tuners = [index for index, wrapper in enumerate(chain) if type(wrapper) is _compat.Autotuner]
    if tuners in ([], [len(chain) - 1]):
        # Heuristics over at most one Autotuner, innermost: one generated launch per layer.
        launch = jit_launcher.launch
        for index, wrapper in reversed(list(enumerate(chain))):
            if type(wrapper) is _compat.Autotuner:
                launch = _generate_tuned(jit_launcher, wrapper)
            elif index == len(chain) - 1:
                launch = _generate_heuristics(jit_launcher, wrapper)
            else:
                launch = _heuristics_launch(wrapper, launch, jit_launcher.names, jit_launcher.specializations, user_kernel)
        return FastLauncher(None, jit_launcher, launch, fallback)
    layer: Any = _JitLayer(jit_launcher)
    for wrapper in reversed(chain):
        layer = (_AutotuneLayer(wrapper, layer, user_kernel) if type(wrapper) is _compat.Autotuner
                 else _HeuristicsLayer(wrapper, layer))
    return FastLauncher(layer, jit_launcher, None, fallback)
