"""Errors that name the file, the row and what was expected."""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """Bad input: says which file, which row (1-based line) and what was expected."""

    def __init__(
        self,
        path: str | Path | None,
        message: str,
        *,
        row: int | None = None,
        expected: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.row = row
        self.expected = expected
        where = self.path or "<input>"
        if row is not None:
            where += f", line {row}"
        text = f"{where}: {message}"
        if expected:
            text += f" (expected {expected})"
        super().__init__(text)


class HostCapabilityError(RuntimeError):
    """The host cannot do what was asked (no hardware PMU, no cgroup controller, not root...)."""
