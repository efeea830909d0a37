"""Every example in the docs runs: the public docstrings' doctests and the guides' code blocks.

Docstrings: the examples of the public names run in one namespace, in the order of
``PUBLIC`` (later examples use ``add_one`` and ``f`` from :func:`wrap_triton`'s), with
ELLIPSIS and NORMALIZE_WHITESPACE.

Guides (``docs/**/*.md``): the ```` ```python ```` blocks of one page run in
order as one module, written to a file so that triton can read the kernels' source. A block
whose first line is ``# gpu`` needs a GPU: those run, after the page's other blocks, only in
the ``gpu`` test of the page. Blocks in any other language (``console``, ``text``) are not
run.
"""

from __future__ import annotations

import doctest
import linecache
import os
import pathlib
import re
import runpy
import subprocess
import sys

import pytest
import torch

import torch_triton_hop
from torch_triton_hop import errors

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [page for page in sorted(DOCS.rglob("*.md")) if "_build" not in page.parts]

PUBLIC = [(name, getattr(torch_triton_hop, name)) for name in torch_triton_hop.__all__]
PUBLIC += [(f"errors.{name}", getattr(errors, name)) for name in errors.__all__]

FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)


def _docstring(obj) -> str:
    return obj.__doc__ or ""  # an instance (kernel_side_table, the HOPs) has its class's


@pytest.mark.parametrize("name,obj", PUBLIC, ids=[name for name, _ in PUBLIC])
def test_public_name_has_a_docstring_with_an_example(name, obj):
    """Each public name documents itself with a summary and a runnable example."""
    doc = _docstring(obj) or ""
    assert doc.strip(), f"{name} has no docstring"
    assert ">>>" in doc, f"{name}'s docstring has no example"


@pytest.mark.interpreter
def test_docstring_examples_run():
    """The public docstrings' examples, in one namespace, produce what they show."""
    globs = {"__name__": "docs_examples"}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    parser = doctest.DocTestParser()
    for name, obj in PUBLIC:
        test = parser.get_doctest(_docstring(obj), globs, name, None, 0)
        for index, example in enumerate(test.examples):
            # doctest serves an example's source only while that example runs; triton reads a
            # kernel's source again later (the analysis), as it would from the user's file.
            linecache.cache[f"<doctest {name}[{index}]>"] = (
                len(example.source), None, example.source.splitlines(True), f"<doctest {name}[{index}]>")
        runner.run(test, clear_globs=False)
        globs = test.globs  # DocTest copies the namespace it is given
    assert runner.failures == 0, f"{runner.failures} docstring example(s) failed; see the output above"
    assert runner.tries >= len(PUBLIC)


def _blocks(page: pathlib.Path) -> tuple[list[str], list[str]]:
    """The page's Python blocks: (those that run anywhere, those that need a GPU)."""
    anywhere, gpu = [], []
    for block in FENCE.findall(page.read_text()):
        (gpu if block.lstrip().startswith("# gpu") else anywhere).append(block)
    return anywhere, gpu


def _skip_without_the_libraries(blocks: list[str]) -> None:
    """A page about a library (Liger on a Llama model) needs it installed, as test_liger.py does."""
    for library in ("liger_kernel", "transformers"):
        if any(library in block for block in blocks):
            pytest.importorskip(library)


def _run(page: pathlib.Path, blocks: list[str], tmp_path: pathlib.Path, monkeypatch) -> None:
    _skip_without_the_libraries(blocks)
    name = "docs_" + re.sub(r"\W", "_", page.stem)
    source = tmp_path / f"{name}.py"
    source.write_text("\n\n".join(f"# --- {page.name}, block {i + 1}\n{block}" for i, block in enumerate(blocks)))
    if "liger_kernel" in source.read_text():
        # The page patches a library for the whole process (it wraps Liger's kernels, as a
        # user's script would): in a process of its own, so later tests meet Liger untouched.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run([sys.executable, str(source)], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        return
    monkeypatch.chdir(tmp_path)  # examples may write files (model.pt2)
    monkeypatch.syspath_prepend(str(tmp_path))
    torch._dynamo.reset()
    runpy.run_path(str(source), run_name=name)


def _pages_with(kind: int) -> list[pathlib.Path]:
    return [page for page in PAGES if _blocks(page)[kind]]


@pytest.mark.interpreter
@pytest.mark.parametrize("page", _pages_with(0), ids=lambda page: str(page.relative_to(ROOT)))
def test_guide_examples_run(page, tmp_path, monkeypatch):
    """A page's Python blocks run, in order, as one module."""
    _run(page, _blocks(page)[0], tmp_path, monkeypatch)


@pytest.mark.gpu
@pytest.mark.parametrize("page", _pages_with(1), ids=lambda page: str(page.relative_to(ROOT)))
def test_guide_gpu_examples_run(page, tmp_path, monkeypatch):
    """A page's Python blocks, the GPU-only ones included, run on a GPU."""
    anywhere, gpu = _blocks(page)
    _skip_without_the_libraries(anywhere + gpu)
    # In a process of its own: a crash in torch (below) must not take the test session with it.
    name = "docs_" + re.sub(r"\W", "_", page.stem)
    source = tmp_path / f"{name}.py"
    source.write_text("\n\n".join(f"# --- {page.name}, block {i + 1}\n{block}"
                                   for i, block in enumerate(anywhere + gpu)))
    done = subprocess.run([sys.executable, "-X", "faulthandler", str(source)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    if done.returncode == -11 and "_load_aoti" in done.stderr:
        # Seen on the device image for every package, a plain model's too (tests/test_aoti.py).
        pytest.skip("aoti_load_package segfaults on this machine")
    assert done.returncode == 0, done.stderr[-3000:]


def test_every_guide_is_in_a_toctree():
    """Sphinx warns about (and -W fails on) a page in no toctree; say which one here."""
    index = (DOCS / "index.md").read_text()
    for page in DOCS.rglob("*.md"):
        if page.name != "index.md" and "_build" not in page.parts:
            assert str(page.relative_to(DOCS).with_suffix("")) in index, page



TRACE_SCRIPT = """
import torch, triton, triton.language as tl
from torch_triton_hop import wrap_triton

@wrap_triton
@triton.jit
def add_one_inplace(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

def bump(x):
    y = x * 2
    add_one_inplace[(triton.cdiv(y.numel(), 64),)](y, y.numel(), BLOCK=64)
    return y

x = torch.randn(1000)
torch.testing.assert_close(torch.compile(bump, fullgraph=True)(x), x * 2 + 1)
"""


@pytest.mark.interpreter
def test_torch_trace_holds_the_accesses_and_reinplacing_artifacts(tmp_path):
    """docs/guides/torch-trace.md: under TORCH_TRACE each launch's analysis and inductor's
    reinplacing decision are JSON artifacts in the structured log."""
    import json
    import subprocess
    import sys

    (tmp_path / "bump.py").write_text(TRACE_SCRIPT)
    env = {**os.environ, "TORCH_TRACE": str(tmp_path / "trace"), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, str(tmp_path / "bump.py")], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    log = "".join(path.read_text() for path in (tmp_path / "trace").iterdir())
    artifacts = {}
    lines = log.splitlines()
    for i, line in enumerate(lines):
        for name in ("torch_triton_hop_accesses", "torch_triton_hop_reinplace"):
            if f'"name": "{name}"' in line:
                payload = []
                for following in lines[i + 1:]:
                    if not following.startswith("\t"):
                        break
                    payload.append(following[1:])
                artifacts[name] = json.loads("\n".join(payload))
    accesses = artifacts["torch_triton_hop_accesses"]
    assert accesses["kernel"].startswith("__main__:add_one_inplace@")
    assert (accesses["reads"], accesses["writes"], accesses["fallback_reason"]) == (["x_ptr"], ["x_ptr"], None)
    assert accesses["write_sites"]["x_ptr"] == [f"{tmp_path / 'bump.py'}:9"]
    assert artifacts["torch_triton_hop_reinplace"] == {
        "launch": "add_one_inplace", "kernel": "add_one_inplace", "written_in_place": ["x_ptr"], "copied": {}}
