"""Errors that name the file, the row and what was expected."""

from __future__ import annotations

from pathlib import Path

#: the most characters of a message (or of what was expected) an error carries: a quoted line
#: of a damaged file may be megabytes long (a file without newlines), and the error shows its
#: start and end only
MAX_MESSAGE = 600


def bounded(text: str, most: int = MAX_MESSAGE) -> str:
    """``text`` cut to about ``most`` characters: its start and end, saying how much was left out.

    Parameters
    ----------
    text : str
        a message, possibly quoting a whole line of an input.
    most : int, default=MAX_MESSAGE
        the length above which it is cut.

    Returns
    -------
    str
        ``text`` itself when short enough, else its first and last characters around
        ``[... N characters left out ...]``.

    Examples
    --------
    >>> bounded("malformed line 'a" + "x" * 1000 + "b'", 60)
    "malformed line 'axxxxxxxxxxxxxxx[... 976 characters left out ...]xxxxxxxxxb'"
    """
    if len(text) <= most:
        return text
    head, tail = most * 3 // 4 - 13, most // 4 - 4
    left = len(text) - head - tail
    return f"{text[:head]}[... {left} characters left out ...]{text[len(text) - tail:]}"


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
        message = bounded(message)
        expected = None if expected is None else bounded(expected)
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
