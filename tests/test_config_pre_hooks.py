"""Config pre_hooks that zero tensor arguments, run before every launch in every mode, on the GPU
(inductor's real launch) as on the CPU."""

import io
import os

import pytest
import torch
import triton
from torch.fx.experimental.proxy_tensor import make_fx

from torch_triton_hop import wrap_triton

from test_hopifier import _sum_with_atomics

pytestmark = pytest.mark.any_device
DEVICE = "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


# mamba_ssm's and flash-attention's idiom: zero what the kernel accumulates into, per launch.
def _init_to_zero(names):
    return lambda nargs: [nargs[name].zero_() for name in names if nargs[name] is not None]


_sum_zeroing_first = triton.autotune(
    [triton.Config({"BLOCK": 16}, pre_hook=_init_to_zero(["acc_ptr", "count_ptr"])),
     triton.Config({"BLOCK": 32}, pre_hook=_init_to_zero(["acc_ptr", "count_ptr"]))], key=["n"])(_sum_with_atomics)


# Wrapped outside the compiled function: on a GPU, Dynamo refuses a raw kernel whose configs
# have pre_hooks before wrap_triton sees it (test below).
_sum_zeroing_first_wrapped = wrap_triton(_sum_zeroing_first)


def _sum_twice(x, count):
    acc = torch.full((1,), 123.0, device=x.device)  # the hook must zero it, before each launch
    launch = _sum_zeroing_first_wrapped[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)]
    launch(x, acc, count, x.numel())
    first = acc * 2  # an epilogue (not fused: the hook writes acc)
    launch(x, acc, count, x.numel())
    return first, acc + 1


class _SumTwice(torch.nn.Module):
    def forward(self, x, count):
        return _sum_twice(x, count)


@pytest.mark.parametrize("count", [None, "tensor"])
@pytest.mark.parametrize("mode", ["eager", "fake", "export", "aot_eager", "inductor"])
def test_a_config_pre_hook_that_zeroes_arguments_runs_before_every_launch(mode, count):
    """mamba_ssm's ssd backward: each config's pre_hook zeroes the accumulators. It was refused
    in every mode (and eagerly on the interpreter), and the error said to drop the hook, which
    leaves the accumulator holding what it held."""
    x = torch.arange(40, dtype=torch.float32, device=DEVICE)
    counter = torch.full((1,), 7, dtype=torch.int32, device=DEVICE) if count else None
    if mode == "eager":
        run = _sum_twice
    elif mode == "fake":
        run = make_fx(_sum_twice, tracing_mode="fake")(x, counter)
    elif mode == "export":
        program = torch.export.export(_SumTwice(), (x, counter), strict=False)
        buffer = io.BytesIO()
        torch.export.save(program, buffer)
        buffer.seek(0)
        run = torch.export.load(buffer).module()
    else:
        torch._dynamo.reset()
        run = torch.compile(_sum_twice, fullgraph=True, backend=mode)
    first, second = run(x, counter)
    assert (first.item(), second.item()) == (2 * 780.0, 781.0)
    if count:  # zeroed, then one per program of the chosen config
        assert counter.item() in (triton.cdiv(40, 16), triton.cdiv(40, 32))


def test_a_kernel_with_pre_hooks_wrapped_inside_the_compiled_function_is_refused_on_a_gpu():
    """Found on an H100 (thirty-third session): where Dynamo holds raw kernels as its own
    TritonKernelVariable (a GPU), it refuses one whose configs have pre_hooks as it reads the
    kernel, before `wrap_triton(kernel)` in the compiled function runs; the wrapper must be
    made outside it (as above). The refusal names the pre_hook."""
    from torch_triton_hop._compat_dynamo import raw_kernels_as_on_a_gpu

    def sum_once(x):
        acc = torch.empty(1, device=x.device)
        wrap_triton(_sum_zeroing_first)[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, acc, None,
                                                                                               x.numel())
        return acc

    x = torch.arange(40, dtype=torch.float32, device=DEVICE)
    torch._dynamo.reset()
    with raw_kernels_as_on_a_gpu(), pytest.raises(torch._dynamo.exc.Unsupported, match="pre_hook"):
        torch.compile(sum_once, fullgraph=True, backend="aot_eager")(x)
