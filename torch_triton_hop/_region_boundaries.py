"""Which values may cross the boundary of a fused region through memory.

# [Note: Values at a fused region's boundary]
# TL;DR: fused code reads its operands from memory and stores an epilogue's result to memory.
# Where the unfused program may compute such a value inside the kernel that uses it, the
# trip through memory must not change it, or the argument is not fused.
# Inductor's Triton code holds a value in its compute type and rounds it to its dtype only when
# it stores it: fp16 / bf16 / fp8 in fp32 (a conversion to them is a conversion to fp32, see
# config.emulate_precision_casts), narrow integers and bools from arithmetic possibly wider (see
# [Note: Narrow integers wrap at every op]). Take `h = a * 3.3` in fp16, used by an epilogue
# `out + h` and by another op: the unfused program computes `a * 3.3` in fp32 inside the
# epilogue's kernel, the fused kernel would read h from memory, rounded to fp16. Where the
# region holds its own fp16 values in fp32, the result is neither eager's nor the unfused
# compile's: the GPU fuzzer found that (seed 23 #1662), a region `where(h > 0, h, copy(y)).sqrt()`
# reading `h = o1 / 1.5` from memory. fp32 and fp64 values are stored as they are held, but on a
# GPU a product read from memory cannot contract into an FMA with the add that uses it, as it
# can inside the unfused kernel (triton compiles with enable_fp_fusion; inductor's C++ code with
# -ffp-contract=off).
# So a value crosses where every kernel holds the value memory holds:
#  - it is read from memory: a graph input, a launch's output, an extern kernel's output (a
#    matmul, attention), a constant its dtype holds;
#  - or it is held as its own dtype: int64, a compare's or logical op's bool, a conversion to a
#    dtype held as itself (int8, fp32, ...), a conversion to fp16 / bf16 of a dtype they hold
#    exactly (uint8, int8, bool), fp32 / fp64 that (on a GPU) is not a product;
#  - or it moves, selects or widens such values (views, flip, a gather or embedding, neg, abs,
#    maximum, where, ...), or pads them with a value its dtype holds (F.pad);
#  - or (an epilogue's result) only consumers that take a buffer use it: the graph's outputs,
#    launches, extern kernels, a copy into a tensor of its dtype.
# Anything else is refused, the reason logged: whether inductor keeps a value in registers is its
# scheduler's choice, not ours to predict.
"""

from __future__ import annotations

import operator

import torch

from . import _compat
from ._fx_values import node_value

__all__ = ["boundary_difference"]

aten, prims = torch.ops.aten, torch.ops.prims

# Ops inductor runs as extern kernels (cuBLAS, cuDNN, its attention kernels) by default: their
# inputs and outputs live in memory.
_EXTERN = {aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default, aten._int_mm.default,
           aten.convolution.default, aten._scaled_dot_product_flash_attention.default,
           aten._scaled_dot_product_efficient_attention.default,
           aten._scaled_dot_product_cudnn_attention.default}
_EMPTY = {aten.empty.memory_format, aten.empty_strided.default, aten.empty_like.default}
_FILLS = {aten.full.default, aten.full_like.default}
_CONVERSIONS = {prims.convert_element_type.default, aten._to_copy.default}
# Ops whose result is one of their first argument's elements (the rest are indices or shapes).
_MOVES = {aten.clone.default, aten.lift_fresh_copy.default, aten._unsafe_view.default, aten.reshape.default,
          aten.flip.default, prims.rev.default, aten.roll.default, aten.repeat.default, aten.index_select.default,
          aten.gather.default, aten.index.Tensor, aten.embedding.default}
# Ops whose result is one of their tensor arguments' values, or a value their dtype holds
# whatever type the kernel computes in (where's condition only selects).
_SELECTS = {aten.neg.default, aten.abs.default, aten.relu.default, aten.sign.default, aten.floor.default,
            aten.ceil.default, aten.trunc.default, aten.round.default, aten.maximum.default, aten.minimum.default,
            aten.where.self}
# Held in fp32 by inductor's Triton code (its compute type), rounded only when stored.
_HELD_WIDER = {torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2}
# The low-precision dtypes that hold every value of a dtype exactly.
_EXACTLY_IN = {torch.bool: _HELD_WIDER, torch.uint8: {torch.float16, torch.bfloat16},
               torch.int8: {torch.float16, torch.bfloat16}, torch.float8_e4m3fn: {torch.float16, torch.bfloat16},
               torch.float8_e5m2: {torch.float16, torch.bfloat16}}
# Ops whose bool result is a compare's or a logical op's: 0 or 1 in every kernel.
_BOOLEAN = {aten.eq.Tensor, aten.eq.Scalar, aten.ne.Tensor, aten.ne.Scalar, aten.lt.Tensor, aten.lt.Scalar,
            aten.le.Tensor, aten.le.Scalar, aten.gt.Tensor, aten.gt.Scalar, aten.ge.Tensor, aten.ge.Scalar,
            aten.logical_and.default, aten.logical_or.default, aten.logical_xor.default, aten.logical_not.default,
            aten.bitwise_and.Tensor, aten.bitwise_or.Tensor, aten.bitwise_xor.Tensor, aten.bitwise_not.default,
            aten.isnan.default, aten.isinf.default, aten.signbit.default}
# fp32 / fp64 ops whose result is not a product an add could contract with (their arguments may be).
_NOT_PRODUCTS = {aten.add.Tensor, aten.add.Scalar, aten.sub.Tensor, aten.sub.Scalar, aten.clamp.default,
                 aten.clamp.Tensor, aten.clamp_min.default, aten.clamp_max.default}
_COPIES = {aten.copy.default, aten.copy_.default}


def _is_view(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and bool(getattr(node.target, "is_view", False))


def _value_inputs(node: torch.fx.Node) -> list:
    """The arguments whose values `node` (a move or a select) passes on."""
    if node.target in _MOVES:
        return [node.args[0]]
    args = [*node.args, *node.kwargs.values()]
    return args[1:] if node.target is aten.where.self else args


def _holds(dtype: torch.dtype, value: bool | int | float) -> bool:
    held = torch.tensor(value, dtype=dtype).item()
    return held == value or (held != held and value != value)


def _exact_in_memory(node: torch.fx.Node, target: str) -> bool:
    """Whether the value the unfused program's kernels hold for `node` is the value memory holds
    for it, bit for bit (and, on a GPU, not a product an add could contract with)."""
    while _is_view(node):
        node = node.args[0]
    if node.op in ("placeholder", "get_attr"):  # a graph input or a constant: memory
        return True
    if node.op != "call_function":
        return False
    op, dtype = node.target, node_value(node).dtype
    if op is operator.getitem:
        op = node.args[0].target
        return isinstance(op, _compat.HigherOrderOperator) or op in _EXTERN
    if isinstance(op, _compat.HigherOrderOperator) or op in _EXTERN or op in _EMPTY:
        return True
    if op in _FILLS:  # a constant: inductor holds the Python number, not its value in the dtype
        return isinstance(node.args[1], (bool, int, float)) and _holds(dtype, node.args[1])
    if op is aten.constant_pad_nd.default:  # the input's elements, or the padding value
        value = node.args[2] if len(node.args) > 2 else node.kwargs.get("value", 0)
        source = node.args[0]
        return (isinstance(value, (bool, int, float)) and _holds(dtype, value) and isinstance(source, torch.fx.Node)
                and node_value(source).dtype == dtype and _exact_in_memory(source, target))
    if op in _MOVES or op in _SELECTS:
        return all(isinstance(a, torch.fx.Node) and node_value(a).dtype == dtype and _exact_in_memory(a, target)
                   for a in _value_inputs(node))
    if op in _CONVERSIONS and isinstance(node.args[0], torch.fx.Node):
        source = node_value(node.args[0]).dtype
        if dtype in _HELD_WIDER:  # converted to fp32, not to the dtype: not rounded
            return dtype in _EXACTLY_IN.get(source, ()) and _exact_in_memory(node.args[0], target)
        if source in _HELD_WIDER or (source.is_floating_point and dtype.is_floating_point
                                     and dtype.itemsize > source.itemsize):
            return _exact_in_memory(node.args[0], target)  # widened: held as computed
        return True  # converted to a dtype held as itself: rounded, wrapped or compared there
    if dtype == torch.bool:
        return op in _BOOLEAN
    if dtype == torch.int64:
        return True
    if dtype in (torch.float32, torch.float64):
        return target == "interpreter" or op in _NOT_PRODUCTS
    return False  # fp16 / bf16 / fp8 held in fp32, narrow integers held wider


def _only_buffer_consumers(node: torch.fx.Node) -> bool:
    """Whether every user of `node` (through views, reshapes and copies) takes it as a buffer."""
    for user in node.users:
        copied = user.target in _COPIES and user.args[1] is node and node_value(user).dtype == node_value(node).dtype
        if _is_view(user) or copied or user.target in _MOVES and user.args[0] is node:
            if not _only_buffer_consumers(user):
                return False
        elif not (user.op == "output" or isinstance(user.target, _compat.HigherOrderOperator)
                  or user.target in _EXTERN):
            return False
    return True


def boundary_difference(node: torch.fx.Node, role: str, target: str) -> str | None:
    """Why reading `node` from memory (role "operand") or storing it (role "result", an
    epilogue's) could change what the program computes, or None if it cannot (see [Note: Values
    at a fused region's boundary]); `target` is "gpu" or "interpreter"."""
    if _exact_in_memory(node, target) or (role == "result" and _only_buffer_consumers(node)):
        return None
    dtype = node_value(node).dtype
    name, held = str(dtype).replace("torch.", ""), "product" if dtype in (torch.float32, torch.float64) else "value"
    if role == "operand":
        return (f"operand {node.name} ({name}) is computed by {node.target}, which the unfused program may compute "
                f"inside the kernel that uses it, where this {held} is not rounded as it is in memory, which the "
                "fused code reads")
    users = ", ".join(sorted(u.name for u in node.users))
    return (f"its result {node.name} ({name}) is also used by {users}, which the unfused program may compute in the "
            f"kernel computing {node.name}, where this {held} is not rounded as it is in memory, where the fused code "
            "stores it")
