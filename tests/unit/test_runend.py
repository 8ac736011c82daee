"""The run's last words (perfcast.runend): the jobs a failed run names with their logs, what
each stage has made, and which results a printed summary is of."""

from __future__ import annotations

import os

from perfcast.runend import failed_jobs, failure_text, stage_outputs, summary_text

#: Snakemake 9's log of a run with two failed jobs, each reported twice (as it does on the
#: console and again at the end of the log)
LOG = """\
[Sat Nov 28 03:24:27 2026]
Error in rule counters_postprocess:
    message: None
    jobid: 4
    input: results/raw/g3/lbm/group0.csv
    output: results/counters/g3/lbm.parquet
    log: results/logs/postprocess/g3/lbm.log (check log file(s) for error details)
    wildcards: gen=g3, bench=lbm
Error in rule model_train:
    jobid: 9
    log: results/logs/model/train.log (check log file(s) for error details)
    shell:
        python train.py
        (command exited with non-zero exit code)
Exiting because a job execution failed. Look above for error messages
Error in rule counters_postprocess:
    message: None
    jobid: 4
    log: results/logs/postprocess/g3/lbm.log (check log file(s) for error details)
    wildcards: gen=g3, bench=lbm
WorkflowError:
At least one job did not complete successfully.
"""


def test_each_failed_job_is_named_once_with_its_wildcards_and_log():
    jobs = failed_jobs(LOG.splitlines(keepends=True))
    assert [(j.rule, j.wildcards, j.logs) for j in jobs] == [
        ("counters_postprocess", "gen=g3, bench=lbm", ("results/logs/postprocess/g3/lbm.log",)),
        ("model_train", "", ("results/logs/model/train.log",)),
    ]


def test_failure_text_names_the_jobs_their_logs_and_each_stages_outputs(tmp_path):
    log = tmp_path / "snakemake.log"
    log.write_text(LOG)
    made = tmp_path / "g2.parquet"
    made.write_text("")
    summary_md = tmp_path / "summary.md"
    summary_md.write_text("# perfcast run summary\n")
    text = failure_text([log, tmp_path / "absent.log"],
                        {"counters": [made, tmp_path / "g3.parquet"], "sweep": [made],
                         "warmup": []}, summary_md)
    assert text.splitlines() == [
        "",
        "The run failed. Failed jobs (their logs say why):",
        "  counters_postprocess (gen=g3, bench=lbm): results/logs/postprocess/g3/lbm.log",
        "  model_train: results/logs/model/train.log",
        "Outputs of each stage now:",
        "  counters: 1 of 2 outputs (incomplete)",
        "  sweep: 1 of 1 outputs (complete)",
        f"{summary_md} is of an earlier run, not of these results.",
    ]


def test_a_failure_before_any_job_says_so():
    text = failure_text([], {}, "/nonexistent/summary.md")
    assert "none named in Snakemake's log" in text and "  none" in text


def test_stage_outputs_counts_a_path_once():
    assert stage_outputs({"model": ["/nonexistent/a", "/nonexistent/a"]}) == [
        "  model: 0 of 1 outputs (incomplete)"]


def test_summary_says_which_results_it_is_of(tmp_path):
    md = tmp_path / "summary.md"
    md.write_text("# perfcast run summary\n\nbody\n")
    os.utime(md, (1000.0, 1000.0))
    fresh = summary_text(md, started=999.0)
    assert fresh.splitlines()[1] == "the summary of this run"
    assert fresh.endswith("# perfcast run summary\n\nbody\n")
    older = summary_text(md, started=1001.0)  # jobs ran, but not the summary's
    assert older.splitlines()[1].startswith("the summary of the results already there")
    rerun = summary_text(md, started=None)  # nothing to do
    assert rerun.splitlines()[1].startswith(
        "Nothing to be done: the summary of the results already there (written ")
    assert rerun.endswith("body\n")


def test_no_summary_is_said_not_printed(tmp_path):
    assert "No run summary" in summary_text(tmp_path / "summary.md", started=None)
