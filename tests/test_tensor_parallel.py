"""A tensor-parallel transformer block (tests/tp_workers.py) on 2 ranks: the norm, attention and
SwiGLU kernels launched on DTensors through their sharding rules, next to the collectives of
sequence / tensor parallelism. CPU: gloo and the interpreter; GPU (`pytest -m gpu`, 2 GPUs): NCCL."""

import re

import pytest
import torch
import torch.distributed as dist

from ranks import run_ranks

if not dist.is_available():
    pytest.skip("torch.distributed is not available", allow_module_level=True)


def run_tensor_parallel_block(tmp_path, compiled, use_cuda):
    """tests/tp_workers.py's block on 2 ranks; each rank's result."""
    import tp_workers as TP

    return run_ranks(TP.worker, (2, str(tmp_path / "init"), str(tmp_path), compiled, use_cuda), tmp_path)


def check_tensor_parallel_block(results, device, **tolerance):
    import tp_workers as TP

    TP.register_rules()
    block, x, out = TP.reference(device=device)
    rows = TP.TEST_SHAPE.tokens // 2
    for rank, result in enumerate(results):
        torch.testing.assert_close(result["out"], out.detach()[rank * rows:(rank + 1) * rows].cpu(), **tolerance)
        torch.testing.assert_close(result["x_grad"], x.grad[rank * rows:(rank + 1) * rows].cpu(), **tolerance)
        for name, p in block.named_parameters():
            torch.testing.assert_close(result["grads"][name], p.grad.cpu(), msg=name, **tolerance)


@pytest.mark.interpreter
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_tensor_parallel_block_equals_one_process(tmp_path, compiled):
    """A transformer block on 2 ranks: sequence-parallel RMSNorms, column-parallel q/k/v, the
    causal attention kernels on each rank's heads, row-parallel output projection, column-parallel
    gate/up, the SwiGLU kernels on hidden shards, row-parallel down (tests/tp_workers.py). Outputs
    and gradients equal the block on one process."""
    check_tensor_parallel_block(run_tensor_parallel_block(tmp_path, compiled, use_cuda=False), "cpu")


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA devices")
def test_tensor_parallel_block_on_two_gpus(tmp_path):
    """The block compiled on 2 GPUs (NCCL) equals it on one; inductor's code launches the kernels
    between the collectives that tensor parallelism puts around them, forward and backward."""
    results = run_tensor_parallel_block(tmp_path, compiled=True, use_cuda=True)
    # tl.dot and the GEMMs round differently on 1 and 2 GPUs (TF32 in the attention kernels)
    check_tensor_parallel_block(results, "cuda:0", rtol=2e-3, atol=2e-3)
    for result in results:
        code = result["code"]
        for kernel in ("rms_norm_forward", "rms_norm_backward", "attention_forward", "attention_backward",
                       "swiglu_forward", "swiglu_backward"):
            assert re.search(rf"^\s*{kernel}\w*\.run\(", code, re.M), f"no launch of {kernel}"
        assert re.search(r"all_gather_into_tensor|reduce_scatter_tensor", code), "no collective in the code"


@pytest.mark.interpreter
def test_the_plain_block_computes_what_the_kernels_compute():
    """benchmarks/tp_block.py times the block against PlainBlock (the same math in torch ops):
    the same outputs and gradients, on one process."""
    import tp_workers as TP

    torch.manual_seed(0)
    blocks = TP.Block(TP.TEST_SHAPE), TP.PlainBlock(TP.TEST_SHAPE)
    blocks[1].load_state_dict(blocks[0].state_dict())
    x = torch.randn(TP.TEST_SHAPE.tokens, TP.TEST_SHAPE.dim)
    outs = [block(x) for block in blocks]
    for out in outs:
        out.square().mean().backward()
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-5)
    for (name, p), q in zip(blocks[0].named_parameters(), blocks[1].parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5, msg=name)
