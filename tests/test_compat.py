"""Private torch / triton APIs are used only in the compatibility layer; every Note reference resolves."""

import pathlib
import re

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "torch_triton_hop"
PRIVATE = re.compile(r"^\s*(from|import)\s+(torch\._|triton\._|triton\.runtime|triton\.compiler)",
                     re.M)


def test_private_imports_live_in_compat():
    offenders = [p.name for p in PACKAGE.glob("*.py")
                 if not p.name.startswith("_compat") and PRIVATE.search(p.read_text())]
    assert offenders == []


def test_every_note_reference_resolves():
    text = "\n".join(p.read_text() for p in PACKAGE.glob("*.py"))
    defined = set(re.findall(r"# \[Note: ([^\]]+)\]", text))
    used = set(re.findall(r"See \[Note: ([^\]]+)\]", text))
    assert used <= defined, used - defined
