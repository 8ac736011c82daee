"""The workflow's fetch rules for the paper's measurements: download from a local HTTP server,
checksum, conversion and replay through Snakemake; offline and local copies; the default target
needs no download. (``arcp_zip``, ``arcp_csv``, ``server`` and ``closed_url`` are fixtures of
``tests/conftest.py``.)"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from perfcast.sensitivity import arcp
from perfcast.settings import schema_default
from perfcast.summary import fmt

#: the checksum the downloaded zip must have (the schema's default)
SHA256 = schema_default("sensitivity", "replay.source.sha256")

TABLE = "results/data/arcp/arcp_measurements.csv"
RAW = "results/data/arcp/raw_data.zip"
EVAL = "results/paper/sensitivity_eval.parquet"


def _config(source: dict) -> dict:
    return {
        "seed": 7,
        "sensitivity": {
            "programs": {},
            "replay": {"source": source, "epsilons": [0.5], "programs": ["Data Serving"],
                       "lhs_repeats": 1},
        },
    }


def _jobs(proc) -> str:
    return proc.stdout + proc.stderr


def test_workflow_downloads_converts_and_replays(tmp_path, snakemake_run, server, arcp_csv):
    snakemake_run(tmp_path, _config({"url": server.url}), targets=[TABLE, EVAL])
    assert (tmp_path / TABLE).read_bytes() == arcp_csv.read_bytes()
    assert arcp.sha256_of(tmp_path / RAW) == SHA256
    assert server.requests == ["/raw data.zip"]
    ev = pd.read_parquet(tmp_path / EVAL)
    assert set(ev["program"]) == {"Data Serving"}
    assert (tmp_path / "results/logs/sensitivity/arcp_fetch.log").exists()


def test_workflow_corrupted_download_fails_and_leaves_nothing(tmp_path, snakemake_run, server):
    proc = snakemake_run(tmp_path, _config({"url": server.bad_url}), targets=[TABLE],
                         check=False)
    out = _jobs(proc)
    assert proc.returncode != 0
    assert "sensitivity_arcp_fetch" in out and "checksum mismatch" in out
    assert server.bad_url in out and SHA256 in out
    assert not (tmp_path / RAW).exists() and not (tmp_path / TABLE).exists()
    assert not list((tmp_path / "results/data/arcp").glob("*.zip*"))


def test_workflow_offline_fails_naming_url_checksum_and_keys(tmp_path, snakemake_run, closed_url):
    url = closed_url()
    proc = snakemake_run(tmp_path, _config({"url": url}), targets=[TABLE], check=False)
    out = _jobs(proc)
    assert proc.returncode != 0
    assert url in out and SHA256 in out
    assert "sensitivity.replay.source.zip" in out and "sensitivity.replay.source.table" in out
    assert not (tmp_path / RAW).exists() and not (tmp_path / TABLE).exists()


def test_workflow_local_zip_needs_no_network(tmp_path, snakemake_run, arcp_zip, arcp_csv,
                                             closed_url):
    cfg = _config({"url": closed_url(), "zip": str(arcp_zip)})
    snakemake_run(tmp_path, cfg, targets=[TABLE])
    assert (tmp_path / TABLE).read_bytes() == arcp_csv.read_bytes()


def test_workflow_local_table_skips_fetch_and_convert(tmp_path, snakemake_run, arcp_csv,
                                                      closed_url):
    proc = snakemake_run(tmp_path, _config({"url": closed_url(), "table": str(arcp_csv)}),
                         targets=[EVAL])
    assert "sensitivity_arcp_fetch" not in _jobs(proc)
    assert (tmp_path / EVAL).exists() and not (tmp_path / "results/data").exists()


def test_default_target_needs_no_download(tmp_path, snakemake_run, arcp_csv, closed_url):
    online = _config({"url": closed_url()})
    dry = ["-n", "--quiet", "rules"]
    out = _jobs(snakemake_run(tmp_path, online, targets=["all"], extra=dry))
    assert "sensitivity_arcp_fetch" not in out and "sensitivity_replay_eval" not in out
    out = _jobs(snakemake_run(tmp_path, online, targets=["paper"], extra=dry))
    for rule in ["sensitivity_arcp_fetch", "sensitivity_arcp_table", "sensitivity_replay_eval",
                 "sensitivity_replay_figures"]:
        assert rule in out
    local = _config({"url": closed_url(), "table": str(arcp_csv)})
    out = _jobs(snakemake_run(tmp_path, local, targets=["all"], extra=dry))
    assert "sensitivity_replay_eval" in out and "sensitivity_arcp_fetch" not in out


def test_make_paper_puts_the_downloaded_replay_in_the_summary(tmp_path, snakemake_run, server):
    """`make paper` (`snakemake all paper`): the replay needs the download, so it is not in
    `all`; the summary of that run still reports it (error against the paper's, per epsilon),
    and a later plain run keeps it there instead of rerunning the summary without it."""
    cfg = _config({"url": server.url})
    snakemake_run(tmp_path, cfg, targets=["all", "paper"])
    res = tmp_path / "results"
    summary = json.loads((res / "summary.json").read_text())
    sens = next(s for s in summary["sections"] if s["stage"] == "sensitivity")
    table = pd.read_csv(res / "paper" / "sensitivity_summary.csv")
    assert list(sens["numbers"]["replay"]) == [f"{e:g}" for e in table["epsilon"]]
    row, got = table.iloc[0], sens["numbers"]["replay"]["0.5"]
    assert got["mae_binary_mean"] == pytest.approx(row["mae_binary_mean"], rel=1e-12)
    assert got["paper_fig11_mae"] == pytest.approx(row["paper_fig11_mae"], rel=1e-12)
    md = (res / "summary.md").read_text()
    assert (f"Sensitivity replay, epsilon 0.5: mean |error| of binary sampling "
            f"**{fmt(row['mae_binary_mean'], 4)}** (paper: {fmt(row['paper_fig11_mae'], 4)})"
            in md)
    again = _jobs(snakemake_run(tmp_path, cfg, targets=["all"], extra=["-n"]))
    assert "run_summary" not in again and "sensitivity_arcp_fetch" not in again
    assert server.requests == ["/raw data.zip"]


def test_summary_reports_the_replay_of_a_local_table(tmp_path, snakemake_run, arcp_csv,
                                                     closed_url):
    """With the paper's table given locally the replay is part of `all`, and so of its
    summary."""
    snakemake_run(tmp_path, _config({"url": closed_url(), "table": str(arcp_csv)}),
                  targets=["all"])
    summary = json.loads((tmp_path / "results" / "summary.json").read_text())
    sens = next(s for s in summary["sections"] if s["stage"] == "sensitivity")
    assert set(sens["numbers"]["replay"]) == {"0.5"}
    assert any("replay of the paper's measurements" in r for r in sens["ran"])
