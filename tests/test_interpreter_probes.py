"""Ops that some supported triton's interpreter computes otherwise than torch are not fused under it.

The interpreters of triton 3.6 and 3.7 negate 0.0 to 0.0 (torch gives -0.0), and those of 3.6 to
3.8 raise on inverting an unsigned integer; 3.9's computes both as torch does. The fusion probes
the interpreter it runs under (`torch_triton_hop._interpreter_probes`) and leaves those ops to
inductor there. CI runs this file on every supported triton release (.ci/run), where the answers
differ: on 3.9 alone nothing here is refused.
"""

import logging

import pytest
import torch

from test_fusion_trust import DEVICE, FUSION_LOG, check_exact, compiled, copy, same_bits

pytestmark = pytest.mark.any_device


def test_negated_zeros_and_inverted_bytes_are_torchs(caplog):
    """-(+0.0) is -0.0 and ~ of a uint8 or bool is torch's, fused or not. Triton 3.6's interpreter
    computes -x as 0 - x and raises on ~ of a uint8 under numpy 2 (seed 6: #3801, #144); there
    those ops are not fused, with the reason in the log. On a GPU triton 3.6 compiles -x as
    0 - x too, in inductor's own kernels as in fused ones: there the fused result is the
    unfused compile's, +0.0."""
    from torch_triton_hop import _interpreter_probes

    zeros = torch.tensor([0.0, -0.0, 1.5, -2.0] * 64, device=DEVICE)
    fused = "neg" not in _interpreter_probes.inexact_ops()
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG):
        check_exact(lambda x: -copy(x), zeros, expect_fused=fused)
        check_exact(lambda x: copy(-x), zeros, expect_fused=fused)
    assert fused or "otherwise than torch" in caplog.text
    unfused_neg = compiled(lambda x: -copy(x), zeros, fusion=False)[0]
    assert same_bits(compiled(lambda x: -copy(x), zeros, fusion=True)[0], unfused_neg)
    if DEVICE == "cpu":  # inductor's C++ code negates as torch does
        assert same_bits(unfused_neg, -zeros)
    inverted = "bitwise_not" not in _interpreter_probes.inexact_ops()
    # ~ of a bool is lowered as `a == 0`, which every interpreter computes
    for values, fusible in ((torch.arange(256, dtype=torch.uint8), inverted), (torch.tensor([True, False] * 128), True)):
        values = values.to(DEVICE)
        check_exact(lambda a: copy(torch.bitwise_not(a)), values, expect_fused=fusible)
        assert torch.equal(compiled(lambda a: copy(torch.bitwise_not(a)), values, fusion=True)[0], ~values)
