"""Where the tests run kernels: on a GPU when there is one, else on CPU under the Triton interpreter.

`TRITON_INTERPRET` decides, and it must be set before triton is imported: left unset, it
becomes 0 on a machine with CUDA and 1 without. Tests marked `gpu` need the GPU; tests
marked `interpreter` run kernels on CPU tensors and need the interpreter; tests marked
`any_device` (inductor, aliasing, Liger-Kernel, the corpus under torch.compile) run on
whichever there is, and on a GPU machine they are GPU tests: they get the `gpu` mark too, so
`pytest -m gpu` there runs them. The rest (the analysis) need neither.
"""

import os

# torch imports every module TORCH_LOGS names while it is imported: with TORCH_LOGS naming
# torch_triton_hop that is this package, and triton with it, before TRITON_INTERPRET is set
# below. Hidden while torch is imported, applied once it is set.
_TORCH_LOGS = os.environ.pop("TORCH_LOGS", None)
import torch  # noqa: E402  (imports no triton without TORCH_LOGS)

os.environ.setdefault("TRITON_INTERPRET", "0" if torch.cuda.is_available() else "1")
if _TORCH_LOGS is not None:
    os.environ["TORCH_LOGS"] = _TORCH_LOGS
    from torch_triton_hop._compat import reapply_torch_logs

    reapply_torch_logs()
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # triton 3.9 warns unless chosen; keep its default
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    # A cache of this session's own: code compiled by an earlier checkout is never reused.
    import tempfile

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="torch_triton_hop_tests_")

import logging  # noqa: E402

import pytest  # noqa: E402

INTERPRETED = os.environ["TRITON_INTERPRET"] == "1"


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device with TRITON_INTERPRET unset or 0")
    config.addinivalue_line("markers", "interpreter: runs kernels on CPU tensors under TRITON_INTERPRET=1")
    config.addinivalue_line("markers", "any_device: runs kernels on the GPU, or on CPU under the interpreter")
    config.addinivalue_line("markers", "fusion_pass_fails: the test makes the fusion pass fail on purpose")


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by mark
def pytest_collection_modifyitems(config, items):
    on_gpu = torch.cuda.is_available() and not INTERPRETED
    for item in items:
        if "any_device" in item.keywords and on_gpu:
            item.add_marker(pytest.mark.gpu)
        if "gpu" in item.keywords and not on_gpu:
            item.add_marker(pytest.mark.skip(reason="needs a CUDA device and TRITON_INTERPRET=0"))
        if "interpreter" in item.keywords and not INTERPRETED:
            item.add_marker(pytest.mark.skip(reason="runs kernels on CPU tensors: set TRITON_INTERPRET=1"))
        if "any_device" in item.keywords and not (on_gpu or INTERPRETED):
            item.add_marker(pytest.mark.skip(reason="no GPU and TRITON_INTERPRET=0: nothing can run a kernel"))


@pytest.fixture(autouse=True)
def fresh_side_table():
    """Each test starts with an empty kernel side table."""
    from torch_triton_hop import kernel_side_table

    kernel_side_table.reset()
    yield kernel_side_table


@pytest.fixture
def plan_for_a_gpu(monkeypatch):
    """Fusion plans and writes its code as for a GPU (here the interpreter then runs it)."""
    from torch_triton_hop import _compat, _compat_inductor

    monkeypatch.setattr(_compat_inductor, "triton_compiles_for", lambda device: True)
    monkeypatch.setattr(_compat, "is_interpreted_kernel", lambda kernel: False)


@pytest.fixture
def launcher_kinds(monkeypatch):
    """The kernel names inductor makes launchers for, by kind ("static", "triton"); inductor's
    caches are off meanwhile, so every launcher the test needs is made in it."""
    from torch._inductor.runtime import triton_heuristics as th

    made = {"static": [], "triton": []}
    for kind, cls in (("static", th.StaticTritonCompileResult), ("triton", th.TritonCompileResult)):
        def make_launcher(self, _real=cls.make_launcher, _kind=kind):
            made[_kind].append(self.inductor_meta.get("kernel_name", ""))
            return _real(self)
        monkeypatch.setattr(cls, "make_launcher", make_launcher)
    torch._dynamo.reset()
    with torch._inductor.config.patch(force_disable_caches=True):
        yield made
    torch._dynamo.reset()


@pytest.fixture(autouse=True, scope="session")
def triton_scratch_allocator():
    """On a GPU, kernels that make tensor descriptors on the device need scratch memory from
    the allocator a user sets (triton.set_allocator). Inductor sets one when it compiles code
    that needs it, so without this an eager launch would depend on what ran before it."""
    if torch.cuda.is_available() and not INTERPRETED:
        import triton

        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    yield


class _FailedFusionPasses(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.reports = []

    def emit(self, record):
        if "the fusion pass failed" in record.getMessage():
            self.reports.append(logging.Formatter().format(record))


@pytest.fixture(autouse=True)
def no_failed_fusion_pass(request):
    """A failure inside the fusion pass leaves the launch unfused and logs a warning: the
    program's results stay right, so a test comparing them would pass over it. It is a bug all
    the same: no test may pass with one, unless it makes the pass fail on purpose."""
    reports, logger = _FailedFusionPasses(), logging.getLogger("torch_triton_hop._fusion")
    logger.addHandler(reports)
    try:
        yield
    finally:
        logger.removeHandler(reports)
    if reports.reports and request.node.get_closest_marker("fusion_pass_fails") is None:
        pytest.fail("the fusion pass failed (the launch ran unfused):\n" + reports.reports[0][-4000:], pytrace=False)
