"""The README's Python examples run as written, in order, as one script (a newcomer copies them)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.interpreter

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_readme_examples_run(tmp_path):
    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text(), re.S | re.M)
    assert len(blocks) >= 5
    script = tmp_path / "readme_examples.py"
    script.write_text("\n".join(blocks) + "\nprint('README examples ran')\n")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and "README examples ran" in done.stdout, done.stderr[-4000:]
