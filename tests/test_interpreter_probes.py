"""Ops that the installed triton's interpreter computes otherwise than torch are not fused under it.

The interpreters of triton 3.6 and 3.7 negate 0.0 to 0.0 (torch gives -0.0), and those of 3.6 to
3.8 fail to invert an unsigned integer; 3.9's computes both as torch does. The fusion probes the interpreter it runs
under (`torch_triton_hop._interpreter_probes`) and leaves those ops to inductor there. CI runs
this file on every supported triton release (.ci/run), where the answers differ.

The reference is the unfused compile, or eager: before 3.8 triton compiles a float's `-x` as
`0 - x` on a GPU too (0.0 for 0.0, where torch gives -0.0), in inductor's own kernels as in the
fused one (seen on an H100 with triton 3.6).
"""

import logging

import pytest
import torch

from test_fusion import fused_launches
from test_fusion_trust import DEVICE, FUSION_LOG, adversarial_values, compiled, copy, same_bits

pytestmark = pytest.mark.any_device


@pytest.mark.parametrize("op, program, make_input", [
    ("neg", lambda x: copy(-x), lambda: adversarial_values(4096)),
    ("bitwise_not", lambda u: copy(~u), lambda: torch.arange(256, dtype=torch.uint8, device=DEVICE)),
], ids=["neg", "bitwise_not"])
def test_an_op_is_fused_only_where_the_kernel_computes_it_as_torch_does(op, program, make_input, caplog):
    x = make_input()
    with caplog.at_level(logging.DEBUG, logger=FUSION_LOG), torch._inductor.config.patch(fx_graph_cache=False):
        unfused, _ = compiled(program, x, fusion=False)
        result, code = compiled(program, x, fusion=True)
    assert same_bits(result, unfused) or same_bits(result, program(x))
    refused = f"it computes ops.{op}, which the installed triton's interpreter computes otherwise than torch"
    assert fused_launches(code) or refused in caplog.text, caplog.text
