"""The eager fast launch (_fast_launch.py): its key against triton's own, what it launches,
and what sends it back to triton's path. See [Note: Fast launch].

On CPU the tests run triton's real JITFunction.run with the compiler and the driver stubbed:
`compile` returns a stub kernel whose launcher records its arguments, so triton itself
decides which kernel a call gets, and the fast path must pick the same one. The tests
marked gpu launch real kernels.
"""

from __future__ import annotations

import itertools
import os
import random
import threading

import pytest
import torch
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import CompiledKernel
from triton.runtime.jit import JITFunction

import torch_triton_hop
from torch_triton_hop import _compat, wrap_triton
from torch_triton_hop._fast_launch import NOT_FAST, fast_launcher
from torch_triton_hop.errors import UnsupportedTritonKernelError


# --- a stubbed triton: real JITFunction.run, stub compile and driver ---------------------------


class _StubDriver:
    def __init__(self) -> None:
        self.device = 0

    def get_current_device(self) -> int:
        return self.device

    def get_current_stream(self, device: int) -> int:
        return 1000 + device + 100 * threading.get_ident() % 7

    def get_current_target(self) -> GPUTarget:
        return GPUTarget("cuda", 90, 32)


class _StubLauncher:
    """A CudaLauncher as far as the fast launch reads it; records its calls."""

    num_ctas = 1
    launch_cooperative_grid = False
    launch_pdl = False
    global_scratch_size = 0
    profile_scratch_size = 0

    def __init__(self, kernel, log) -> None:
        self.kernel = kernel
        self.log = log

    def __call__(self, *call) -> None:
        self.log.append((self.kernel, call))


class _StubKernel:
    """What triton.compile returns, as far as JITFunction.run uses it."""

    launch_metadata = CompiledKernel.launch_metadata  # triton's own: builds the LazyDict

    def __init__(self, src, options, log) -> None:
        import types

        self.src = src
        self.name = src.fn.__name__
        self.options = options
        self.function = id(self)
        num_warps = (options or {}).get("num_warps", 4)
        self.metadata = types.SimpleNamespace(num_warps=num_warps, num_ctas=1, shared=128, global_scratch_size=0,
                                              profile_scratch_size=0)
        self.packed_metadata = (num_warps, 1, 128)
        self.run = _StubLauncher(self, log)

    def _init_handles(self) -> None:
        pass


class _Stub:
    def __init__(self) -> None:
        self.driver = _StubDriver()
        self.launches: list = []
        self.compiled: list = []

    def compile(self, src, target=None, options=None, **_):
        src.fn.cache_key  # what compiling does first: hash the source, collect used globals
        kernel = _StubKernel(src, options, self.launches)
        self.compiled.append(kernel)
        return kernel


@pytest.fixture
def stub(monkeypatch):
    import triton.compiler

    state = _Stub()
    config = _compat.triton_driver_config
    previous = config._active
    config.set_active(state.driver)
    monkeypatch.setattr(triton.compiler, "compile", state.compile)
    try:
        yield state
    finally:
        config._active = previous


def _jit(fn, **options) -> JITFunction:
    return JITFunction(fn, **options)  # a compiled kernel also under TRITON_INTERPRET=1


def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass


def _mixed(a, b, c, d, C: tl.constexpr, e=None):
    pass


def _annotated(a, n: tl.int32, s: tl.float32, C: tl.constexpr):
    pass


def _many(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, n0, n1, n2, n3, n4, n5, n6, n7, n8, n9, B: tl.constexpr):
    pass


def _launch_record(call):
    """A launcher call without what triton passes only for its hooks."""
    kernel, (g0, g1, g2, stream, function, packed, _metadata, _enter, _exit, *args) = call
    return kernel, (g0, g1, g2), stream, function, packed, args


# --- the key ----------------------------------------------------------------------------------

_BASE = torch.zeros(64)
_TENSORS = [_BASE, _BASE[1:], _BASE[4:], _BASE.half(), _BASE.half()[1:], _BASE.int(), _BASE.bool(),
            torch.nn.Parameter(torch.zeros(8))]
_INTS = [1, 0, 2, 16, 17, -16, -1, 2**31 - 1, 2**31, 2**31 + 16, -2**31, -2**31 - 1, 2**32, 2**63 - 1, 2**63,
         2**64 - 1, -2**63]
_SCALARS = _INTS + [True, False, 1.0, 0.5, None]
_CONSTEXPRS = [1, True, 2, 16, 2.0, "x", None]
_OPTIONS = [{}, {"num_warps": 4}, {"num_warps": 8}, {"num_warps": 4, "num_stages": 2}, {"debug": True}]


def _combos(count: int, seed: int):
    rng = random.Random(seed)
    values = _TENSORS + _SCALARS
    for _ in range(count):
        yield ((rng.choice(_TENSORS), rng.choice(values), rng.choice(_SCALARS), rng.choice(_SCALARS),
                rng.choice(_CONSTEXPRS)), {"e": rng.choice(_TENSORS + [None]), **rng.choice(_OPTIONS)})


def _partition_agrees(stub, jit, calls, exact=True):
    fast = fast_launcher(jit)
    fast((1,), *calls[0])  # the first launch reads the driver
    ours, theirs = [], []
    for args, kwargs in calls:
        theirs.append(jit.run(*args, grid=(1,), warmup=False, **kwargs))
        ours.append(fast.key(args, kwargs))
    assert None not in ours
    for (i, a), (j, b) in itertools.combinations(enumerate(ours), 2):
        same_triton = theirs[i] is theirs[j]
        if a == b:
            assert same_triton, (calls[i], calls[j])
        elif exact:
            assert not same_triton, (calls[i], calls[j], a, b)
    return len(set(map(id, theirs)))


@pytest.mark.parametrize("options", [{}, {"do_not_specialize": ["b", "d"]},
                                     {"do_not_specialize_on_alignment": [0, "b"]}, {"do_not_specialize": ["a"]}])
def test_same_key_iff_triton_picks_the_same_kernel(stub, options):
    """For many argument combinations, two calls share our key exactly when triton's own run
    picks the same compiled kernel for them (dtype, alignment, 1, divisibility, int range,
    bool / float / None, constexpr values, launch options, do_not_specialize*)."""
    jit = _jit(_mixed, **options)
    kernels = _partition_agrees(stub, jit, list(_combos(300, seed=len(str(options)))))
    assert kernels > 20


def test_annotated_parameters_never_share_a_key_triton_splits(stub):
    """Annotated parameters (n: tl.int32, s: tl.float32) get a key at least as fine as triton's."""
    jit = _jit(_annotated)
    rng = random.Random(3)
    calls = [((rng.choice(_TENSORS), rng.choice(_INTS[:10]), rng.choice([1.0, 2.5]), rng.choice(_CONSTEXPRS)), {})
             for _ in range(150)]
    _partition_agrees(stub, jit, calls, exact=False)


def test_device_and_knobs_join_the_key(stub):
    jit = _jit(_add)
    fast = fast_launcher(jit)
    x = torch.zeros(16)
    args = (x, x, x, 16, 4)
    fast((1,), args, {})
    base = fast.key(args, {})
    stub.driver.device = 1
    assert fast.key(args, {}) != base
    stub.driver.device = 0
    knobs = _compat.triton_knobs
    previous = knobs.runtime.debug
    knobs.runtime.debug = True
    try:
        assert fast.key(args, {}) != base
    finally:
        knobs.runtime.debug = previous
    assert fast.key(args, {}) == base


def test_run_reads_only_what_the_key_models():
    """Each supported triton's JITFunction / Autotuner / Heuristics .run reads only names the
    fast launch knows (a new one may specialize on something new: the fast launch turns off)."""
    assert _compat.FAST_LAUNCH_JIT and _compat.FAST_LAUNCH_AUTOTUNER and _compat.FAST_LAUNCH_HEURISTICS


# --- what it launches -------------------------------------------------------------------------


def test_launches_what_triton_launches(stub):
    """Aligned, misaligned, size 1, odd sizes, dtype and constexpr changes: the fast path hands
    the launcher the kernel, grid, stream and arguments triton's own run does."""
    jit = _jit(_add)
    ours = wrap_triton(jit)
    base = torch.zeros(40)
    cases = [(base, 16, 8), (base[1:], 16, 8), (base[1:], 1, 8), (base, 1, 8), (base[:17], 17, 8),
             (base.half(), 16, 8), (base.half()[3:], 5, 8), (base, 16, 16), (base, 16, 8)]
    grids = [(2,), (1, 3), lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)]
    for (x, n, block), grid in itertools.product(cases, grids):
        stub.launches.clear()
        result_triton = jit[grid](x, x, x, n, BLOCK=block)
        for _ in range(3):  # first launch, first sight of the key, then the fast path
            result_ours = ours[grid](x, x, x, n, BLOCK=block)
        assert result_ours is result_triton
        expected = _launch_record(stub.launches[0])
        for call in stub.launches[1:]:
            assert _launch_record(call) == expected
        kernel, (*_, metadata, enter, exit_hook, _args) = stub.launches[-1][0], stub.launches[-1][1][:10]
        assert (metadata, enter, exit_hook) == (None, None, None)  # the fast path launched the last one


def test_hits_do_not_call_triton_run(stub, monkeypatch):
    jit = _jit(_add)
    ours = wrap_triton(jit)
    x = torch.zeros(32)
    for _ in range(2):
        ours[(1,)](x, x, x, 32, BLOCK=16)
    calls = []
    real = JITFunction.run
    monkeypatch.setattr(JITFunction, "run", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    for _ in range(5):
        ours[(1,)](x, x, x, 32, BLOCK=16)
        ours.run(x, x, x, 32, grid=(1,), BLOCK=16)
    assert calls == [] and len(stub.launches) == 12
    ours[(1,)](x[1:], x, x, 31, BLOCK=16)  # a new key: triton decides
    assert calls == [1]


def test_twenty_arguments(stub):
    jit = _jit(_many)
    ours = wrap_triton(jit)
    tensors = [torch.zeros(8) for _ in range(10)]
    ints = list(range(10))
    jit[(1,)](*tensors, *ints, B=4)
    for _ in range(3):
        ours[(1,)](*tensors, *ints, B=4)
    records = [_launch_record(call) for call in stub.launches]
    assert len(records) == 4 and all(record == records[0] for record in records)
    assert stub.launches[-1][1][6:9] == (None, None, None)


def test_cleared_triton_cache_recompiles(stub):
    """A cleared or replaced kernel cache is noticed: the next call compiles again."""
    jit = _jit(_add)
    ours = wrap_triton(jit)
    x = torch.zeros(32)
    for _ in range(3):
        ours[(1,)](x, x, x, 32, BLOCK=16)
    assert len(stub.compiled) == 1
    jit.device_caches[0][0].clear()
    ours[(1,)](x, x, x, 32, BLOCK=16)
    assert len(stub.compiled) == 2
    jit.device_caches.clear()
    ours[(1,)](x, x, x, 32, BLOCK=16)
    assert len(stub.compiled) == 3
    assert stub.launches[-1][0] is stub.compiled[-1]


_CHANGING = 4


def _reads_global(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(_CHANGING == 4)


def test_changed_global_raises_like_triton(stub):
    global _CHANGING
    jit = _jit(_reads_global)
    ours = wrap_triton(jit)
    x = torch.zeros(4)
    for _ in range(3):
        ours[(1,)](x, BLOCK=4)
    _CHANGING = 5
    try:
        with pytest.raises(RuntimeError, match="Global variable _CHANGING has changed"):
            ours[(1,)](x, BLOCK=4)
        with pytest.raises(RuntimeError, match="Global variable _CHANGING has changed"):
            jit[(1,)](x, BLOCK=4)
    finally:
        _CHANGING = 4


# --- what sends it back to triton -------------------------------------------------------------


def test_launch_hooks_and_pre_run_hooks_take_tritons_path(stub):
    jit = _jit(_add)
    ours = wrap_triton(jit)
    x = torch.zeros(32)
    for _ in range(3):
        ours[(1,)](x, x, x, 32, BLOCK=16)
    seen = []
    hook = seen.append
    _compat.triton_knobs.runtime.launch_enter_hook.add(hook)
    try:
        ours[(1,)](x, x, x, 32, BLOCK=16)
        assert stub.launches[-1][1][7] is _compat.triton_knobs.runtime.launch_enter_hook  # triton's launch
    finally:
        _compat.triton_knobs.runtime.launch_enter_hook.remove(hook)
    pre = []
    jit.add_pre_run_hook(lambda *a, **k: pre.append(1))
    ours[(1,)](x, x, x, 32, BLOCK=16)
    assert pre == [1]


def test_tensor_subclass_and_modes_take_the_hop(stub):
    class Sub(torch.Tensor):
        pass

    fast = fast_launcher(_jit(_add))
    x = torch.zeros(32)
    fast((1,), (x, x, x, 32), {"BLOCK": 16})
    assert fast((1,), (x.as_subclass(Sub), x, x, 32), {"BLOCK": 16}) is NOT_FAST
    assert fast((1,), (x, x, x, 32), {"BLOCK": x.as_subclass(Sub)}) is NOT_FAST
    assert fast((1,), (x, x, x, (1, 2)), {"BLOCK": 16}) is NOT_FAST  # a tuple argument: triton's path
    assert fast((1,), (x, x, x), {"BLOCK": 16}) is NOT_FAST  # missing argument: triton raises its error
    assert fast((-1,), (x, x, x, 32), {"BLOCK": 16}) is NOT_FAST  # refused eagerly, see [Note: Launch checks]


def test_not_fast_calls_get_the_arguments_as_passed(stub):
    """The calling convention: a launch binds its own arguments and hands a call it does not
    take to its fallback as passed, before any side effect; a heuristics launch classifies its
    usual positional arguments before the heuristics run. See [Note: Fast launch]."""
    seen = []
    calls = []
    x = torch.zeros(32)
    heuristics = triton.heuristics({"BLOCK": lambda a: calls.append(1) or 16})(_jit(_add))
    for kernel, options in ((_jit(_add), {"BLOCK": 16}), (heuristics, {})):
        fast = fast_launcher(kernel, fallback=lambda grid, args, kwargs: seen.append((grid, args, kwargs)) or "slow")
        fast.launch((1,), x, x, x, 32, **options)  # the first launch reads the driver
        seen.clear()
        calls.clear()
        cases = [((1,), (x, x, (1, 2), 32), options), ((-1,), (x, x, x, 32), options)]  # a tuple; refused eagerly
        if kernel is not heuristics:  # arguments that do not bind (under heuristics: after they ran, as triton)
            cases += [((1,), (x, x, x), options), ((1,), (x, x, x, 32), {"x_ptr": x, **options})]
        for grid, args, kwargs in cases:
            assert fast.launch(grid, *args, **kwargs) == "slow"
            assert seen.pop() == (grid, args, kwargs)
        assert calls == [] and not seen


def test_the_interpreter_keeps_its_path():
    """Under TRITON_INTERPRET=1 the kernels are InterpretedFunctions: no fast launch."""
    interpreted = _compat.InterpretedFunction
    if not isinstance(torch_triton_hop.wrap_triton(_ProbeKernel.kernel).kernel, interpreted):
        pytest.skip("kernels compile here")
    assert fast_launcher(_ProbeKernel.kernel) is None


class _ProbeKernel:
    @staticmethod
    @triton.jit
    def kernel(x_ptr, BLOCK: tl.constexpr):
        pass


# --- autotuning and heuristics ----------------------------------------------------------------


def _bench_order(order):
    """A do_bench that makes the configs' timings `order` (in tuning order)."""
    timings = list(order)

    def do_bench(fn, quantiles=None, **_):
        fn()
        t = timings.pop(0)
        timings.append(t)
        return [t, t, t]

    return do_bench


def _autotuned(restore=False):
    return triton.autotune(
        configs=[triton.Config({"BLOCK": 16}, num_warps=2), triton.Config({"BLOCK": 32}, num_warps=4)],
        key=["n"], do_bench=_bench_order([2.0, 1.0]),
        restore_value=["out_ptr"] if restore else None)(_jit(_add))


def test_autotuned_launches_go_fast_after_tuning(stub, monkeypatch):
    at = _autotuned(restore=True)
    ours = wrap_triton(at)
    x = torch.zeros(64)
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
    for _ in range(3):
        ours[grid](x, x, x, 64)
    assert at.best_config.kwargs == {"BLOCK": 32}
    tuned = dict(at.cache)
    calls = []
    real = JITFunction.run
    monkeypatch.setattr(JITFunction, "run", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    stub.launches.clear()
    at.best_config = None
    ours[grid](x, x, x, 64)
    assert calls == [] and at.best_config.kwargs == {"BLOCK": 32}
    kernel, (g0, _, _, _, _, _, _, _, _, *args) = stub.launches[-1]
    assert g0 == 2 and args[3:] == [64, 32]
    ours[grid](x, x, x, 100)  # a new key tunes as triton does
    assert len(at.cache) == 2 and all(at.cache[key] is config for key, config in tuned.items())


def test_autotuned_tuning_key_follows_keyword_order(stub):
    """Triton's tuning key lists dtypes in call order: tensors passed by keyword in another
    order are another key (tuned again, maybe to another config); the fast path keeps them apart."""
    at = triton.autotune(configs=[triton.Config({"BLOCK": 16}, num_warps=2), triton.Config({"BLOCK": 32}, num_warps=4)],
                         key=["n"], do_bench=_bench_order([2.0, 1.0, 1.0, 2.0]))(_jit(_add))
    ours = wrap_triton(at)
    a, b, out = torch.zeros(64), torch.zeros(64).half(), torch.zeros(64)
    calls = [lambda: ours[(1,)](x_ptr=a, y_ptr=b, out_ptr=out, n=64), lambda: ours[(1,)](y_ptr=b, x_ptr=a, out_ptr=out, n=64)]
    for _ in range(3):
        for call in calls:
            call()
            assert stub.launches[-1][0].options["num_warps"] == at.best_config.num_warps
    assert sorted(config.num_warps for config in at.cache.values()) == [2, 4]
    assert [stub.launches[i][0].options["num_warps"] for i in (-2, -1)] == [4, 2]
    assert stub.launches[-1][1][6:9] == (None, None, None)  # the fast path launched it


def test_autotuned_config_edited_after_tuning(stub):
    """A config changed after tuning is launched as changed, as Autotuner.run reads it per call."""
    at = _autotuned()
    ours = wrap_triton(at)
    x = torch.zeros(64)
    for _ in range(3):
        ours[(1,)](x, x, x, 64)
    assert stub.launches[-1][1][-1] == 32
    at.best_config.kwargs["BLOCK"] = 8
    ours[(1,)](x, x, x, 64)
    assert stub.launches[-1][1][-1] == 8


def test_heuristics_see_triton_dict(stub):
    """Each heuristic sees the dict Heuristics.run builds (positional names, grid, warmup,
    kwargs in call order, earlier values), whatever is passed by keyword."""
    seen = []

    def first(args):
        seen.append(list(args.items()))
        return 16

    def second(args):
        seen.append(list(args.items()))
        return args.get("n", 3)

    x = torch.zeros(64)
    for values in ({"BLOCK": first, "n": second}, {"BLOCK": first}):  # several values; one (a dict literal)
        kernel = triton.heuristics(values)(_jit(_add))
        ours = wrap_triton(kernel)
        for args, kwargs in [((x, x, x), {"n": 5}), ((x,), {"out_ptr": x, "y_ptr": x, "n": 7}), ((x, x, x, 6), {})]:
            if len(args) == 4 and "n" in values:
                continue
            seen.clear()
            kernel[(1,)](*args, **kwargs)
            expected = list(seen)
            for _ in range(3):
                seen.clear()
                ours[(1,)](*args, **kwargs)
                assert seen == expected
            assert stub.launches[-1][1][6:9] == (None, None, None)


def test_heuristics_are_evaluated_per_call(stub):
    seen = []

    def block(args):
        seen.append(sorted(args))
        return 16 if args["n"] <= 64 else 32

    heuristic = triton.heuristics({"BLOCK": block})(_jit(_add))
    ours = wrap_triton(heuristic)
    x = torch.zeros(128)
    heuristic[(1,)](x, x, x, 64)
    expected = seen[-1]
    for n in (64, 64, 64, 100, 100):
        ours[(1,)](x, x, x, n)
        assert stub.launches[-1][1][-1] == (16 if n <= 64 else 32)
    assert len(seen) == 6 and all(s == expected for s in seen)  # grid and warmup included, as triton's


def _heuristic_target(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr, EVEN: tl.constexpr, e=None):
    pass


def _changing_heuristics(log):
    """Values that change with n: constexprs, a scalar parameter, a launch option."""
    def value(name, fn):
        return lambda args: log.append((name, list(args.items()))) or fn(args)

    return {"BLOCK": value("BLOCK", lambda a: 16 if a["n"] <= 64 else 32),
            "EVEN": value("EVEN", lambda a: a["n"] % a["BLOCK"] == 0),
            "s": value("s", lambda a: a["n"] // 2),
            "num_warps": value("num_warps", lambda a: 2 if a["n"] < 50 else 4)}


def test_heuristics_launch_what_triton_launches(stub, monkeypatch):
    """Heuristic values that change between calls (constexprs, a scalar, num_warps), positional
    and keyword call shapes, a default: each call launches what Heuristics.run launches, the
    heuristics see what they see there, and only a new specialization reaches JITFunction.run
    (once)."""
    theirs_log, ours_log = [], []
    theirs = triton.heuristics(_changing_heuristics(theirs_log))(_jit(_heuristic_target))
    ours = wrap_triton(triton.heuristics(_changing_heuristics(ours_log))(_jit(_heuristic_target)))
    runs = []
    real = JITFunction.run
    monkeypatch.setattr(JITFunction, "run", lambda self, *a, **k: runs.append(1) or real(self, *a, **k))
    x = torch.zeros(128)
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]), meta["s"])  # noqa: E731
    shapes = [lambda n: ((x, x, n), {}), lambda n: ((x,), {"n": n, "out_ptr": x, "e": x}),
              lambda n: ((), {"n": n, "x_ptr": x, "out_ptr": x, "num_stages": 2})]
    ours[(1,)](x, x, 8)  # the first launch reads the driver
    seen_keys = set()
    for n, shape in itertools.product([64, 48, 64, 100, 96, 48, 100], shapes):
        args, kwargs = shape(n)
        theirs_log.clear()
        ours_log.clear()
        theirs[grid](*args, **kwargs)
        kernel, grid_size, stream, _, packed, launched = _launch_record(stub.launches[-1])
        runs.clear()
        ours[grid](*args, **kwargs)
        ours_kernel, *ours_record = _launch_record(stub.launches[-1])
        assert ours_record[:2] + ours_record[3:] == [grid_size, stream, packed, launched]
        assert ours_kernel.options == kernel.options and ours_kernel.src.constants == kernel.src.constants
        assert ours_log == theirs_log
        key = (n, shape)
        assert runs == ([] if key in seen_keys else [1])
        if key not in seen_keys:  # the next call of this key goes fast
            seen_keys.add(key)
            ours[grid](*args, **kwargs)
            assert stub.launches[-1][1][6:9] == (None, None, None)


def test_a_keyword_that_names_no_parameter_leaves_the_fast_path_and_is_refused(stub):
    """Triton takes `e_typo=` as a launch option and ignores it, so `e` keeps its default; the
    fast path takes options only where triton knows them, and the slow path refuses the rest,
    on every call."""
    x = torch.zeros(64)
    ours = wrap_triton(_jit(_mixed))
    ours[(1,)](x, x, x, x, 4, e=1.0, num_warps=2)  # a parameter with a default and an option go fast
    for _ in range(2):
        with pytest.raises(UnsupportedTritonKernelError, match=r"kernel '_mixed' has no parameter 'e_typo'.*"
                           r"ignores it, so the parameter it was meant for would keep its default"):
            ours[(1,)](x, x, x, x, 4, e_typo=1.0)


def test_heuristics_errors_and_slow_paths_run_them_once(stub):
    """Arguments triton refuses raise its error, and a launch that leaves the fast path after the
    heuristics ran (a launch hook) does not run them again."""
    calls = []

    def block(args):
        calls.append(1)
        return 16

    x = torch.zeros(64)
    for values, args, kwargs in [({"BLOCK": block}, (x, x), {}),  # n missing
                                 ({"BLOCK": block}, (x, x, x, 64, 16), {}),  # BLOCK given twice
                                 ({"BLOCK": block}, (x, x, x, 64, 16, 1), {}),  # too many
                                 ({"BLOCK": block, "n": lambda a: 64}, (x, x, x, 64), {})]:  # n twice
        kernel = triton.heuristics(values)(_jit(_add))
        calls.clear()
        with pytest.raises(TypeError) as raw_error:
            kernel[(1,)](*args, **kwargs)
        assert calls == [1]
        ours = wrap_triton(kernel)
        for _ in range(2):
            calls.clear()
            with pytest.raises(TypeError) as our_error:
                ours[(1,)](*args, **kwargs)
            assert calls == [1] and str(our_error.value) == str(raw_error.value)
    ours = wrap_triton(triton.heuristics({"BLOCK": block})(_jit(_add)))
    for _ in range(3):
        ours[(1,)](x, x, x, 64)
    hooks = _compat.triton_knobs.runtime.launch_enter_hook
    hook = [].append
    hooks.add(hook)
    try:
        calls.clear()
        ours[(1,)](x, x, x, 64)
        assert calls == [1] and stub.launches[-1][1][7] is hooks  # triton's launch
    finally:
        hooks.remove(hook)


def test_heuristics_tensor_subclass_takes_the_hop_before_they_run(stub):
    class Sub(torch.Tensor):
        pass

    calls = []
    kernel = triton.heuristics({"BLOCK": lambda a: calls.append(1) or 16})(_jit(_add))
    fast = fast_launcher(kernel)
    x = torch.zeros(32)
    fast((1,), (x, x, x, 32), {})
    calls.clear()
    assert fast((1,), (x.as_subclass(Sub), x, x, 32), {}) is NOT_FAST
    assert fast((1,), (x, x), {"out_ptr": x.as_subclass(Sub), "n": 32}) is NOT_FAST
    assert fast((-1,), (x, x, x, 32), {}) is NOT_FAST
    assert calls == []


def test_heuristics_above_autotune_and_below(stub):
    x = torch.zeros(128)
    for order in ("above", "below"):
        jit = _jit(_add)
        at = lambda fn: triton.autotune(  # noqa: E731
            configs=[triton.Config({}, num_warps=2), triton.Config({}, num_warps=4)], key=["n"],
            do_bench=_bench_order([1.0, 2.0]))(fn)
        he = lambda fn: triton.heuristics({"BLOCK": lambda a: 16})(fn)  # noqa: E731
        kernel = he(at(jit)) if order == "above" else at(he(jit))
        ours = wrap_triton(kernel)
        for _ in range(4):
            ours[(1,)](x, x, x, 64)
        kernel_obj, call = stub.launches[-1]
        assert call[6:9] == (None, None, None) and call[-1] == 16 and kernel_obj.options["num_warps"] == 2


def test_heuristics_over_heuristics(stub):
    """The outer heuristics see the inner's dict as triton builds it; the inner one's value wins."""
    seen = []
    inner = triton.heuristics({"BLOCK": lambda a: seen.append(("inner", list(a))) or a["n"] // 4})(_jit(_add))
    kernel = triton.heuristics({"BLOCK": lambda a: seen.append(("outer", list(a))) or 8})(inner)
    ours = wrap_triton(kernel)
    x = torch.zeros(128)
    ours[(1,)](x, x, x, 32)  # the first launch reads the driver
    for n in (64, 128, 64):
        seen.clear()
        kernel[(1,)](x, x, x, n)
        expected = (list(seen), _launch_record(stub.launches[-1])[5])
        for _ in range(2):
            seen.clear()
            ours[(1,)](x, x, x, n)
            assert (seen, _launch_record(stub.launches[-1])[5]) == expected
        assert stub.launches[-1][1][6:9] == (None, None, None)


# --- threads ----------------------------------------------------------------------------------


@pytest.mark.parametrize("heuristics", [False, True])
def test_concurrent_launches_from_threads(stub, heuristics):
    jit = _jit(_add)
    ours = wrap_triton(triton.heuristics({"BLOCK": lambda a: 16})(jit) if heuristics else jit)
    block = {} if heuristics else {"BLOCK": 16}
    tensors = [torch.zeros(16 + i) for i in range(8)]
    errors = []

    def work(i):
        try:
            x = tensors[i]
            for _ in range(200):
                ours[(i + 1,)](x, x, x, x.numel(), **block)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(stub.launches) == 1600
    for kernel, call in stub.launches:
        x = call[9]
        i = next(j for j, t in enumerate(tensors) if t is x)
        assert call[0] == i + 1 and call[12] == x.numel()


# --- the static launch (torch's launcher for triton cubins) -----------------------------------


def test_static_launch_passes_what_tritons_launcher_would(stub):
    """With torch's static launcher, the launch gets triton's non-constexpr arguments in order
    (tensors as data_ptr()), then the two scratch pointers; num_warps and shared from the
    compiled kernel. Here the static launcher records, and the tensors count as on CUDA."""
    static_calls = []
    jit = _jit(_mixed)
    fast = fast_launcher(jit, static_launch=lambda *call: static_calls.append(call), assume_cuda=True)
    base = torch.zeros(64)
    cases = [((base, base[1:], 5, 2.5, 4), {}), ((base, 1, 2**40, 2**63, 8), {"e": base, "num_warps": 8}),
             ((base.half(), None, 16, 0.5, 2), {}), ((base, base, 1, 1.0, 1), {"e": None})]
    for args, kwargs in cases:
        stub.launches.clear()
        static_calls.clear()
        jit.run(*args, grid=(3, 2), warmup=False, **kwargs)
        kernel, triton_call = stub.launches[-1]
        for _ in range(2):
            fast((3, 2), args, kwargs)
        launches, static_calls[:] = len(stub.launches), []
        fast((3, 2), args, kwargs)
        assert len(static_calls) == 1 and len(stub.launches) == launches
        function, g0, g1, g2, num_warps, shared, arg_types, passed, stream = static_calls[-1]
        params = triton_call[9:]
        signature = list(kernel.src.signature.values())
        expected = [p.data_ptr() if isinstance(p, torch.Tensor) else p
                    for p, ty in zip(params, signature) if ty != "constexpr"]
        assert (function, g0, g1, g2, stream) == (kernel.function, 3, 2, 1, triton_call[3])
        assert (num_warps, shared) == (kernel.packed_metadata[0], kernel.packed_metadata[2])
        assert list(passed) == expected + [None, None] and len(arg_types) == len(passed)
        assert arg_types[-2:] == "OO" and all(
            (t == "O") == (ty.startswith("*")) for t, ty in zip(arg_types, [ty for ty in signature if ty != "constexpr"]))


def test_static_launch_leaves_what_it_cannot_do_to_triton(stub):
    """Tensors not on a CUDA device, bool arguments, annotated scalars, an empty grid: triton's
    launcher."""
    static_calls = []
    record = lambda *call: static_calls.append(call)  # noqa: E731
    x = torch.zeros(16)
    fast = fast_launcher(_jit(_add), static_launch=record)  # CPU tensors: no static launch
    for _ in range(3):
        fast((1,), (x, x, x, 16), {"BLOCK": 4})
    fast = fast_launcher(_jit(_mixed), static_launch=record, assume_cuda=True)
    for _ in range(3):
        fast((1,), (x, x, True, 1.0, 4), {})  # u1
    fast = fast_launcher(_jit(_annotated), static_launch=record, assume_cuda=True)
    for _ in range(3):
        fast((1,), (x, 3, 1.0, 4), {})
    assert static_calls == []
    fast = fast_launcher(_jit(_add), static_launch=record, assume_cuda=True)
    stub.launches.clear()
    for grid in [(1,), (1,), (1,), lambda meta: (0,)]:
        fast(grid, (x, x, x, 16), {"BLOCK": 4})
    assert len(static_calls) == 1 and stub.launches[-1][1][0] == 0  # no program: triton's launcher


# --- on a GPU ---------------------------------------------------------------------------------


@triton.jit
def _gpu_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _gpu_many(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, out_ptr, n, m0, m1, m2, m3, m4, m5, m6, m7, scale,
              BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(a0 + offs, mask=mask) * m0 + tl.load(a1 + offs, mask=mask) * m1
    acc += tl.load(a2 + offs, mask=mask) * m2 + tl.load(a3 + offs, mask=mask) * m3
    acc += tl.load(a4 + offs, mask=mask) * m4 + tl.load(a5 + offs, mask=mask) * m5
    acc += tl.load(a6 + offs, mask=mask) * m6 + tl.load(a7 + offs, mask=mask) * m7
    acc += tl.load(a8 + offs, mask=mask) + tl.load(a9 + offs, mask=mask)
    tl.store(out_ptr + offs, acc * scale, mask=mask)


@triton.jit
def _gpu_accumulate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _gpu_even(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))
    else:
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def _meta_grid(meta):
    return (triton.cdiv(meta["n"], meta["BLOCK"]),)


def _count_triton_runs(monkeypatch):
    calls = []
    real = JITFunction.run
    monkeypatch.setattr(JITFunction, "run", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    return calls


def _add_cases():
    base = torch.randn(4099, device="cuda")
    other = torch.randn(4099, device="cuda")
    return [
        (base[:4096], other[:4096], 4096, 256),  # aligned
        (base[1:4097], other[1:4097], 4096, 256),  # misaligned views after the aligned call
        (base[:1], other[:1], 1, 256),  # size 1: triton makes n a constexpr
        (base[:17], other[3:20], 17, 256),  # odd size, one misaligned
        (base[:1000].half(), other[:1000].half(), 1000, 256),  # dtype change
        (base[:1000], other[:1000], 1000, 128),  # constexpr change
        (base[:4096], other[:4096], 4096, 256),  # back to the first
        (base[2:4098], other[:4096], 4096, 256),
    ]


@pytest.mark.gpu
def test_gpu_results_equal_raw_triton(monkeypatch):
    """Aligned, misaligned views (also after an aligned call), size 1, odd sizes, dtype and
    constexpr changes, tuple and callable grids: ours equals raw triton and torch."""
    ours = wrap_triton(_gpu_add)
    for x, y, n, block in _add_cases():
        for grid in [(triton.cdiv(n, block),), _meta_grid]:
            expected = x + y
            raw_out, our_out = torch.full_like(x, -1.0), torch.full_like(x, -1.0)
            _gpu_add[grid](x, y, raw_out, n, BLOCK=block)
            for _ in range(3):
                our_out.fill_(-1.0)
                ours[grid](x, y, our_out, n, BLOCK=block)
            torch.cuda.synchronize()
            torch.testing.assert_close(raw_out, expected)
            torch.testing.assert_close(our_out, raw_out)
    calls = _count_triton_runs(monkeypatch)
    x, y, n, block = _add_cases()[0]
    out = torch.empty_like(x)
    ours[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    assert calls == []  # the fast path launched it


@pytest.mark.gpu
def test_gpu_misaligned_view_after_aligned_call():
    """The kernel specialized for 16-byte aligned pointers is never reused for a misaligned view."""
    ours = wrap_triton(_gpu_add)
    base = torch.arange(4097, device="cuda", dtype=torch.float32)
    for _ in range(3):
        out = torch.empty(4096, device="cuda")
        ours[(16,)](base[:4096], base[:4096], out, 4096, BLOCK=256)
    torch.testing.assert_close(out, 2 * base[:4096])
    view = base[1:]
    out = torch.empty(4096, device="cuda")
    ours[(16,)](view, view, out, 4096, BLOCK=256)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 2 * view)


@pytest.mark.gpu
def test_gpu_static_launch_is_used_where_it_can_be():
    if _compat.static_cuda_launch() is None:
        pytest.skip("this torch has no static CUDA launcher")
    if os.environ.get("TORCH_TRITON_HOP_STATIC_LAUNCH") == "0":
        pytest.skip("turned off by TORCH_TRITON_HOP_STATIC_LAUNCH=0")
    fast = fast_launcher(_gpu_add)
    x = torch.randn(4096, device="cuda")
    out = torch.empty_like(x)
    for _ in range(3):
        fast((16,), (x, x, out, 4096), {"BLOCK": 256})
    torch.testing.assert_close(out, 2 * x)
    assert [entry[1] is not None for entry in fast.jit_launcher.cache.values()] == [True]


@pytest.mark.gpu
def test_gpu_twenty_arguments():
    ours = wrap_triton(_gpu_many)
    inputs = [torch.randn(999, device="cuda") for _ in range(10)]
    multipliers = list(range(2, 10))
    expected = (sum(a * m for a, m in zip(inputs, multipliers)) + inputs[8] + inputs[9]) * 0.5
    for _ in range(3):
        out = torch.empty(999, device="cuda")
        ours[(4,)](*inputs, out, 999, *multipliers, 0.5, BLOCK=256)
    torch.testing.assert_close(out, expected)


@pytest.mark.gpu
def test_gpu_autotuned_after_tuning_goes_fast(monkeypatch):
    """After tuning a key, launches take the fast path with the chosen config; a new key tunes;
    reset_to_zero keeps an accumulating kernel right."""
    kernel = triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=2),
                                      triton.Config({"BLOCK": 512}, num_warps=4)],
                             key=["n"], reset_to_zero=["out_ptr"])(_gpu_accumulate)
    ours = wrap_triton(kernel)
    x = torch.randn(3000, device="cuda")
    for _ in range(3):
        out = torch.zeros_like(x)
        ours[_meta_grid](x, out, 3000)
        torch.testing.assert_close(out, x)
    chosen = kernel.best_config
    calls = _count_triton_runs(monkeypatch)
    out = torch.zeros_like(x)
    ours[_meta_grid](x, out, 3000)
    torch.testing.assert_close(out, x)
    assert calls == [] and kernel.best_config is chosen
    y = torch.randn(5000, device="cuda")
    out = torch.zeros_like(y)
    ours[_meta_grid](y, out, 5000)  # a new key: triton tunes
    torch.testing.assert_close(out, y)
    assert len(kernel.cache) == 2


@pytest.mark.gpu
def test_gpu_autotuned_restore_value():
    kernel = triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})],
                             key=["n"], restore_value=["out_ptr"])(_gpu_accumulate)
    ours = wrap_triton(kernel)
    x = torch.randn(1000, device="cuda")
    for _ in range(3):
        out = torch.ones_like(x)
        ours[_meta_grid](x, out, 1000)
        torch.testing.assert_close(out, x + 1)


@pytest.mark.gpu
def test_gpu_heuristics(monkeypatch):
    kernel = triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})(_gpu_even)
    ours = wrap_triton(kernel)
    x, y = torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")
    for n in (4096, 4000, 4096, 4000, 4096):
        out = torch.zeros_like(x)
        ours[_meta_grid](x, y, out, n, BLOCK=256)
        torch.testing.assert_close(out[:n], (x + y)[:n])
        torch.testing.assert_close(out[n:], torch.zeros_like(out[n:]))
    calls = _count_triton_runs(monkeypatch)
    ours[_meta_grid](x, y, out, 4000, BLOCK=256)
    assert calls == []


@pytest.mark.gpu
def test_gpu_launch_goes_to_the_current_stream():
    """A launch on a side stream waits for what that stream has queued (a sleep, then a copy)."""
    ours = wrap_triton(_gpu_add)
    x, y, new = (torch.randn(4096, device="cuda") for _ in range(3))
    out = torch.empty_like(x)
    for _ in range(3):
        ours[(16,)](x, y, out, 4096, BLOCK=256)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        x.copy_(new)
        ours[(16,)](x, y, out, 4096, BLOCK=256)
    side.synchronize()
    torch.testing.assert_close(out, new + y)


@pytest.mark.gpu
def test_gpu_cuda_graph_capture():
    ours = wrap_triton(_gpu_add)
    x, y = torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")
    out = torch.empty_like(x)
    for _ in range(3):
        ours[(16,)](x, y, out, 4096, BLOCK=256)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        ours[(16,)](x, y, out, 4096, BLOCK=256)
    x.copy_(torch.randn_like(x))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, x + y)


@pytest.mark.gpu
def test_gpu_threads():
    ours = wrap_triton(_gpu_add)
    xs = [torch.randn(1000 + 16 * i, device="cuda") for i in range(8)]
    outs = [torch.empty_like(x) for x in xs]
    errors = []

    def work(i):
        try:
            for _ in range(100):
                ours[_meta_grid](xs[i], xs[i], outs[i], xs[i].numel(), BLOCK=128)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    torch.cuda.synchronize()
    assert not errors
    for x, out in zip(xs, outs):
        torch.testing.assert_close(out, 2 * x)


@pytest.mark.gpu
def test_gpu_second_device():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    ours = wrap_triton(_gpu_add)
    for device in (0, 1, 0, 1):
        with torch.cuda.device(device):
            x = torch.randn(4096, device="cuda")
            out = torch.empty_like(x)
            for _ in range(2):
                ours[(16,)](x, x, out, 4096, BLOCK=256)
            torch.cuda.synchronize()
            torch.testing.assert_close(out, 2 * x)


@pytest.mark.gpu
def test_gpu_launch_hooks_see_every_launch():
    ours = wrap_triton(_gpu_add)
    x = torch.randn(4096, device="cuda")
    out = torch.empty_like(x)
    for _ in range(3):
        ours[(16,)](x, x, out, 4096, BLOCK=256)
    seen = []
    hook = seen.append
    _compat.triton_knobs.runtime.launch_enter_hook.add(hook)
    try:
        ours[(16,)](x, x, out, 4096, BLOCK=256)
    finally:
        _compat.triton_knobs.runtime.launch_enter_hook.remove(hook)
    assert len(seen) == 1


def _write_sum(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + tl.load(y_ptr + offs, mask=offs < n), mask=offs < n)


@pytest.mark.parametrize("layers", ["jit", "declared", "autotuned", "heuristics", "heuristics_over_autotuned",
                                    "autotuned_over_heuristics"])
def test_every_launch_bumps_the_version_of_what_the_kernel_writes(stub, layers):
    """First launch, new keys (triton's run), hits (the generated launch), the layers' paths: each
    bumps the tensor the kernel writes once, and nothing else. See [Note: Launches bump version counters]."""
    jit = _jit(_write_sum)
    config = [triton.Config({"BLOCK": 16})]  # one config: nothing to benchmark on the stub
    kernel, options = {
        "jit": (jit, {"BLOCK": 16}),
        "declared": (jit, {"BLOCK": 16}),
        "autotuned": (triton.autotune(config, key=["n"])(jit), {}),
        "heuristics": (triton.heuristics({"BLOCK": lambda a: 16})(jit), {}),
        # one generated launch per layer; then the layered path (_AutotuneLayer over _HeuristicsLayer)
        "heuristics_over_autotuned": (triton.heuristics({"BLOCK": lambda a: 16})(
            triton.autotune([triton.Config({}, num_warps=2)], key=["n"])(jit)), {}),
        "autotuned_over_heuristics": (triton.autotune([triton.Config({}, num_warps=2)], key=["n"])(
            triton.heuristics({"BLOCK": lambda a: 16})(jit)), {}),
    }[layers]
    ours = wrap_triton(kernel, writes=["y_ptr", "out_ptr"] if layers == "declared" else None)
    base, y, out = torch.zeros(40), torch.zeros(40), torch.zeros(40)
    for launches, x in enumerate([base, base, base, base[1:], base[1:], base], start=1):
        ours[(1,)](x, y, out, 32, **options)
        assert (base._version, y._version, out._version) == (0, launches if layers == "declared" else 0, launches)
    assert stub.launches
