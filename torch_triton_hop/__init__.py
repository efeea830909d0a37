"""torch_triton_hop: user-written Triton kernels as first-class citizens of make_fx,
torch.export and torch.compile.

    >>> from torch_triton_hop import wrap_triton      # doctest: +SKIP
    >>> @wrap_triton
    ... @triton.jit
    ... def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr): ...
"""

from ._version import __version__
from ._analysis import explain, identify_accessed_tensors, identify_mutated_tensors
from ._hopifier import TracingTritonHOPifier, TritonHOPifier
from ._hops import check_kernels, triton_kernel_wrapper_functional, triton_kernel_wrapper_mutation
from ._side_table import allow_kernel_modules, kernel_side_table
from ._sharding import register_sharding
from ._wrap import wrap_triton
from . import _compat, _compat_inductor, _distributed, _hops, _inductor_bridge, config
# At import, before any interpreter run: see [Note: Interpreter patches that outlive a run].
from . import _compat_ttir  # noqa: F401,E402

# Inductor learns about our HOPs the first time a launch is functionalized while it is loaded;
# on torch 2.11, AOTAutograd gets a backported fix for backward writes to forward inputs.
_hops.functionalization_hooks.append(_inductor_bridge.register_if_inductor_loaded)
_hops.functionalization_hooks.append(_compat.backport_backward_writes_to_leaf_inputs)
# Launches on DTensors follow the kernel's sharding rule once DTensor exists. See [Note: Kernels called on DTensors].
_compat.when_imported("torch.distributed.tensor", _distributed.register)
# Inductor's launchers of our kernels, warm caches included: static where inductor can make
# them so, and reading a constexpr inf / nan where triton's.
_compat.when_imported("torch._inductor.runtime.triton_heuristics", _compat_inductor.install_static_launchers)
_compat.when_imported("torch._inductor.runtime.triton_heuristics",
                      _compat_inductor.install_launcher_names_for_nonfinite_constants)

__all__ = [
    "wrap_triton",
    "kernel_side_table",
    "triton_kernel_wrapper_mutation",
    "triton_kernel_wrapper_functional",
    "TritonHOPifier",
    "TracingTritonHOPifier",
    "identify_mutated_tensors",
    "identify_accessed_tensors",
    "explain",
    "allow_kernel_modules",
    "check_kernels",
    "config",
    "register_sharding",
]

for _name in ("TritonHOPifier", "TracingTritonHOPifier", "identify_mutated_tensors", "identify_accessed_tensors",
              "explain", "allow_kernel_modules", "check_kernels", "register_sharding"):
    globals()[_name].__module__ = __name__
del _name
