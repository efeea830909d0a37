"""On a GPU, the kernels of our launches in compiled code are launched by inductor's static
launcher, not by a triton launcher built with the C compiler (see [Note: Our launches use
inductor's static launcher]); kernels it cannot launch, and torch's own launches, keep
triton's launcher.

Run on a GPU machine: python -m pytest -m gpu tests/test_static_launch.py
"""

import pytest
import torch
import triton
import triton.language as tl

import torch_triton_hop
from torch_triton_hop import wrap_triton

import core_kernels as K

pytestmark = pytest.mark.gpu


def _grid(meta):
    return (triton.cdiv(meta["n"], meta["BLOCK"]),)


def scaled_sum(x, y, scale):
    out = torch.empty_like(x)
    wrap_triton(K.add_autotuned)[_grid](x, y, out, x.numel())  # autotuned: a launcher per config
    wrap_triton(K.scale_inplace)[(triton.cdiv(x.numel(), 128),)](out, x.numel(), scale, BLOCK=128)  # a float scalar
    return out


def test_our_launches_use_the_static_launcher_and_compute_as_eager(launcher_kinds):
    x, y = torch.randn(5000, device="cuda"), torch.randn(5000, device="cuda")
    result = torch.compile(scaled_sum, fullgraph=True)(x, y, 0.5)
    torch.testing.assert_close(result, (x + y) * 0.5)
    assert any(name.startswith("add_autotuned") for name in launcher_kinds["static"]), launcher_kinds
    assert any(name.startswith("scale_inplace") for name in launcher_kinds["static"]), launcher_kinds
    assert not any(name.startswith(("add_autotuned", "scale_inplace")) for name in launcher_kinds["triton"])


def test_turned_off_our_launches_keep_tritons_launcher(launcher_kinds, monkeypatch):
    monkeypatch.setattr(torch_triton_hop.config, "static_launch", False)
    x, y = torch.randn(5000, device="cuda"), torch.randn(5000, device="cuda")
    torch.testing.assert_close(torch.compile(scaled_sum, fullgraph=True)(x, y, 2.0), (x + y) * 2.0)
    assert any(name.startswith("add_autotuned") for name in launcher_kinds["triton"]), launcher_kinds
    assert not any(name.startswith(("add_autotuned", "scale_inplace")) for name in launcher_kinds["static"])


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) * 2, mask=offsets < n)


def test_torchs_own_launches_keep_tritons_launcher(launcher_kinds):
    def f(x):
        out = torch.empty_like(x)
        torch.library.wrap_triton(double_kernel)[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
        return out

    x = torch.randn(3000, device="cuda")
    torch.testing.assert_close(torch.compile(f, fullgraph=True)(x), x * 2)
    assert any(name.startswith("double_kernel") for name in launcher_kinds["triton"]), launcher_kinds
    assert not any(name.startswith("double_kernel") for name in launcher_kinds["static"])


@triton.jit
def hooked_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) + 1, mask=offsets < n)


def test_a_kernel_the_static_launcher_refuses_keeps_tritons_launcher(launcher_kinds):
    """With a launch hook set (a profiler's), the static launcher refuses every kernel."""
    from triton import knobs

    calls = []

    def record(metadata):
        calls.append(metadata)

    chain = knobs.runtime.launch_enter_hook  # triton >= 3.5: a HookChain; older: a callable or None
    if hasattr(chain, "add"):
        chain.add(record)
    else:
        knobs.runtime.launch_enter_hook = record
    try:
        def f(x):
            out = torch.empty_like(x)
            wrap_triton(hooked_kernel)[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
            return out

        x = torch.randn(3000, device="cuda")
        torch.testing.assert_close(torch.compile(f, fullgraph=True)(x), x + 1)
    finally:
        if hasattr(chain, "remove"):
            chain.remove(record)
        else:
            knobs.runtime.launch_enter_hook = chain
    assert any(name.startswith("hooked_kernel") for name in launcher_kinds["triton"]), launcher_kinds
    assert calls, "the hook saw no launch"


@triton.autotune(
    configs=[triton.Config({"BM": 128, "BN": 128, "BK": 128}, num_stages=6, num_warps=8),  # too much shared memory
             triton.Config({"BM": 32, "BN": 32, "BK": 32}, num_stages=1, num_warps=4)],
    key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b):
    c = torch.empty(a.shape[0], b.shape[1], device=a.device)
    grid = lambda meta: (triton.cdiv(a.shape[0], meta["BM"]), triton.cdiv(b.shape[1], meta["BN"]))  # noqa: E731
    wrap_triton(matmul_kernel)[grid](a, b, c, a.shape[0], b.shape[1], a.shape[1])
    return c


def test_an_autotuned_config_too_big_for_the_gpu_is_dropped_as_before(launcher_kinds):
    """Triton's launcher reports a config needing more shared memory than the GPU has as
    OutOfResources, and inductor drops it; where the static launcher cannot take it, triton's
    launchers are made instead, and the compiled launch runs the config that fits."""
    a = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    shared = 6 * (128 * 128 + 128 * 128) * 2  # bytes the big config's pipeline buffers need
    assert shared > torch.cuda.get_device_properties(0).shared_memory_per_block_optin
    eager = matmul(a, b)  # triton's autotuner drops the big config too
    torch.testing.assert_close(torch.compile(matmul, fullgraph=True)(a, b), eager, atol=0, rtol=0)
    assert any(name.startswith("matmul_kernel") for kind in ("static", "triton") for name in launcher_kinds[kind])
