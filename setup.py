from setuptools import find_packages, setup

setup(
    name="torch_triton_hop",
    version="0.1.0",
    description="User-written Triton kernels as first-class citizens of make_fx, torch.export and torch.compile",
    packages=find_packages(include=["torch_triton_hop", "torch_triton_hop.*"]),
    python_requires=">=3.10",
    # Ranges, not pins: GPU users keep the torch they have. Development and CI pin
    # torch==2.13.0 (CPU) through constraints.txt.
    install_requires=["torch>=2.11", "triton>=3.6,<3.10", "numpy"],
    extras_require={"test": ["pytest", "expecttest", "liger-kernel==0.8.5"], "liger": ["liger-kernel==0.8.5"]},
)
