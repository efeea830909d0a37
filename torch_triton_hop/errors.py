"""Exceptions raised by torch_triton_hop.

Every unsupported input is reported through :func:`raise_unsupported`, so the
message always says what was wrong, why it matters and what to do.
"""

from __future__ import annotations

from typing import NoReturn

__all__ = [
    "TritonHOPError",
    "UnsupportedTritonKernelError",
    "KernelResolutionError",
    "raise_unsupported",
]


class TritonHOPError(RuntimeError):
    """Base class of every error this package raises on purpose."""


class UnsupportedTritonKernelError(TritonHOPError, NotImplementedError):
    """A kernel, grid or call uses a feature that cannot be captured in a graph."""


class KernelResolutionError(TritonHOPError, LookupError):
    """A graph names a kernel (by its stable key) that this process cannot find."""


def raise_unsupported(what: str, got: object = None, *, fix: str = "", why: str = "") -> NoReturn:
    """Raise :class:`UnsupportedTritonKernelError` as "wrap_triton: <what> (got <repr>). <why> <fix>"."""
    parts = [f"wrap_triton: {what}"]
    if got is not None:
        parts[0] += f" (got {got!r})"
    parts[0] += "."
    if why:
        parts.append(why.rstrip(".") + ".")
    if fix:
        parts.append(fix.rstrip(".") + ".")
    raise UnsupportedTritonKernelError(" ".join(parts))
