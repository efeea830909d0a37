"""Symbolic sizes of a post-grad FX graph rebuilt as nodes from its SymInt inputs.

Fusion (_fusion) removes tensors whose sizes other nodes may still ask for (a view's
`sym_size` under dynamic shapes), and passes sizes that index arithmetic divides by to a fused
kernel as arguments: both need a node computing a symbolic size from what the graph takes.
"""

from __future__ import annotations

import operator
from typing import Any

import torch

from ._compat_inductor import sympy_floor_div, sympy_value
from ._fusion_source import NotFusible
from ._fx_values import node_value

__all__ = ["SymbolicSizes"]


def _value_of(argument: Any) -> Any:
    """A node's value; a constant argument is its own."""
    return node_value(argument) if isinstance(argument, torch.fx.Node) else argument


class SymbolicSizes:
    """Rebuilds a symbolic size from the graph's SymInt inputs: for a size query of a tensor
    that fusion removes (a prologue's view), and for a size the fused code's index arithmetic
    takes as an argument. Products, sums and floor divisions of input symbols, the
    expressions reshapes make."""

    def __init__(self, graph: torch.fx.Graph) -> None:
        self.graph = graph
        self.inputs = {}
        for node in graph.find_nodes(op="placeholder"):
            value = _value_of(node)
            if isinstance(value, torch.SymInt) and sympy_value(value).is_Symbol:
                self.inputs.setdefault(sympy_value(value), node)

    def check(self, query: torch.fx.Node) -> None:
        self.check_value(_value_of(query))

    def check_value(self, value: Any) -> None:
        self._build(value, None)

    def node(self, value: Any) -> Any:
        """A node computing `value` (an int where it is one), at the graph's insertion point."""
        return self._build(value, self.graph)

    def check_layout(self, tensor: torch.Tensor) -> None:
        """NotFusible where a symbolic size or stride of `tensor` cannot be computed in the graph."""
        for size in (*tensor.size(), *tensor.stride()):
            if isinstance(size, torch.SymInt):
                self.check_value(size)

    def layout(self, tensor: torch.Tensor) -> tuple[list[Any], list[Any]]:
        """`tensor`'s sizes and strides as a new buffer's arguments: ints, and nodes computing
        the symbolic ones, at the graph's insertion point."""
        return tuple([self.node(d) if isinstance(d, torch.SymInt) else d for d in part]
                     for part in (tensor.size(), tensor.stride()))

    def replace(self, query: torch.fx.Node) -> None:
        with self.graph.inserting_before(query):
            query.replace_all_uses_with(self.node(_value_of(query)))
        self.graph.erase_node(query)

    def _build(self, value: Any, graph: torch.fx.Graph | None) -> Any:
        if not isinstance(value, torch.SymInt):
            raise NotFusible(f"{value!r}, a size the fused code needs, is not an integer")
        return self._expression(sympy_value(value), graph)

    def _expression(self, expr: Any, graph: torch.fx.Graph | None) -> Any:
        import sympy

        if expr.is_Integer:
            return int(expr)
        if expr.is_Symbol:
            if expr not in self.inputs:
                raise NotFusible(f"the size {expr} is not an input of the graph")
            return self.inputs[expr]
        functions = {sympy.Mul: operator.mul, sympy.Add: operator.add, sympy_floor_div(): operator.floordiv}
        fn = functions.get(type(expr))
        if fn is None or (fn is operator.floordiv and len(expr.args) != 2):
            raise NotFusible(f"the size {expr} is not a product, sum or floor division of inputs")
        args = [self._expression(a, graph) for a in expr.args]
        if graph is None:
            return None
        result = args[0]
        for arg in args[1:]:
            node = graph.call_function(fn, (result, arg))
            node.meta["val"] = fn(_value_of(result), _value_of(arg))
            result = node
        return result
