"""The glue of every rule script: a job that cannot write its log fails with one line."""

from __future__ import annotations

import logging
import types

import pytest

from perfcast.rulekit import rule_logging


@pytest.fixture(autouse=True)
def _root_logging():
    """rule_logging configures the root logger (a job is a process of its own); here it is put
    back, so that later tests do not log to this test's captured, closed stderr."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers[:] = handlers
    root.setLevel(level)


def test_a_log_that_cannot_be_opened_fails_the_job_with_one_line(tmp_path, capsys):
    """results/ made read-only (or replaced) under a running workflow: the job's log could not
    be opened and the job died with a traceback from the logging module."""
    (tmp_path / "logs").write_text("a file where the logs folder was\n")
    log = tmp_path / "logs" / "job.log"
    ran = []
    with pytest.raises(SystemExit) as exit_, rule_logging(
            types.SimpleNamespace(log=[str(log)], rule="counters_collect")):
        ran.append(True)
    assert exit_.value.code == 1 and not ran
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"perfcast rule counters_collect: {log}: the log cannot be written: "
                          "Not a directory (expected a results_dir this user may write)")


def test_a_failing_job_logs_its_traceback_and_prints_one_line(tmp_path, capsys):
    log = tmp_path / "job.log"
    with pytest.raises(SystemExit), rule_logging(
            types.SimpleNamespace(log=[str(log)], rule="model_train")):
        raise ValueError("no rows")
    assert "perfcast rule model_train: ValueError: no rows" in capsys.readouterr().err
    assert "Traceback" in log.read_text()


def test_a_job_failing_after_its_log_became_unwritable_prints_one_line(tmp_path, capsys):
    """results/ made read-only while the job ran: its own write failed, and writing that
    failure to the log, now unwritable too, raised a second traceback over the first."""
    log = tmp_path / "job.log"
    with pytest.raises(SystemExit) as exit_, rule_logging(
            types.SimpleNamespace(log=[str(log)], rule="warmup_run")):
        log.unlink()
        log.mkdir()  # the log can no longer be opened for appending
        raise PermissionError(13, "Permission denied", "results/warmup/kvstore/journal.jsonl")
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[-1] == ("perfcast rule warmup_run: PermissionError: [Errno 13] "
                                    "Permission denied: 'results/warmup/kvstore/journal.jsonl'")
