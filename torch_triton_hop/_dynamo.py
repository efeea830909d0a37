"""Dynamo integration: torch.compile and strict torch.export capture wrapped kernels.

# [Note: How Dynamo meets a wrapped kernel]
# TL;DR: under Dynamo, ``wrapper[grid]`` returns ``partial(dynamo_entry, wrapper, grid)``
# and ``wrapper.run`` calls ``dynamo_entry`` directly. ``dynamo_entry`` is a marker
# HigherOrderOperator: Dynamo hands calls of it to ``_EntryVariable`` (registered
# below), which runs the shared TritonHOPifier orchestration with Dynamo's values and
# writes one ``user_triton_kernel_mutation`` node into the Dynamo graph. AOTAutograd
# then functionalizes it with the rules in _hops.py, like any make_fx trace.
# Context: Dynamo would otherwise inline our Python and triton's autotuner, and
# graph-break inside triton. Grid lambdas and heuristics are traced by Dynamo (they build
# SymInt expressions, and what they read guards the code); a function Dynamo cannot trace
# (pruning functions: their configs) runs on example values (fake tensors, SymInts, whose
# use adds shape guards), as in make_fx. See [Note: What the compiled code is guarded on].
# A wrapper made inside the compiled code (torch.library.wrap_triton's documented pattern,
# `wrap_triton(kernel)[grid](...)` in the compiled function) is a new object Dynamo tracks:
# _entry_call_function reads its kernel from Dynamo's variables and makes a wrapper of its
# own outside the trace, which checks the kernel. Where has_triton() holds (a GPU), Dynamo
# holds a raw JITFunction / Autotuner as its TritonKernelVariable, which has no Python
# attributes: TritonKernelWrapper.__init__ must not look at the kernel while Dynamo traces it
# (issue 24; _compat_dynamo.raw_kernels_as_on_a_gpu reproduces that on CPU).
# Where Dynamo gives up on a frame ("falling back to eager"), the frame runs as Python but
# each function it calls is a new frame Dynamo tries to compile: the eager launch
# (`_first_launch`, the generated fast launch) is marked never to be compiled, with all it
# calls, or Dynamo traced into triton (its interpreter raised InternalTorchDynamoError on a
# host TensorDescriptor made in the compiled function, on CPU).
"""

from __future__ import annotations

from typing import Any, Callable, NoReturn

import torch

from . import _compat, _compat_dynamo, _compat_inductor, config
from ._hopifier import GridKeyError, TritonHOPifier, grid_type_error, launching_kernel
from ._hops import (other_memory_error, tensors_accessed, triton_kernel_wrapper_functional,
                    triton_kernel_wrapper_mutation)
from ._package_digest import package_digest
from ._side_table import (TensorDescriptorSpec, base_kernel, kernel_key_name, kernel_layers, kernel_side_table,
                          module_constants)
from .errors import KernelResolutionError, UnsupportedTritonKernelError, raise_unsupported

__all__ = ["dynamo_entry", "DynamoTritonHOPifier"]


class _DynamoEntry(_compat.HigherOrderOperator):
    """Marker that Dynamo recognises; called outside Dynamo it just runs the call."""

    def __init__(self) -> None:
        super().__init__("torch_triton_hop_dynamo_entry")

    def __call__(self, wrapper: Any, grid: Any, *args: Any, **kwargs: Any) -> Any:
        return wrapper[grid](*args, **kwargs)


dynamo_entry = _DynamoEntry()


# Where _entry_call_function refuses a launch without fullgraph, Dynamo breaks the graph and
# runs ``dynamo_entry(...)`` itself. That call must launch eagerly. Left to Dynamo, its frames
# were compiled again: ``wrapper[grid]`` saw Dynamo compiling, gave ``dynamo_entry`` back, and
# the refused launch recursed until Python's limit (a RecursionError instead of the graph break).
_compat_dynamo.never_compiled(_DynamoEntry.__call__)


def _described(value: Any) -> Any:
    """A VariableTracker as the user's value where it has one (for messages), else itself."""
    try:
        value = _example_value(value)
    except Exception:  # noqa: BLE001  (only a message's value)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_described(v) for v in value)
    return value


def _example_value(value: Any) -> Any:
    """A VariableTracker as a plain value: constants, fake tensors, SymInts; recursively."""
    vt = _compat.dynamo_variables()
    if isinstance(value, dict):
        return {k: _example_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_example_value(v) for v in value)
    if not isinstance(value, vt.VariableTracker):
        return value
    if value.is_python_constant():
        return value.as_python_constant()
    if isinstance(value, vt.SymNodeVariable):
        return value.sym_num
    if isinstance(value, vt.TensorVariable):
        return value.as_proxy().node.meta["example_value"]
    if isinstance(value, vt.BaseListVariable):
        return type(value.python_type()())(_example_value(v) for v in value.items)
    if isinstance(value, vt.UserDefinedObjectVariable):  # a triton.Config a pruning function returned
        return value.value
    return value.as_python_constant()  # raises a clear NotImplementedError for anything else


class DynamoTritonHOPifier(TritonHOPifier):
    """The HOPifier for Dynamo: values are VariableTrackers of the frame being compiled."""

    def __init__(self, tx: Any) -> None:
        self.tx = tx

    def raise_unsupported(self, what: str, got: Any = None, *, fix: str = "", why: str = "") -> NoReturn:
        _refuse(what, _described(got), fix=fix, why=why)

    def _build(self, value: Any) -> Any:
        vt = _compat.dynamo_variables()
        if isinstance(value, vt.VariableTracker):
            return value
        if isinstance(value, dict):
            return vt.ConstDictVariable({self._build(k): self._build(v) for k, v in value.items()}, dict)
        return vt.VariableTracker.build(self.tx, value)

    def is_callable(self, value: Any) -> bool:
        vt = _compat.dynamo_variables()
        if isinstance(value, vt.VariableTracker):
            return isinstance(
                value,
                (vt.UserFunctionVariable, vt.NestedUserFunctionVariable, vt.UserMethodVariable,
                 vt.FunctoolsPartialVariable),
            ) or isinstance(value, vt.UserDefinedObjectVariable) and callable(value.value)  # a bound method, an
        return callable(value)                                                              # object with __call__

    def python_function_of(self, grid: Any) -> Any:
        vt = _compat.dynamo_variables()
        if not isinstance(grid, vt.VariableTracker):
            return grid
        # A plain function defined outside the compiled code (a method's .fn takes self too).
        if isinstance(grid, vt.UserFunctionVariable) and not isinstance(grid, vt.UserMethodVariable):
            return grid.fn
        return None

    def call_grid(self, grid: Any, meta: dict[str, Any]) -> Any:
        if not isinstance(grid, _compat.dynamo_variables().VariableTracker):
            return grid(_example_value(meta))
        try:
            return grid.call_function(self.tx, [self._build(meta)], {})
        except _compat_dynamo.observed_key_error() as e:
            # meta["N"] of a name the launch lacks: a KeyError, which _grid explains. torch
            # 2.11 gives a message ("Dict key lookup failed for ...") where 2.13 gives the key.
            key = _compat_dynamo.observed_exception_argument(e)
            if isinstance(key, str) and key.isidentifier():
                if key in meta:
                    raise
                raise GridKeyError(key) from None
            raise GridKeyError(None) from None

    def call_user_defined_fn(self, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
        # Traced by Dynamo, as torch's own front end does, so that what a heuristic or pruning
        # function reads besides its arguments (a global flag) guards the compiled code. One
        # Dynamo cannot trace, or that raises, runs on the example values instead: unguarded,
        # or raising the user's own exception. See [Note: What the compiled code is guarded on].
        try:
            return self._build(fn).call_function(
                self.tx, [self._build(a) for a in args], {k: self._build(v) for k, v in kwargs.items()})
        except _compat_dynamo.untraceable_errors():
            pass
        try:
            return fn(*_example_value(list(args)), **_example_value(kwargs))
        except Exception as e:  # noqa: BLE001: the user's function, on values it may not expect
            message = str(e).strip().splitlines()
            self.raise_unsupported(
                f"{getattr(fn, '__qualname__', type(fn).__name__)}, a heuristic or pruning function of the kernel, "
                f"raised {type(e).__name__}{': ' + message[0][:200] if message else ''}",
                why="Under torch.compile it runs once, when the launch is captured, on the call's arguments as fake "
                    "tensors and symbolic sizes: they have no data and no data pointers",
                fix="Read only sizes, strides, dtypes and Python values in it, or launch the kernel outside the "
                    "compiled code")

    def as_python_constant(self, value: Any, what: str) -> Any:
        value = _example_value(value)
        if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            value = _compat.guard_scalar(value)
        return value

    def check_grid(self, grid: Any) -> tuple[Any, ...]:
        vt = _compat.dynamo_variables()
        if isinstance(grid, vt.BaseListVariable):
            grid = grid.items
        if not isinstance(grid, (list, tuple)):
            self.raise_unsupported(**grid_type_error(launching_kernel(), grid))
        items = []
        for item in grid:
            if isinstance(item, vt.VariableTracker) and item.is_python_constant():
                item = item.as_python_constant()
            if not isinstance(item, (int, vt.SymNodeVariable)):
                self.raise_unsupported(**grid_type_error(launching_kernel(), list(grid)))
            items.append(item)
        return tuple(items)

    def grid_value(self, size: Any) -> Any:
        return size.sym_num if isinstance(size, _compat.dynamo_variables().SymNodeVariable) else size

    def specialize_symbolic(self, value: Any) -> Any:
        vt = _compat.dynamo_variables()
        if isinstance(value, vt.SymNodeVariable):
            return _compat.guard_scalar(value.sym_num)
        return value

    def is_graphable(self, value: Any) -> bool:
        vt = _compat.dynamo_variables()
        if isinstance(value, vt.VariableTracker):
            if value.is_python_constant():
                return isinstance(value.as_python_constant(), (bool, int, float))
            return isinstance(value, (vt.TensorVariable, vt.SymNodeVariable))
        return isinstance(value, (bool, int, float))

    def constant_value(self, value: Any) -> Any:
        return _example_value(value)

    def is_none(self, value: Any) -> bool:
        vt = _compat.dynamo_variables()
        if isinstance(value, vt.VariableTracker):
            return value.is_python_constant() and value.as_python_constant() is None
        return value is None

    def is_tensor(self, value: Any) -> bool:
        vt = _compat.dynamo_variables()
        return isinstance(value, vt.TensorVariable) or isinstance(value, torch.Tensor)

    def numpy_type(self, value: Any) -> str | None:
        # Dynamo traces numpy values (np.int64(n), arrays) as tensors of its own kind.
        vt = _compat.dynamo_variables()
        if isinstance(value, vt.NumpyNdarrayVariable):
            return "numpy value"
        if isinstance(value, vt.VariableTracker):
            return super().numpy_type(value.as_python_constant()) if value.is_python_constant() else None
        return super().numpy_type(value)

    def is_host_tensor_descriptor(self, value: Any) -> bool:
        # vars() of the realized variable, not getattr: on a list or tuple variable `.value` is a
        # property that fails when an item is a tensor (a tuple argument); a wrapped object is an
        # attribute.
        if isinstance(value, _compat.dynamo_variables().VariableTracker):
            value = value.realize()
            return _compat.is_dynamo_tensor_descriptor(value) or _compat.is_host_tensor_descriptor(
                vars(value).get("value"))
        return _compat.is_host_tensor_descriptor(value)

    def split_tensor_descriptor(self, value: Any, name: str, kernel_name: str) -> Any:
        parts = _compat.dynamo_tensor_descriptor_parts(value)
        if parts is None:
            self.raise_unsupported(
                f"argument {name!r} of kernel {kernel_name!r} is a host-side TMA descriptor that was not made "
                "by TensorDescriptor.from_tensor inside the compiled function (triton's experimental "
                "create_1d/2d_tma_descriptor, or a descriptor passed in from outside)",
                fix="Build it inside the compiled function with TensorDescriptor.from_tensor(tensor, block_shape)",
            )
        tensor, block_shape = parts
        block_shape = self.as_python_constant(block_shape, "block_shape")
        return tensor, TensorDescriptorSpec(tuple(int(b) for b in block_shape))

    def call_HOP(self, *, kernel: str, constant_args: str, configs: str, grids: list, kwargs: dict) -> Any:
        node_kwargs = {
            "kernel": kernel,
            "constant_args": constant_args,
            "configs": configs,
            "grids": [_graph_value(self.tx, g) for g in grids],
            "kwargs": {name: _graph_value(self.tx, v) for name, v in kwargs.items()},
        }
        self.tx.output.create_proxy("call_function", triton_kernel_wrapper_mutation, (), node_kwargs)
        _record_the_writes(self.tx, node_kwargs)
        return _compat.dynamo_variables().ConstantVariable.create(None)


# [Note: A launch inside torch.cond, while_loop, scan, map]
# TL;DR: a launch in the body of a control-flow operator that writes an input of the body is
# refused at capture, as Dynamo refuses `x.mul_(2)` there; the tensors a launch writes get
# their version counters bumped, as an in-place torch op's fake run bumps them.
# Context: torch's control-flow operators find the inputs a body writes from the schemas of
# the torch ops in it. A launch is a higher-order op without a schema, so a kernel writing a
# branch input was taken as pure, and torch.compile dropped the write: the input kept its old
# values, a silent wrong result (torch's own mutation HOP has no schema either). Dynamo checks the fake
# inputs' version counters when it has traced a body, and refuses writes where grad is on;
# where it allows them (torch.cond, while_loop under no_grad) the operator's functionalization
# still cannot see ours. So we refuse them ourselves, naming the kernel and the argument; and
# a nested compile region's body where torch 2.11 drops the write the same way (torch 2.13
# keeps it). The version bump reaches Dynamo's other readers too (a checkpointed region, an
# autograd.Function, which handle a launch's writes as they do an in-place op's).
def _record_the_writes(tx: Any, node_kwargs: dict[str, Any]) -> None:
    example_kwargs = {name: _fx_example_value(value) for name, value in node_kwargs["kwargs"].items()}
    accessed = tensors_accessed(node_kwargs["kernel"], node_kwargs["constant_args"], node_kwargs["configs"],
                                example_kwargs)
    if error := other_memory_error(node_kwargs["kernel"], accessed):  # without fullgraph=True: a graph
        _refuse(**error)                                                # break, the launch runs eagerly
    written = accessed.writes
    bodies = [(call, inputs) for op, inputs in _compat_dynamo.enclosing_bodies(tx)
              if (call := _control_flow_call(op)) is not None]
    for name in written:
        tensor = example_kwargs[name]
        if not isinstance(tensor, torch.Tensor):
            continue
        versions = [[t._version for t in inputs] for _, inputs in bodies]
        torch.autograd.graph.increment_version([tensor])
        for (call, inputs), before in zip(bodies, versions):
            if [t._version for t in inputs] != before:
                kernel_name = kernel_key_name(node_kwargs["kernel"]).rpartition(".")[2]
                nested_region = call == _CONTROL_FLOW["invoke_subgraph"]
                _refuse(f"a launch of {kernel_name} inside {call} writes its argument '{name}', an input of "
                        "the body (or a tensor from outside it)",
                        why=f"On torch {torch.__version__}, {call} finds what its body writes from torch ops' "
                            "schemas and would drop a kernel's write (torch 2.13 keeps it)" if nested_region else
                            f"{call} takes its body to be pure and would drop the write, so torch refuses an "
                            "in-place op there too",
                        fix="Write into a new tensor made in the body (torch.empty_like) and return it, "
                            "or launch the kernel outside" + (", or use torch 2.13" if nested_region else ""))


# torch's control-flow operators, whose bodies must not write their inputs, by the name of the
# operator in the graph: how the user calls each. A nested compile region too on torch 2.11:
# Dynamo records it as an invoke_subgraph, whose functionalization, like the control-flow
# operators', finds the writes from torch ops' schemas only. torch 2.13 keeps the write
# (its Dynamo inlines such a body).
_CONTROL_FLOW = {"cond": "torch.cond", "while_loop": "torch.while_loop", "while_loop_stack_output": "torch.while_loop",
                 "scan": "torch._higher_order_ops.scan", "map_impl": "torch._higher_order_ops.map",
                 "associative_scan": "torch._higher_order_ops.associative_scan",
                 "invoke_subgraph": "torch.compiler.nested_compile_region"}


def _control_flow_call(op: Any) -> str | None:
    """How the user called `op` (a body's operator, from Dynamo) if its body must not write its inputs."""
    name = getattr(op, "__name__", None)
    if name == "invoke_subgraph" and _compat_dynamo.nested_regions_keep_kernel_writes():
        return None
    if name in _CONTROL_FLOW and getattr(torch.ops.higher_order, name, None) is op:
        return _CONTROL_FLOW[name]
    return None


def _refuse(what: str, got: Any = None, *, fix: str = "", why: str = "") -> NoReturn:
    """raise_unsupported as Dynamo's own error, so the graph breaks (or fullgraph says why)."""
    try:
        raise_unsupported(what, got, fix=fix, why=why)
    except UnsupportedTritonKernelError as e:
        _compat.dynamo_unimplemented(gb_type="wrap_triton: unsupported kernel call", explanation=str(e))


def _fx_example_value(value: Any) -> Any:
    """A graph node argument (proxies and constants) as the values Dynamo traced it with."""
    if isinstance(value, torch.fx.Proxy):
        return value.node.meta["example_value"]
    if isinstance(value, (list, tuple)):
        return type(value)(_fx_example_value(v) for v in value)
    if isinstance(value, dict):
        return {k: _fx_example_value(v) for k, v in value.items()}
    return value


# [Note: What the compiled code is guarded on]
# The graph Dynamo records names the launched kernel by its side-table key, read from the
# wrapper at capture. Dynamo guards what it traces itself, but the wrapper reaches us as a
# Python object whose `kernel` we read directly, and Dynamo's own guard on it is on its type
# only: without guards of ours, rebinding a global wrapper, setting a module's kernel
# attribute, or passing another wrapper as an argument kept launching the first kernel (a
# silent wrong result). So the code is guarded on the wrapper's kernel (identity) and its
# settings (writes, interpreter_config), not on the wrapper object: a new wrapper of the same
# kernel with the same settings reuses the compiled code. A raw kernel Dynamo holds as a plain
# object (the interpreter, wrap_triton(kernel) in the compiled code) is guarded on its identity.
# What the autotune and heuristics layers decide with (the configs list and each config, the
# pruning and heuristic functions) is guarded by identity: replacing `kernel.configs` after a
# compile recompiles, as torch's path does (_guard_what_the_layers_choose_by).
# Heuristics and pruning functions are traced by Dynamo (call_user_defined_fn), which guards
# what they read besides the call's arguments; one it cannot trace runs unguarded, as before.


def _guard_what_the_layers_choose_by(vt: Any, path: tuple[str, ...], kernel: Any) -> None:
    """Guards what the @triton.autotune and @triton.heuristics layers of `kernel` (reached from
    `vt` by `path`) decide with: the configs list, each config, the pruning functions and the
    heuristic functions, each by identity (the capture read them; Dynamo guards none of them).
    What is changed inside one (a config's kwargs edited in place) is not seen."""
    for depth, layer in enumerate(kernel_layers(kernel)):
        at = (*path, *("fn",) * depth)  # each layer is the .fn of the one above
        if isinstance(layer, _compat.Autotuner):
            _compat_dynamo.guard_identity(vt, *at, "configs")
            _compat_dynamo.guard_length(vt, *at, "configs")
            for index in range(len(layer.configs)):
                _compat_dynamo.guard_identity(vt, *at, "configs", _compat_dynamo.Index(index))
            for name in ("early_config_prune", "perf_model"):
                _compat_dynamo.guard_identity(vt, *at, name)
        else:
            _compat_dynamo.guard_identity(vt, *at, "values")
            for name in layer.values:
                _compat_dynamo.guard_identity(vt, *at, "values", _compat_dynamo.Key(name))


def _wrapped_kernel(tx: Any, wrapper_vt: Any) -> tuple[Any, Any, Any]:
    """(kernel, writes, interpreter_config) of the wrapper Dynamo holds as wrapper_vt. A wrapper
    of a wrapper (``wrap_triton(already_wrapped)`` in the compiled code) gives the innermost
    kernel, with the settings of the outermost wrapper that sets them, as eager wrap_triton does."""
    wrapper = getattr(wrapper_vt, "value", None)
    if wrapper is not None and "kernel" in getattr(wrapper, "__dict__", {}):
        # A wrapper made outside the compiled code, read here as a Python object: the compiled
        # code launches this kernel, so it must hold only while the wrapper holds it.
        # See [Note: What the compiled code is guarded on].
        kernel, writes, interpreter_config = wrapper.kernel, wrapper.writes, wrapper.interpreter_config
        _compat_dynamo.guard_identity(wrapper_vt, "kernel")
        _guard_what_the_layers_choose_by(wrapper_vt, ("kernel",), kernel)
        _compat_dynamo.guard_constant(wrapper_vt, "writes")
        if isinstance(interpreter_config, dict):  # no equality guard for a dict: the wrapper itself
            _compat_dynamo.guard_identity(wrapper_vt)
        else:
            _compat_dynamo.guard_constant(wrapper_vt, "interpreter_config")
        kernel_vt = None
    else:  # made inside it: Dynamo holds its attributes
        kernel_vt = wrapper_vt.var_getattr(tx, "kernel").realize()
        # Dynamo guards a raw kernel it holds as its TritonKernelVariable (on a GPU) on its
        # identity, but one it holds as a plain object (the interpreter) only on its type.
        _compat_dynamo.guard_identity(kernel_vt)
        # Dynamo wraps JITFunctions in its own TritonKernelVariable (.kernel), others in .value.
        # vars(), not getattr: on a list or tuple variable `.value` is a property that fails when
        # an item is not a constant (wrap_triton([kernel])).
        kernel = vars(kernel_vt).get("kernel", vars(kernel_vt).get("value"))
        if kernel is None and kernel_vt.is_python_constant():  # a plain function, None: for the error
            kernel = kernel_vt.as_python_constant()
        elif kernel is None:  # a list, a tensor: no kernel
            _refuse_non_kernel(getattr(_python_type(kernel_vt), "__name__", type(kernel_vt).__name__))
        if _compat.is_triton_kernel(kernel):
            _guard_what_the_layers_choose_by(kernel_vt, (), kernel)
        writes = wrapper_vt.var_getattr(tx, "writes").as_python_constant()
        interpreter_config = wrapper_vt.var_getattr(tx, "interpreter_config").as_python_constant()
    from ._wrap import TritonKernelWrapper  # _wrap imports this module

    if kernel_vt is not None and not _compat.is_triton_kernel(kernel) and _python_type(kernel_vt) is TritonKernelWrapper:
        kernel, inner_writes, inner_config = _wrapped_kernel(tx, kernel_vt)  # made inside the compiled code too
    elif isinstance(kernel, TritonKernelWrapper):
        kernel, inner_writes, inner_config = kernel.kernel, kernel.writes, kernel.interpreter_config
    else:
        return kernel, writes, interpreter_config
    return (kernel, inner_writes if writes is None else writes,
            inner_config if interpreter_config is None else interpreter_config)


def _python_type(vt: Any) -> Any:
    try:
        return vt.python_type()
    except NotImplementedError:
        return None


def _refuse_non_kernel(type_name: str) -> NoReturn:
    _compat.dynamo_unimplemented(
        gb_type="wrap_triton: unsupported kernel call",
        explanation=f"wrap_triton: expected a @triton.jit kernel, optionally under @triton.autotune / "
        f"@triton.heuristics (got {type_name!r}). Decorate the function with @triton.jit first.",
    )


def _entry_call_function(tx: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    wrapper_vt, grid_vt, *kernel_args = args
    kernel, writes, interpreter_config = _wrapped_kernel(tx, wrapper_vt)
    if not _compat.is_triton_kernel(kernel):
        _refuse_non_kernel(type(kernel).__name__)
    from ._wrap import wrap_triton  # _wrap imports this module

    wrapper = wrap_triton(kernel, writes=writes, interpreter_config=interpreter_config)
    if isinstance(grid_vt, _compat.dynamo_variables().ConstantVariable) and grid_vt.as_python_constant() is None:
        grid_vt = None  # kernel.run(...) without grid=, kernel[None]
    return DynamoTritonHOPifier(tx).call_triton_kernel(wrapper, grid_vt, tuple(kernel_args), dict(kwargs))


def _graph_value(tx: Any, value: Any) -> Any:
    """A VariableTracker from a graph node's arguments as an FX argument: proxies and constants."""
    vt = _compat.dynamo_variables()
    if isinstance(value, vt.ConstDictVariable):
        return {_graph_value(tx, k.vt if hasattr(k, "vt") else k): _graph_value(tx, v) for k, v in value.items.items()}
    if isinstance(value, vt.BaseListVariable):
        return [_graph_value(tx, v) for v in value.items]
    if isinstance(value, vt.VariableTracker):
        return value.as_python_constant() if value.is_python_constant() else value.as_proxy()
    return value


def _recorded_node_kwargs(tx: Any, hop: Any, args: list[Any], kwargs: dict[str, Any], names: set[str],
                          optional: set[str] = frozenset()) -> dict[str, Any]:
    if args or not names <= set(kwargs) <= names | optional:
        _compat.dynamo_unimplemented(
            gb_type="wrap_triton: unsupported kernel call",
            explanation=f"{hop.__name__} takes the keyword arguments {', '.join(sorted(names | optional))} only, as "
            "graphs record it",
        )
    node_kwargs = {name: _graph_value(tx, value) for name, value in kwargs.items()}
    kernel_side_table.get_kernel(node_kwargs["kernel"])  # resolve now: a clear error at capture
    kernel_side_table.get_configs(node_kwargs["configs"])
    return node_kwargs


_NODE_KWARGS = {"kernel", "constant_args", "configs", "grids", "kwargs"}


def _mutation_call_function(tx: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A graph that already holds the mutation HOP (``torch.compile(ep.module())``): keep the node."""
    node_kwargs = _recorded_node_kwargs(tx, triton_kernel_wrapper_mutation, args, kwargs, _NODE_KWARGS)
    tx.output.create_proxy("call_function", triton_kernel_wrapper_mutation, (), node_kwargs)
    _record_the_writes(tx, node_kwargs)
    return _compat.dynamo_variables().ConstantVariable.create(None)


def _functional_call_function(tx: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A graph that holds the functional HOP (``torch.compile(ep.run_decompositions().module())``):
    keep the node; its results are new tensors, as its fake rule makes them."""
    node_kwargs = _recorded_node_kwargs(tx, triton_kernel_wrapper_functional, args, kwargs,
                                        _NODE_KWARGS | {"tensors_to_clone"}, {"shared_memory"})
    proxy = tx.output.create_proxy("call_function", triton_kernel_wrapper_functional, (), node_kwargs)
    return _compat.dynamo_wrap_fx_proxy(tx, proxy)


# Registered when Dynamo's HOP table is imported (torch.compile / strict export import it
# before tracing), so importing this package does not import Dynamo.
def _register_with_dynamo() -> None:
    _compat.register_dynamo_hop_handler(dynamo_entry, _entry_call_function)
    _compat.register_dynamo_hop_handler(triton_kernel_wrapper_mutation, _mutation_call_function)
    _compat.register_dynamo_hop_handler(triton_kernel_wrapper_functional, _functional_call_function)


_compat.when_imported("torch._dynamo.variables.higher_order_ops", _register_with_dynamo)

# torch.compile's caches key graphs that hold our launches on this package's source too.
# See [Note: Compiled artifacts carry the package's digest].
_LAUNCHES = (triton_kernel_wrapper_mutation, triton_kernel_wrapper_functional)
_compat_inductor.add_to_graph_cache_keys("torch_triton_hop_source", _LAUNCHES, lambda gm: package_digest())
# ... and on the fusion switch, which changes what the same graph compiles to ...
_compat_inductor.add_to_graph_cache_keys("torch_triton_hop_fusion", _LAUNCHES, lambda gm: config.fusion)
# ... and on the saved tensors AOTAutograd donates to a backward, which the reinplacing pass
# writes in place (none under retain_graph). See [Note: Reinplacing functional launches].
_compat_inductor.add_to_graph_cache_keys("torch_triton_hop_donated", _LAUNCHES,
                                         lambda gm: _compat_inductor.donated_input_indices())


def _launched_module_constants(gm: torch.fx.GraphModule) -> list[str]:
    """... and on the module constants its kernels read. See [Note: Module constants of a kernel]."""
    keys = sorted({node.kwargs["kernel"] for module in gm.modules() if isinstance(module, torch.fx.GraphModule)
                   for target in _LAUNCHES for node in module.graph.find_nodes(op="call_function", target=target)})
    constants = []
    for key in keys:
        try:
            constants.append(f"{key} {module_constants(base_kernel(kernel_side_table.get_kernel(key)))}")
        except KernelResolutionError:  # compiling the graph says so, with the fix
            constants.append(f"{key} unresolved")
    return constants


_compat_inductor.add_to_graph_cache_keys("torch_triton_hop_module_constants", _LAUNCHES, _launched_module_constants)
