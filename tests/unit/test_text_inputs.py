"""Text inputs read once, line by line, within bounds (:func:`perfcast.io.text_lines`): a bad
byte reported at its line and column, binary data on stdin refused naming its line, a line too
long refused before it fills memory, an error quoting a bounded excerpt, a pipe read once."""

from __future__ import annotations

from perfcast.errors import MAX_MESSAGE, InputError


def test_an_input_error_bounds_its_message_and_what_it_expected():
    exc = InputError("t.csv", "malformed line " + repr("y" * 10**6), row=7,
                     expected="z" * 10**6)
    assert str(exc).startswith("t.csv, line 7: malformed line 'yyy")
    assert len(str(exc)) < 2 * MAX_MESSAGE + 100
