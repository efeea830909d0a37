"""Run on the Triton interpreter when there is no GPU: set TRITON_INTERPRET before triton is
imported (the benchmarks that run on either import this first).

torch imports every module TORCH_LOGS names while it is imported, so with TORCH_LOGS naming
torch_triton_hop, `import torch` would import triton before TRITON_INTERPRET is set: it is
hidden while torch is imported and applied afterwards (as in tests/conftest.py).
"""

import os


def use_interpreter_without_gpu() -> None:
    if "TRITON_INTERPRET" in os.environ:
        return
    torch_logs = os.environ.pop("TORCH_LOGS", None)
    import torch

    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"
    if torch_logs is not None:
        os.environ["TORCH_LOGS"] = torch_logs
        from torch_triton_hop._compat import reapply_torch_logs

        reapply_torch_logs()
