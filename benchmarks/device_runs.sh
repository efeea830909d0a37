#!/usr/bin/env bash
# The GPU runs whose logs are in benchmarks/results/, as run on the device machine (from the
# repository root, the Liger and expecttest wheels in .whl/, logs to $OUT):
#
#   bash benchmarks/device_runs.sh two_gpu_tests   # 2 GPUs: the gpu-marked distributed tests
#   bash benchmarks/device_runs.sh tp_block        # 2 GPUs: tensor-parallel block, ours vs plain ops
#   bash benchmarks/device_runs.sh llama_fsdp      # 2 GPUs: FSDP2 Llama + Liger, three paths
#   bash benchmarks/device_runs.sh one_gpu_pair    # two one-GPU benchmarks side by side, one per GPU
#
# NVLink multicast stays off on these hosts (NCCL's NVLS, symmetric memory's multicast).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
TORCHRUN="python3 -m torch.distributed.run --standalone --nproc-per-node 2"

case "${1:-}" in
two_gpu_tests)
    nvidia-smi -L | tee "$OUT/two_gpu_tests.log"
    timeout 400 python3 -m pytest -m gpu -v -p no:cacheprovider tests/test_distributed_training.py \
        tests/test_distributed.py tests/test_sharding.py tests/test_checkpointing.py \
        tests/test_tensor_parallel.py 2>&1 | tail -40 | tee -a "$OUT/two_gpu_tests.log"
    ;;
tp_block)
    timeout 300 $TORCHRUN benchmarks/tp_block.py --json "$OUT/tp_block.json" --code "$OUT/tp_block_code.txt" \
        2>&1 | grep -v "^W.*\] \*\*\*\|OMP_NUM_THREADS\|warn_once\|dynamo_pgo" | tee "$OUT/tp_block.log"
    ;;
llama_fsdp)
    timeout "${LIMIT:-560}" $TORCHRUN benchmarks/llama_liger.py --fsdp --rounds "${ROUNDS:-6}" --steps-per-round 5 \
        --json "$OUT/llama_fsdp.json" 2>&1 | grep -v "warn_once\|dynamo_pgo" | tee "$OUT/llama_fsdp.log"
    ;;
one_gpu_pair)
    # GPU 0: the two fusion.py rows whose 5-round ratios were inside the noise; GPU 1: the Llama
    # benchmark at a second shape. Each compares its paths within its own run.
    CUDA_VISIBLE_DEVICES=0 timeout 560 python3 benchmarks/fusion.py --rounds 12 \
        --only cast_scale_prologue_rmsnorm --only scale_cast_prologue_matmul --json "$OUT/fusion_rows.json" \
        > "$OUT/fusion_rows.log" 2>&1 &
    CUDA_VISIBLE_DEVICES=1 timeout 560 python3 benchmarks/llama_liger.py --batch 4 --seq 2048 --layers 8 \
        --rounds "${ROUNDS:-6}" --steps-per-round 5 --json "$OUT/llama_second_shape.json" \
        > "$OUT/llama_second_shape.log" 2>&1 &
    wait
    tail -30 "$OUT/fusion_rows.log" "$OUT/llama_second_shape.log"
    ;;
*)
    echo "usage: $0 two_gpu_tests|tp_block|llama_fsdp|one_gpu_pair" >&2
    exit 2
    ;;
esac
