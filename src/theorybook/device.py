"""One place that picks the compute device and the dtype policy.

* ``default_device()`` is ``cuda`` when a GPU is visible, else ``cpu``; ``THEORYBOOK_DEVICE`` overrides it.
* Theory checks run in ``float64`` (``THEORY_DTYPE``): rates such as β₂^{1/(2(k−2))} are read off trajectories
  that underflow float32 long before the asymptotics show. Large-scale runs may pass ``float32`` explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

__all__ = [
    "THEORY_DTYPE", "default_device", "one_thread", "resolve_device", "resolve_dtype", "seed_everything", "to_numpy",
]

THEORY_DTYPE = torch.float64


def default_device() -> torch.device:
    """``cuda`` if available (or the ``THEORYBOOK_DEVICE`` environment variable), else ``cpu``."""
    forced = os.environ.get("THEORYBOOK_DEVICE")
    if forced:
        return torch.device(forced)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def to_numpy(x: Any) -> Any:
    """The one way a tensor leaves torch: detach, move to the CPU, convert to a numpy array.

    Works for tensors on any device and with ``requires_grad``; a 0-d tensor becomes a 0-d array. Non-tensors
    (numpy arrays, Python numbers, lists) pass through ``numpy.asarray``. Tuples/lists of tensors are converted
    element by element into a list.
    """
    import numpy as np

    if isinstance(x, torch.Tensor):
        t = x.detach()
        if t.dtype == torch.bfloat16 or t.dtype == torch.float16:
            t = t.float()
        return t.cpu().numpy()
    if isinstance(x, (list, tuple)) and any(isinstance(e, torch.Tensor) for e in x):
        return [to_numpy(e) for e in x]
    return np.asarray(x)


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` → :func:`default_device`; anything else → ``torch.device(device)`` (``ValueError`` if invalid)."""
    if device is None:
        return default_device()
    if isinstance(device, bool) or not isinstance(device, (str, torch.device)):
        raise TypeError(f"Invalid device: {device!r} (must be a str such as 'cpu' or 'cuda', or a torch.device)")
    try:
        return torch.device(device)
    except RuntimeError as err:
        raise ValueError(f"Invalid device: {device!r} ({err})") from err


def resolve_dtype(dtype: torch.dtype | None) -> torch.dtype:
    """``None`` → ``THEORY_DTYPE`` (float64); only floating dtypes are accepted."""
    if dtype is None:
        return THEORY_DTYPE
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"Invalid dtype: {dtype!r} (must be a floating torch dtype, e.g. torch.float64)")
    return dtype


def seed_everything(seed: int) -> torch.Generator:
    """Seed torch (CPU and CUDA) and numpy; return a CPU ``torch.Generator`` seeded with ``seed``."""
    import numpy as np

    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"Invalid seed: {seed!r} (must be an int ≥ 0)")
    torch.manual_seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - seeds legacy global-state users too
    return torch.Generator().manual_seed(seed)


@contextmanager
def one_thread(device: str | torch.device = "cpu") -> Iterator[None]:
    """One torch intra-op thread on CPU for the duration, then the previous setting back.

    For many small ops (≲ 10⁵ numbers each) a second thread only adds synchronisation; on a busy 2-core machine
    it made a 10×400 matmul 200× slower and a batched LU 40× slower. A no-op on other devices.
    """
    if torch.device(device).type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
