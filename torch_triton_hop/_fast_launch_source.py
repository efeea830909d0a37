"""Source of the fast launch's generated functions (see [Note: Fast launch] in _fast_launch.py).

Kept apart from the launcher objects: this module only writes Python source, which
_fast_launch compiles once per kernel.
"""

from __future__ import annotations

import itertools
from typing import Any

from . import _compat

__all__ = ["binding_sets", "heuristics_source", "launch_source"]


def _int_code_lines(name: str, slot: str, specialize: bool, align: bool, indent: str) -> list[str]:
    """Classify an int like triton's native specialization: 1, the i32 / i64 / u64 range,
    divisibility by 16 (codes 1-8)."""
    divisible = specialize and align
    ranges = [("-2147483648 <= {n} <= 2147483647", 2), ("-9223372036854775808 <= {n} <= 9223372036854775807", 4),
              ("0 <= {n} <= 18446744073709551615", 6)]
    lines = []
    first = True
    if specialize:
        lines.append(f"{indent}if {name} == 1: {slot} = 1")
        first = False
    for condition, code in ranges:
        value = f"{code + 1} if not {name} & 15 else {code}" if divisible else f"{code}"
        lines.append(f"{indent}{'if' if first else 'elif'} {condition.format(n=name)}: {slot} = {value}")
        first = False
    lines.append(f"{indent}else: {slot} = 8")
    return lines


# Every generated launch is f(grid, /, *args, **kwargs), called as kernel[grid](...) is: the wrapper
# binds grid to it (a bound method, no frame of ours in between) and it binds the parameters
# itself, so that where the call is not fast it can hand the arguments as passed to
# _f_slow(grid, args, kwargs) (the wrapper's own path, or NOT_FAST). See [Note: Fast launch].
_SLOW = "return _f_slow(_f_grid, _f_args, _f_kw)"
_MODES = f"if _f_modes() or _f_function_modes() or _f_functorch() is not None: {_SLOW}"
# A tuple grid's sizes; a negative one is refused eagerly: today's path. See [Note: Launch checks].
_GRID = [
    "if _f_grid.__class__ is _f_tuple:",
    "    _f_n = _f_len(_f_grid)",
    f"    if not _f_n: {_SLOW}",
    "    _f_g0 = _f_grid[0]; _f_g1 = _f_grid[1] if _f_n > 1 else 1; _f_g2 = _f_grid[2] if _f_n > 2 else 1",
    f"    if _f_g0 < 0 or _f_g1 < 0 or _f_g2 < 0: {_SLOW}",
    f"elif _f_grid is None: {_SLOW}",
]
# Once the user's heuristics have run, Heuristics.run's own end: fn.run with the values computed
# (_f_hrun: then bumps what it wrote, see [Note: Launches bump version counters]).
_HEURISTICS_SLOW = "return _f_hrun(_f_grid, _f_args, _f_kw)"


def _binding(names: list[str], specializations: list[tuple], defaults: dict[str, Any], mode: str, give_up: str,
             before_rest: Any = None) -> list[str]:
    """Bind the parameters as Python would: one branch per positional count (the leading
    non-constexpr parameters first, the usual call), the positional arguments unpacked into
    locals, the rest read from the kwargs. Launch options (kwargs that name no parameter) go to
    _f_options (None when there are none); a parameter given twice, a missing one or too many
    positional arguments leave the fast path (triton raises its TypeError). mode "tuned": any
    parameter may be missing (the config supplies it) and options are not fast.
    before_rest(given): lines run after the positional unpacking (the heuristics)."""
    lines = ["_f_na = _f_len(_f_args)"]
    first = _usual_count(specializations)
    for position, count in enumerate([first] + [c for c in range(len(names) + 1) if c != first]):
        given, rest = names[:count], names[count:]
        lines.append(f"{'if' if position == 0 else 'elif'} _f_na == {count}:")
        if given:
            lines.append(f"    {', '.join(given)}, = _f_args")
        if before_rest is not None:
            lines += [f"    {line}" for line in before_rest(given)]
            if mode == "inner":  # the layer below binds
                continue
        # Kwargs that are not all parameters bound by name: options, or a parameter given twice.
        # Without tuning, every required parameter must be among them: more than that many is the
        # one case to look closer (the missing check below rejects fewer).
        required = [] if mode == "tuned" else [name for name in rest if name not in defaults]
        extra = f"_f_len(_f_kw) > {len(required)}" if required else "_f_kw"
        if mode == "tuned":
            lines.append(f"    if _f_kw and not _f_rest{count}.issuperset(_f_kw): {give_up}")
        else:
            lines.append(f"    if {extra} and not _f_rest{count}.issuperset(_f_kw):")
            lines.append(f"        _f_options = _f_split(_f_kw, _f_rest{count}, _f_nameset)")
            lines.append(f"        if _f_options is None: {give_up}")
            lines.append("    else: _f_options = None")
        for name in rest:
            default = f"_f_default_{name}" if name in defaults and mode != "tuned" else "_f_U"
            lines.append(f"    {name} = _f_kw.get({name!r}, {default})")
        if required:
            lines.append(f"    if {' or '.join(f'{name} is _f_U' for name in required)}: {give_up}")
    # More positional arguments than parameters.
    lines.append(f"else: {_SLOW}")
    return lines


def _usual_count(specializations: list[tuple]) -> int:
    """The usual number of positional arguments: the leading non-constexpr parameters."""
    return len(list(itertools.takewhile(lambda spec: not spec[0], specializations)))


def binding_sets(names: list[str]) -> dict[str, frozenset]:
    """The names _binding's source reads: per positional count, the parameters bound by name."""
    return {f"_f_rest{count}": frozenset(names[count:]) for count in range(len(names) + 1)}


def heuristics_source(names: list[str], specializations: list[tuple], defaults: dict[str, Any],
                      body: list[str] | None = None, leading: int = 0) -> str:
    """_f_hlaunch(grid, /, *args, **kwargs) of a Heuristics. See [Note: Fast heuristics launch].
    body: the plain launch's classification and launch, run in the same frame on the bound
    parameters (a Heuristics directly over the JITFunction), its first `leading` lines the
    classification of the usual positional arguments; None: call _f_inner (the fast launch of
    the Autotuner or Heuristics below)."""
    first = _usual_count(specializations)
    # The usual call classifies its positional arguments before the heuristics run: a tensor
    # subclass (or anything not fast) then takes the wrapper's path, no subclass check needed.
    early = [line.replace(_HEURISTICS_SLOW, _SLOW) for line in (body or [])[:leading]]
    lines = [
        _MODES,
        f"if _f_H.arg_names != _f_names: {_SLOW}",  # the dict literals below name the parameters
        "if _f_kw:",
        f"    if 'grid' in _f_kw or 'warmup' in _f_kw: {_SLOW}",
        "    for _f_x in _f_kw.values():",
        f"        if _f_x.__class__ not in _f_plain and _f_isinstance(_f_x, _f_Tensor): {_SLOW}",
        *_GRID,
    ]

    def run_heuristics(given: list[str]) -> list[str]:
        # The positional arguments are locals and each heuristic's dict is a literal.
        out = []
        if early and len(given) == first:
            out += early
        elif given:
            plain = " and ".join(f"{name}.__class__ in _f_plain" for name in given)
            out.append(f"if not ({plain}) and _f_subclass(_f_args): {_SLOW}")
        items = "".join(f"{name!r}: {name}, " for name in given)
        out.append("for _f_name, _f_h in _f_H.values.items():")
        out.append(f"    _f_kw[_f_name] = _f_h({{{items}'grid': _f_grid, 'warmup': False, **_f_kw}})")
        return out

    # Directly over the JITFunction the branch then binds the other parameters from the kwargs
    # (the values just computed among them); after the heuristics, not fast ends in fn.run.
    lines += _binding(names, specializations, defaults, "inner" if body is None else "plain", _HEURISTICS_SLOW,
                      run_heuristics)
    if body is not None:
        if leading:
            lines.append(f"if _f_na != {first}:")
            lines += [f"    {line}" for line in body[:leading]]
        lines += body[leading:]
    else:
        lines += [
            "_f_r = _f_inner(_f_grid, *_f_args, **_f_kw)",
            f"if _f_r is _f_NOT_FAST: {_HEURISTICS_SLOW}",
            "return _f_r",
        ]
    return "def _f_hlaunch(_f_grid, /, *_f_args, **_f_kw):\n" + "".join(f"    {line}\n" for line in lines)


def launch_source(jit: Any, names: list[str], specializations: list[tuple], defaults: dict[str, Any],
                   option_knobs: list, cuda_check: bool, mode: str, supplied: set[str] = frozenset(),
                   tuning_names: list[str] = ()) -> tuple[str, list]:
    """One generated launch. mode "plain": _f_launch(grid, /, *args, **kwargs), the whole fast path;
    "tuned": _f_atlaunch(grid, /, *args, **kwargs) over an Autotuner; "heuristics":
    _f_hlaunch(grid, /, *args, **kwargs) of a Heuristics (_f_H) directly over the JITFunction,
    heuristics and launch in one frame. Returns (source, key slots)."""
    tuned = mode == "tuned"
    heuristics = mode == "heuristics"
    # After the heuristics have run, nothing may send the call back to the caller's path
    # (it would run them again): whatever is not fast ends in fn.run.
    give_up = _HEURISTICS_SLOW if heuristics else _SLOW
    body: list[str] = []
    add = body.append
    if not heuristics:  # the heuristics launch checks these before running the heuristics
        add(_MODES)
        if tuned:
            add(f"if _f_at.keys != _f_keys: {_SLOW}")
        body.extend(_GRID)
        body.extend(_binding(names, specializations, defaults, mode, _SLOW))
    key_items: list[str] = []
    slots: list[tuple[int, int] | None] = []
    values: list[str] = []  # what the static launch gets: data_ptr() for a tensor, else the value
    fills: list[str] = []
    tuning_values = [name for name in tuning_names if name in names]
    first_slot = 3 + len(option_knobs) + len(tuning_values)  # after device, debug, options / call shape, knobs
    usual, leading = _usual_count(specializations), 0  # leading: the lines classifying the usual positional ones
    for i, (name, (is_constexpr, specialize, align, _annotation)) in enumerate(zip(names, specializations)):
        if i == usual:
            leading = len(body)
        fillable = tuned and name in supplied
        if fillable:
            fills.append(f"if {name} is _f_U: {name} = _f_fill[{i}]" + ("" if is_constexpr else f"; _f_v{i} = {name}"))
        if is_constexpr:
            if tuned:  # See [Note: Fast autotuned launch]: a constexpr's value joins triton's tuning key
                add(f"if {name}.__class__ not in {'_f_simple_u' if fillable else '_f_simple'}: {give_up}")
            else:
                add(f"if {name}.__class__ not in _f_simple and _f_isinstance({name}, _f_Tensor): {give_up}")
            slots.append(None)
            key_items.append(name)
            values.append(name)
            continue
        # Annotated parameters (x: tl.int32, y: tl.float32) are classified like the others:
        # a finer key than triton's ("i32",) + spec[1:] / ("fp32", None) is still exact.
        s, a, v = f"_f_s{i}", f"_f_a{i}", f"_f_v{i}"
        aligned = f"(not {v} & 15)" if specialize and align else "0"
        on_device = f" + (0 if {name}.is_cuda else 2)" if cuda_check else ""
        add(f"_f_t = {name}.__class__")
        add("if _f_t is _f_Tensor or _f_t is _f_Parameter:")
        add(f"    {s} = {name}.dtype")
        add(f"    {v} = {name}.data_ptr()")
        add(f"    {a} = {aligned}{on_device}")
        add("elif _f_t is _f_int:")
        add(f"    {a} = None; {v} = {name}")
        body.extend(_int_code_lines(name, s, specialize, align, "    "))
        add(f"elif _f_t is _f_bool: {s} = -1; {a} = None; {v} = {name}")
        add(f"elif _f_t is _f_float: {s} = -2; {a} = None; {v} = {name}")
        add(f"elif {name} is None: {s} = -3; {a} = None; {v} = None")
        if fillable:
            add(f"elif {name} is _f_U: {s} = -4; {a} = None; {v} = None")
        add(f"else: {give_up}")
        slots.append((first_slot + len(key_items), first_slot + len(key_items) + 1))
        key_items += [s, a]
        values.append(v)
    if usual == len(names):
        leading = len(body)
    for name in tuning_values:  # Autotuner.run keys on their values
        add(f"if {name}.__class__ not in _f_simple_u: {give_up}")
    # What triton's run does before its key: hooks, options, knobs, device.
    add(f"if _f_jit.pre_run_hooks: {give_up}")
    for hook in ("launch_enter_hook", "launch_exit_hook"):
        add(f"_f_h = _f_kr.{hook}")
        add(f"if _f_h is not None and (_f_h.__class__ is not _f_HookChain or _f_h.calls): {give_up}")
    if _compat.RUN_READS_STAGES_HOOK:
        add(f"if _f_kr.add_stages_inspection_hook is not None: {give_up}")
    if tuned:  # options come from the config (checked by its snapshot); the call shape orders the dtypes
        add("_f_ok = _f_tuple(_f_kw) if _f_kw else None")
        add("_f_dbg = _f_jit.debug or _f_kr.debug")
    else:
        add("if _f_options:")
        add("    _f_ok = _f_options_key(_f_options)")
        add(f"    if _f_ok is None: {give_up}")
        add("    _f_dbg = _f_options.get('debug', _f_jit.debug) or _f_kr.debug")
        add("else:")
        add("    _f_ok = None")
        add("    _f_dbg = _f_jit.debug or _f_kr.debug")
    add(f"if _f_dbg.__class__ is not _f_bool: {give_up}")
    run_args = "_f_grid, _f_args, _f_kw"  # triton's run gets the arguments as passed
    add(f"if _f_dcfg.{_compat.ACTIVE_DRIVER_ATTRIBUTE} is not _f_active: return {'_f_atsetup' if tuned else '_f_setup'}({run_args})")
    knob_items = [f"_f_knobs{i}.{attribute}" for i, (_, _, attribute) in enumerate(option_knobs)]
    add("_f_dev = _f_get_device()")
    add("_f_key = (" + ", ".join(["_f_dev", "_f_dbg", "_f_ok", *knob_items, *tuning_values, *key_items]) + ",)")
    add("try:")
    add(f"    _f_e = {'_f_atcache' if tuned else '_f_cache'}.get(_f_key)")
    add("except _f_TypeError:")  # an unhashable constexpr: triton raises its own error
    add(f"    {give_up}")
    if tuned:
        add(f"if _f_e is None: return _f_atmiss(_f_key, {run_args})")
        add("_f_c, _f_snap, _f_tk, _f_kernel, _f_static, _f_launcher, _f_function, _f_packed, _f_caches, _f_tkey, "
            "_f_fill, _f_w = _f_e")
        # Autotuner.run's choice: the cached config for a tuning key, or the only config.
        add("_f_cf = _f_at.configs")
        add("if ((_f_at.cache.get(_f_tk) if _f_len(_f_cf) > 1 else _f_cf[0]) is not _f_c or _f_c.__dict__ != _f_snap"
            " or _f_jit.device_caches.get(_f_dev) is not _f_caches or _f_caches[0].get(_f_tkey) is not _f_kernel):")
        add(f"    return _f_atmiss(_f_key, {run_args})")
    else:
        add(f"if _f_e is None: return _f_miss(_f_key, {run_args})")
        add("_f_kernel, _f_static, _f_launcher, _f_function, _f_packed, _f_caches, _f_tkey, _f_w = _f_e")
        add("if _f_jit.device_caches.get(_f_dev) is not _f_caches or _f_caches[0].get(_f_tkey) is not _f_kernel:")
        add(f"    return _f_miss(_f_key, {run_args})")
    add("_f_u = _f_jit.used_global_vals")
    add("if _f_u: _f_check_globals(_f_u)")
    if tuned:
        add("_f_at.best_config = _f_c")
        body.extend(fills)
    bound = "{" + ", ".join(f"{n!r}: {n}" for n in names) + "}"
    add("if _f_grid.__class__ is not _f_tuple:")
    add(f"    if _f_callable(_f_grid): _f_grid = _f_grid({bound})")
    add("    _f_n = _f_len(_f_grid)")
    add("    _f_g0 = _f_grid[0]; _f_g1 = _f_grid[1] if _f_n > 1 else 1; _f_g2 = _f_grid[2] if _f_n > 2 else 1")
    add("if _f_static is not None:")
    add(f"    _f_static(_f_g0, _f_g1, _f_g2, _f_get_stream(_f_dev), {', '.join(values)})")
    add("else:")
    add("    _f_launcher(_f_g0, _f_g1, _f_g2, _f_get_stream(_f_dev), _f_function, _f_packed, None, None, None, "
        + ", ".join(names) + ")")
    # The tensors it wrote, found when the entry was recorded. See [Note: Launches bump version counters].
    add(f"if _f_w is not None: _f_inc(_f_w(({', '.join(names)},)))")
    add("return _f_kernel")
    if heuristics:
        return heuristics_source(names, specializations, defaults, body, leading), slots
    name = "_f_atlaunch" if tuned else "_f_launch"
    return f"def {name}(_f_grid, /, *_f_args, **_f_kw):\n" + "".join(f"    {line}\n" for line in body), slots
