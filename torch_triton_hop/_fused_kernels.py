"""Fused kernels: a user kernel rewritten to call epilogue / prologue helpers, built from a
recipe that is plain data, so compiled code can define it again when it loads.

# [Note: Fused kernels are data]
# TL;DR: a fused kernel is (the user kernel's stable key, the fused arguments, the helper
# sources, the new parameters): a FusionRecipe. build_fused_kernel() rewrites the user's
# source (_fusion_source), defines the helpers and the kernel from source (registered with
# linecache, so triton and inductor read their source as for any kernel), keeps the user's
# triton.jit options and autotune configs / key / restore_value / reset_to_zero, and adds the
# result to the side table under a key of module DERIVED_KERNEL_MODULE.
# Context: on a GPU inductor embeds the fused source in its generated code; under the
# interpreter the generated code calls our launch by key, and a graph loaded from inductor's
# cache in a new process never ran the fusion pass: its code calls define_fused(recipe)
# first. The recipe only names the user kernel (resolved by the usual rules, see
# [Note: Loading a program imports nothing unasked]) and carries code this package wrote.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import linecache
import threading
from typing import Any

import triton
import triton.language as tl

from . import _compat, _compat_inductor
from ._fusion_source import OFFSET_ZERO, OFFSET_ZERO64, VECTOR_LIMIT, FusedArgument, NotFusible, \
    rewrite_kernel_source
from ._side_table import DERIVED_KERNEL_MODULE, base_kernel, kernel_layers, kernel_side_table, module_constants

__all__ = ["FusionRecipe", "build_fused_kernel", "define_fused", "kernel_python_source", "recipe_of"]

_OFFSET_HELPERS = {
    OFFSET_ZERO: f"def {OFFSET_ZERO}():\n    return tl.full([], 0, tl.int32)\n",
    OFFSET_ZERO64: f"def {OFFSET_ZERO64}():\n    return tl.full([], 0, tl.int64)\n",
    # See [Note: Keeping the kernel's vector width]
    VECTOR_LIMIT: f"def {VECTOR_LIMIT}(offset, WIDTH: tl.constexpr):\n    return offset // WIDTH * WIDTH + offset % WIDTH\n",
}


@dataclasses.dataclass(frozen=True)
class FusionRecipe:
    """What a fused kernel is made of (see [Note: Fused kernels are data])."""

    base_key: str
    arguments: tuple[FusedArgument, ...]
    helpers: tuple[tuple[str, str], ...]  # (name, source) of each helper, in definition order
    new_params: tuple[str, ...]

    def to_json(self) -> str:
        return json.dumps({"base_key": self.base_key, "arguments": [dataclasses.asdict(a) for a in self.arguments],
                           "helpers": [list(h) for h in self.helpers], "new_params": list(self.new_params)},
                          sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "FusionRecipe":
        data = json.loads(text)
        return cls(data["base_key"],
                   tuple(FusedArgument(**{**a, "operands": tuple(a["operands"])}) for a in data["arguments"]),
                   tuple((name, source) for name, source in data["helpers"]), tuple(data["new_params"]))


@dataclasses.dataclass(frozen=True)
class FusedKernel:
    key: str
    kernel: Any
    source: str  # the rewritten kernel, then its helpers: what TORCH_LOGS shows


_built: dict[tuple[str, str], FusedKernel] = {}  # (recipe JSON, module constants) -> kernel
_recipes: dict[str, str] = {}  # fused kernel key -> recipe JSON
_lock = threading.Lock()


def _define(source: str, name: str, scope: dict[str, Any]) -> Any:
    """Define function `name` from `source` in `scope`, with its source readable by inspect."""
    filename = f"<torch_triton_hop fused {name} {hashlib.sha256(source.encode()).hexdigest()[:12]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), scope)
    return scope[name]


def kernel_python_source(fn: Any) -> str:
    """The source of a kernel's Python function, which the fusion rewrites (NotFusible if none)."""
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError) as e:
        raise NotFusible(f"the kernel's source is not available ({e})") from e


def build_fused_kernel(recipe: FusionRecipe) -> FusedKernel:
    """The fused kernel `recipe` describes, built once per process.

    Raises NotFusible where the user kernel's source cannot be rewritten exactly.
    """
    user_kernel = kernel_side_table.get_kernel(recipe.base_key)
    base = base_kernel(user_kernel)
    fn = _compat.python_function(base)
    constants = module_constants(base)
    text = recipe.to_json()
    built = _built.get((text, constants))
    if built is not None:
        return built
    source = kernel_python_source(fn)
    # Named <kernel>_fused: inductor names its launch after it (add_kernel_fused_0.run(...)).
    name = f"{fn.__name__}_fused"
    rewritten = rewrite_kernel_source(source, fn.__globals__, list(recipe.arguments), list(recipe.new_params), name)
    # The helpers hold inductor's Triton text: the names it calls, as its generated code imports them.
    helper_scope: dict[str, Any] = {"tl": tl, "triton": triton, "__name__": DERIVED_KERNEL_MODULE,
                                    **_compat_inductor.triton_runtime_helpers()}
    helpers = {}
    for helper, helper_source in [*_OFFSET_HELPERS.items(), *recipe.helpers]:
        helpers[helper] = triton.jit(_define(helper_source, helper, helper_scope))
        helper_scope[helper] = helpers[helper]
    scope = {**fn.__globals__, **helpers, "__name__": DERIVED_KERNEL_MODULE}
    new_fn = _define(rewritten.source, name, scope)
    kernel = triton.jit(new_fn, **_compat.jit_options(base))
    autotuner = next((layer for layer in kernel_layers(user_kernel) if isinstance(layer, _compat.Autotuner)), None)
    if autotuner is not None:  # graphs hold the traced configs; this keeps key / restore / reset
        kernel = triton.autotune(autotuner.configs, **_compat.autotuner_options(autotuner))(kernel)
    interpreter_config = getattr(user_kernel, "interpreter_config", None)
    if interpreter_config is not None:
        kernel.interpreter_config = interpreter_config
    # The same source in two modules, or after a module constant changed, is another kernel.
    kernel.derived_from = f"{recipe.base_key} {constants}"
    key = kernel_side_table.add_derived_kernel(kernel)
    shown = "\n".join([rewritten.source, *(source for _, source in recipe.helpers)])
    built = FusedKernel(key, kernel, shown)
    with _lock:
        built = _built.setdefault((text, constants), built)
        _recipes.setdefault(built.key, text)
    return built


def define_fused(recipe_json: str) -> str:
    """Define the fused kernel of a recipe (what compiled code calls when it loads); its key."""
    return build_fused_kernel(FusionRecipe.from_json(recipe_json)).key


def recipe_of(key: str) -> str | None:
    """The recipe JSON of a fused kernel's key (None for other kernels)."""
    return _recipes.get(key)
