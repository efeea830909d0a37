"""The kernel side table: what graph nodes refer to but cannot hold.

An FX graph can hold ints, strings, tensors and SymInts, not triton kernels or
``tl.float16``. Graph nodes therefore name a kernel by a *stable key* and carry
non-graphable constants as a *constants key*; this table maps both back.

# [Note: Stable kernel keys]
# TL;DR: a key is "module:qualname@digest", where digest hashes the kernel's source
# (with the @triton.jit helpers it calls and the module constants they read; see [Note:
# Module constants of a kernel]) and every autotune / heuristics layer.
# Context: torch's side table hands out process-local counters (kernel_idx=0), so an
# exported program saved in one process names nothing in another, and snapshots
# depend on test order. With a stable key a fresh process imports `module`, looks up
# `qualname` and checks the digest: a changed kernel is never mistaken for the old
# one, and a kernel that cannot be imported fails with an error naming it.
#
# [Note: Constants keys]
# TL;DR: constants are keyed by their canonical JSON text, e.g. '{"ACT":null}'.
# The key is the content, so a million calls with the same constants add nothing,
# and it decodes in any process. Values JSON cannot spell (arbitrary objects) get an
# "in-process:" key that works only where it was made.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import importlib
import inspect
import json
import os
import sys
import threading
from typing import Any

from . import _compat
from .errors import KernelResolutionError

__all__ = ["KernelSideTable", "kernel_side_table", "compute_kernel_key", "kernel_key_name", "allow_kernel_modules",
           "kernel_module_allowed", "TensorDescriptorSpec", "module_constants"]

# Objects that wrap a triton kernel (our TritonKernelWrapper) expose it under this name,
# so the side table can resolve them without importing the wrapper module.
WRAPPED_KERNEL_ATTRIBUTE = "__wrapped_triton_kernel__"
# The types of such objects (_wrap adds TritonKernelWrapper): loading a program recognises a
# wrapper among a module's globals by its type, without reading attributes of other objects.
KERNEL_WRAPPER_TYPES: set[type] = set()

_IN_PROCESS_PREFIX = "in-process:"
_LAUNCHER_CACHE_SIZE = 256


# Kernels the package derives from user kernels (fused kernels) carry this module name in their
# keys; they resolve from the registry below, filled by the code that defines them (never by
# import), which outlives reset() because compiled code defines each once, when it loads.
DERIVED_KERNEL_MODULE = "torch_triton_hop.fused"
_derived_kernels: dict[str, Any] = {}

_ALLOWED_MODULES: set[str] = set()
_ALLOWED_MODULES_VARIABLE = "TORCH_TRITON_HOP_KERNEL_MODULES"


def allow_kernel_modules(*names: str) -> None:
    """Let loaded programs import these modules to find their kernels.

    A saved program names each kernel by module; by default only modules already imported
    are used. Names are module names (``"my_pkg.kernels"``) or prefixes ending in ``.*``
    (``"my_pkg.*"``). The environment variable ``TORCH_TRITON_HOP_KERNEL_MODULES`` takes the
    same names, separated by commas, for deployment.

    Example::

        >>> import torch_triton_hop
        >>> torch_triton_hop.allow_kernel_modules("my_pkg.kernels", "other_pkg.*")

    Raises:
        ValueError: a name is not a string or is empty.
    """
    for name in names:
        if not isinstance(name, str) or not name.strip(".*"):
            raise ValueError(f"allow_kernel_modules: expected module names such as 'my_pkg.kernels', got {name!r}")
        _ALLOWED_MODULES.add(name)


def kernel_module_allowed(module_name: str) -> bool:
    from_variable = os.environ.get(_ALLOWED_MODULES_VARIABLE, "").split(",")
    names = _ALLOWED_MODULES | {n.strip() for n in from_variable if n.strip()}
    return any(module_name == n or (n.endswith(".*") and module_name.startswith(n[:-1])) for n in names)


def kernel_key_name(key: str) -> str:
    """The kernel's qualified name in a stable key ("pkg.kernels:add_kernel@3f2a..." -> "add_kernel")."""
    return key.partition(":")[2].rpartition("@")[0] or key


def unwrap_user_object(obj: Any) -> Any:
    return getattr(obj, WRAPPED_KERNEL_ATTRIBUTE, obj)


def kernel_layers(kernel: Any) -> list[Any]:
    """The autotune / heuristics layers above a kernel, outermost first (wrap_triton unwrapped)."""
    layers = []
    kernel = unwrap_user_object(kernel)
    while not _compat.is_base_kernel(kernel):
        layers.append(kernel)
        kernel = kernel.fn
    return layers


def base_kernel(kernel: Any) -> Any:
    """The JITFunction / InterpretedFunction under any wrap_triton / autotune / heuristics layers."""
    kernel = unwrap_user_object(kernel)
    while not _compat.is_base_kernel(kernel):
        kernel = kernel.fn
    return kernel


def _function_fingerprint(fn: Any) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        code = getattr(fn, "__code__", None)
        return code.co_code.hex() if code is not None else repr(fn)


def _global_names(fn: Any) -> list[tuple[str, Any]]:
    """(name, value) of what a function's code can read from its module: globals it names, and
    attributes it names of modules among them (`helpers.combine`, `cfg.SCALE`).

    Read from the modules' own namespaces: a module's __getattr__ (a lazy import) never runs.
    Triton's own modules are left out (`tl.sum` is a @triton.jit function too): a program
    saved with one triton release names the same kernel under another.
    """
    names = sorted(set(fn.__code__.co_names))
    found: list[tuple[str, Any]] = []
    for name in names:
        if name not in fn.__globals__:  # an attribute's name, or a builtin
            continue
        value = fn.__globals__[name]
        if _of_triton(value):
            continue
        found.append((f"{fn.__module__}.{name}", value))
        if inspect.ismodule(value):
            namespace = vars(value)
            found += [(f"{fn.__module__}.{name}.{attribute}", namespace[attribute]) for attribute in names
                      if attribute in namespace]
    return found


def _of_triton(value: Any) -> bool:
    module = value.__name__ if inspect.ismodule(value) else getattr(_compat.python_function(value), "__module__", "") \
        if _compat.is_base_kernel(value) else ""
    return module == "triton" or module.startswith("triton.")


def _kernel_dependencies(kernel: Any) -> tuple[list[Any], str]:
    """The base kernel and the @triton.jit functions it calls (through globals and module
    attributes, transitively), and the values of the module constants they read, as text."""
    import triton.language as tl

    constant_types = (bool, int, float, str, type(None), tl.constexpr, tl.dtype)
    functions: list[Any] = []
    values: list[str] = []
    seen: set[int] = set()
    pending = [kernel]
    while pending:
        function = pending.pop(0)
        if id(_compat.python_function(function)) in seen:
            continue
        seen.add(id(_compat.python_function(function)))
        functions.append(function)
        for name, value in _global_names(_compat.python_function(function)):
            if isinstance(value, constant_types):
                values.append(f"{name}={_constant_text(value)}")
            elif _compat.is_base_kernel(value):
                pending.append(value)
    return functions, ";".join(values)


def _constant_text(value: Any) -> str:
    """A module constant as text that every process gives alike: a tl.constexpr holding a
    function (`@tl.constexpr def accumulator_type(dtype)`, FlagGems' idiom) by the function's
    source; its repr holds the function's address, so another process computed another kernel
    key and refused a saved program as changed."""
    held = getattr(value, "value", None)
    if hasattr(held, "__code__"):
        return f"constexpr function {_function_fingerprint(held)}"
    return repr(value)


def module_constants(kernel: Any) -> str:
    """The values of the module constants (`SCALE`, `cfg.SCALE`) a base kernel and the
    @triton.jit functions it calls read, as text.

    # [Note: Module constants of a kernel]
    # TL;DR: a kernel's key names its source, the @triton.jit functions it calls and the
    # module constants they read; code that copies the constants must be keyed on them too.
    # Triton reads them when it compiles; inductor copies their values into its generated
    # code, and so does a fused kernel, defined in a copy of the module's globals. So the FX
    # graph cache keys graphs with launches on them, and a fused kernel is built again, under
    # another key, when one changes. Two kernels of one source in two modules differ only by
    # them (an adversarial hunt, twelfth session). A saved program whose kernel's helper or
    # constant changed is refused on load like one whose kernel changed (fourteenth session).
    """
    return _kernel_dependencies(kernel)[1]


def _layer_description(layer: Any) -> str:
    if isinstance(layer, _compat.Autotuner):
        options = _compat.autotuner_options(layer)
        options.pop("do_bench", None)
        return "autotune " + json.dumps(
            {
                "configs": [_compat.config_fields(c) for c in layer.configs],
                "options": options,
                "top_k": _compat.autotuner_top_k(layer),
                "prune": [_function_fingerprint(f) for f in (layer.early_config_prune, layer.perf_model) if f],
            },
            sort_keys=True,
            default=repr,
        )
    if isinstance(layer, _compat.Heuristics):
        return "heuristics " + json.dumps(
            {name: _function_fingerprint(fn) for name, fn in layer.values.items()}, sort_keys=True
        )
    functions, constants = _kernel_dependencies(layer)
    return "jit " + "\n".join(_compat.kernel_source(f) for f in functions) + "\nconstants " + constants


def compute_kernel_key(kernel: Any) -> str:
    """The stable key of a triton kernel object. See [Note: Stable kernel keys]."""
    digest = hashlib.sha256()
    writes = getattr(kernel, "writes", None)
    if writes is not None:  # wrap_triton(kernel, writes=...) declares different semantics
        digest.update(("writes " + ",".join(writes)).encode())
    derived_from = getattr(kernel, "derived_from", None)
    if derived_from is not None:  # a fused kernel: its source alone does not say what its globals hold
        digest.update(("derived from " + derived_from).encode())
    interpreter_config = getattr(kernel, "interpreter_config", None)
    if interpreter_config is not None:  # runs another config under the interpreter
        digest.update(("interpreter_config " + json.dumps(interpreter_config, sort_keys=True)).encode())
    layer = unwrap_user_object(kernel)
    while True:
        digest.update(_layer_description(layer).encode())
        if _compat.is_base_kernel(layer):
            break
        layer = layer.fn
    fn = _compat.python_function(layer)
    return f"{fn.__module__}:{fn.__qualname__}@{digest.hexdigest()[:16]}"


# --- constants -----------------------------------------------------------------------

# [Note: Host-side tensor descriptors]
# TL;DR: a TensorDescriptor argument is split in two: its tensor goes into the node's
# kwargs under the parameter's name (a graph input like any tensor: functionalized,
# cloned, aliased, resized symbolically), and a TensorDescriptorSpec (block shape,
# padding) into its constants under the same name. Each launch rebuilds the descriptor
# with TensorDescriptor.from_tensor over the tensor it is given; inductor's GPU code does
# the same from the spec. A descriptor whose shape and strides are not its tensor's is
# refused (build it from a view that has them).


@dataclasses.dataclass(frozen=True)
class TensorDescriptorSpec:
    """What a host-side TensorDescriptor adds to its tensor. See [Note: Host-side tensor descriptors]."""

    block_shape: tuple[int, ...]
    padding: str = "zero"
    round_f32_to_tf32: bool = False  # triton >= 3.9

    def encode(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"block_shape": list(self.block_shape)}
        if self.padding != "zero":
            fields["padding"] = self.padding
        if self.round_f32_to_tf32:
            fields["round_f32_to_tf32"] = True
        return {"tensor_descriptor": fields}

    @classmethod
    def decode(cls, fields: dict[str, Any]) -> "TensorDescriptorSpec":
        block_shape = fields.get("block_shape")
        padding = fields.get("padding", "zero")
        tf32 = fields.get("round_f32_to_tf32", False)
        if (not isinstance(block_shape, list) or not all(type(b) is int and b > 0 for b in block_shape)
                or padding not in ("zero", "nan") or not isinstance(tf32, bool)
                or set(fields) - {"block_shape", "padding", "round_f32_to_tf32"}):
            raise KernelResolutionError(f"wrap_triton: malformed tensor descriptor constant {fields!r} in the program")
        return cls(tuple(block_shape), padding, tf32)


def _encode_value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if _compat.is_triton_dtype(value):
        return {"tl.dtype": str(value)}
    if isinstance(value, TensorDescriptorSpec):
        return value.encode()
    raise TypeError(type(value).__name__)


def _decode_value(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"tl.dtype"}:
        dtype = _compat.triton_dtype_from_name(value["tl.dtype"]) if isinstance(value["tl.dtype"], str) else None
        if dtype is None:
            raise KernelResolutionError(f"wrap_triton: unknown triton dtype {value['tl.dtype']!r} in the program")
        return dtype
    if isinstance(value, dict) and set(value) == {"tensor_descriptor"}:
        return TensorDescriptorSpec.decode(value["tensor_descriptor"])
    if not _is_scalar(value):
        raise KernelResolutionError(f"wrap_triton: unknown constant {value!r} in the program")
    return value


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _json_object(text: Any, what: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError) as e:
        raise KernelResolutionError(f"wrap_triton: malformed {what} {text!r} in the program ({e})") from None


# [Note: Configs in a saved program are data]
# TL;DR: a node's configs are checked to hold only what config_fields records: constexpr
# values, the launch options num_warps / num_stages / num_ctas / maxnreg as ints, and
# descriptor block shapes.
# Context: the kernel is checked by its digest on load, but the configs travel in the node.
# Fields triton.Config also takes, such as ir_override (a path to IR triton compiles in the
# kernel's place) or pre_hook, would let an edited program run code it names (an adversarial
# hunt, fourteenth session). Values are what a call could pass as arguments anyway.
_CONFIG_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
# Config fields recording what a pre_hook did at trace time. See [Note: Config pre_hooks the graph records].
RECORDED_PRE_HOOK_FIELDS = ("block_shapes", "zeroed")


def runs_a_recorded_pre_hook(configs: list[dict[str, Any]]) -> bool:
    return any(config.get(field) for config in configs for field in RECORDED_PRE_HOOK_FIELDS)


def _checked_config(config: Any) -> dict[str, Any]:
    def fail(why: str) -> KernelResolutionError:
        return KernelResolutionError(f"wrap_triton: malformed autotune config {config!r} in the program: {why}. "
                                     "Re-export the program; an edited program is not run.")

    if not isinstance(config, dict) or not isinstance(config.get("kwargs"), dict):
        raise fail("not an object with a 'kwargs' object")
    unknown = set(config) - {"kwargs", *RECORDED_PRE_HOOK_FIELDS, *_CONFIG_OPTIONS}
    if unknown:
        raise fail(f"unknown field(s) {sorted(unknown)}")
    if not all(isinstance(name, str) and _is_scalar(value) for name, value in config["kwargs"].items()):
        raise fail("its kwargs must be None, bool, int, float or str")
    if not all(type(config[name]) is int for name in _CONFIG_OPTIONS if name in config):
        raise fail(f"{', '.join(_CONFIG_OPTIONS)} must be ints")
    shapes = config.get("block_shapes", {})
    if not isinstance(shapes, dict) or not all(
            isinstance(shape, list) and all(type(b) is int and b > 0 for b in shape) for shape in shapes.values()):
        raise fail("block_shapes must map names to lists of positive ints")
    zeroed = config.get("zeroed", [])
    if not isinstance(zeroed, list) or not all(isinstance(name, str) and name.isidentifier() for name in zeroed):
        raise fail("zeroed must list argument names")
    return config


class KernelSideTable:
    """Maps stable kernel keys to kernels and constants keys to constants. Thread-safe.

    The one instance is ``torch_triton_hop.kernel_side_table``. Tracing adds each launched
    kernel; a graph node names it by its key (module, qualified name and a digest of the
    source and autotune configs), and running the node looks the key up here, importing the
    kernel's module only if :func:`allow_kernel_modules` allows it.

    Example (``add_one`` from :func:`wrap_triton`'s example)::

        >>> from torch_triton_hop import kernel_side_table
        >>> key = kernel_side_table.add_kernel(add_one)
        >>> key
        '...:add_one@...'
        >>> kernel_side_table.get_kernel(key) is add_one
        True
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Forget everything (for tests); kernels are re-resolved by import on demand."""
        with self._lock:
            self._kernels: dict[str, Any] = {}
            self._key_by_id: dict[int, str] = {}
            self._constants: dict[str, dict[str, Any]] = {}
            self._configs: dict[str, list[dict[str, Any]]] = {}
            self._launchers: collections.OrderedDict[Any, Any] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._kernels) + len(self._constants)

    # kernels
    def add_kernel(self, kernel: Any) -> str:
        key = self._key_by_id.get(id(kernel))
        if key is not None:
            return key
        key = compute_kernel_key(kernel)
        with self._lock:
            known = self._kernels.setdefault(key, kernel)
            if known is kernel:
                self._key_by_id[id(kernel)] = key
        return key

    def add_derived_kernel(self, kernel: Any) -> str:
        """Add a kernel the package built from a user kernel (its module is DERIVED_KERNEL_MODULE)."""
        key = self.add_kernel(kernel)
        with self._lock:
            _derived_kernels.setdefault(key, kernel)
        return key

    def get_kernel(self, key: str) -> Any:
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = self._resolve_by_import(key)
            with self._lock:
                kernel = self._kernels.setdefault(key, kernel)
                self._key_by_id[id(kernel)] = key
        return kernel

    def found_by_import(self, key: str) -> bool:
        """Whether the kernel `key` names is found the way a loading process finds it: a
        module-level attribute, of an importable module, whose key is `key` (pickling a wrapper
        asks; see [Note: Copying and pickling a wrapper])."""
        try:
            self._resolve_by_import(key)
        except KernelResolutionError:
            return False
        return True

    def _resolve_by_import(self, key: str) -> Any:
        """The kernel a key names, from a module the user imported or allowed.

        # [Note: Loading a program imports nothing unasked]
        # TL;DR: a key's module is looked up in sys.modules; it is imported only if the user
        # allowed it (allow_kernel_modules, or TORCH_TRITON_HOP_KERNEL_MODULES), and the
        # digest is checked before anything found there is used.
        # Context: a saved program is data. Importing whatever module a (possibly edited)
        # key names would run that module's top-level code on load.
        """
        module_name, _, rest = key.partition(":")
        qualname, _, digest = rest.rpartition("@")
        if module_name == DERIVED_KERNEL_MODULE:
            kernel = _derived_kernels.get(key)
            if kernel is None:
                raise KernelResolutionError(
                    f"wrap_triton: fused kernel {key!r} is not defined in this process; the compiled code "
                    "that launches it defines it when it loads. Recompile the function that uses it.")
            return kernel
        if "<locals>" in qualname or module_name == "__main__":
            raise KernelResolutionError(
                f"wrap_triton: cannot resolve kernel {key!r}: it was defined in "
                f"{'a local scope' if '<locals>' in qualname else '__main__'}, which another process "
                "cannot import. Define the kernel at module level in an importable module."
            )
        module = sys.modules.get(module_name)
        if module is None:
            if not kernel_module_allowed(module_name):
                raise KernelResolutionError(
                    f"wrap_triton: the program's kernel {qualname!r} lives in module {module_name!r}, which is "
                    "not imported and not allowed to be imported, so nothing was imported. Import it before "
                    f"running the program, or allow it: torch_triton_hop.allow_kernel_modules({module_name!r}) "
                    f"or TORCH_TRITON_HOP_KERNEL_MODULES={module_name}."
                )
            try:
                module = importlib.import_module(module_name)
            except Exception as e:  # the module's own code may raise anything
                raise KernelResolutionError(
                    f"wrap_triton: the program's kernel {qualname!r} lives in module {module_name!r}, and importing "
                    f"it failed ({type(e).__name__}: {e}). Make that module and what it imports importable here "
                    "(installed, or on sys.path), and its import work."
                ) from e
        candidates = []
        obj: Any = module
        for part in qualname.split("."):
            # Static lookup: a module's __getattr__ may import submodules (numpy's, torch's),
            # a class's may run code; neither is the user's asking.
            obj = inspect.getattr_static(obj, part, None)
        if obj is not None:
            candidates.append(obj)
        candidates.extend(vars(module).values())  # a kernel bound to another name, e.g. k2 = autotune(...)(k)
        for candidate in candidates:
            # By type: reading an attribute of any other global could run its class's
            # __getattr__ or properties, code the user did not ask to run.
            if type(candidate) in KERNEL_WRAPPER_TYPES or _compat.is_triton_kernel(candidate):
                if _compat.is_triton_kernel(unwrap_user_object(candidate)) and compute_kernel_key(candidate) == key:
                    return candidate
        raise KernelResolutionError(
            f"wrap_triton: module {module_name!r} has no kernel {qualname!r} whose source (with the @triton.jit "
            f"functions it calls and the module constants they read) and autotune configs hash to {digest!r}: the kernel changed since the program was saved, or the program was edited. "
            "Nothing found there was used; re-export the program with the current kernel."
        )

    # constants
    def add_constants(self, constants: dict[str, Any]) -> str:
        """Key for a dict of non-graphable constants. See [Note: Constants keys]."""
        try:
            key = json.dumps({k: _encode_value(v) for k, v in constants.items()}, sort_keys=True,
                             separators=(",", ":"))
        except TypeError:
            text = repr(sorted(constants.items(), key=lambda item: item[0]))
            key = _IN_PROCESS_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:16]
        if key not in self._constants:
            with self._lock:
                self._constants.setdefault(key, dict(constants))
        return key

    def get_constants(self, key: str) -> dict[str, Any]:
        constants = self._constants.get(key)
        if constants is not None:
            return constants
        if key.startswith(_IN_PROCESS_PREFIX):
            raise KernelResolutionError(
                f"wrap_triton: constant arguments {key!r} were recorded in another process and "
                "cannot be rebuilt here. Pass only None, bool, int, float, str or triton dtypes "
                "as non-tensor kernel arguments of programs you save."
            )
        encoded = _json_object(key, "constant arguments")
        if not isinstance(encoded, dict):
            raise KernelResolutionError(f"wrap_triton: malformed constant arguments {key!r} in the program: "
                                        "not an object of names to values")
        constants = {k: _decode_value(v) for k, v in encoded.items()}
        with self._lock:
            return self._constants.setdefault(key, constants)

    # configs
    def get_configs(self, configs_json: str) -> list[dict[str, Any]]:
        """A node's autotune configs, as config_fields records them, checked: see [Note:
        Configs in a saved program are data]. The caller must not change them."""
        configs = self._configs.get(configs_json)
        if configs is None:
            decoded = _json_object(configs_json, "autotune configs")
            if not isinstance(decoded, list):
                raise KernelResolutionError(f"wrap_triton: malformed autotune configs {configs_json!r} in the "
                                            "program: not a list")
            configs = [_checked_config(config) for config in decoded]
            with self._lock:
                configs = self._configs.setdefault(configs_json, configs)
        return configs

    # launchers: rebuilt autotuners, bounded because they can always be rebuilt
    def cached_launcher(self, cache_key: Any, build: Any) -> Any:
        launcher = self._launchers.get(cache_key)
        if launcher is None:
            launcher = build()
            with self._lock:
                self._launchers[cache_key] = launcher
                while len(self._launchers) > _LAUNCHER_CACHE_SIZE:
                    self._launchers.popitem(last=False)
        return launcher


kernel_side_table = KernelSideTable()
