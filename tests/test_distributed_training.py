"""Data-parallel training with wrapped kernels: DDP and FSDP2 (`torch.distributed.fsdp.fully_shard`),
eager and under torch.compile (default backend, inductor), in 2 spawned processes.

The model (tests/distributed_workers.py) is Linear -> RMSNorm -> Linear, the RMSNorm an
autograd.Function whose forward and backward launch wrapped kernels. Each rank trains on its
half of every batch; the losses (the mean of the ranks' losses is the full batch's) and the
parameters after training must equal one process training eagerly on the full batch. That
holds only if the gradients, the backward kernel's dW included, were averaged over the ranks:
each half alone gives other parameters (test_each_half_alone_trains_to_other_parameters).
Compiled runs must also launch the kernels from inductor's generated code, forward and
backward, rather than fall back to eager around a graph break.

CPU: gloo, kernels on the Triton interpreter. GPU (`pytest -m gpu`, 2 GPUs): NCCL, compiled kernels.
"""

import re

import pytest
import torch
import torch.distributed as dist

import distributed_workers as W
from ranks import run_ranks
from generated_code import ON_GPU

if not dist.is_available():
    pytest.skip("torch.distributed is not available", allow_module_level=True)

WORLD_SIZE = 2
STEPS, BATCH = 3, 8  # 4 rows per rank
TOL = dict(rtol=1e-5, atol=1e-6)
TIMEOUT_S = 300
# DDP trains with SGD (momentum), FSDP2 with Adam
CASES = [("ddp", "sgd"), ("fsdp2", "adam")]


def kernel_launches(code, name):
    """Lines of inductor's code that launch kernel `name` of distributed_workers, or the kernel
    the package's prologue/epilogue fusion built from it (`torch_triton_hop.fused:<name>_fused`)."""
    if ON_GPU:
        return re.findall(rf"^\s*{name}\w*\.run\(", code, re.M)
    return re.findall(rf"^\s*_tth_launch\(kernel='[\w.]+:{name}(?:_fused)?@", code, re.M)


def train_on_ranks(tmp_path, wrapper, compiled, optimizer, data, use_cuda):
    """Spawn WORLD_SIZE ranks of distributed_workers.worker; their results, in rank order."""
    return run_ranks(W.worker, (WORLD_SIZE, str(tmp_path / "init"), str(tmp_path), wrapper, compiled, optimizer, data,
                                use_cuda), tmp_path, nprocs=WORLD_SIZE, timeout_s=TIMEOUT_S)


_REFERENCES = {}


def reference(device, optimizer, data):
    """One process, the full batch, eager: (losses, parameters)."""
    key = (device, optimizer)
    if key not in _REFERENCES:
        _REFERENCES[key] = W.single_process_run(device, data, optimizer)
    return _REFERENCES[key]


def check_training(tmp_path, wrapper, compiled, optimizer, use_cuda):
    data = W.make_data(STEPS, BATCH)
    ref_losses, ref_params = reference("cuda:0" if use_cuda else "cpu", optimizer, data)
    results = train_on_ranks(tmp_path, wrapper, compiled, optimizer, data, use_cuda)

    initial = W.make_model("cpu").state_dict()
    assert all((ref_params[name] - initial[name]).abs().max() > 1e-3 for name in ref_params)  # it trained
    for result in results:
        per_rank = result["losses"]  # every rank's losses, gathered
        assert len(per_rank) == WORLD_SIZE and all(len(losses) == STEPS for losses in per_rank)
        full_batch = [sum(step) / WORLD_SIZE for step in zip(*per_rank)]
        torch.testing.assert_close(full_batch, ref_losses, **TOL)
        assert sorted(result["params"]) == sorted(ref_params)
        for name, value in ref_params.items():
            torch.testing.assert_close(result["params"][name], value, **TOL,
                                       msg=lambda m: f"rank {result['rank']}, {name}: {m}")

    if compiled:
        for result in results:
            code = result["code"]
            for kernel in ("rms_norm_forward", "rms_norm_backward"):
                assert kernel_launches(code, kernel), f"rank {result['rank']}: no launch of {kernel} in\n{code}"
            # torch's own graph breaks (DDP's logger, FSDP2's hooks) are expected; none in our code
            ours = [reason for reason in result["graph_breaks"] if re.search(r"triton|RMSNorm|rms_norm", reason, re.I)]
            assert not ours, ours


def cases(use_cuda):
    marks = [pytest.mark.gpu, pytest.mark.skipif(torch.cuda.device_count() < WORLD_SIZE,
                                                 reason=f"needs {WORLD_SIZE} CUDA devices")] if use_cuda else \
        [pytest.mark.interpreter]
    return [pytest.param(wrapper, optimizer, compiled, marks=marks,
                         id=f"{wrapper}-{optimizer}-{'compiled' if compiled else 'eager'}")
            for wrapper, optimizer in CASES for compiled in (False, True)]


@pytest.mark.parametrize("wrapper, optimizer, compiled", cases(use_cuda=False))
def test_training_equals_one_process_on_the_full_batch(tmp_path, wrapper, optimizer, compiled):
    check_training(tmp_path, wrapper, compiled, optimizer, use_cuda=False)


@pytest.mark.parametrize("wrapper, optimizer, compiled", cases(use_cuda=True))
def test_training_equals_one_process_on_the_full_batch_nccl(tmp_path, wrapper, optimizer, compiled):
    check_training(tmp_path, wrapper, compiled, optimizer, use_cuda=True)


@pytest.mark.interpreter
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_the_kernels_train_like_plain_torch(optimizer):
    """The reference itself: the wrapped-kernel RMSNorm trains like the same module in torch ops."""
    data = W.make_data(STEPS, BATCH)
    losses, params = reference("cpu", optimizer, data)
    torch_losses, torch_params = W.single_process_run("cpu", data, optimizer, norm=W.ReferenceRMSNorm)
    torch.testing.assert_close(losses, torch_losses, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(params, torch_params, rtol=1e-5, atol=1e-6)


@pytest.mark.interpreter
def test_each_half_alone_trains_to_other_parameters():
    """Why the comparison above can fail: without averaging the gradients over the ranks, a
    rank's parameters would be those of training on its half, far from the full batch's."""
    data = W.make_data(STEPS, BATCH)
    _, params = reference("cpu", "sgd", data)
    for half in (slice(0, BATCH // 2), slice(BATCH // 2, BATCH)):
        _, half_params = W.single_process_run("cpu", [(x[half], y[half]) for x, y in data], "sgd")
        assert all((half_params[name] - params[name]).abs().max() > 1e-2 for name in params)
