"""Glue for rule scripts: log to the rule's log file, fail with one clear line."""

from __future__ import annotations

import contextlib
import logging
import sys
import traceback
from collections.abc import Iterator
from typing import Any, TypeVar

from perfcast.process import Terminated, exit_for
from perfcast.settings import build

T = TypeVar("T")


def rule_settings(snakemake: Any, cls: type[T]) -> T:
    """The job's settings: ``cls`` (a frozen settings dataclass) built from the rule's one
    ``settings`` param, the plain dict :func:`perfcast.settings.as_params` made of the same
    object in the rule's input function. Every rule script receives its settings this way and
    hands the object whole to the package."""
    return build(cls, snakemake.params.settings, where=f"rule {snakemake.rule}: settings")


@contextlib.contextmanager
def rule_logging(snakemake: Any) -> Iterator[logging.Logger]:
    """Log to ``snakemake.log[0]``; an exception is logged with its traceback, its message goes
    to stderr (Snakemake shows it) and the job fails without writing outputs. A log that cannot
    be opened (its folder made read-only under a running workflow) fails the job with one line
    naming it."""
    log_path = snakemake.log[0] if len(snakemake.log) else None
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_path:
        try:
            handlers.append(logging.FileHandler(log_path, mode="w"))
        except OSError as exc:  # results_dir made read-only (or removed) under a running workflow
            print(f"perfcast rule {snakemake.rule}: {log_path}: the log cannot be written: "
                  f"{exc.strerror or exc} (expected a results_dir this user may write)",
                  file=sys.stderr)
            sys.exit(1)
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logger = logging.getLogger(f"perfcast.{snakemake.rule}")
    try:
        yield logger
    except Terminated as exc:  # SIGTERM / SIGHUP: the cleanup ran; end by the signal
        print(f"perfcast rule {snakemake.rule}: {exc}", file=sys.stderr)
        exit_for(exc)
    except Exception as exc:
        logger.debug("".join(traceback.format_exception(exc)))
        if log_path:
            with contextlib.suppress(OSError):  # a read-only results_dir: stderr still says it
                with open(log_path, "a") as fh:
                    fh.write("".join(traceback.format_exception(exc)))
        print(f"perfcast rule {snakemake.rule}: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
