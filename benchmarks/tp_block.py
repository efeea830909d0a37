r"""A tensor-parallel transformer block on several GPUs: its kernels through wrap_triton against
the same block in plain PyTorch ops, both under torch.compile.

The block is tests/tp_workers.py's (pre-norm attention and SwiGLU MLP on [tokens, dim]):
sequence-parallel RMSNorms, column-parallel q/k/v and gate/up, row-parallel o and down
(``parallelize_module``; all-gathers before the column-parallel projections and
reduce-scatters after the row-parallel ones). Two paths, each its own model with the same
initial weights:

  ours   RMSNorm, causal attention and SwiGLU are wrapped Triton kernels (forward and
         backward), launched on DTensors through their sharding rules
  plain  the same math in PyTorch ops (torch's scaled_dot_product_attention on each rank's
         heads, silu(a) * b, the norm in torch ops): inductor writes every kernel

A step is forward, a mean-square loss, backward and an SGD step, compiled with the default
backend (``torch.compile(block, fullgraph=True)``). fp32 weights and activations, TF32
matmuls on both paths (the attention kernel's ``tl.dot`` is TF32 as well). Under torchrun, one
process a GPU (NCCL), or gloo on CPU with the kernels on the interpreter (``--smoke``)::

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
    python3 -m torch.distributed.run --standalone --nproc-per-node 2 benchmarks/tp_block.py \
        --json tp_block.json --code tp_block_code.txt
    python -m torch.distributed.run --standalone --nproc-per-node 2 benchmarks/tp_block.py --smoke

Reports per path: ms per step (median over rounds of the slowest rank's time; the order of the
paths alternates each round), tokens/s (all ranks), the first (compiling) step's wall time,
the allocator's peak during a step, the first step's loss (the two paths must agree to 1e-3).
``--code`` writes, from rank 0, the lines of inductor's generated code (forward and
backward) that launch a kernel or call a collective, in order: our kernels' launches next to
the all-gathers and reduce-scatters.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

from _interpreter import use_interpreter_without_gpu  # noqa: E402

use_interpreter_without_gpu()  # before triton is imported
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
# The GPU host needs NVLink multicast off (NCCL's NVLS, and symmetric memory's multicast).
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import tp_workers as TP  # noqa: E402

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cuda" if torch.cuda.is_available() and not INTERPRETED else "cpu"
PATHS = ("ours", "plain")
# Lines of generated code worth showing: a kernel launch, or a collective and its wait.
CODE_LINE = re.compile(r"^\s*(\w+\.run\(|_tth_launch\(|(\w+ = )?torch\.ops\._c10d_functional\.\w+\.default\()")


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def make_step(block, x, lr):
    compiled = torch.compile(block, fullgraph=True)
    optimizer = torch.optim.SGD(block.parameters(), lr=lr)

    def step():
        loss = compiled(x).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    return step


def timed_round(step, n) -> float:
    """ms per step of the slowest rank."""
    dist.barrier()
    sync()
    start = time.perf_counter()
    for _ in range(n):
        step()
    sync()
    elapsed = torch.tensor([(time.perf_counter() - start) / n * 1e3], device=DEVICE)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    return elapsed.item()


def peak_step_mib(step):
    if DEVICE != "cuda":
        return None
    sync()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    step()
    sync()
    return round((torch.cuda.max_memory_allocated() - base) / 2**20, 1)


def warm_up_compiler():
    """Pay the process's one-time costs (inductor's compile workers, triton's first compile,
    cuBLAS) before the first path's compile is timed."""
    linear = torch.nn.Linear(64, 64, device=DEVICE)
    loss = torch.compile(lambda x: torch.nn.functional.gelu(linear(x)).square().sum())(torch.randn(8, 64, device=DEVICE))
    loss.backward()
    sync()


def code_lines(codes) -> list[str]:
    return [line.strip()[:160] for code in codes for line in code.splitlines() if CODE_LINE.match(line)]


def run(args):
    from torch._inductor.utils import run_and_get_code
    from torch.distributed.device_mesh import init_device_mesh

    local_rank = int(os.environ.get("LOCAL_RANK", os.environ.get("RANK", "0")))
    if DEVICE == "cuda":
        torch.cuda.set_device(local_rank)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    dist.init_process_group("nccl" if DEVICE == "cuda" else "gloo", timeout=datetime.timedelta(seconds=600))
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh(DEVICE, (world,))
    torch._inductor.config.force_disable_caches = True  # cold compiles: the first step's time is a compile
    shape = TP.BlockShape(seq=args.seq, batch=args.batch, dim=args.dim, hidden=args.hidden, head_dim=args.head_dim)
    if shape.tokens % world or (shape.dim // shape.head_dim) % world or shape.hidden % world:
        sys.exit(f"{shape}: tokens, heads and hidden must divide among {world} ranks")
    TP.register_rules()

    torch.manual_seed(args.seed)
    ours = TP.Block(shape)
    plain = TP.PlainBlock(shape)
    plain.load_state_dict(ours.state_dict())
    torch.manual_seed(args.seed + 1 + rank)
    x = torch.randn(shape.tokens // world, shape.dim, device=DEVICE)  # this rank's rows (sequence parallel)

    warm_up_compiler()
    results = {}
    steps = {}
    for name, block in (("ours", ours), ("plain", plain)):
        TP.parallelize(block.to(DEVICE), mesh)
        steps[name] = make_step(block, x, args.lr)
        dist.barrier()
        sync()
        start = time.perf_counter()
        loss, codes = run_and_get_code(steps[name])
        sync()
        results[name] = {"first_step_s": round(time.perf_counter() - start, 2), "loss": loss.item(),
                         "code": code_lines(codes)}
    for _ in range(args.warmup):
        for step in steps.values():
            step()

    times = {name: [] for name in PATHS}
    for round_index in range(args.rounds):
        order = PATHS if round_index % 2 == 0 else PATHS[::-1]
        for name in order:
            times[name].append(timed_round(steps[name], args.steps_per_round))
    for name in PATHS:
        ms = statistics.median(times[name])
        results[name].update(ms_per_step=round(ms, 3), rounds_ms=[round(t, 3) for t in times[name]],
                             tokens_per_s=round(shape.tokens / (ms / 1e3)), peak_step_MiB=peak_step_mib(steps[name]))

    loss_gap = abs(results["ours"]["loss"] - results["plain"]["loss"]) / abs(results["plain"]["loss"])
    if rank == 0:
        report(args, shape, world, results, loss_gap)
    return 0 if loss_gap < 1e-3 else 1


def report(args, shape, world, results, loss_gap):
    import triton

    print(f"tensor-parallel block, {world} ranks ({DEVICE}, "
          f"{torch.cuda.get_device_name() if DEVICE == 'cuda' else 'CPU'}), torch {torch.__version__}, "
          f"triton {triton.__version__}; {shape}; {args.rounds} rounds of {args.steps_per_round} steps")
    print(f"{'path':6} {'ms/step':>9} {'tokens/s':>10} {'first step s':>13} {'peak step MiB':>14} {'loss':>12}")
    for name in PATHS:
        r = results[name]
        print(f"{name:6} {r['ms_per_step']:9.3f} {r['tokens_per_s']:10d} {r['first_step_s']:13.2f} "
              f"{str(r['peak_step_MiB']):>14} {r['loss']:12.6f}")
    print(f"ours / plain: {results['ours']['ms_per_step'] / results['plain']['ms_per_step']:.3f}; "
          f"first-step losses differ by {loss_gap:.1e} (relative){'' if loss_gap < 1e-3 else ' -- FAIL'}")
    if args.code:
        with open(args.code, "w") as out:
            for name in PATHS:
                out.write(f"# {name}: launches and collectives in inductor's code (forward, then backward)\n")
                out.write("\n".join(results[name]["code"]) + "\n\n")
        print(f"code lines: {args.code}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"shape": dataclasses.asdict(shape), "world": world,
                       "device": DEVICE, "torch": torch.__version__, "triton": triton.__version__,
                       "results": {name: {k: v for k, v in r.items() if k != "code"}
                                   for name, r in results.items()}}, out, indent=1)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seq", type=int, default=128, help="tokens per sequence")
    parser.add_argument("--batch", type=int, default=16, help="sequences (over all ranks)")
    parser.add_argument("--dim", type=int, default=2048)
    parser.add_argument("--hidden", type=int, default=5632)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps-per-round", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="a tiny block, 2 rounds of 1 step (CPU OK)")
    parser.add_argument("--json")
    parser.add_argument("--code", help="write the launch and collective lines of the generated code here")
    args = parser.parse_args(argv)
    if args.smoke:
        args.seq, args.batch, args.dim, args.hidden, args.head_dim = 16, 2, 64, 64, 16
        args.rounds, args.steps_per_round, args.warmup = 2, 1, 0
    return args


if __name__ == "__main__":
    try:
        sys.exit(run(parse_args()))
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
