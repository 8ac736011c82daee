"""``perfcast`` command line: one sub-command group per stage, JSON or files out.

Each stage module under :mod:`perfcast.cli` exposes ``register(subparsers)``; a sub-command sets
``func(args) -> int``. Bad input (``InputError``) is reported as one clear line and exit code 2.

Building the parser must stay cheap (``perfcast --version`` and ``--help`` in well under a second):
a stage module imports at module level only the standard library and :mod:`perfcast.errors`;
numpy, pandas, scipy, numba and the stage's own modules are imported inside the ``func`` that
needs them. ``tests/unit/test_cli_startup.py`` holds this.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys

from perfcast import __version__
from perfcast.errors import HostCapabilityError, InputError
from perfcast.process import Terminated, exit_for

STAGES = ["counters", "warmup", "sensitivity", "sweep"]


def plain(text: str) -> str:
    """``text`` without reStructuredText markup (``x``, :func:`x`): docstrings written for the
    documentation read as plain words in ``--help``."""
    import re

    return re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text).replace("``", "")


@functools.cache
def build_parser() -> argparse.ArgumentParser:
    """The ``perfcast`` parser, built once per process (``parse_args`` leaves it as it was: no
    sub-command mutates a default), so that a program calling :func:`main` many times does not
    rebuild its hundred options each time."""
    parser = argparse.ArgumentParser(prog="perfcast", description=plain(__doc__.splitlines()[0]))
    parser.add_argument("--version", action="version", version=f"perfcast {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for stage in STAGES:
        importlib.import_module(f"perfcast.cli.{stage}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = int(args.func(args) or 0)
        # what is still buffered fails here, where it is reported, not at exit (status 120)
        sys.stdout.flush()
        return code
    except (InputError, HostCapabilityError) as exc:
        print(f"perfcast {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except Terminated as exc:  # SIGTERM / SIGHUP in a restricted run: cleaned up, now end
        print(f"perfcast {args.command}: {exc}", file=sys.stderr)
        exit_for(exc)
        return 128 + exc.signum
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as Unix tools do
        _drop_stdout()
        return 141
    except OSError as exc:  # stdout on a full disk or a failing device: one line, not a trace
        if exc.filename is not None:
            raise
        _drop_stdout()
        print(f"perfcast {args.command}: error: cannot write its output: "
              f"{exc.strerror or exc}", file=sys.stderr)
        return 2


def require_new_output(output: str, inputs: list[str], *, flag: str = "-o") -> None:
    """``output`` is none of ``inputs`` (the same file by any path): writing it would replace
    an input the command is reading.

    Parameters
    ----------
    output : str
        the output path given.
    inputs : list of str
        the input paths the command reads.
    flag : str, default="-o"
        the option that gave ``output``, named in the error.

    Raises
    ------
    InputError
        naming the flag and the input it would overwrite.
    """
    import os

    out = os.path.realpath(output)
    for given in inputs:
        if os.path.realpath(given) == out:
            raise InputError(None, f"{flag} {output!r} is the input {given!r}: writing it would "
                             "overwrite what is read", expected="an output path of its own")


def _drop_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered for it is discarded, so the flush at
    exit does not fail a second time."""
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
