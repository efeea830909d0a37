"""Sphinx configuration: MyST Markdown guides, an API reference from the docstrings.

Build (warnings are errors): ``sphinx-build -W --keep-going -b html docs docs/_build/html``.
"""

import os
import sys

# autodoc imports the package; kernels in docstrings need no GPU on the interpreter.
os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
sys.path.insert(0, os.path.abspath(".."))

import torch_triton_hop  # noqa: E402

project = "torch_triton_hop"
author = "torch_triton_hop contributors"
copyright = "torch_triton_hop contributors"
release = torch_triton_hop.__version__
version = release

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "requirements.txt"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "alabaster"
html_static_path = ["_static"]
html_title = f"torch_triton_hop {release}"
