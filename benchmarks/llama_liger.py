r"""A real model: a HuggingFace Llama trained with Liger-Kernel's ops under torch.compile.

Builds ``transformers.LlamaForCausalLM`` from a ``LlamaConfig`` (random init, nothing
downloaded), and times a compiled training step (forward with the loss, backward, SGD step;
bf16 autocast on fp32 weights; ``torch.compile`` with the default backend, inductor) along
three paths, each in its own model instance with the same initial weights:

  plain     no Liger: inductor writes every kernel
  ours      ``apply_liger_kernel_to_llama(rope=True, rms_norm=True, swiglu=True,
            cross_entropy=False, fused_linear_cross_entropy=False)``, with every kernel that
            Liger's RMSNorm, SwiGLU and RoPE ops launch replaced by
            ``torch_triton_hop.wrap_triton(kernel)`` (tests/liger_helpers.py)
  built-in  the same Liger patch, kernels untouched: Dynamo captures Liger's raw
            ``kernel[grid](...)`` launches with torch's own machinery
  ours_hf_rope  (only when asked for) ours with transformers' own apply_rotary_pos_emb in
            place of Liger's RoPE: what Liger's graph-breaking RoPE costs (see below)

    python benchmarks/llama_liger.py --json llama.json --profile llama_profile.txt   # H100
    python benchmarks/llama_liger.py --paths ours,builtin --rounds 5
    python benchmarks/llama_liger.py --smoke          # tiny config; CPU interpreter OK
    python benchmarks/llama_liger.py --seq-lengths 1024,896   # lengths in turn: dynamic shapes

What it reports per path: ms per step (median over rounds; each round runs
``--steps-per-round`` steps, the order of the paths rotates each round: ABC, BCA, CAB, ...),
tokens/s, the host's time to issue one step with the device idle at its start ("host ms":
where it nears ms/step, Python and launches bound the step), the allocator's peak during one
step (above what was allocated before it, and absolute), the wall time of the first step
(Dynamo, AOTAutograd and inductor compile forward and backward there; cold: inductor's caches are off unless ``--inductor-caches``, and a small
compile first pays the process's one-time costs, so the first path is not charged for them),
Dynamo's graph breaks and graphs, and the user-kernel launches Dynamo
captured: our HOP's nodes and torch's ``triton_kernel_wrapper_*`` nodes (counted separately)
in the graphs it handed the backend, forward and backward bodies of Liger's autograd Functions
included, each graph once ("nodes"), and the launches those graphs make in one step ("per
step": a graph that several layers reuse counts once per use). Each path's losses over its
first ``--check-steps`` steps are checked against the same steps of the plain model run
eagerly; the run fails (exit status 1) if they disagree or a path's graphs hold the wrong
launches (ours: only our HOP; built-in: only torch's; plain: none). On a GPU,
``--memory-at-peak FILE`` replays one step's allocator history to its peak and lists, per path,
the blocks alive there by the line that made them (in inductor's code: shape, dtype and the
kernel that writes the buffer), then each path against the first one.

Liger's RoPE goes through its dispatcher, ``liger_kernel.backends.dispatch``, which Liger marks
``@torch.compiler.disable``: Dynamo breaks the graph at every RoPE call, and RoPE runs
eagerly, forward and backward, in both Liger paths. That is Liger's choice and is kept: the
breaks are counted, not removed. With ``ours`` the eager RoPE launches go through the wrapper.

Paths coexist in one process: each model is compiled with its own backend object (Dynamo
never reuses a graph compiled for another backend), and each step runs inside its path's
state: the module globals that Liger patches (``modeling_llama.apply_rotary_pos_emb``) and
the kernel objects in Liger's modules (wrappers for ``ours``, raw kernels for ``built-in``).

FSDP2 (``--fsdp``, under ``torchrun``): every model, the eager reference included, is sharded
with ``torch.distributed.fsdp.fully_shard`` on each decoder layer and then on the root model,
over all the ranks (NCCL on GPUs, one GPU a rank; gloo on CPU), before ``torch.compile`` (the
same default backend). Each rank trains on its own batch of ``--batch`` x ``--seq`` tokens
(its own random ids), so tokens/s counts all ranks' tokens. The losses printed and checked
are the mean over the ranks of each rank's loss (the loss of the global batch: the batches are
of equal size), gathered with a separate all-reduce in the check steps only; ms/step per round
is the slowest rank's; peak memory is rank 0's, with the largest over the ranks beside it (in
the JSON). Rank 0 prints and writes the JSON and the profile. On the 2-GPU machine (one host,
two H100s, ``python3`` with torch 2.11 + triton 3.6; its NVLink multicast must stay off, hence
the two variables, which the script also sets by default under ``--fsdp``), from the
repository root, with the Liger wheel in ``.whl/`` (git-ignored: carry it) installed to
/tmp/site and the repository root on PYTHONPATH::

    set -o pipefail; python3 -m pip install -q --no-deps --target /tmp/site .whl/liger_kernel-0.8.5-py3-none-any.whl &&
    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 PYTHONPATH=/tmp/site:$PWD \
        python3 -m torch.distributed.run --standalone --nproc-per-node 2 \
        benchmarks/llama_liger.py --fsdp --json $OUT/llama_fsdp.json --profile $OUT/llama_fsdp_profile.txt \
        2>&1 | tee $OUT/llama_fsdp.log

and on CPU (gloo, the interpreter; the built-in path skipped)::

    torchrun --standalone --nproc-per-node 2 benchmarks/llama_liger.py --fsdp --smoke

Without a GPU the kernels run on the Triton interpreter (``--smoke``; the built-in path does
not run there). Liger's RoPE is forced to its Triton implementation
(``LIGER_KERNEL_IMPL_ROPE=nvidia-triton``) so that a CuTe DSL install does not change what
is measured.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import copy
import json
import logging
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(os.path.dirname(HERE), "tests")

from _interpreter import use_interpreter_without_gpu  # noqa: E402

use_interpreter_without_gpu()  # before triton is imported
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # triton 3.9 warns unless chosen
os.environ.setdefault("LIGER_KERNEL_IMPL_ROPE", "nvidia-triton")
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    # Cold compiles (the first step's time), and never code compiled by an earlier checkout.
    import atexit

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="llama_liger_inductor_")
    atexit.register(shutil.rmtree, os.environ["TORCHINDUCTOR_CACHE_DIR"], ignore_errors=True)

import torch  # noqa: E402

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cuda" if torch.cuda.is_available() and not INTERPRETED else "cpu"
PATHS = ("plain", "ours", "builtin")
EXTRA_PATHS = ("ours_hf_rope",)


class Dist:
    """This process's place in an FSDP2 run (``--fsdp``); one rank of one otherwise."""

    rank = 0
    world = 1
    mesh = None
    backend = None

# The Liger modules whose kernels the Llama patch launches (RMSNorm, SwiGLU, RoPE).
LIGER_MODULES = ("liger_kernel.ops.rms_norm", "liger_kernel.ops.swiglu", "liger_kernel.ops.rope")
LIGER_KERNEL_NAMES = ("_rms_norm", "_swiglu", "_triton_rope")


# --- the model -----------------------------------------------------------------------------

def llama_config(args):
    from transformers import LlamaConfig

    return LlamaConfig(
        hidden_size=args.hidden, num_hidden_layers=args.layers, num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads, intermediate_size=args.intermediate, vocab_size=args.vocab,
        max_position_embeddings=max(args.seq, 128), use_cache=False, attn_implementation=args.attention)


class PathState:
    """What a path's step runs under: module globals and Liger's kernel objects.

    Liger's Llama patch sets ``modeling_llama.apply_rotary_pos_emb`` (and the RMSNorm / MLP
    classes, for models built later) for the whole process, and Liger's ops launch whatever
    kernel object their module holds at call time; RoPE runs outside the compiled graphs, so
    this matters at run time too, not only while Dynamo traces.
    """

    def __init__(self, module_globals: dict, kernels: dict):
        self.module_globals = module_globals  # {(module, name): value}
        self.kernels = kernels  # {(module, name): kernel object}

    def __enter__(self):
        for (module, name), value in {**self.module_globals, **self.kernels}.items():
            setattr(module, name, value)
        return self

    def __exit__(self, *exc):
        return False


def build(args):
    """The models (plain, ours, builtin, eager reference), the path states, the wrapped kernels."""
    import importlib

    from transformers import LlamaForCausalLM
    from transformers.models.llama import modeling_llama

    sys.path.insert(0, TESTS)
    import liger_helpers

    # Wrap once (on CPU this also applies the interpreter workarounds); the built-in path gets
    # the raw kernels back through its PathState.
    wrapped = liger_helpers.wrap_liger_kernels(LIGER_MODULES)
    from liger_kernel.transformers import apply_liger_kernel_to_llama
    from torch_triton_hop._wrap import TritonKernelWrapper

    ours_kernels, raw_kernels = {}, {}
    for module_name, names in wrapped.items():
        module = importlib.import_module(module_name)
        for name in names:
            wrapper = getattr(module, name)
            assert isinstance(wrapper, TritonKernelWrapper), (module_name, name)
            ours_kernels[(module, name)] = wrapper
            raw_kernels[(module, name)] = wrapper.kernel

    patched_names = ("apply_rotary_pos_emb", "LlamaRMSNorm", "LlamaMLP")
    original = {(modeling_llama, n): getattr(modeling_llama, n) for n in patched_names}

    torch.manual_seed(args.seed)
    base = LlamaForCausalLM(llama_config(args)).to(DEVICE)
    models = {"eager": base}
    for path in args.paths:
        models[path] = copy.deepcopy(base)
    for path in args.paths:
        if path != "plain":
            apply_liger_kernel_to_llama(rope=True, rms_norm=True, swiglu=True, cross_entropy=False,
                                        fused_linear_cross_entropy=False, model=models[path])
    liger = {(modeling_llama, n): getattr(modeling_llama, n) for n in patched_names}
    states = {
        "eager": PathState(original, {}),
        "plain": PathState(original, {}),
        "ours": PathState(liger, ours_kernels),
        "builtin": PathState(liger, raw_kernels),
        "ours_hf_rope": PathState({**liger, (modeling_llama, "apply_rotary_pos_emb"):
                                   original[(modeling_llama, "apply_rotary_pos_emb")]}, ours_kernels),
    }
    if "ours" in args.paths or "builtin" in args.paths:
        from liger_kernel.transformers.rope import liger_rotary_pos_emb

        assert liger[(modeling_llama, "apply_rotary_pos_emb")] is liger_rotary_pos_emb
    with states["plain"]:
        pass  # leave the process as it was before the patch; each step sets its own state
    return models, states, liger_helpers


# --- counting what Dynamo captured ---------------------------------------------------------

def hop_targets():
    import torch._higher_order_ops.triton_kernel_wrap as builtin_hops

    import torch_triton_hop

    ours = {torch_triton_hop.triton_kernel_wrapper_mutation, torch_triton_hop.triton_kernel_wrapper_functional}
    builtin = {builtin_hops.triton_kernel_wrapper_mutation, builtin_hops.triton_kernel_wrapper_functional}
    return ours, builtin


class CountingBackend:
    """The default backend (inductor's compile_fx, as torch.compile(backend="inductor") calls
    it), counting the user-kernel launches in each graph Dynamo hands it: nodes of our HOP and
    of torch's, in the graph and its subgraphs (an autograd.Function's forward and backward
    bodies). One object per path: Dynamo reuses a compiled graph only for the same backend."""

    def __init__(self, path):
        self.path = path
        self.graphs = 0
        self.ours = 0
        self.builtin = 0
        self.ran_ours = self.ran_builtin = 0  # launches made by the compiled graphs, so far
        self.kernels: dict[str, int] = {}
        self.ours_targets, self.builtin_targets = hop_targets()

    def __call__(self, gm, example_inputs):
        from torch._inductor.compile_fx import compile_fx

        self.graphs += 1
        ours = builtin = 0
        for module in gm.modules():
            graph = getattr(module, "graph", None)
            if graph is None:
                continue
            for node in graph.nodes:
                if node.op != "call_function":
                    continue
                if node.target in self.ours_targets:
                    ours += 1
                    key = str(node.kwargs.get("kernel", "?")).partition("@")[0]
                elif node.target in self.builtin_targets:
                    builtin += 1
                    key = _builtin_kernel_name(node)
                else:
                    continue
                self.kernels[key] = self.kernels.get(key, 0) + 1
        self.ours += ours
        self.builtin += builtin
        compiled = compile_fx(gm, example_inputs)
        if not (ours or builtin):
            return compiled

        # A graph runs once per layer that reuses it: count the launches each call of the
        # graph makes (its forward and, in training, its backward body) as it runs.
        def counted(*args):
            self.ran_ours += ours
            self.ran_builtin += builtin
            return compiled(*args)

        return counted


def _builtin_kernel_name(node) -> str:
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table

    try:
        kernel = kernel_side_table.get_kernel(node.kwargs["kernel_idx"])
        while hasattr(kernel, "fn"):
            kernel = kernel.fn
        return f"{kernel.__module__}:{kernel.__name__}"
    except Exception:  # noqa: BLE001: only a label
        return "builtin:?"


class BuiltinWarnings(logging.Filter):
    """Collects the warnings of torch's built-in user-kernel support (when its read/write
    analysis of a kernel fails it assumes every input is written, and logs a warning with a
    traceback at each launch it traces): counted per path and summarised instead of flooding
    the log. They come from torch/_higher_order_ops/triton_kernel_wrap.py through the
    ``torch._dynamo`` logger, which this filters."""

    LOGGER = "torch._dynamo"
    SOURCE = os.path.join("_higher_order_ops", "triton_kernel_wrap.py")

    def __init__(self, show: bool):
        super().__init__()
        self.show = show
        self.records: list[logging.LogRecord] = []
        logging.getLogger(self.LOGGER).addFilter(self)

    def filter(self, record):
        if record.levelno >= logging.WARNING and record.pathname.endswith(self.SOURCE):
            self.records.append(record)
            return self.show
        return True

    def summary(self, start: int) -> dict:
        records = self.records[start:]
        reasons: dict[str, int] = {}
        for record in records:
            reason = first_line(record.getMessage())
            if record.exc_info and record.exc_info[1] is not None:
                reason += f" ({type(record.exc_info[1]).__name__}: {last_line(str(record.exc_info[1]))})"
            reasons[reason[:300]] = reasons.get(reason[:300], 0) + 1
        return reasons


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def warm_up_compiler(args):
    """Pay the process's one-time costs (inductor's compile workers, triton's first compile,
    cuBLAS) before the first path's compile is timed."""
    linear = torch.nn.Linear(64, 64, device=DEVICE)
    x = torch.randn(8, 64, device=DEVICE)
    compiled = torch.compile(lambda x: torch.nn.functional.gelu(linear(x)).square().sum())
    autocast = torch.autocast(DEVICE, dtype=torch.bfloat16) if args.autocast else contextlib.nullcontext()
    with autocast:
        loss = compiled(x)
    loss.backward()
    sync()


def dynamo_counters():
    c = torch._dynamo.utils.counters
    return {"graph_break": dict(c["graph_break"]), "unique_graphs": c["stats"]["unique_graphs"],
            "recompiles": sum(c["recompiles"].values()) if "recompiles" in c else 0}


def counters_delta(before, after):
    breaks = {reason: n - before["graph_break"].get(reason, 0) for reason, n in after["graph_break"].items()}
    breaks = {reason: n for reason, n in breaks.items() if n}
    return {
        "graph_breaks": sum(breaks.values()),
        "graph_break_reasons": {first_line(reason): n for reason, n in breaks.items()},
        "graphs": after["unique_graphs"] - before["unique_graphs"],
    }


def first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    explanation = next((line for line in lines if line.startswith("Explanation:")), "")
    return " / ".join(filter(None, [lines[0] if lines else "", explanation]))[:300]


# --- stepping ------------------------------------------------------------------------------

def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def make_step(model, state, args, float_arguments, compiled=True, backend=None):
    """One training step of `model` under its path's state: returns the loss tensor."""
    runner = torch.compile(model, backend=backend) if compiled else model
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, foreach=DEVICE == "cuda")
    # Under FSDP2 each rank trains on its own ids (rank 0's are the single-process run's).
    torch.manual_seed(args.seed + 1 + 1000 * Dist.rank)
    # One batch per sequence length, taken in turn step after step (--seq-lengths).
    batches = [torch.randint(0, args.vocab, (args.batch, seq), device=DEVICE) for seq in args.seq_lengths]
    taken = itertools.count()
    autocast = torch.autocast(DEVICE, dtype=torch.bfloat16) if args.autocast else contextlib.nullcontext()

    def step():
        ids = batches[next(taken) % len(batches)]
        with state, float_arguments():
            with autocast:
                loss = runner(input_ids=ids, labels=ids).loss
            loss.backward()  # RoPE's eager backward launches the path's kernels: still in state
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    return step


def timed_steps(step, n, synced=False):
    """ms per step of n steps. synced: each step waits for the GPU before the next begins, as a
    loop that reads the loss every step does; the host's time per step is then no longer hidden
    behind the GPU's."""
    sync()
    start = time.perf_counter()
    for _ in range(n):
        step()
        if synced:
            sync()
    sync()
    return (time.perf_counter() - start) / n * 1e3


def synchronising_calls(step) -> int:
    """How many calls of one step make the host wait for the GPU (CUDA's sync debug mode, which
    warns at each; it is a prototype and may miss some)."""
    import warnings

    if DEVICE != "cuda":
        return None
    sync()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            step()
        finally:
            torch.cuda.set_sync_debug_mode(0)
    sync()
    return sum("called a synchronizing" in str(w.message) for w in caught)


def host_ms(step, n=5):
    """Median wall time for one step's host side to return, the device idle at its start: where
    it nears the step's time, the host (Python, guards, launches) bounds the step, not the GPU."""
    times = []
    for _ in range(n):
        sync()
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    sync()
    return round(statistics.median(times), 3)


def host_profile(path, step, n, out):
    """cProfile of `n` steps: where the host's time goes (functions by own time, and by time
    with callees). This thread's only: a GPU's backward runs on autograd's device thread."""
    import cProfile
    import io
    import pstats

    sync()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(n):
        step()
    sync()
    profiler.disable()
    for order in ("tottime", "cumulative"):
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats(order).print_stats(45)
        out.write(f"===== {path}: {n} steps, by {order} =====\n{text.getvalue()}\n")


def compile_phase_seconds(since=None):
    """Seconds per phase of the compiler's own timers (dynamo_timed: tracing, AOTAutograd,
    inductor's passes, lowering, code generation, waiting for kernel compiles), summed over all
    threads (the backward compiles in autograd's); with `since`, the time added after it, the
    longest first. Phases nest, so they do not add up to the first step's time."""
    from torch._dynamo.utils import compilation_time_metrics

    now = {name: sum(times) for name, times in compilation_time_metrics.items()}
    if since is None:
        return now
    added = {name: round(seconds - since.get(name, 0.0), 2) for name, seconds in now.items()}
    return dict(sorted(((n, s) for n, s in added.items() if s >= 0.01), key=lambda item: -item[1]))


def compile_profile(path, step, out):
    """cProfile of the first step (the compile): the top functions by time with callees, then the
    package's own. The backward is compiled in the forward's thread here (AOTAutograd otherwise
    compiles it lazily in autograd's device thread, which cProfile does not see). Run apart from
    the timed measurements: the profiler slows the compile itself. Returns the step's loss.
    On torch 2.11 + Python 3.12 its time-with-callees lost the frames Dynamo evaluates (the step
    itself was missing from the table): the compiler's own phases (compile_phase_seconds) are
    the better account."""
    import cProfile
    import io
    import pstats

    import torch._functorch.config as functorch_config

    import torch_triton_hop

    eager_backward = ({"force_non_lazy_backward_lowering": True}
                      if hasattr(functorch_config, "force_non_lazy_backward_lowering") else {})
    sync()
    profiler = cProfile.Profile()
    start = time.perf_counter()
    with functorch_config.patch(**eager_backward):
        profiler.enable()
        loss = step()
        sync()
        profiler.disable()
    seconds = time.perf_counter() - start
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("cumulative").print_stats(40)
    package = os.path.dirname(torch_triton_hop.__file__)
    ours = sorted(((cumulative, calls, f"{os.path.relpath(file, package)}:{line}({name})")
                   for (file, line, name), (calls, _, _, cumulative, _) in stats.stats.items()
                   if file.startswith(package)), reverse=True)[:25]
    out.write(f"===== {path}: first step {seconds:.1f} s under cProfile =====\n{text.getvalue()}\n")
    out.write(f"torch_triton_hop's functions by time with callees ({path}):\n")
    for cumulative, calls, where in ours:
        out.write(f"  {cumulative:8.3f} s  {calls:6d} calls  {where}\n")
    out.write("\n")
    out.flush()
    return loss


def peak_memory(step):
    if DEVICE != "cuda":
        return {"peak_step_MiB": None, "peak_MiB": None}
    sync()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    step()
    sync()
    peak = torch.cuda.max_memory_allocated()
    return {"peak_step_MiB": round((peak - base) / 2**20, 1), "peak_MiB": round(peak / 2**20, 1)}


def live_at_peak(step, out, path):
    """Which of one step's allocations are alive when its allocated bytes peak, and where each
    was made: the allocator's history of the step replayed to its peak, the blocks grouped by
    their innermost Python frame (for compiled code, the line of inductor's generated wrapper,
    read back from its file). Written to `out`; returns {site: bytes}."""
    import linecache

    from torch.cuda import memory as cuda_memory

    sync()
    cuda_memory._record_memory_history(enabled="all", context="alloc", stacks="python", max_entries=1_000_000)
    try:
        step()
        sync()
        snapshot = cuda_memory._snapshot()
    finally:
        cuda_memory._record_memory_history(enabled=None)
    trace = snapshot["device_traces"][torch.cuda.current_device()]
    live, now, peak, at_peak = {}, 0, 0, {}
    for event in trace:
        if event["action"] == "alloc":
            live[event["addr"]] = event
            now += event["size"]
            if now > peak:
                peak, at_peak = now, dict(live)
        elif event["action"] == "free_completed" and event["addr"] in live:
            now -= live.pop(event["addr"])["size"]

    def written_by(filename, line, text):
        """In inductor's wrapper code, the first call after an allocation that takes the buffer."""
        buffer = text.split(" = ", 1)[0].strip()
        for later in range(line + 1, line + 60):
            code = linecache.getline(filename, later).strip()
            if re.search(rf"\b{buffer}\b", code) and not code.startswith(("#", "del ", f"{buffer} =")):
                return code.split("(", 1)[0]
        return "?"

    def site(event):
        frames = event.get("frames") or []
        for frame in frames:
            name = frame["filename"]
            if "/torch/" in name and "torchinductor" not in name and "/tmp/" not in name:
                continue  # torch's own Python: the caller says more
            text = linecache.getline(name, frame["line"]).strip()
            where = f"{os.path.basename(name)}:{frame['line']} {frame['name']}: {text[:110]}"
            if "empty_strided" in text:
                where += f"  -> {written_by(name, frame['line'], text)}"
            elif frame is not frames[0]:  # made inside torch: say where
                inner = frames[0]
                where += f"  <- {os.path.basename(inner['filename'])}:{inner['line']} {inner['name']}"
            return where
        return "(no Python frame: autograd's engine or C++)"

    by_site, counts = {}, {}
    for event in at_peak.values():
        key = site(event)
        by_site[key] = by_site.get(key, 0) + event["size"]
        counts[key] = counts.get(key, 0) + 1
    out.write(f"===== {path}: {peak / 2**20:.1f} MiB of this step's allocations alive at its peak, "
              f"{len(at_peak)} blocks =====\n")
    for key, size in sorted(by_site.items(), key=lambda kv: -kv[1]):
        out.write(f"{size / 2**20:10.1f} MiB  {counts[key]:4d} x  {key}\n")
    out.write("\n")
    return {key: [counts[key], round(size / 2**20, 2)] for key, size in by_site.items()}


def what_was_allocated(site):
    """A site named across graphs: "shape dtype by kernel" for inductor's buffers (the kernel
    without its numeric suffix), else the site without file, line and buffer numbers."""
    shape = re.search(r"empty_strided_cuda\(\((.*?)\), \(.*?\), torch\.(\w+)\)", site)
    if shape:
        writer = re.search(r"-> (\S+)", site)
        by = re.sub(r"buf\d+", "buf", re.sub(r"_\d+(\.run)?$", "", writer.group(1))) if writer else "?"
        return f"({shape.group(1)}) {shape.group(2)} by {by}"
    return re.sub(r"buf\d+", "buf", re.sub(r"^\S+\.py:\d+ ", "", site))[:140]


def compare_at_peak(live, base, out):
    """Each path's blocks alive at its peak against `base`'s, by what_was_allocated."""
    def tally(sites):
        counts = {}
        for site, (n, mib) in sites.items():
            key = (what_was_allocated(site), round(mib / n, 1))
            counts[key] = counts.get(key, 0) + n
        return counts

    reference = tally(live[base])
    for path, sites in live.items():
        if path == base:
            continue
        mine = tally(sites)
        out.write(f"===== {path} minus {base}: blocks alive at the peak =====\n")
        for key in sorted(set(mine) | set(reference), key=lambda k: (-k[1], k[0])):
            extra = mine.get(key, 0) - reference.get(key, 0)
            if extra:
                out.write(f"{extra:+4d} x {key[1]:7.1f} MiB  {key[0]}\n")
        out.write("\n")


# --- profiling -----------------------------------------------------------------------------

def kernel_category(name: str) -> str:
    lowered = name.lower()
    if any(k in name for k in LIGER_KERNEL_NAMES):
        return "liger"
    if "flash" in lowered or "fmha" in lowered or "attention" in lowered:
        return "attention"
    if any(k in lowered for k in ("gemm", "sm90_xmma", "cutlass", "nvjet", "cublas", "matmul", "sm80_xmma")):
        return "gemm"
    if lowered.startswith("triton_") or "triton_" in lowered:
        return "inductor triton"
    if "nccl" in lowered:  # --fsdp: all-gathers, reduce-scatters
        return "collectives (nccl)"
    if "multi_tensor_apply" in lowered or "foreach" in lowered:
        return "optimizer (foreach)"
    return "other"


SHORT_GAP_US = 5.0  # about what separates two kernels the GPU has queued back to back


def idle_between_kernels(intervals, steps):
    """The GPU's idle time between its kernels over `steps` steps (the profiled window, from its
    first kernel to its last): short gaps are one launch queued after another, long ones are the
    GPU waiting for the host to launch."""
    if len(intervals) < 2:
        return None
    intervals.sort()
    short, long_, gaps = [], [], []
    busy_until, before = intervals[0][1], intervals[0][2]
    for start, end, name in intervals[1:]:
        if start > busy_until:
            gap = start - busy_until
            (short if gap < SHORT_GAP_US else long_).append(gap)
            gaps.append((round(gap, 1), before, name))
        if end >= busy_until:
            busy_until, before = end, name
    return {
        "kernels_per_step": round(len(intervals) / steps),
        "idle_ms_per_step": round((sum(short) + sum(long_)) / steps / 1e3, 3),
        "short_idle_ms_per_step": round(sum(short) / steps / 1e3, 3),
        "short_gaps_per_step": round(len(short) / steps),
        "long_idle_ms_per_step": round(sum(long_) / steps / 1e3, 3),
        "long_gaps_per_step": round(len(long_) / steps),
        "longest_gaps": sorted(gaps, key=lambda gap: -gap[0])[:12],
    }


def profile_path(name, step, steps, out):
    """Writes the profiler's table and a per-kernel / per-category summary; returns the summary."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if DEVICE == "cuda" else [])
    sync()
    with profile(activities=activities) as prof:
        for _ in range(steps):
            step()
        sync()
    averages = prof.key_averages()
    sort = "self_device_time_total" if DEVICE == "cuda" else "self_cpu_time_total"
    try:
        table = averages.table(sort_by=sort, row_limit=40, max_name_column_width=90)
    except (AttributeError, KeyError):
        sort = "self_cuda_time_total"
        table = averages.table(sort_by=sort, row_limit=40, max_name_column_width=90)
    kernels = {}
    intervals = []  # (start us, end us, name) of each GPU kernel, for the idle time between them
    if DEVICE == "cuda":
        for event in prof.events():
            # GPU kernels (and memcpy/memset), not the GPU-side ranges of record_function
            # annotations such as Optimizer.step#SGD.step, which span kernels already counted.
            if event.device_type != torch.autograd.DeviceType.CUDA or getattr(event, "is_user_annotation", False):
                continue
            us = getattr(event, "device_time_total", None)
            if us is None:
                us = event.cuda_time_total
            kernels[event.name] = kernels.get(event.name, 0.0) + us
            intervals.append((event.time_range.start, event.time_range.end, event.name))
    total = sum(kernels.values()) or 1.0
    by_category: dict[str, float] = {}
    for kernel, us in kernels.items():
        category = kernel_category(kernel)
        by_category[category] = by_category.get(category, 0.0) + us
    top = sorted(kernels.items(), key=lambda item: -item[1])[:30]
    out.write(f"\n===== {name}: {steps} steps, sorted by {sort} =====\n{table}\n")
    if kernels:
        out.write(f"GPU kernels ({len(kernels)} names), {total / steps / 1e3:.2f} ms of kernel time per step:\n")
        for category, us in sorted(by_category.items(), key=lambda item: -item[1]):
            out.write(f"  {category:22s} {us / steps / 1e3:8.3f} ms/step  {100 * us / total:5.1f}%\n")
        out.write("top kernels:\n")
        for kernel, us in top:
            out.write(f"  {us / steps / 1e3:8.3f} ms/step  {100 * us / total:5.1f}%  [{kernel_category(kernel)}] "
                      f"{kernel[:140]}\n")
    idle = idle_between_kernels(intervals, steps)
    if idle:
        out.write(f"GPU idle between kernels: {idle['kernels_per_step']} kernels a step; idle "
                  f"{idle['idle_ms_per_step']:.3f} ms/step, {idle['short_idle_ms_per_step']:.3f} of it in gaps under "
                  f"{SHORT_GAP_US} us (one launch after another: {idle['short_gaps_per_step']} a step) and "
                  f"{idle['long_idle_ms_per_step']:.3f} in longer ones ({idle['long_gaps_per_step']} a step; the GPU "
                  f"waited for the host)\nlongest gaps (us, the kernel before -> the kernel after):\n")
        for gap in idle["longest_gaps"]:
            out.write(f"  {gap[0]:8.1f}  {gap[1][:70]} -> {gap[2][:70]}\n")
    out.flush()
    return {
        "idle_between_kernels": idle,
        "kernel_ms_per_step": round(total / steps / 1e3, 3) if kernels else None,
        "by_category_ms_per_step": {k: round(v / steps / 1e3, 3) for k, v in by_category.items()},
        "top_kernels_ms_per_step": [[k[:200], round(v / steps / 1e3, 4)] for k, v in top[:15]],
    }


# --- FSDP2 ---------------------------------------------------------------------------------

def setup_distributed(args):
    """Joins the process group that torchrun describes (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_*)."""
    import datetime

    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        sys.exit("--fsdp: launch under torchrun, e.g. torchrun --standalone --nproc-per-node 2 "
                 "benchmarks/llama_liger.py --fsdp --smoke")
    # The GPU host needs NVLink multicast off (NCCL's NVLS, and symmetric memory's multicast).
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    local_rank = int(os.environ.get("LOCAL_RANK", os.environ["RANK"]))
    if DEVICE == "cuda":
        torch.cuda.set_device(local_rank)  # "cuda" below is this rank's GPU
    Dist.backend = "nccl" if DEVICE == "cuda" else "gloo"
    dist.init_process_group(Dist.backend, timeout=datetime.timedelta(seconds=args.dist_timeout))
    Dist.rank, Dist.world = dist.get_rank(), dist.get_world_size()
    Dist.mesh = init_device_mesh(DEVICE, (Dist.world,))
    if Dist.rank != 0:  # rank 0 reports; the others still run every step (collectives)
        sys.stdout = open(os.devnull, "w")
        args.json = None
        if args.profile:
            args.profile = os.devnull


def shard(model):
    """FSDP2: each decoder layer, then the root (embedding, final norm, LM head)."""
    from torch.distributed.fsdp import fully_shard

    for layer in model.model.layers:
        fully_shard(layer, mesh=Dist.mesh)
    fully_shard(model, mesh=Dist.mesh)
    return model


def global_loss(loss) -> float:
    """The mean over the ranks of their losses (the loss itself with one process)."""
    if Dist.world == 1:
        return loss.item()
    import torch.distributed as dist

    total = loss.detach().float().reshape(1).clone()
    dist.all_reduce(total)  # SUM: gloo has no AVG
    return total.item() / Dist.world


def gather(obj) -> list:
    """`obj` from every rank, in rank order ([obj] with one process)."""
    if Dist.world == 1:
        return [obj]
    import torch.distributed as dist

    out = [None] * Dist.world
    dist.all_gather_object(out, obj)
    return out


# --- the run -------------------------------------------------------------------------------

def versions():
    import triton
    import transformers

    try:
        from importlib.metadata import version

        liger = version("liger_kernel")
    except Exception:  # noqa: BLE001
        liger = "?"
    import torch_triton_hop

    return {
        "python": platform.python_version(), "torch": torch.__version__, "triton": triton.__version__,
        "transformers": transformers.__version__, "liger_kernel": liger,
        "torch_triton_hop": torch_triton_hop.__version__,
        "device": torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu (Triton interpreter)",
        **({"fsdp2": f"{Dist.world} ranks, {Dist.backend}"} if Dist.backend else {}),
    }


class FusionLog(logging.Handler):
    """The fusion pass's debug records while a path compiles: launches fused, and the prologues
    whose result the fused kernel also stores (see [Note: A prologue the fused kernel also stores])."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.fused = self.stored = 0
        self.decisions: list[str] = []  # per launch: what fused and why the rest did not

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "): fused {" in message:
            self.fused += 1
            self.stored += len(set(re.findall(r"_tth_(\w+?)_stored", message)))
        if "): fused {" in message or "): nothing fused" in message:
            self.decisions.append(message.split(". Fused kernel ")[0])

    @contextlib.contextmanager
    def attached(self):
        logger = logging.getLogger("torch_triton_hop._fusion")
        level = logger.level
        logger.addHandler(self)
        logger.setLevel(logging.DEBUG)  # printed only where TORCH_LOGS asks for it
        try:
            yield self
        finally:
            logger.removeHandler(self)
            logger.setLevel(level)


def run(args):
    info = versions()
    print(" ".join(f"{k} {v}," for k, v in info.items()).rstrip(","), flush=True)
    torch._dynamo.config.recompile_limit = max(getattr(torch._dynamo.config, "recompile_limit", 8), 32)
    models, states, liger_helpers = build(args)
    float_arguments = liger_helpers.interpreter_float_arguments  # a no-op on a GPU
    tokens = args.batch * statistics.mean(args.seq_lengths) * Dist.world  # all ranks' tokens, per step
    params = sum(p.numel() for p in models["eager"].parameters())
    if args.fsdp:
        for model in models.values():  # after build's deep copies: copy, then shard
            shard(model)
    print(f"Llama: hidden {args.hidden}, {args.layers} layers, {args.heads} heads / {args.kv_heads} KV, "
          f"intermediate {args.intermediate}, vocab {args.vocab}, {params / 1e6:.1f}M parameters; "
          f"batch {args.batch} x seq {'/'.join(map(str, args.seq_lengths))}; autocast {'bf16' if args.autocast else 'off'}; "
          f"attention {args.attention}; paths {', '.join(args.paths)}"
          + (f"; FSDP2 over {Dist.world} ranks ({Dist.backend}), {tokens} tokens per step in all" if args.fsdp else ""),
          flush=True)

    # The reference: the plain model, eagerly, for the check steps.
    eager_step = make_step(models["eager"], states["eager"], args, float_arguments, compiled=False)
    eager_losses = [global_loss(eager_step()) for _ in range(args.check_steps)]
    del eager_step, models["eager"]
    if DEVICE == "cuda":
        torch.cuda.empty_cache()
    print(f"eager plain losses: {[round(l, 5) for l in eager_losses]}", flush=True)

    # Cold compiles for every path: with inductor's caches on, a later path would load the
    # graphs and kernels it shares with an earlier one (the layers' torch ops, the loss).
    torch._inductor.config.force_disable_caches = not args.inductor_caches
    warm_up_compiler(args)
    builtin_warnings = BuiltinWarnings(args.show_builtin_warnings)

    results = {"config": {k: v for k, v in vars(args).items() if k not in ("json", "profile")},
               "versions": info, "parameters": params, "tokens_per_step": tokens,
               "eager_losses": eager_losses, "paths": {}}
    steps, backends = {}, {}
    failures = []
    for path in args.paths:  # compile each path: its first steps are the loss check
        backends[path] = CountingBackend(path)
        steps[path] = make_step(models[path], states[path], args, float_arguments, backend=backends[path])
        before = dynamo_counters()
        warnings_before = len(builtin_warnings.records)
        phases_before = compile_phase_seconds()
        sync()
        start = time.perf_counter()
        with FusionLog().attached() as fusion_log:
            if args.compile_profile:
                with open(args.compile_profile, "a") as out:
                    losses = [global_loss(compile_profile(path, steps[path], out))]
            else:
                losses = [global_loss(steps[path]())]
            first_step_s = time.perf_counter() - start
            phases = compile_phase_seconds(since=phases_before)
            # (with --seq-lengths these compile again, the sequence length symbolic: logged too)
            losses += [global_loss(steps[path]()) for _ in range(args.check_steps - 1)]
        delta = counters_delta(before, dynamo_counters())
        backend = backends[path]
        ran = (backend.ran_ours, backend.ran_builtin)
        steps[path]()  # one more, counting the launches the compiled graphs make in a step
        per_step = {"ours": backend.ran_ours - ran[0], "builtin": backend.ran_builtin - ran[1]}
        diffs = [abs(a - b) for a, b in zip(losses, eager_losses)]
        agree = all(d <= args.loss_atol + args.loss_rtol * abs(e) for d, e in zip(diffs, eager_losses))
        torch_warnings = builtin_warnings.summary(warnings_before)
        entry = {
            "first_step_s": round(first_step_s, 2), "compile_phases_s": phases, "losses": losses,
            "torch_user_kernel_warnings": torch_warnings,
            "max_loss_diff_vs_eager": max(diffs), "losses_agree": agree,
            **delta,
            "launch_nodes_in_graphs": {"ours": backend.ours, "builtin": backend.builtin},
            "launches_per_step_in_graphs": per_step,
            "launches_by_kernel": dict(sorted(backend.kernels.items())),
            "fused_launches": fusion_log.fused, "stored_prologues": fusion_log.stored,
            "fusion_decisions": fusion_log.decisions,
        }
        results["paths"][path] = entry
        print(f"[{path}] first step {first_step_s:.1f} s; losses {[round(l, 5) for l in losses]} "
              f"(max diff vs eager {max(diffs):.2e}, {'agree' if agree else 'DISAGREE'}); "
              f"{delta['graphs']} graphs, {delta['graph_breaks']} graph breaks; "
              f"launch nodes in graphs: ours {backend.ours}, built-in {backend.builtin}; launches per step from "
              f"the graphs: ours {per_step['ours']}, built-in {per_step['builtin']}; {backend.kernels}; "
              f"fused launches {fusion_log.fused} (prologues also stored: {fusion_log.stored})", flush=True)
        print(f"    compile phases (s, nested): "
              + ", ".join(f"{name} {seconds}" for name, seconds in list(phases.items())[:24]), flush=True)
        for reason, n in delta["graph_break_reasons"].items():
            print(f"    graph break x{n}: {reason}", flush=True)
        for reason, n in torch_warnings.items():
            print(f"    torch's user-kernel support warned x{n}: {reason}", flush=True)
        # Premises: each path ran what it claims to.
        got = (backend.ours, backend.builtin)
        only_ours = got[0] > 0 and got[1] == 0
        premise = {"plain": got == (0, 0), "ours": only_ours, "ours_hf_rope": only_ours,
                   "builtin": got[0] == 0 and got[1] > 0}[path]
        if not premise:
            failures.append(f"{path}: launches in graphs (ours, built-in) = {got}")
        if not agree:
            failures.append(f"{path}: losses {losses} vs eager {eager_losses}")
        write_json(args.json, results)

    for path in args.paths:  # settle: a step or two more (allocator, autotuning caches)
        for _ in range(args.warmup):
            steps[path]()
    graphs_before = dynamo_counters()["unique_graphs"]
    times = {path: [] for path in args.paths}
    for i in range(args.rounds):  # rotate: ABC, BCA, CAB, ...
        k = i % len(args.paths)
        for path in args.paths[k:] + args.paths[:k]:
            times[path].append(timed_steps(steps[path], args.steps_per_round))
    synced_times = {path: [] for path in args.paths}
    for i in range(args.rounds if args.synced else 0):  # the same rotation, each step waited for
        k = i % len(args.paths)
        for path in args.paths[k:] + args.paths[:k]:
            synced_times[path].append(timed_steps(steps[path], args.steps_per_round, synced=True))
    recompiled = dynamo_counters()["unique_graphs"] - graphs_before
    if args.fsdp:  # each round: the slowest rank's time (collectives keep them in step)
        every = gather(times)
        times = {path: [max(t[path][i] for t in every) for i in range(args.rounds)] for path in args.paths}
        recompiled = max(gather(recompiled))
    if recompiled:
        failures.append(f"{recompiled} graphs compiled during the timed rounds (recompiles)")

    for path in args.paths:
        entry = results["paths"][path]
        ms = statistics.median(times[path])
        peak = peak_memory(steps[path])
        if args.fsdp:
            peaks = gather(peak)
            peak["peak_MiB_max_rank"] = max((p["peak_MiB"] for p in peaks if p["peak_MiB"] is not None), default=None)
        entry.update({"ms_per_step": round(ms, 3), "ms_per_step_rounds": [round(t, 3) for t in times[path]],
                      "host_ms_per_step": host_ms(steps[path]),
                      "tokens_per_s": round(tokens / ms * 1e3), **peak})
        if args.synced:
            entry.update({"synced_ms_per_step": round(statistics.median(synced_times[path]), 3),
                          "synchronising_calls_per_step": synchronising_calls(steps[path])})
    results["ratios"] = {}
    for a, b in (("ours", "builtin"), ("ours", "plain"), ("builtin", "plain"), ("ours_hf_rope", "plain"),
                 ("ours", "ours_hf_rope")):
        if a in times and b in times:
            results["ratios"][f"{a}/{b}"] = round(statistics.median(x / y for x, y in zip(times[a], times[b])), 4)
            if args.synced:
                results["ratios"][f"synced {a}/{b}"] = round(statistics.median(
                    x / y for x, y in zip(synced_times[a], synced_times[b])), 4)
    results["recompiles_during_timing"] = recompiled

    if args.profile:
        with open(args.profile, "w") as out:
            out.write(" ".join(f"{k} {v}," for k, v in info.items()).rstrip(",") + "\n")
            for path in args.paths:
                results["paths"][path]["profile"] = profile_path(path, steps[path], args.profile_steps, out)
    if args.host_profile:
        with open(args.host_profile, "w") as out:
            for path in args.paths:
                host_profile(path, steps[path], args.profile_steps, out)
    if args.memory_at_peak and DEVICE == "cuda":
        with open(args.memory_at_peak, "w") as out:
            live = {path: live_at_peak(steps[path], out, path) for path in args.paths}
            compare_at_peak(live, args.paths[0], out)
        for path in args.paths:
            results["paths"][path]["live_at_peak_blocks_MiB"] = live[path]
    results["failures"] = failures
    write_json(args.json, results)
    print_summary(results, args)
    return results


def write_json(path, results):
    if not path:
        return
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1)
    os.replace(tmp, path)


def print_summary(results, args):
    print()
    header = (f"{'path':12s} | {'ms/step':>9s} | {'host ms':>7s} | {'tokens/s':>10s} | {'peak step MiB':>13s} | {'peak MiB':>9s} | "
              f"{'1st step s':>10s} | {'breaks':>6s} | {'graphs':>6s} | {'nodes ours/built-in':>19s} | "
              f"{'per step':>8s} | loss vs eager")
    print(header)
    print("-" * len(header))
    for path, e in results["paths"].items():
        nodes = e["launch_nodes_in_graphs"]
        launches = f"{nodes['ours']} / {nodes['builtin']}"
        per_step = sum(e["launches_per_step_in_graphs"].values())
        peak_step = "-" if e.get("peak_step_MiB") is None else f"{e['peak_step_MiB']:.0f}"
        peak = "-" if e.get("peak_MiB") is None else f"{e['peak_MiB']:.0f}"
        print(f"{path:12s} | {e['ms_per_step']:9.2f} | {e['host_ms_per_step']:7.2f} | {e['tokens_per_s']:10d} | {peak_step:>13s} | {peak:>9s} | "
              f"{e['first_step_s']:10.1f} | {e['graph_breaks']:6d} | {e['graphs']:6d} | {launches:>19s} | {per_step:8d} | "
              f"{'ok' if e['losses_agree'] else 'DISAGREE'} ({e['max_loss_diff_vs_eager']:.1e})")
    for path, e in results["paths"].items():
        if "synced_ms_per_step" in e:
            print(f"{path:12s} | each step waited for: {e['synced_ms_per_step']:.2f} ms/step; calls in a step that "
                  f"wait for the GPU: {e['synchronising_calls_per_step']}")
    print("ratios (median of per-round ratios): "
          + ", ".join(f"{k} {v:.3f}" for k, v in results["ratios"].items()))
    for failure in results["failures"]:
        print(f"FAILED: {failure}")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--kv-heads", type=int, default=4)
    parser.add_argument("--intermediate", type=int, default=5632)
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--seq-lengths", help="comma-separated sequence lengths, one per step in turn (default: "
                        "--seq): from the second length on, Dynamo's automatic dynamic shapes compile the graphs "
                        "again with the sequence length symbolic, and the timed steps run those")
    parser.add_argument("--attention", default="sdpa", help="transformers attn_implementation (default sdpa)")
    parser.add_argument("--paths", default=",".join(PATHS),
                        help=f"comma-separated, from {', '.join(PATHS)} (default: all; builtin needs a GPU)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps-per-round", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2, help="steps per path after the check steps, untimed")
    parser.add_argument("--check-steps", type=int, default=3, help="steps whose losses are compared with eager")
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--loss-atol", type=float, default=5e-3)
    parser.add_argument("--loss-rtol", type=float, default=1e-3)
    parser.add_argument("--no-autocast", dest="autocast", action="store_false",
                        help="fp32 throughout (default: bf16 autocast on a GPU; always off on CPU)")
    parser.add_argument("--inductor-caches", action="store_true",
                        help="keep inductor's caches on (default: off, so that each path's first step compiles cold)")
    parser.add_argument("--show-builtin-warnings", action="store_true",
                        help="let the warnings of torch's user-kernel support through (default: counted, summarised)")
    parser.add_argument("--synced", action="store_true",
                        help="GPU: also time rounds where each step waits for the GPU (as a loop reading the loss "
                             "each step), and count the calls in a step that make the host wait for the GPU")
    parser.add_argument("--json", help="write the results here (rewritten after each path compiles)")
    parser.add_argument("--profile", help="write torch.profiler tables (top kernels by GPU time) here, per path")
    parser.add_argument("--profile-steps", type=int, default=3)
    parser.add_argument("--compile-profile", help="append a cProfile of each path's first step (the compile) here; "
                        "the first-step times of such a run include the profiler's cost")
    parser.add_argument("--host-profile", help="write cProfile tables of --profile-steps steps (host side) here, per path")
    parser.add_argument("--memory-at-peak", help="GPU: write, per path, one step's allocations alive at its peak, "
                        "by the line that made them, here")
    parser.add_argument("--fsdp", action="store_true",
                        help="FSDP2 over the ranks torchrun starts (fully_shard per decoder layer, then the root)")
    parser.add_argument("--dist-timeout", type=int, default=1800,
                        help="--fsdp: seconds a collective may wait (the interpreter's first steps are slow)")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny config (hidden 64, 2 layers, vocab 128, batch 2 x seq 16), 2 rounds of 1 step")
    args = parser.parse_args(argv)
    args.paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    unknown = sorted(set(args.paths) - set(PATHS) - set(EXTRA_PATHS))
    if unknown or not args.paths:
        parser.error(f"--paths: unknown {unknown}; choose from {', '.join(PATHS + EXTRA_PATHS)}")
    if args.smoke:
        args.hidden, args.layers, args.heads, args.kv_heads, args.intermediate = 64, 2, 4, 2, 128
        args.vocab, args.batch, args.seq = 128, 2, 16
        args.rounds, args.steps_per_round, args.warmup, args.profile_steps = 2, 1, 0, 1
    args.seq_lengths = [int(v) for v in args.seq_lengths.split(",")] if args.seq_lengths else [args.seq]
    args.seq = max(args.seq_lengths)
    if DEVICE == "cpu":
        args.autocast = False
        if "builtin" in args.paths:
            print("# builtin: torch's built-in path does not run on the Triton interpreter; skipped", flush=True)
            args.paths.remove("builtin")
    return args


def main(argv=None):
    args = parse_args(argv)
    if not args.fsdp:
        results = run(args)
        if results["failures"]:
            sys.exit(1)
        return
    setup_distributed(args)
    import torch.distributed as dist

    status = 1
    try:
        results = run(args)
        status = 1 if results["failures"] else 0
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        if status == 0:
            dist.barrier()
            dist.destroy_process_group()
    # Leave without the interpreter's teardown, where gloo's threads sometimes end the
    # process with std::terminate (tests/distributed_workers.py does the same).
    os._exit(status)


if __name__ == "__main__":
    main()
