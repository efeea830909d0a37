"""TTIR generation without a GPU driver: the private triton APIs behind the analysis.

Part of the compatibility layer (with _compat.py): every triton-internal call the
read/write analysis needs, each branch commented with the versions that take it.
Works on triton 3.6-3.9 with an explicit target, never touching
triton.runtime.driver.active, for JITFunction and InterpretedFunction kernels.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import threading
from types import ModuleType
from typing import Any, Dict, Optional, Tuple

import triton
import triton.runtime.jit as _jit_mod
from triton.runtime.jit import JITFunction

__all__ = ["generate_ttir_module", "generate_ttgir_text", "generate_ttir_and_ttgir_text", "generate_sass_text", "compute_specialization",
           "as_jit_function", "PointerStandIn"]


# ---------------------------------------------------------------------------
# Target / backend
# ---------------------------------------------------------------------------

def _default_target():
    # triton.backends.compiler.GPUTarget: same dataclass(backend, arch, warp_size) in 3.6-3.9.
    from triton.backends.compiler import GPUTarget
    return GPUTarget("cuda", 90, 32)


def _make_backend(target):
    # triton.compiler.compiler.make_backend(target) exists in 3.6-3.9; it only
    # inspects the installed backends and does not touch the driver.
    return triton.compiler.compiler.make_backend(target)


# ---------------------------------------------------------------------------
# InterpretedFunction -> JITFunction
# ---------------------------------------------------------------------------

# Cache: id(InterpretedFunction) -> (InterpretedFunction, JITFunction). The
# InterpretedFunction is kept alive in the value so the id cannot be reused.
_INTERP_TO_JIT: Dict[int, Tuple[Any, JITFunction]] = {}


def _is_interpreted_function(obj) -> bool:
    # triton.runtime.interpreter.InterpretedFunction (3.6-3.9: identical class,
    # attributes fn, rewriter, kwargs, pre_run_hooks, arg_names). Imported lazily
    # because the interpreter module imports numpy.
    if type(obj).__name__ != "InterpretedFunction":
        return False
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except Exception:  # pragma: no cover
        return False
    return isinstance(obj, InterpretedFunction)


def _translate_value(v):
    if _is_interpreted_function(v):
        return _interp_to_jit(v)
    if type(v) is ModuleType and _module_needs_proxy(v):
        return _proxy_module(v)
    return v


def _translate_scope(scope: dict) -> dict:
    """Copy of a capture scope with InterpretedFunctions -> JITFunctions and modules
    that (transitively) hold InterpretedFunctions -> lazy proxy modules."""
    return {k: _translate_value(v) for k, v in scope.items()}


def _contains_interp(m) -> bool:
    try:
        return any(_is_interpreted_function(v) for v in list(vars(m).values()))
    except Exception:
        return False


_NEEDS_PROXY_MEMO: Dict[int, Tuple[Any, int, bool]] = {}


def _module_needs_proxy(m) -> bool:
    name = getattr(m, "__name__", "") or ""
    # Under TRITON_INTERPRET=1 every @jit in triton.language (tl.sum, tl.cdiv, tl.zeros_like,
    # tl.standard.*, tl.random.*, ...) is an InterpretedFunction (3.6-3.9).
    if name == "triton.language" or name.startswith("triton.language."):
        return True
    nmods = len(sys.modules)
    hit = _NEEDS_PROXY_MEMO.get(id(m))
    if hit is not None and hit[0] is m and hit[1] == nmods:
        return hit[2]
    res = _contains_interp(m)
    if not res and hasattr(m, "__path__"):  # package: look at its imported submodules
        prefix = name + "."
        res = any(_contains_interp(sm) or sm_name.startswith("triton.language")
                  for sm_name, sm in list(sys.modules.items())
                  if sm is not None and sm_name.startswith(prefix))
    _NEEDS_PROXY_MEMO[id(m)] = (m, nmods, res)
    return res


_MOD_PROXY: Dict[int, Tuple[Any, ModuleType]] = {}


def _proxy_module(m) -> ModuleType:
    """A plain ModuleType (the code generator requires ``type(v) is ModuleType``) with the same
    __name__ (so the backend module_map, e.g. libdevice, still applies) whose attributes are
    fetched lazily from ``m`` through a PEP 562 module ``__getattr__`` and translated."""
    hit = _MOD_PROXY.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    p = ModuleType(m.__name__, getattr(m, "__doc__", None))
    for k in ("__file__", "__package__", "__path__", "__spec__", "__loader__"):
        if k in vars(m):
            p.__dict__[k] = vars(m)[k]

    def __getattr__(name, _m=m, _p=p):
        v = _translate_value(getattr(_m, name))
        _p.__dict__[name] = v
        return v

    p.__dict__["__getattr__"] = __getattr__
    _MOD_PROXY[id(m)] = (m, p)
    return p


def _interp_to_jit(interp) -> JITFunction:
    """Build (and cache) a JITFunction equivalent to an InterpretedFunction.

    All versions 3.6-3.9: ``InterpretedFunction.fn`` is the raw python function and
    ``InterpretedFunction.kwargs`` holds exactly the keyword arguments @triton.jit
    received (version, do_not_specialize, do_not_specialize_on_alignment, debug,
    noinline, repr, launch_metadata), which JITFunction.__init__ accepts unchanged.
    Constructing a JITFunction does not need a driver (device_caches is a lazy
    defaultdict) and does not change global state, except that 3.7+ record it in
    triton.runtime.jit._triton_jit_function_registry (a preload-only lookup table,
    keyed by module:qualname; same key the interpreted kernel would have used).

    @triton.jit helpers referenced from the kernel are InterpretedFunctions too
    under TRITON_INTERPRET=1; the code generator only recognises JITFunction, so
    the per-instance capture scope (globals + closure nonlocals) is translated.
    Only attributes of this private JITFunction instance are set.
    """
    with _TRANSLATE_LOCK:  # a function another thread is translating is not returned half-done
        hit = _INTERP_TO_JIT.get(id(interp))
        if hit is not None and hit[0] is interp:
            return hit[1]
        kwargs = dict(getattr(interp, "kwargs", {}) or {})
        jf = JITFunction(interp.fn, **kwargs)
        _INTERP_TO_JIT[id(interp)] = (interp, jf)  # register before translating (recursive helpers)
        _TRANSLATE_PENDING.append((interp, jf))
        if len(_TRANSLATE_PENDING) == 1:  # the outermost call translates, one function at a time
            _translate_pending()
    return jf


# [Note: Translating a module of interpreted kernels]
# TL;DR: translating one InterpretedFunction's globals meets every other @jit function of
# its module; they are queued and translated one at a time, never by recursion.
# Context: translating a kernel's globals translates each InterpretedFunction in them,
# whose globals hold the next one, and so on: a module of a few hundred kernels (the
# analysis fuzzer's batches, a generated kernel library) overflowed Python's stack and
# every kernel of it fell back to "all written" (RecursionError) under TRITON_INTERPRET=1.
_TRANSLATE_LOCK = threading.RLock()
_TRANSLATE_PENDING: list = []


def _translate_pending() -> None:
    try:
        while _TRANSLATE_PENDING:
            _patch_capture_scope(_TRANSLATE_PENDING[0][1])
            _TRANSLATE_PENDING.pop(0)
    except BaseException:
        for interp, _ in _TRANSLATE_PENDING:  # half-translated: build them again next time
            _INTERP_TO_JIT.pop(id(interp), None)
        _TRANSLATE_PENDING.clear()
        raise


def _patch_capture_scope(jf: JITFunction) -> None:
    module_globals = jf.__globals__
    # __globals__ is read by the DependenciesFinder used for .cache_key (all versions).
    jf.__globals__ = _translate_scope(module_globals)

    def get_capture_scope():
        # As 3.7+ builds it (3.6 keeps the closure's names the function uses, a subset):
        # globals | {freevar: cell contents}. The module's globals as they are now, as the
        # interpreter reads them: a module constant changed since is not read stale.
        cells = zip(jf.fn.__code__.co_freevars, jf.fn.__closure__ or ())
        return _translate_scope({**module_globals, **{name: cell.cell_contents for name, cell in cells}})

    jf.get_capture_scope = get_capture_scope


def as_jit_function(fn) -> JITFunction:
    """Return the JITFunction for a JITFunction / InterpretedFunction / Autotuner / Heuristics."""
    seen = 0
    while True:
        if isinstance(fn, JITFunction):
            return fn
        if _is_interpreted_function(fn):
            return _interp_to_jit(fn)
        # Autotuner / Heuristics (3.6-3.9) wrap the kernel in `.fn`
        inner = getattr(fn, "fn", None)
        if inner is None or seen > 16:
            raise TypeError(f"cannot get a JITFunction from {type(fn)!r}")
        fn, seen = inner, seen + 1


# ---------------------------------------------------------------------------
# Argument normalisation
# ---------------------------------------------------------------------------

class PointerStandIn:
    """Pointer stand-in: its dtype, and an address whose alignment is what triton specialises
    on (0, the default: 16-byte aligned, 'D').

    Same duck type as triton.runtime.jit.MockTensor (3.6-3.9). native_specialize_impl
    recognises it through its ``data_ptr`` + ``dtype`` attributes.
    """

    def __init__(self, dtype, address: int = 0):
        self.dtype = dtype
        self.address = address

    def data_ptr(self):
        return self.address

    @staticmethod
    def ptr_range():
        return 0



def _normalize_arg(v, assume_aligned: bool):
    try:
        import torch
    except ImportError:  # pragma: no cover
        torch = None
    if torch is not None and isinstance(v, torch.Tensor):
        return PointerStandIn(v.dtype) if assume_aligned else v
    if torch is not None and isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        raise TypeError("symbolic scalars must be replaced by concrete python values before TTIR generation")
    if type(v).__name__ == "TensorDescriptor" and type(v).__module__.startswith("triton.tools"):
        if assume_aligned and torch is not None and isinstance(v.base, torch.Tensor):
            import dataclasses
            # dataclasses.replace would re-run __post_init__ (data_ptr/stride checks): bypass
            nv = object.__new__(type(v))
            for f in dataclasses.fields(v):
                object.__setattr__(nv, f.name, getattr(v, f.name))
            nv.base = PointerStandIn(v.base.dtype)
            return nv
        return v
    if isinstance(v, tuple) and not hasattr(v, "_fields"):
        return tuple(_normalize_arg(x, assume_aligned) for x in v)
    return v


def _default_options(jf: JITFunction) -> dict:
    # Mirrors the kwargs JITFunction.run adds before backend.parse_options.
    from triton import knobs
    opts = {"debug": bool(jf.debug) or bool(knobs.runtime.debug)}  # 3.6-3.9
    comp = knobs.compilation
    if hasattr(comp, "instrumentation_mode"):  # 3.6-3.9
        opts["instrumentation_mode"] = comp.instrumentation_mode
    if hasattr(comp, "fpsan_homomorphic_casts"):  # 3.9 only
        opts["fpsan_homomorphic_casts"] = comp.fpsan_homomorphic_casts
    return opts


# ---------------------------------------------------------------------------
# Specialization
# ---------------------------------------------------------------------------

def _ordered_args(jf: JITFunction, args: dict) -> Dict[str, Any]:
    names = list(jf.arg_names)
    missing = [n for n in names if n not in args]
    extra = [n for n in args if n not in names]
    if missing or extra:
        raise ValueError(f"args must map every kernel parameter exactly: missing={missing}, unknown={extra}, "
                         f"expected={names}")
    return {n: args[n] for n in names}


def _specialize_via_runtime(jf, backend, ordered: dict, opts: dict):
    """Use the version's own binder + _pack_args (exactly what JITFunction.run does).

    3.6-3.9: triton.runtime.jit.create_function_from_signature(sig, kparams, backend)
    returns binder(*args, **kw) -> (bound_args, specialization, extra_kwargs), and
    JITFunction._pack_args(backend, kwargs, bound_args, specialization, options)
    -> (options, signature, constexprs, attrs).
    """
    binder = _jit_mod.create_function_from_signature(jf.signature, jf.params, backend)
    bound_args, specialization, extra = binder(**ordered, **opts)
    kwargs = dict(ordered)
    kwargs.update(opts)
    options, signature, constexprs, attrs = jf._pack_args(backend, kwargs, bound_args, specialization, extra)
    return options, signature, constexprs, attrs


def _specialize_manual(jf, backend, ordered: dict, opts: dict):
    """Fallback re-implementation of create_function_from_signature + _pack_args (3.7-3.9 semantics)."""
    from triton._utils import find_paths_if, get_iterable_path
    if hasattr(_jit_mod, "native_specialize_impl"):
        # 3.6-3.9 (C++ implementation). JITFunction's binder passes the backend *instance*
        # (backend-specific parse_attr/get_tensor_specialization, e.g. AMD); mangle_type passes
        # the BaseBackend class.
        def spec(arg, is_const, specialize, align):
            return _jit_mod.native_specialize_impl(backend, arg, is_const, specialize, align)
    elif hasattr(_jit_mod, "create_specialize_impl"):
        # older Triton (3.3-3.4 era; not present in 3.6-3.9)
        try:
            _impl = _jit_mod.create_specialize_impl(specialize_extra=backend.get_arg_specialization)
        except TypeError:
            import functools
            _impl = functools.partial(_jit_mod.create_specialize_impl(),
                                      specialize_extra=backend.get_arg_specialization)

        def spec(arg, is_const, specialize, align):
            return _impl(arg, is_const=is_const, specialize_value=specialize, align=align)
    else:  # pragma: no cover
        raise RuntimeError("no specialize implementation found in triton.runtime.jit")

    specialization = []
    for kp, value in zip(jf.params, ordered.values()):
        if kp.is_constexpr:
            specialization.append(("constexpr", value))
            continue
        ret = spec(value, kp.is_const, not kp.do_not_specialize, not kp.do_not_specialize_on_alignment)
        ann = getattr(kp, "annotation_type", "")
        if ann:
            specialize = not kp.do_not_specialize
            if ann == "u1" or ann[:2] in ["fp", "bf"]:
                specialize = False
            specialization.append((ann, ) + tuple(ret[1:]) if specialize else (ann, None))
        else:
            specialization.append(ret)
    sigvals = [x[0] for x in specialization]
    signature = {k: v for k, v in zip(ordered.keys(), sigvals)}
    constexpr_paths = find_paths_if(sigvals, lambda _, val: val == "constexpr")
    constexprs = {p: get_iterable_path(list(ordered.values()), p) for p in constexpr_paths}
    # 3.7+: constexpr slots map to '' so a str constexpr is never parsed as an attr.
    # (3.6 used x[1] for constexprs too, i.e. a *str-valued* constexpr would be fed to parse_attr.)
    attrvals = ['' if x[0] == 'constexpr' else x[1] for x in specialization]
    attr_paths = find_paths_if(attrvals, lambda _, x: isinstance(x, str))
    attrs = {p: backend.parse_attr(get_iterable_path(attrvals, p)) for p in attr_paths}
    options = backend.parse_options(dict(opts))
    return options, signature, constexprs, attrs


def compute_specialization(fn, args: dict, *, target=None, options: Optional[dict] = None, assume_aligned=True,
                           use_runtime_helpers: Optional[bool] = None):
    """Return (jit_fn, target, backend, options, signature, constexprs, attrs)."""
    jf = as_jit_function(fn)
    target = target or _default_target()
    backend = _make_backend(target)
    ordered = _ordered_args(jf, args)
    ordered = {k: _normalize_arg(v, assume_aligned) for k, v in ordered.items()}
    opts = _default_options(jf)
    if options:
        opts.update(options)
    if use_runtime_helpers is None:
        use_runtime_helpers = (hasattr(_jit_mod, "create_function_from_signature") and hasattr(jf, "_pack_args")
                               and len(inspect.signature(jf._pack_args).parameters) == 5)
    if use_runtime_helpers:
        res = _specialize_via_runtime(jf, backend, ordered, opts)
    else:
        res = _specialize_manual(jf, backend, ordered, opts)
    return (jf, target, backend) + tuple(res)


# ---------------------------------------------------------------------------
# TTIR
# ---------------------------------------------------------------------------

def _call_make_ir(src, target, options, backend, context):
    params = list(inspect.signature(src.make_ir).parameters)
    gci_params = inspect.signature(backend.get_codegen_implementation).parameters
    codegen_fns = backend.get_codegen_implementation(*([options] if len(gci_params) == 1 else []))
    if len(params) == 5:
        # 3.6-3.9: make_ir(target, options, codegen_fns, module_map, context)
        return src.make_ir(target, options, codegen_fns, backend.get_module_map(), context)
    if len(params) == 4:
        # older (3.2-3.5): make_ir(options, codegen_fns, module_map, context)
        return src.make_ir(options, codegen_fns, backend.get_module_map(), context)
    if len(params) == 3:  # even older: make_ir(options, codegen_fns, context)
        return src.make_ir(options, codegen_fns, context)
    return src.make_ir(options, context)


# [Note: Interpreter patches that outlive a run]
# TL;DR: TTIR is generated with triton.language's builtins as triton defines them, whatever
# an earlier interpreter run left behind.
# Context: under TRITON_INTERPRET=1 each launch patches triton.language's builtins
# (tl.core.load, tl.core.arange, ...) with lambdas that call the interpreter, and restores
# them afterwards. A kernel that calls a @jit function of triton.language (tl.sum, tl.max,
# tl.cdiv, ...) patches tl.core again from inside the run, and on triton 3.6-3.9 some 60
# tl.core builtins stay patched after it. The code generator then calls the interpreter's
# lambdas instead of emitting IR ("'value' object has no attribute 'dtype'") for every
# kernel analysed later in the process. Each leftover lambda keeps the builtin it
# replaced in its `member` keyword default; we put those back while generating TTIR and
# restore triton's state afterwards, so the analysis never depends on what ran before.
# Some leftovers keep nothing: the interpreter's own static_assert, range, static_range,
# multiple_of (and the like), reduce and dtype.to_ir (a hunt, fifteenth session: after a
# kernel calling tl.sum ran, a kernel calling tl.rand failed to generate, "Unsupported
# function referenced: _new_static_assert", and every tensor argument was taken as
# written). For those the values triton.language held when this package was imported are
# put back; a value the interpreter made is recognised by its module.
# A constexpr_function (triton.cdiv, ...) called by the code generator returns a plain int,
# not a constexpr, while triton's interpret knob is on (triton 3.6-3.9,
# runtime/jit.py ConstexprFunction.__call__), so `tl.static_range(triton.cdiv(N, BLOCK))`
# failed to generate (Liger's fused MoE; a library sweep, thirty-third session) and every
# tensor argument was taken as written. While TTIR is generated its __call__ returns a
# constexpr to the compiler's semantic. The knob itself stays on: kernels the interpreter
# runs in other threads meanwhile (the fusion's checks) read it, and flipping it (or adding
# and removing it in the knobs' __dict__, which triton iterates) broke them.

_PATCHED_LAMBDA = "_patch_attr.<locals>.<lambda>"
_UNPATCH_LOCK = threading.RLock()


def _interpreter_patched_original(value: Any) -> Any:
    while (getattr(value, "__qualname__", None) == _PATCHED_LAMBDA
           and getattr(value, "__module__", None) == "triton.runtime.interpreter"
           and "member" in (getattr(value, "__kwdefaults__", None) or {})):
        value = value.__kwdefaults__["member"]
    return value


_MISSING = object()


def _patched_owners() -> list[Any]:
    """What triton 3.6-3.9's interpreter patches (runtime/interpreter.py, _patch_lang)."""
    import triton.language as tl

    owners = [tl, tl.core, tl.math, tl.core.tensor, tl.core.dtype]
    if hasattr(tl.core, "tensor_descriptor_base"):
        owners.append(tl.core.tensor_descriptor_base)
    return owners


def _made_by_interpreter(value: Any) -> bool:
    """A function the interpreter defines (not a JIT function: those are InterpretedFunction
    objects under TRITON_INTERPRET=1 from the start), a partial of one, or print."""
    function = value.func if isinstance(value, functools.partial) else value
    return (inspect.isfunction(function) and function.__module__ == "triton.runtime.interpreter") or value is print


# triton.language as this package found it; taken at import (see the note above).
_PRISTINE = {(id(owner), name): value for owner in _patched_owners() for name, value in vars(owner).items()
             if not _made_by_interpreter(value)}


@contextlib.contextmanager
def _interpreter_patches_undone():
    with _UNPATCH_LOCK:
        undone = []
        for owner in _patched_owners():
            for name, value in list(vars(owner).items()):
                original = _interpreter_patched_original(value)
                if original is value and _made_by_interpreter(value):
                    original = _PRISTINE.get((id(owner), name), _MISSING)
                if original is not value:
                    undone.append((owner, name, value))
                    if original is _MISSING:
                        delattr(owner, name)
                    else:
                        setattr(owner, name, original)
        constexpr_function = getattr(_jit_mod, "ConstexprFunction", None)
        if constexpr_function is not None:
            undone.append((constexpr_function, "__call__", constexpr_function.__call__))
            constexpr_function.__call__ = _constexpr_function_call(constexpr_function.__call__)
        try:
            yield
        finally:
            for owner, name, value in undone:
                setattr(owner, name, value)


def _constexpr_function_call(call: Any) -> Any:
    """ConstexprFunction.__call__ that gives the code generator a constexpr whatever the
    interpreter's knob says (see the note above); the interpreter's own calls (its semantic's
    builder is not the compiler's) get what they got."""
    from triton._C.libtriton import ir

    def __call__(self, *args, _semantic=None, **kwargs):
        result = call(self, *args, _semantic=_semantic, **kwargs)
        if (_semantic is not None and isinstance(getattr(_semantic, "builder", None), ir.builder)
                and not isinstance(result, triton.language.constexpr)):
            return triton.language.constexpr(result)
        return result

    return __call__


def generate_ttir_module(fn, args: dict, *, target=None, options: Optional[dict] = None, assume_aligned=True,
                         use_runtime_helpers: Optional[bool] = None):
    """The TTIR module of `fn` specialised for `args`, and an info dict (signature, constexprs, ...)."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import ASTSource

    jf, target, backend, opts, signature, constexprs, attrs = compute_specialization(
        fn, args, target=target, options=options, assume_aligned=assume_aligned,
        use_runtime_helpers=use_runtime_helpers)

    # 3.6-3.9: ASTSource(fn, signature, constexprs=None, attrs=None); constexprs/attrs are
    # keyed by index paths, e.g. {(2,): 1024}; str keys (param names) are converted to (idx,).
    src = ASTSource(jf, signature, constexprs, attrs)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    with _interpreter_patches_undone():
        module = _call_make_ir(src, target, opts, backend, context)
    if not module.verify():
        raise RuntimeError("TTIR verification failed")
    info = dict(signature=signature, constexprs=constexprs, attrs=attrs, options=opts, target=target,
                jit_fn=jf, context=context)
    return module, info


def _compile_through(fn, args: dict, last_stage: str, target, options: Optional[dict], texts: Optional[dict] = None):
    """The module of `fn` specialised for `args` after triton.compile's stages up to
    `last_stage` ("ttgir", "cubin", ...), for `target`, without a driver; `texts`, if given,
    receives each stage's module as text.

    3.6-3.9: backend.add_stages(stages, options, language) fills the stages in order ("ttir",
    "ttgir", "llir", "ptx", "cubin" on CUDA), each called as stage(module, metadata);
    triton.compile's metadata starts as {"hash", "target", **options.__dict__}.
    """
    from triton.backends.compiler import Language

    module, info = generate_ttir_module(fn, args, target=target, options=options)
    parsed = info["options"]  # parsed by compute_specialization (backend.parse_options)
    stages: dict = {}
    _make_backend(info["target"]).add_stages(stages, parsed, Language.TRITON)
    metadata = {"hash": last_stage, "target": info["target"], **parsed.__dict__}
    for stage in list(stages)[:list(stages).index(last_stage) + 1]:
        module = stages[stage](module, metadata)
        if texts is not None:
            texts[stage] = str(module)
    return module


def generate_ttgir_text(fn, args: dict, *, target=None, options: Optional[dict] = None) -> str:
    """The TTGIR of `fn` specialised for `args` (tensors as PointerStandIn to choose their
    alignment): the module after triton's layout passes (coalescing, layout propagation)."""
    return str(_compile_through(fn, args, "ttgir", target, options))


def generate_ttir_and_ttgir_text(fn, args: dict, *, target=None, options: Optional[dict] = None) -> tuple[str, str]:
    """The TTIR and the TTGIR of `fn` specialised for `args`, from one compilation: what
    triton's own passes (canonicalization, folding) change between the two."""
    texts: dict = {}
    _compile_through(fn, args, "ttgir", target, options, texts=texts)
    return texts["ttir"], texts["ttgir"]


def generate_sass_text(fn, args: dict, *, target=None, options: Optional[dict] = None,
                       texts: Optional[dict] = None) -> str:
    """The SASS of `fn` specialised for `args`, from triton's ptxas, disassembled by triton's
    nvdisasm (3.6-3.9: knobs.nvidia.nvdisasm.path). CUDA targets only. `texts`, if given,
    receives each stage's module as text ("ttgir", ...)."""
    import subprocess
    import tempfile

    from triton import knobs

    with tempfile.NamedTemporaryFile(suffix=".cubin") as cubin:
        cubin.write(_compile_through(fn, args, "cubin", target, options, texts=texts))
        cubin.flush()
        # -ndf: no dataflow analysis, which only annotates branch targets (the same instructions
        # and operands, a quarter less time: nvdisasm costs 0.3-0.4 s to start on any cubin).
        return subprocess.run([knobs.nvidia.nvdisasm.path, "-c", "-ndf", cubin.name], capture_output=True,
                              text=True, check=True).stdout
