"""Pictures of the recorded benchmark results: ours against torch's built-in path.

    python -m pip install -e ".[bench]"      # matplotlib
    python benchmarks/plots.py               # writes docs/_static/bench_*.png

Reads what the benchmarks recorded, never runs them:
- eager launch overhead: ``results/eager_overhead_h200.log`` (``eager_overhead.py --real-launch``);
- compile time against the number of launches: the ``| N | ours | raw | library |`` table of
  ``RESULTS.md`` (``compile_inductor.py``; one fresh process and cache per measurement);
- per-call time of the compiled small model and the transformer block, forward + backward:
  ``results/compile_inductor_h200.json``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE.parent / "docs" / "_static"
COLORS = {"ours": "#1f77b4", "raw": "#ff7f0e", "library": "#2ca02c", "plain torch": "#7f7f7f", "eager": "#bcbd22"}
LABELS = {
    "ours": "torch_triton_hop.wrap_triton",
    "raw": "raw kernel (built-in path)",
    "library": "torch.library.wrap_triton (built-in)",
    "plain torch": "plain PyTorch (SDPA)",
    "eager": "eager",
}


def eager_overhead(log: pathlib.Path) -> tuple[str, dict[str, dict[str, float]]]:
    """{kernel: {path: us/call}} of the log's first (real-launch) section, and its header."""
    lines = log.read_text().splitlines()
    header, rows = lines[0], {}
    paths = {"raw kernel[grid](...)": "raw", "torch_triton_hop.wrap_triton": "ours",
             "torch.library.wrap_triton": "library"}
    for line in lines[1:]:
        if line.startswith("torch "):  # the next section (stubbed launches)
            break
        for text, key in paths.items():
            match = re.match(rf"(.+?)\s+{re.escape(text)}\s+([\d.]+)\s+([\d.]+)$", line)
            if match:
                rows.setdefault(match.group(1).strip(), {})[key] = float(match.group(2))
    return header, rows


def compile_times(results_md: pathlib.Path) -> dict[int, dict[str, float]]:
    """{launches: {path: seconds}} from RESULTS.md's compile-time table."""
    table: dict[int, dict[str, float]] = {}
    lines = results_md.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| N | ours | raw | library |"))
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        n, ours, raw, library = (cell.strip() for cell in line.strip("|").split("|")[:4])
        table[int(n)] = {"ours": float(ours), "raw": float(raw), "library": float(library)}
    return table


def _bars(ax, groups: list[str], series: dict[str, list[float]], unit: str) -> None:
    width = 0.8 / len(series)
    for i, (path, values) in enumerate(series.items()):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        bars = ax.bar(xs, values, width, label=LABELS[path], color=COLORS[path])
        ax.bar_label(bars, fmt="%.1f" if max(values) >= 10 else "%.2f", fontsize=8, padding=2)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel(unit)
    ax.spines[["top", "right"]].set_visible(False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    args.out.mkdir(parents=True, exist_ok=True)
    written = []

    header, rows = eager_overhead(HERE / "results" / "eager_overhead_h200.log")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    kernels = list(rows)
    _bars(ax, kernels, {path: [rows[k][path] for k in kernels] for path in ("raw", "ours", "library")}, "us / call")
    ax.set_yscale("log")
    ax.set_title("Eager launch overhead (lower is better)\n" + header.split(";")[0], fontsize=10)
    ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    written.append(args.out / "bench_eager_overhead.png")
    fig.savefig(written[-1], dpi=110)

    table = compile_times(HERE / "RESULTS.md")
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for path in ("ours", "raw", "library"):
        ns = sorted(table)
        ax.plot(ns, [table[n][path] for n in ns], marker="o", label=LABELS[path], color=COLORS[path])
    ax.set_xscale("log")
    ax.set_xticks(sorted(table), [str(n) for n in sorted(table)])
    ax.set_xlabel("kernel launches in the compiled model")
    ax.set_ylabel("compile time, first call (s)")
    ax.set_ylim(bottom=0)
    ax.set_title("torch.compile time, cold caches (H200, torch 2.11 + triton 3.6)", fontsize=10)
    ax.legend(frameon=False, fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    written.append(args.out / "bench_compile_time.png")
    fig.savefig(written[-1], dpi=110)

    data = json.loads((HERE / "results" / "compile_inductor_h200.json").read_text())
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    modes = list(data["percall"])
    _bars(left, modes, {p: [data["percall"][m]["us_per_call"][p] for m in modes] for p in ("ours", "raw", "library")},
          "us / call")
    left.set_title("Compiled small model, per call", fontsize=10)
    left.set_ylim(0, 1.45 * max(data["percall"][m]["us_per_call"]["ours"] for m in modes))
    left.legend(frameon=False, fontsize=7, loc="upper left")
    block = data["block"]
    paths = list(block["ms_per_step"])
    bars = right.bar(range(len(paths)), [block["ms_per_step"][p] for p in paths],
                     color=[COLORS[p] for p in paths])
    right.bar_label(bars, fmt="%.3f", fontsize=8, padding=2)
    right.set_xticks(range(len(paths)), [LABELS[p].replace(" (", "\n(") for p in paths], fontsize=7)
    right.set_ylabel("ms / step")
    shape = block["shape"]
    right.set_title(f"Transformer block fwd + bwd, compiled\nbatch {shape['batch']}, seq {shape['seq']}, "
                    f"dim {shape['dim']}, bf16", fontsize=10)
    right.spines[["top", "right"]].set_visible(False)
    fig.suptitle("torch.compile with inductor, H200 (lower is better)", fontsize=11)
    fig.tight_layout()
    written.append(args.out / "bench_compiled.png")
    fig.savefig(written[-1], dpi=110)

    for path in written:
        print(path)


if __name__ == "__main__":
    main()
