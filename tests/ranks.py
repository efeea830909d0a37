"""Spawned ranks for the distributed tests: each rank's worker saves a result dict (with an
"error" entry holding its traceback if it failed) to `<out_dir>/rank<rank>.pt`."""

import time

import pytest
import torch
import torch.multiprocessing as mp


def run_ranks(worker, args, out_dir, nprocs=2, timeout_s=240) -> list[dict]:
    """Spawn `nprocs` processes of `worker(rank, *args)`; their results in rank order. Fails the
    test if a rank is still running after `timeout_s` or reports an error."""
    context = mp.start_processes(worker, args=args, nprocs=nprocs, join=False, start_method="spawn")
    deadline = time.monotonic() + timeout_s
    while not context.join(timeout=5):
        if time.monotonic() > deadline:
            for process in context.processes:
                if process.is_alive():
                    process.kill()
            pytest.fail(f"ranks still running after {timeout_s} s")
    results = [torch.load(out_dir / f"rank{rank}.pt") for rank in range(nprocs)]
    errors = [f"rank {rank}:\n{result['error']}" for rank, result in enumerate(results) if "error" in result]
    assert not errors, "\n".join(errors)
    return results
