"""Rewrites a kernel's Python source so its stores of one argument apply an epilogue and its
loads of another compute a prologue (the source side of pointwise fusion, see _fusion).

# [Note: Element offsets by shadowing pointer arithmetic]
# TL;DR: every variable that holds a pointer derived from a fused argument gets a shadow
# variable computed by the same expression with the argument replaced by an integer zero;
# at a store (load) the shadow of the pointer is the element offset of each lane in the
# fused tensor, from which the epilogue (prologue) loads its other operands.
#   ptrs = out_ptr + row * stride + cols      ->  _tth_off_ptrs = _tth_zero() + row * stride + cols
#   tl.store(ptrs, acc, mask=m)               ->  tl.store(ptrs, _tth_epilogue(acc, _tth_off_ptrs, m, b_ptr), mask=m)
# Context: triton has no pointer difference and converting pointers to integers loses the
# contiguity the compiler needs to vectorise the operands' loads; the shadow is the
# kernel's own integer arithmetic, so it vectorises exactly as the original pointer does.
# Only what can be shadowed exactly is accepted: a fused argument (or a variable derived
# from it) may appear in +/- integer arithmetic, tl.where, shape ops (broadcast_to,
# reshape, view, expand_dims, permute, trans, indexing) and hints (multiple_of & co.,
# dropped from the shadow: they describe the pointer, not its offset), and be the pointer
# of a tl.store (epilogue) or tl.load (prologue). Anything else (a call of a helper
# function, a block pointer, an atomic, an attribute such as .dtype, a load of an epilogue
# argument) raises NotFusible with the line, and the launch is left unfused. Loads and stores
# of fused arguments inside a pointer expression (a gather's index) are rewritten before its
# shadow is taken, so the pointer and the shadow read the same values; a select between a
# fused argument's pointer and another argument's is refused (the other has no offset).

# [Note: Keeping the kernel's vector width]
# TL;DR: where a fused access moves narrower elements than the kernel's own (a bf16 store in
# place of an fp32 one) in a kernel that reduces, its offsets are capped at the original
# access's vector width, (off // W) * W + off % W, and the pointer is rebuilt from the
# argument and that offset, so triton lays the kernel out as before and sums in the same order.
# Context: triton gives each memory access a layout with up to 16 bytes per thread, which
# spreads to the values around it: a narrower store doubles the elements per thread, and
# the kernel's own row reduction then adds in another order (RMSNorm + residual + bf16 cast:
# 258 of 33.5M outputs 1 ulp off the unfused program on an H200). The expression is the
# identity, but the compiler's axis analysis sees at most W contiguous elements. Hints on
# the pointer that bound contiguity or constancy (max_contiguous, max_constancy) count
# elements and are kept on the offset; multiple_of on a pointer counts bytes and is dropped.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import textwrap
from typing import Any

import triton.language as tl

__all__ = ["NotFusible", "FusedArgument", "RewrittenKernel", "rewrite_kernel_source", "OFFSET_ZERO", "OFFSET_ZERO64",
           "VECTOR_LIMIT"]

# Helper functions the rewritten kernel calls for the shadows' zero (typed: a loop-carried
# shadow must keep one type), int32 or int64 (tensors of 2**31 elements or more).
OFFSET_ZERO = "_tth_zero"
OFFSET_ZERO64 = "_tth_zero64"
# Helper that caps the contiguity the compiler sees in offsets, see [Note: Keeping the kernel's vector width].
VECTOR_LIMIT = "_tth_limit_vector"


class NotFusible(Exception):
    """The kernel's use of an argument cannot be rewritten exactly; the message says where."""


@dataclasses.dataclass(frozen=True)
class FusedArgument:
    """One fused kernel argument: its epilogue (at stores) or prologue (at loads) helper.

    The helper is called as ``helper(value, offset, mask, *operands)`` at a store (it returns
    the value to store) and as ``helper(offset, mask, other, *operands)`` at a load (it
    returns the loaded value); `operands` are new kernel parameters.
    """

    name: str
    kind: str  # "epilogue" | "prologue"
    helper: str
    operands: tuple[str, ...]
    wide_offsets: bool = False  # int64 element offsets
    element_type: str | None = None  # triton dtype name the kernel sees as `arg.dtype.element_ty`
    # Elements per access the original kernel moves at most (16 bytes of its dtype), kept by
    # the fused accesses; None: no cap. See [Note: Keeping the kernel's vector width].
    vector_width: int | None = None


@dataclasses.dataclass(frozen=True)
class RewrittenKernel:
    source: str
    loads_in_loops: set[str]  # prologue arguments with a load inside a loop (elements may be re-read)
    calls_dot: bool  # the kernel calls tl.dot (a tiled, compute-bound main loop)


_SHAPE_OPS = ("broadcast_to", "reshape", "view", "expand_dims", "permute", "trans", "ravel")
_HINT_OPS = ("multiple_of", "max_contiguous", "max_constancy")
_ELEMENT_HINT_OPS = ("max_contiguous", "max_constancy")  # count elements: they hold for the offset too


def _resolve(node: ast.AST, scope: dict[str, Any]) -> Any:
    """The object a (possibly dotted) name refers to in the kernel's globals, or None."""
    if isinstance(node, ast.Name):
        return scope.get(node.id, getattr(builtins, node.id, None))
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, scope)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _data_access(node: ast.AST, scope: dict[str, Any]) -> bool:
    """A call whose result is data even when its arguments are pointers (a load, a store)."""
    return isinstance(node, ast.Call) and _resolve(node.func, scope) in (tl.load, tl.store)


def _element_type_of(node: ast.AST) -> str | None:
    """`x` for `x.dtype.element_ty` / `x.type.element_ty` (the type a pointer points to)."""
    if isinstance(node, ast.Attribute) and node.attr == "element_ty" and isinstance(node.value, ast.Attribute) \
            and node.value.attr in ("dtype", "type") and isinstance(node.value.value, ast.Name):
        return node.value.value.id
    return None


def _pointer_names(node: ast.AST, scope: dict[str, Any]) -> set[str]:
    """Names in `node` whose value may flow into its result (not into a load's result)."""
    if _data_access(node, scope) or _element_type_of(node) is not None:
        return set()
    if isinstance(node, ast.Name):
        return {node.id}
    return set().union(*(_pointer_names(child, scope) for child in ast.iter_child_nodes(node)))


class _Rewriter:
    def __init__(self, fn_def: ast.FunctionDef, scope: dict[str, Any], fused: dict[str, FusedArgument]) -> None:
        self.fn_def = fn_def
        self.scope = scope
        self.fused = fused
        self.root_of: dict[str, str] = {name: name for name in fused}  # variable -> fused argument
        self.rewritten: set[int] = set()  # ids of the rewritten stores and loads
        self.loop_depth = 0
        self.loads_in_loops: set[str] = set()
        self.language = next((name for name, value in scope.items() if value is tl), None)
        self.locals = {a.arg for a in fn_def.args.args} | {
            n.id for n in ast.walk(fn_def) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        self._find_derived()

    # -- which variables hold pointers derived from a fused argument ----------------------
    def _find_derived(self) -> None:
        assignments: list[tuple[str, ast.AST, int]] = []
        augmented: list[tuple[str, ast.AST, int]] = []
        for node in ast.walk(self.fn_def):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if node.value is None:
                    continue
                for target in targets:
                    if isinstance(target, ast.Name) and isinstance(node, ast.AugAssign):
                        augmented.append((target.id, node.value, node.lineno))  # p += n keeps p a pointer
                    elif isinstance(target, ast.Name):
                        assignments.append((target.id, node.value, node.lineno))
                    elif _names(target) & set(self.root_of) or _names(node.value) & set(self.root_of):
                        self._refuse(node, "is assigned by unpacking")
            elif isinstance(node, (ast.For, ast.comprehension)) and _names(node.iter) & set(self.fused):
                self._refuse(node, "is iterated over")
            elif isinstance(node, ast.NamedExpr):
                if _names(node.value) & set(self.root_of):
                    self._refuse(node, "is assigned with :=")
        changed = True
        while changed:  # to a fixpoint: a derived variable can derive further ones
            changed = False
            for target, value, line in assignments + augmented:
                roots = {self.root_of[n] for n in _pointer_names(value, self.scope) if n in self.root_of}
                if not roots:
                    continue
                if len(roots) > 1:
                    raise NotFusible(f"line {line}: {target} mixes pointers of {sorted(roots)}")
                (root,) = roots
                if self.root_of.get(target, root) != root:
                    raise NotFusible(f"line {line}: {target} holds pointers of two fused arguments")
                if target not in self.root_of:
                    self.root_of[target] = root
                    changed = True
        for target, value, line in assignments:  # a variable is a pointer everywhere or nowhere
            if target in self.root_of and not (_pointer_names(value, self.scope) & set(self.root_of)):
                raise NotFusible(f"line {line}: {target} holds a pointer of {self.root_of[target]} in some "
                                 "places and other values elsewhere")
        # An argument advanced in place (X_ptr += row * stride) has a shadow variable of its own.
        self.advanced = {target for target, _, _ in assignments + augmented if target in self.fused}
        self.saved_bases: set[str] = set()

    def _refuse(self, node: ast.AST, what: str) -> None:
        names = sorted(_names(node) & set(self.root_of))
        raise NotFusible(f"line {getattr(node, 'lineno', '?')}: {', '.join(names)} {what}")

    def _is_pointer(self, node: ast.AST) -> bool:
        return bool(_pointer_names(node, self.scope) & set(self.root_of))

    def _root(self, node: ast.AST) -> str:
        return self.root_of[next(n for n in sorted(_pointer_names(node, self.scope)) if n in self.root_of)]

    # -- shadows ---------------------------------------------------------------------------
    def base(self, argument: str) -> str:
        """The name holding the argument's pointer as passed (saved at entry if it is advanced)."""
        if argument in self.advanced:
            self.saved_bases.add(argument)
            return _base_name(argument)
        return argument

    def zero(self, argument: str) -> ast.expr:
        name = OFFSET_ZERO64 if self.fused[argument].wide_offsets else OFFSET_ZERO
        return ast.Call(func=ast.Name(name, ast.Load()), args=[], keywords=[])

    def shadow(self, node: ast.AST) -> ast.expr:
        """The element offset expression of pointer expression `node`."""
        if not self._is_pointer(node):
            return node  # integer data: the same in the shadow
        if isinstance(node, ast.Name):
            if node.id in self.fused and node.id not in self.advanced:
                return self.zero(node.id)
            return ast.Name(_shadow_name(node.id), ast.Load())
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            if isinstance(node.op, ast.Sub) and self._is_pointer(node.right):
                self._refuse(node, "is subtracted from")
            return ast.BinOp(self.shadow(node.left), node.op, self.shadow(node.right))
        if isinstance(node, ast.Subscript) and not self._is_pointer(node.slice):
            return ast.Subscript(self.shadow(node.value), node.slice, ast.Load())
        if isinstance(node, ast.IfExp) and not self._is_pointer(node.test):
            self._check_branches(node, [node.body, node.orelse])
            return ast.IfExp(node.test, self.shadow(node.body), self.shadow(node.orelse))
        if isinstance(node, ast.Call):
            fn = _resolve(node.func, self.scope)
            method = isinstance(node.func, ast.Attribute) and self._is_pointer(node.func.value)
            args = [node.func.value, *node.args] if method else list(node.args)
            name = node.func.attr if method else getattr(fn, "__name__", None)
            if method and fn is None and name in _SHAPE_OPS + ("broadcast_to",):
                fn = getattr(tl, name)
            keywords_pointer = any(self._is_pointer(k.value) for k in node.keywords)
            if fn is getattr(tl, "where", None) and len(args) == 3 and not self._is_pointer(args[0]) \
                    and not keywords_pointer:
                self._check_branches(node, args[1:])
                return _call(node.func, [args[0], self.shadow(args[1]), self.shadow(args[2])], node.keywords)
            if any(fn is getattr(tl, op, None) for op in _SHAPE_OPS) and args and not keywords_pointer \
                    and not any(self._is_pointer(a) for a in args[1:]):
                if method:
                    return _call(ast.Attribute(self.shadow(args[0]), node.func.attr, ast.Load()), args[1:],
                                 node.keywords)
                return _call(node.func, [self.shadow(args[0]), *args[1:]], node.keywords)
            if any(fn is getattr(tl, op, None) for op in _HINT_OPS) and args and not method:
                if any(fn is getattr(tl, op, None) for op in _ELEMENT_HINT_OPS) and not keywords_pointer \
                        and not any(self._is_pointer(a) for a in args[1:]):
                    return _call(node.func, [self.shadow(args[0]), *args[1:]], node.keywords)
                return self.shadow(args[0])
            self._refuse(node, f"is passed to {ast.unparse(node.func)}(), which the fusion cannot follow")
        self._refuse(node, f"is used in `{ast.unparse(node)}`, which the fusion cannot follow")
        raise AssertionError("unreachable")

    def _check_branches(self, node: ast.AST, branches: list[ast.expr]) -> None:
        """Both branches of a select of pointers point into the same fused argument. A branch
        that is not derived from it (another argument's pointer) has no offset in the fused
        tensor: its shadow would be that pointer, and its accesses would get the fused code."""
        roots = {self._root(branch) if self._is_pointer(branch) else None for branch in branches}
        if len(roots) != 1:
            self._refuse(node, "is selected between pointers of different arguments")

    # -- statements and expressions --------------------------------------------------------
    def rewrite_body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            out.extend(self.rewrite_statement(stmt))
        return out

    def rewrite_statement(self, stmt: ast.stmt) -> list[ast.stmt]:
        loop = isinstance(stmt, (ast.For, ast.While))
        self.loop_depth += loop
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(stmt, field, None), list) and getattr(stmt, field) and \
                    isinstance(getattr(stmt, field)[0], ast.stmt):
                setattr(stmt, field, self.rewrite_body(getattr(stmt, field)))
        self.loop_depth -= loop
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(
                stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target, ast.Name):
            target = (stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target).id
            if target in self.root_of and stmt.value is not None:
                # Fused accesses inside the pointer expression (a gather's index load) first:
                # the pointer and its shadow both use what they load.
                # See [Note: Element offsets by shadowing pointer arithmetic].
                stmt.value = self.expression(stmt.value, pointer_ok=True)
                offset = self.shadow(stmt.value)
                if target in _pointer_names(stmt.value, self.scope):  # p = p + step: loop-carried
                    offset = _same_type(_shadow_name(target), offset)
                shadow = ast.Assign([ast.Name(_shadow_name(target), ast.Store())], offset)
                return [stmt, shadow]
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id in self.root_of:
            if not isinstance(stmt.op, (ast.Add, ast.Sub)) or self._is_pointer(stmt.value):
                self._refuse(stmt, f"is updated with `{ast.unparse(stmt)}`")
            name = _shadow_name(stmt.target.id)
            shadow = ast.Assign([ast.Name(name, ast.Store())], _same_type(
                name, ast.BinOp(ast.Name(name, ast.Load()), stmt.op, stmt.value)))
            stmt.value = self.expression(stmt.value)
            return [stmt, shadow]
        for field, value in ast.iter_fields(stmt):
            if isinstance(value, ast.expr):
                setattr(stmt, field, self.expression(value))
            elif isinstance(value, list) and value and isinstance(value[0], ast.expr):
                setattr(stmt, field, [self.expression(v) for v in value])
        return [stmt]

    def expression(self, node: ast.expr, pointer_ok: bool = False) -> ast.expr:
        """`node` with fused stores and loads rewritten; any other pointer use refused."""
        rewriter = self

        class Visitor(ast.NodeTransformer):
            def visit_Attribute(self, attribute: ast.Attribute) -> ast.AST:
                name = _element_type_of(attribute)
                if name in rewriter.root_of:
                    element_type = rewriter.fused[rewriter.root_of[name]].element_type
                    if element_type is None or rewriter.language is None:
                        rewriter._refuse(attribute, "has its element type read")
                    replacement = ast.Attribute(ast.Name(rewriter.language, ast.Load()), element_type, ast.Load())
                    rewriter.rewritten.add(id(replacement))
                    return replacement
                self.generic_visit(attribute)
                return attribute

            def visit_Call(self, call: ast.Call) -> ast.AST:
                fn = _resolve(call.func, rewriter.scope)
                if fn is tl.store or fn is tl.load:
                    pointer = call.args[0] if call.args else next(
                        (k.value for k in call.keywords if k.arg == "pointer"), None)
                    if pointer is not None and rewriter._is_pointer(pointer):
                        return rewriter.memory_access(call, fn is tl.store)
                self.generic_visit(call)
                return call

        result = Visitor().visit(node)
        if not pointer_ok:
            if self._unrewritten_pointers(result):
                self._refuse(result, f"is used in `{ast.unparse(result)}`, which the fusion cannot follow")
        return result

    def _unrewritten_pointers(self, node: ast.AST) -> bool:
        if id(node) in self.rewritten:
            return False
        if isinstance(node, ast.Name):
            return node.id in self.root_of
        return any(self._unrewritten_pointers(child) for child in ast.iter_child_nodes(node))

    def memory_access(self, call: ast.Call, is_store: bool) -> ast.expr:
        params = ["pointer", "value", "mask"] if is_store else ["pointer", "mask", "other"]
        bound: dict[str, ast.expr] = dict(zip(params, call.args))
        extra = [k for k in call.keywords if k.arg not in params]
        bound.update({k.arg: k.value for k in call.keywords if k.arg in params})
        if len(call.args) > len(params) or any(k.arg is None for k in call.keywords):
            self._refuse(call, "is accessed with arguments the fusion cannot read")
        if any(k.arg in ("boundary_check", "padding_option") for k in extra):
            self._refuse(call, "is accessed as a block pointer")
        pointer = bound["pointer"]
        root = self._root(pointer)
        fused = self.fused[root]
        if is_store != (fused.kind == "epilogue"):
            self._refuse(call, "is loaded, but its stores get an epilogue" if not is_store
                         else "is stored to, but its loads get a prologue")
        for name, value in bound.items():
            if name != "pointer" and self._is_pointer(value):
                self._refuse(call, f"is used as the {name} of a memory access")
        none = ast.Constant(None)
        # A fused access inside the pointer (tl.load(table_ptr + tl.load(idx_ptr + i) * D) with idx_ptr
        # fused too) is rewritten first, for the pointer and its shadow alike.
        pointer = self.expression(pointer, pointer_ok=True)
        offset = self.shadow(pointer)
        if fused.vector_width is not None:
            offset = _call(ast.Name(VECTOR_LIMIT, ast.Load()), [offset, ast.Constant(fused.vector_width)], [])
            pointer = ast.BinOp(ast.Name(self.base(root), ast.Load()), ast.Add(), offset)
        mask = self.expression(bound["mask"]) if "mask" in bound else none
        operands = [ast.Name(n, ast.Load()) for n in fused.operands]
        helper = ast.Name(fused.helper, ast.Load())
        if is_store:
            value = self.expression(bound["value"]) if "value" in bound else none
            new_value = _call(helper, [value, offset, mask, *operands], [])
            keywords = [ast.keyword("mask", mask)] if "mask" in bound else []
            result = _call(call.func, [pointer, new_value], keywords + extra)
        else:
            other = self.expression(bound["other"]) if "other" in bound else none
            result = _call(helper, [offset, mask, other, *operands], [])
            if self.loop_depth:
                self.loads_in_loops.add(root)
        self.rewritten.add(id(result))
        return result


def _call(func: ast.expr, args: list[ast.expr], keywords: list[ast.keyword]) -> ast.Call:
    return ast.Call(func=func, args=list(args), keywords=list(keywords))


def _same_type(name: str, value: ast.expr) -> ast.expr:
    """`value` converted to the type of shadow `name`: a shadow advanced by an int64 step in a
    loop keeps its type (triton needs a loop-carried value to keep one). The offsets of an
    int32 shadow fit int32 (see FusedArgument.wide_offsets), so the conversion is exact."""
    dtype = ast.Attribute(ast.Name(name, ast.Load()), "dtype", ast.Load())
    return _call(ast.Attribute(value, "to", ast.Load()), [dtype], [])


def _shadow_name(variable: str) -> str:
    return f"_tth_off_{variable}"


def _base_name(argument: str) -> str:
    return f"_tth_base_{argument}"


def _split_parallel_assignments(fn_def: ast.FunctionDef) -> None:
    """`a, b = x_ptr + o, y_ptr + o` as `a = x_ptr + o` then `b = y_ptr + o`, in place, where
    that is the same program: each target a plain name, once, and no target read by a value
    after its own (`a, b = a + 1, b + 1` splits; `a, b = b, a` is left as written). The
    rewriter follows a pointer through plain assignments only."""
    for node in ast.walk(fn_def):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if not isinstance(statements, list) or not statements or not isinstance(statements[0], ast.stmt):
                continue
            split: list[ast.stmt] = []
            for stmt in statements:
                pairs = _parallel_pairs(stmt)
                split.extend(ast.copy_location(ast.Assign([target], value), stmt) for target, value in pairs)
                if not pairs:
                    split.append(stmt)
            setattr(node, field, split)


def _parallel_pairs(stmt: ast.stmt) -> list[tuple[ast.Name, ast.expr]]:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return []
    target, value = stmt.targets[0], stmt.value
    if not (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts)):
        return []
    names = [t.id for t in target.elts if isinstance(t, ast.Name)]
    if len(names) != len(target.elts) or len(set(names)) != len(names) or \
            any(isinstance(v, ast.Starred) for v in value.elts):
        return []
    if any(names[i] in _names(later) for i in range(len(names)) for later in value.elts[i + 1:]):
        return []  # that value would read the new value of an earlier target
    return [(ast.Name(name, ast.Store()), v) for name, v in zip(names, value.elts)]


def rewrite_kernel_source(source: str, scope: dict[str, Any], fused: list[FusedArgument],
                          new_params: list[str], name: str | None = None) -> RewrittenKernel:
    """The kernel's source with each fused argument's stores / loads rewritten and
    `new_params` (the operands) added before the first parameter that has a default, and the
    function renamed to `name` if given.

    Raises NotFusible (with the line) where an argument's use cannot be followed exactly.
    """
    module = ast.parse(textwrap.dedent(source))
    fn_def = next((n for n in module.body if isinstance(n, ast.FunctionDef)), None)
    if fn_def is None:
        raise NotFusible("the kernel's source holds no function definition")
    fn_def.decorator_list = []
    if name is not None:
        fn_def.name = name
    by_name = {f.name: f for f in fused}
    taken = {n.id for n in ast.walk(fn_def) if isinstance(n, ast.Name)} | {a.arg for a in fn_def.args.args}
    clashes = sorted(n for n in taken if n.startswith("_tth_"))
    if clashes:
        raise NotFusible(f"the kernel already uses the names {clashes}, which the fusion reserves")
    missing = [name for name in by_name if name not in {a.arg for a in fn_def.args.args}]
    if missing:
        raise NotFusible(f"{missing} are not parameters of the kernel's Python signature")
    _split_parallel_assignments(fn_def)
    rewriter = _Rewriter(fn_def, scope, by_name)
    fn_def.body = rewriter.rewrite_body(fn_def.body)
    starts = [ast.Assign([ast.Name(_shadow_name(name), ast.Store())], rewriter.zero(name))
              for name in sorted(rewriter.advanced)]
    starts += [ast.Assign([ast.Name(_base_name(name), ast.Store())], ast.Name(name, ast.Load()))
               for name in sorted(rewriter.saved_bases)]
    docstring = fn_def.body[:1] if fn_def.body and isinstance(fn_def.body[0], ast.Expr) and \
        isinstance(fn_def.body[0].value, ast.Constant) and isinstance(fn_def.body[0].value.value, str) else []
    fn_def.body = docstring + starts + fn_def.body[len(docstring):]
    args = fn_def.args
    first_default = len(args.args) - len(args.defaults)
    args.args[first_default:first_default] = [ast.arg(name) for name in new_params]
    ast.fix_missing_locations(module)
    dots = [getattr(tl, name, None) for name in ("dot", "dot_scaled")]
    calls_dot = any(isinstance(n, ast.Call) and any(_resolve(n.func, scope) is d for d in dots if d is not None)
                    for n in ast.walk(fn_def))
    return RewrittenKernel(ast.unparse(fn_def) + "\n", rewriter.loads_in_loops, calls_dot)
