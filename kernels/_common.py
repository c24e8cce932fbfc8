"""Pieces every fused kernel shares: IEEE division, the launch block size, and the ahead-of-time PTX compile.

Import it only where Triton is installed (the kernel modules). Under ``TRITON_INTERPRET=1`` it must be
(re)imported after the variable is set, like the kernel modules themselves (tests/test_kernels.py does).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

__all__ = ["_div", "block_size", "compile_ptx_for"]


@triton.jit
def _div(a, b):
    """IEEE a / b (float32 ``/`` is approximate on GPUs; float64 ``/`` is already IEEE)."""
    if a.dtype == tl.float32:
        r = tl.div_rn(a, b)
    else:
        r = a / b
    return r


def block_size(n_cells: int, device: torch.device) -> int:
    """Cells per program: 128 on a GPU; on CPU (the interpreter runs one numpy program per block) few large
    blocks."""
    if device.type == "cpu":
        return min(triton.next_power_of_2(max(n_cells, 1)), 1 << 16)
    return 128


def compile_ptx_for(kernel, signature: dict[str, str], constexprs: dict, arch: int) -> str:
    """PTX of ``kernel`` compiled ahead of time for CUDA ``sm_<arch>`` with fp fusion off (needs Triton's NVIDIA
    backend, not a GPU; not available under ``TRITON_INTERPRET=1``, where kernels are interpreted)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig = {**signature, **{name: "constexpr" for name in constexprs}}
    src = ASTSource(fn=kernel, signature=sig, constexprs=constexprs)
    compiled = triton.compile(src, target=GPUTarget("cuda", arch, 32), options={"enable_fp_fusion": False})
    return compiled.asm["ptx"]
