"""Triton source for a region of pointwise aten ops: the helper functions a fused kernel
calls at its stores (epilogue) and loads (prologue). See _fusion.

# [Note: Numerics of fused pointwise code]
# TL;DR: computed as inductor computes pointwise code: fp16 / bf16 / fp8 values are held in
# fp32 between ops and rounded only where the graph converts (convert_element_type) and at
# the end; ops are the ones inductor emits (NaN-propagating maximum, tl.sigmoid, sqrt_rn, ...).
# The value a kernel stores is first rounded to the dtype of the tensor it stores to, and a
# prologue's result to the dtype of the tensor it replaces, so an epilogue sees exactly what
# the unfused kernel wrote and a kernel exactly what the unfused prologue wrote.
# Where triton's interpreter lacks a function inductor uses on a GPU (libdevice), the
# interpreter gets an exact-in-math equivalent (tanh via sigmoid); a GPU gets inductor's.
# Measured on an H200 (benchmarks/fusion_exactness_probe.py): without the opaque move of
# _rounded, a multiply kernel + add epilogue differed from eager in 3.9M of 33.5M elements (an
# FMA across the store); with it, 0. A cast to a narrower dtype in the epilogue can still
# change the kernel's own reduction order (triton picks another layout for the kernel).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import torch

from ._fusion_source import NotFusible

__all__ = ["Operand", "helper_source", "operand_offset", "TRITON_DTYPES", "is_pointwise", "is_row_major"]

aten, prims = torch.ops.aten, torch.ops.prims

TRITON_DTYPES = {
    torch.float16: "tl.float16", torch.bfloat16: "tl.bfloat16", torch.float32: "tl.float32",
    torch.float64: "tl.float64", torch.int8: "tl.int8", torch.int16: "tl.int16", torch.int32: "tl.int32",
    torch.int64: "tl.int64", torch.uint8: "tl.uint8", torch.bool: "tl.int1",
    torch.float8_e4m3fn: "tl.float8e4nv", torch.float8_e5m2: "tl.float8e5",
}
_LOW_PRECISION = {torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2}


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float32 if dtype in _LOW_PRECISION else dtype


# Ops by how they combine inputs; each computes in the compute dtype of its output (or, for
# comparisons, of its inputs' promoted dtype).
_BINARY = {aten.add.Tensor: "{0} + {1}", aten.add.Scalar: "{0} + {1}", aten.sub.Tensor: "{0} - {1}",
           aten.sub.Scalar: "{0} - {1}", aten.mul.Tensor: "{0} * {1}", aten.mul.Scalar: "{0} * {1}",
           aten.div.Tensor: "{0} / {1}", aten.div.Scalar: "{0} / {1}",
           aten.maximum.default: "tl.where(({0} > {1}) | ({0} != {0}), {0}, {1})",
           aten.minimum.default: "tl.where(({0} < {1}) | ({0} != {0}), {0}, {1})",
           aten.bitwise_and.Tensor: "{0} & {1}", aten.bitwise_or.Tensor: "{0} | {1}",
           aten.bitwise_xor.Tensor: "{0} ^ {1}"}
_COMPARE = {aten.eq.Tensor: "==", aten.eq.Scalar: "==", aten.ne.Tensor: "!=", aten.ne.Scalar: "!=",
            aten.lt.Tensor: "<", aten.lt.Scalar: "<", aten.le.Tensor: "<=", aten.le.Scalar: "<=",
            aten.gt.Tensor: ">", aten.gt.Scalar: ">", aten.ge.Tensor: ">=", aten.ge.Scalar: ">="}
_UNARY = {aten.neg.default: "-{0}", aten.abs.default: "tl.abs({0})",
          aten.relu.default: "tl.where({0} < 0, 0, {0})", aten.reciprocal.default: "1.0 / {0}",
          aten.sigmoid.default: "tl.sigmoid({0})", aten.exp.default: "tl.exp({0})",
          aten.exp2.default: "tl.exp2({0})", aten.log.default: "tl.log({0})", aten.log2.default: "tl.log2({0})",
          aten.sqrt.default: "tl.sqrt_rn({0})", aten.rsqrt.default: "tl.rsqrt({0})",
          aten.sin.default: "tl.sin({0})", aten.cos.default: "tl.cos({0})", aten.erf.default: "tl.erf({0})",
          aten.floor.default: "tl.floor({0})", aten.ceil.default: "tl.ceil({0})",
          aten.logical_not.default: "{0} == 0", aten.bitwise_not.default: "~{0}"}
# On a GPU inductor calls libdevice; the interpreter has no libdevice.
_UNARY_BY_TARGET = {aten.tanh.default: {"gpu": "libdevice.tanh({0})", "interpreter": "2 * tl.sigmoid(2 * {0}) - 1"}}
_IDENTITY = {aten.clone.default, aten.alias.default}
_LOGICAL = {aten.logical_and.default: "&", aten.logical_or.default: "|", aten.logical_xor.default: "^"}
_CLAMPS = {aten.clamp_min.default, aten.clamp_max.default, aten.clamp.default}
_OTHER = {aten.where.self, prims.convert_element_type.default, aten.pow.Tensor_Scalar}
_POINTWISE = set(_BINARY) | set(_COMPARE) | set(_UNARY) | set(_UNARY_BY_TARGET) | _IDENTITY | set(_LOGICAL) \
    | _CLAMPS | _OTHER


def is_pointwise(node: torch.fx.Node) -> bool:
    """A node this module translates: a supported pointwise op with a tensor result, without
    keyword arguments it does not model."""
    if node.op != "call_function" or node.target not in _POINTWISE:
        return False
    if not isinstance(node.meta.get("val"), torch.Tensor) or node.meta["val"].dtype not in TRITON_DTYPES:
        return False
    allowed = {"alpha"} if node.target in (aten.add.Tensor, aten.sub.Tensor, aten.add.Scalar, aten.sub.Scalar) \
        else set()
    if node.target is aten.clone.default:
        allowed = {"memory_format"}
    return set(node.kwargs) <= allowed


@dataclasses.dataclass(frozen=True)
class Operand:
    """A tensor the helper loads: a new kernel parameter and the offset of each lane in it
    (None: a single element, loaded once and broadcast)."""

    param: str
    offset: str | None


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    raise NotFusible(f"a scalar argument {value!r} of type {type(value).__name__} (only Python numbers fuse)")


class _Translator:
    def __init__(self, target: str) -> None:
        self.target = target
        self.lines: list[str] = []
        self.values: dict[torch.fx.Node, tuple[str, torch.dtype]] = {}  # node -> (variable, dtype)

    def emit(self, expression: str, dtype: torch.dtype) -> tuple[str, torch.dtype]:
        name = f"t{len(self.lines)}"
        self.lines.append(f"{name} = {expression}")
        return name, dtype

    def cast(self, value: tuple[str, torch.dtype], dtype: torch.dtype) -> str:
        """`value` (held in its compute dtype) in the compute dtype of `dtype`."""
        name, current = value
        if _compute_dtype(current) == _compute_dtype(dtype):
            return name
        if dtype == torch.bool:
            return f"({name} != 0)"
        return f"{name}.to({TRITON_DTYPES[_compute_dtype(dtype)]})"

    def argument(self, arg: Any, dtype: torch.dtype) -> str:
        if isinstance(arg, torch.fx.Node):
            return self.cast(self.values[arg], dtype)
        return _literal(arg)

    def node(self, node: torch.fx.Node) -> None:
        target, args, out = node.target, node.args, node.meta["val"].dtype
        if target in _BINARY:
            a, b = (self.argument(x, out) for x in args[:2])
            alpha = node.kwargs.get("alpha", args[2] if len(args) > 2 else 1)
            if alpha != 1:
                b = f"({b} * {_literal(alpha)})"
            expression = _BINARY[target].format(a, b)
            if target in (aten.maximum.default, aten.minimum.default):
                expression = f"({expression}).to({TRITON_DTYPES[_compute_dtype(out)]})"
        elif target in _COMPARE:
            inputs = [x.meta["val"] if isinstance(x, torch.fx.Node) else x for x in args[:2]]
            common = torch.result_type(*inputs)
            a, b = (self.argument(x, common) for x in args[:2])
            expression = f"{a} {_COMPARE[target]} {b}"
        elif target in _UNARY or target in _UNARY_BY_TARGET:
            template = _UNARY[target] if target in _UNARY else _UNARY_BY_TARGET[target][self.target]
            expression = template.format(self.argument(args[0], out))
            if target is aten.relu.default:
                expression = f"({expression}).to({TRITON_DTYPES[_compute_dtype(out)]})"
        elif target in _IDENTITY:
            expression = self.argument(args[0], out)
        elif target in _LOGICAL:
            a, b = (self.argument(x, torch.bool) for x in args[:2])
            expression = f"{a} {_LOGICAL[target]} {b}"
        elif target in _CLAMPS:
            expression = self.argument(args[0], out)
            low, high = (args[1], args[2] if len(args) > 2 else None) if target is aten.clamp.default else (
                (args[1], None) if target is aten.clamp_min.default else (None, args[1]))
            for bound, compare in ((low, "<"), (high, ">")):
                if bound is not None:
                    b = self.argument(bound, out)
                    expression = f"tl.where({expression} {compare} {b}, {b}, {expression})"
            expression = f"({expression}).to({TRITON_DTYPES[_compute_dtype(out)]})"
        elif target is aten.where.self:
            condition = self.argument(args[0], torch.bool)
            a, b = (self.argument(x, out) for x in args[1:3])
            expression = f"tl.where({condition}, {a}, {b}).to({TRITON_DTYPES[_compute_dtype(out)]})"
        elif target is prims.convert_element_type.default:
            source = self.values[args[0]] if isinstance(args[0], torch.fx.Node) else None
            if source is None:
                raise NotFusible(f"{node.name} converts a scalar")
            name, current = source
            if _compute_dtype(current) == out:  # e.g. fp16 -> fp32: already held in fp32
                expression = name
            elif out == torch.bool:
                expression = f"{name} != 0"
            elif out in _LOW_PRECISION:  # round, then hold in fp32 again
                expression = f"{name}.to({TRITON_DTYPES[out]}).to(tl.float32)"
            else:
                expression = f"{name}.to({TRITON_DTYPES[out]})"
        elif target is aten.pow.Tensor_Scalar:
            x, exponent = self.argument(args[0], out), args[1]
            forms = {2: f"{x} * {x}", 3: f"{x} * {x} * {x}", 1: x, 0.5: f"tl.sqrt_rn({x})", -1: f"1.0 / {x}"}
            if exponent in forms:
                expression = forms[exponent]
            elif self.target == "gpu" and isinstance(exponent, (int, float)):
                expression = f"libdevice.pow({x}, {_literal(float(exponent))})"
            else:
                raise NotFusible(f"{node.name}: x ** {exponent!r} on the interpreter")
        else:
            raise NotFusible(f"{node.name} ({target}) is not a pointwise op the fusion translates")
        self.values[node] = self.emit(expression, out)

    def load(self, node: torch.fx.Node, operand: Operand, masked: bool) -> None:
        dtype = node.meta["val"].dtype
        if operand.offset is None:
            expression = f"tl.load({operand.param})"
        else:
            expression = f"tl.load({operand.param} + {operand.offset}{', mask=mask' if masked else ''})"
        if dtype in _LOW_PRECISION:
            expression += ".to(tl.float32)"
        elif dtype == torch.bool:
            expression += " != 0"
        self.values[node] = self.emit(expression, dtype)


def helper_source(name: str, kind: str, nodes: list[torch.fx.Node], inputs: dict[torch.fx.Node, Operand],
                  value: torch.fx.Node | None, result: torch.fx.Node, result_dtype: torch.dtype, target: str,
                  sizes: tuple[str, ...] = ()) -> str:
    """Source of a @triton.jit helper computing the region `nodes` (graph order).

    kind "epilogue": ``name(value, offset, mask, *operands)``; `value` (the FX node of the
    kernel's result) is the stored value, rounded to its dtype first. kind "prologue":
    ``name(offset, mask, other, *operands)`` returns `result` rounded to `result_dtype`,
    `other` where the load's mask is off.
    """
    translator = _Translator(target)
    params = [operand.param for operand in inputs.values()] + list(sizes)  # sizes: symbolic ones the offsets use
    if kind == "epilogue":
        assert value is not None
        dtype = value.meta["val"].dtype
        stored = _rounded("value", dtype, target)
        if dtype in _LOW_PRECISION:
            stored += ".to(tl.float32)"
        translator.values[value] = translator.emit(stored, dtype)
        signature = ["value", "offset", "mask", *params]
    else:
        signature = ["offset", "mask", "other", *params]
    for node, operand in inputs.items():
        translator.load(node, operand, masked=True)
    for node in nodes:
        translator.node(node)
    final, dtype = translator.values[result]
    body = [*translator.lines]
    if result_dtype == torch.bool:
        body.append(f"result = {translator.cast((final, dtype), torch.bool)}")
    else:
        body.append(f"result = {_rounded(final, result_dtype, target) if kind == 'prologue' else final}"
                    f".to({TRITON_DTYPES[result_dtype]})")
    if kind == "prologue":
        body += ["if other is not None:", f"    result = tl.where(mask, result, other).to({TRITON_DTYPES[result_dtype]})"]
    body.append("return result")
    lines = [f"def {name}({', '.join(signature)}):"] + [f"    {line}" for line in body]
    return "\n".join(lines) + "\n"


# A value handed across the kernel / helper boundary in fp32 or fp64 goes through an opaque
# register move on a GPU: otherwise the compiler may contract the kernel's last multiply with
# the epilogue's first add (or the prologue's multiply with the kernel's add) into one FMA,
# skipping the rounding the unfused program does when it stores the value. Narrower dtypes
# are rounded by their conversion; the interpreter never contracts.
_OPAQUE_MOVE = {torch.float32: ('"mov.b32 $0, $1;"', '"=r,r"'), torch.float64: ('"mov.b64 $0, $1;"', '"=l,l"')}


def _rounded(value: str, dtype: torch.dtype, target: str) -> str:
    if target == "gpu" and dtype in _OPAQUE_MOVE:
        asm, constraints = _OPAQUE_MOVE[dtype]
        return (f"tl.inline_asm_elementwise({asm}, {constraints}, [{value}.to({TRITON_DTYPES[dtype]})], "
                f"dtype={TRITON_DTYPES[dtype]}, is_pure=True, pack=1)")
    return f"{value}.to({TRITON_DTYPES[dtype]})"


def operand_offset(fused: torch.Tensor, operand: torch.Tensor,
                   size_param: Callable[[torch.SymInt], str] | None = None) -> str | None:
    """The offset, in `operand`'s elements, of the element of `operand` (broadcast to
    `fused`'s shape) at each lane whose element offset in `fused` is ``offset``.

    Returns "offset" where the layouts agree, None for a single element broadcast to all,
    and index arithmetic (``offset // s % n * t`` terms) otherwise. A symbolic size or stride
    the arithmetic needs is the kernel parameter `size_param` names for it; without
    `size_param`, and where `fused` is not provably dense, raises NotFusible.
    """
    from torch.fx.experimental.symbolic_shapes import statically_known_true

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
    from torch.fx.experimental.symbolic_shapes import statically_known_true

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

