"""Reading inductor's generated code in tests: launches of a user kernel, and copies.

Under the Triton interpreter a launch is an extern call of the package's launch path
(`_tth_launch(kernel='module:name@digest', ...)`); on a GPU it is inductor's own launch of the
kernel it compiled (`name_0.run(...)`). Checks look for these lines, not at whole files,
which change between torch versions.
"""

import os
import re

import torch
from torch._inductor.utils import run_and_get_code

ON_GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"


def launches(code, kernel_name, module="core_kernels"):
    """Lines of generated code that launch `kernel_name` (defined in `module`)."""
    if ON_GPU:
        return re.findall(rf"^\s*{kernel_name}\w*\.run\(.*$", code, re.M)
    return re.findall(rf"^\s*_tth_launch\(kernel='{re.escape(module)}:{kernel_name}@.*$", code, re.M)


def launch_arguments(line, kernel):
    """The arguments of a launch line of `kernel`, by parameter name, as source text."""
    from torch_triton_hop._side_table import base_kernel

    text = line.split("kwargs={", 1)[1] if "_tth_launch(" in line else line.split(".run(", 1)[1]
    arguments, depth, current = [], 0, ""
    for char in text:
        if char in ",)}" and depth == 0:
            arguments.append(current.strip())
            current = ""
            if char != ",":
                break
            continue
        depth += (char in "([") - (char in ")]")
        current += char
    if "_tth_launch(" in line:  # 'name': value
        return {name.strip("'"): value for name, value in (argument.split(": ", 1) for argument in arguments if argument)}
    # inductor's launch passes every parameter that is not a constexpr, in order
    names = [p.name for p in base_kernel(kernel).params if not p.is_constexpr]
    return dict(zip(names, arguments))


def copies(code):
    """Lines that copy tensor data: clones, copy_, and inductor's own kernels (a copy is one)."""
    call = code[code.index("def call("):]
    return re.findall(r"^(?!\s*#).*(?:clone|\.copy_\(|cpp_fused_\w+\(|triton_\w+_fused_\w*\.run\().*$", call, re.M)


def allocations(code):
    """Lines of the call function that allocate a buffer."""
    call = code[code.index("def call("):]
    return re.findall(r"^.*\bempty_strided\w*\(.*$", call, re.M)


def compile_and_code(fn, *args, **options):
    """fn compiled (fullgraph, default backend) and called: its result and the generated code."""
    out, codes = run_and_get_code(torch.compile(fn, fullgraph=True, **options), *args)
    return out, "\n".join(codes)
