"""The compile caches' keys include the package's own source (issue 15, part 2).

See [Note: Compiled artifacts carry the package's digest].
"""

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import torch_triton_hop
from torch_triton_hop._package_digest import package_digest

PACKAGE = Path(torch_triton_hop.__file__).parent
DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available() else "cuda"

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import torch, triton
    import triton.language as tl
    import torch_triton_hop
    from torch_triton_hop import wrap_triton

    @wrap_triton
    @triton.jit
    def add_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)

    def ours(x):
        out = torch.empty_like(x)
        add_one[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
        return out

    def plain(x):
        return x * 2.0 + 1.0

    def compile_and_count(fn, x):
        counters = torch._dynamo.utils.counters
        counters.clear()
        out = torch.compile(fn, fullgraph=True)(x)
        return {"out": out.tolist(), "fx_hit": counters["inductor"]["fxgraph_cache_hit"],
                "fx_miss": counters["inductor"]["fxgraph_cache_miss"],
                "aot_hit": counters["aot_autograd"]["autograd_cache_hit"],
                "aot_miss": counters["aot_autograd"]["autograd_cache_miss"]}

    x = torch.arange(8.0, device=sys.argv[1])
    result = {"package": torch_triton_hop.__file__, "ours": compile_and_count(ours, x)}
    torch._dynamo.reset()
    result["plain"] = compile_and_count(plain, x)
    print(json.dumps(result))
    """
)


def run_script(tmp_path: Path) -> dict:
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path / "copy"), os.environ.get("PYTHONPATH", "")])}
    for name in ("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_AUTOGRAD_CACHE"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, str(script), DEVICE], capture_output=True, text=True, env=env,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    import json

    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_changed_package_misses_and_an_unchanged_one_hits_in_a_new_process(tmp_path):
    """Run 1 compiles, run 2 (a new process) hits both caches, run 3 after one line is
    appended to a module of the package misses both; a graph without our launches keeps hitting."""
    copy = tmp_path / "copy" / "torch_triton_hop"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    expected = [i + 1.0 for i in range(8)]

    first = run_script(tmp_path)
    assert Path(first["package"]).parent == copy  # the copy, not the checkout, was imported
    assert first["ours"] == {"out": expected, "fx_hit": 0, "fx_miss": 1, "aot_hit": 0, "aot_miss": 1}
    assert (first["plain"]["fx_miss"], first["plain"]["aot_miss"]) == (1, 1)

    second = run_script(tmp_path)
    assert second["ours"] == {"out": expected, "fx_hit": 1, "fx_miss": 0, "aot_hit": 1, "aot_miss": 0}
    assert (second["plain"]["fx_hit"], second["plain"]["aot_hit"]) == (1, 1)

    with open(copy / "_hops.py", "a") as f:
        f.write("# an edit of the installed package\n")
    third = run_script(tmp_path)
    assert third["ours"] == {"out": expected, "fx_hit": 0, "fx_miss": 1, "aot_hit": 0, "aot_miss": 1}
    assert (third["plain"]["fx_hit"], third["plain"]["aot_hit"]) == (1, 1)


def add_one_graph():
    import triton
    import triton.language as tl

    @triton.jit
    def add_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)

    kernel = torch_triton_hop.wrap_triton(add_one)

    def f(x):
        out = torch.empty_like(x)
        kernel[(1,)](x, out, x.numel(), BLOCK=16)
        return out

    return make_fx(f, tracing_mode="fake")(torch.zeros(8))


@pytest.mark.interpreter
def test_the_fx_graph_key_details_hold_the_digest_only_for_graphs_with_our_launches():
    """The digest is an attribute of FxGraphHashDetails (hence of both keys) when a
    graph, or one of its subgraphs, calls our HOPs; other graphs keep their keys."""
    from torch._inductor.codecache import FxGraphHashDetails

    ours = FxGraphHashDetails(add_one_graph(), [torch.zeros(8)], {}, [])
    assert ours.torch_triton_hop_source == package_digest()
    plain = FxGraphHashDetails(make_fx(lambda x: x + 1)(torch.zeros(8)), [torch.zeros(8)], {}, [])
    assert not hasattr(plain, "torch_triton_hop_source")

    outer = make_fx(lambda x: x + 1)(torch.zeros(8))
    outer.add_submodule("inner", add_one_graph())
    assert FxGraphHashDetails(outer, [torch.zeros(8)], {}, []).torch_triton_hop_source == package_digest()


def test_the_digest_is_cheap_and_computed_once():
    """A few milliseconds at most the first time; afterwards a cached string."""
    package_digest.cache_clear()
    start = time.perf_counter()
    digest = package_digest()
    assert time.perf_counter() - start < 0.05
    assert len(digest) == 32 and package_digest() is digest
