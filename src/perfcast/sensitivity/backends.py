"""Where a profiling run's performance comes from.

A backend answers two questions: how does the program perform unrestricted (with its peak usage,
for the ceiling), and how does it perform at one grid point. :class:`CgroupBackend` runs the real
program in a fresh control group per run; :class:`~perfcast.sensitivity.replay.ReplayBackend`
answers from a grid measured earlier.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from perfcast.errors import HostCapabilityError, InputError
from perfcast.process import RunResult, run_measured
from perfcast.program import run_dir
from perfcast.sensitivity import cgroups, netshape
from perfcast.sensitivity.devices import block_device
from perfcast.sensitivity.metrics import MetricNotFound, repeat_ci
from perfcast.sensitivity.monitor import Usage, UsageMonitor
from perfcast.sensitivity.resources import ResourceModel
from perfcast.sensitivity.settings import ProfileSettings

log = logging.getLogger(__name__)
MIB = 1024 * 1024


@dataclass(frozen=True)
class RunOutcome:
    """One (possibly repeated) run: performance, or why there is none."""

    performance: float
    ok: bool
    reason: str = ""
    wall_s: float = math.nan
    returncode: int | None = None
    usage: Usage | None = None
    memory_peak_bytes: int | None = None
    repeats: int = 1
    #: confidence interval of ``performance`` over the ok repeats (NaN: one run)
    ci_low: float = math.nan
    ci_high: float = math.nan
    #: the performance of every ok repeat (empty: not kept, e.g. a replayed cell)
    runs: tuple[float, ...] = ()

    @classmethod
    def failed(cls, reason: str, **kw) -> RunOutcome:
        """A run without performance (NaN), and why."""
        return cls(performance=math.nan, ok=False, reason=reason, **kw)


class Backend(Protocol):
    """Where a campaign's runs come from (:class:`CgroupBackend`,
    :class:`~perfcast.sensitivity.replay.ReplayBackend`)."""

    name: str
    model: ResourceModel
    higher_is_better: bool

    def unrestricted(self) -> RunOutcome:
        """The program without limits (its performance is Eq. (1)'s denominator)."""

    def peaks(self, unrestricted: RunOutcome) -> dict[str, float | None]:
        """Peak usage per dimension name, in the dimension's unit (None: unknown)."""

    def run(self, point: Mapping[str, float]) -> RunOutcome:
        """The program at one grid point (level per dimension name)."""


class CgroupBackend:
    """Run the real program under cgroup (and tc) limits, one fresh group per run."""

    name = "cgroup"

    def __init__(self, settings: ProfileSettings) -> None:
        """A backend running ``settings.program`` over the resource model of
        ``settings.dimensions``, with the control groups, network shaping, time-out, monitor
        interval and repeats of ``settings``.

        Raises
        ------
        InputError
            ``cpu_cores`` goes beyond the CPUs available, a network dimension without
            ``network.interface``, an interface that does not exist, or a program ``cwd`` that
            is not a directory (:func:`perfcast.program.run_dir`).
        """
        self.settings = settings
        self.program = settings.program
        self.model = model = ResourceModel.from_dimensions(settings.dimensions)
        self.higher_is_better = settings.program.metric.higher_is_better
        cg, net = settings.cgroup, settings.network
        kinds = {d.kind for d in model.dims}
        self.cpus = tuple(sorted(cg.cpus or os.sched_getaffinity(0)))
        if "cpu_cores" in kinds:
            most = int(max(model[self._name("cpu_cores")].levels))
            if most > len(self.cpus):
                raise InputError(None, f"cpu_cores goes up to {most} but only {len(self.cpus)} "
                                 f"CPUs are available ({list(self.cpus)})",
                                 expected=f"cpu_cores.upper <= {len(self.cpus)}")
        self.device = None
        if kinds & {"disk_read", "disk_write"}:
            self.device = cg.device or block_device(cg.target_path)
        if "network" in kinds:
            if not net.interface:
                raise InputError(None, "a network dimension needs sensitivity.network.interface")
            netshape.check_interface(net.interface)
        self.net_mode = net.mode
        if self.net_mode == "auto":
            v1 = cgroups.v1_mounts()
            self.net_mode = "net_cls" if "net_cls" in v1 and cg.version != "v2" else "interface"
        self.command = settings.program.definition.render(seed=settings.seed)
        self.env = settings.program.definition.render_env(seed=settings.seed)
        self.cwd = run_dir(settings.program.definition.cwd,
                           where=f"sensitivity program {settings.program.name!r}")

    def _name(self, kind: str) -> str:
        return next(d.name for d in self.model.dims if d.kind == kind)

    def limits(self, point: Mapping[str, float]) -> tuple[cgroups.Limits, int | None]:
        """cgroup limits and the network rate (bit/s; None: not shaped) of a grid point."""
        kw: dict = {}
        net_bits = None
        for d in self.model.dims:
            v = float(point[d.name])
            if d.kind == "cpu_cores":
                kw["cpus"] = self.cpus[: int(v)]
            elif d.kind == "cpu_quota":
                kw["cpu_quota_cores"] = v
            elif d.kind == "memory":
                kw["memory_bytes"] = int(v * MIB)
            elif d.kind == "disk_read":
                kw["read_bps"], kw["device"] = int(v * 1e6), self.device
            elif d.kind == "disk_write":
                kw["write_bps"], kw["device"] = int(v * 1e6), self.device
            elif d.kind == "network":
                net_bits = int(v * 1e6)
                if self.net_mode == "net_cls":
                    kw["net_classid"] = netshape.NET_CLS_CLASSID
        return cgroups.Limits(**kw), net_bits

    def _once(self, limits: cgroups.Limits, net_bits: int | None,
              monitor: UsageMonitor | None) -> tuple[RunOutcome, RunResult | None]:
        s, interface = self.settings, self.settings.network.interface
        net = (netshape.shaped(interface, net_bits, self.net_mode)
               if net_bits is not None and interface else contextlib.nullcontext())
        with cgroups.fresh_cgroup(limits, version=s.cgroup.version, parent=s.cgroup.parent,
                                  prefix=s.cgroup.prefix) as cg, net:
            joins = bool(cg.procs_files)
            res = run_measured(self.command, env=self.env, cwd=self.cwd,
                               timeout_s=s.timeout_s,
                               preexec_fn=cg.attach_self if joins else None,
                               on_start=monitor.start if monitor else None)
            ooms = cg.oom_kills()
            mem_peak = cg.memory_peak()
        usage = monitor.stop(res) if monitor else None
        common = {"wall_s": res.wall_s, "returncode": res.returncode, "usage": usage,
                  "memory_peak_bytes": mem_peak}
        if res.timed_out:
            return RunOutcome.failed(f"timed out after {s.timeout_s:g} s", **common), res
        if ooms > 0:
            lim = (f"{limits.memory_bytes / MIB:g} MiB" if limits.memory_bytes is not None
                   else "no limit")
            return RunOutcome.failed(f"killed by the memory limit ({lim}; oom_kill={ooms})",
                                     **common), res
        if res.leftover_error is not None:
            return RunOutcome.failed(res.leftover_error, **common), res
        if res.returncode != 0:
            tail = res.stderr.strip().splitlines()[-1:] or [""]
            what = (f"killed by signal {res.signal}" if res.signal
                    else f"exit code {res.returncode}")
            return RunOutcome.failed(f"{what}: {tail[0][:200]}".rstrip(": "), **common), res
        try:
            perf = self.program.metric.extract(res)
        except MetricNotFound as exc:
            return RunOutcome.failed(str(exc), **common), res
        return RunOutcome(performance=perf, ok=True, **common), res

    def _repeat(self, limits: cgroups.Limits, net_bits: int | None, monitored: bool,
                repeats: int | None = None, median: bool = False) -> RunOutcome:
        outs = []
        for _ in range(max(1, repeats or self.settings.repeats)):
            mon = (UsageMonitor(self.settings.monitor_interval_s,
                                self.settings.network.interface) if monitored else None)
            out, _ = self._once(limits, net_bits, mon)
            outs.append(out)
        ok = [o for o in outs if o.ok]
        if len(ok) * 2 < len(outs) or not ok:  # most repeats failed: the level fails
            first = next(o for o in outs if not o.ok)
            return RunOutcome.failed(first.reason, wall_s=first.wall_s,
                                     returncode=first.returncode, usage=first.usage,
                                     memory_peak_bytes=first.memory_peak_bytes,
                                     repeats=len(outs))
        usage = None
        if monitored:
            us = [o.usage for o in outs if o.usage is not None]
            usage = Usage(cpu_cores=max(u.cpu_cores for u in us),
                          cpu_runnable=max(u.cpu_runnable for u in us),
                          rss_bytes=max(u.rss_bytes for u in us),
                          read_bps=max(u.read_bps for u in us),
                          write_bps=max(u.write_bps for u in us),
                          net_bps=max(u.net_bps for u in us), samples=sum(u.samples for u in us))
        peaks = [o.memory_peak_bytes for o in ok if o.memory_peak_bytes is not None]
        perfs = [o.performance for o in ok]
        mean, lo, hi = repeat_ci(perfs, self.settings.confidence)
        return RunOutcome(performance=statistics.median(perfs) if median else mean, ok=True,
                          wall_s=statistics.median(o.wall_s for o in ok),
                          returncode=0, usage=usage, memory_peak_bytes=max(peaks, default=None),
                          repeats=len(outs), ci_low=lo, ci_high=hi, runs=tuple(perfs))

    def probe(self) -> None:
        """Check that this host lets us restrict a run, before any run is made.

        First removes the groups of this prefix that a killed earlier job left
        (:func:`~perfcast.sensitivity.cgroups.remove_stale`, logged). Creates (and removes) one
        empty group with the limits of the lowest level of every dimension, which is what each
        restricted run needs: root (or a delegated cgroup v2 subtree) and the dimensions'
        controllers. Shaping a network interface needs root too.

        Raises
        ------
        HostCapabilityError
            naming the control file or command that refused, and why.
        """
        lowest = {d.name: d.levels[0] for d in self.model.dims}
        limits, net_bits = self.limits(lowest)
        cg = self.settings.cgroup
        if os.geteuid() == 0:  # groups a SIGKILLed earlier job left (only root made them)
            for stale in cgroups.remove_stale(cg.prefix, cg.parent):
                log.warning("%s", stale)
        with cgroups.fresh_cgroup(limits, version=cg.version, parent=cg.parent, prefix=cg.prefix):
            pass
        if net_bits is not None and os.geteuid() != 0:
            raise HostCapabilityError(
                f"tc qdisc on {self.settings.network.interface}: shaping the network needs root "
                f"(CAP_NET_ADMIN; running as uid {os.geteuid()})")

    def run(self, point: Mapping[str, float]) -> RunOutcome:
        """The program at one grid point: the mean of ``settings.repeats`` runs with its
        confidence interval (:func:`~perfcast.sensitivity.metrics.repeat_ci`), failed if most
        failed (killed by the memory limit, timed out, exit code, processes left running,
        metric not found)."""
        limits, net_bits = self.limits(point)
        out = self._repeat(limits, net_bits, monitored=False)
        log.info("%s at %s: %s", self.program.name, dict(point),
                 f"{out.performance:.6g}" if out.ok else f"FAILED ({out.reason})")
        return out

    def peaks(self, unrestricted: RunOutcome) -> dict[str, float | None]:
        """The monitored peak usage per dimension, in the dimension's unit."""
        u = unrestricted.usage
        return {d.name: (u.peak_for(d.kind) if u is not None else None) for d in self.model.dims}

    def unrestricted(self) -> RunOutcome:
        """The program without limits, monitored: the median of ``baseline_repeats`` runs
        (at least ``repeats``; every run kept in ``runs``, their spread the baseline's own
        uncertainty), the peak usage the maximum over them."""
        # every sensitivity divides by this one performance: the median of several runs, robust
        # to the one run a busy host slows down
        out = self._repeat(cgroups.Limits(), None, monitored=True,
                           repeats=max(self.settings.repeats, self.settings.baseline_repeats),
                           median=True)
        log.info("%s unrestricted: %s, peak usage %s", self.program.name,
                 f"{out.performance:.6g}" if out.ok else f"FAILED ({out.reason})", out.usage)
        return out
