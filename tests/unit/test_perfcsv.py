"""perf -I -x, parsing: genuine perf output, edge cases, and errors that name file and line."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from perfcast.counters.perfcsv import format_perf_csv, parse_perf_csv, to_wide
from perfcast.errors import HostCapabilityError, InputError

SAMPLE = """# started on Sun Nov 22 02:28:30 2026

     0.100126193,96.22,msec,task-clock,96215950,100.00,0.962,CPUs utilized
     0.100126193,9303,,page-faults,96224496,100.00,96.689,K/sec
     0.200348055,100.20,msec,task-clock,100203271,100.00,1.002,CPUs utilized
     0.200348055,<not counted>,,page-faults,0,0.00,,
     0.245655036,44.15,msec,task-clock,44148410,100.00,0.441,CPUs utilized
     0.245655036,4,,page-faults,44141988,87.50,90.604,/sec
"""


def test_parse_sample_statuses_and_partial_interval(tmp_path):
    f = tmp_path / "g.csv"
    f.write_text(SAMPLE)
    long = parse_perf_csv(f)
    assert list(long["event"].unique()) == ["task-clock", "page-faults"]
    pf = long[long["event"] == "page-faults"]
    assert pf["status"].tolist() == ["ok", "not counted", "ok"]
    assert np.isnan(pf["value"].iloc[1]) and pf["value"].iloc[0] == 9303
    wide = to_wide(long, f)
    assert wide["duration_s"].round(6).tolist() == [0.100126, 0.100222, 0.045307]
    assert wide["pct_running_min"].tolist() == [100.0, 0.0, 87.5]


def test_event_names_with_commas(tmp_path):
    f = tmp_path / "raw.csv"
    f.write_text("     1.000,12,,cpu/event=0x3c,umask=0x0/,1000,100.00,,\n")
    long = parse_perf_csv(f)
    assert long["event"].tolist() == ["cpu/event=0x3c,umask=0x0/"]


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("     0.1,12", "malformed perf line"),
        ("     abc,12,,instructions,1,100.00,,", "interval time"),
        ("     0.1,12x,,instructions,1,100.00,,", "count '12x' is not a number"),
        ("     0.1,-5,,instructions,1,100.00,,", "negative"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, line, needle):
    f = tmp_path / "bad.csv"
    f.write_text("# started on x\n\n     0.05,1,,instructions,1,100.00,,\n" + line + "\n")
    with pytest.raises(InputError) as err:
        parse_perf_csv(f)
    assert str(f) in str(err.value) and "line 4" in str(err.value) and needle in str(err.value)


def test_not_supported_base_event_is_a_host_error(tmp_path):
    f = tmp_path / "vm.csv"
    f.write_text("     0.1,<not supported>,,instructions,0,100.00,,\n"
                 "     0.1,3,,page-faults,100,100.00,,\n")
    with pytest.raises(HostCapabilityError, match="no hardware PMU"):
        to_wide(parse_perf_csv(f), f, required=["instructions"])


def test_format_roundtrip(tmp_path):
    times = np.array([0.1001, 0.2003, 0.2507])
    counts = {"instructions": np.array([1e8, 2e8, 5e7]), "cycles": np.array([2e8, 2e8, 1e8])}
    f = tmp_path / "rt.csv"
    f.write_text(format_perf_csv(times, counts, header="test"))
    wide = to_wide(parse_perf_csv(f), f)
    np.testing.assert_allclose(wide["time"], times)
    np.testing.assert_allclose(wide["instructions"], counts["instructions"])


def test_genuine_perf_output_parses(tmp_path):
    """Real ``perf stat -I`` on a real command, software events (this VM has no hardware PMU)."""
    out = tmp_path / "perf.csv"
    cmd = ["perf", "stat", "-I", "100", "-x,", "-e", "task-clock,page-faults,context-switches",
           "-o", str(out), "--", sys.executable, "-c",
           "import time\nt=time.time()\nwhile time.time()-t<0.45: pass"]
    subprocess.run(cmd, check=True, capture_output=True)
    wide = to_wide(parse_perf_csv(out), out, required=["task-clock"])
    assert len(wide) >= 5 and wide["time"].iloc[-1] >= 0.45
    # task-clock can't exceed the interval for a single-threaded program
    full = wide.iloc[:-1]
    assert (full["task-clock"] <= full["duration_s"] * 1000 * 1.05).all()
    assert full["task-clock"].iloc[-3:].sum() > 0  # the busy loop ran
    assert wide["duration_s"].iloc[-1] < 0.1  # the partial last interval
