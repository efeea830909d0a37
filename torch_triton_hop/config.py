"""Settings of torch_triton_hop, read when a graph is compiled.

``fusion``: fold pointwise prologues and epilogues into user kernels under
``torch.compile`` (inductor) wherever that is provably exact. On by default; turn it off
with ``torch_triton_hop.config.fusion = False`` or the environment variable
``TORCH_TRITON_HOP_FUSION=0`` (read at import). Compiled graphs are cached per setting.

Example::

    >>> import torch_triton_hop
    >>> torch_triton_hop.config.fusion = False    # every user kernel a fusion barrier again
    >>> torch_triton_hop.config.fusion = True
"""

from __future__ import annotations

import os

__all__ = ["fusion"]

fusion: bool = os.environ.get("TORCH_TRITON_HOP_FUSION", "1") != "0"
