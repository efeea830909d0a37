"""What `import torch_triton_hop` costs over `import torch, triton`, and what it imports.

    python benchmarks/import_time.py [--runs 7]

Each run is a fresh process; the figure is the median over runs.
"""

import argparse
import statistics
import subprocess
import sys

SCRIPT = """
import time
start = time.perf_counter()
import torch, triton
middle = time.perf_counter()
import torch_triton_hop
end = time.perf_counter()
import sys
print(middle - start, end - middle, *(name in sys.modules for name in ("torch._dynamo", "torch._inductor", "sympy")))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    base, ours, imported = [], [], None
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout.split()
        base.append(float(out[0]))
        ours.append(float(out[1]))
        imported = dict(zip(("torch._dynamo", "torch._inductor", "sympy"), out[2:]))
    print(f"import torch, triton: {statistics.median(base):.3f} s (median of {runs})")
    print(f"import torch_triton_hop after them: {statistics.median(ours):.3f} s (median of {runs})")
    print(f"imported by it: {imported}")


if __name__ == "__main__":
    main()
