"""Settings of torch_triton_hop, read when a graph is compiled.

``fusion``: fold pointwise prologues and epilogues into user kernels under
``torch.compile`` (inductor) wherever that is provably exact. On by default; turn it off
with ``torch_triton_hop.config.fusion = False`` or the environment variable
``TORCH_TRITON_HOP_FUSION=0`` (read at import). Compiled graphs are cached per setting.

``static_launch``: on a GPU, inductor launches the kernels of compiled launches with its
static launcher (torch's own C++ code) where that launcher handles the kernel, instead of
building triton's launcher with the C compiler (0.2-0.4 s per kernel signature at compile
time). On by default; ``torch_triton_hop.config.static_launch = False`` or
``TORCH_TRITON_HOP_STATIC_LAUNCH=0`` keeps triton's launcher, as torch's own path does.

Example::

    >>> import torch_triton_hop
    >>> torch_triton_hop.config.fusion = False    # every user kernel a fusion barrier again
    >>> torch_triton_hop.config.fusion = True
"""

from __future__ import annotations

import os

__all__ = ["fusion", "static_launch"]

fusion: bool = os.environ.get("TORCH_TRITON_HOP_FUSION", "1") != "0"
static_launch: bool = os.environ.get("TORCH_TRITON_HOP_STATIC_LAUNCH", "1") != "0"
