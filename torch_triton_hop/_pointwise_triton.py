"""Triton source for a region of pointwise aten ops: the helper functions a fused kernel
calls at its stores (epilogue) and loads (prologue). See _fusion.

# [Note: Numerics of fused pointwise code]
# TL;DR: the region is lowered by inductor's own lowerings (the ones that would have
# generated the unfused pointwise kernel) and each inductor op becomes the Triton text
# inductor's TritonOverrides emit for it: libdevice calls, the int16 route from floats to
# uint8, NaN-propagating maximum, fma for add with alpha, a reciprocal multiply for division
# by a constant. So a fused op is exactly the op inductor would have emitted, and every
# pointwise op inductor lowers is fusible. Values are held in their compute dtype (fp16 /
# bf16 / fp8 in fp32) between ops, as inductor's kernels hold them. Ours are only the
# boundaries: the operands' loads (at each lane's element offset; which operands may be read
# from memory: [Note: Values at a fused region's boundary]), the value a kernel stores rounded
# to the dtype of the tensor it stores to first, a prologue's result rounded to the dtype of
# the tensor it replaces, and the masked-off lanes of a prologue's load: `other`, or 0 where
# the kernel gives none (what a masked load gives on a GPU and in the interpreter), never
# prologue(0). On a GPU the stored value and the prologue's result, its masked-lane select
# included, cross through an opaque move, `(bits & m) | (m + 1)` with a parameter m passed as
# -1, so that no FMA contracts, no constant folds and no fact about the value's origin crosses
# the boundary (_opaque_move).
# Under triton's interpreter (CPU) the unfused program is inductor's C++ code, and the
# interpreter has no libdevice and rounds fp32 to bf16 by truncation: there only ops that
# are exactly rounded everywhere (fp32 / integer arithmetic, comparisons, selects, min / max,
# casts other than to bf16 / fp8; no fp16 / bf16 arithmetic, see
# _check_no_low_precision_arithmetic, nor bf16 / fp8 values, see [Note: bf16 and fp8 under
# triton's interpreter]) are fused; the rest is left unfused, the reason logged.
# Measured on an H200 (benchmarks/fusion_exactness_probe.py): without the opaque move of
# _rounded, a multiply kernel + add epilogue differed from eager in 3.9M of 33.5M elements (an
# FMA across the store); with it, 0. A cast to a narrower dtype in the epilogue can still
# change the kernel's own reduction order (triton picks another layout for the kernel).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch

from . import _compat, _compat_inductor, _interpreter_probes
from ._fusion_source import NotFusible
from ._region_views import LANE_RELABELS

__all__ = ["Operand", "helper_source", "operand_offset", "TRITON_DTYPES", "is_pointwise", "is_row_major"]

aten, prims = torch.ops.aten, torch.ops.prims

TRITON_DTYPES = {
    torch.float16: "tl.float16", torch.bfloat16: "tl.bfloat16", torch.float32: "tl.float32",
    torch.float64: "tl.float64", torch.int8: "tl.int8", torch.int16: "tl.int16", torch.int32: "tl.int32",
    torch.int64: "tl.int64", torch.uint8: "tl.uint8", torch.bool: "tl.int1",
    torch.float8_e4m3fn: "tl.float8e4nv", torch.float8_e5m2: "tl.float8e5",
}
_LOW_PRECISION = {torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2}
# Rounded to by truncation in triton's interpreter (3.6-3.9), to nearest even by torch.
_TRUNCATED_ON_INTERPRETER = {torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2}
# [Note: bf16 and fp8 under triton's interpreter]
# The interpreter (3.6-3.9) holds bf16 as uint16 and fp8 as uint8 bits, and only its fp32 <->
# bf16 conversion reads them as floats: an integer or fp64 converted to bf16 becomes its own
# value as bits (uint8 3 -> 3 * 2**-133), bf16 arithmetic multiplies the bits, and the bf16
# -> fp32 conversion flushes or scrambles subnormals (1e-40 -> 0); fp8 -> fp32 turns NaN and inf
# into finite values. So under the interpreter a helper holds no bf16 / fp8 value: a bf16
# operand is read as its bits and widened exactly (bits << 16 are the fp32's bits), fp8
# operands are not fused, a conversion to bf16 is fused only from a dtype whose every value
# bf16 holds exactly (computed in fp32, where inductor holds bf16 values), and a bf16 constant
# only where bf16 holds it exactly (again as fp32). Found by the fusion fuzzer (seed 1: #12,
# #104, #108, #117, #118).
# Its comparisons also give a handle typed as their operands (fp32 data typed bool), which
# a broadcast then fills with fp32 0.0 / 1.0: a scalar comparison broadcast into `|` or `^`
# raises TypeError at run time (#9 of seed 0). So a scalar operand (and the stored value) is
# broadcast to the lanes' shape where the helper reads it, and no comparison is scalar there.
_EXACT_IN_BF16 = {torch.bool, torch.int8, torch.uint8}


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float32 if dtype in _LOW_PRECISION else dtype


# Not part of the graph's pointwise ops, though inductor lowers them to pointwise code.
# (lift_fresh_copy: the copy of a constant that `torch.tensor([...])` in a program makes.)
_IDENTITY = {aten.clone.default, aten.alias.default, aten.lift_fresh_copy.default}
_SCALARS = (int, float, bool, torch.dtype, type(None))
# The keyword-only arguments of pointwise ops that inductor's lowerings take as they are: add /
# sub's alpha, addcmul / addcdiv's value, div's rounding_mode (`x // 3`), clone's memory_format.
_KEYWORDS = ("alpha", "value", "rounding_mode", "memory_format")
# Inductor ops that are exactly rounded in triton's interpreter and in inductor's C++ code
# alike (IEEE arithmetic, comparisons, selects, bit ops); everything else (libdevice, tl.exp,
# sigmoid, ...) differs between the two in the last bits or does not run in the interpreter.
_EXACT_ON_INTERPRETER = {
    "add", "sub", "mul", "truediv", "neg", "abs", "maximum", "minimum", "where", "constant", "to_dtype",
    "identity", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "and_", "or_", "xor", "square", "relu",
    "reciprocal", "fma", "sign",
}
# Inductor ops that are not a function of the lane's values.
_NOT_POINTWISE = {"index_expr", "indirect_indexing", "masked", "load_seed", "rand", "randn", "randint64", "store",
                  "reduction", "store_reduction", "scan", "sort", "bucketize", "check_bounds", "inline_asm_elementwise",
                  "device_assert_async", "partial_accumulate", "placeholder", "output"}


def is_pointwise(node: torch.fx.Node) -> bool:
    """A node inductor lowers to pointwise code of its inputs: an aten op tagged pointwise
    (or a copy), deterministic, with a tensor result and only tensors and Python scalars as
    arguments."""
    target = node.target
    if node.op != "call_function" or not isinstance(target, _compat.OpOverload):
        return False
    tags = getattr(target, "tags", ())
    if not (torch.Tag.pointwise in tags or target in _IDENTITY or target is prims.convert_element_type.default):
        return False
    if torch.Tag.nondeterministic_seeded in tags or _compat_inductor.pointwise_lowering(target) is None:
        return False
    if not isinstance(node.meta.get("val"), torch.Tensor) or node.meta["val"].dtype not in TRITON_DTYPES:
        return False
    if any(k not in _KEYWORDS for k in node.kwargs) or (
            "memory_format" in node.kwargs and target is not aten.clone.default):
        return False
    # clone's memory_format sets only the layout of its result, which the fusion reads from
    # the node's value (`x.t().contiguous()` before a kernel is a clone to row-major); div's
    # rounding_mode is a string the lowering reads
    values = [*node.args, *(v for k, v in node.kwargs.items() if k not in ("memory_format", "rounding_mode"))]
    return all(isinstance(v, torch.fx.Node) and isinstance(v.meta.get("val"), torch.Tensor)
               or isinstance(v, _SCALARS) for v in values)


@dataclasses.dataclass(frozen=True)
class Operand:
    """A tensor the helper loads: a new kernel parameter and the offset of each lane in it
    (None: a single element, loaded once and broadcast)."""

    param: str
    offset: str | None


class _Emitter:
    """The ops handler a lowered region runs under: each inductor op becomes one line
    ``tN = <the Triton text inductor emits for it>``; the same text again is the same
    variable (inductor's CSE does the same)."""

    def __init__(self, target: str, exact_only: list[str] | None = None) -> None:
        self.target = target
        # Inductor settings under which only ops every compile option rounds alike are fused
        # (see [Note: Inductor's numerics settings]).
        self.exact_only = exact_only or []
        self.lines: list[str] = []
        self.by_text: dict[str, Any] = {}
        self.inputs: dict[str, Any] = {}  # lowering input name -> variable
        self.variables: dict[str, Any] = {}
        # Variables that hold (or derive from) a narrow integer wrapped as eager wraps it, where
        # inductor's Triton code may hold a wider value (see [Note: Narrow integers wrap at every op]).
        self.wrapped: set[str] = set()
        self.dtypes: dict[str, torch.dtype | None] = {}  # variable -> the dtype its Triton value has, where known
        self.products: set[str] = set()  # variables holding a float product (an add of one may contract)

    def variable(self, expression: str, dtype: torch.dtype | None) -> Any:
        if expression in self.by_text:
            return self.by_text[expression]
        name = f"t{len(self.lines)}"
        self.lines.append(f"{name} = {expression}")
        var = _compat_inductor.lowering_variable(name, dtype)
        self.by_text[expression] = self.variables[name] = var
        self.dtypes[name] = dtype
        return var

    def held_as(self, value: Any, dtype: torch.dtype) -> Any:
        """ops.to_dtype(value, dtype) after an op on narrow integers: the wrap eager does."""
        var = self.variable(_compat_inductor.triton_op_text("to_dtype", value, dtype), _compute_dtype(dtype))
        if self.dtypes.get(str(value)) != dtype or str(value) in self.wrapped:
            self.wrapped.add(str(var))
        return var

    def load(self, name: str, index: Any) -> Any:
        if name not in self.inputs:
            raise NotFusible(f"inductor's lowering reads {name}, which is not an input of the region")
        return self.inputs[name]

    def __getattr__(self, op: str) -> Callable[..., Any]:
        if op.startswith("_"):
            raise AttributeError(op)
        if op in _NOT_POINTWISE:
            raise NotFusible(f"inductor lowers the region with ops.{op}, which is not pointwise")
        if self.target == "interpreter" and op not in _EXACT_ON_INTERPRETER:
            raise NotFusible(f"it computes ops.{op}, which triton's interpreter does not compute as inductor's CPU "
                             "code does (fused on a GPU)")
        if self.target == "interpreter" and op in _interpreter_probes.inexact_ops():
            raise NotFusible(f"it computes ops.{op}, which the installed triton's interpreter computes otherwise than "
                             "torch (fused on a GPU)")

        def emit(*args: Any, **kwargs: Any) -> Any:
            result_dtype = _result_dtype(op, args)
            triton_dtype = _triton_dtype(op, [self.dtypes.get(str(a)) for a in args], args)
            if self.target == "interpreter" and op in ("to_dtype", "constant") and \
                    args[1] in _TRUNCATED_ON_INTERPRETER:
                args = (args[0], _interpreter_dtype(op, *args[:2]), *args[2:])
            if self.target == "interpreter" and op == "constant" and _out_of_integer_range(*args[:2]):
                args = (_wrapped_integer(*args[:2]), *args[1:])
            if self.target == "interpreter" and op == "to_dtype" and args[1] == torch.float16:
                args, kwargs = self._float16_as_torch_rounds(args, kwargs)
            text = _compat_inductor.triton_op_text(op, *args, **kwargs)
            if not isinstance(text, str):  # an override that composed other ops: their variable
                return text
            if self.target == "interpreter" and "libdevice." in text:  # torch 2.13's sub(x, x): isnan / isinf
                raise NotFusible(f"ops.{op} gives `{text}`, which calls libdevice, which triton's interpreter does not "
                                 "have (fused on a GPU)")
            if self.target == "interpreter" and any(name in text for name in _INTERPRETER_BITS_TYPES):
                raise NotFusible(f"ops.{op} gives `{text}`, a bf16 / fp8 value, which triton's interpreter computes "
                                 "on its bits (fused on a GPU)")
            wrapped = any(str(a) in self.wrapped for a in args)
            of_product = any(str(a) in self.products for a in args)
            if self.target == "gpu" and op in ("add", "sub") and len({str(a) for a in args} & self.products) > 1:
                raise NotFusible(f"it computes ops.{op} of two products (a * b + c * d), of which LLVM contracts one "
                                 "into an FMA, and which one depends on the code around them: the fused kernel could "
                                 "round otherwise than inductor's (see [Note: Two products added])")
            if wrapped and self.target != "interpreter" and not _exact_after_a_wrap(op, triton_dtype, of_product):
                raise NotFusible(f"it computes ops.{op} of integers wrapped as eager wraps them, where inductor's "
                                 "Triton code (the unfused program on a GPU) does not wrap them; on a GPU that op "
                                 "rounds as neither would (see [Note: Narrow integers wrap at every op])")
            if self.exact_only and not _exact_after_a_wrap(op, triton_dtype, of_product):
                raise NotFusible(f"it computes ops.{op}, which the fused kernel (compiled with triton's defaults) "
                                 f"may round otherwise than inductor's own kernels under "
                                 f"{' and '.join(self.exact_only)} (see [Note: Inductor's numerics settings])")
            var = self.variable(text, result_dtype)
            self.dtypes[str(var)] = triton_dtype
            if wrapped:
                self.wrapped.add(str(var))
            # A product stays one through a conversion: LLVM computes fp16 / bf16 `(a * b).to(bf16).to(fp32) + c`
            # as one fma.rn.bf16 where it may contract (seen in triton 3.9's PTX for sm_90).
            if op in _MULTIPLYING and not _is_integer(triton_dtype) or op in _KEEPS_A_PRODUCT and of_product:
                self.products.add(str(var))
            return var

        return emit

    def _float16_as_torch_rounds(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
        """The arguments of ops.to_dtype(x, float16) under the interpreter, rounded as torch rounds.

        # [Note: float16 under triton's interpreter]
        # torch rounds a float64 (or int64) value to float16 through float32, twice (c10::Half
        # is built from a float), in eager and in inductor's C++ code; the interpreter's numpy
        # rounds once. 1 + 2**-11 + 2**-40 gives 1.0 in torch and 1.0009765625 in numpy; 65519.99
        # gives inf and 65504 (an adversarial hunt, thirteenth session). So a conversion goes
        # through float32 as torch's does (a no-op from float32 or float16). (A float16
        # constant reaches the fused code as a 0-d tensor inductor rounded.) On a GPU the
        # unfused program is inductor's Triton code, which rounds once, as the fused helper does.
        """
        source = self.dtypes.get(str(args[0])) or getattr(args[0], "dtype", None)
        if source not in (torch.float16, torch.float32):
            as_float32 = self.to_dtype(args[0], torch.float32, *args[2:], **kwargs)
            if "src_dtype" in kwargs:
                kwargs = {**kwargs, "src_dtype": torch.float32}
            return (as_float32, args[1], *([torch.float32] if len(args) > 2 else []), *args[3:]), kwargs
        return args, kwargs


_INTERPRETER_BITS_TYPES = ("tl.bfloat16", "tl.float8")


# An int scalar out of its integer dtype's range (`int8 + 300`, `int32 < 2**40`) is that
# dtype's value, wrapped, in eager (the scalar is cast to the tensor's dtype) and in compiled
# Triton code on a GPU (a constant of a narrower type keeps its low bits); the interpreter's
# numpy refuses to make it. (An adversarial hunt, fourteenth session.)
def _out_of_integer_range(value: Any, dtype: torch.dtype) -> bool:
    if not isinstance(value, int) or isinstance(value, bool) or dtype.is_floating_point or dtype.is_complex \
            or dtype == torch.bool:
        return False
    info = torch.iinfo(dtype)
    return not info.min <= value <= info.max


def _wrapped_integer(value: int, dtype: torch.dtype) -> int:
    info = torch.iinfo(dtype)
    return (value - info.min) % (1 << info.bits) + info.min


def _interpreter_dtype(op: str, value: Any, dtype: torch.dtype) -> torch.dtype:
    """The dtype a helper under the interpreter computes ops.to_dtype(value, dtype) /
    ops.constant(value, dtype) in, for a bf16 / fp8 `dtype`: fp32, where that is exact (see
    [Note: bf16 and fp8 under triton's interpreter]); else NotFusible."""
    if op == "to_dtype":
        source = getattr(value, "dtype", None)
        if dtype == torch.bfloat16 and source in _EXACT_IN_BF16:
            return torch.float32
        if source is None or source.is_floating_point:
            raise NotFusible(f"it rounds to {dtype}, which triton's interpreter does by truncation (fused on a GPU)")
        raise NotFusible(f"it converts {source} to {dtype}, which triton's interpreter does on the integer's bits "
                         "(fused on a GPU)")
    if dtype == torch.bfloat16 and isinstance(value, (bool, int, float)):
        wide = torch.tensor(float(value), dtype=torch.float64)
        narrow = wide.to(dtype)
        if (narrow.double() == wide or bool(wide.isnan())) and (narrow == 0 or narrow.abs() >= torch.finfo(dtype).tiny
                                                                or not bool(narrow.isfinite())):
            return torch.float32
    raise NotFusible(f"it uses the {dtype} constant {value!r}, which triton's interpreter does not hold exactly "
                     "(fused on a GPU)")


def _result_dtype(op: str, args: tuple[Any, ...]) -> torch.dtype | None:
    """The compute dtype of an op's result, where the overrides may ask for it."""
    if op in ("to_dtype", "constant"):
        dtype = args[1]
        return _compute_dtype(dtype)
    if op in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not"):
        return torch.bool
    dtypes = [a.dtype for a in args if getattr(a, "dtype", None) is not None and isinstance(a.dtype, torch.dtype)]
    return dtypes[0] if dtypes and all(d == dtypes[0] for d in dtypes) else None


def _triton_dtype(op: str, arg_dtypes: list[Any], args: tuple[Any, ...]) -> torch.dtype | None:
    """The dtype of the Triton value an op gives, where known: an op on values of one dtype
    keeps it (Triton promotes mixed ones; a Python scalar does not count)."""
    if op in ("to_dtype", "constant", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
              "logical_xor", "logical_not"):
        return _result_dtype(op, args)
    values = [d for d, a in zip(arg_dtypes, args) if not isinstance(a, (int, float, bool, torch.dtype))]
    known = [d for d in values if isinstance(d, torch.dtype)]
    return known[0] if known and len(known) == len(values) and all(d == known[0] for d in known) else None


def _load_expression(operand: Operand, dtype: torch.dtype, target: str) -> str:
    if operand.offset is None:
        expression = f"tl.load({operand.param})"
        if target == "interpreter":  # see [Note: bf16 and fp8 under triton's interpreter]
            expression = f"tl.broadcast_to({expression}, offset.shape)"
    else:
        expression = f"tl.load({operand.param} + {operand.offset}, mask=mask)"
    return _widened(expression, dtype, target, "an operand")


def _widened(expression: str, dtype: torch.dtype, target: str, what: str) -> str:
    """`expression`, of `dtype`, in its compute dtype (exactly)."""
    if dtype not in _LOW_PRECISION:
        return expression
    if target == "interpreter" and dtype == torch.bfloat16:  # its bits are the top half of the fp32's
        return f"({expression}.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)"
    if target == "interpreter" and dtype in _TRUNCATED_ON_INTERPRETER:
        raise NotFusible(f"{what} is {dtype}, which triton's interpreter converts to fp32 with NaN and inf wrong "
                         "(fused on a GPU)")
    return f"{expression}.to(tl.float32)"


def helper_source(name: str, kind: str, nodes: list[torch.fx.Node], inputs: dict[torch.fx.Node, Operand],
                  value: torch.fx.Node | None, result: torch.fx.Node, result_dtype: torch.dtype, target: str,
                  sizes: tuple[str, ...] = (), opaque_ones: str | None = None, store_to: str | None = None,
                  launch_options: dict[str, Any] | None = None) -> str:
    """Source of a @triton.jit helper computing the region `nodes` (graph order).

    kind "epilogue": ``name(value, offset, mask, *operands)``; `value` (the FX node of the
    kernel's result) is the stored value, rounded to its dtype first. kind "prologue":
    ``name(offset, mask, other, *operands)`` returns `result` rounded to `result_dtype`;
    where the load's mask is off, `other`, or 0 where the kernel gives none; with `store_to`
    (its last parameter, a pointer to a tensor of the result's layout) it also stores the
    result there, where the mask is on (see [Note: A prologue the fused kernel also stores]).
    On a GPU the parameter before that is `opaque_ones`, an int32 the launch passes as -1
    (see _opaque_move). `launch_options`: the launch's arguments, whose compile options
    (enable_fp_fusion, ...) the fused kernel keeps (see [Note: Inductor's numerics settings]).
    Raises NotFusible where inductor does not lower the region to pointwise code, or (under
    the interpreter) the code would not be exact.
    """
    if target == "interpreter":
        _check_no_low_precision_arithmetic(nodes, "inductor's C++ code (the unfused program on CPU) and its Triton "
                                                  "code hold differently (fused on a GPU)")
    elif not _compat_inductor.upcasts_to_fp32():
        _check_no_low_precision_arithmetic(nodes, "inductor's Triton code computes in that dtype under "
                                                  "triton.codegen_upcast_to_fp32=False, where the fused code holds "
                                                  "fp32 between ops")
    emitter = _Emitter(target, _compat_inductor.kernel_numerics_settings(launch_options or {})
                       if target == "gpu" else None)
    params = [operand.param for operand in inputs.values()] + list(sizes)  # sizes: symbolic ones the offsets use
    if target == "gpu":
        params.append(opaque_ones)
    if store_to is not None:
        params.append(store_to)
    device = result.meta["val"].device
    boundary: dict[torch.fx.Node, tuple[str, str, torch.dtype]] = {}  # node -> (lowering name, expression, dtype)
    if kind == "epilogue":
        assert value is not None
        dtype = value.meta["val"].dtype
        stored = _rounded(_as_a_store_converts("value", dtype), dtype, target, opaque_ones)
        if target == "interpreter":  # see [Note: bf16 and fp8 under triton's interpreter]
            stored = f"tl.broadcast_to({stored}, offset.shape)"
        boundary[value] = ("value", _widened(stored, dtype, target, "the stored value"), dtype)
        signature = ["value", "offset", "mask", *params]
    else:
        signature = ["offset", "mask", "other", *params]
    for node, operand in inputs.items():
        boundary[node] = (operand.param, _load_expression(operand, node.meta["val"].dtype, target),
                          node.meta["val"].dtype)
    try:
        final = _lower_region(emitter, boundary, nodes, result, device)
    except NotFusible:
        raise
    except Exception as e:  # noqa: BLE001 - a lowering or override that needs more than a pointwise region
        raise NotFusible(f"inductor's lowering of the region failed: {type(e).__name__}: {e}") from e
    body = list(emitter.lines)
    if result_dtype == torch.bool:
        body.append(f"result = {final} != 0" if getattr(final, "dtype", None) != torch.bool else f"result = {final}")
    else:
        if target == "interpreter" and result_dtype in _TRUNCATED_ON_INTERPRETER and kind == "prologue":
            raise NotFusible(f"the prologue's result is rounded to {result_dtype}, which triton's interpreter does by "
                             "truncation (fused on a GPU)")
        if target == "interpreter" and result_dtype in _TRUNCATED_ON_INTERPRETER and _compute_dtype(
                result_dtype) != result_dtype:
            raise NotFusible(f"the epilogue's result is stored as {result_dtype}, which triton's interpreter rounds by "
                             "truncation (fused on a GPU)")
        body.append(f"result = {final}.to({TRITON_DTYPES[result_dtype]})")
    if kind == "prologue" and store_to is not None:
        # The value the kernel gets, stored as the unfused program stores the prologue's result.
        body.append(f"tl.store({store_to} + offset, tl.broadcast_to(result, offset.shape), mask=mask)")
    if kind == "prologue":
        # A masked load gives `other` where its mask is off, and 0 without one (on a GPU and in
        # the interpreter alike): never what the prologue computes from the operands there.
        other = _as_a_load_converts("other", result_dtype, "offset.shape" if target == "interpreter" else None)
        body += ["if mask is not None:",
                 "    if other is not None:",
                 # tl.load converts other to the pointer's element type first: a float other of
                 # an integer load must not promote the loaded values to float.
                 f"        result = tl.where(mask, result, {other})",
                 "    else:",
                 "        result = tl.where(mask, result, tl.zeros_like(result))"]
        if target == "gpu":
            # What the kernel gets is opaque as a load's result is, the select included: LLVM
            # folds where(m, a, 0) * where(m, b, 0) of two prologues into where(m, a * b, 0),
            # and a select between the kernel's multiply and its add keeps them from
            # contracting into the FMA the unfused kernel computes (GPU fuzzer seed 24 #351).
            body.append(f"result = {_rounded('result', result_dtype, target, opaque_ones)}")
    body.append("return result")
    lines = [f"def {name}({', '.join(signature)}):"] + [f"    {line}" for line in body]
    return "\n".join(lines) + "\n"


# Ops whose fp16 / bf16 result is one of their inputs' values or its single rounding: the same
# however a backend holds intermediates.
_SELECTING = {prims.convert_element_type.default, aten.where.self, aten.clone.default, aten.alias.default,
              aten.neg.default, aten.abs.default, aten.maximum.default, aten.minimum.default, aten.clamp.default,
              aten.clamp_min.default, aten.clamp_max.default, aten.relu.default}


def _check_no_low_precision_arithmetic(nodes: list[torch.fx.Node], why: str) -> None:
    """No arithmetic with an fp16 / bf16 result, where the unfused program holds such
    intermediates otherwise than the helper, which holds them in fp32 as inductor's Triton code
    does by default. Under the interpreter, inductor's C++ code is the unfused program, and eager
    rounds each one: found by the fusion fuzzer (seed 3: an fp16 tensor minus a 0-d fp32 one,
    the result 1 ulp apart from each of them, amplified by a later cos). On a GPU with
    triton.codegen_upcast_to_fp32=False, inductor's Triton code computes in fp16 / bf16."""
    for node in nodes:
        dtype = node.meta["val"].dtype
        if dtype in _LOW_PRECISION and node.target not in _SELECTING and node.target not in LANE_RELABELS:
            raise NotFusible(f"{node.name} computes in {dtype}, which {why}")


# [Note: Inductor's numerics settings]
# Under these settings inductor compiles its own Triton kernels otherwise than with triton's
# defaults: emulate_precision_casts turns FMA contraction off (enable_fp_fusion=False, which
# also passes ptxas --fmad=false, so libdevice's code contracts nothing either);
# eager_numerics.disable_ftz compiles libdevice without flush to zero (enable_reflect_ftz=False);
# under eager_numerics.use_pytorch_libdevice (torch >= 2.12) its compile workers link the CUDA
# toolkit's libdevice, which may differ from triton's in the last bit of pow or erf.
# A user's kernel, fused or not, is compiled with its launch's options (triton's defaults
# where it gives none): inductor does not give it its own, and the fused kernel must not
# either, or the user's own code would round otherwise. So under any of them, and where the
# launch's options differ from inductor's (`kernel[grid](..., enable_fp_fusion=False)`, or
# TRITON_DEFAULT_FP_FUSION=0 while inductor asks its kernels to contract; enable_reflect_ftz=False),
# a fused op, computed in the user's kernel, could round otherwise than the unfused
# program's inductor kernel: `a * b + c` contracts into one FMA, libdevice's exp flushes a
# subnormal. There a region is fused only where each op rounds alike
# under every option, the rule after a wrap below (integer and logical ops, comparisons,
# selects, conversions, float adds, subtracts and multiplies where no add reads a product, even
# one rounded to fp16 / bf16 and back: LLVM makes that pair one fma.rn.bf16 where it may contract);
# the rest is left unfused, the reason logged. The casts emulate_precision_casts adds around
# fp16 / bf16 arithmetic come from inductor's lowerings, which read the node they lower
# (_compat_inductor.lowering_node). Under the interpreter the unfused program is inductor's
# C++ code, which these settings do not give other options, and only exact ops fuse anyway.
# Another setting, triton.codegen_upcast_to_fp32=False, makes inductor's Triton code compute
# fp16 / bf16 in that dtype, rounding each op: there no fp16 / bf16 arithmetic is fused
# (_check_no_low_precision_arithmetic), as under the interpreter.


# [Note: Narrow integers wrap at every op]
# Eager computes each op of a uint8 / int8 / int16 / int32 tensor in that type, wrapping; a
# Python scalar does not widen it (relu(x) and x + 1 stay uint8). Inductor's overrides do not
# keep that type: relu is maximum(<int32 constant 0>, x), which Triton computes in int32, so
# relu(x) ** 3 of a uint8 x would be 200 ** 3 = 8000000 rather than 0 (fuzzer, seed 6 #3765;
# inductor's own Triton code for the same ops does this too, its C++ code wraps). So each
# such op's value is converted to its graph dtype before the next op reads it: a no-op where
# Triton already computed it in that type, the wrap eager does where it did not. The same for
# bool: add(a, b, alpha=2) of bools is lowered to `a | b * 2` of int64s, which must become 0 or
# 1 (to int1 is `!= 0` in Triton) before a later .to(tl.int8) reads it (seed 7, #1741).
# On a GPU a region whose integers were wrapped (where inductor's Triton code may not wrap them:
# the unfused program computes other values) must then compute as eager does, exactly: integer
# and logical ops, comparisons, selects, conversions, and float adds, subtracts and multiplies
# (IEEE, correctly rounded) where no add reads a product (LLVM would contract the two into one
# FMA, one rounding where eager makes two). A division (div.full), a libdevice call or an FMA
# would round as inductor's Triton code does, on values it never computes: neither eager's
# result nor the unfused program's (fuzzer seed 16 #733, H200: relu(x) ** 2 / relu(x) of a
# uint8 x = 255 came out 1 ulp from eager's 1 / 255, where the unfused program gives 65025 / 255).
_WRAPPING_INTEGERS = {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32}

# [Note: Two products added]
# On a GPU, `a * b + c * d` becomes one FMA and one multiply, and LLVM's DAG combiner picks
# which product the FMA takes from the order and uses of the nodes, which the code around the
# region changes. The two choices round differently. Found on an H100 (triton 3.6: test_fusion's
# epilogue `out * w.half().float() + r * 0.5`, fused != unfused), and in triton 3.9's SASS for
# sm_90 (benchmarks/fma_choice_ptx.py, no GPU needed): inductor's own kernel computes
# fma(out, w, r * 0.5), the same ops inside the user's kernel fma(r, 0.5, out * w). So no region
# adds or subtracts two products on a GPU; one product and anything else contracts the same way
# in both (the script's other expressions). Under the interpreter, inductor's C++ code and the
# fused code contract nothing.
_EXACT_EVERYWHERE = {
    "to_dtype", "constant", "identity", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
    "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "and_", "or_", "xor",
    "where", "maximum", "minimum", "abs", "neg", "sign", "relu",
}
_INTEGER_ARITHMETIC = {"add", "sub", "mul", "square", "floordiv", "remainder", "mod", "truncdiv", "lshift", "rshift"}
_MULTIPLYING = {"mul", "square"}
_KEEPS_A_PRODUCT = {"neg", "identity", "to_dtype"}


def _is_integer(dtype: torch.dtype | None) -> bool:
    return dtype is not None and not dtype.is_floating_point


def _exact_after_a_wrap(op: str, result_dtype: torch.dtype | None, of_product: bool) -> bool:
    if op in _EXACT_EVERYWHERE or op in _INTEGER_ARITHMETIC and _is_integer(result_dtype):
        return True
    return op in _MULTIPLYING or op in ("add", "sub") and not of_product


def _lower_region(emitter: _Emitter, boundary: dict[torch.fx.Node, tuple[str, str, torch.dtype]],
                  nodes: list[torch.fx.Node], result: torch.fx.Node, device: torch.device) -> Any:
    """The region lowered by inductor and evaluated at one lane; the variable of `result`."""
    with _compat_inductor.lowering_graph(device):
        boxes: dict[torch.fx.Node, Any] = {}
        for node, (lowering_name, expression, dtype) in boundary.items():
            emitter.inputs[lowering_name] = emitter.variable(expression, _compute_dtype(dtype))
            boxes[node] = _compat_inductor.lowering_input(lowering_name, device, dtype, node.meta["val"].dim())
        for node in nodes:
            if node.target in LANE_RELABELS:  # the same element at each lane: [Note: Views inside a fused region]
                boxes[node] = boxes[node.args[0]]
                continue
            lowering = _compat_inductor.pointwise_lowering(node.target)
            if lowering is None:
                raise NotFusible(f"{node.name} ({node.target}) has no inductor lowering")
            args = torch.fx.node.map_arg(node.args, boxes.__getitem__)
            kwargs = torch.fx.node.map_arg(node.kwargs, boxes.__getitem__)
            with _compat_inductor.lowering_node(node):  # lowerings read the node, as when inductor lowers it
                boxes[node] = lowering(*args, **kwargs)
            lowered = _compat_inductor.lowered_dtype(boxes[node])
            if lowered != node.meta["val"].dtype:
                raise NotFusible(f"inductor lowers {node.name} to {lowered}, where the graph says "
                                 f"{node.meta['val'].dtype}")
            if lowered in _WRAPPING_INTEGERS:
                boxes[node] = _compat_inductor.held_as(boxes[node], lowered)
        return _compat_inductor.evaluate_lowered(boxes[result], emitter, emitter.variables)


# A value handed across the kernel / helper boundary goes through an opaque move on a GPU (its
# bits ANDed with a parameter the launch passes as -1, then ORed with that parameter plus one,
# 0), which no compiler can contract, fold or reason across:
# - in fp32 / fp64, it could otherwise contract the kernel's last multiply with the epilogue's
#   first add (or the prologue's multiply with the kernel's add) into one FMA, skipping the
#   rounding the unfused program does when it stores the value;
# - in any dtype, a value it can prove constant (a prologue of comparisons that is always
#   false: fuzzer seed 9 #976; a kernel storing `a - a`: seed 14 #1117) would be folded at
#   compile time, and folding is not what the GPU computes: LLVM folds a contractable multiply
#   and add with two roundings where the GPU makes one FMA (exp(erf(1)) came out 1 ulp from the
#   unfused kernel, which loads the value from memory), and tanh(1.0) folded through libdevice
#   is 1 ulp from the GPU's. The AND alone does not hide a known 0 (0 & m is 0); the OR with
#   m + 1 does;
# - a fact about how the value was computed: ptxas folded `a * a > -0.25` to true, NaN lanes
#   included (fuzzer seed 12 #933). A register move in inline asm stops LLVM but not ptxas,
#   which compiled the comparison to a constant store without loading `a`; with the AND it
#   loads, multiplies, masks and compares (SASS for sm_90 from triton 3.9's ptxas).
# Values narrower than 32 bits move as their bits widened to 32; the interpreter never
# contracts or folds.
def _opaque_move(value: str, dtype: torch.dtype, ones: str) -> str:
    """`value`, a Triton value of `dtype`, as `(bits & ones) | (ones + 1)`, where `ones` is an
    int32 kernel parameter the launch passes as -1 (all bits set; no compiler or launcher
    specializes it, where 0 and 1 get hints): the same bits, which no compiler (LLVM, nor
    ptxas, which sees through register moves and inline asm) can tell from how `value` was
    computed, even where it knows `value`.

    GPU fuzzer seed 12 #933 (H200, triton 3.6): an epilogue ``(v > -0.25)`` on a kernel's
    ``v = a * a`` came out true for a NaN ``a`` through an inline-asm move (ptxas folded
    ``a * a > -0.25``), where the unfused program, which loads v from memory, gives false.
    """
    if dtype == torch.bool:
        return f"((({value}.to(tl.int32) & {ones}) | ({ones} + 1)) != 0)"
    width = dtype.itemsize * 8
    bits = {8: "tl.int8", 16: "tl.int16", 32: "tl.int32", 64: "tl.int64"}[width]
    as_bits = f"{value}.to({bits}, bitcast=True)"
    if width < 32:  # masked as the int32 it widens to, then narrowed back to its own bits
        moved = f"((({as_bits}.to(tl.int32) & {ones}) | ({ones} + 1)).to({bits}))"
    else:  # -1 sign-extends to 64 bits set
        moved = f"(({as_bits} & {ones}.to({bits})) | ({ones}.to({bits}) + 1))"
    return f"{moved}.to({TRITON_DTYPES[dtype]}, bitcast=True)"


def _as_a_store_converts(value: str, dtype: torch.dtype) -> str:
    """`value` converted as tl.store converts what it writes to a tensor of `dtype`: into a
    bool tensor through int8 where this triton does (_compat.STORE_TO_BOOL_CONVERTS_TO_INT8)."""
    if dtype == torch.bool and _compat.STORE_TO_BOOL_CONVERTS_TO_INT8:
        return f"tl.cast({value}, tl.int8)"
    return value


def _as_a_load_converts(other: str, dtype: torch.dtype, block_shape: str | None = None) -> str:
    """A masked load's `other` as tl.load converts it for a tensor of `dtype`: for a bool
    tensor, to int8 first, then read as a bool (other=0.5 is False).

    block_shape (the interpreter's helpers): a bool is converted as a block of that shape.
    triton's interpreter (seen on 3.9) gives a scalar converted to int1 its source's data (an int8
    7 stays 7, splatted or not) and types a select by its last operand, so the kernel's 1-bit
    arithmetic on the loaded value stopped wrapping (True + True was 2, not 0; fusion hunt 7).
    A block's conversion holds int1's own data."""
    if dtype == torch.bool:
        as_int8 = f"tl.cast({other}, tl.int8)"
        if block_shape is not None:
            as_int8 = f"tl.broadcast_to({as_int8}, {block_shape})"
        return f"tl.cast({as_int8}, tl.int1)"
    return f"tl.cast({other}, {TRITON_DTYPES[dtype]})"


def _rounded(value: str, dtype: torch.dtype, target: str, ones: str | None) -> str:
    """`value` rounded to `dtype`; on a GPU, through _opaque_move with the parameter `ones`.
    tl.cast, not `.to`: a kernel may store a constant (`tl.store(p, C)`, C a constexpr), which
    tl.cast makes a tensor first as tl.store does."""
    converted = f"tl.cast({value}, {TRITON_DTYPES[dtype]})"
    if target != "gpu":
        return converted
    if ones is None:
        raise ValueError("GPU helpers need the name of their all-ones parameter")
    return _opaque_move(converted, dtype, ones)


def operand_offset(fused: torch.Tensor, operand: torch.Tensor,
                   size_param: Callable[[torch.SymInt], str] | None = None) -> str | None:
    """The offset, in `operand`'s elements, of the element of `operand` (broadcast to
    `fused`'s shape) at each lane whose element offset in `fused` is ``offset``.

    Returns "offset" where the layouts agree, None for a single element broadcast to all,
    and index arithmetic (``offset // s % n * t`` terms) otherwise. A symbolic size or stride
    the arithmetic needs is the kernel parameter `size_param` names for it; without
    `size_param`, and where `fused` is not provably dense, raises NotFusible.
    """
    statically_known_true = _compat.statically_known_true

    rank = fused.dim()
    if operand.dim() > rank:
        raise NotFusible("an operand has more dimensions than the fused tensor")
    sizes, strides = list(fused.size()), list(fused.stride())
    padded = [1] * (rank - operand.dim()) + list(operand.size())
    padded_strides = [0] * (rank - operand.dim()) + list(operand.stride())
    op_strides = [0 if statically_known_true(p == 1) and not statically_known_true(s == 1) else t
                  for p, s, t in zip(padded, sizes, padded_strides)]
    live = [d for d in range(rank) if not statically_known_true(sizes[d] == 1)]
    if all(statically_known_true(op_strides[d] == 0) for d in live):
        return None
    if all(statically_known_true(op_strides[d] == strides[d]) for d in live):
        return "offset"
    if is_row_major(fused):  # provably, also where sizes are symbolic (dynamic batch and sequence)
        order = live
    else:
        order = sorted(live, key=lambda d: _static(strides[d], "a stride of the fused tensor"), reverse=True)
        expected = 1
        for d in reversed(order):  # dense: each stride is the product of the sizes inside it
            if _static(strides[d], "a stride of the fused tensor") != expected:
                raise NotFusible("the fused tensor is not dense, so element offsets do not map to indices")
            expected *= _static(sizes[d], "a size of the fused tensor") if d != order[0] else 1
    # Only the dimensions the operand moves along need their sizes and strides.
    def text(value: Any, what: str) -> str:
        if size_param is None or _is_static(value):
            return str(_static(value, what))
        return size_param(value)

    terms = []
    for position, d in enumerate(order):
        if statically_known_true(op_strides[d] == 0):
            continue
        term = "offset"
        if not statically_known_true(strides[d] == 1):
            term = f"({term} // {text(strides[d], 'a stride of the fused tensor')})"
        if position > 0:
            term = f"({term} % {text(sizes[d], 'a size of the fused tensor')})"
        terms.append(term if statically_known_true(op_strides[d] == 1)
                     else f"{term} * {text(op_strides[d], 'a stride of an operand')}")
    return " + ".join(terms)


def is_row_major(t: torch.Tensor) -> bool:
    """Provably contiguous in row-major order (size-1 dimensions may have any stride), for
    symbolic sizes too."""
    statically_known_true = _compat.statically_known_true

    expected: Any = 1
    for size, stride in reversed(list(zip(t.size(), t.stride()))):
        if statically_known_true(size == 1):
            continue
        if not statically_known_true(stride == expected):
            return False
        expected = expected * size
    return True


def _is_static(value: Any) -> bool:
    return isinstance(value, int) or (isinstance(value, torch.SymInt) and value.node.is_constant())


def _static(value: Any, what: str) -> int:
    if _is_static(value):
        return int(value)
    raise NotFusible(f"{what} is symbolic ({value}); broadcasting operands need it static")

