"""Executable Theory: the library the book's chapters import.

Shared pieces: :mod:`~theorybook.check` (verdict tables), :mod:`~theorybook.device` (device and dtype policy),
:mod:`~theorybook.plotting` (one figure style), :mod:`~theorybook.sweep` (batched hyper-parameter sweeps),
:mod:`~theorybook.validate` (argument checks). One module or subpackage per paper/chapter.
"""

__version__ = "0.1.0"
