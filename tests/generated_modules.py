"""Python modules written by the fuzzers (generated kernels and programs), imported afresh."""

import importlib
import os
import sys
from types import ModuleType


def import_generated(directory: str, module_name: str, text: str) -> ModuleType:
    """Writes `text` to `directory/module_name.py` and imports it, a module of that name imported
    before forgotten: triton's JIT (and the fusion's source rewrite) read a kernel's source with
    inspect, so generated kernels live in real files."""
    with open(os.path.join(directory, module_name + ".py"), "w") as f:
        f.write(text)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    sys.modules.pop(module_name, None)
    importlib.invalidate_caches()
    return importlib.import_module(module_name)
