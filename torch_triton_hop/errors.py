"""Exceptions raised by torch_triton_hop.

Every unsupported input is reported through :func:`raise_unsupported`, so the
message always says what was wrong, why it matters and what to do.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import warnings
from typing import NoReturn

__all__ = [
    "TritonHOPError",
    "UnsupportedTritonKernelError",
    "KernelResolutionError",
    "raise_unsupported",
]


class TritonHOPError(RuntimeError):
    """Base class of every error this package raises on purpose.

    Example::

        >>> from torch_triton_hop.errors import TritonHOPError, UnsupportedTritonKernelError
        >>> issubclass(UnsupportedTritonKernelError, TritonHOPError)
        True
    """


class UnsupportedTritonKernelError(TritonHOPError, NotImplementedError):
    """A kernel, grid or call uses a feature that cannot be captured in a graph.

    Raised when the kernel is wrapped or when a launch is traced; the message says what,
    why and what to do. Also a ``NotImplementedError``.

    Example::

        >>> from torch_triton_hop import wrap_triton
        >>> from torch_triton_hop.errors import UnsupportedTritonKernelError
        >>> try:
        ...     wrap_triton(len)
        ... except UnsupportedTritonKernelError as e:
        ...     print(e)
        wrap_triton: expected a @triton.jit kernel, optionally under @triton.autotune / @triton.heuristics (got 'builtin_function_or_method'). Decorate the function with @triton.jit first.
    """


class KernelResolutionError(TritonHOPError, LookupError):
    """A graph names a kernel (by its stable key) that this process cannot find.

    Raised by :func:`~torch_triton_hop.check_kernels` or at a loaded program's first call:
    the kernel's module is neither imported nor allowed, the kernel changed since the
    program was saved, or it was defined in ``__main__`` / a local scope. Also a ``LookupError``.

    Example::

        >>> from torch_triton_hop import kernel_side_table
        >>> from torch_triton_hop.errors import KernelResolutionError
        >>> try:
        ...     kernel_side_table.get_kernel("not_allowed_pkg.kernels:add@0123456789abcdef")
        ... except KernelResolutionError as e:
        ...     print(e)
        wrap_triton: the program's kernel 'add' lives in module 'not_allowed_pkg.kernels', which is not imported and not allowed to be imported, so nothing was imported. Import it before running the program, or allow it: torch_triton_hop.allow_kernel_modules('not_allowed_pkg.kernels') or TORCH_TRITON_HOP_KERNEL_MODULES=not_allowed_pkg.kernels.
    """


def raise_unsupported(what: str, got: object = None, *, fix: str = "", why: str = "") -> NoReturn:
    """Raise :class:`UnsupportedTritonKernelError` as "wrap_triton: <what> (got <repr>). <why> <fix>".

    Example::

        >>> from torch_triton_hop.errors import raise_unsupported
        >>> raise_unsupported("a grid of rank 4", (1, 1, 1, 1), fix="Use 1 to 3 dimensions")
        Traceback (most recent call last):
          ...
        torch_triton_hop.errors.UnsupportedTritonKernelError: wrap_triton: a grid of rank 4 (got (1, 1, 1, 1)). Use 1 to 3 dimensions.
    """
    parts = [f"wrap_triton: {what}"]
    if got is not None:
        parts[0] += f" (got {_shown(got)})"
    parts[0] += "."
    if why:
        parts.append(why.rstrip(".") + ".")
    if fix:
        parts.append(fix.rstrip(".") + ".")
    raise UnsupportedTritonKernelError(" ".join(parts))


def _shown(value: object) -> str:
    """repr(value), but a tensor as its shape and dtype: under tracing it is a FakeTensor or a
    FunctionalTensor, whose repr names the tracer's internals, not what the user passed."""
    import torch

    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {list(value.shape)} and dtype {value.dtype}"
    if type(value) in (tuple, list):  # not torch.Size or a namedtuple: their repr says more
        items = [_shown(v) for v in value]
        if isinstance(value, list):
            return f"[{', '.join(items)}]"
        return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
    return repr(value)


def _library_directories() -> tuple[str, ...]:
    import torch
    import triton

    return tuple(os.path.dirname(module.__file__) + os.sep for module in (torch, triton, sys.modules[__package__])) + (
        sysconfig.get_paths()["stdlib"] + os.sep,)


def warn_at_user_code(message: str) -> None:
    """A UserWarning shown at the first caller outside torch, triton, this package and the
    standard library: the user's line that led here (under Dynamo, the call of torch.compile's
    or torch.export's entry point), not a line of the package."""
    libraries = _library_directories()
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(libraries):
        frame = frame.f_back
    if frame is None:
        warnings.warn(message, stacklevel=2)
        return
    warnings.warn_explicit(message, UserWarning, frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__"),
                           registry=frame.f_globals.setdefault("__warningregistry__", {}))
