"""A reader for TTIR text: functions, ops, regions, blocks and source locations.

# [Note: Why we read TTIR as text]
# TL;DR: the printed module is the one interface that is the same on triton 3.6-3.9,
# carries a source location on every op (tt.store included), and needs no driver.
# Context: triton's Python bindings expose ops without locations (a result-less
# tt.store has none), and their accessors have changed between releases. The MLIR
# pretty form we meet is regular: one op per line, regions open with "{" at the end
# of a line and close with a line starting "}", block labels start with "^".
# Values are per-region scoped: sibling regions may reuse a printed name
#   %acc_0:2 = scf.while (%i_1 = %i, ...) { ... } do {
#   ^bb0(%i_1: i32 ...):            <- another value named %i_1
# so names resolve against a stack of scopes, innermost first.
"""

from __future__ import annotations

import dataclasses
import re

__all__ = ["Op", "Block", "Function", "parse_module", "TTIRParseError"]


class TTIRParseError(ValueError):
    pass


@dataclasses.dataclass(eq=False)
class Block:
    args: list[int]
    ops: list["Op"] = dataclasses.field(default_factory=list)
    label: str | None = None  # "bb2" for "^bb2:"; None for a region's unlabelled entry block


@dataclasses.dataclass(eq=False)
class Op:
    name: str
    results: list[int]
    operands: list[int]
    loc: str | None
    text: str
    callee: str | None = None
    regions: list[list[Block]] = dataclasses.field(default_factory=list)
    header_defs: list[int] = dataclasses.field(default_factory=list)  # %x = ... inside the op header
    # A branch's (cf.br, cf.cond_br) targets in order: (block label, the values passed to its arguments).
    successors: list[tuple[str, list[int]]] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(eq=False)
class Function:
    name: str
    params: list[int]
    body: list[Block]
    loc: str | None


_GENERIC_NAME = re.compile(r'^((?:%[^=]*=\s*)?)"([a-z_][\w.]*)"')
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_RESULTS = re.compile(r"^((?:%[\w.$-]+(?::\d+)?)(?:\s*,\s*%[\w.$-]+(?::\d+)?)*)\s*=\s*")
_VALUE = re.compile(r"%([\w.$-]+)(?:#(\d+))?")
_HEADER_DEF = re.compile(r"%([\w.$-]+)\s*=(?!=)")
_OP_NAME = re.compile(r'^"?([a-z_][\w.]*)"?')
_SYMBOL = re.compile(r'@("(?:[^"\\]|\\.)*"|[\w.$-]+)')
_SUCCESSOR = re.compile(r"\^([\w.$-]+)(?:\(([^)]*)\))?")


def _symbol(raw: str) -> str:
    """The first @symbol of a line; triton 3.6 quotes names with spaces or commas."""
    return _SYMBOL.search(raw).group(1).strip('"')
_LOC_ALIAS = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")


class _Scopes:
    """Name -> value id, per nested region; ids are unique per module."""

    def __init__(self) -> None:
        self.stack: list[dict[str, int]] = [{}]
        self.count = 0

    def define(self, name: str) -> int:
        self.count += 1
        self.stack[-1][name] = self.count
        return self.count

    def lookup(self, name: str) -> int:
        for scope in reversed(self.stack):
            if name in scope:
                return scope[name]
        # A use before its definition (graph regions never occur in TTIR): define it so
        # the op still records an operand; it just has no producer.
        return self.define(name)


def _strip(line: str) -> tuple[str, str | None]:
    """The op text without strings, trailing comments and the trailing loc(...)."""
    line = _GENERIC_NAME.sub(r"\1\2", line, count=1)  # "tt.reduce"(...) -> tt.reduce(...)
    line = _STRING.sub('""', line)
    comment = line.find("//")
    if comment >= 0:
        line = line[:comment]
    line = line.rstrip()
    loc = None
    start = line.rfind(" loc(")
    if start >= 0 and line.endswith(")"):
        loc = line[start + 5 : -1]
        line = line[:start]
    return line.strip(), loc


def _result_names(spec: str) -> list[str]:
    names = []
    for part in spec.split(","):
        part = part.strip()[1:]
        base, _, count = part.partition(":")
        names.extend(f"{base}#{i}" for i in range(int(count))) if count else names.append(f"{base}#0")
    return names


def _ref(m: re.Match) -> str:
    return f"{m.group(1)}#{m.group(2) or 0}"


def _block_args(label: str, scopes: _Scopes) -> list[int]:
    inside = label[label.find("(") + 1 : label.rfind(")")] if "(" in label else ""
    return [scopes.define(f"{name}#0") for name in re.findall(r"%([\w.$-]+)\s*:", inside)]


def parse_module(text: str) -> tuple[dict[str, Function], dict[str, str]]:
    """Functions by symbol name, and the module's #loc aliases (alias -> loc body)."""
    functions: dict[str, Function] = {}
    aliases: dict[str, str] = {}
    scopes = _Scopes()
    # Each frame is an op (or function) whose regions are being filled.
    frames: list[tuple[object, list[list[Block]]]] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("//"):
            continue
        alias = _LOC_ALIAS.match(stripped)
        if alias:
            aliases[alias.group(1)] = alias.group(2)
            continue
        if stripped.startswith("module"):
            continue
        if stripped.startswith("}"):
            if not frames:
                continue  # the module's closing brace
            owner, regions = frames[-1]
            scopes.stack.pop()
            rest = stripped[1:].lstrip(")").strip()
            if rest.endswith("{"):  # "} else {", "} do {": the next region of the same op
                scopes.stack.append({})
                regions.append([Block(args=[])])
            else:
                frames.pop()
                if isinstance(owner, Op):
                    _, loc = _strip(stripped)
                    owner.loc = owner.loc or loc
            continue
        if stripped.startswith("^"):
            if not frames:
                raise TTIRParseError(f"block label outside a region: {stripped!r}")
            regions = frames[-1][1]
            label = _strip(stripped)[0]
            block = Block(args=_block_args(label, scopes), label=re.match(r"\^([\w.$-]+)", label).group(1))
            current = regions[-1]
            if len(current) == 1 and not current[0].ops and not current[0].args:
                current[0] = block  # the region's entry block, now with its arguments
            else:
                current.append(block)
            continue
        line, loc = _strip(stripped)
        if line.startswith("tt.func"):
            name = _symbol(stripped)
            scopes.stack.append({})
            header = line[line.find("(") + 1 :]
            params = [scopes.define(f"{p}#0") for p in re.findall(r"%([\w.$-]+)\s*:", header)]
            function = Function(name=name, params=params, body=[Block(args=[])], loc=loc)
            functions[name] = function
            if line.endswith("{"):
                frames.append((function, [function.body]))
            else:  # a declaration: no body
                scopes.stack.pop()
            continue
        if not frames:
            raise TTIRParseError(f"op outside a function: {stripped!r}")
        results_match = _RESULTS.match(line)
        result_names = _result_names(results_match.group(1)) if results_match else []
        body = line[results_match.end() :] if results_match else line
        name_match = _OP_NAME.match(body)
        if not name_match:
            raise TTIRParseError(f"cannot read op name: {stripped!r}")
        op_name = name_match.group(1)
        operand_text = body[name_match.end() :]
        opens_region = operand_text.endswith("{")
        header_defs = {m.group(1) for m in _HEADER_DEF.finditer(operand_text)}
        operands = [
            scopes.lookup(_ref(m))
            for m in _VALUE.finditer(operand_text)
            if m.group(1) not in header_defs or m.group(2) is not None
        ]
        callee = None
        if op_name == "tt.call":
            callee = _symbol(stripped)
        op = Op(name=op_name, results=[], operands=operands, loc=loc, text=line, callee=callee)
        if op_name.startswith("cf."):
            op.successors = [(m.group(1), [scopes.lookup(_ref(v)) for v in _VALUE.finditer(m.group(2) or "")])
                             for m in _SUCCESSOR.finditer(operand_text)]
        frames[-1][1][-1][-1].ops.append(op)
        if opens_region:
            scopes.stack.append({})
            # Values named in the header ("%iv = %lb", "iter_args(%a = %x)", "(%a = %x)")
            # are the entry block's arguments.
            op.header_defs = [scopes.define(f"{n}#0") for n in _ordered_defs(operand_text)]
            op.regions = [[Block(args=list(op.header_defs))]]
            frames.append((op, op.regions))
            # Results are visible after the op, in the enclosing scope.
            op.results = [_define_outer(scopes, n) for n in result_names]
        else:
            op.results = [scopes.define(n) for n in result_names]
    if frames:
        raise TTIRParseError("unbalanced regions at end of module")
    return functions, aliases


def _ordered_defs(text: str) -> list[str]:
    return [m.group(1) for m in _HEADER_DEF.finditer(text)]


def _define_outer(scopes: _Scopes, name: str) -> int:
    scopes.count += 1
    scopes.stack[-2][name] = scopes.count
    return scopes.count


def walk(blocks: list[Block]):
    """Every op in `blocks` and in the regions nested in them."""
    stack = [op for block in reversed(blocks) for op in reversed(block.ops)]
    while stack:
        op = stack.pop()
        yield op
        for region in reversed(op.regions):
            stack.extend(o for block in reversed(region) for o in reversed(block.ops))


def resolve_location(loc: str | None, aliases: dict[str, str], depth: int = 0) -> str | None:
    """'file:line' for a loc reference, following aliases, names and call sites."""
    if loc is None or depth > 32:
        return None
    if loc.startswith("#"):
        return resolve_location(aliases.get(loc), aliases, depth + 1)
    m = re.match(r'^"([^"]*)":(\d+):\d+', loc)
    if m:
        return f"{m.group(1)}:{m.group(2)}"
    m = re.match(r'^"[^"]*"\((.*)\)$', loc)  # a named location: "x"(#loc5)
    if m:
        return resolve_location(m.group(1), aliases, depth + 1)
    m = re.match(r"^callsite\((\S+) at (\S+)\)$", loc)
    if m:
        return resolve_location(m.group(1), aliases, depth + 1)
    return None
