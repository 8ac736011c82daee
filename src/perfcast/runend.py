"""The last words of a run on the console: its summary, whether the run made jobs, had nothing
to do or failed.

The workflow's handlers (``workflow/Snakefile``) call these: after a run that made jobs, and
after a rerun with nothing to do, :func:`summary_text` prints ``summary.md`` (rule
``run_summary``), saying whether this run wrote it or it is of the results already there; after
a failure, :func:`failure_text` names each job that failed with its log and says how many of
each stage's outputs exist. Only the standard library is imported: a handler runs once Snakemake
is done and must not add seconds to the run.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class FailedJob:
    """A job Snakemake reported as failed.

    Parameters
    ----------
    rule : str
        its rule.
    wildcards : str
        its wildcards as Snakemake writes them (``gen=g2, bench=mcf``; empty when none).
    logs : tuple of str
        the log files of the job (``log:``; empty when the rule has none).
    """

    rule: str
    wildcards: str
    logs: tuple[str, ...]


_ERROR = re.compile(r"^Error in rule (\S+?):\s*$")
_FIELD = re.compile(r"^\s+(\w+): (.*)$")
_LOG_HINT = re.compile(r"\s*\(check log file.*$")


def failed_jobs(lines: Iterable[str]) -> list[FailedJob]:
    """The jobs a Snakemake log reports as failed (its ``Error in rule`` blocks), each once.

    Parameters
    ----------
    lines : iterable of str
        the lines of Snakemake's log of the run.

    Returns
    -------
    list of FailedJob
        in the order the log names them.

    Examples
    --------
    >>> log = '''Error in rule model_train:
    ...     message: None
    ...     jobid: 5
    ...     output: results/model/model.parquet
    ...     log: results/logs/model/train.log (check log file(s) for error details)
    ... Error in rule counters_collect:
    ...     jobid: 7
    ...     wildcards: gen=g2, bench=mcf
    ... Exiting because a job execution failed.'''
    >>> for job in failed_jobs(log.splitlines()):
    ...     print(job.rule, repr(job.wildcards), job.logs)
    model_train '' ('results/logs/model/train.log',)
    counters_collect 'gen=g2, bench=mcf' ()
    """
    jobs: list[FailedJob] = []
    current: dict | None = None

    def close() -> None:
        if current is not None:
            job = FailedJob(current["rule"], current.get("wildcards", ""),
                            tuple(current.get("log", "").split()))
            if job not in jobs:
                jobs.append(job)

    for line in lines:
        line = line.rstrip("\n")
        head = _ERROR.match(line)
        if head:
            close()
            current = {"rule": head.group(1)}
            continue
        field = _FIELD.match(line) if current is not None else None
        if field:
            key, value = field.groups()
            if key in ("wildcards", "log"):
                current[key] = _LOG_HINT.sub("", value).strip()
        elif current is not None and not line.startswith((" ", "\t")):
            close()
            current = None
    close()
    return jobs


def stage_outputs(stages: Mapping[str, Sequence[str]]) -> list[str]:
    """Per stage, how many of its outputs exist (one line each; stages without outputs left out).

    Parameters
    ----------
    stages : mapping of str to sequence of str
        each stage's outputs (its targets in ``rule all``).

    Returns
    -------
    list of str
        ``"counters: 4 of 4 outputs"``, ..., ``complete`` or ``incomplete`` beside each.

    Examples
    --------
    >>> stage_outputs({"sweep": ["/nonexistent/a", "/nonexistent/b"], "warmup": []})
    ['  sweep: 0 of 2 outputs (incomplete)']
    """
    lines = []
    for stage, paths in stages.items():
        paths = list(dict.fromkeys(str(p) for p in paths))
        if not paths:
            continue
        made = sum(Path(p).exists() for p in paths)
        state = "complete" if made == len(paths) else "incomplete"
        lines.append(f"  {stage}: {made} of {len(paths)} outputs ({state})")
    return lines


def summary_text(summary_md: str | Path, started: float | None) -> str:
    """The summary to print at the end of a successful run, saying which results it is of.

    Parameters
    ----------
    summary_md : str or Path
        the run summary (``results/summary.md``).
    started : float or None
        when this run's jobs started (``time.time()``); None: the run had nothing to do.

    Returns
    -------
    str
        the summary under a line saying whether this run wrote it or it is of the results
        already there (with when it was written); a line saying there is none when the file
        does not exist (a run of targets that leave the summary out).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     md = Path(tmp, "summary.md")
    ...     _ = md.write_text("# Run summary\\n")
    ...     print(summary_text(md, started=None).splitlines()[1].split(" (written")[0])
    ...     print(summary_text(md, started=0.0).splitlines()[1])
    Nothing to be done: the summary of the results already there
    the summary of this run
    """
    path = Path(summary_md)
    if not path.is_file():
        return f"\nNo run summary: {path} is not made by the targets of this run.\n"
    written = path.stat().st_mtime
    if started is not None and written >= started:
        head = "the summary of this run"
    else:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(written))
        head = (("Nothing to be done: " if started is None else "")
                + f"the summary of the results already there (written {when})")
    return f"\n{head}\n{path}:\n\n{path.read_text(errors='replace')}"


def failure_text(logfiles: Iterable[str | Path], stages: Mapping[str, Sequence[str]],
                 summary_md: str | Path) -> str:
    """What to print when a run fails: the jobs that failed with their logs, and what each stage
    has made.

    Parameters
    ----------
    logfiles : iterable of str or Path
        Snakemake's logs of the run (what it passes to ``onerror``).
    stages : mapping of str to sequence of str
        each stage's outputs (see :func:`stage_outputs`).
    summary_md : str or Path
        the run summary: named when an earlier run left one (it is not of this run's results).

    Returns
    -------
    str
        the text, ending with a newline.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     log = Path(tmp, "run.log")
    ...     _ = log.write_text("Error in rule sweep_run:\\n    jobid: 3\\n"
    ...                        "    log: results/logs/sweep/run.log (check log file(s) ...)\\n")
    ...     print(failure_text([log], {"sweep": [log]}, Path(tmp, "summary.md")), end="")
    <BLANKLINE>
    The run failed. Failed jobs (their logs say why):
      sweep_run: results/logs/sweep/run.log
    Outputs of each stage now:
      sweep: 1 of 1 outputs (complete)
    """
    jobs: list[FailedJob] = []
    for logfile in logfiles:
        try:
            with open(logfile, errors="replace") as f:
                jobs += [j for j in failed_jobs(f) if j not in jobs]
        except OSError:
            continue
    lines = ["", "The run failed. Failed jobs (their logs say why):"]
    for job in jobs:
        name = job.rule + (f" ({job.wildcards})" if job.wildcards else "")
        lines.append(f"  {name}: {', '.join(job.logs) or 'no log of its own: see above'}")
    if not jobs:
        lines.append("  none named in Snakemake's log: see the error above")
    lines.append("Outputs of each stage now:")
    lines += stage_outputs(stages) or ["  none"]
    if Path(summary_md).is_file():
        lines.append(f"{summary_md} is of an earlier run, not of these results.")
    return "\n".join(lines) + "\n"


def summary_when_nothing_to_do(workflow: Any, summary_md: str | Path,
                               started: Callable[[], float | None]) -> None:
    """Make ``workflow.execute`` end a run that had nothing to do with the summary of the
    results already there.

    Parameters
    ----------
    workflow : snakemake.workflow.Workflow
        the workflow (the Snakefile's ``workflow``).
    summary_md : str or Path
        the run summary to print.
    started : callable
        when this run's jobs started (None while none has: what ``onstart`` records).

    Notes
    -----
    Snakemake calls neither ``onstart`` nor ``onsuccess`` when a run has nothing to do ("Nothing
    to be done"), so a rerun would end without the summary. Only the main process of a real run
    prints: not a dry run, not a job's own process on a cluster, not with ``--no-hooks``; and
    not when the workflow is imported as a module, whose handlers Snakemake ignores too. The
    wrapper is defined here, not in the workflow: Snakemake names the workflow file of the
    innermost workflow frame an error passes through, which must stay its own.
    """
    try:
        if not workflow.modifier.is_main_snakefile():
            return  # imported as a module: the importing workflow's handlers speak, as Snakemake's
        execute = workflow.execute
    except AttributeError:  # a Snakemake without these internals: the handlers alone
        return

    @functools.wraps(execute)
    def run(*args: Any, **kwargs: Any) -> Any:
        done = execute(*args, **kwargs)
        try:
            quiet = (started() is not None or not workflow.is_main_process or workflow.dryrun
                     or workflow.execution_settings.no_hooks)
        except AttributeError:
            quiet = True
        if not quiet:
            print(summary_text(summary_md, None))
        return done

    workflow.execute = run


def unwritable_results_as_error(workflow: Any, results_dir: str | Path) -> None:
    """Make ``workflow.execute`` end a run whose results became unwritable part-way with one
    line naming the file, not a traceback.

    Parameters
    ----------
    workflow : snakemake.workflow.Workflow
        the workflow (the Snakefile's ``workflow``).
    results_dir : str or Path
        the results folder (``results_dir``), named in the message.

    Notes
    -----
    The ``onstart`` check (:func:`perfcast.settings.require_writable_dir`) refuses a results
    folder that cannot be written when the run starts. One made read-only while jobs run fails
    a job's benchmark file, and Snakemake's removal of that job's outputs then raises a
    ``PermissionError`` out of ``workflow.execute``, past the ``onerror`` handler, which the
    command line prints as a traceback. It is raised again here as a ``WorkflowError``, which
    Snakemake prints as one message; the outputs already written are left as they are.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> def execute():
    ...     raise PermissionError(13, "Permission denied", "results/model/model.parquet")
    >>> wf = SimpleNamespace(execute=execute)
    >>> unwritable_results_as_error(wf, "results")
    >>> try:
    ...     wf.execute()
    ... except Exception as exc:
    ...     print(type(exc).__name__, str(exc).split(":")[0])
    WorkflowError results/model/model.parquet
    """
    from snakemake.exceptions import WorkflowError

    execute = workflow.execute

    @functools.wraps(execute)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return execute(*args, **kwargs)
        except PermissionError as exc:
            raise WorkflowError(
                f"{exc.filename}: cannot be written or removed ({exc.strerror}): a folder of "
                f"the results ({results_dir}) was made read-only while the run went on; the "
                "outputs already written are kept. Make it writable and run again") from None

    workflow.execute = run
