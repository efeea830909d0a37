"""Structured artifacts for TORCH_TRACE, which tlparse shows next to inductor's own.

Under ``TORCH_TRACE=/some/dir``, for each traced launch the package emits:

- ``torch_triton_hop_accesses``: the kernel key, the tensor arguments read and written, the
  source lines that write each one, and the reason if the analysis fell back;
- ``torch_triton_hop_reinplace`` (inductor only): which written arguments inductor writes in
  place and, for each one it copies, why;
- ``torch_triton_hop_fusion`` (inductor only): which arguments got a pointwise epilogue or
  prologue, why the others did not, and the fused kernel's source.

All are JSON. Without TORCH_TRACE each call is one check in torch.
"""

from __future__ import annotations

from typing import Any

from . import _compat

__all__ = ["accesses", "reinplacing", "fusion"]


def accesses(kernel_key: str, result: Any) -> None:
    """What the read/write analysis found for one launch of `kernel_key`."""
    _compat.trace_artifact("torch_triton_hop_accesses", lambda: {
        "kernel": kernel_key,
        "reads": list(result.reads),
        "writes": list(result.writes),
        "write_sites": {name: [str(site) for site in sites] for name, sites in result.write_sites.items()},
        "fallback_reason": result.fallback_reason,
    })


def reinplacing(node: str, kernel: str, in_place: list[str], copied: dict[str, str]) -> None:
    """What inductor's reinplacing pass decided for one functional launch."""
    _compat.trace_artifact("torch_triton_hop_reinplace", lambda: {
        "launch": node, "kernel": kernel, "written_in_place": in_place, "copied": copied,
    })


def fusion(node: str, kernel: str, fused: dict[str, str], refused: dict[str, str], source: str) -> None:
    """What the fusion pass did for one functional launch (fused: argument -> epilogue / prologue)."""
    _compat.trace_artifact("torch_triton_hop_fusion", lambda: {
        "launch": node, "kernel": kernel, "fused": fused, "not_fused": refused, "source": source,
    })
