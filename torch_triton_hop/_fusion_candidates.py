"""Which pointwise code around a functional launch may fuse into it: the epilogue and prologue
candidates of each argument, and the checks on their place in the graph (what writes memory
in between, graph inputs that may share memory, operands computed after the launch).

The fusion pass (_fusion) plans, checks and applies them; see [Note: Fusing pointwise code
into user kernels] there.
"""

from __future__ import annotations

import dataclasses
import logging
import operator
from typing import Any

import torch

from . import _compat, _compat_inductor
from ._fusion_source import NotFusible
from ._fx_values import node_value
from ._graph_sizes import SymbolicSizes
from ._hops import (parse_shared_memory, tensors_accessed, triton_kernel_wrapper_functional,
                    triton_kernel_wrapper_mutation)
from ._pointwise_triton import is_pointwise, is_row_major
from ._region_boundaries import boundary_difference
from ._region_views import ViewsRefused, lane_views, relabeled_operands, view_chain_above
from ._side_table import kernel_layers, kernel_side_table
from ._store_coverage import read_after_store_reason, reloaded_reason, unstored_reason
from ._unwritten_elements import absorbed_value, ignored_value

# The fusion pass's one debug log: what fused, and why the rest did not.
log = logging.getLogger(__name__.rsplit(".", 1)[0] + "._fusion")

__all__ = ["Candidate", "LaunchFusion", "Refused", "fresh_buffer", "metadata_users"]

aten = torch.ops.aten
_EMPTY = {aten.empty.memory_format, aten.empty_strided.default, aten.empty_like.default,
          aten.new_empty.default, aten.new_empty_strided.default}
# Views that can only reshape (squeeze / unsqueeze / flatten / view).
_VIEWS = {aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.alias.default,
          aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.unsqueeze.default,
          aten.flatten.using_ints}
# Views that relabel every element of an empty (`torch.empty_like` of a transposed tensor is a
# permute of an empty in the decomposed graph; `torch.empty(n * h).view(n, h)`): a fresh buffer
# too, where nothing else uses the empty.
_RELABELING_VIEWS = {aten.permute.default, aten.t.default, aten.transpose.int, *_VIEWS}
# Users that read a tensor's sizes, strides or offset, never its elements (Liger's
# `n_rows = X.view(-1, dim).shape[0]` under dynamic shapes).
_METADATA = {aten.sym_size.int, aten.sym_stride.int, aten.sym_numel.default, aten.sym_storage_offset.default}
_MAX_REGION = 64  # nodes per fused region: beyond that the helper grows unreadable for little gain


class Refused(Exception):
    """One argument is not fused; the message says why."""


@dataclasses.dataclass
class Candidate:
    """Pointwise code to fold into one argument's accesses."""

    kind: str  # "epilogue" (at the kernel's stores) | "prologue" (at its loads)
    region: list[torch.fx.Node]  # the pointwise nodes, graph order
    sink: torch.fx.Node  # the region's result: what the epilogue produces / the prologue replaces
    operands: list[torch.fx.Node]  # tensors the region reads besides the argument
    # A prologue whose result (or a view between it and the launch) other nodes use too: per
    # such user, the node of that chain it uses. The fused kernel stores the result for them.
    others: dict[torch.fx.Node, torch.fx.Node] = dataclasses.field(default_factory=dict)
    # Operands read above a view of the region: their values as the fused code indexes them
    # ([Note: Views inside a fused region]); the rest are read as they are.
    operand_values: dict[torch.fx.Node, torch.Tensor] = dataclasses.field(default_factory=dict)

    def operand_value(self, operand: torch.fx.Node) -> torch.Tensor:
        return self.operand_values.get(operand, node_value(operand))


def _same_layout(a: torch.Tensor, b: torch.Tensor) -> bool:
    return (a.dim() == b.dim() and a.device == b.device
            and all(_compat.statically_known_true(x == y) for x, y in zip(a.size(), b.size()))
            and all(_compat.statically_known_true(x == y) or _compat.statically_known_true(n <= 1)
                    for x, y, n in zip(a.stride(), b.stride(), a.size())))


def _memory_keeping_view(node: Any) -> bool:
    """A view under which each element keeps its memory offset: view and base of one dtype,
    storage offset and element count, each dense. Reshaping a contiguous tensor is one (Liger's
    `X.view(-1, dim)`); so is permuting a channels_last tensor to NHWC and flattening it into
    rows. A kernel indexes memory, so it reads and writes the same elements through either."""
    if not isinstance(node, torch.fx.Node) or node.op != "call_function" or \
            node.target not in (*_RELABELING_VIEWS, aten.as_strided.default):
        return False
    view, base = node_value(node), node_value(node.args[0]) if node.args else None
    if not (isinstance(view, torch.Tensor) and isinstance(base, torch.Tensor) and view.dtype == base.dtype
            and _compat.statically_known_true(view.storage_offset() == base.storage_offset())
            and _compat.statically_known_true(view.numel() == base.numel())):
        return False
    # Row-major is provable for symbolic sizes too. Other dense orders are asked of static
    # layouts only: torch's density test would guard on symbolic strides (or fail on unbacked ones).
    return (is_row_major(view) and is_row_major(base)) or all(
        all(isinstance(v, int) for v in (*t.size(), *t.stride())) and _compat_inductor.is_non_overlapping_and_dense(t)
        for t in (view, base))


def _same_view(a: Any, b: torch.fx.Node) -> bool:
    """`a` and `b` are one view op on the same arguments (functionalization views a tensor passed
    twice once per argument): the same elements."""
    return (isinstance(a, torch.fx.Node) and a.op == b.op == "call_function" and a.target == b.target
            and a.target in (*_VIEWS, aten.as_strided.default) and a.args == b.args and a.kwargs == b.kwargs)


def _data_users(node: torch.fx.Node) -> set[torch.fx.Node]:
    return {u for u in node.users if u.target not in _METADATA}


def metadata_users(node: torch.fx.Node) -> list[torch.fx.Node]:
    return [u for u in node.users if u.target in _METADATA]


def _writes(node: torch.fx.Node) -> list[Any] | None:
    """Storages `node` may write, or None if it may write anything (an unknown side effect)."""
    if node.op != "call_function":
        return []
    target = node.target
    if target is operator.getitem or target is triton_kernel_wrapper_functional:
        return []
    if target is triton_kernel_wrapper_mutation:  # the arguments the analysis says it writes
        values = {name: node_value(v) if isinstance(v, torch.fx.Node) else v
                  for name, v in node.kwargs["kwargs"].items()}
        accessed = tensors_accessed(node.kwargs["kernel"], node.kwargs["constant_args"], node.kwargs["configs"], values)
        if accessed.other_memory_written:
            return None
        return [_compat.storage_identity(values[name]) for name in accessed.writes]
    schema = _compat.op_schema(target)
    if schema is None:
        return [] if not isinstance(target, _compat.HigherOrderOperator) and callable(target) and \
            getattr(target, "__module__", "") in ("_operator", "math", "torch") else None
    if not schema.is_mutable:
        return []
    written = []
    for argument, value in zip(schema.arguments, node.args):
        if argument.alias_info is not None and argument.alias_info.is_write:
            values = value if isinstance(value, (list, tuple)) else [value]
            written.extend(_compat.storage_identity(node_value(v)) for v in values if isinstance(node_value(v), torch.Tensor))
    for name, value in node.kwargs.items():
        argument = next((a for a in schema.arguments if a.name == name), None)
        if argument is not None and argument.alias_info is not None and argument.alias_info.is_write \
                and isinstance(node_value(value), torch.Tensor):
            written.append(_compat.storage_identity(node_value(value)))
    return written


def _check_no_writes(nodes: list[torch.fx.Node], operands: list[torch.fx.Node], where: str) -> None:
    storages = {_compat.storage_identity(node_value(o)) for o in operands if isinstance(node_value(o), torch.Tensor)}
    for node in nodes:
        written = _writes(node)
        if written is None:
            raise Refused(f"{node.name} ({node.target}) {where} may write memory the fused code reads")
        hit = storages.intersection(written)
        if hit:
            raise Refused(f"{node.name} {where} writes an operand the fused code would read earlier")


class LaunchFusion:
    """Fusion candidates of one functional launch."""

    def __init__(self, graph: torch.fx.Graph, node: torch.fx.Node, interpreted: bool) -> None:
        self.graph, self.node = graph, node
        self.kwargs: dict[str, Any] = dict(node.kwargs["kwargs"])
        self.vals = {name: node_value(v) if isinstance(v, torch.fx.Node) else v for name, v in self.kwargs.items()}
        self.order = {n: i for i, n in enumerate(graph.nodes)}
        self.written = list(node.kwargs["tensors_to_clone"])
        self.getitems: dict[str, torch.fx.Node] = {}
        # Per fused argument: the memory-keeping views between it and its pointwise code (graph
        # order), and the node whose value the fused code sees in place of the tensor: an
        # epilogue's getitem or last view, a prologue's sink.
        self.views: dict[str, list[torch.fx.Node]] = {}
        self.sizes = SymbolicSizes(graph)
        self.value: dict[str, torch.fx.Node] = {}
        self.unstored: dict[str, str | None] = {}
        self.split: dict[str, str] = {}  # written argument -> the read one it was passed as too
        self.split_nodes: dict[str, list[torch.fx.Node]] = {}  # written argument -> the nodes its split added
        for user in node.users:
            if user.target is not operator.getitem:
                raise Refused(f"{user.name} uses the launch's result as a whole")
            self.getitems[self.written[user.args[1]]] = user
        self.grouped = {n for group in parse_shared_memory(node.kwargs.get("shared_memory")) for n in group}
        self.inputs = {_compat.storage_identity(node_value(p)): p for p in graph.find_nodes(op="placeholder")
                       if isinstance(node_value(p), torch.Tensor)}
        self.descendants = self._descendants(node)
        tensors = [v for v in self.vals.values() if isinstance(v, torch.Tensor)]
        self.device = max((t.device for t in tensors), key=lambda d: d.type != "cpu")
        compiled = _compat_inductor.triton_compiles_for(self.device) and not interpreted
        self.target = "gpu" if compiled else "interpreter"

    @staticmethod
    def _descendants(node: torch.fx.Node) -> set[torch.fx.Node]:
        seen, stack = set(), [node]
        while stack:
            for user in stack.pop().users:
                if user not in seen:
                    seen.add(user)
                    stack.append(user)
        return seen

    def _operand_nodes(self, region: list[torch.fx.Node], inside: set[torch.fx.Node]) -> list[torch.fx.Node]:
        operands: list[torch.fx.Node] = []
        for member in region:
            for arg in [*member.args, *member.kwargs.values()]:
                for value in arg if isinstance(arg, (list, tuple)) else [arg]:
                    if isinstance(value, torch.fx.Node) and value not in inside and value not in operands:
                        if not isinstance(node_value(value), torch.Tensor):
                            raise Refused(f"{member.name} takes {value.name}, a symbolic scalar")
                        if node_value(value).device != self.device:
                            raise Refused(f"operand {value.name} is on {node_value(value).device}")
                        operands.append(value)
        return operands

    def _grown(self, members: set[torch.fx.Node], sink: torch.fx.Node, excluded: Any = frozenset(),
               passthrough: Any = frozenset()) -> tuple[set[torch.fx.Node], list[torch.fx.Node],
                                                        list[torch.fx.Node], dict[torch.fx.Node, torch.Tensor]]:
        """`members` grown by the ops computing their private inputs (_with_private_inputs); the
        region (graph order, without `passthrough`), its operands and the values of those read
        through views (see [Note: Views inside a fused region]). Where two uses see one value
        through different views, the region stops at the views."""
        for through_views in (True, False):
            grown = _with_private_inputs(members, excluded, through_views)
            region = sorted((n for n in grown if n not in passthrough), key=self.order.__getitem__)
            operands = self._operand_nodes(region, grown)
            try:
                return grown, region, operands, relabeled_operands(region, lane_views(region, sink), operands)
            except ViewsRefused as e:
                log.debug("launch %s: %s; the region stops at its views", self.node.name, e)
        raise AssertionError("unreachable: a region without views has no views to disagree on")

    # -- epilogues ------------------------------------------------------------------------
    def epilogue(self, name: str, accessed: Any) -> Candidate:
        """The region (graph order, without the getitem), its sink and operands, for written `name`."""
        if name in self.grouped:
            raise Refused("it shares memory with other arguments")
        ops = set(accessed.write_ops.get(name, ()))
        if ops != {"tt.store"}:
            raise Refused(f"the kernel writes it with {sorted(ops) or 'unknown ops'}, not only tl.store")
        if name in accessed.reads:
            raise Refused("the kernel also reads it")
        if not fresh_buffer(self.kwargs[name]):
            raise Refused("its buffer is not a fresh torch.empty, so elements the kernel does not write "
                           "would keep values that never went through the epilogue")
        if name in self._autotuner_resets():
            raise Refused("the autotuner resets it (reset_to_zero / restore_value), so elements the kernel does not "
                           "write hold values the unfused epilogue computes on")
        getitem = self.getitems.get(name)
        if getitem is None or not _data_users(getitem):
            raise Refused("its result is not used")
        # Size queries of the getitem and its views are answered by the fused result's.
        root, views = getitem, []
        while len(_data_users(root)) == 1 and _memory_keeping_view(next(iter(_data_users(root)))):
            root = next(iter(_data_users(root)))
            views.append(root)
        passthrough = {getitem, *views}  # their size queries move to the fused result
        inside = set(passthrough)
        region: list[torch.fx.Node] = []
        for candidate in sorted(self.descendants, key=self.order.__getitem__):
            if self.order[candidate] <= self.order[root] or len(region) >= _MAX_REGION:
                continue
            inputs = [a for a in candidate.all_input_nodes if a in self.descendants]
            if is_pointwise(candidate) and inputs and all(a in inside for a in inputs):
                region.append(candidate)
                inside.add(candidate)
        # The largest sink whose ancestors in the region are used only inside it.
        for sink in reversed(region):
            members = self._ancestors_within(sink, inside) | {sink}
            if getitem in members and all((_data_users(m) if m in passthrough else set(m.users)) <= members
                                          for m in members if m is not sink):
                break
        else:
            raise Refused(f"{', '.join(sorted(u.name for u in _data_users(root)))} is not a pointwise op the fusion "
                           "translates, or the result is used elsewhere too")
        # The pointwise ops behind its operands that nothing else uses are computed where the
        # epilogue uses them, as inductor computes them inside its own kernel for it
        # (`out * w.to(out.dtype)`); not those reading the launch's other outputs.
        grown, chosen, operands, relabeled = self._grown(members, sink, excluded=self.descendants,
                                                         passthrough=passthrough)
        producers, members = grown - members, grown
        # See [Note: Elements a kernel may leave unwritten]: unless the kernel provably stores
        # every element ([Note: A proof that a kernel stores every element]; tried only where
        # needed, for it evaluates the kernel's addresses).
        absorbed = absorbed_value(chosen, passthrough)
        if absorbed and self._unstored(name):
            raise Refused(f"{absorbed} (no proof that it stores every element: {self._unstored(name)})")
        out, result = node_value(root), node_value(sink)
        if not _same_layout(result, out):
            raise Refused(f"the epilogue's result {sink.name} has another shape or layout than the written tensor")
        self._check_boundary(operands, sink)
        if producers:  # computed in the fused kernel, so from what memory holds at the launch
            self._check_not_written(operands)
        self._hoist([o for o in operands if self.order[o] > self.order[self.node]])
        start = min([self.order[self.node], *(self.order[p] for p in producers)])
        between = [n for n in self.graph.nodes if start < self.order[n] < self.order[sink] and n not in members
                   and n is not self.node]
        _check_no_writes(between, operands, "between the launch and the epilogue")
        self._check_inputs_apart(operands, between)
        ignored = None if absorbed else ignored_value(chosen, passthrough)  # last: it runs the region on CPU
        if ignored and self._unstored(name):
            raise Refused(f"{ignored} (no proof that it stores every element: {self._unstored(name)})")
        self.views[name], self.value[name] = views, root
        return Candidate("epilogue", chosen, sink, operands, operand_values=relabeled)

    # -- outputs written over an input ----------------------------------------------------
    def split_outputs_over_inputs(self, accessed: Any) -> tuple[dict[str, str], dict[str, str]]:
        """Per shared_memory pair (one tensor passed as an argument the kernel reads and as one
        it stores to) that may be split, the written argument given a fresh buffer of its
        layout: {written: read}; and per pair that may not, why.
        See [Note: An output written over the kernel's own input]."""
        split: dict[str, str] = {}
        refused: dict[str, str] = {}
        for group in parse_shared_memory(self.node.kwargs.get("shared_memory")):
            writes = [n for n in group if n in accessed.writes]
            reads = [n for n in group if n not in accessed.writes]
            if len(group) != 2 or len(writes) != 1 or len(reads) != 1:
                continue
            (written,), (read,) = writes, reads
            value, twin = self.kwargs[read], self.kwargs[written]
            if not isinstance(value, torch.fx.Node) or not (twin is value or _same_view(twin, value)):
                continue  # overlapping views: not the same elements through both
            if written in accessed.reads or set(accessed.write_ops.get(written, ())) != {"tt.store"} \
                    or set(accessed.read_ops.get(read, ())) != {"tt.load"}:
                continue
            if written not in self.getitems or ({written, read} & self._autotuner_resets()):
                continue
            node = self.node
            reason = read_after_store_reason(
                node.kwargs["kernel"], self.vals, node.kwargs["constant_args"],
                kernel_side_table.get_configs(node.kwargs["configs"]), list(node.kwargs["grids"]), written, read)
            if reason:
                refused[written] = (f"the kernel writes it over {read} (one tensor), and no proof that it loads each "
                                    f"element before storing to it: {reason}")
                continue
            try:  # the new buffer's symbolic sizes, computed from the graph's inputs
                self.sizes.check_layout(node_value(value))
            except NotFusible as e:
                refused[written] = f"the kernel writes it over {read} (one tensor), and its new buffer's size: {e}"
                continue
            if twin is not value:  # the same view computed twice: the launch takes the first twice
                node.update_kwarg("kwargs", {**node.kwargs["kwargs"], written: value})
                if not twin.users:
                    self.graph.erase_node(twin)
            old = node_value(value)
            with self.graph.inserting_before(node):
                buffer = self.graph.call_function(aten.empty_strided.default, self.sizes.layout(old),
                                                  {"dtype": old.dtype, "device": old.device})
            buffer.meta["val"] = old.new_empty_strided(old.size(), old.stride())
            # The buffer and the nodes computing its symbolic sizes, right before the launch.
            added, previous = [], node.prev
            while previous not in self.order:
                added.append(previous)
                self.order[previous] = self.order[node] - 0.5
                previous = previous.prev
            self.split_nodes[written] = added
            self.kwargs[written], self.vals[written] = buffer, buffer.meta["val"]
            self.grouped -= {written, read}
            split[written] = read
        self.split.update(split)
        return split, refused

    def join_again(self, written: str, read: str) -> None:
        """Undo split_outputs_over_inputs for one pair (nothing fused on either side)."""
        self.kwargs[written], self.vals[written] = self.kwargs[read], self.vals[read]
        self.grouped |= {written, read}
        del self.split[written]
        for added in self.split_nodes.pop(written):  # the buffer, then the nodes of its sizes
            self.graph.erase_node(added)
            del self.order[added]

    def _unstored(self, name: str) -> str | None:
        """Why the launch may leave elements of written `name` unstored; None where it provably
        stores every one."""
        if name not in self.unstored:
            node = self.node
            self.unstored[name] = unstored_reason(
                node.kwargs["kernel"], self.vals, node.kwargs["constant_args"],
                kernel_side_table.get_configs(node.kwargs["configs"]), list(node.kwargs["grids"]), name)
        return self.unstored[name]

    def reloaded(self, name: str) -> str | None:
        """Why the launch may load an element of `name` more than once; None where it provably
        loads each at most once."""
        node = self.node
        return reloaded_reason(node.kwargs["kernel"], self.vals, node.kwargs["constant_args"],
                               kernel_side_table.get_configs(node.kwargs["configs"]), list(node.kwargs["grids"]), name)

    def _autotuner_resets(self) -> set[str]:
        """The arguments the kernel's autotuners zero or restore around their runs."""
        names: set[str] = set()
        for layer in kernel_layers(kernel_side_table.get_kernel(self.node.kwargs["kernel"])):
            if isinstance(layer, _compat.Autotuner):
                options = _compat.autotuner_options(layer)
                names.update((options.get("reset_to_zero") or []) + (options.get("restore_value") or []))
        return names

    def _check_inputs_apart(self, reads: list[torch.fx.Node], writers: list[torch.fx.Node]) -> None:
        """Refuses where the fused code would read a graph input at another time, relative to
        a write into another graph input (by the launch or by `writers`), than the program.

        # [Note: Graph inputs that may share memory]
        # TL;DR: two graph inputs may be views of one tensor when the compiled code runs,
        # though they were apart when it compiled: torch.compile does not guard on that (an
        # adversarial hunt, twelfth session: x and b = x[:] passed on a second call). An
        # epilogue reads its operands inside the kernel, before the kernel's later stores,
        # where the program reads them after the launch; an operand moved before the launch
        # reads before it too. Where the launch (or a node the read moves past) writes one
        # graph input in place and such a read is of another, it may see other values than
        # the program's, even at the same element (b = x[:]). Those are not fused.
        # Prologues are: the fused load of z reads the element the program's z * 2 read,
        # unless z and the written x overlap at other elements (base[8:] and base[:16]),
        # which inductor's own fused loops assume never happens (`x.add_(z * 2)` compiles to
        # one loop that reads z where x was written), so the fusion keeps inductor's result.
        # Inductor assumes graph inputs share no memory unless they did when it compiled, and
        # orders writes to one with no edge to reads of another: plain `y = z * 2;
        # x.add_(1); return y` returns the new x doubled for z = x[:], and so does a prologue
        # against another node's write; refusing that would refuse prologues graph-wide.
        """
        written = {_compat.storage_identity(self.vals[n]) for n in self.written} & set(self.inputs)
        for writer in writers:
            storages = _writes(writer)
            written |= set(self.inputs) if storages is None else set(storages) & set(self.inputs)
        for read in reads:
            storage = _compat.storage_identity(node_value(read)) if isinstance(node_value(read), torch.Tensor) else None
            others = written - {storage}
            if storage in self.inputs and others:
                raise Refused(f"it reads graph input {self.inputs[storage].name} while graph input "
                               f"{self.inputs[min(others)].name} is written in place: the two may share memory when "
                               "the compiled code runs, and the fused code would read it while the kernel writes (see "
                               "[Note: Graph inputs that may share memory])")

    def _check_boundary(self, operands: list[torch.fx.Node], result: torch.fx.Node | None) -> None:
        """The values the fused code reads from memory, and an epilogue's result, which it
        stores, cross memory exactly (see [Note: Values at a fused region's boundary])."""
        crossings = [(o, "operand") for o in operands] + ([(result, "result")] if result is not None else [])
        for value, role in crossings:
            reason = boundary_difference(value, role, self.target)
            if reason:
                raise Refused(reason)

    def _hoist(self, late: list[torch.fx.Node]) -> None:
        """Move operands computed after the launch, with the nodes they need, before it: the
        same values, as nothing they read is written in between (moved or not: a launch
        already written in place writes a buffer that a moved node reads with no graph edge
        to it) and none of them writes memory or draws random numbers. (None depends on the
        launch: the region takes every pointwise op whose inputs from the launch are all
        inside it, so an operand never is.)"""
        start = self.order[self.node]
        needed: set[torch.fx.Node] = set()
        stack = list(late)
        while stack:
            n = stack.pop()
            if n in needed:
                continue
            if n.op == "get_attr":  # a constant of the graph (`torch.tensor([...])` in the program)
                needed.add(n)
                continue
            if n.op != "call_function" or _writes(n) != [] or torch.Tag.nondeterministic_seeded in getattr(
                    n.target, "tags", ()):
                raise Refused(f"operand {late[0].name} is computed after the launch by {n.name}, which cannot move "
                               "before it")
            needed.add(n)
            stack.extend(a for a in n.all_input_nodes if self.order[a] > start)
        if not needed:
            return
        moved = sorted(needed, key=self.order.__getitem__)
        between = [n for n in self.graph.nodes if start < self.order[n] < self.order[moved[-1]] and n not in needed]
        inputs = [a for n in moved for a in n.all_input_nodes]
        _check_no_writes(between, inputs, "between the launch and an operand computed after it")
        self._check_inputs_apart(inputs, between)
        for n in moved:
            self.node.prepend(n)
        self.order = {n: i for i, n in enumerate(self.graph.nodes)}
        log.debug("launch %s: moved %s before it, to fuse them as operands", self.node.name, [n.name for n in moved])

    def _check_not_written(self, operands: list[torch.fx.Node]) -> None:
        """Refuses operands in memory the kernel writes: the fused code reads them inside it."""
        written = {_compat.storage_identity(self.vals[w]): w for w in self.written}
        for operand in operands:
            shared = written.get(_compat.storage_identity(node_value(operand)))
            if shared is not None:
                raise Refused(f"operand {operand.name} shares memory with {shared}, which the kernel writes")

    @staticmethod
    def _ancestors_within(node: torch.fx.Node, inside: set[torch.fx.Node]) -> set[torch.fx.Node]:
        seen, stack = set(), [node]
        while stack:
            for arg in stack.pop().all_input_nodes:
                if arg in inside and arg not in seen:
                    seen.add(arg)
                    stack.append(arg)
        return seen

    # -- prologues ------------------------------------------------------------------------
    def prologue(self, name: str, accessed: Any) -> Candidate:
        if name in self.grouped:
            raise Refused("it shares memory with other arguments")
        ops = set(accessed.read_ops.get(name, ()))
        if ops != {"tt.load"}:
            raise Refused(f"the kernel reads it with {sorted(ops) or 'unknown ops'}, not only tl.load")
        argument, views = self.kwargs[name], []
        sink = argument
        while _memory_keeping_view(sink):
            views.insert(0, sink)
            sink = sink.args[0]
        if not isinstance(sink, torch.fx.Node) or not is_pointwise(sink):
            raise Refused("it is not computed by a pointwise op the fusion translates")
        if sum(v is argument for v in self.kwargs.values()) != 1:
            raise Refused(f"{argument.name} is passed as another argument too")
        if name in self._autotuner_resets():
            raise Refused("the autotuner resets it (reset_to_zero / restore_value): fused, the operand the launch "
                           "takes in its place, a tensor of the program, would be reset")
        others: dict[torch.fx.Node, torch.fx.Node] = {}
        for node, user in zip([sink, *views], [*views, self.node]):
            if user not in _data_users(node):
                raise Refused(f"{node.name} is used elsewhere too")
            others.update({other: node for other in _data_users(node) - {user}})
            for query in metadata_users(node):  # rebuilt from the graph's inputs when it goes
                self.sizes.check(query)
        if others:  # See [Note: A prologue the fused kernel also stores]
            early = [o.name for o in others if self.order[o] <= self.order[self.node]]
            if early:
                raise Refused(f"{sink.name} is used elsewhere too, by {', '.join(early)} before the launch")
            self.sizes.check_layout(node_value(sink))  # of the buffer it is stored to
        members, region, operands, relabeled = self._grown({sink}, sink)
        self._check_boundary(operands, None)
        if not any(node_value(o).dim() > 0 or node_value(o).numel() > 0 for o in operands):
            raise Refused("the prologue reads no tensor")
        # The program computes the prologue before the kernel writes; fused, the kernel would
        # read while it writes (or write a copy, losing what it stores between a strided view's
        # elements: an adversarial hunt, thirteenth session).
        self._check_not_written(operands)
        between = [n for n in self.graph.nodes if self.order[region[0]] < self.order[n] < self.order[self.node]
                   and n not in members]
        _check_no_writes(between, operands, "between the prologue and the launch")
        self.views[name], self.value[name] = views, sink
        return Candidate("prologue", region, sink, operands, others, relabeled)


def _with_private_inputs(members: set[torch.fx.Node], excluded: Any = frozenset(),
                         through_views: bool = True) -> set[torch.fx.Node]:
    """`members` and, transitively, the pointwise ops (not in `excluded`) computing their inputs
    whose every user is a member, also where a permute / squeeze / unsqueeze stands between
    (`through_views`; see [Note: Views inside a fused region]): ops a fused region may compute
    itself, up to _MAX_REGION."""
    grown = set(members)
    changed = True
    while changed and len(grown) < _MAX_REGION:
        changed = False
        for member in list(grown):
            for arg in member.all_input_nodes:
                if arg in grown:
                    continue
                views = view_chain_above(arg, grown) if through_views else []
                computed = views[-1].args[0] if views else arg
                if (computed not in grown and computed not in excluded and is_pointwise(computed)
                        and set(computed.users) <= (set(views[-1:]) if views else grown)):
                    grown.update([*views, computed])
                    changed = True
    return grown


def fresh_buffer(node: Any) -> list[torch.fx.Node]:
    """[the torch.empty call, the view relabeling its elements, if any] that `node` is; [] if it
    is not a fresh buffer."""
    if not isinstance(node, torch.fx.Node):
        return []
    if node.target in _EMPTY:
        return [node]
    base = node.args[0] if node.target in _RELABELING_VIEWS and node.args else None
    if isinstance(base, torch.fx.Node) and base.target in _EMPTY and set(base.users) == {node}:
        return [base, node]  # each of these views keeps every element (the same numel)
    return []
