"""Argument validation shared by every chapter module, in torch.optim's style.

One policy for the whole library:

* a ``bool`` is never a number (``lr=True`` is rejected), a ``str`` is never a number;
* Python, numpy and 0-d torch integers/floats are numbers (``np.int64(100)`` is a valid step count);
* NaN and ±inf are rejected;
* every message names the parameter, its value and the valid range, e.g. ``Invalid beta2: 1.2 (must be in
  [0, 1))``;
* functions that allocate in proportion to their arguments call :func:`memory_guard` first (budget
  ``THEORYBOOK_MAX_BYTES``, default 2 GiB) and say which argument to lower;
* scalar-only functions call :func:`scalar` and raise ``TypeError`` on a batched tensor.

Helpers return the validated value converted to a plain Python ``float``/``int`` where that is what they
check (:func:`number`, :func:`integer`), or the value unchanged for array checks (:func:`in_range`,
:func:`positive` on tensors).
"""

from __future__ import annotations

import math
import os
from numbers import Integral, Real
from typing import Any

import numpy as np
import torch

__all__ = [
    "DEFAULT_MAX_BYTES",
    "even_integer",
    "finite_tensor",
    "in_range",
    "integer",
    "max_bytes",
    "memory_guard",
    "number",
    "one_of",
    "positive",
    "scalar",
]

DEFAULT_MAX_BYTES = 2 * 1024**3


def _is_bool(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, (list, tuple)) and value:
        try:
            return np.asarray(value).dtype.kind == "b"
        except (ValueError, TypeError):
            return False
    return isinstance(value, (torch.Tensor, np.ndarray)) and value.dtype in (torch.bool, np.bool_)


def _values(name: str, value: Any) -> torch.Tensor:
    """``value`` as a flat float64 CPU tensor, or ``ValueError``/``TypeError`` naming ``name``."""
    if _is_bool(value):
        raise TypeError(f"Invalid {name}: {value!r} (a bool is not a number)")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"Invalid {name}: {value!r} (must be a number, not a string)")
    if isinstance(value, torch.Tensor):
        if value.is_complex():
            raise TypeError(f"Invalid {name}: complex tensor (must be real)")
        return value.detach().to("cpu", torch.float64).reshape(-1)
    try:
        return torch.as_tensor(np.asarray(value, dtype=np.float64)).reshape(-1)
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(f"Invalid {name}: {value!r} (must be a number or an array of numbers)") from err


def _show(value: Any) -> str:
    if isinstance(value, torch.Tensor) and value.numel() > 1:
        v = value.detach().to("cpu", torch.float64)
        return f"tensor of shape {tuple(value.shape)} with range [{v.min().item():g}, {v.max().item():g}]"
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return f"{value.item():g}"
    if isinstance(value, np.ndarray) and value.size > 1:
        return f"array of shape {value.shape}"
    return repr(value)


def _range_text(low: float, high: float, low_open: bool, high_open: bool) -> str:
    lb, rb = ("(" if low_open else "["), (")" if high_open else "]")
    return f"{lb}{low:g}, {high:g}{rb}"


def in_range(name: str, value: Any, low: float, high: float, *, low_open: bool = False,
             high_open: bool = True) -> Any:
    """Check ``low ≤ value < high`` (bounds open/closed as given), finite, elementwise; return ``value``."""
    v = _values(name, value)
    lo_ok = (v > low) if low_open else (v >= low)
    hi_ok = (v < high) if high_open else (v <= high)
    if v.numel() == 0 or not bool((lo_ok & hi_ok & torch.isfinite(v)).all()):
        raise ValueError(f"Invalid {name}: {_show(value)} (must be in {_range_text(low, high, low_open, high_open)})")
    return value


def positive(name: str, value: Any) -> Any:
    """Check ``value > 0`` (finite) elementwise; return ``value``."""
    v = _values(name, value)
    if v.numel() == 0 or not bool(((v > 0) & torch.isfinite(v)).all()):
        raise ValueError(f"Invalid {name}: {_show(value)} (must be finite and > 0)")
    return value


def scalar(name: str, value: Any) -> Any:
    """Refuse a batched (more than one element) tensor/array for a scalar-only parameter with ``TypeError``."""
    if isinstance(value, (torch.Tensor, np.ndarray)) and (value.ndim > 0 and np.prod(value.shape) != 1):
        raise TypeError(f"Invalid {name}: {_show(value)} (must be a scalar; this function does not broadcast)")
    if isinstance(value, (list, tuple)):
        raise TypeError(f"Invalid {name}: {value!r} (must be a scalar, not a sequence)")
    return value


def number(name: str, value: Any, low: float = -math.inf, high: float = math.inf, *, low_open: bool = False,
           high_open: bool = False) -> float:
    """A finite real scalar in the given range, returned as a Python ``float``.

    Accepts Python/numpy/0-d torch reals; rejects bools, strings, NaN, ±inf and batched tensors.
    """
    scalar(name, value)
    v = _values(name, value)
    if v.numel() != 1:
        raise TypeError(f"Invalid {name}: {_show(value)} (must be a scalar)")
    x = float(v[0])
    ok = math.isfinite(x) and ((x > low) if low_open else (x >= low)) and ((x < high) if high_open else (x <= high))
    if not ok:
        if math.isinf(low) and math.isinf(high):
            raise ValueError(f"Invalid {name}: {_show(value)} (must be finite)")
        raise ValueError(f"Invalid {name}: {_show(value)} (must be in {_range_text(low, high, low_open, high_open)})")
    return x


def integer(name: str, value: Any, minimum: int = 0, maximum: int | None = None) -> int:
    """An integer (Python, numpy or 0-d integer tensor; not bool) with ``minimum ≤ value [≤ maximum]``.

    Integral floats such as ``1e3`` are accepted (``steps=1e9`` then meets the memory guard, not a type error);
    returns a Python ``int``.
    """
    if _is_bool(value):
        raise TypeError(f"Invalid {name}: {value!r} (a bool is not an integer)")
    v: Any = value
    if isinstance(v, torch.Tensor):
        if v.numel() != 1:
            raise TypeError(f"Invalid {name}: {_show(value)} (must be a scalar integer)")
        v = v.item()
    if isinstance(v, np.ndarray) and v.size == 1:
        v = v.item()
    if isinstance(v, Integral):
        n = int(v)
    elif isinstance(v, Real) and math.isfinite(float(v)) and float(v).is_integer():
        n = int(float(v))
    else:
        raise (TypeError if not isinstance(v, Real) else ValueError)(
            f"Invalid {name}: {value!r} (must be an integer ≥ {minimum}"
            + (f" and ≤ {maximum})" if maximum is not None else ")"))
    if n < minimum or (maximum is not None and n > maximum):
        rng = f"≥ {minimum}" + (f" and ≤ {maximum}" if maximum is not None else "")
        raise ValueError(f"Invalid {name}: {value!r} (must be an integer {rng})")
    return n


def even_integer(name: str, value: Any, minimum: int) -> Any:
    """Check an even integer ≥ ``minimum`` (elementwise for tensors of degrees); return ``value``."""
    if _is_bool(value):
        raise TypeError(f"Invalid {name}: {value!r} (a bool is not an integer)")
    v = _values(name, value)
    if v.numel() == 0 or not bool((torch.isfinite(v) & (v == v.round()) & (v % 2 == 0) & (v >= minimum)).all()):
        raise ValueError(f"Invalid {name}: {_show(value)} (must be an even integer ≥ {minimum})")
    return value


def one_of(name: str, value: Any, options: tuple[Any, ...]) -> Any:
    """Check ``value in options`` (by equality, and never a bool standing in for 0/1)."""
    if _is_bool(value) and not any(isinstance(o, bool) for o in options):
        raise ValueError(f"Invalid {name}: {value!r} (must be one of {', '.join(map(repr, options))})")
    try:
        ok = value in options
    except (TypeError, RuntimeError):
        ok = False
    if not ok:
        raise ValueError(f"Invalid {name}: {value!r} (must be one of {', '.join(map(repr, options))})")
    return value


def finite_tensor(name: str, value: Any, *, ndim: int | None = None) -> torch.Tensor:
    """A real tensor with only finite entries (and ``ndim`` dimensions if given), promoted to floating point.

    Integer tensors are promoted to float64 so that arithmetic with float constants is not truncated.
    """
    if _is_bool(value):
        raise TypeError(f"Invalid {name}: boolean values are not numbers")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"Invalid {name}: {value!r} (must be a tensor or array of numbers)")
    try:
        t = value if isinstance(value, torch.Tensor) else torch.as_tensor(np.asarray(value, dtype=np.float64))
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(f"Invalid {name}: {value!r} (must be a tensor or array of numbers)") from err
    if t.is_complex():
        raise TypeError(f"Invalid {name}: complex tensor (must be real)")
    if not t.is_floating_point():
        t = t.to(torch.float64)
    if ndim is not None and t.ndim != ndim:
        raise ValueError(f"Invalid {name}: shape {tuple(t.shape)} (must have {ndim} dimension(s))")
    if t.numel() and not bool(torch.isfinite(t).all()):
        raise ValueError(f"Invalid {name}: contains NaN or ±inf (must be finite)")
    return t


def max_bytes() -> int:
    """The allocation budget in bytes: ``THEORYBOOK_MAX_BYTES`` if set (a positive integer), else 2 GiB."""
    raw = os.environ.get("THEORYBOOK_MAX_BYTES")
    if not raw:
        return DEFAULT_MAX_BYTES
    try:
        n = int(float(raw))
    except ValueError as err:
        raise ValueError(f"Invalid THEORYBOOK_MAX_BYTES: {raw!r} (must be a positive integer)") from err
    if n <= 0:
        raise ValueError(f"Invalid THEORYBOOK_MAX_BYTES: {raw!r} (must be a positive integer)")
    return n


def memory_guard(nbytes: float, *, lower: str, budget: int | None = None) -> None:
    """Raise ``ValueError`` when an allocation of about ``nbytes`` would exceed the budget.

    ``lower`` names the argument(s) to reduce, e.g. ``"steps or n"``. Call it *before* allocating, with an
    estimate from the arguments (elements × bytes per element).
    """
    cap = max_bytes() if budget is None else budget
    if not math.isfinite(float(nbytes)) or nbytes > cap:
        raise ValueError(f"Refusing to allocate ~{float(nbytes) / 1024**3:.3g} GiB (budget {cap / 1024**3:.3g} GiB, "
                         f"set by THEORYBOOK_MAX_BYTES): lower {lower}")
