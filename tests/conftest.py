"""Tests run on CPU under the Triton interpreter; GPU tests are marked and skipped without one."""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported anywhere

import pytest  # noqa: E402
import torch  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (runs on the device machine)")


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1":
        return
    skip = pytest.mark.skip(reason="needs a CUDA device and TRITON_INTERPRET=0")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def fresh_side_table():
    """Each test starts with an empty kernel side table."""
    from torch_triton_hop import kernel_side_table

    kernel_side_table.reset()
    yield kernel_side_table
