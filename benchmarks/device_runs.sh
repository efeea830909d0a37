#!/usr/bin/env bash
# The GPU runs whose logs are in benchmarks/results/, as run on the device machine (from the
# repository root, the Liger and expecttest wheels in .whl/, logs to $OUT):
#
#   bash benchmarks/device_runs.sh gpu_tests       # 1 GPU: every gpu-marked test, 8 pytest-xdist workers (~6 min)
#   bash benchmarks/device_runs.sh two_gpu_tests   # 2 GPUs: the gpu-marked distributed tests
#   bash benchmarks/device_runs.sh tp_block        # 2 GPUs: tensor-parallel block, ours vs plain ops
#   bash benchmarks/device_runs.sh llama_fsdp      # 2 GPUs: FSDP2 Llama + Liger, three paths
#   bash benchmarks/device_runs.sh one_gpu_pair    # two one-GPU benchmarks side by side, one per GPU
#   JOBS=28 COUNT=300 SEED=6 bash benchmarks/device_runs.sh cpu_fuzz
#       # the fusion fuzzer on the host's CPU cores (Triton interpreter, no GPU), JOBS processes
#       # of COUNT programs each; numpy < 2.4 from .whl_fuzz/ (triton 3.6's interpreter needs it)
#   PROFILE=1 bash benchmarks/device_runs.sh llama_rope   # 1 GPU: plain, ours, ours with HF's RoPE, built-in
#       # (SHAPE="--layers 8 --batch 4 --seq 2048": the second shape)
#   bash benchmarks/device_runs.sh llama_memory    # 1 GPU: each path's allocations alive at its peak (SHAPE= too)
#   bash benchmarks/device_runs.sh fusion_hunt     # 1 GPU: benchmarks/fusion_hunt.py, the hand-written adversarial programs
#   bash benchmarks/device_runs.sh fusion_gpu      # 1 GPU: benchmarks/fusion.py, then the gpu fusion corpus and Liger tests
#       # (ONLY="--only NAME ..." ROUNDS=40 ROUND_MS=200 NO_TESTS=1: some rows, longer)
#   bash benchmarks/device_runs.sh compile_time    # 1 GPU: the Llama + Liger first step, one path per process
#       # (ORDER="plain ours_hf_rope" PROFILE=1: under cProfile, the profiles to $OUT)
#   bash benchmarks/device_runs.sh first_checks    # 1 GPU, one call (~9 min): gpu suite, products probe, HUNT= cases
#   bash benchmarks/device_runs.sh llama_seq_lengths  # 1 GPU (~5 min): the Llama benchmark at two sequence lengths
#   bash benchmarks/device_runs.sh trust_recheck   # 1 GPU: the fusion tests and GPU fuzz programs to check again
#   bash benchmarks/device_runs.sh numerics        # 1 GPU: fusion_hunt.py under inductor's numerics settings (~6 min)
#   bash benchmarks/device_runs.sh compile_settings  # 1 GPU: fusion_hunt.py under cpp_wrapper, max_autotune, ... (~9 min)
#   SETTING=triton.cudagraphs=True bash benchmarks/device_runs.sh settings_full  # 1 GPU: every hunt case under it
#       # (RESUME=benchmarks/results/LOG: the cases that LOG does not report; ~5 min;
#       #  HUNT_FLAGS=--dynamic: every case with symbolic sizes, SETTING=size_asserts=True, the default)
#   SEED=9 JOBS=4 COUNT=250 bash benchmarks/device_runs.sh gpu_fuzz   # the fuzzer on one GPU, JOBS processes
#       # (GPUS=4 JOBS=32: the jobs spread over 4 GPUs, round robin)
#   PART=tests bash benchmarks/device_runs.sh stored_x2   # 2 GPUs: fusion tests; Liger, Llama, corpus, fuzz tests
#   PART=bench bash benchmarks/device_runs.sh stored_x2   # 2 GPUs: the Llama benchmark at two shapes
#   PART=tests bash benchmarks/device_runs.sh donated_x2  # 2 GPUs: inductor, fusion, Liger, AOTI, docs tests
#   PART=bench bash benchmarks/device_runs.sh donated_x2  # 2 GPUs: as stored_x2's
#   PART=tests bash benchmarks/device_runs.sh over_input_x2  # 2 GPUs: fusion tests with test_output_over_input, ...
#   PART=bench bash benchmarks/device_runs.sh over_input_x2  # 2 GPUs: as stored_x2's
#   PART=tests bash benchmarks/device_runs.sh inplace_x2  # 2 GPUs: fusion + fuzz tests, in-place fuzz programs; AOTI, ...
#       # (SEED=43: the fuzzer's in-place programs of another seed)
#   PART=bench bash benchmarks/device_runs.sh inplace_x2  # 2 GPUs: the Llama benchmark at two shapes, with profiles
#   bash benchmarks/device_runs.sh proof_x4        # 4 GPUs: fusion tests, other GPU tests, fusion.py, Llama
#   bash benchmarks/device_runs.sh cfg_x4          # 4 GPUs: fusion + store-coverage tests; the fuzzer, seed 17, on 3
#       # (OTHER=1 SEED=18 JOBS=8: GPU 1 runs the Liger, fusion-corpus, inductor and AOTI tests; fuzz on 2)
#   bash benchmarks/device_runs.sh trust_x4        # 4 GPUs, 64 cores: what issue 23 asks of the final code
#       # GPU 0: the gpu-marked fusion tests; GPUs 1-3: the fuzzer, seed 9, 1000 programs;
#       # the CPU cores: the fuzzer under the interpreter, seed 10, CPU_JOBS x CPU_COUNT programs
#
# NVLink multicast stays off on these hosts (NCCL's NVLS, symmetric memory's multicast).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
if [ -d .whl ] && [ -z "${SITE_READY:-}" ]; then  # once: trust_x4 runs cpu_fuzz beside live imports
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
export SITE_READY=1 PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
TORCHRUN="python3 -m torch.distributed.run --standalone --nproc-per-node 2"

case "${1:-}" in
gpu_tests)
    # The 2-GPU tests skip here (two_gpu_tests runs them). Two compile threads per worker: 16 cores.
    nvidia-smi -L > "$OUT/gpu_tests.log"
    TORCHINDUCTOR_COMPILE_THREADS=2 timeout 540 python3 -m pytest -m gpu -n "${WORKERS:-8}" -p no:cacheprovider -q \
        -rfE --durations=15 tests/ >> "$OUT/gpu_tests.log" 2>&1
    tail -n 25 "$OUT/gpu_tests.log"
    ;;
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
llama_rope)
    timeout "${LIMIT:-330}" python3 benchmarks/llama_liger.py --paths plain,ours,ours_hf_rope,builtin --rounds "${ROUNDS:-6}" ${SHAPE:-} \
        --steps-per-round 5 --json "$OUT/llama_rope.json" ${PROFILE:+--profile "$OUT/llama_rope_profile.txt"} \
        --host-profile "$OUT/llama_host_profile.txt" --profile-steps 5 2>&1 \
        | grep -v "warn_once\|dynamo_pgo" | tail -30 | tee "$OUT/llama_rope.log"
    ;;
llama_memory)
    # Which allocations are alive at each path's peak, by the line that made them.
    timeout "${LIMIT:-330}" python3 benchmarks/llama_liger.py --paths "${PATHS:-plain,ours_hf_rope,ours}" --rounds 2 ${SHAPE:-} \
        --steps-per-round 2 --json "$OUT/llama_memory.json" --memory-at-peak "$OUT/llama_memory_at_peak.txt" 2>&1 \
        | grep -v "warn_once\|dynamo_pgo" | tail -30 | tee "$OUT/llama_memory.log"
    ;;
fusion_hunt)
    # benchmarks/fusion_hunt.py: every hand-written adversarial program, fused against unfused (~4 min)
    timeout 540 python3 benchmarks/fusion_hunt.py --budget 480 > "$OUT/fusion_hunt.log" 2>&1
    grep "^CASE" "$OUT/fusion_hunt.log" | grep -v "ok=True"; tail -n 1 "$OUT/fusion_hunt.log"
    ;;
fusion_gpu)
    timeout "${LIMIT:-280}" python3 benchmarks/fusion.py --rounds "${ROUNDS:-5}" --round-ms "${ROUND_MS:-50}" ${ONLY:-} \
        --json "$OUT/fusion.json" 2>&1 \
        | grep -v "warn_once\|compiled, max abs diff" > "$OUT/fusion.log"
    [ -n "${NO_TESTS:-}" ] && { cat "$OUT/fusion.log"; exit 0; }
    timeout 240 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_fusion_corpus.py tests/test_liger.py \
        tests/test_migration.py 2>&1 | tail -15 > "$OUT/gpu_corpus_liger_tests.log"
    tail -n 40 "$OUT/fusion.log" "$OUT/gpu_corpus_liger_tests.log"
    ;;
compile_time)
    # Each path alone in a fresh process with empty inductor and triton caches (in one process
    # the second path finds Liger's kernels compiled by the first), in alternating order.
    # PROFILE=1: each path's first step under cProfile too (slower), to $OUT/compile_profile_PATH.txt.
    n=0
    for path in ${ORDER:-ours builtin plain ours builtin}; do
        cache=$(mktemp -d) n=$((n + 1))
        TRITON_CACHE_DIR=$cache/triton TORCHINDUCTOR_CACHE_DIR=$cache/inductor timeout 200 python3 \
            benchmarks/llama_liger.py --paths $path --rounds 1 --steps-per-round 2 --warmup 0 --check-steps 1 \
            ${SHAPE:-} ${PROFILE:+--compile-profile "$OUT/compile_profile_$path.txt"} --json "$OUT/compile_time_$n.json" \
            2>&1 | grep "first step\|compile phases" | tee -a "$OUT/compile_time${PROFILE:+_profiled}.log"
        rm -rf "$cache"
    done
    ;;
numerics)
    # fusion_hunt.py's GPU cases under each inductor numerics setting, then their tests
    for setting in emulate_precision_casts=True eager_numerics.disable_ftz=True \
            triton.codegen_upcast_to_fp32=False eager_numerics.division_rounding=True; do
        timeout 150 python3 benchmarks/fusion_hunt.py --inductor-config "$setting" --only gpu_ --only f16 \
            --only fma --only rms --only softmax --only training > "$OUT/numerics_${setting%%=*}.log" 2>&1
        echo "$setting: $(grep SUMMARY "$OUT/numerics_${setting%%=*}.log")"
    done
    timeout 150 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_fusion.py -k "numerics_settings or emulate" \
        2>&1 | tail -5 | tee "$OUT/numerics_tests.log"
    ;;
compile_settings)
    # fusion_hunt.py under compile settings users turn on (fused and unfused compile alike):
    # cpp_wrapper on every case (about 100 fit in its budget), the others on the GPU subsets
    timeout 300 python3 benchmarks/fusion_hunt.py --inductor-config cpp_wrapper=True --budget 275 \
        > "$OUT/settings_cpp_wrapper.log" 2>&1
    echo "cpp_wrapper=True: $(grep SUMMARY "$OUT/settings_cpp_wrapper.log")"
    for setting in max_autotune=True coordinate_descent_tuning=True triton.cudagraphs=True; do
        timeout 80 python3 benchmarks/fusion_hunt.py --inductor-config "$setting" --budget 60 --only gpu_ --only f16 \
            --only fma --only rms --only training --only autotune --only inplace > "$OUT/settings_${setting%%=*}.log" 2>&1
        echo "$setting: $(grep SUMMARY "$OUT/settings_${setting%%=*}.log")"
    done
    ;;
settings_full)
    # fusion_hunt.py on every case under one compile setting (SETTING=triton.cudagraphs=True), two
    # processes sharing the GPU; RESUME=LOG leaves out the cases an earlier run's LOG reports
    for shard in 0 1; do
        timeout 540 python3 benchmarks/fusion_hunt.py --inductor-config "$SETTING" --budget 470 --shard "$shard/2" \
            ${RESUME:+--resume "$RESUME"} ${HUNT_FLAGS:-} > "$OUT/settings_full_${SETTING%%=*}_$shard.log" 2>&1 &
    done
    wait
    grep -h "SUMMARY\|SKIPPED" "$OUT"/settings_full_*.log
    ;;
first_checks)
    # One call for what a session changed (~9 min): the gpu suite (7 min at most: session 45's
    # reached 91% in 5.5 min), the products probe, the hunt's cases named by HUNT (default
    # s42_). Each part bounded, so a slow one leaves the others their time.
    nvidia-smi -L > "$OUT/gpu_tests.log"
    TORCHINDUCTOR_COMPILE_THREADS=2 timeout 420 python3 -m pytest -m gpu -n "${WORKERS:-8}" -p no:cacheprovider -q \
        -rfE tests/ >> "$OUT/gpu_tests.log" 2>&1
    tail -n 4 "$OUT/gpu_tests.log"
    timeout 60 python3 benchmarks/epilogue_products_probe.py /tmp/products_probe > "$OUT/epilogue_products_probe.log" 2>&1
    grep "fused=" "$OUT/epilogue_products_probe.log"
    timeout 90 python3 benchmarks/fusion_hunt.py --only "${HUNT:-s42_}" > "$OUT/hunt_first_checks.log" 2>&1
    grep "^CASE" "$OUT/hunt_first_checks.log" | grep -v "ok=True"; tail -n 1 "$OUT/hunt_first_checks.log"
    ;;
llama_seq_lengths)
    # Dynamic sequence lengths: each path compiles twice (its first steps took 14-16 s each on
    # an H100 in session 43, where a 110 s bound cut the run before the built-in path).
    timeout "${LIMIT:-300}" python3 benchmarks/llama_liger.py --rounds 3 --steps-per-round 5 --seq-lengths 1024,896 \
        --json "$OUT/llama_seq_lengths.json" > "$OUT/llama_seq_lengths.log" 2>&1
    tail -n 8 "$OUT/llama_seq_lengths.log"
    ;;
trust_recheck)
    timeout 300 python3 -m pytest -m gpu -p no:cacheprovider -q -x ${TESTS:-tests/test_fusion_trust.py} \
        2>&1 | tail -${TAIL:-40} > "$OUT/trust_recheck_tests.log"
    for index in ${INDICES:-}; do
        timeout 200 python3 benchmarks/fuzz_fusion.py --seed "${SEED:-9}" --index "$index" --out /tmp/recheck \
            2>&1 | grep -v "Warning" | head -${REPORT_LINES:-60} > "$OUT/recheck_${SEED:-9}_$index.log"
    done
    tail -n 12 "$OUT"/trust_recheck_tests.log
    ;;
gpu_fuzz)
    rm -rf /tmp/gpu_fuzz_*  # a warm machine keeps an earlier call's programs
    for job in $(seq 0 $((${JOBS:-4} - 1))); do
        CUDA_VISIBLE_DEVICES=$((job % ${GPUS:-1})) TORCHINDUCTOR_COMPILE_THREADS=1 timeout "${LIMIT:-500}" python3 benchmarks/fuzz_fusion.py --seed "${SEED:-9}" \
            --start $((job * ${COUNT:-250})) --count "${COUNT:-250}" --batch 25 --out "/tmp/gpu_fuzz_$job" \
            > "/tmp/gpu_fuzz_$job.log" 2>&1 &
    done
    wait
    cat /tmp/gpu_fuzz_*/progress_*.jsonl > "$OUT/gpu_fuzz_progress.jsonl"
    tail -q -n 3 /tmp/gpu_fuzz_*.log > "$OUT/gpu_fuzz_tails.log"
    python3 - "$OUT/gpu_fuzz_progress.jsonl" <<'PY' | tee "$OUT/gpu_fuzz.log"
import collections, json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
print("GPU fuzz:", len(records), "programs:", dict(collections.Counter(r["verdict"] for r in records)))
for r in records:
    if r["verdict"] != "ok":
        print(r["summary"][:1500])
PY
    ;;
trust_x4)
    nvidia-smi -L > "$OUT/trust_x4.log"
    CUDA_VISIBLE_DEVICES=0 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q \
        tests/test_fusion_trust.py tests/test_fusion.py tests/test_fusion_fuzz.py > "$OUT/gpu_fusion_tests.log" 2>&1 &
    for gpu in 1 2 3; do
        for part in 0 1; do
            job=$(( (gpu - 1) * 2 + part ))
            start=$(( job * 167 )); count=$(( job == 5 ? 1000 - 5 * 167 : 167 ))
            CUDA_VISIBLE_DEVICES=$gpu TORCHINDUCTOR_COMPILE_THREADS=1 timeout 540 python3 benchmarks/fuzz_fusion.py \
                --seed 9 --start $start --count $count --batch 25 --out "$OUT/gpu_fuzz_$job" > "$OUT/gpu_fuzz_$job.log" 2>&1 &
        done
    done
    JOBS=${CPU_JOBS:-50} COUNT=${CPU_COUNT:-200} SEED=10 LIMIT=540 bash "$0" cpu_fuzz >> "$OUT/trust_x4.log" 2>&1 &
    wait
    cat "$OUT"/gpu_fuzz_*/progress_*.jsonl > "$OUT/gpu_fuzz_progress.jsonl"
    tail -5 "$OUT/gpu_fusion_tests.log" | tee -a "$OUT/trust_x4.log"
    python3 - "$OUT/gpu_fuzz_progress.jsonl" <<'PY' | tee -a "$OUT/trust_x4.log"
import collections, json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
print("GPU fuzz:", len(records), "programs:", dict(collections.Counter(r["verdict"] for r in records)))
for r in records:
    if r["verdict"] != "ok":
        print(r["summary"].splitlines()[0][:300])
PY
    tail -20 "$OUT/trust_x4.log"
    ;;
cfg_x4)
    # 4 GPUs (seventeenth session: the store-coverage proof follows early returns and while loops).
    # GPU 0: the gpu-marked fusion, store-coverage and aliasing tests; GPUs 1-3: the fusion fuzzer,
    # seed 17, JOBS processes of COUNT programs, round robin.
    nvidia-smi -L > "$OUT/cfg_x4.log"
    # OTHER=1: GPU 1 runs the Liger, fusion-corpus, inductor and AOTI tests instead of fuzzing.
    CUDA_VISIBLE_DEVICES=0 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_store_coverage.py \
        tests/test_fusion_trust.py tests/test_fusion.py tests/test_aliasing.py > "$OUT/gpu_fusion_tests.log" 2>&1 &
    FUZZ_GPUS=3
    if [ -n "${OTHER:-}" ]; then
        FUZZ_GPUS=2
        CUDA_VISIBLE_DEVICES=1 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_liger.py \
            tests/test_fusion_corpus.py tests/test_inductor.py tests/test_aoti.py > "$OUT/gpu_other_tests.log" 2>&1 &
    fi
    rm -rf /tmp/gpu_fuzz_*
    for job in $(seq 0 $((${JOBS:-12} - 1))); do
        CUDA_VISIBLE_DEVICES=$((4 - FUZZ_GPUS + job % FUZZ_GPUS)) TORCHINDUCTOR_COMPILE_THREADS=1 timeout 500 python3 benchmarks/fuzz_fusion.py \
            --seed "${SEED:-17}" --start $((job * ${COUNT:-80})) --count "${COUNT:-80}" --batch 20 \
            --out "/tmp/gpu_fuzz_$job" > "/tmp/gpu_fuzz_$job.log" 2>&1 &
    done
    wait
    tail -n 4 "$OUT/gpu_fusion_tests.log" | tee -a "$OUT/cfg_x4.log"
    [ -n "${OTHER:-}" ] && tail -n 4 "$OUT/gpu_other_tests.log" | tee -a "$OUT/cfg_x4.log"
    cat /tmp/gpu_fuzz_*/progress_*.jsonl > "$OUT/gpu_fuzz_progress.jsonl"
    python3 - "$OUT/gpu_fuzz_progress.jsonl" <<'PY' | tee -a "$OUT/cfg_x4.log"
import collections, json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
print("GPU fuzz:", len(records), "programs:", dict(collections.Counter(r["verdict"] for r in records)))
for r in records:
    if r["verdict"] != "ok":
        print(r["summary"][:1500])
PY
    ;;
stored_x2)
    # 2 GPUs, one job each (eighteenth session: prologues the fused kernel also stores).
    # PART=tests: GPU 0 the gpu-marked fusion tests, GPU 1 Liger, the Llama test, the fusion
    # corpus and fuzz tests. PART=bench: the Llama + Liger benchmark, GPU 0 the default shape,
    # GPU 1 the second shape.
    nvidia-smi -L > "$OUT/stored_x2_${PART:-tests}.log"
    if [ "${PART:-tests}" = tests ]; then
        CUDA_VISIBLE_DEVICES=0 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_stored_prologue.py \
            tests/test_store_coverage.py tests/test_fusion_trust.py tests/test_fusion.py tests/test_aliasing.py \
            > "$OUT/gpu_fusion_tests.log" 2>&1 &
        CUDA_VISIBLE_DEVICES=1 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_liger.py \
            tests/test_llama_liger.py tests/test_fusion_corpus.py tests/test_fusion_fuzz.py > "$OUT/gpu_other_tests.log" 2>&1 &
        wait
        tail -n 4 "$OUT/gpu_fusion_tests.log" "$OUT/gpu_other_tests.log" | tee -a "$OUT/stored_x2_tests.log"
    else
        CUDA_VISIBLE_DEVICES=0 timeout 540 python3 benchmarks/llama_liger.py --paths plain,ours,ours_hf_rope,builtin \
            --rounds "${ROUNDS:-6}" --steps-per-round 5 --json "$OUT/llama.json" 2>&1 | grep -v "warn_once\|dynamo_pgo" \
            | tail -30 > "$OUT/llama.log" &
        CUDA_VISIBLE_DEVICES=1 timeout 540 python3 benchmarks/llama_liger.py --paths plain,ours,ours_hf_rope,builtin \
            --layers 8 --batch 4 --seq 2048 --rounds "${ROUNDS2:-4}" --steps-per-round 5 --json "$OUT/llama_second.json" \
            2>&1 | grep -v "warn_once\|dynamo_pgo" | tail -30 > "$OUT/llama_second.log" &
        wait
        tail -n 25 "$OUT/llama.log" "$OUT/llama_second.log" | tee -a "$OUT/stored_x2_bench.log"
    fi
    ;;
donated_x2)
    # 2 GPUs, one job each (nineteenth session: saved activations written in place).
    # PART=bench: stored_x2's benchmark. PART=tests: GPU 0 the gpu-marked inductor, fusion and
    # stored-prologue tests; GPU 1 Liger, the Llama test, the AOTI tests and the docs examples.
    nvidia-smi -L > "$OUT/donated_x2_${PART:-tests}.log"
    if [ "${PART:-tests}" = tests ]; then
        CUDA_VISIBLE_DEVICES=0 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_inductor.py \
            tests/test_stored_prologue.py tests/test_fusion.py tests/test_aliasing.py > "$OUT/gpu_inductor_fusion.log" 2>&1 &
        CUDA_VISIBLE_DEVICES=1 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_liger.py \
            tests/test_llama_liger.py tests/test_aoti.py tests/test_docs_examples.py > "$OUT/gpu_liger_aoti_docs.log" 2>&1 &
        wait
        tail -n 4 "$OUT/gpu_inductor_fusion.log" "$OUT/gpu_liger_aoti_docs.log" | tee -a "$OUT/donated_x2_tests.log"
    else
        PART=bench bash "$0" stored_x2
    fi
    ;;
over_input_x2)
    # 2 GPUs (nineteenth session: outputs written over the kernel's own input, split apart).
    # PART=tests: GPU 0 the gpu-marked fusion tests with test_output_over_input; GPU 1 Liger, the
    # Llama test, the inductor and fusion-corpus tests. PART=bench: stored_x2's benchmark.
    nvidia-smi -L > "$OUT/over_input_x2_${PART:-tests}.log"
    if [ "${PART:-tests}" = tests ]; then
        CUDA_VISIBLE_DEVICES=0 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_output_over_input.py \
            tests/test_stored_prologue.py tests/test_store_coverage.py tests/test_fusion_trust.py tests/test_fusion.py \
            tests/test_aliasing.py > "$OUT/gpu_fusion_tests.log" 2>&1 &
        CUDA_VISIBLE_DEVICES=1 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_liger.py \
            tests/test_llama_liger.py tests/test_inductor.py tests/test_fusion_corpus.py > "$OUT/gpu_other_tests.log" 2>&1 &
        wait
        tail -n 4 "$OUT/gpu_fusion_tests.log" "$OUT/gpu_other_tests.log" | tee -a "$OUT/over_input_x2_tests.log"
    else
        PART=bench bash "$0" stored_x2
    fi
    ;;
inplace_x2)
    # 2 GPUs (twentieth session: the fuzzer's programs that write an output over the kernel's input).
    # PART=tests: GPU 0 the gpu-marked fusion and fuzz tests, and beside them the fuzzer's
    # in-place programs of seed 42; GPU 1 AOTI packaging, launches, migration, docs, Liger,
    # Llama, inductor and fusion-corpus tests. PART=bench: the Llama benchmark at two shapes
    # with the profiler's tables (GPU kernel time per kernel and per category, per path).
    nvidia-smi -L > "$OUT/inplace_x2_${PART:-tests}.log"
    if [ "${PART:-tests}" = tests ]; then
        CUDA_VISIBLE_DEVICES=0 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_fusion_fuzz.py \
            tests/test_output_over_input.py tests/test_stored_prologue.py tests/test_fusion_trust.py tests/test_fusion.py \
            > "$OUT/gpu_fusion_tests.log" 2>&1 &
        CUDA_VISIBLE_DEVICES=0 TORCHINDUCTOR_COMPILE_THREADS=1 timeout 500 python3 benchmarks/fuzz_fusion.py \
            --seed "${SEED:-42}" --feature output_over_input --count "${COUNT:-600}" --batch 25 \
            --out "$OUT/gpu_fuzz_inplace" > "$OUT/gpu_fuzz_inplace.log" 2>&1 &
        # GPU 1's tests as two processes side by side: one after the other they take 670 s.
        CUDA_VISIBLE_DEVICES=1 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_aoti.py \
            tests/test_gpu.py tests/test_fast_launch.py tests/test_migration.py tests/test_docs_examples.py \
            > "$OUT/gpu_other_tests.log" 2>&1 &
        CUDA_VISIBLE_DEVICES=1 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_liger.py \
            tests/test_llama_liger.py tests/test_inductor.py tests/test_fusion_corpus.py \
            > "$OUT/gpu_liger_tests.log" 2>&1 &
        wait
        tail -n 4 "$OUT/gpu_fusion_tests.log" "$OUT/gpu_other_tests.log" "$OUT/gpu_liger_tests.log" \
            | tee -a "$OUT/inplace_x2_tests.log"
        tail -n 30 "$OUT/gpu_fuzz_inplace.log" | tee -a "$OUT/inplace_x2_tests.log"
    else
        CUDA_VISIBLE_DEVICES=0 timeout 540 python3 benchmarks/llama_liger.py --paths plain,ours,ours_hf_rope,builtin \
            --rounds "${ROUNDS:-6}" --steps-per-round 5 --json "$OUT/llama.json" --profile "$OUT/llama_profile.txt" \
            --profile-steps 5 2>&1 | grep -v "warn_once\|dynamo_pgo" | tail -30 > "$OUT/llama.log" &
        CUDA_VISIBLE_DEVICES=1 timeout 540 python3 benchmarks/llama_liger.py --paths plain,ours,ours_hf_rope,builtin \
            --layers 8 --batch 4 --seq 2048 --rounds "${ROUNDS2:-4}" --steps-per-round 5 --json "$OUT/llama_second.json" \
            --profile "$OUT/llama_second_profile.txt" --profile-steps 3 2>&1 | grep -v "warn_once\|dynamo_pgo" \
            | tail -30 > "$OUT/llama_second.log" &
        wait
        tail -n 25 "$OUT/llama.log" "$OUT/llama_second.log" | tee -a "$OUT/inplace_x2_bench.log"
    fi
    ;;
proof_x4)
    # 4 GPUs, one job each, side by side (sixteenth session: the store-coverage proof).
    # GPU 0: the gpu-marked fusion tests; GPU 1: the other one-GPU tests (Liger, corpus,
    # migration, inductor with CUDA graphs, AOTI packaging, launches); GPU 2: benchmarks/fusion.py;
    # GPU 3: the Llama + Liger benchmark, plain / ours / built-in.
    nvidia-smi -L > "$OUT/proof_x4.log"
    CUDA_VISIBLE_DEVICES=0 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_store_coverage.py \
        tests/test_fusion_trust.py tests/test_fusion.py > "$OUT/gpu_fusion_tests.log" 2>&1 &
    CUDA_VISIBLE_DEVICES=1 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_liger.py \
        tests/test_fusion_corpus.py tests/test_migration.py tests/test_inductor.py tests/test_aoti.py tests/test_gpu.py \
        tests/test_fast_launch.py tests/test_docs_examples.py > "$OUT/gpu_other_tests.log" 2>&1 &
    CUDA_VISIBLE_DEVICES=2 timeout 540 python3 benchmarks/fusion.py --rounds "${ROUNDS:-5}" --round-ms 50 \
        --json "$OUT/fusion.json" 2>&1 | grep -v "warn_once\|compiled, max abs diff" > "$OUT/fusion.log" &
    CUDA_VISIBLE_DEVICES=3 timeout 540 python3 benchmarks/llama_liger.py --paths plain,ours,builtin --rounds 4 \
        --steps-per-round 5 --json "$OUT/llama.json" 2>&1 | grep -v "warn_once\|dynamo_pgo" | tail -30 > "$OUT/llama.log" &
    wait
    tail -n 4 "$OUT/gpu_fusion_tests.log" "$OUT/gpu_other_tests.log" | tee -a "$OUT/proof_x4.log"
    tail -n 25 "$OUT/fusion.log" "$OUT/llama.log" | tee -a "$OUT/proof_x4.log"
    ;;
proof_x4_second)
    # 4 GPUs, after proof_x4: GPUs 0-1 the gpu-marked 2-GPU tests, then the fusion tests proof_x4
    # failed or did not reach; GPU 2: inductor (CUDA graphs), AOTI packaging, launches; GPU 3: the
    # docs' examples and migration tests, then the bias + GELU row of benchmarks/fusion.py.
    nvidia-smi -L > "$OUT/proof_x4_second.log"
    (CUDA_VISIBLE_DEVICES=0,1 bash "$0" two_gpu_tests > /dev/null 2>&1
     CUDA_VISIBLE_DEVICES=0 timeout 300 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_store_coverage.py \
        "tests/test_fusion_trust.py::test_an_operand_is_not_moved_before_a_launch_that_writes_what_it_reads" \
        > "$OUT/gpu_fusion_tests.log" 2>&1) &
    CUDA_VISIBLE_DEVICES=2 timeout 540 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_inductor.py \
        tests/test_aoti.py tests/test_gpu.py tests/test_fast_launch.py > "$OUT/gpu_inductor_tests.log" 2>&1 &
    (CUDA_VISIBLE_DEVICES=3 timeout 400 python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_docs_examples.py \
        tests/test_migration.py > "$OUT/gpu_docs_tests.log" 2>&1
     CUDA_VISIBLE_DEVICES=3 timeout 120 python3 benchmarks/fusion.py --rounds 5 --round-ms 50 --only elementwise_bias_gelu \
        --json "$OUT/fusion_bias_gelu.json" 2>&1 | grep -v "warn_once\|compiled, max abs diff" > "$OUT/fusion_bias_gelu.log") &
    wait
    tail -n 8 "$OUT/two_gpu_tests.log" | tee -a "$OUT/proof_x4_second.log"
    tail -n 3 "$OUT"/gpu_*_tests.log | tee -a "$OUT/proof_x4_second.log"
    tail -n 25 "$OUT/fusion_bias_gelu.log" | tee -a "$OUT/proof_x4_second.log"
    ;;
cpu_fuzz)
    if [ -d .whl_fuzz ]; then
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/np .whl_fuzz/*.whl
        export PYTHONPATH=/tmp/np:$PYTHONPATH
    fi
    export TRITON_INTERPRET=1 CUDA_VISIBLE_DEVICES= TORCHINDUCTOR_COMPILE_THREADS=1 OMP_NUM_THREADS=1
    python3 -c "import numpy, torch, triton; print('numpy', numpy.__version__, 'torch', torch.__version__, 'triton', triton.__version__)"
    # INDICES="3765 144 ...": check those programs of SEED again, one process each, first.
    for index in ${INDICES:-}; do
        (timeout 300 python3 -X faulthandler benchmarks/fuzz_fusion.py --seed "${SEED:-6}" --index "$index" \
            --out "$OUT/recheck" > "$OUT/recheck_$index.log" 2>&1
         echo "recheck seed ${SEED:-6} #$index: exit $? (0: ok)" > "$OUT/recheck_$index.rc") &
    done
    wait
    cat "$OUT"/recheck_*.rc 2>/dev/null
    for job in $(seq 0 $((${JOBS:-28} - 1))); do
        start=$((${START:-0} + job * ${COUNT:-300}))
        timeout "${LIMIT:-500}" python3 -X faulthandler benchmarks/fuzz_fusion.py --seed "${SEED:-6}" --start $start \
            --count "${COUNT:-300}" --batch 25 --out "$OUT/fuzz_$job" > "$OUT/fuzz_$job.log" 2>&1 &
    done
    wait
    cat "$OUT"/fuzz_*/progress_*.jsonl > "$OUT/cpu_fuzz_progress.jsonl"
    python3 - "$OUT/cpu_fuzz_progress.jsonl" <<'PY'
import collections, json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
print(len(records), "programs:", dict(collections.Counter(r["verdict"] for r in records)))
for r in records:
    if r["verdict"] != "ok":
        print(r["summary"].splitlines()[0][:300])
PY
    ;;
*)
    echo "usage: $0 two_gpu_tests|tp_block|llama_fsdp|one_gpu_pair|cpu_fuzz|trust_x4|compile_time|trust_recheck|gpu_fuzz|llama_rope|fusion_gpu" >&2
    exit 2
    ;;
esac
