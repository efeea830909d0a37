"""What the layout check of [Note: A fused kernel reduces in the kernel's layouts] prevents, on
a GPU: block sums of a prologue whose source starts one float past 16-byte alignment
(tests/test_fusion_trust.py's sum_blocks_of_a_shifted_view), compiled unfused, fused with the
check switched off (the fusion before it), and fused as shipped.

    python benchmarks/layout_check_demo.py
"""

import os
import sys

os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")  # the fusion pass runs each time

import torch
from torch._inductor.utils import run_and_get_code

import torch_triton_hop
from torch_triton_hop import _fusion

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from test_fusion import fused_launches  # noqa: E402
from test_fusion_trust import sum_blocks_of_a_shifted_view  # noqa: E402


def run(x, fusion, check=True):
    torch._dynamo.reset()
    torch_triton_hop.config.fusion = fusion
    saved = _fusion.layout_difference
    if not check:
        _fusion.layout_difference = lambda *args, **kwargs: None
    try:
        out, code = run_and_get_code(torch.compile(sum_blocks_of_a_shifted_view), x)
    finally:
        _fusion.layout_difference = saved
    return out, bool(fused_launches("\n".join(code)))


def main():
    if not torch.cuda.is_available():
        sys.exit("needs a GPU: under the interpreter there are no layouts")
    torch.manual_seed(0)
    x = torch.randn(1 + 64 * 1024, device="cuda") * 100
    unfused, _ = run(x, fusion=False)
    for check in (False, True):
        fused, did = run(x, fusion=True, check=check)
        print(f"layout check {'on' if check else 'off'}: launch fused: {did}; block sums differing from the "
              f"unfused compile: {int((fused != unfused).sum())} of {fused.numel()}, "
              f"max difference {float((fused - unfused).abs().max()):.3g}")


if __name__ == "__main__":
    main()
