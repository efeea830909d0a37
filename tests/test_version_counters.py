"""A launch bumps the autograd version counter of each tensor the kernel writes, as torch's
in-place ops do: overwriting a tensor saved for backward raises torch's error instead of
giving a wrong gradient. See [Note: Launches bump version counters]."""

import os

import pytest
import torch
import triton
import triton.language as tl
from torch.utils.checkpoint import checkpoint

from torch_triton_hop import wrap_triton

import core_kernels as K

pytestmark = pytest.mark.any_device
DEVICE = "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"
MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"


def _run(fn, mode):
    if mode == "eager":
        return fn
    torch._dynamo.reset()
    return torch.compile(fn, backend=mode)


def scale_saved(x, h):
    out = x * h  # saves h for x's gradient
    wrap_triton(K.scale_inplace)[(1,)](h, h.numel(), 2.0, BLOCK=64)
    return out


def scale_saved_by_torch(x, h):
    out = x * h
    h.mul_(2.0)
    return out


@pytest.mark.parametrize("mode", ["eager", "aot_eager", "inductor"])
def test_writing_a_tensor_saved_for_backward_raises_as_torch_does(mode):
    """Before, every mode gave x.grad == 2 (h after the kernel) where the gradient is 1."""
    for fn in (scale_saved_by_torch, scale_saved):  # torch's own in-place op first: the reference
        x = torch.ones(8, device=DEVICE, requires_grad=True)
        h = torch.ones(8, device=DEVICE)
        with pytest.raises(RuntimeError, match=MODIFIED):
            _run(fn, mode)(x, h).sum().backward()
        # Eagerly the kernel ran; compiled, AOTAutograd's trace raised before anything ran.
        assert h.tolist() == [2.0 if mode == "eager" else 1.0] * 8


def test_checkpointing_a_region_that_updates_its_input_raises_as_torch_does():
    """Before, non-reentrant checkpointing recomputed the region on the updated input: 4, not 2."""
    for update in (lambda h: h.mul_(2.0), lambda h: wrap_triton(K.scale_inplace)[(1,)](h, h.numel(), 2.0, BLOCK=64)):
        x = torch.ones(8, device=DEVICE, requires_grad=True)
        h = torch.ones(8, device=DEVICE)
        region = checkpoint(lambda x, h: (update(h), x * h)[1], x, h, use_reentrant=False)
        with pytest.raises(RuntimeError, match=MODIFIED):
            region.sum().backward()


def add_reading_saved(x, h):
    out = x * h
    y = torch.empty_like(h)
    wrap_triton(K.add_kernel)[(1,)](h, h, y, h.numel(), BLOCK=64)  # reads h, writes y
    return out + y


@pytest.mark.parametrize("mode", ["eager", "aot_eager", "inductor"])
def test_reading_a_tensor_saved_for_backward_still_differentiates(mode):
    x = torch.ones(8, device=DEVICE, requires_grad=True)
    h = torch.full((8,), 3.0, device=DEVICE)
    out = _run(add_reading_saved, mode)(x, h)
    out.sum().backward()
    assert out.tolist() == [9.0] * 8 and x.grad.tolist() == [3.0] * 8
    assert h._version == 0


@pytest.mark.parametrize("kernel", ["jit", "autotuned", "heuristics_below", "heuristics_above", "declared"])
def test_an_eager_launch_bumps_what_it_writes_every_time(kernel):
    """On a GPU the fast launch's first call (a miss) and its hits bump; on CPU triton's own launch."""
    wrapped = {
        "jit": wrap_triton(K.add_kernel),
        "autotuned": wrap_triton(K.add_autotuned),
        "heuristics_below": wrap_triton(K.add_heuristics_below),
        "heuristics_above": wrap_triton(K.add_heuristics_above),
        # Declared: the analysis is not asked, and y is taken as written because it says so.
        "declared": wrap_triton(K.add_kernel, writes=["y_ptr", "out_ptr"]),
    }[kernel]
    options = {"BLOCK": 64} if kernel in ("jit", "declared") else {}  # the others' configs give BLOCK
    # (triton 3.6's interpreter makes cdiv of a constexpr a numpy array, which numpy >= 2.4 will not int())
    grid = (2,) if options else lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)
    x, y = torch.ones(100, device=DEVICE), torch.ones(100, device=DEVICE)
    out = torch.empty_like(x)
    versions = []
    for _ in range(3):
        wrapped[grid](x, y, out, x.numel(), **options)
        versions.append((x._version, y._version, out._version))
    assert out.tolist() == [2.0] * 100
    y_bumps = [1, 2, 3] if kernel == "declared" else [0, 0, 0]
    assert versions == [(0, y_bump, count) for y_bump, count in zip(y_bumps, [1, 2, 3])]


def test_a_view_written_bumps_its_base():
    base = torch.zeros(16, device=DEVICE)
    wrap_triton(K.scale_inplace)[(1,)](base[4:12], 8, 2.0, BLOCK=8)
    assert base._version == 1


def scale_input(h):
    wrap_triton(K.scale_inplace)[(1,)](h, h.numel(), 2.0, BLOCK=64)
    return h + 1


@triton.jit
def _add_pair(pair, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(pair[0] + offs, mask=mask) + tl.load(pair[1] + offs, mask=mask), mask=mask)


@triton.jit
def _double_pair(pair, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(pair[1] + offs, tl.load(pair[0] + offs, mask=mask) * 2, mask=mask)


def test_a_tuple_argument_bumps_only_when_the_kernel_writes_through_it():
    """triton's tuple arguments (eager launches only): a kernel that only reads a tuple of
    saved tensors leaves backward alone; one that writes through the tuple bumps its tensors."""
    x = torch.ones(8, device=DEVICE, requires_grad=True)
    h = torch.full((8,), 3.0, device=DEVICE)
    out = x * h  # saves h
    y = torch.empty_like(h)
    wrap_triton(_add_pair)[(1,)]((h, h), y, 8, BLOCK=16)
    (out + y).sum().backward()
    assert y.tolist() == [6.0] * 8 and x.grad.tolist() == [3.0] * 8 and h._version == 0

    out = x * h
    wrap_triton(_double_pair)[(1,)]((y, h), 8, BLOCK=16)  # writes h through the tuple
    assert h.tolist() == [12.0] * 8 and h._version == 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        out.sum().backward()


@pytest.mark.parametrize("mode", ["aot_eager", "inductor"])
def test_a_compiled_graph_that_writes_an_input_bumps_it_as_for_torchs_ops(mode):
    """AOTAutograd bumps an input a compiled graph wrote in place (inductor: kept in the graph)
    unless functionalization hid the mutation from autograd, as it did for every launch."""
    h, reference = torch.ones(8, device=DEVICE), torch.ones(8, device=DEVICE)
    compiled = _run(scale_input, mode)
    compiled(h)
    _run(lambda t: (t.mul_(2.0), t + 1)[1], mode)(reference)
    assert h.tolist() == [2.0] * 8
    assert h._version == reference._version > 0


def scale_parameter(w, x):
    wrap_triton(K.scale_inplace)[(1,)](w, w.numel(), 2.0, BLOCK=64)
    return (w * x).sum()


def test_a_compiled_graph_may_still_write_an_input_that_requires_grad():
    """Its mutation stays hidden from autograd, so AOTAutograd keeps it in the graph as before
    (torch's own in-place op on a leaf that requires grad would raise)."""
    w = torch.ones(8, device=DEVICE, requires_grad=True)
    x = torch.full((8,), 3.0, device=DEVICE)
    loss = _run(scale_parameter, "aot_eager")(w, x)
    loss.backward()
    assert w.detach().tolist() == [2.0] * 8 and loss.item() == 48.0 and w.grad.tolist() == [3.0] * 8


def scale_(t):
    wrap_triton(K.scale_inplace)[(1,)](t, t.numel(), 2.0, BLOCK=64)


@pytest.mark.parametrize("mode", ["eager", "aot_eager", "inductor"])
def test_an_optimizer_style_update_before_backward_raises_as_torchs_does(mode):
    """A parameter saved for backward, updated under no_grad by a compiled kernel before the
    backward ran: inductor kept the write in the graph, hidden from autograd, and bumped nothing."""
    for step in (lambda t: t.mul_(2.0), scale_):  # torch's own in-place op first: the reference
        x = torch.ones(8, device=DEVICE, requires_grad=True)
        w = torch.ones(8, device=DEVICE, requires_grad=True)
        loss = (w * x).sum()  # saves w
        with torch.no_grad():
            _run(step, mode)(w)
        assert w.detach().tolist() == [2.0] * 8
        with pytest.raises(RuntimeError, match=MODIFIED):
            loss.backward()
