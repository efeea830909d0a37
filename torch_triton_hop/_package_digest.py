"""A digest of this package's own source, for the compile caches' keys.

# [Note: Compiled artifacts carry the package's digest]
# TL;DR: inductor's FX-graph cache and AOTAutograd's cache key a compiled graph on torch's
# source, the graph's code and the configuration, not on the code that lowered our HOPs.
# A graph that holds one of our launches therefore gets `package_digest()` added to both
# keys (_compat_inductor.add_to_graph_cache_keys), so an upgraded or edited
# torch_triton_hop compiles afresh, while an unchanged one still hits in a new process.
# Context: issue 15, part 2. Before, a copy of the package with one line appended reused
# the graph the old code had compiled (1 hit). Graphs without our launches keep their keys.
# The user's inductor configuration (cache_key_tag, custom passes) is left alone.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
from typing import Any

__all__ = ["package_digest"]


@functools.lru_cache(maxsize=None)
def package_digest() -> str:
    """sha256 of every .py file of the package (relative path and bytes), computed once.

    About 1 ms for the package's ~20 files (0.35 ms with the files in the OS cache); it
    runs when the first graph holding our launches is keyed. Read through
    importlib.resources, so a zipped install is hashed too.
    """
    root = importlib.resources.files(__package__)
    digest = hashlib.sha256()
    for path, data in sorted(_python_sources(root, "")):
        digest.update(path.encode())
        digest.update(b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()[:32]


def _python_sources(folder: Any, prefix: str) -> list[tuple[str, bytes]]:
    sources = []
    for entry in folder.iterdir():
        if entry.is_dir():
            if entry.name != "__pycache__":
                sources.extend(_python_sources(entry, f"{prefix}{entry.name}/"))
        elif entry.name.endswith(".py"):
            sources.append((prefix + entry.name, entry.read_bytes()))
    return sources
