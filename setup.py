import pathlib
import re

from setuptools import find_packages, setup

HERE = pathlib.Path(__file__).parent
# One source of truth for the version: torch_triton_hop/_version.py (read, not imported:
# importing the package needs torch).
VERSION = re.search(r'^__version__ = "([^"]+)"', (HERE / "torch_triton_hop" / "_version.py").read_text(), re.M).group(1)

setup(
    name="torch_triton_hop",
    version=VERSION,
    description="User-written Triton kernels as first-class citizens of make_fx, torch.export and torch.compile",
    long_description=(HERE / "README.md").read_text(),
    long_description_content_type="text/markdown",
    license="BSD-3-Clause",
    license_files=["LICENSE"],
    packages=find_packages(include=["torch_triton_hop", "torch_triton_hop.*"]),
    python_requires=">=3.10",
    # Ranges, not pins: GPU users keep the torch they have. Upper bounds too: the package uses
    # private APIs of both (see _compat.py), so an untested future release must not install
    # silently. Development and CI pin torch==2.13.0 (CPU) through constraints.txt.
    install_requires=["torch>=2.11,<2.14", "triton>=3.6,<3.10", "numpy"],
    # transformers: the Llama model of tests/test_llama_liger.py, docs/guides/llama-liger.md and
    # benchmarks/llama_liger.py (5.17.0 is also what the GPU machines have); not a dependency of
    # the package.
    extras_require={
        "test": ["pytest", "expecttest", "liger-kernel==0.8.5", "transformers==5.17.0"],
        "liger": ["liger-kernel==0.8.5"],
        "models": ["liger-kernel==0.8.5", "transformers==5.17.0"],
        "bench": ["matplotlib", "liger-kernel==0.8.5", "transformers==5.17.0"],
        "docs": ["sphinx==8.1.3", "myst-parser==4.0.1"],
    },
    classifiers=[
        "Development Status :: 3 - Alpha",
        "Intended Audience :: Developers",
        "Intended Audience :: Science/Research",
        "Operating System :: POSIX :: Linux",
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Topic :: Software Development :: Compilers",
    ],
)
