"""Command line: ``python -m torch_triton_hop explain MODULE:KERNEL NAME=VALUE ...``.

Values: ``f32[16]`` (a tensor of that dtype and shape), ``16``, ``2.5``, ``None``,
``True``. Prints which tensor arguments the kernel reads and writes, and the source
lines that write each one.

    $ python -m torch_triton_hop explain my_pkg.kernels:add_kernel \\
          x_ptr=f32[1024] y_ptr=f32[1024] out_ptr=f32[1024] n=1024 BLOCK=256
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys

import torch

_DTYPES = {
    "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
    "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8,
    "b1": torch.bool,
}


def _value(text: str) -> object:
    tensor = re.fullmatch(r"(\w+)\[([\d, ]*)\]", text)
    if tensor and tensor.group(1) in _DTYPES:
        shape = [int(s) for s in tensor.group(2).split(",") if s.strip()]
        return torch.zeros(shape, dtype=_DTYPES[tensor.group(1)])
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"None": None, "True": True, "False": False}.get(text, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_triton_hop")
    commands = parser.add_subparsers(dest="command", required=True)
    explain_parser = commands.add_parser("explain", help="which arguments a kernel reads and writes, and where")
    explain_parser.add_argument("kernel", help="MODULE:NAME of a @triton.jit kernel")
    explain_parser.add_argument("arguments", nargs="*", help="NAME=VALUE for every kernel parameter")
    args = parser.parse_args(argv)

    from . import _compat, explain
    from ._side_table import base_kernel, kernel_layers

    module_name, _, name = args.kernel.partition(":")
    if not module_name or not name:
        explain_parser.error(f"expected MODULE:KERNEL, got {args.kernel!r}")
    try:
        kernel = importlib.import_module(module_name)
    except Exception as e:  # noqa: BLE001 - any import failure is the user's module, reported in one line
        explain_parser.error(f"cannot import module {module_name!r}: {type(e).__name__}: {e}")
    for part in name.split("."):
        kernel = getattr(kernel, part, None)
    if not _compat.is_triton_kernel(getattr(kernel, "__wrapped_triton_kernel__", kernel)):
        explain_parser.error(f"{args.kernel!r} is not a @triton.jit kernel")
    malformed = [arg for arg in args.arguments if "=" not in arg]
    if malformed:
        explain_parser.error(f"arguments must be NAME=VALUE, got {malformed}")
    kwargs = dict(arg.split("=", 1) for arg in args.arguments)
    base = base_kernel(kernel)
    params = [p.name for p in _compat.kernel_params(base)]
    defaults = _compat.kernel_param_defaults(base)
    unknown = [k for k in kwargs if k not in params]
    if unknown:
        explain_parser.error(f"{name} has no parameter {', '.join(unknown)}; its parameters: {' '.join(params)}")
    tuned = {k for layer in kernel_layers(kernel) for config in getattr(layer, "configs", []) for k in config.kwargs}
    tuned |= {k for layer in kernel_layers(kernel) for k in getattr(layer, "values", {})}
    missing = [p for p in params if p not in kwargs and p not in defaults and p not in tuned]
    if missing:
        explain_parser.error(f"missing {' '.join(f'{p}=...' for p in missing)} (every parameter of {name} "
                             "needs a value)")
    print(explain(kernel, {k: _value(v) for k, v in kwargs.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
