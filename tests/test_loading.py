"""Loading a saved program imports nothing the user did not ask for.

`marker_kernels` appends a line to $TTH_IMPORT_MARKER when imported, so each test can tell
whether loading imported it. See [Note: Loading a program imports nothing unasked].
"""

import os
import subprocess
import sys
import textwrap

import pytest
import torch
import triton

from torch_triton_hop import wrap_triton

pytestmark = pytest.mark.interpreter  # launches kernels on CPU tensors

HERE = os.path.dirname(os.path.abspath(__file__))


class AddOne(torch.nn.Module):
    def forward(self, x):
        import marker_kernels

        out = torch.empty_like(x)
        wrap_triton(marker_kernels.add_one)[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
        return out


class AddOneAccumulated(torch.nn.Module):
    def forward(self, x):
        import marker_kernels

        out = torch.empty_like(x)
        wrap_triton(marker_kernels.add_one_accumulated)[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
        return out


def save(tmp_path, edit_key=None, edit=None, module=AddOne):
    """Export `module`, its launch's key changed by edit_key, other arguments set from `edit`."""
    ep = torch.export.export(module(), (torch.randn(20),), strict=False)
    for node in ep.graph.nodes:
        if "user_triton_kernel" in str(node.target):
            if edit_key is not None:
                node.kwargs = {**node.kwargs, "kernel": edit_key(node.kwargs["kernel"])}
            node.kwargs = {**node.kwargs, **(edit or {})}
    path = tmp_path / "program.pt2"
    torch.export.save(ep, path)
    return path


def load_and_run(tmp_path, path, before_load="", env=None):
    return run_fresh(tmp_path, f"""
        import torch, torch_triton_hop
        {before_load}
        ep = torch.export.load({str(path)!r})
        try:
            torch_triton_hop.check_kernels(ep)
            x = torch.arange(20.0)
            print("RESULT", ep.module()(x).tolist())
        except Exception as e:
            print("ERROR", type(e).__name__, e)
    """, env)


def run_fresh(tmp_path, script, env=None):
    """Runs `script` in a fresh process: (its last line of output, whether it imported marker_kernels)."""
    marker = tmp_path / "imported.txt"
    base = {k: v for k, v in os.environ.items() if k != "TORCH_TRITON_HOP_KERNEL_MODULES"}
    env = {**base, "PYTHONPATH": HERE, "TTH_IMPORT_MARKER": str(marker), "TRITON_INTERPRET": "1", **(env or {})}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1], marker.exists()


def test_a_module_neither_imported_nor_allowed_is_not_imported(tmp_path):
    line, imported = load_and_run(tmp_path, save(tmp_path))
    assert line.startswith("ERROR KernelResolutionError") and "'marker_kernels', which is not imported" in line
    assert "allow_kernel_modules('marker_kernels')" in line and "TORCH_TRITON_HOP_KERNEL_MODULES" in line
    assert not imported


@pytest.mark.parametrize("how", ["imported by the user", "allowed by the API", "allowed by the variable"])
def test_an_imported_or_allowed_module_is_used(tmp_path, how):
    before, env = {
        "imported by the user": ("import marker_kernels", None),
        "allowed by the API": ("torch_triton_hop.allow_kernel_modules('marker_kernels')", None),
        "allowed by the variable": ("", {"TORCH_TRITON_HOP_KERNEL_MODULES": "other, marker_kernels"}),
    }[how]
    line, imported = load_and_run(tmp_path, save(tmp_path), before, env)
    assert line == f"RESULT {[i + 1.0 for i in range(20)]}"
    assert imported


def test_a_kernel_reading_a_module_level_constexpr_function_loads_in_another_process(tmp_path):
    """The kernel's key digests the module constants it reads. A tl.constexpr holding a function
    went in by its repr, which holds the function's address: another process computed another
    key and refused the program as "changed since it was saved" (FlagGems' cumsum)."""
    path = save(tmp_path, module=AddOneAccumulated)
    line, _ = load_and_run(tmp_path, path, "torch_triton_hop.allow_kernel_modules('marker_kernels')")
    assert line == f"RESULT {[i + 1.0 for i in range(20)]}"


def test_an_edited_key_naming_another_module_imports_nothing(tmp_path):
    """`this` prints a poem when imported; the edited program must not import it."""
    path = save(tmp_path, edit_key=lambda key: "this:add_one@" + key.rpartition("@")[2])
    line, imported = load_and_run(tmp_path, path)
    assert "module 'this', which is not imported and not allowed" in line
    assert not imported


def test_an_edited_digest_in_an_allowed_module_is_reported_as_changed_or_edited(tmp_path):
    path = save(tmp_path, edit_key=lambda key: key.rpartition("@")[0] + "@0000000000000000")
    line, imported = load_and_run(tmp_path, path, "torch_triton_hop.allow_kernel_modules('marker_kernels')")
    assert "has no kernel 'add_one' whose source (with the @triton.jit functions it calls and the module " \
        "constants they read) and autotune configs hash to '0000000000000000'" in line
    assert "changed since the program was saved, or the program was edited" in line


def test_an_edited_key_does_not_reach_a_modules_lazy_attributes(tmp_path):
    """Finding the kernel in an imported module reads its namespace: a module __getattr__
    that would import a submodule (numpy's, torch's do) is not called."""
    (tmp_path / "lazy_package.py").write_text(textwrap.dedent(f"""
        def __getattr__(name):
            open({str(tmp_path / "imported.txt")!r}, "a").write(name)
            raise AttributeError(name)
    """))
    path = save(tmp_path, edit_key=lambda key: "lazy_package:submodule@" + key.rpartition("@")[2])
    line, reached = load_and_run(tmp_path, path, "import lazy_package", {"PYTHONPATH": f"{HERE}:{tmp_path}"})
    assert "module 'lazy_package' has no kernel 'submodule'" in line
    assert not reached


def test_an_edited_digest_runs_no_code_of_the_modules_other_objects(tmp_path):
    """Looking for the kernel among a module's globals (it may be bound to another name) reads
    none of their attributes: a global whose class has a __getattr__ (a proxy, a lazy loader)
    or a property is not run."""
    (tmp_path / "module_with_proxies.py").write_text(textwrap.dedent(f"""
        from marker_kernels import add_one

        class Proxy:
            def __getattr__(self, name):
                open({str(tmp_path / "ran.txt")!r}, "a").write(name)
                raise AttributeError(name)

            @property
            def __wrapped_triton_kernel__(self):
                open({str(tmp_path / "ran.txt")!r}, "a").write("property")
                return add_one

        proxy = Proxy()
    """))
    path = save(tmp_path, edit_key=lambda key: "module_with_proxies:add_one@0000000000000000")
    line, _ = load_and_run(tmp_path, path, "import module_with_proxies", {"PYTHONPATH": f"{HERE}:{tmp_path}"})
    assert "module 'module_with_proxies' has no kernel 'add_one' whose source" in line
    assert not (tmp_path / "ran.txt").exists()


def test_an_edited_config_is_refused_before_anything_runs(tmp_path):
    """See [Note: Configs in a saved program are data]: triton.Config's ir_override would
    compile IR from a path the program names, in the verified kernel's place. (Other malformed
    configs and constants: test_side_table.)"""
    path = save(tmp_path, edit={"configs": '[{"kwargs": {}, "ir_override": "/tmp/kernel.ttgir"}]'})
    line, _ = load_and_run(tmp_path, path, "import marker_kernels")
    assert line.startswith("ERROR KernelResolutionError") and "unknown field(s) ['ir_override']" in line, line


def test_allowed_names_are_modules_or_package_prefixes(monkeypatch):
    from torch_triton_hop._side_table import kernel_module_allowed

    monkeypatch.setattr("torch_triton_hop._side_table._ALLOWED_MODULES", set())
    monkeypatch.setenv("TORCH_TRITON_HOP_KERNEL_MODULES", "pkg.kernels, lib.*")
    assert kernel_module_allowed("pkg.kernels") and kernel_module_allowed("lib.ops.norm")
    assert not kernel_module_allowed("pkg") and not kernel_module_allowed("pkg.kernels_evil")
    assert not kernel_module_allowed("lib") and not kernel_module_allowed("library")
    with pytest.raises(ValueError, match="expected module names"):
        __import__("torch_triton_hop").allow_kernel_modules("*")


def test_an_allowed_module_that_fails_to_import_names_the_module_and_the_fix(tmp_path):
    """An edited key naming an allowed module that is not there: before, only "No module named ..."."""
    path = save(tmp_path, edit_key=lambda key: "missing_kernels:add_one@" + key.rpartition("@")[2])
    line, _ = load_and_run(tmp_path, path, "torch_triton_hop.allow_kernel_modules('missing_kernels')")
    assert "kernel 'add_one' lives in module 'missing_kernels', and importing it failed (ModuleNotFoundError: " in line
    assert "Make that module and what it imports importable here" in line


@pytest.mark.parametrize("strict", [False, True], ids=["nonstrict", "strict"])
def test_exporting_a_kernel_only_this_process_can_import_warns_at_export(strict):
    """A kernel defined in a function (or in __main__): the saved program cannot load elsewhere;
    before, only the loading process found out."""
    import triton.language as tl

    from torch_triton_hop import _hopifier

    @triton.jit
    def local_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    class Copy(torch.nn.Module):
        def forward(self, x):
            out = torch.empty_like(x)
            wrap_triton(local_copy)[(1,)](x, out, x.numel(), BLOCK=16)
            return out

    _hopifier._warned_unloadable.clear()
    with pytest.warns(UserWarning, match=r"launches kernel '.*local_copy', defined in a function's local scope, "
                                         r"which another process cannot import") as caught:
        torch.export.export(Copy(), (torch.zeros(8),), strict=strict)
    # Shown at the user's line (the launch, or under Dynamo the export call), not the package's.
    assert {w.filename for w in caught if "cannot import" in str(w.message)} == {__file__}


# [Note: Copying and pickling a wrapper]: torch.save of objects that hold wrappers (a whole module).

def load_pickled_and_run(tmp_path, path, env=None):
    return run_fresh(tmp_path, f"""
        import torch, triton
        try:
            kernel = torch.load({str(path)!r}, weights_only=False)["kernel"]
            x, out = torch.arange(20.0), torch.empty(20)
            kernel[(triton.cdiv(20, 16),)](x, out, 20, BLOCK=16)
            print("RESULT", type(kernel).__name__, kernel.writes, out.tolist())
        except Exception as e:
            print("ERROR", type(e).__name__, e)
    """, env)


def test_a_pickled_wrapper_finds_its_kernel_by_key_under_the_loading_rule(tmp_path):
    """A pickled wrapper is its kernel's key and settings: another process finds the kernel when
    its module is allowed (or imported), and imports nothing otherwise."""
    import marker_kernels

    path = tmp_path / "holder.pt"
    torch.save({"kernel": wrap_triton(marker_kernels.add_one, writes=["out_ptr"])}, path)
    line, imported = load_pickled_and_run(tmp_path, path)
    assert line.startswith("ERROR KernelResolutionError") and "'marker_kernels', which is not imported" in line
    assert not imported
    line, imported = load_pickled_and_run(tmp_path, path, {"TORCH_TRITON_HOP_KERNEL_MODULES": "marker_kernels"})
    assert line == "RESULT TritonKernelWrapper ('out_ptr',) " + str([float(i + 1) for i in range(20)])
    assert imported


def test_a_wrapper_of_a_kernel_no_module_holds_is_refused_when_pickled():
    import pickle

    import marker_kernels

    ad_hoc = wrap_triton(triton.heuristics({"UNUSED": lambda args: 0})(marker_kernels.add_one))
    with pytest.raises(pickle.PicklingError, match=r"cannot pickle the wrapper of kernel 'add_one': the object it wraps "
                                                   r"is not an attribute of an importable module .*state_dict"):
        pickle.dumps(ad_hoc)
