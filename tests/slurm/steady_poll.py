"""``python -m snakemake`` with the SLURM executor's status checks at a steady interval.

Used by ``tests/workflow/test_slurm.py`` only; never by the product. snakemake-executor-plugin-slurm
(2.x) first checks its jobs ``--slurm-init-seconds-before-status-checks`` after a submission and
then, after every check in which no job finished, waits 10 s longer than the time before (up to
180 s; the step is not a setting). On a cluster whose jobs take hours that costs nothing; on the
test cluster, whose jobs take 20-40 s, a phase of jobs that ended 37 s after submission is noticed
at the fourth check, 68 s after it (2 + 12 + 22 + 32 s), and the grouped run's two phases spent
most of their time waiting. Here the wait never exceeds ``PERFCAST_TEST_MAX_POLL_S`` (default 3 s).
Everything else is real: sbatch, the squeue status queries, the jobs on the node, the plugin's
handling of what they report.
"""

from __future__ import annotations

import os

from snakemake_interface_executor_plugins.executors.remote import RemoteExecutor

MAX_POLL_S = float(os.environ.get("PERFCAST_TEST_MAX_POLL_S", "3"))
_interval = RemoteExecutor.next_seconds_between_status_checks


def _capped(self: RemoteExecutor, seconds: float) -> None:
    _interval.fset(self, min(seconds, MAX_POLL_S))


RemoteExecutor.next_seconds_between_status_checks = property(_interval.fget, _capped)

if __name__ == "__main__":
    from snakemake.cli import main

    main()
