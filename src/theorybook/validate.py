"""Argument validation shared by every chapter module, in torch.optim's style.

Each helper raises ``ValueError`` naming the parameter, its value and the valid range, e.g.
``Invalid beta2: 1.2 (must be in [0, 1))``. They accept Python numbers and tensors (checked elementwise).
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["in_range", "positive", "integer", "even_integer", "one_of"]


def _values(value: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", torch.float64).reshape(-1)
    try:
        return torch.as_tensor(value, dtype=torch.float64).reshape(-1)
    except (TypeError, ValueError, RuntimeError) as err:
        raise ValueError(f"Invalid value {value!r}: not a number or array of numbers") from err


def _show(value: Any) -> str:
    if isinstance(value, torch.Tensor) and value.numel() > 1:
        return f"tensor with range [{value.min().item():g}, {value.max().item():g}]"
    if isinstance(value, torch.Tensor):
        return f"{value.item():g}"
    return repr(value)


def in_range(name: str, value: Any, low: float, high: float, *, low_open: bool = False,
             high_open: bool = True) -> Any:
    """Check ``low ≤ value < high`` (bounds open/closed as given) elementwise; return ``value``."""
    v = _values(value)
    lo_ok = (v > low) if low_open else (v >= low)
    hi_ok = (v < high) if high_open else (v <= high)
    if v.numel() == 0 or not bool((lo_ok & hi_ok & torch.isfinite(v)).all()):
        lb, rb = ("(" if low_open else "["), (")" if high_open else "]")
        raise ValueError(f"Invalid {name}: {_show(value)} (must be in {lb}{low:g}, {high:g}{rb})")
    return value


def positive(name: str, value: Any) -> Any:
    """Check ``value > 0`` (finite) elementwise."""
    v = _values(value)
    if v.numel() == 0 or not bool(((v > 0) & torch.isfinite(v)).all()):
        raise ValueError(f"Invalid {name}: {_show(value)} (must be > 0)")
    return value


def integer(name: str, value: Any, minimum: int = 0) -> int:
    """Check ``value`` is an ``int`` (not bool) with ``value ≥ minimum``; return it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"Invalid {name}: {value!r} (must be an integer ≥ {minimum})")
    return value


def even_integer(name: str, value: Any, minimum: int) -> Any:
    """Check an even integer ≥ ``minimum`` (elementwise for tensors of degrees)."""
    v = _values(value) if not isinstance(value, bool) else torch.tensor([float("nan")])
    if v.numel() == 0 or not bool(((v == v.round()) & (v % 2 == 0) & (v >= minimum)).all()):
        raise ValueError(f"Invalid {name}: {_show(value)} (must be an even integer ≥ {minimum})")
    return value


def one_of(name: str, value: Any, options: tuple[Any, ...]) -> Any:
    """Check ``value in options``."""
    if value not in options:
        raise ValueError(f"Invalid {name}: {value!r} (must be one of {', '.join(map(repr, options))})")
    return value
