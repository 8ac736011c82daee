"""The README's commands, run as it writes them: a line a user copies must work."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from harness import REPO

README = REPO / "README.md"


def _readme_line(section: str, starts: str) -> str:
    """The one line of a ``sh`` block of the README's ``section`` that starts with ``starts``
    (its comment dropped)."""
    text = README.read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line.split("#", 1)[0].strip()
             for block in re.findall(r"```sh\n(.*?)```", body, re.DOTALL)
             for line in block.splitlines() if line.startswith(starts)]
    assert len(lines) == 1, (section, starts, lines)
    return lines[0]


def test_the_readme_unlock_line_removes_a_stale_lock(tmp_path):
    """`After an interrupted run`: the README's unlock command, run as written in a folder that
    holds the workflow as a clone does, removes the lock a killed run left."""
    line = _readme_line("After an interrupted run", ".venv/bin/snakemake --unlock")
    if not (os.path.exists(os.path.join(sys.prefix, "bin", "snakemake"))):
        pytest.skip(f"no snakemake in this Python's environment {sys.prefix}")
    for folder in ("workflow", "config", "profiles", "scripts"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    (tmp_path / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    for kind in ("input", "output"):  # what a killed run leaves
        (locks / f"0.{kind}.lock").write_text(str(tmp_path / "results" / "summary.md") + "\n")
    proc = subprocess.run(line, shell=True, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{line}:\n{out[-4000:]}"
    assert "Unlock" in out and not list(locks.glob("*.lock")), out[-4000:]
