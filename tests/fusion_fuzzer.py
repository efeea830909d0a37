"""Random programs around user Triton kernels, compiled with fusion on and off: a differential
fuzzer for the pointwise prologue / epilogue fusion (torch_triton_hop._fusion), in the style of
Csmith / YARPGen: random valid programs, their results compared between implementations.

- `generate_program(seed, index)` writes one random program: a random @triton.jit kernel (one of
  three families: flat 1-D blocks, one program per row with row reductions, 2-D tiles; masked
  loads with and without `other=`, loops over blocks with pointers advanced by int32 or int64
  steps, several stores and a second masked store, operands broadcast inside the kernel, int64
  offsets, inputs passed strided or as `x.view(-1, d)` of 3-D tensors with results viewed
  back) launched once through `torch_triton_hop.wrap_triton(kernel)[grid](...)`, with random
  pointwise aten code producing the tensors it only reads (prologues) and consuming the fresh
  `torch.empty` tensors it writes (epilogues), over every dtype the fusion handles and values
  that include negatives, NaN, +-inf, -0.0, 0, subnormals and huge ones. Prologues with
  f(0) != 0 and masked loads without `other=` are common on purpose: in the lanes a mask turns
  off, the unfused kernel sees 0 where a fused prologue could compute f(0). Program `index` of
  `seed` is the same whatever batch it is generated in.
- `run_batch(programs, ...)` is the check: every program runs eagerly (twice, into buffers
  filled with 0 and with 1: elements a kernel never writes in a fresh torch.empty are undefined,
  so only the elements both runs agree on are compared), then all programs of the batch compile
  as ONE function (`torch.compile(fullgraph=True)`, inductor: one C++ compile per batch, not per
  program) with `torch_triton_hop.config.fusion = True`, and are compared with eager bit for bit
  (integer views of the same width; NaN equals NaN whatever its payload). Only the programs that
  differ compile again with fusion off: where the unfused compile itself differs from eager, each
  element of the fused result must equal eager's or the unfused one's, or, where a prologue
  fused, the kernel's result on that prologue's exact value and inductor's values of the inputs
  left unfused (a kernel reading both mixes eager's numerics with inductor's C++ ones: seed 10
  #430); a program whose unfused compile raises cannot be held to anything there: reported as
  inductor's error; an output no fused region feeds is inductor's alone. A compile that raises
  where eager did not, and any warning torch_triton_hop emits while compiling, are failures
  too; a batch that raises is bisected down to the programs that raise.
- Each program's record says which arguments fused and why the others did not (from the debug
  log of `torch_triton_hop._fusion`), and a failing program prints as a standalone reproducer
  (`Program.reproducer()`); `minimize(...)` shrinks one first.

benchmarks/fuzz_fusion.py runs large batches; tests/test_fusion_fuzz.py a fixed one in CI.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import random
import re
import sys
import time
import warnings
from typing import Any, Callable

import torch

from generated_modules import import_generated

# --- dtypes and values ----------------------------------------------------------------------

# FUZZ_DYNAMIC=1: every program compiled with dynamic=True (symbolic sizes: the store-coverage
# proof over symbolic sizes, the sizes fused kernels take as arguments), its reproducers too.
DYNAMIC = os.environ.get("FUZZ_DYNAMIC") == "1"
FLOATS = (torch.float32, torch.float16, torch.bfloat16)
INTS = (torch.int8, torch.uint8, torch.int32, torch.int64)
DTYPES = FLOATS + INTS + (torch.bool,)
# How often each dtype is drawn for a tensor: floats carry most of the ops.
_DTYPE_WEIGHTS = {torch.float32: 5, torch.float16: 3, torch.bfloat16: 3, torch.int8: 1, torch.uint8: 1,
                  torch.int32: 1, torch.int64: 1, torch.bool: 1}
_TL = {torch.float32: "tl.float32", torch.float16: "tl.float16", torch.bfloat16: "tl.bfloat16",
       torch.int8: "tl.int8", torch.uint8: "tl.uint8", torch.int32: "tl.int32", torch.int64: "tl.int64",
       torch.bool: "tl.int1"}
# Values a float input draws besides ordinary ones: every IEEE corner the pointwise code can meet.
_SPECIAL_FLOATS = (math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-40, -1e-40, 1e-8, 1e30, -1e30, 3e38, 65504.0,
                   -65504.0, 1.0, -1.0, 0.5)
# The range a float is clamped into before an exact cast to an integer dtype (a float outside
# the target's range, NaN or inf converts to an unspecified integer: torch, C++ and triton differ).
# Every float dtype holds the bounds exactly: clamping a bf16 value to 2**31 - 256 gives 2**31
# (the bound rounded to bf16), out of int32's range; 2**31 - 2**23 is a bf16.
_INT_RANGES = {torch.int8: (-128, 127), torch.uint8: (0, 255), torch.int32: (-2**31 + 2**23, 2**31 - 2**23),
               torch.int64: (-2**62, 2**62)}
# "Wrapping" casts: float values in [-300, 300] cast to uint8 (torch's CPU and CUDA code and
# inductor convert through a wider integer and wrap); a fraction of the casts to uint8 draw this range.
_WRAP_RANGE = (-300, 300)


def fuzz_device() -> str:
    """Kernels run on the GPU when there is one and TRITON_INTERPRET is not 1, else on CPU tensors
    under the interpreter."""
    return "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET", "0") != "1" else "cpu"


def _draw_dtype(rng: random.Random, choices: tuple[torch.dtype, ...] = DTYPES) -> torch.dtype:
    return rng.choices(choices, weights=[_DTYPE_WEIGHTS[d] for d in choices])[0]


def _random_values(rng: random.Random, dtype: torch.dtype, numel: int) -> list:
    """Python numbers for a tensor: ordinary values of both signs plus, for floats, a random
    share of _SPECIAL_FLOATS (0 for some tensors, so that NaN does not hide everything)."""
    if dtype == torch.bool:
        return [rng.random() < 0.5 for _ in range(numel)]
    if dtype in FLOATS:
        special = rng.choice([0.0, 0.0, 0.1, 0.3])
        scale = rng.choice([1.0, 1.0, 4.0, 1e-3, 300.0])
        return [rng.choice(_SPECIAL_FLOATS) if rng.random() < special else round(rng.gauss(0.0, scale), 4)
                for _ in range(numel)]
    info = torch.iinfo(dtype)
    extremes = [info.min, info.max, info.min + 1, info.max - 1, 0] + ([-1] if info.min < 0 else [])
    small = (max(info.min, -9), min(info.max, 9))
    return [rng.choice(extremes) if rng.random() < 0.1 else rng.randint(*small) for _ in range(numel)]


def make_tensor(values: list, dtype: torch.dtype, shape: tuple[int, ...], device: str) -> torch.Tensor:
    """The tensor of `values`; floats go through float32 (so 1e-40 stays a subnormal there)."""
    via = torch.float32 if dtype in FLOATS else (torch.bool if dtype == torch.bool else torch.int64)
    return torch.tensor(values, dtype=via).to(dtype).reshape(shape).to(device)


def _numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


# --- the kernel ------------------------------------------------------------------------------

@dataclasses.dataclass
class KernelArg:
    """A tensor parameter of the kernel and how the program makes and passes it.

    Inputs: the pointwise code computes (or the program takes) a tensor of `base_shape`, passed
    as `base + pass_code` (a reshaping view, a slice, a transpose). Outputs: `torch.empty` of
    `alloc_shape` passed as `buffer + pass_code`; the epilogue starts from `buffer + back_code`,
    of `base_shape`."""

    name: str
    role: str                          # "input" | "output"
    dtype: torch.dtype
    kernel_shape: tuple[int, ...]      # the tensor the kernel sees
    base_shape: tuple[int, ...]        # the tensor the pointwise code sees
    alloc_shape: tuple[int, ...] = ()  # outputs: the empty buffer
    pass_code: str = ""
    back_code: str = ""
    style: str = "direct"              # for reports: direct / view / slice / transpose / view_back / view_pass /
    #                                    over_input
    over: str = ""                     # outputs: the input the launch passes as this output too (in place)


@dataclasses.dataclass
class KernelSpec:
    """A generated kernel: its source and how it is launched."""

    name: str
    family: str                        # "flat" | "rows" | "tile2d"
    source: str
    args: list[KernelArg]
    launch_args: list[str]             # the launch's positional arguments after the tensors (code)
    constexprs: dict[str, int]
    grid: tuple[int, ...]
    features: list[str]                # what the kernel does, for reports

    def arg(self, name: str) -> KernelArg:
        return next(a for a in self.args if a.name == name)


def _pow2(x: int) -> int:
    return 1 << max(0, (x - 1).bit_length())


class _KernelBuilder:
    """One random kernel. Every kernel converts what it loads to fp32 (or computes in a native
    integer dtype when all its operands share one), and converts what it stores to the output's
    dtype, clamped into range for integers (a NaN or out-of-range float converts differently on
    different hardware: the kernel itself must be well defined)."""

    def __init__(self, rng: random.Random, name: str, over_input: bool = False) -> None:
        self.rng = rng
        self.name = name
        self.features: list[str] = []
        self.args: list[KernelArg] = []
        self.over_input = over_input  # o0 is launched as x0: written over the kernel's own input

    def written_over(self, out: KernelArg, x: KernelArg) -> KernelArg:
        """`out` replaced by `x` passed a second time (Liger's RMSNorm backward passes dY as dX):
        x's dtype and layout, no buffer of its own; after the launch the program reads x's
        value (the prologue's result it viewed) as the output. Every kernel family reads and
        writes each element of x0 / o0 in the one program, reads before it stores, so eager's
        result does not depend on the order programs run in."""
        if not self.over_input:
            return out
        self.features = [f for f in self.features if not f.startswith("output_")]  # out's, replaced
        self.features.append("output_over_input")
        over = KernelArg(name=out.name, role="output", dtype=x.dtype, kernel_shape=x.kernel_shape,
                         base_shape=x.base_shape, style="over_input", over=x.name)
        self.args[self.args.index(out)] = over
        return over

    # pieces
    def load(self, arg: KernelArg, address: str, mask: str | None, compute: str) -> str:
        """A load of `arg` at `address`: masked without other= (often: the known-bug class), with
        other=, or unmasked where the generator knows every lane is in bounds (mask None)."""
        r = self.rng
        text = f"tl.load({address}"
        if mask is not None:
            kind = r.choices(["no_other", "other"], weights=[3, 2])[0]
            text += f", mask={mask}"
            if kind == "other":
                if arg.dtype == torch.bool:
                    other = r.choice(["0", "1"])
                elif arg.dtype in INTS:
                    other = r.choice(["0", "3"] + (["-2"] if arg.dtype != torch.uint8 else []))
                else:
                    other = r.choice(["0.0", "1.0", "-2.5", "0.5"])
                text += f", other={other}"
                self.features.append("load_other")
            else:
                self.features.append("load_masked_no_other")
        else:
            self.features.append("load_unmasked")
        text += ")"
        return text if compute == "native" else f"{text}.to(tl.float32)"

    def combine(self, names: list[str], compute: str) -> str:
        """A random expression of the loaded values."""
        r = self.rng
        value = names[0]
        if compute == "native":  # integers: wrapping arithmetic, bit ops, max
            for other in names[1:]:
                value = r.choice([f"({value} + {other})", f"({value} - {other})", f"({value} * {other})",
                                  f"tl.maximum({value}, {other})", f"({value} ^ {other})"])
            return r.choice([value, f"({value} + 1)", f"({value} * 3)"])
        for other in names[1:]:
            value = r.choice([f"({value} + {other})", f"({value} * {other})", f"({value} - {other} * 0.5)",
                              f"tl.maximum({value}, {other})", f"tl.where({value} > {other}, {value}, {other} * 2.0)"])
        return r.choice([value, f"({value} * 1.25 + 0.5)", f"tl.abs({value})", f"({value} * {value})"])

    def stored(self, value: str, out: KernelArg, compute: str) -> str:
        """`value` converted to what `out` holds; an fp32 value stored to an integer is made finite
        and clamped into range first."""
        if compute == "native":  # same integer dtype throughout: wraps as integers do
            return f"({value}).to({_TL[out.dtype]})"
        if out.dtype in FLOATS or out.dtype == torch.bool:
            return f"({value}).to({_TL[out.dtype]})"
        lo, hi = {torch.int8: (-100, 100), torch.uint8: (0, 200)}.get(out.dtype, (-100000, 100000))
        return f"tl.clamp(tl.where({value} == {value}, {value}, 0.0), {float(lo)}, {float(hi)}).to({_TL[out.dtype]})"

    def tensor(self, name: str, role: str, dtype: torch.dtype, kernel_shape: tuple[int, ...],
               base_shape: tuple[int, ...] | None = None, pass_code: str = "", style: str = "direct",
               alloc_shape: tuple[int, ...] | None = None, back_code: str = "") -> KernelArg:
        arg = KernelArg(name=name, role=role, dtype=dtype, kernel_shape=kernel_shape,
                        base_shape=base_shape or kernel_shape, pass_code=pass_code, style=style,
                        alloc_shape=alloc_shape or (base_shape or kernel_shape) if role == "output" else (),
                        back_code=back_code)
        self.args.append(arg)
        return arg

    def output(self, name: str, dtype: torch.dtype, kernel_shape: tuple[int, ...], base_shape: tuple[int, ...],
               sliceable: bool = False) -> KernelArg:
        """An output buffer: allocated as the kernel sees it (and viewed back to `base_shape`),
        allocated in `base_shape` and passed as a view, or (rarely, `sliceable` kernels that take
        strides) a slice of a wider buffer, which the fusion must refuse (not a fresh empty)."""
        r = self.rng
        if sliceable and len(kernel_shape) == 2 and r.random() < 0.08:
            rows, cols = kernel_shape
            self.features.append("output_slice")
            return self.tensor(name, "output", dtype, kernel_shape, kernel_shape, f"[:, :{cols}]", "slice",
                               alloc_shape=(rows, cols + r.randint(1, 5)))
        if base_shape == kernel_shape:
            return self.tensor(name, "output", dtype, kernel_shape)
        if r.random() < 0.5:
            self.features.append("output_view_back")
            return self.tensor(name, "output", dtype, kernel_shape, base_shape, "", "view_back",
                               alloc_shape=kernel_shape, back_code=f".view{base_shape}")
        self.features.append("output_view_pass")
        return self.tensor(name, "output", dtype, kernel_shape, base_shape, f".view{kernel_shape}", "view_pass",
                           alloc_shape=base_shape)

    def input(self, name: str, dtype: torch.dtype, kernel_shape: tuple[int, ...],
              base_shape: tuple[int, ...] | None = None, strided: tuple[str, ...] = ()) -> KernelArg:
        """An input: its base as the kernel sees it or viewed to it (`x.view(-1, d)`); kernels that
        take strides may get a slice of a wider tensor or a transposed one (the `strided` styles
        they index correctly)."""
        r = self.rng
        if strided and len(kernel_shape) == 2 and r.random() < 0.15:
            rows, cols = kernel_shape
            if r.choice(strided) == "slice":
                self.features.append("input_slice")
                return self.tensor(name, "input", dtype, kernel_shape, (rows, cols + r.randint(1, 5)),
                                   f"[:, :{cols}]", "slice")
            self.features.append("input_transposed")
            return self.tensor(name, "input", dtype, kernel_shape, (cols, rows), ".t()", "transpose")
        if base_shape and base_shape != kernel_shape:
            self.features.append("input_view")
            return self.tensor(name, "input", dtype, kernel_shape, base_shape, f".view{kernel_shape}", "view")
        return self.tensor(name, "input", dtype, kernel_shape)

    def base_of(self, kernel_shape: tuple[int, ...]) -> tuple[int, ...]:
        """A 3-D (or 2-D) shape that views as `kernel_shape` (rows of the last dimension)."""
        r = self.rng
        if len(kernel_shape) == 2:
            rows, cols = kernel_shape
            splits = [b for b in range(2, rows + 1) if rows % b == 0]
            if splits and r.random() < 0.4:
                b = r.choice(splits)
                return (b, rows // b, cols)
            return kernel_shape
        (n,) = kernel_shape
        splits = [d for d in range(2, min(n, 40) + 1) if n % d == 0]
        if splits and r.random() < 0.6:
            d = r.choice(splits)
            rest = n // d
            inner = [b for b in range(2, rest + 1) if rest % b == 0]
            return (rest // inner[0], inner[0], d) if inner and r.random() < 0.5 else (rest, d)
        return kernel_shape

    # families
    def flat(self) -> KernelSpec:
        """1-D blocks over `n` elements: `offs = pid * BLOCK + arange`, optionally ITERS blocks per
        program with pointers advanced by int32 or int64 steps; a bias of the last dimension
        (`offs % D`) and a single-element operand broadcast inside the kernel; a second output
        stored under another mask; a store that overwrites part of the first."""
        r = self.rng
        n = r.randint(1, 300)
        block = r.choice([8, 16, 32, 64])
        base = self.base_of((n,))
        d = base[-1] if len(base) > 1 else r.choice([d for d in range(1, min(n, 16) + 1) if n % d == 0])
        loop = r.random() < 0.35
        iters = r.choice([2, 3]) if loop else 1
        grid = (-(-n // (block * iters)),)
        exact = n % (block * iters) == 0
        same_int = r.random() < 0.2
        int_dtype = r.choice(INTS)
        main_dtype = lambda: int_dtype if same_int else _draw_dtype(r)  # noqa: E731
        direct = r.random() < 0.3  # launched on the multi-dimensional tensor itself (flat offsets)
        kshape = base if direct else (n,)
        xs = [self.input(f"x{i}", main_dtype(), kshape, base) for i in range(r.choice([1, 1, 2, 3]))]
        bias = self.input("b0", main_dtype(), (d,)) if r.random() < 0.4 else None
        scalar = self.input("s0", main_dtype(), (1,)) if r.random() < 0.2 else None
        compute = "native" if same_int else "f32"
        outs = [self.written_over(self.output("o0", int_dtype if same_int else _draw_dtype(r), kshape, base), xs[0])]
        if r.random() < 0.4:
            outs.append(self.output("o1", int_dtype if same_int else _draw_dtype(r), kshape, base))
        wide = r.random() < 0.25
        if wide:
            self.features.append("int64_offsets")
        if loop:
            self.features.append("loop")
        pid = "tl.program_id(0).to(tl.int64)" if wide else "tl.program_id(0)"
        body = [f"pid = {pid}", "lanes = tl.arange(0, BLOCK)"]
        step_kind = r.choice(["int32", "int64"]) if loop else ""
        if loop:
            body += ["start = pid * (BLOCK * ITERS)"]
            moving = [a for a in xs + outs if r.random() < 0.7]
            for a in moving:
                body.append(f"p_{a.name} = {a.name} + start")
            if step_kind == "int64":
                body.append("step = tl.zeros([], tl.int64) + BLOCK")
                self.features.append("ptr_step_int64")
            else:
                self.features.append("ptr_step_int32")
            body.append("for i in range(ITERS):")
            indent = "    "
            body.append(indent + "offs = start + i * BLOCK + lanes")
        else:
            moving = []
            indent = ""
            body.append("offs = pid * BLOCK + lanes")
        body.append(indent + "mask = offs < n")

        def address(a: KernelArg) -> str:
            return f"p_{a.name} + lanes" if a in moving else f"{a.name} + offs"
        names = []
        partial = r.random() < 0.25  # a load masked tighter than the stores: its masked-off lanes are stored
        for i, a in enumerate(xs):
            mask = "mask" if not (exact and r.random() < 0.3) else None
            if partial and i == 0:
                mask = "mask & (offs % 2 == 0)"
                self.features.append("partial_load_stored")
            body.append(indent + f"a{i} = {self.load(a, address(a), mask, compute)}")
            names.append(f"a{i}")
        if bias is not None:
            body.append(indent + f"bias = {self.load(bias, 'b0 + offs % D', 'mask', compute)}")
            names.append("bias")
            self.features.append("kernel_broadcast")
        if scalar is not None:
            body.append(indent + f"sc = {self.load(scalar, 's0', None, compute)}")
            names.append("sc")
        body.append(indent + f"v = {self.combine(names, compute)}")
        store_mask = "mask" if r.random() < 0.8 else "mask & (offs % 5 != 2)"
        o0 = outs[0]
        o0_address = "p_o0 + lanes" if o0 in moving else "o0 + offs"
        body.append(indent + f"tl.store({o0_address}, {self.stored('v', o0, compute)}, mask={store_mask})")
        if r.random() < 0.2:
            self.features.append("overwriting_store")
            second = "v + 1" if compute == "native" else "v * 0.5 - 1.0"
            body.append(indent + f"tl.store({o0_address}, {self.stored(second, o0, compute)}, "
                                 f"mask=mask & (offs % 3 == 0))")
        if len(outs) > 1:
            self.features.append("second_masked_store")
            o1 = outs[1]
            value = f"({names[0]} - v)" if compute == "native" else f"(v * 0.5 - {names[0]})"
            o1_address = "p_o1 + lanes" if o1 in moving else "o1 + offs"
            body.append(indent + f"tl.store({o1_address}, {self.stored(value, o1, compute)}, "
                                 f"mask=mask & (offs % 3 != 1))")
        for a in moving:
            body.append(indent + f"p_{a.name} += {'step' if step_kind == 'int64' else 'BLOCK'}")
        tensors = [a.name for a in self.args]
        params = tensors + ["n", "D", "BLOCK: tl.constexpr", "ITERS: tl.constexpr"]
        return self.finish("flat", params, body, [str(n), str(d)], {"BLOCK": block, "ITERS": iters}, grid)

    def rows(self) -> KernelSpec:
        """One program per row of (R, C), launched on `x.view(-1, C)` of 3-D tensors at times:
        a row reduction (tl.sum / tl.max / mean of squares) of a masked load, in one block or in
        a loop over column blocks with pointers advanced by int32 or int64 steps; an elementwise
        output using it with a column weight, and the per-row statistic as a second output."""
        r = self.rng
        rows, cols = r.randint(1, 12), r.randint(1, 80)
        base = self.base_of((rows, cols))
        loop = r.random() < 0.4
        block = r.choice([8, 16, 32]) if loop else _pow2(max(cols, 8))
        x = self.input("x0", _draw_dtype(r), (rows, cols), base, strided=("slice",))  # columns contiguous
        w = self.input("w0", _draw_dtype(r), (cols,)) if r.random() < 0.6 else None
        out = self.written_over(self.output("o0", _draw_dtype(r), (rows, cols), base if x.style == "view" else
                                            (rows, cols), sliceable=True), x)
        stat = self.output("o1", _draw_dtype(r), (rows,), (rows,)) if r.random() < 0.5 else None
        reduce = r.choice(["sum", "max", "sumsq"])
        self.features += ["row_reduction_" + reduce] + (["loop"] if loop else [])
        wide = r.random() < 0.25
        if wide:
            self.features.append("int64_offsets")
        body = [f"row = {'tl.program_id(0).to(tl.int64)' if wide else 'tl.program_id(0)'}",
                "lanes = tl.arange(0, BLOCK)"]
        reduce_of = {"sum": "tl.sum({0}, axis=0)", "max": "tl.max({0}, axis=0)",
                     "sumsq": "tl.sum({0} * {0}, axis=0) / C"}[reduce]
        if not loop:
            body += ["mask = lanes < C",
                     f"x = {self.load(x, 'x0 + row * stride_x + lanes', 'mask', 'f32')}",
                     f"s = {reduce_of.format('x')}"]
            if w is not None:
                body.append(f"w = {self.load(w, 'w0 + lanes', 'mask', 'f32')}")
            value = r.choice(["(x - s)", "x * s", "(x / (tl.abs(s) + 1.0))"]) + (" * w" if w is not None else "")
            body.append(f"tl.store(o0 + row * stride_o + lanes, {self.stored(value, out, 'f32')}, mask=mask)")
        else:
            step = r.choice(["BLOCK", "step"])
            self.features.append("ptr_step_int64" if step == "step" else "ptr_step_int32")
            acc = {"max": "tl.full([BLOCK], -3.0e38, tl.float32)"}.get(reduce, "tl.zeros([BLOCK], tl.float32)")
            update = {"sum": "acc += x", "max": "acc = tl.maximum(acc, x)", "sumsq": "acc += x * x"}[reduce]
            final = {"sum": "tl.sum(acc, axis=0)", "max": "tl.max(acc, axis=0)", "sumsq": "tl.sum(acc, axis=0) / C"}
            body += ["step = tl.zeros([], tl.int64) + BLOCK" if step == "step" else "",
                     "px = x0 + row * stride_x", f"acc = {acc}",
                     "for start in range(0, C, BLOCK):",
                     "    mask = start + lanes < C",
                     f"    x = {self.load(x, 'px + lanes', 'mask', 'f32')}",
                     f"    {update}",
                     f"    px += {step}",
                     f"s = {final[reduce]}"]
            # Odd widths assign and advance the two pointers together (`px, po = ...`). No draw:
            # earlier seeds' programs keep every other choice and compute what they did.
            together = cols % 2 == 1
            if together:
                self.features.append("pointers_assigned_together")
                body.append("px, po = x0 + row * stride_x, o0 + row * stride_o")
            else:
                body += ["px = x0 + row * stride_x", "po = o0 + row * stride_o"]
            body += ["for start in range(0, C, BLOCK):",
                     "    mask = start + lanes < C",
                     f"    x = {self.load(x, 'px + lanes', 'mask', 'f32')}"]
            value = r.choice(["(x - s)", "x * s", "(x / (tl.abs(s) + 1.0))"])
            if w is not None:
                body.append(f"    w = {self.load(w, 'w0 + start + lanes', 'mask', 'f32')}")
                value += " * w"
            body += [f"    tl.store(po + lanes, {self.stored(value, out, 'f32')}, mask=mask)"]
            body += [f"    px, po = px + {step}, po + {step}"] if together else [f"    px += {step}", f"    po += {step}"]
        if stat is not None:
            self.features.append("second_output_per_row")
            body.append(f"tl.store(o1 + row, {self.stored('s', stat, 'f32')})")
        params = [a.name for a in self.args] + ["C", "stride_x", "stride_o", "BLOCK: tl.constexpr"]
        return self.finish("rows", params, [line for line in body if line], [str(cols), "x0.stride(0)", "o0.stride(0)"],
                           {"BLOCK": block}, (rows,))

    def tile2d(self) -> KernelSpec:
        """2-D tiles of (M, N) with strides for the input and the output (a transposed or sliced
        input works), a column operand (N,) and a row operand (M,) broadcast inside the kernel,
        optionally a loop over column tiles advancing a 2-D block of pointers, and, where one
        program spans every column, the row sums as a second output."""
        r = self.rng
        m, n = r.randint(1, 40), r.randint(1, 40)
        bm, bn = r.choice([8, 16, 32]), r.choice([8, 16, 32])
        loop = r.random() < 0.3
        base = self.base_of((m, n))
        x = self.input("x0", _draw_dtype(r), (m, n), base, strided=("slice", "transpose"))
        c = self.input("c0", _draw_dtype(r), (n,)) if r.random() < 0.5 else None
        rr = self.input("r0", _draw_dtype(r), (m,)) if r.random() < 0.4 else None
        out = self.written_over(self.output("o0", _draw_dtype(r), (m, n), base if x.style == "view" else (m, n),
                                            sliceable=True), x)
        spans = loop or bn >= n
        sums = self.output("o1", _draw_dtype(r), (m,), (m,)) if spans and r.random() < 0.5 else None
        grid = (-(-m // bm), 1 if loop else -(-n // bn))
        body = ["rm = tl.program_id(0) * BM + tl.arange(0, BM)", "row_mask = rm < M"]
        if rr is not None:
            body.append(f"rv = {self.load(rr, 'r0 + rm', 'row_mask', 'f32')}")
        total = "tl.zeros([BM], tl.float32)"

        def tile(indent: str, rn: str, x_address: str, o_address: str) -> list[str]:
            lines = [f"col_mask = {rn} < N", "mask = row_mask[:, None] & col_mask[None, :]",
                     f"x = {self.load(x, x_address, 'mask', 'f32')}", "y = x"]
            if c is not None:
                lines += [f"cv = {self.load(c, f'c0 + {rn}', 'col_mask', 'f32')}",
                          "y = " + r.choice(["y * cv[None, :]", "y + cv[None, :]", "tl.maximum(y, cv[None, :])"])]
            if rr is not None:
                lines.append("y = " + r.choice(["y - rv[:, None]", "y * rv[:, None] + 0.5"]))
            lines.append(f"tl.store({o_address}, {self.stored('y', out, 'f32')}, mask=mask)")
            if sums is not None:
                lines.append("total += tl.sum(tl.where(mask, y, 0.0), axis=1)")
            return [indent + line for line in lines]
        if sums is not None:
            body.append(f"total = {total}")
        if loop:
            self.features.append("loop")
            step = r.choice(["int32", "int64"])
            self.features.append("ptr_step_" + step)
            body += ["cols = tl.arange(0, BN)",
                     "px = x0 + rm[:, None] * sxm + cols[None, :] * sxn",
                     "po = o0 + rm[:, None] * som + cols[None, :] * son",
                     "x_step = tl.zeros([], tl.int64) + BN * sxn" if step == "int64" else "x_step = BN * sxn",
                     "for start in range(0, N, BN):",
                     "    rn = start + cols"]
            body += tile("    ", "rn", "px", "po")
            body += ["    px += x_step", "    po += BN * son"]
        else:
            body.append("rn = tl.program_id(1) * BN + tl.arange(0, BN)")
            body += tile("", "rn", "x0 + rm[:, None] * sxm + rn[None, :] * sxn", "o0 + rm[:, None] * som + rn[None, :] * son")
        if sums is not None:
            self.features.append("row_sums_output")
            body.append(f"tl.store(o1 + rm, {self.stored('total', sums, 'f32')}, mask=row_mask)")
        params = [a.name for a in self.args] + ["M", "N", "sxm", "sxn", "som", "son", "BM: tl.constexpr",
                                                "BN: tl.constexpr"]
        return self.finish("tile2d", params, body, [str(m), str(n), "x0.stride(0)", "x0.stride(1)", "o0.stride(0)",
                                                    "o0.stride(1)"], {"BM": bm, "BN": bn}, grid)

    def finish(self, family: str, params: list[str], body: list[str], launch_args: list[str],
               constexprs: dict[str, int], grid: tuple[int, ...]) -> KernelSpec:
        source = (f"@triton.jit\ndef {self.name}({', '.join(params)}):\n"
                  + "".join(f"    {line}\n" for line in body))
        return KernelSpec(name=self.name, family=family, source=source, args=self.args, launch_args=launch_args,
                          constexprs=constexprs, grid=grid, features=sorted(set(self.features)))


# --- pointwise code ---------------------------------------------------------------------------

@dataclasses.dataclass
class Leaf:
    """A program input: a contiguous tensor of `shape` made of `values` (`make_tensor`)."""

    name: str
    dtype: torch.dtype
    shape: tuple[int, ...]
    values: list


@dataclasses.dataclass
class Step:
    """One line of pointwise code, `target = code`; `op` names it for reports."""

    target: str
    code: str
    op: str
    dtype: torch.dtype | None = None
    shape: tuple[int, ...] = ()


@dataclasses.dataclass
class Region:
    """A prologue (computes kernel input `argument`) or an epilogue (consumes its output)."""

    kind: str              # "prologue" | "epilogue"
    argument: str
    steps: list[Step]
    result: str            # the variable holding the region's result


@dataclasses.dataclass
class ProgramOutput:
    """A tensor the program returns: `variable`, computed from kernel output `source` (viewed as
    `view_shape`) elementwise, broadcast to `shape`. An element is defined where the kernel
    wrote the element of `source` it comes from; everywhere for a prologue's value (`source`
    "")."""

    variable: str
    source: str
    view_shape: tuple[int, ...]
    shape: tuple[int, ...]


# Pointwise ops: name -> code with {0}, {1} for operands. Unary ops take the current value;
# binary ones the current value and another operand (an earlier value, a new input tensor of a
# broadcastable shape or a Python scalar). Ops the fusion does not translate (sign, trunc,
# remainder, ...) are drawn too, rarely: their regions must be refused, not miscompiled.
_UNARY = {
    "neg": "-{0}", "abs": "torch.abs({0})", "exp": "torch.exp({0})", "log": "torch.log({0})",
    "tanh": "torch.tanh({0})", "sigmoid": "torch.sigmoid({0})", "sqrt": "torch.sqrt({0})",
    "rsqrt": "torch.rsqrt({0})", "erf": "torch.erf({0})", "sin": "torch.sin({0})", "cos": "torch.cos({0})",
    "floor": "torch.floor({0})", "ceil": "torch.ceil({0})", "relu": "torch.relu({0})",
    "gelu": "F.gelu({0})", "gelu_tanh": "F.gelu({0}, approximate='tanh')", "silu": "F.silu({0})",
    "reciprocal": "torch.reciprocal({0})", "exp2": "torch.exp2({0})", "log2": "torch.log2({0})",
    "logical_not": "torch.logical_not({0})", "bitwise_not": "torch.bitwise_not({0})",
    "square": "{0} ** 2", "cube": "{0} ** 3", "pow_half": "{0} ** 0.5", "pow_minus1": "{0} ** -1",
    "pow_1_5": "{0} ** 1.5",
    "clamp": "torch.clamp({0}, {lo}, {hi})", "clamp_min": "torch.clamp({0}, min={lo})",
    "clamp_max": "torch.clamp({0}, max={hi})",
    "affine": "({0} * {a} + {b})", "add_scalar": "({0} + {b})", "div_scalar": "({0} / {a})",
    "gt_scalar": "({0} > {b})", "le_scalar": "({0} <= {b})", "eq_scalar": "({0} == {b})",
    # not translated by the fusion (refused):
    "sign": "torch.sign({0})", "trunc": "torch.trunc({0})", "expm1": "torch.expm1({0})",
    "nan_to_num": "torch.nan_to_num({0})",
}
_BINARY = {
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "div": "({0} / {1})",
    "maximum": "torch.maximum({0}, {1})", "minimum": "torch.minimum({0}, {1})",
    "lt": "({0} < {1})", "ge": "({0} >= {1})", "ne": "({0} != {1})", "eq": "({0} == {1})",
    "logical_and": "torch.logical_and({0}, {1})", "logical_or": "torch.logical_or({0}, {1})",
    "logical_xor": "torch.logical_xor({0}, {1})",
    "bitwise_and": "({0} & {1})", "bitwise_or": "({0} | {1})", "bitwise_xor": "({0} ^ {1})",
    "where": "torch.where({0} > 0, {0}, {1})", "where_other": "torch.where({1} > 0, {1}, {0})",
    "add_alpha": "torch.add({0}, {1}, alpha=2)",
    # not translated (refused):
    "remainder": "torch.remainder({0}, {1})", "atan2": "torch.atan2({0}, {1})",
}
_UNTRANSLATED = {"sign", "trunc", "expm1", "nan_to_num", "remainder", "atan2", "pow_1_5"}
# Ops with keyword-only arguments, drawn from FIRST_SEED_WITH_KEYWORD_OPS on (earlier seeds draw
# from the tables above alone, so their programs are as they were).
_KEYWORD_UNARY = {"floordiv_scalar": "torch.div({0}, {a}, rounding_mode='floor')",
                  "truncdiv_scalar": "torch.div({0}, {a}, rounding_mode='trunc')"}
_KEYWORD_BINARY = {"addcmul": "torch.addcmul({0}, {1}, {0}, value={a})",
                   "addcdiv": "torch.addcdiv({0}, {1}, {0}, value={a})"}
_SCALARS = (0.5, 1.5, -0.25, 2.0, 3.0, -1.0, 1e-3, 100.0, 0.0, -2.0)


def _scalar_text(value: Any) -> str:
    return repr(value)


@dataclasses.dataclass(frozen=True)
class _IndexOp:
    op: str                       # flip, roll or pad
    code: str                     # the op's code, "{}" standing for its input
    stored: tuple[int, ...]       # the input's shape (padding reads a narrower tensor)


class _RegionBuilder:
    """Random pointwise code: a chain that starts from one full-shape tensor (a new input for a
    prologue, the kernel's output for an epilogue) and applies ops that each take the current
    value, so the result keeps the full shape; every op is checked by running it on small real
    tensors (the dtype combinations eager torch refuses are drawn again)."""

    def __init__(self, program: "_ProgramBuilder", kind: str, argument: str) -> None:
        self.program = program
        self.rng = program.rng
        self.kind = kind
        self.argument = argument
        self.steps: list[Step] = []

    def new_value(self, code: str, op: str, env: dict[str, torch.Tensor]) -> Step | None:
        target = self.program.fresh("v")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = eval(code, _EVAL_GLOBALS, env)  # noqa: S307 - generated code
        except Exception:  # noqa: BLE001 - a dtype combination torch refuses: draw another op
            return None
        if not isinstance(value, torch.Tensor) or value.dtype not in DTYPES:
            return None
        env[target] = value
        if (op in _KEYWORD_UNARY or op in _KEYWORD_BINARY) and "keyword_op" not in self.program.features:
            self.program.features.append("keyword_op")
        step = Step(target=target, code=code, op=op, dtype=value.dtype, shape=tuple(value.shape))
        self.steps.append(step)
        return step

    def operand_leaf(self, shape: tuple[int, ...], env: dict[str, torch.Tensor]) -> str:
        """A new input broadcast against `shape` or accessed strided: same shape, its last
        dimension, size-1 dimensions, a 0-d tensor, a transposed or every-other-column view."""
        r = self.rng
        dtype = _draw_dtype(r)
        kind = r.choice(["same", "same", "last", "ones", "scalar", "transposed", "strided"])
        access = ""
        if kind == "last" and len(shape) >= 1:
            stored = shape[-1:]
        elif kind == "ones" and len(shape) >= 2:
            stored = tuple(s if r.random() < 0.5 else 1 for s in shape)
        elif kind == "scalar":
            stored = ()
        elif kind == "transposed" and len(shape) >= 2:
            stored = shape[:-2] + (shape[-1], shape[-2])
            access = ".transpose(-1, -2)"
        elif kind == "strided" and len(shape) >= 1:
            stored = shape[:-1] + (2 * shape[-1],)
            access = "[..., ::2]"
        else:
            stored = shape
        index_op = self.index_op(dtype, shape) if stored == shape and not access else None
        if index_op is not None:
            stored = index_op.stored
        leaf = self.program.leaf(dtype, stored)
        env[leaf.name] = make_tensor(leaf.values, dtype, stored, "cpu")
        name = leaf.name
        if self.program.second_launches and self.program.second_rng.random() < 0.5:
            step = self.new_value(f"fz_copy({leaf.name})", "second_launch", env)
            assert step is not None
            self.program.features.append("second_launch")
            name = step.target
        if index_op is not None:
            step = self.new_value(index_op.code.format(name), "index_" + index_op.op, env)
            assert step is not None and step.shape == shape, (index_op, shape)
            self.program.features.append("index_op")
            return step.target
        if not access:
            return name
        if access == ".transpose(-1, -2)" and self.program.views_in_regions:
            # pointwise code seen through the transpose: a region may hold both (see [Note: Views
            # inside a fused region]); the op draws from its own stream, as second launches do.
            views_rng = self.program.views_rng
            if views_rng.random() < 0.5:
                op = views_rng.choice(["affine", "abs", "square", "neg", "relu", "add_scalar"])
                computed = self.new_value(_UNARY[op].format(name, a="1.5", b="-0.25"), op, env)
                if computed is not None:
                    self.program.features.append("view_in_region")
                    name = computed.target
        step = self.new_value(f"{name}{access}", "strided_view", env)
        assert step is not None
        return step.target

    def index_op(self, dtype: torch.dtype, shape: tuple[int, ...]) -> "_IndexOp | None":
        """From FIRST_SEED_WITH_INDEX_OPS on, sometimes an operand of the full shape computed by
        an op that reads its input at other indices: flipped, rolled, or padded with a value
        (whose lanes read nothing). Drawn from a stream of its own, as second launches are."""
        if not self.program.index_ops or not shape or self.program.index_rng.random() >= 0.3:
            return None
        r = self.program.index_rng
        op = r.choice(["flip", "roll", "pad"])
        dim = r.randrange(len(shape)) - len(shape)
        if op == "flip":
            return _IndexOp(op, f"{{}}.flip({dim})", shape)
        if op == "roll" or shape[dim] < 4 or dtype == torch.bool:
            return _IndexOp("roll", f"torch.roll({{}}, {r.choice([1, -2, 3])}, {dim})", shape)
        before, after = r.randint(0, 2), r.randint(1, 2)
        value = r.choice([7.0, -1.5, 0.0] if dtype in FLOATS else [7, -1, 0] if dtype.is_signed else [7, 0])
        padding = (0, 0) * (-dim - 1) + (before, after)  # F.pad lists the last dimension first
        stored = shape[:dim] + (shape[dim] - before - after,) + (shape[dim + 1:] if dim != -1 else ())
        return _IndexOp(op, f"F.pad({{}}, {padding}, value={value!r})", stored)

    def cast(self, current: Step, dtype: torch.dtype, env: dict[str, torch.Tensor]) -> Step:
        """`current` converted to `dtype`; a float converted to an integer is first made finite and
        clamped into the integer's range (or, rarely, the wrapping range of narrow integers)."""
        if current.dtype == dtype:
            return current
        if current.dtype in FLOATS and dtype in INTS:
            lo, hi = _INT_RANGES[dtype]
            # Only to uint8: inductor defines that through int16, as torch does; a float out of
            # a signed integer's range converts to an undefined value (LLVM poison on a GPU).
            if dtype == torch.uint8 and self.rng.random() < 0.1:
                lo, hi = _WRAP_RANGE
                self.program.features.append("wrapping_cast")
            limit = torch.finfo(current.dtype).max  # beyond it only inf, which the clamp bounds
            lo, hi = max(lo, -limit), min(hi, limit)
            finite = self.new_value(f"torch.where({current.target} == {current.target}, {current.target}, 0.0)",
                                    "where", env)
            assert finite is not None
            clamped = self.new_value(f"torch.clamp({finite.target}, {float(lo)}, {float(hi)})", "clamp", env)
            assert clamped is not None
            current = clamped
        step = self.new_value(f"{current.target}.to({dtype})", f"cast_{str(dtype)[6:]}", env)
        assert step is not None, (current, dtype)
        return step

    def chain(self, start: Step, env: dict[str, torch.Tensor], count: int) -> Step:
        r = self.rng
        current = start
        for _ in range(count):
            for _attempt in range(12):
                step = self.op(current, env)
                # The chain keeps the full shape and stays contiguous (an op may take the layout
                # of a transposed operand; kernels index their inputs as contiguous).
                if step is not None and step.shape == current.shape and env[step.target].is_contiguous():
                    current = step
                    break
                if step is not None:
                    self.steps.remove(step)
            if r.random() < 0.15:  # a cast in the middle: rounds (bf16, fp16) or changes kind
                current = self.cast(current, _draw_dtype(r), env)
        return current

    def op(self, current: Step, env: dict[str, torch.Tensor]) -> Step | None:
        r = self.rng
        untranslated = r.random() < 0.04
        keyword_ops = self.program.seed >= FIRST_SEED_WITH_KEYWORD_OPS and not untranslated
        unary = {**_UNARY, **(_KEYWORD_UNARY if keyword_ops else {})}
        binary = {**_BINARY, **(_KEYWORD_BINARY if keyword_ops else {})}
        if r.random() < 0.55:
            names = [k for k in unary if (k in _UNTRANSLATED) == untranslated]
            name = r.choice(names)
            lo, hi = sorted(r.sample(_SCALARS, 2))
            code = unary[name].format(current.target, lo=_scalar_text(lo), hi=_scalar_text(hi),
                                      a=_scalar_text(r.choice([1.5, 0.5, -2.0, 3.0])),
                                      b=_scalar_text(r.choice([-0.25, 1.0, 0.75, -3.0, 2.0])))
            return self.new_value(code, name, env)
        names = [k for k in binary if (k in _UNTRANSLATED) == untranslated]
        name = r.choice(names)
        earlier = [s.target for s in self.steps if s.shape == current.shape and s.target != current.target]
        choice = r.random()
        if earlier and choice < 0.3:
            other = r.choice(earlier)
        elif choice < 0.8:
            other = self.operand_leaf(current.shape, env)
        else:
            other = _scalar_text(r.choice(_SCALARS + (2, 3, -1)))
        operands = [current.target, other] if r.random() < 0.7 else [other, current.target]
        value = _scalar_text(r.choice([0.5, -2.0])) if name in _KEYWORD_BINARY else None
        return self.new_value(binary[name].format(*operands, a=value), name, env)


# A second launch inside a region: `fz_copy(t)` launches a copy kernel on `t` (eagerly and in
# the generated code alike); when generating, a clone stands for it. Its output becomes an
# operand of the region, so the fusion of one launch meets another launch around it: an
# operand computed after the launch from a launch written in place (nothing may move it
# before the launch, see _fusion_candidates.LaunchFusion._hoist), a launch fused or refused first.
FIRST_SEED_WITH_SECOND_LAUNCHES = 19
FIRST_SEED_WITH_OUTPUTS_OVER_INPUTS = 42
FIRST_SEED_WITH_VIEWS_IN_REGIONS = 508
FIRST_SEED_WITH_KEYWORD_OPS = 611
FIRST_SEED_WITH_INDEX_OPS = 612
SECOND_LAUNCH = '''

@triton.jit
def fz_copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def fz_copy(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    wrap_triton(fz_copy_kernel)[(triton.cdiv(max(x.numel(), 1), 64),)](x, out, x.numel(), BLOCK=64)
    return out
'''
_EVAL_GLOBALS = {"torch": torch, "F": torch.nn.functional, "fz_copy": lambda t: t.clone()}


@dataclasses.dataclass
class Program:
    """One generated program: a kernel, the program's inputs, its pointwise regions."""

    seed: int
    index: int
    name: str
    kernel: KernelSpec
    leaves: list[Leaf]
    inputs: dict[str, str]             # kernel input -> the variable (region result or leaf) passed
    regions: list[Region]
    outputs: list[ProgramOutput]
    features: list[str]
    function: Any = None               # the imported program function

    def source(self) -> str:
        """The program function's source: `fill` fills the output buffers (to find what the kernel
        writes), `probe` receives each kernel output after the launch; both are None when
        compiled, so they are traced away. `raw` names kernel outputs (or inputs: the value before
        any view the launch takes of it) to return too, after the program's outputs. `given`
        (eager only): kernel input -> the value to launch with instead of the computed one."""
        lines = [f"def {self.name}({', '.join(l.name for l in self.leaves)}, fill=None, probe=None, raw=(), "
                 "given=None):"]
        device = f"{self.leaves[0].name}.device"
        for region in self.regions:
            if region.kind != "prologue":
                continue
            lines.append(f"    # prologue of {region.argument}")
            lines += [f"    {s.target} = {s.code}" for s in region.steps]
        lines.append("    if given is not None:  # laid out as computed here: the launch may view it")
        for arg in self.kernel.args:
            if arg.role == "input":
                var = self.inputs[arg.name]
                lines.append(f"        {var} = torch.empty_strided({var}.size(), {var}.stride(), dtype={var}.dtype, "
                             f"device={var}.device).copy_(given[{arg.name!r}]) if {arg.name!r} in given else {var}")
        kernel_inputs = {arg.name: self.inputs[arg.name] for arg in self.kernel.args if arg.role == "input"}
        for arg in self.kernel.args:
            if arg.role == "input":
                lines.append(f"    {arg.name} = {self.inputs[arg.name]}{arg.pass_code}")
        if raw_before := [a.over for a in self.kernel.args if a.over]:
            # the values launched with, before the kernel writes over them
            lines.append(f"    before = {{name: v.clone() for name, v in {{{', '.join(f'{n!r}: {self.inputs[n]}' for n in raw_before)}}}.items() "
                         "if name in raw}")
        for arg in self.kernel.args:
            if arg.role != "output":
                continue
            if arg.over:
                lines.append(f"    {arg.name} = {arg.over}")
                continue
            buffer = arg.name if not arg.pass_code else f"{arg.name}_buffer"
            lines.append(f"    {buffer} = torch.empty({arg.alloc_shape}, dtype={arg.dtype}, device={device})")
            lines.append(f"    if fill is not None:\n        {buffer}.fill_(fill)")
            if arg.pass_code:
                lines.append(f"    {arg.name} = {buffer}{arg.pass_code}")
        tensors = ", ".join(a.name for a in self.kernel.args)
        rest = "".join(f", {a}" for a in self.kernel.launch_args)
        constexprs = "".join(f", {k}={v}" for k, v in self.kernel.constexprs.items())
        lines.append(f"    wrap_triton({self.kernel.name})[{self.kernel.grid}]({tensors}{rest}{constexprs})")
        for arg in self.kernel.args:
            if arg.role == "output":
                lines.append(f"    {arg.name}_out = {self._out_base(arg)}")
        lines.append("    if probe is not None:")
        lines += [f"        probe[{a.name!r}] = {a.name}_out.clone()" for a in self.kernel.args if a.role == "output"]
        for region in self.regions:
            if region.kind == "epilogue":
                lines.append(f"    # epilogue of {region.argument}")
                lines += [f"    {s.target} = {s.code}" for s in region.steps]
        lines.append(f"    result = ({''.join(o.variable + ', ' for o in self.outputs)})")
        outs = ", ".join([f"{a.name!r}: {a.name}_out" for a in self.kernel.args if a.role == "output"]
                         + [f"{name!r}: {f'before.get({name!r}, {var})' if name in raw_before else var}"
                            for name, var in kernel_inputs.items()])
        lines.append(f"    return result + tuple({{{outs}}}[name].clone() for name in raw)  # kernel tensors asked for")
        return "\n".join(lines) + "\n"

    def _out_base(self, arg: KernelArg) -> str:
        """The output as the epilogue sees it: the buffer viewed back, the buffer the kernel got a
        view of, or the tensor the kernel got."""
        if arg.style == "view_back":
            return f"{arg.name}{arg.back_code}"
        if arg.style == "view_pass":
            return f"{arg.name}_buffer"
        if arg.over:
            return self.inputs[arg.over]
        return arg.name

    def make_inputs(self, device: str) -> list[torch.Tensor]:
        return [make_tensor(l.values, l.dtype, l.shape, device) for l in self.leaves]

    def module_source(self) -> str:
        return self.kernel.source + "\n\n" + self.source()

    def describe(self) -> str:
        regions = "; ".join(f"{r.kind} of {r.argument}: {', '.join(s.op for s in r.steps)}" for r in self.regions)
        args = ", ".join(f"{a.name} {a.role} {str(a.dtype)[6:]} {a.kernel_shape}"
                         + (f" ({a.style} {a.base_shape})" if a.style != "direct" else "") for a in self.kernel.args)
        return (f"seed={self.seed} index={self.index} kernel {self.kernel.family} [{args}]\n"
                f"#   features: {', '.join(sorted(set(self.kernel.features + self.features)))}\n"
                f"#   {regions or 'no pointwise code'}")

    def reproducer(self, note: str = "") -> str:
        """A standalone script: the kernel, the program, its inputs, and the check (eager against
        torch.compile with fusion off and on, on the elements the kernel writes)."""
        def literal(values: list) -> str:
            return "[" + ", ".join("nan" if isinstance(v, float) and math.isnan(v) else
                                   ("inf" if v == math.inf else "-inf") if isinstance(v, float) and math.isinf(v)
                                   else repr(v) for v in values) + "]"
        inputs = "\n".join(f"        make({literal(l.values)}, {l.dtype}, {l.shape})," for l in self.leaves)
        comment = "".join(f"# {line}\n" for line in note.splitlines())
        return _REPRODUCER.format(note=comment, describe=self.describe(), kernel=self.kernel.source + SECOND_LAUNCH,
                                  program=self.source(), name=self.name, inputs=inputs,
                                  outputs=[(o.source, o.view_shape) for o in self.outputs], dynamic=DYNAMIC)


_REPRODUCER = '''"""Fusion fuzzer reproducer (tests/fusion_fuzzer.py): {describe}
Run: python THIS_FILE (TRITON_INTERPRET=1 is set when there is no GPU)."""
{note}import os
import sys

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
import torch.nn.functional as F  # noqa: E402,F401

import torch_triton_hop  # noqa: E402
from torch_triton_hop import wrap_triton  # noqa: E402

nan, inf = float("nan"), float("inf")
DEVICE = "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


{kernel}

{program}

def make(values, dtype, shape):
    via = torch.float32 if dtype.is_floating_point else (torch.bool if dtype == torch.bool else torch.int64)
    return torch.tensor(values, dtype=via).to(dtype).reshape(shape).to(DEVICE)


def inputs():
    return [
{inputs}
    ]


def bits(t):
    t = t.detach().cpu()
    if t.dtype == torch.bool:
        return t.to(torch.uint8)
    width = {{1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}}[t.element_size()]
    return t.view(width)


def same(a, b):
    equal = bits(a) == bits(b)
    if a.is_floating_point():
        equal |= a.detach().cpu().isnan() & b.detach().cpu().isnan()
    return equal


if __name__ == "__main__":
    # Elements the kernel never writes are undefined: compare where runs into buffers filled
    # with 0 and with 1 agree.
    zeros, ones = {{}}, {{}}
    reference = {name}(*inputs(), fill=0, probe=zeros)
    {name}(*inputs(), fill=1, probe=ones)
    results = {{}}
    for fusion in (False, True):
        torch_triton_hop.config.fusion = fusion
        torch._dynamo.reset()
        results[fusion] = torch.compile({name}, fullgraph=True, dynamic={dynamic})(*inputs())
    failed = False
    for i, (source, view_shape) in enumerate({outputs}):
        written = same(zeros[source], ones[source]).reshape(view_shape) if source else \
            torch.ones(view_shape, dtype=torch.bool)  # a prologue's value: defined everywhere
        written = torch.broadcast_to(written, reference[i].shape)
        eager = reference[i].cpu()[written]
        unfused, fused = results[False][i].cpu()[written], results[True][i].cpu()[written]
        # each element: eager's, or (where inductor itself differs from eager) the unfused compile's
        allowed = same(fused, eager) | same(fused, unfused)
        ok = bool(allowed.all())
        print(f"output {{i}} ({{reference[i].dtype}}): fused==eager {{bool(same(fused, eager).all())}}, "
              f"unfused==eager {{bool(same(unfused, eager).all())}}, fused==unfused {{bool(same(fused, unfused).all())}}")
        if not ok:
            failed = True
            bad = (~allowed).nonzero().flatten()[:8]
            print("  first differing written elements: eager", eager[bad].tolist(), "unfused", unfused[bad].tolist(),
                  "fused", fused[bad].tolist())
    sys.exit(1 if failed else 0)
'''


class _ProgramBuilder:
    def __init__(self, seed: int, index: int) -> None:
        self.rng = random.Random(f"fusion:{seed}:{index}")
        self.seed, self.index = seed, index
        self.name = f"fz_{seed}_{index}"
        self.counter = 0
        self.leaves: list[Leaf] = []
        self.features: list[str] = []
        # Second launches draw from their own stream, and only from FIRST_SEED_WITH_SECOND_LAUNCHES
        # on: every program of an earlier seed is as it was when its failures were recorded.
        self.second_rng = random.Random(f"fusion-second:{seed}:{index}")
        self.second_launches = seed >= FIRST_SEED_WITH_SECOND_LAUNCHES and self.second_rng.random() < 0.25
        # Likewise outputs written over the kernel's own input, from FIRST_SEED_WITH_OUTPUTS_OVER_INPUTS.
        self.over_input = (seed >= FIRST_SEED_WITH_OUTPUTS_OVER_INPUTS
                           and random.Random(f"fusion-over-input:{seed}:{index}").random() < 0.3)
        # And pointwise code under a transposed operand, from FIRST_SEED_WITH_VIEWS_IN_REGIONS.
        self.views_in_regions = seed >= FIRST_SEED_WITH_VIEWS_IN_REGIONS
        self.views_rng = random.Random(f"fusion-views:{seed}:{index}")
        # And operands read at other indices (flip, roll, pad), from FIRST_SEED_WITH_INDEX_OPS.
        self.index_ops = seed >= FIRST_SEED_WITH_INDEX_OPS
        self.index_rng = random.Random(f"fusion-index:{seed}:{index}")

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def leaf(self, dtype: torch.dtype, shape: tuple[int, ...]) -> Leaf:
        leaf = Leaf(name=f"a{len(self.leaves)}", dtype=dtype, shape=shape,
                    values=_random_values(self.rng, dtype, _numel(shape)))
        self.leaves.append(leaf)
        return leaf

    def build(self) -> Program:
        r = self.rng
        builder = _KernelBuilder(r, self.name + "_kernel", over_input=self.over_input)
        kernel = getattr(builder, r.choices(["flat", "rows", "tile2d"], weights=[4, 3, 2])[0])()
        regions: list[Region] = []
        inputs: dict[str, str] = {}
        prologue_outputs: list[ProgramOutput] = []
        for arg in kernel.args:
            if arg.role != "input":
                continue
            region = _RegionBuilder(self, "prologue", arg.name)
            env: dict[str, torch.Tensor] = {}
            leaf = self.leaf(_draw_dtype(r) if r.random() < 0.8 else arg.dtype, arg.base_shape)
            if r.random() < 0.15:  # no prologue: the program's input goes to the kernel as it is
                leaf.dtype = arg.dtype
                leaf.values = _random_values(r, arg.dtype, _numel(arg.base_shape))
                inputs[arg.name] = leaf.name
                continue
            env[leaf.name] = make_tensor(leaf.values, leaf.dtype, leaf.shape, "cpu")
            start = Step(target=leaf.name, code="", op="input", dtype=leaf.dtype, shape=arg.base_shape)
            current = region.chain(start, env, r.randint(1, 4))
            if current.dtype in FLOATS + (torch.float64,) and r.random() < 0.6:
                # f(0) != 0: the masked-off lanes of a load without other= would see it
                step = region.new_value(f"({current.target} * {r.choice([1.5, 0.5, -2.0])} + "
                                        f"{r.choice([-0.25, 1.0, 0.75, -3.0])})", "affine", env)
                current = step or current
                self.features.append("prologue_nonzero_at_0")
            current = region.cast(current, arg.dtype, env)
            if current is start:  # the kernel's input must be a computed tensor: one op at least
                current = region.new_value(f"({start.target} + 0)" if arg.dtype != torch.bool
                                           else f"torch.logical_not(torch.logical_not({start.target}))", "add", env)
            inputs[arg.name] = current.target
            regions.append(Region("prologue", arg.name, region.steps, current.target))
            # The prologue's value returned too (the fused kernel stores it); drawn from its own
            # stream, so the programs of earlier seeds stay as they were otherwise.
            if random.Random(f"{self.seed}:{self.index}:{arg.name}:returned").random() < 0.2:
                self.features.append("prologue_used_twice")
                prologue_outputs.append(ProgramOutput(current.target, "", arg.base_shape, arg.base_shape))
        outputs: list[ProgramOutput] = []
        for arg in kernel.args:
            if arg.role != "output":
                continue
            base = f"{arg.name}_out"
            if r.random() < 0.15:  # returned as the kernel wrote it
                outputs.append(ProgramOutput(base, arg.name, arg.base_shape, arg.base_shape))
                continue
            region = _RegionBuilder(self, "epilogue", arg.name)
            env = {base: make_tensor(_random_values(r, arg.dtype, _numel(arg.base_shape)), arg.dtype,
                                     arg.base_shape, "cpu")}
            start = Step(target=base, code="", op="kernel_output", dtype=arg.dtype, shape=arg.base_shape)
            current = region.chain(start, env, r.randint(1, 4))
            if r.random() < 0.35:
                current = region.cast(current, _draw_dtype(r), env)
            if current is start:
                current = region.new_value(f"torch.logical_not({base})" if arg.dtype == torch.bool
                                           else f"({base} + 1)", "add", env)
            regions.append(Region("epilogue", arg.name, region.steps, current.target))
            outputs.append(ProgramOutput(current.target, arg.name, arg.base_shape, current.shape))
            if r.random() < 0.08:  # the raw output is used too: the epilogue must not fuse
                self.features.append("output_used_twice")
                outputs.append(ProgramOutput(base, arg.name, arg.base_shape, arg.base_shape))
        return Program(seed=self.seed, index=self.index, name=self.name, kernel=kernel, leaves=self.leaves,
                       inputs=inputs, regions=regions, outputs=outputs + prologue_outputs,
                       features=sorted(set(self.features)))


def generate_program(seed: int, index: int) -> Program:
    """Program `index` of `seed`: the same whatever batch it is generated in."""
    return _ProgramBuilder(seed, index).build()


HEADER = '''"""Generated by tests/fusion_fuzzer.py: random programs around user kernels."""
import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from torch_triton_hop import wrap_triton
''' + SECOND_LAUNCH


def load_programs(programs: list[Program], directory: str, module_name: str) -> None:
    """Write the programs' kernels and functions to `directory/module_name.py` and import it
    (triton's JIT and the fusion's source rewrite read kernels with inspect: real files)."""
    module = import_generated(directory, module_name, HEADER + "".join("\n\n" + p.module_source() for p in programs))
    for program in programs:
        program.function = getattr(module, program.name)


# --- comparing ------------------------------------------------------------------------------------

def _overflows_inductor_cpu(program: Program) -> bool:
    """Whether inductor's C++ code (torch 2.13) for the program writes out of bounds: it lowers
    add(a, b, alpha=2) of bools to `a | b * 2` of int64 vectors and, where that is a region's
    result, stores them into the bool buffer, 8 bytes an element, corrupting the heap (the
    process dies later, in whatever allocates next). Fusion on or off alike; such programs are
    not compiled on CPU. (Converted to another dtype first, as in seed 7 #1741, it is fine.)"""
    return any(region.steps and region.steps[-1].op == "add_alpha" and region.steps[-1].dtype == torch.bool
               for region in program.regions)


def _bits(t: torch.Tensor) -> torch.Tensor:
    t = t.detach().cpu()
    if t.dtype == torch.bool:
        return t.to(torch.uint8)
    return t.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def same_bits(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Elementwise: equal bit for bit, or both NaN (any payload)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return torch.zeros(a.shape, dtype=torch.bool)
    equal = _bits(a) == _bits(b)
    if a.is_floating_point():
        equal |= a.detach().cpu().isnan() & b.detach().cpu().isnan()
    return equal


def _ulps(a: torch.Tensor, b: torch.Tensor) -> int:
    """The largest distance in units in the last place between finite floats (for reports)."""
    if not a.is_floating_point() or a.dtype != b.dtype or a.numel() == 0:
        return -1
    finite = a.isfinite() & b.isfinite()
    if not finite.any():
        return -1

    def ordered(x: torch.Tensor) -> torch.Tensor:  # IEEE bits as a monotonic integer
        i = _bits(x[finite]).to(torch.int64)
        sign_bit = 1 << (8 * x.element_size() - 1)
        i = torch.where(i < 0, i + 2 * sign_bit, i) if x.element_size() < 8 else i
        return torch.where(i >= sign_bit, sign_bit - i, i)
    return int((ordered(a) - ordered(b)).abs().max())


@dataclasses.dataclass
class Reference:
    """What eager computed: outputs (buffers filled with 0) and where each output is defined."""

    outputs: list[torch.Tensor]
    written: list[torch.Tensor]
    kernel_outputs: dict[str, torch.Tensor] = dataclasses.field(default_factory=dict)  # before any epilogue
    kernel_written: dict[str, torch.Tensor] = dataclasses.field(default_factory=dict)


def run_eager(program: Program, device: str) -> Reference:
    zeros: dict[str, torch.Tensor] = {}
    ones: dict[str, torch.Tensor] = {}
    outputs = program.function(*program.make_inputs(device), fill=0, probe=zeros)
    program.function(*program.make_inputs(device), fill=1, probe=ones)
    written = []
    for out, spec in zip(outputs, program.outputs):
        if not spec.source:  # a prologue's value: defined everywhere
            written.append(torch.ones(tuple(out.shape), dtype=torch.bool))  # on CPU, as the outputs kept
            continue
        # Written elements hold the same bits in both runs (NaN included); the others hold the fill.
        raw = same_bits(zeros[spec.source], ones[spec.source])
        written.append(torch.broadcast_to(raw.reshape(spec.view_shape), tuple(out.shape)))
    return Reference(outputs=[o.detach().cpu() for o in outputs], written=written,
                     kernel_outputs={name: t.detach().cpu() for name, t in zeros.items()},
                     kernel_written={name: same_bits(zeros[name], ones[name]) for name in zeros})


# --- the fusion log -------------------------------------------------------------------------------

@dataclasses.dataclass
class FusionRecord:
    """What the fusion pass said about one program's launch."""

    fused: dict[str, str] = dataclasses.field(default_factory=dict)    # argument -> "prologue" / "epilogue"
    refused: dict[str, str] = dataclasses.field(default_factory=dict)  # argument -> reason
    nothing: str = ""      # a reason for the whole launch ("nothing fused: ...")
    seen: bool = False     # the pass looked at the launch


class _Capture(logging.Handler):
    """The fusion pass's debug log and every warning of the package, while a batch compiles."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.fusion: list[logging.LogRecord] = []
        self.warnings: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            try:
                self.warnings.append(record.getMessage()[:2000])
            except Exception:  # noqa: BLE001
                self.warnings.append(str(record.msg)[:2000])
        if record.name == "torch_triton_hop._fusion" and isinstance(record.msg, str) \
                and record.msg.startswith("launch %s (kernel %s)"):
            self.fusion.append(record)


@contextlib.contextmanager
def _capturing() -> Any:
    package = logging.getLogger("torch_triton_hop")
    fusion = logging.getLogger("torch_triton_hop._fusion")
    capture = _Capture()
    saved = fusion.level
    fusion.setLevel(logging.DEBUG)
    package.addHandler(capture)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield capture
        finally:
            package.removeHandler(capture)
            fusion.setLevel(saved)
            package_dir = os.path.dirname(sys.modules["torch_triton_hop"].__file__)
            capture.warnings += [f"{w.category.__name__}: {w.message}" for w in caught
                                 if w.filename.startswith(package_dir) or "torch_triton_hop" in str(w.message)]


def _fusion_records(capture: _Capture, programs: list[Program]) -> dict[str, FusionRecord]:
    """FusionRecord per program name, from the log's kernel names."""
    by_kernel = {p.kernel.name: p.name for p in programs}
    records = {p.name: FusionRecord() for p in programs}
    for record in capture.fusion:
        args = record.args if isinstance(record.args, tuple) else ()
        if len(args) < 3 or args[1] not in by_kernel:
            continue
        rec = records[by_kernel[args[1]]]
        rec.seen = True
        program = next(p for p in programs if p.name == by_kernel[args[1]])
        roles = {a.name: a.role for a in program.kernel.args}
        if "): fused" in record.msg and isinstance(args[2], dict):
            rec.fused.update({arg: "epilogue" if roles.get(arg) == "output" else "prologue" for arg in args[2]})
            if len(args) > 3 and isinstance(args[3], dict):
                rec.refused.update({k: str(v) for k, v in args[3].items()})
        elif isinstance(args[2], dict):
            rec.refused.update({k: str(v) for k, v in args[2].items()})
        else:  # "nothing fused: <why>"; the message, not its last argument (a location, say)
            rec.nothing = record.getMessage().partition("nothing fused")[2].lstrip(": (").rstrip(")")
    return records


def reason_class(reason: str) -> str:
    """A refusal reason without the names of nodes, kernels and numbers (to count by reason)."""
    reason = reason.split("\n")[0]
    reason = re.sub(r"fz_\d+_\d+\w*", "<kernel>", reason)
    reason = re.sub(r"\b[a-z_][a-z_0-9]*?_\d+\b", "<node>", reason)
    reason = re.sub(r"\b(v|a)\d+\b", "<node>", reason)
    reason = re.sub(r"\d+", "N", reason)
    return reason[:160]


# --- running batches --------------------------------------------------------------------------------

@dataclasses.dataclass
class Compiled:
    """One compile of a list of programs: outputs per program (or the exception), the log."""

    outputs: dict[str, list[torch.Tensor]]
    errors: dict[str, str]
    warnings: dict[str, list[str]]
    records: dict[str, FusionRecord]
    seconds: float = 0.0


def _compile_once(programs: list[Program], device: str, fusion: bool,
                  raw: dict[str, tuple[str, ...]] | None = None) -> tuple[Any, _Capture, str, str]:
    """All `programs` as one compiled function (one dynamo graph, one inductor compile);
    returns (outputs or None, the log, the error, the error's traceback). `raw`: program name ->
    kernel outputs it returns too."""
    import traceback

    import torch_triton_hop

    functions = [p.function for p in programs]
    inputs = [p.make_inputs(device) for p in programs]

    extra = [(raw or {}).get(p.name, ()) for p in programs]

    def batch(inputs: list[list[torch.Tensor]]) -> list[Any]:
        return [f(*args, raw=names) for f, args, names in zip(functions, inputs, extra)]

    saved = torch_triton_hop.config.fusion
    torch_triton_hop.config.fusion = fusion
    torch._dynamo.reset()
    try:
        with _capturing() as capture:
            try:
                outputs = torch.compile(batch, fullgraph=True, dynamic=DYNAMIC)(inputs)
                return [[o.detach().cpu() for o in out] for out in outputs], capture, "", ""
            except Exception as e:  # noqa: BLE001 - a failure to report, attributed by the caller
                return None, capture, f"{type(e).__name__}: {str(e)[:3000]}", "".join(traceback.format_exception(e))
    finally:
        torch_triton_hop.config.fusion = saved
        torch._dynamo.reset()


def _named(programs: list[Program], text: str) -> list[Program]:
    """The programs whose kernel (or fused kernel) `text` names."""
    return [p for p in programs if re.search(rf"\b{p.kernel.name}(_fused)?\b", text)]


def compile_programs(programs: list[Program], device: str, fusion: bool,
                     raw: dict[str, tuple[str, ...]] | None = None) -> Compiled:
    """Compile and run `programs` together. A batch that raises is split: the programs whose
    kernels the traceback names apart from the rest, else in halves, until each failure stands
    alone; warnings that name no kernel are attributed the same way."""
    start = time.perf_counter()
    outputs, capture, error, trace = _compile_once(programs, device, fusion, raw)
    records = _fusion_records(capture, programs)
    attributed: dict[str, list[str]] = {p.name: [] for p in programs}
    unattributed = []
    for message in capture.warnings:
        owners = _named(programs, message)
        for owner in owners:
            attributed[owner.name].append(message)
        if not owners:
            unattributed.append(message)
    if len(programs) == 1:
        attributed[programs[0].name] += unattributed
        if error:
            return Compiled({}, {programs[0].name: error}, attributed, records, time.perf_counter() - start)
        return Compiled({programs[0].name: outputs[0]}, {}, attributed, records, time.perf_counter() - start)
    if not error and not unattributed:
        return Compiled({p.name: out for p, out in zip(programs, outputs)}, {}, attributed, records,
                        time.perf_counter() - start)
    blamed = _named(programs, trace) if error else []
    if blamed and len(blamed) < len(programs):
        parts = [blamed, [p for p in programs if p not in blamed]]
    else:
        parts = [programs[:len(programs) // 2], programs[len(programs) // 2:]]
    compiled = [compile_programs(part, device, fusion, raw) for part in parts]
    if not error:  # this compile's outputs and records stand; the parts say whose warnings those were
        for part in compiled:
            for name, messages in part.warnings.items():
                attributed[name] = sorted(set(attributed[name]) | set(messages))
        return Compiled({p.name: out for p, out in zip(programs, outputs)}, {}, attributed, records,
                        time.perf_counter() - start)
    merged = Compiled({}, {}, {}, {})
    for part in compiled:
        merged.outputs.update(part.outputs)
        merged.errors.update(part.errors)
        merged.warnings.update(part.warnings)
        merged.records.update(part.records)
    merged.seconds = time.perf_counter() - start
    return merged


@dataclasses.dataclass
class Mismatch:
    """One output of one program that fusion changed."""

    output: int
    dtype: str
    count: int             # written elements that differ
    total: int             # written elements
    eager: list            # the first differing values
    unfused: list
    fused: list
    max_ulps: int          # largest float distance fused vs eager (-1: not floats)
    unfused_equals_eager: bool


@dataclasses.dataclass
class Result:
    """The verdict for one program."""

    program: Program
    verdict: str                       # "ok" / "mismatch" / "compile_error" / "warning" / "invalid" /
    #                                    "inductor_error" (raises where nothing fused, or as the unfused
    #                                    compile does: not the fusion's)
    record: FusionRecord = dataclasses.field(default_factory=FusionRecord)
    mismatches: list[Mismatch] = dataclasses.field(default_factory=list)
    detail: str = ""
    warnings: list[str] = dataclasses.field(default_factory=list)
    unfused_differs: bool = False      # inductor without fusion differs from eager (not a failure)

    @property
    def failed(self) -> bool:
        return self.verdict in ("mismatch", "compile_error", "warning")

    def summary(self) -> str:
        lines = [f"{self.verdict}: {self.program.describe()}"]
        if self.record.fused:
            lines.append(f"#   fused: {self.record.fused}")
        for arg, reason in self.record.refused.items():
            lines.append(f"#   not fused {arg}: {reason.splitlines()[0][:300]}")
        if self.record.nothing:
            lines.append(f"#   nothing fused: {self.record.nothing.splitlines()[0][:300]}")
        for m in self.mismatches:
            lines.append(f"#   output {m.output} ({m.dtype}): {m.count} of {m.total} written elements differ "
                         f"(unfused {'==' if m.unfused_equals_eager else '!='} eager, max {m.max_ulps} ulps); "
                         f"eager {m.eager} unfused {m.unfused} fused {m.fused}")
        if self.detail:
            lines.append("#   " + self.detail.replace("\n", "\n#   ")[:3000])
        for w in self.warnings:
            lines.append("#   warning: " + w.replace("\n", "\n#   ")[:2000])
        return "\n".join(lines)

    def report(self) -> str:
        """The summary and a standalone reproducer."""
        return self.program.reproducer(self.summary())


def _compare(reference: Reference, compiled: list[torch.Tensor]) -> list[int]:
    """Indices of the outputs that differ from eager on written elements."""
    bad = []
    for i, (ref, out, written) in enumerate(zip(reference.outputs, compiled, reference.written)):
        if ref.dtype != out.dtype or ref.shape != out.shape or not bool(same_bits(ref, out)[written].all()):
            bad.append(i)
    return bad


def _error_lines(error: str) -> set[str]:
    """The lines of an exception's message that say what failed, without paths and numbers (a C++
    compile error names its temporary files and lines)."""
    lines = error.splitlines()[:1] + [line for line in error.splitlines() if "error" in line]
    return {re.sub(r"\S*/\S*|\d+", "", line).strip() for line in lines}


def run_batch(programs: list[Program], device: str | None = None) -> list[Result]:
    """Check loaded `programs` (load_programs): eager, fused compile of all, unfused compile of
    the ones fusion changed; see the module's docstring."""
    device = device or fuzz_device()
    results: dict[str, Result] = {}
    references: dict[str, Reference] = {}
    valid = []
    for program in programs:
        if device == "cpu" and _overflows_inductor_cpu(program):
            results[program.name] = Result(program, "invalid", detail="inductor's C++ code for add(alpha=) of bools "
                                           "stores int64 vectors into the bool buffer (a heap overflow: seed 5 #3771)")
            continue
        try:
            references[program.name] = run_eager(program, device)
            valid.append(program)
        except Exception as e:  # noqa: BLE001 - a program the generator should not have made
            results[program.name] = Result(program, "invalid", detail=f"eager: {type(e).__name__}: {str(e)[:1000]}")
    fused = compile_programs(valid, device, fusion=True) if valid else Compiled({}, {}, {}, {})
    suspects, raised = [], []
    for program in valid:
        result = Result(program, "ok", record=fused.records.get(program.name, FusionRecord()),
                        warnings=fused.warnings.get(program.name, []))
        results[program.name] = result
        if program.name in fused.errors:
            # Nothing fused: the graph is the unfused one, so the error is inductor's own (reported,
            # not the fusion's). The pass logs before inductor's codegen, so the record is there.
            result.verdict = "compile_error" if result.record.fused or not result.record.seen else "inductor_error"
            result.detail = fused.errors[program.name]
            if result.verdict == "compile_error":  # fused, or raised before the pass ran (Dynamo)
                raised.append(program)
        elif _compare(references[program.name], fused.outputs[program.name]) and result.record.fused:
            # Where nothing fused, this program's part of the graph is the unfused one: a
            # difference from eager is inductor's own, no need to compile it again to know.
            suspects.append(program)
        elif _compare(references[program.name], fused.outputs[program.name]):
            result.unfused_differs = True
        if result.warnings and result.verdict == "ok":
            result.verdict = "warning"
    # Something fused, or the compile raised before the fusion pass saw the launch, and the
    # compile raised: where the unfused compile raises the same error, it is torch's own
    # (inductor's C++ code for the ops left unfused; Dynamo's `ConstantVariable` of a SymInt
    # stride under dynamic=True), not the fusion's.
    unfused = compile_programs(raised, device, fusion=False) if raised else Compiled({}, {}, {}, {})
    for program in raised:
        error = unfused.errors.get(program.name)
        if error is not None and _error_lines(error) == _error_lines(results[program.name].detail):
            results[program.name].verdict = "inductor_error"
    unfused = compile_programs(suspects, device, fusion=False) if suspects else Compiled({}, {}, {}, {})
    for program in suspects:
        result = results[program.name]
        reference = references[program.name]
        got = fused.outputs[program.name]
        if program.name in unfused.errors:
            # Without fusion inductor cannot compile the program (its C++ code for the ops left
            # unfused, say): nothing to hold the fused result to where it differs from eager.
            result.verdict, result.detail = "inductor_error", "the unfused compile raised: " + unfused.errors[program.name]
            continue
        base = unfused.outputs[program.name]
        prologue_fused = "prologue" in result.record.fused.values()
        mixed: list[Reference | None] = []  # _mixed_reference, computed when first needed
        for i in _compare(reference, got):
            ref, out, old, written = reference.outputs[i], got[i], base[i], reference.written[i]
            if not prologue_fused and program.outputs[i].source not in result.record.fused:
                # Nothing fused feeds this output: the kernel stored what it stores unfused, and
                # inductor's own code computed the rest, in a graph that fusion changed elsewhere
                # (so, on CPU, in other C++ loops: a 1-ulp sin where vectorized code met scalar).
                result.unfused_differs = True
                continue
            if ref.dtype != out.dtype or ref.shape != out.shape:
                result.mismatches.append(Mismatch(i, f"{ref.dtype}{tuple(ref.shape)} vs {out.dtype}{tuple(out.shape)}",
                                                  -1, -1, [], [], [], -1, False))
                continue
            unfused_ok = bool(same_bits(ref, old)[written].all())
            result.unfused_differs |= not unfused_ok
            # Element by element, the fused result must be eager's or the unfused compile's: where
            # inductor itself differs from eager (its C++ code's numerics), fusion may keep either;
            # or the kernel's result on a fused prologue's exact value and inductor's values of
            # the inputs it left unfused (seed 10 #430).
            allowed = same_bits(ref, out) | same_bits(old, out)
            if prologue_fused and not bool(allowed[written].all()):
                mixed = mixed or [_mixed_reference(program, result.record, device)]
                if mixed[0] is not None:
                    allowed |= same_bits(mixed[0].outputs[i], out)
            if bool(allowed[written].all()):
                continue
            differ = ~allowed & written
            first = differ.flatten().nonzero().flatten()[:6]
            result.mismatches.append(Mismatch(
                output=i, dtype=str(ref.dtype), count=int(differ.sum()), total=int(written.sum()),
                eager=ref.flatten()[first].tolist(), unfused=old.flatten()[first].tolist(),
                fused=out.flatten()[first].tolist(), max_ulps=_ulps(ref[differ], out[differ]),
                unfused_equals_eager=unfused_ok))
        kernel_side = {program.outputs[m.output].source for m in result.mismatches if m.count >= 0} - set(
            result.record.fused) - {""}
        if kernel_side and prologue_fused and not mixed:
            mixed = [_mixed_reference(program, result.record, device)]
        if kernel_side and _kernel_outputs_agree(program, reference, sorted(kernel_side), device,
                                                 mixed[0] if mixed else None):
            # What the kernel stored equals eager's (or the unfused compile's) in every output
            # whose epilogue was not fused: the difference is inductor's code after the kernel.
            result.mismatches = [m for m in result.mismatches if program.outputs[m.output].source not in kernel_side]
            result.unfused_differs = True
        if result.mismatches:
            result.verdict = "mismatch"
    return [results[p.name] for p in programs]


def _mixed_reference(program: Program, record: FusionRecord, device: str) -> Reference | None:
    """Eager's results with the kernel inputs that fusion left unfused launched as the unfused
    compile computed them: where inductor's C++ code computes an unfused prologue otherwise than
    eager, a kernel that also reads a fused (exact) prologue stores neither eager's values nor the
    unfused compile's, but this. None where every input fused or the values cannot be had."""
    names = tuple(a.name for a in program.kernel.args if a.role == "input" and record.fused.get(a.name) != "prologue")
    if not names:
        return None
    unfused = compile_programs([program], device, fusion=False, raw={program.name: names})
    if program.name in unfused.errors:
        return None
    count = len(program.outputs)
    given = {name: unfused.outputs[program.name][count + k].to(device) for k, name in enumerate(names)}
    probe: dict[str, torch.Tensor] = {}
    try:
        outputs = program.function(*program.make_inputs(device), fill=0, probe=probe, given=given)
    except Exception:  # noqa: BLE001 - a value eager cannot lay out as it computed it (an expanded view)
        return None
    return Reference(outputs=[o.detach().cpu() for o in outputs], written=[],
                     kernel_outputs={name: t.detach().cpu() for name, t in probe.items()})


def _kernel_outputs_agree(program: Program, reference: Reference, names: list[str], device: str,
                          mixed: Reference | None = None) -> bool:
    """Compiled with fusion on and off, returning kernel outputs `names` too: does the fused
    program's kernel store, in each, what eager's or the unfused program's kernel stores (or
    the kernel on `mixed` inputs, _mixed_reference)?"""
    raw = {program.name: tuple(names)}
    fused = compile_programs([program], device, fusion=True, raw=raw)
    unfused = compile_programs([program], device, fusion=False, raw=raw)
    if program.name in fused.errors or program.name in unfused.errors:
        return False
    count = len(program.outputs)
    for k, name in enumerate(names):
        got, old = fused.outputs[program.name][count + k], unfused.outputs[program.name][count + k]
        eager, written = reference.kernel_outputs[name], reference.kernel_written[name]
        allowed = same_bits(eager, got) | same_bits(old, got)
        if mixed is not None:
            allowed |= same_bits(mixed.kernel_outputs[name], got)
        if not bool(allowed[written].all()):
            return False
    return True


def check_range(seed: int, start: int, count: int, directory: str, device: str | None = None) -> list[Result]:
    """Generate, load and check programs start .. start + count - 1 of `seed` as one batch."""
    return check_programs([generate_program(seed, i) for i in range(start, start + count)], directory, device)


def check_programs(programs: list[Program], directory: str, device: str | None = None) -> list[Result]:
    """Load and check `programs` as one batch."""
    first = programs[0]
    load_programs(programs, directory, f"fuzz_fusion_{first.seed}_{first.index}_{os.getpid()}")
    return run_batch(programs, device)


# --- minimizing ---------------------------------------------------------------------------------

def _still_fails(program: Program, directory: str, device: str, signature: str) -> bool:
    try:
        load_programs([program], directory, f"fuzz_fusion_min_{program.name}_{os.getpid()}_{time.monotonic_ns()}")
        (result,) = run_batch([program], device)
    except Exception:  # noqa: BLE001 - a reduction that breaks the program
        return False
    return result.failed and failure_signature(result) == signature


def failure_signature(result: Result) -> str:
    """What kind of failure: the verdict and which outputs / what error (to keep while minimizing)."""
    if result.verdict == "mismatch":
        return "mismatch:" + ",".join(str(m.output) for m in result.mismatches)
    if result.verdict == "compile_error":
        return "compile_error:" + reason_class(result.detail)[:60]
    return result.verdict


def minimize(result: Result, directory: str, device: str | None = None, budget: int = 24,
             log: Callable[[str], None] = lambda s: None) -> Result:
    """A smaller program that fails the same way: each step of the pointwise code (last first)
    replaced by its operand, each epilogue not involved dropped; at most `budget` compiles."""
    device = device or fuzz_device()
    program = result.program
    signature = failure_signature(result)
    tries = 0
    for region_index in range(len(program.regions)):
        region = program.regions[region_index]
        position = len(region.steps) - 1
        while position >= 0 and tries < budget:
            step = region.steps[position]
            operands = [v for v in re.findall(r"\b[av]\d+\b|\b\w+_out\b", step.code)]
            replaced = False
            for operand in dict.fromkeys(operands):
                candidate = _replace_step(program, region_index, position, operand)
                if candidate is None:
                    continue
                tries += 1
                if _still_fails(candidate, directory, device, signature):
                    log(f"  minimized: {step.target} = {step.code} -> {operand}")
                    program = candidate
                    replaced = True
                    break
                if tries >= budget:
                    break
            region = program.regions[region_index]
            position = min(position - (0 if replaced else 1), len(region.steps) - 1)
    load_programs([program], directory, f"fuzz_fusion_min_{program.name}_{os.getpid()}_final")
    (final,) = run_batch([program], device)
    return final if final.failed else result


def _replace_step(program: Program, region_index: int, position: int, operand: str) -> Program | None:
    """`program` with step `position` of region `region_index` removed, its uses reading `operand`
    (None if that changes the dtype or shape the region must produce)."""
    region = program.regions[region_index]
    step = region.steps[position]
    if step.target == region.result and region.kind == "prologue":
        return None  # the kernel's input keeps its dtype (the step is most often the final cast)
    steps = [dataclasses.replace(s, code=re.sub(rf"\b{step.target}\b", operand, s.code))
             for s in region.steps if s is not step]
    result = operand if region.result == step.target else region.result
    if region.kind == "prologue" and not any(s.target == result for s in steps):
        return None
    regions = list(program.regions)
    regions[region_index] = Region(region.kind, region.argument, steps, result)
    outputs = [dataclasses.replace(o, variable=result) if o.variable == step.target else o for o in program.outputs]
    inputs = {k: (result if v == step.target else v) for k, v in program.inputs.items()}
    # Inputs no code reads any more leave the program (the first stays: it names the device).
    text = " ".join(s.code for r in regions for s in r.steps) + " " + " ".join(inputs.values())
    leaves = [l for i, l in enumerate(program.leaves) if i == 0 or re.search(rf"\b{l.name}\b", text)]
    candidate = dataclasses.replace(program, regions=regions, outputs=outputs, inputs=inputs, leaves=leaves,
                                    function=None)
    # The shapes and dtypes must still be the kernel's: check on small CPU tensors.
    env = {l.name: make_tensor(l.values, l.dtype, l.shape, "cpu") for l in program.leaves}
    for arg in program.kernel.args:
        if arg.role == "output":
            env[f"{arg.name}_out"] = torch.zeros(arg.base_shape, dtype=arg.dtype)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for r in regions:
                for s in r.steps:
                    env[s.target] = eval(s.code, _EVAL_GLOBALS, env)  # noqa: S307
    except Exception:  # noqa: BLE001
        return None
    for arg in program.kernel.args:
        if arg.role == "input":
            value = env[inputs[arg.name]]
            if value.dtype != arg.dtype or tuple(value.shape) != arg.base_shape:
                return None
    for o in outputs:
        if tuple(env[o.variable].shape) != o.shape:
            return None
    return candidate


# --- summaries ------------------------------------------------------------------------------------

def result_record(result: Result, seconds: float = 0.0) -> dict[str, Any]:
    """A JSON-able record of one result (benchmarks/fuzz_fusion.py's progress file)."""
    program = result.program
    return {"index": program.index, "verdict": result.verdict, "family": program.kernel.family,
            "features": sorted(set(program.kernel.features + program.features)),
            "fused": result.record.fused, "refused": {k: reason_class(v) for k, v in result.record.refused.items()},
            "nothing": reason_class(result.record.nothing) if result.record.nothing else "",
            "unfused_differs": result.unfused_differs, "seconds": seconds,
            "summary": result.summary() if result.verdict != "ok" else ""}


def summarize(results: list[Result], seconds: float | None = None) -> str:
    return summarize_records([result_record(r) for r in results], seconds)


def summarize_records(records: list[dict[str, Any]], seconds: float | None = None) -> str:
    """Counts: verdicts, programs that fused, prologues / epilogues, refusals by reason."""
    total = len(records)
    verdicts = {v: sum(r["verdict"] == v for r in records) for v in ("ok", "mismatch", "compile_error", "warning",
                                                                     "inductor_error", "invalid")}
    valid = total - verdicts["invalid"]
    fused = sum(bool(r["fused"]) for r in records)
    kinds = [kind for r in records for kind in r["fused"].values()]
    lines = [f"programs: {total} ({verdicts['invalid']} invalid)"
             + (f" in {seconds:.1f} s, {total / seconds:.2f} programs/s" if seconds else ""),
             "verdicts: " + ", ".join(f"{k} {v}" for k, v in verdicts.items()),
             f"fused: {fused} of {valid} programs ({kinds.count('prologue')} prologues, {kinds.count('epilogue')} "
             f"epilogues); inductor itself differed from eager in {sum(r['unfused_differs'] for r in records)}"]
    reasons: dict[str, int] = {}
    for r in records:
        for reason in r["refused"].values():
            reasons[reason] = reasons.get(reason, 0) + 1
        if r["nothing"]:
            reasons["(launch) " + r["nothing"]] = reasons.get("(launch) " + r["nothing"], 0) + 1
    if reasons:
        lines.append("not fused, by reason:")
        lines += [f"  {k:4d} x {reason}" for reason, k in sorted(reasons.items(), key=lambda kv: -kv[1])[:30]]
    return "\n".join(lines)
