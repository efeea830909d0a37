"""Whether a fused kernel reduces in its kernel's layouts: the layouts triton gives each
reduction and scan, read from the TTGIR of both kernels (no driver needed).

# [Note: A fused kernel reduces in the kernel's layouts]
# TL;DR: on a GPU, a launch of a kernel that reduces or scans is fused only where triton
# gives every reduction and scan of the fused kernel the layout it gives the kernel's own,
# under each specialisation the launch can take; otherwise it is left unfused.
# Context: a reduction adds in the order its operand's layout gives (which elements each
# thread holds, then a butterfly across lanes and warps). Triton picks layouts from the
# memory accesses around the values: its axis analysis of each pointer (contiguity,
# alignment) and the element width. The fused kernel's accesses are not the kernel's (other
# dtypes, new operands, the capped offsets of [Note: Keeping the kernel's vector width]),
# and the analysis differs between triton versions: on triton 3.6 the cap
# `off // 4 * 4 + off % 4` of an offset with no known alignment loses its contiguity, the
# load is laid out column-major, and fuzzer seed 12 #180's row sums came out 1 ulp off the
# unfused program's (triton 3.9 keeps the row-major layout). Rules about accesses cannot
# follow every version's analysis; the layouts it assigns can be compared.
# Specialisations: triton compiles a kernel per (int == 1, int % 16 == 0, pointer 16-byte
# aligned) of its arguments, and layouts depend on them. A static int is its value; a
# pointer is aligned as its storage offset makes it (inductor allocates aligned buffers and
# copies a graph input that arrives misaligned where it compiled for an aligned one); a
# symbolic int or offset is tried both ways, the same way in both kernels where it is the
# same expression. More than MAX_UNKNOWN of them: refused, as too many compilations.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Callable, Iterator, NamedTuple

import torch

from . import _compat
from ._check_compilations import submit

__all__ = ["MAX_UNKNOWN", "Launches", "reduction_layouts", "specialisations", "compiled_pairs", "prefetch",
           "layout_difference", "start_kernel_layouts", "SassAndLayouts", "sass_and_layouts"]

MAX_UNKNOWN = 3

_ALIAS = re.compile(r"^(#[A-Za-z_][\w.]*)\s*=\s*(#.*)$")
_ALIAS_USE = re.compile(r"#[A-Za-z_][\w.]*")
_REDUCING_OP = re.compile(r'"?\b(tt\.reduce|tt\.scan)"?\(')
_ATTRIBUTES = re.compile(r"<\{(.*?)\}>")


def reduction_layouts(ttgir: str) -> list[str]:
    """Each tt.reduce / tt.scan of a TTGIR module, in order: its name, attributes (axis,
    reverse) and operand and result types with their layouts spelled out."""
    lines = ttgir.splitlines()
    aliases = {}
    for line in lines:
        match = _ALIAS.match(line.strip())
        if match and not match.group(1).startswith("#loc"):
            aliases[match.group(1)] = match.group(2)

    def spelled(text: str) -> str:
        for _ in range(4):  # an alias may name another (a slice of #blocked)
            text = _ALIAS_USE.sub(lambda m: aliases.get(m.group(0), m.group(0)), text)
        return text

    found = []
    for i, line in enumerate(lines):
        op = _REDUCING_OP.search(line)
        if op is None:
            continue
        attributes = _ATTRIBUTES.search(line)
        indent = len(line) - len(line.lstrip())
        types = next((l.strip() for l in lines[i + 1:]
                      if l.strip().startswith("})") and len(l) - len(l.lstrip()) == indent), "")
        types = types[types.find(":") + 1:]
        types = types[:types.rfind(" loc(")] if " loc(" in types else types
        found.append(f"{op.group(1)} {attributes.group(1) if attributes else ''} {spelled(types.strip())}")
    return found


def _unknowns(value: Any) -> list[tuple[str, tuple[Any, ...]]]:
    """The specialisation choices a launch argument leaves open: (key, the choices)."""
    if isinstance(value, torch.SymInt) and not isinstance(_compat.maybe_static_int(value), int):
        return [(f"int {value}", (2, 16))]  # not 1, not a multiple of 16 / a multiple of 16
    if isinstance(value, torch.Tensor):
        offset = _compat.maybe_static_int(value.storage_offset())
        if not isinstance(offset, int):
            return [(f"offset {value.storage_offset()} x {value.element_size()}", (0, value.element_size()))]
    return []


def _concrete(value: Any, choice: dict[str, Any]) -> Any:
    if isinstance(value, torch.SymInt):
        static = _compat.maybe_static_int(value)
        return static if isinstance(static, int) else choice[f"int {value}"]
    if isinstance(value, (torch.SymFloat, torch.SymBool)):
        return 2.0 if isinstance(value, torch.SymFloat) else True
    if isinstance(value, torch.Tensor):
        offset = _compat.maybe_static_int(value.storage_offset())
        address = (offset * value.element_size() if isinstance(offset, int)
                   else choice[f"offset {value.storage_offset()} x {value.element_size()}"])
        return _compat.pointer_stand_in(value.dtype, address % 16)
    return value


def specialisations(*arguments: dict[str, Any]) -> Iterator[tuple[dict[str, Any], ...]]:
    """Concrete arguments for each kernel's launch (tensors as pointer stand-ins), one tuple
    per specialisation the launches can take; raises ValueError past MAX_UNKNOWN choices."""
    unknowns = dict(u for args in arguments for value in args.values() for u in _unknowns(value))
    if len(unknowns) > MAX_UNKNOWN:
        raise ValueError(f"{len(unknowns)} symbolic sizes or offsets ({', '.join(unknowns)}) would need "
                         f"{2 ** len(unknowns)} compilations to compare the kernels under each specialisation")
    for picked in itertools.product(*unknowns.values()):
        choice = dict(zip(unknowns, picked))
        yield tuple({name: _concrete(value, choice) for name, value in args.items()} for args in arguments)


def _layouts(kernel: Any, args: dict[str, Any], options: dict[str, Any]) -> tuple[str, ...]:
    return tuple(reduction_layouts(_compat.generate_ttgir_text(kernel, args, options)))


class SassAndLayouts(NamedTuple):
    sass: str
    layouts: tuple[str, ...]  # reduction_layouts of the TTGIR the SASS was compiled from


def sass_and_layouts(kernel: Any, args: dict[str, Any], options: dict[str, Any]) -> SassAndLayouts:
    """One compilation to SASS, read by both checks of a kernel that reduces and divides: its
    TTGIR is the one a compilation to TTGIR alone makes (the same stages, the same options),
    and the GIL-holding stages up to it run once instead of twice."""
    texts: dict[str, str] = {}
    sass = _compat.generate_sass_text(kernel, args, options, texts=texts)
    return SassAndLayouts(sass, tuple(reduction_layouts(texts["ttgir"])))


Launches = list[tuple[dict[str, Any], dict[str, Any]]]  # (config arguments, launch options) per config


def compiled_pairs(derive: Callable[[Any, dict[str, Any], dict[str, Any]], Any], kernel: Any, fused: Any,
                   kernel_args: dict[str, Any], fused_args: dict[str, Any], launches: Launches) -> Iterator[tuple]:
    """(derived from the kernel, derived from the fused kernel) under each specialisation and
    each (config arguments, launch options); ValueError past MAX_UNKNOWN symbolic choices."""
    variants = list(specialisations(kernel_args, fused_args))
    # All of them started at once, in threads (see [Note: The checks' compilations in threads]).
    pairs = [(submit(derive, kernel, {**original, **config_args}, options),
              submit(derive, fused, {**replaced, **config_args}, options))
             for config_args, options in launches for original, replaced in variants]
    for before, after in pairs:
        yield before.result(), after.result()


def prefetch(derive: Callable[[Any, dict[str, Any], dict[str, Any]], Any], kernel: Any, kernel_args: dict[str, Any],
             launches: Launches) -> None:
    """Starts, in threads, the kernel's compilations that compiled_pairs will ask for (those
    its own arguments decide; a symbolic one the fused kernel shares is tried as it will be)."""
    try:
        variants = list(specialisations(kernel_args))
    except ValueError:
        return  # too many symbolic choices: compiled_pairs refuses
    for config_args, options in launches:
        for (original,) in variants:
            submit(derive, kernel, {**original, **config_args}, options)


def start_kernel_layouts(kernel: Any, kernel_args: dict[str, Any], launches: Launches, with_sass: bool) -> None:
    """Starts, in threads, the kernel's TTGIR that layout_difference will read (`with_sass`:
    its compilation to SASS, which the division check reads too)."""
    prefetch(sass_and_layouts if with_sass else _layouts, kernel, kernel_args, launches)


def layout_difference(kernel: Any, fused: Any, kernel_args: dict[str, Any], fused_args: dict[str, Any],
                      launches: Launches, with_sass: bool) -> str | None:
    """Why the fused kernel may reduce in another order than the kernel, or None where it
    reduces in the same layouts under every specialisation, for each (config arguments,
    launch options) the launch can run with (one per autotuning config). `with_sass`: read
    from the compilations to SASS the division check reads (sass_and_layouts)."""
    try:
        for before, after in compiled_pairs(sass_and_layouts if with_sass else _layouts, kernel, fused,
                                            kernel_args, fused_args, launches):
            if with_sass:
                before, after = before.layouts, after.layouts
            if before != after:
                changed = next((f"{b} becomes {a}" for b, a in zip(before, after) if b != a),
                               f"{len(before)} reductions or scans become {len(after)}")
                return f"triton lays out the fused kernel's reductions differently ({changed})"
    except ValueError as e:
        return str(e)
    return None
