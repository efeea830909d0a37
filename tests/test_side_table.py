"""The side table: stable kernel keys, content-keyed constants, resolution errors, bounded growth."""

import re
import threading
import types

import pytest
import torch
import triton
import triton.language as tl
from torch.fx.experimental.proxy_tensor import make_fx

from torch_triton_hop import kernel_side_table, wrap_triton
from torch_triton_hop.errors import KernelResolutionError

import core_kernels as K

pytestmark = pytest.mark.interpreter  # launches kernels on CPU tensors


def test_key_names_module_and_function_and_is_stable():
    key = kernel_side_table.add_kernel(K.add_kernel)
    assert key.startswith("core_kernels:add_kernel@")
    assert kernel_side_table.add_kernel(K.add_kernel) == key
    kernel_side_table.reset()
    assert kernel_side_table.get_kernel(key) is K.add_kernel  # re-resolved by import


def test_changed_source_or_configs_change_the_key():
    def make(body_constant, block):
        src = f"""
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), {body_constant})
"""
        scope = {"triton": triton, "tl": tl}
        exec(compile(src, "<test>", "exec"), scope)
        return triton.autotune([triton.Config({"BLOCK": block})], key=[])(scope["k"])

    keys = {kernel_side_table.add_kernel(make(c, b)) for c in (1.0, 2.0) for b in (16, 32)}
    assert len(keys) == 4


def test_the_key_covers_the_helpers_and_module_constants_a_kernel_reads():
    """A kernel reads a @triton.jit helper through a module (helpers.combine), a module constant
    (SCALE) and another module's constant (consts.FACTOR): a saved program whose kernel's
    helper or constants changed is refused on load, as one whose kernel changed is."""
    def make(op, scale, factor):
        helpers, consts = types.ModuleType("helpers"), types.ModuleType("consts")
        vars(helpers).update(triton=triton, tl=tl)
        exec(compile(f"@triton.jit\ndef combine(a, b):\n    return a {op} b\n", "<helpers>", "exec"), vars(helpers))
        consts.FACTOR = tl.constexpr(factor)
        src = """
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, helpers.combine(tl.load(x_ptr + offs), 1.0) * SCALE * consts.FACTOR)
"""
        scope = {"triton": triton, "tl": tl, "helpers": helpers, "consts": consts, "SCALE": scale}
        exec(compile(src, "<test>", "exec"), scope)
        return kernel_side_table.add_kernel(scope["k"])

    assert make("+", 1.0, 1.0) == make("+", 1.0, 1.0)
    assert len({make("+", 1.0, 1.0), make("-", 1.0, 1.0), make("+", 5.0, 1.0), make("+", 1.0, 7.0)}) == 4


def test_writes_override_is_part_of_the_key():
    assert kernel_side_table.add_kernel(wrap_triton(K.add_kernel)) != kernel_side_table.add_kernel(
        wrap_triton(K.add_kernel, writes=["out_ptr"])
    )


def test_unresolvable_kernels_fail_with_their_name():
    with pytest.raises(KernelResolutionError, match="__main__"):
        kernel_side_table.get_kernel("__main__:k@0123")
    with pytest.raises(KernelResolutionError, match="local scope"):
        kernel_side_table.get_kernel("core_kernels:f.<locals>.k@0123")
    with pytest.raises(KernelResolutionError, match="kernel changed since the program was saved, or the program "):
        kernel_side_table.get_kernel("core_kernels:add_kernel@0000000000000000")
    with pytest.raises(KernelResolutionError, match="not imported and not allowed"):
        kernel_side_table.get_kernel("no_such_module_xyz:k@0123")


def test_constants_are_keyed_by_content_and_decode_anywhere():
    key = kernel_side_table.add_constants({"ACT": None, "DT": tl.float16, "S": "relu"})
    assert key == '{"ACT":null,"DT":{"tl.dtype":"fp16"},"S":"relu"}'
    kernel_side_table.reset()
    assert kernel_side_table.get_constants(key) == {"ACT": None, "DT": tl.float16, "S": "relu"}


@pytest.mark.parametrize("configs, message", [
    ('[{"kwargs": {}, "pre_hook": "os.system"}]', "unknown field(s) ['pre_hook']"),
    ('[{"kwargs": {"BLOCK": [1]}}]', "its kwargs must be None, bool, int, float or str"),
    ('[{"kwargs": {}, "num_warps": "4"}]', "must be ints"),
    ('[{"kwargs": {}, "block_shapes": {"d": [0]}}]', "block_shapes must map names to lists of positive ints"),
    ('[{"kwargs": {}, "zeroed": ["os.system"]}]', "zeroed must list argument names"),
    ('[{"kwargs": {}, "zeroed": "acc"}]', "zeroed must list argument names"),
    ('{"kwargs": {}}', "malformed autotune configs"),
    ("not json", "malformed autotune configs"),
], ids=["pre_hook", "list value", "str num_warps", "block shape", "zeroed code", "zeroed str", "not a list",
        "not json"])
def test_a_programs_configs_are_checked_as_data(configs, message):
    with pytest.raises(KernelResolutionError, match=re.escape(message)):
        kernel_side_table.get_configs(configs)
    assert kernel_side_table.get_configs('[{"kwargs": {"BLOCK": 16, "ACT": "relu"}, "num_warps": 4}]')


@pytest.mark.parametrize("constants, message", [
    ('{"DT": {"tl.dtype": "nonsense"}}', "unknown triton dtype 'nonsense'"),
    ('["x"]', "not an object of names to values"),
    ('{"X": [1, 2]}', "unknown constant [1, 2]"),
], ids=["dtype", "a list", "a list value"])
def test_a_programs_malformed_constants_are_resolution_errors(constants, message):
    with pytest.raises(KernelResolutionError, match=re.escape(message)):
        kernel_side_table.get_constants(constants)


def test_unencodable_constants_work_in_process_only():
    marker = object()
    key = kernel_side_table.add_constants({"X": marker})
    assert kernel_side_table.get_constants(key) == {"X": marker}
    kernel_side_table.reset()
    with pytest.raises(KernelResolutionError, match="another process"):
        kernel_side_table.get_constants(key)


def test_repeated_tracing_does_not_grow_the_table():
    def f(x, y):
        out = torch.empty_like(x)
        for _ in range(200):
            wrap_triton(K.add_kernel)[(3,)](x, y, out, 40, BLOCK=16, ACT=None)
        return out

    make_fx(f, tracing_mode="fake")(torch.randn(40), torch.randn(40))
    assert len(kernel_side_table) == 2  # one kernel, one constants entry


def test_concurrent_registration_gives_one_key():
    keys = []
    threads = [threading.Thread(target=lambda: keys.append(kernel_side_table.add_constants({"i": 1})))
               for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(keys)) == 1 and len(kernel_side_table) == 1
