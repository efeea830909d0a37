"""Run Liger-Kernel's ops through ``torch_triton_hop.wrap_triton``.

The user recipe: replace every module-level kernel object that ``liger_kernel.ops.*`` launches
by ``wrap_triton(obj)``, so Liger's own ``torch.autograd.Function``s launch through the package
and make_fx / torch.export / torch.compile capture the launches. A module attribute holds the
wrapper, so a saved program's key ``liger_kernel.ops.rms_norm:_rms_norm_forward_kernel@...``
resolves to it in another process (the wrapper's key is the kernel's key).

Under ``TRITON_INTERPRET=1`` (CI, no GPU) Liger needs a few workarounds for the interpreter:
``wrap_liger_kernels`` patches Liger's module attributes (libdevice ``rsqrt``, the device-arch
query), and ``interpreter_float_arguments()``, a context manager, makes the interpreter pass
float arguments as fp32 scalars. Each says what it works around. None of them is in the package,
and none is applied on a GPU.
"""

from __future__ import annotations

import contextlib
import importlib
import os

import triton
import triton.language as tl

from torch_triton_hop import wrap_triton
from torch_triton_hop._compat import is_triton_kernel
from torch_triton_hop._wrap import TritonKernelWrapper

# The modules whose ops the tests use. utils holds element_mul_kernel, which cross_entropy
# imports and launches (its key names liger_kernel.ops.utils).
LIGER_MODULES = (
    "liger_kernel.ops.utils",
    "liger_kernel.ops.rms_norm",
    "liger_kernel.ops.swiglu",
    "liger_kernel.ops.rope",
    "liger_kernel.ops.layer_norm",
    "liger_kernel.ops.cross_entropy",
    "liger_kernel.ops.group_norm",
)

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"

# id(raw kernel) -> its wrapper: a kernel imported into several modules gets one wrapper.
_WRAPPERS: dict[int, TritonKernelWrapper] = {}


def _helper_kernels(modules) -> set[int]:
    """ids of @triton.jit functions that other kernels call from their body (``silu`` in swiglu).

    Those must stay raw: a kernel body resolves them through the module's globals, and triton
    (compiler and interpreter) only inlines a JIT function there, not a wrapper.
    """
    helpers: set[int] = set()
    for module in modules:
        for obj in vars(module).values():
            if isinstance(obj, TritonKernelWrapper):  # wrapped by an earlier call
                obj = obj.kernel
            if not is_triton_kernel(obj):
                continue
            base = obj
            while hasattr(base, "fn") and is_triton_kernel(base.fn):  # autotune / heuristics layers
                base = base.fn
            fn = base.fn
            for name in fn.__code__.co_names:
                dependency = fn.__globals__.get(name)
                if isinstance(dependency, TritonKernelWrapper):
                    dependency = dependency.kernel
                if dependency is not obj and is_triton_kernel(dependency):
                    helpers.add(id(dependency))
    return helpers


def wrap_liger_kernels(module_names=LIGER_MODULES) -> dict[str, list[str]]:
    """Replace each launched module-level triton kernel in ``module_names`` by its wrapper.

    Idempotent: attributes that already hold a wrapper are left alone. Returns
    ``{module: [names wrapped]}`` (all launched kernels, including those wrapped earlier).
    """
    modules = [importlib.import_module(name) for name in module_names]
    if INTERPRETED:
        _apply_interpreter_workarounds(modules)
    helpers = _helper_kernels(modules)
    wrapped: dict[str, list[str]] = {}
    for module in modules:
        for name, obj in list(vars(module).items()):
            if isinstance(obj, TritonKernelWrapper):
                wrapped.setdefault(module.__name__, []).append(name)
                continue
            if not is_triton_kernel(obj) or id(obj) in helpers:
                continue
            wrapper = _WRAPPERS.get(id(obj))
            if wrapper is None:
                wrapper = _WRAPPERS[id(obj)] = wrap_triton(obj)
            setattr(module, name, wrapper)
            wrapped.setdefault(module.__name__, []).append(name)
    return wrapped


# --- CPU: workarounds for the Triton interpreter ----------------------------------------

_LIBDEVICE_USERS = ("liger_kernel.ops.rms_norm", "liger_kernel.ops.layer_norm", "liger_kernel.ops.group_norm")
_DEVICE_ARCH_USERS = ("liger_kernel.ops.swiglu", "liger_kernel.ops.cross_entropy")
_patched_modules: set[str] = set()


@triton.jit
def _interpreter_rsqrt(x):
    return tl.rsqrt(x)


def _apply_interpreter_workarounds(modules) -> None:
    """Patch Liger's module attributes (not the package, not the kernels' sources)."""
    names = {module.__name__ for module in modules}
    for name in sorted(names - _patched_modules):
        module = importlib.import_module(name)
        _patched_modules.add(name)
        if name in _LIBDEVICE_USERS and hasattr(module, "rsqrt"):
            # libdevice: these modules call `triton.language.extra.libdevice.rsqrt`, a stub that
            # only the compiler lowers. The interpreter patches triton.language but not libdevice,
            # so the stub returns None ("cannot convert None of type NoneType to tensor" at the
            # next tl.store). A @triton.jit helper calling tl.rsqrt runs under the interpreter and
            # keeps the kernel compilable to TTIR, which wrap_triton's read/write analysis needs.
            module.rsqrt = _interpreter_rsqrt
        if name in _DEVICE_ARCH_USERS and hasattr(module, "infer_device_arch"):
            # Device query: without CUDA, liger_kernel.utils.infer_device() asks
            # is_npu_available(), which imports transformers inside try/except. Dynamo cannot
            # trace a failing import, so torch.compile(fullgraph=True) of SwiGLU breaks at
            # `_should_tile` ("Import failure ... transformers.utils"). Answer with the value
            # computed once here, eagerly. (On a GPU infer_device() returns "cuda" first.)
            arch = module.infer_device_arch()
            module.infer_device_arch = lambda device_id=0, _arch=arch: _arch


@contextlib.contextmanager
def interpreter_float_arguments():
    """Under TRITON_INTERPRET=1, pass Python float kernel arguments as fp32 scalars.

    A compiled kernel receives a float argument as an fp32 scalar; triton 3.9's interpreter
    passes it on as a Python float (its _implicit_cvt converts bool, int and pointers only), so
    Liger's `eps.to(tl.float32)` / `gate_multiplier.to(tl.float32)` raise "'float' object has
    no attribute 'to'". This converts floats as the compiler does. It patches triton itself,
    so it is a context manager: other tests in the session keep the interpreter as it is.
    No-op on a GPU.
    """
    if not INTERPRETED:
        yield
        return
    import numpy as np
    from triton.runtime import interpreter

    original = interpreter._implicit_cvt

    def _implicit_cvt(arg):
        if type(arg) is float:
            return tl.tensor(interpreter.TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return original(arg)

    interpreter._implicit_cvt = _implicit_cvt
    try:
        yield
    finally:
        interpreter._implicit_cvt = original
