"""A fresh Linux control group per profiling run, with its limits, on cgroup v1 or v2.

The paper (Table 2) restricts a program through these control files; the v2 names are the
kernel's unified-hierarchy equivalents:

============  ===================================  ===============================
resource      cgroup v1                            cgroup v2
============  ===================================  ===============================
CPU cores     ``cpuset.cpus`` (+ ``cpuset.mems``)   ``cpuset.cpus``
CPU quota     ``cpu.cfs_quota_us`` / period        ``cpu.max`` ("quota period")
memory        ``memory.limit_in_bytes``            ``memory.max`` (``memory.swap.max`` 0)
              (``memory.memsw.limit_in_bytes``)
disk read     ``blkio.throttle.read_bps_device``   ``io.max`` ``rbps=``
disk write    ``blkio.throttle.write_bps_device``  ``io.max`` ``wbps=``
network       ``net_cls.classid`` + tc filter      tc on the interface (no net_cls)
============  ===================================  ===============================

Every run gets its own group (v1: one directory per controller, nested under this process's own
group; v2: one directory under ``<mount>/<parent>``, a group without processes of its own, as
the unified hierarchy's no-internal-process rule needs), the child joins it before ``exec`` and the
group is removed afterwards, its leftover processes killed first, also when the run failed.
Out-of-memory kills are read from ``memory.oom_control`` (v1 ``oom_kill``) or ``memory.events``
(v2). Not being root, or a controller that is not mounted/enabled, raises
:class:`~perfcast.errors.HostCapabilityError` naming the control file.

Note (kernel behaviour): v1 ``blkio`` throttles only I/O issued by the group's tasks (direct and
read I/O); buffered writes are written back by kernel threads outside the group and escape it.
v2 ``io.max`` also throttles writeback.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import re
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from perfcast.errors import HostCapabilityError
from perfcast.process import ending_on_signals

CFS_PERIOD_US = 100_000
_COUNTER = itertools.count()


@dataclass(frozen=True)
class Limits:
    """The limits of one run; ``None`` leaves a resource unrestricted."""

    cpus: tuple[int, ...] | None = None
    cpu_quota_cores: float | None = None
    memory_bytes: int | None = None
    read_bps: int | None = None
    write_bps: int | None = None
    device: str | None = None
    net_classid: int | None = None

    def controllers(self, version: str) -> list[str]:
        """Controllers these limits need (plus ``memory`` when a memory limit is set)."""
        need = []
        if self.cpus is not None:
            need.append("cpuset")
        if self.cpu_quota_cores is not None:
            need.append("cpu")
        if self.memory_bytes is not None:
            need.append("memory")
        if self.read_bps is not None or self.write_bps is not None:
            if not self.device:
                raise ValueError("a disk throttle needs the device MAJ:MIN")
            need.append("blkio" if version == "v1" else "io")
        if self.net_classid is not None:
            if version != "v1":
                raise ValueError("net_cls exists on cgroup v1 only")
            need.append("net_cls")
        return need


# control file each controller is first written through (for error messages)
_V1_FILE = {"cpuset": "cpuset.cpus", "cpu": "cpu.cfs_quota_us", "memory": "memory.limit_in_bytes",
            "blkio": "blkio.throttle.read_bps_device", "net_cls": "net_cls.classid"}
_V2_FILE = {"cpuset": "cpuset.cpus", "cpu": "cpu.max", "memory": "memory.max", "io": "io.max"}


def _mountinfo() -> list[tuple[str, str, list[str]]]:
    """(mount point, fstype, super options) of every mount."""
    out = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            left, _, right = line.partition(" - ")
            parts = right.split()
            if len(parts) >= 3:
                out.append((left.split()[4], parts[0], parts[2].split(",")))
    return out


def v1_mounts() -> dict[str, str]:
    """Controller -> mount point of each mounted cgroup v1 hierarchy."""
    mounts: dict[str, str] = {}
    for mnt, fstype, opts in _mountinfo():
        if fstype == "cgroup":
            for o in opts:
                mounts.setdefault(o, mnt)
    return mounts


def v2_mount() -> str | None:
    for mnt, fstype, _ in _mountinfo():
        if fstype == "cgroup2":
            return mnt
    return None


def own_cgroup(controller: str | None) -> str:
    """This process's group path in a v1 hierarchy (``controller``) or in v2 (``None``)."""
    with open("/proc/self/cgroup") as fh:
        for line in fh:
            hid, ctrls, path = line.rstrip("\n").split(":", 2)
            if controller is None and hid == "0" and ctrls == "":
                return path
            if controller is not None and controller in ctrls.split(","):
                return path
    return "/"


def detect_version(prefer: str, needed: list[str]) -> str:
    """``"v1"`` or ``"v2"``: v1 where the needed controllers are mounted as v1 hierarchies."""
    if prefer in ("v1", "v2"):
        return prefer
    v1 = v1_mounts()
    v1_needed = [c if c != "io" else "blkio" for c in needed]
    if v1 and (not needed or any(c in v1 for c in v1_needed)):
        return "v1"
    if v2_mount():
        return "v2"
    if v1:
        return "v1"
    raise HostCapabilityError("/proc/self/mountinfo: no cgroup hierarchy is mounted")


def _write(path: Path, value: str, controller: str) -> None:
    try:
        with open(path, "w") as fh:
            fh.write(value)
    except PermissionError as exc:
        raise HostCapabilityError(
            f"{path}: permission denied writing {value!r}: restricting a program needs root "
            f"(running as uid {os.geteuid()})") from exc
    except FileNotFoundError as exc:
        raise HostCapabilityError(
            f"{path}: no such control file: the {controller} controller is not available "
            f"in {path.parent}") from exc
    except OSError as exc:
        raise HostCapabilityError(f"{path}: the kernel refused {value!r}: {exc}") from exc


def _kill_and_wait(procs_files: list[Path], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        pids: set[int] = set()
        for f in procs_files:
            with contextlib.suppress(OSError):
                pids.update(int(x) for x in f.read_text().split())
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return
        time.sleep(0.02)


def _rmdir(path: Path, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                raise HostCapabilityError(f"{path}: could not remove the run's cgroup: {exc}"
                                          ) from exc
            time.sleep(0.02)


class CgroupV1:
    """One run's group in every needed v1 hierarchy, under this process's own group."""

    version = "v1"

    def __init__(self, name: str, controllers: list[str]) -> None:
        mounts = v1_mounts()
        self.dirs: dict[str, Path] = {}
        for ctrl in controllers:
            if ctrl not in mounts:
                raise HostCapabilityError(
                    f"/sys/fs/cgroup/{ctrl}/{_V1_FILE.get(ctrl, 'cgroup.procs')}: the {ctrl} "
                    "controller is not mounted (cgroup v1)")
            self.dirs[ctrl] = Path(mounts[ctrl]) / own_cgroup(ctrl).lstrip("/") / name
        if os.geteuid() != 0 and self.dirs:
            ctrl, d = next(iter(self.dirs.items()))
            raise HostCapabilityError(
                f"{d / _V1_FILE.get(ctrl, 'cgroup.procs')}: restricting a program needs root "
                f"(running as uid {os.geteuid()})")
        self._created: list[Path] = []

    @property
    def procs_files(self) -> list[Path]:
        return [d / "cgroup.procs" for d in self.dirs.values()]

    def create(self) -> None:
        for ctrl, d in self.dirs.items():
            try:
                d.mkdir()
            except PermissionError as exc:
                raise HostCapabilityError(f"{d}: permission denied creating the run's cgroup "
                                          f"(needs root; uid {os.geteuid()})") from exc
            self._created.append(d)
            if ctrl == "cpuset":  # a v1 cpuset accepts tasks only once cpus and mems are set
                parent = d.parent
                mems = (parent / "cpuset.effective_mems")
                mems = mems if mems.exists() else parent / "cpuset.mems"
                _write(d / "cpuset.mems", mems.read_text().strip(), ctrl)
                cpus = parent / "cpuset.effective_cpus"
                cpus = cpus if cpus.exists() else parent / "cpuset.cpus"
                _write(d / "cpuset.cpus", cpus.read_text().strip(), ctrl)

    def apply(self, lim: Limits) -> None:
        if lim.cpus is not None:
            _write(self.dirs["cpuset"] / "cpuset.cpus", ",".join(map(str, lim.cpus)), "cpuset")
        if lim.cpu_quota_cores is not None:
            d = self.dirs["cpu"]
            _write(d / "cpu.cfs_period_us", str(CFS_PERIOD_US), "cpu")
            quota = max(1000, round(lim.cpu_quota_cores * CFS_PERIOD_US))
            _write(d / "cpu.cfs_quota_us", str(quota), "cpu")
        if lim.memory_bytes is not None:
            d = self.dirs["memory"]
            _write(d / "memory.limit_in_bytes", str(int(lim.memory_bytes)), "memory")
            if (d / "memory.memsw.limit_in_bytes").exists():  # no escape into swap
                _write(d / "memory.memsw.limit_in_bytes", str(int(lim.memory_bytes)), "memory")
        if lim.read_bps is not None:
            _write(self.dirs["blkio"] / "blkio.throttle.read_bps_device",
                   f"{lim.device} {int(lim.read_bps)}", "blkio")
        if lim.write_bps is not None:
            _write(self.dirs["blkio"] / "blkio.throttle.write_bps_device",
                   f"{lim.device} {int(lim.write_bps)}", "blkio")
        if lim.net_classid is not None:
            _write(self.dirs["net_cls"] / "net_cls.classid", str(lim.net_classid), "net_cls")

    def attach_self(self) -> None:
        """Move the calling process into the group (a ``preexec_fn``: runs before ``exec``)."""
        pid = str(os.getpid())
        for f in self.procs_files:
            with open(f, "w") as fh:
                fh.write(pid)

    def oom_kills(self) -> int:
        d = self.dirs.get("memory")
        if d is None:
            return 0
        with contextlib.suppress(OSError):
            for line in (d / "memory.oom_control").read_text().splitlines():
                key, _, val = line.partition(" ")
                if key == "oom_kill":
                    return int(val)
            # kernels before 4.13 have no oom_kill counter: a hit limit is the best sign
            return 1 if int((d / "memory.failcnt").read_text()) > 0 else 0
        return 0

    def memory_peak(self) -> int | None:
        d = self.dirs.get("memory")
        if d is None:
            return None
        with contextlib.suppress(OSError, ValueError):
            return int((d / "memory.max_usage_in_bytes").read_text())
        return None

    def remove(self) -> None:
        _kill_and_wait([d / "cgroup.procs" for d in self._created])
        errors = []
        for d in reversed(self._created):
            try:
                _rmdir(d)
            except HostCapabilityError as exc:
                errors.append(exc)
        self._created.clear()
        if errors:
            raise errors[0]


class CgroupV2:
    """One run's group in the unified hierarchy, under ``<mount>/<parent>``."""

    version = "v2"

    def __init__(self, name: str, controllers: list[str], parent: str) -> None:
        mnt = v2_mount()
        if mnt is None:
            raise HostCapabilityError("/sys/fs/cgroup/cgroup.controllers: no cgroup v2 mounted")
        self.mount = Path(mnt)
        self.parent = self.mount / parent.strip("/")
        self.dir = self.parent / name
        self.controllers = list(controllers)
        if os.geteuid() != 0:
            f = _V2_FILE.get(controllers[0], "cgroup.procs") if controllers else "cgroup.procs"
            raise HostCapabilityError(
                f"{self.dir / f}: restricting a program needs root (running as uid "
                f"{os.geteuid()})")
        self._created = False

    @property
    def procs_files(self) -> list[Path]:
        return [self.dir / "cgroup.procs"]

    def _enable(self) -> None:
        """Enable the controllers on the path from the mount root down to the parent."""
        rel = self.parent.relative_to(self.mount).parts
        chain = [self.mount] + [self.mount.joinpath(*rel[: i + 1]) for i in range(len(rel))]
        for d in chain:
            if d != self.mount:
                d.mkdir(exist_ok=True)
            available = (d / "cgroup.controllers").read_text().split()
            for ctrl in self.controllers:
                if ctrl not in available:
                    raise HostCapabilityError(
                        f"{self.dir / _V2_FILE.get(ctrl, 'cgroup.procs')}: the {ctrl} controller "
                        f"is not available (cgroup v2: {d / 'cgroup.controllers'} lists "
                        f"{' '.join(available) or 'none'})")
                enabled = (d / "cgroup.subtree_control").read_text().split()
                if ctrl not in enabled:
                    _write(d / "cgroup.subtree_control", f"+{ctrl}", ctrl)

    def create(self) -> None:
        for attempt in range(3):
            self._enable()
            try:
                self.dir.mkdir()
                break
            except FileNotFoundError as exc:  # the shared parent left with another run's end
                if attempt == 2:
                    raise HostCapabilityError(f"{self.dir}: parent group keeps vanishing"
                                              ) from exc
            except PermissionError as exc:
                raise HostCapabilityError(f"{self.dir}: permission denied creating the run's "
                                          "cgroup") from exc
        self._created = True

    def apply(self, lim: Limits) -> None:
        d = self.dir
        if lim.cpus is not None:
            _write(d / "cpuset.cpus", ",".join(map(str, lim.cpus)), "cpuset")
        if lim.cpu_quota_cores is not None:
            quota = max(1000, round(lim.cpu_quota_cores * CFS_PERIOD_US))
            _write(d / "cpu.max", f"{quota} {CFS_PERIOD_US}", "cpu")
        if lim.memory_bytes is not None:
            _write(d / "memory.max", str(int(lim.memory_bytes)), "memory")
            if (d / "memory.swap.max").exists():
                _write(d / "memory.swap.max", "0", "memory")
        if lim.read_bps is not None or lim.write_bps is not None:
            parts = [lim.device or ""]
            if lim.read_bps is not None:
                parts.append(f"rbps={int(lim.read_bps)}")
            if lim.write_bps is not None:
                parts.append(f"wbps={int(lim.write_bps)}")
            _write(d / "io.max", " ".join(parts), "io")

    def attach_self(self) -> None:
        with open(self.dir / "cgroup.procs", "w") as fh:
            fh.write(str(os.getpid()))

    def oom_kills(self) -> int:
        with contextlib.suppress(OSError):
            for line in (self.dir / "memory.events").read_text().splitlines():
                key, _, val = line.partition(" ")
                if key == "oom_kill":
                    return int(val)
        return 0

    def memory_peak(self) -> int | None:
        with contextlib.suppress(OSError, ValueError):
            return int((self.dir / "memory.peak").read_text())
        return None

    def remove(self) -> None:
        if not self._created:
            return
        kill = self.dir / "cgroup.kill"
        if kill.exists():
            with contextlib.suppress(OSError):
                kill.write_text("1")
        _kill_and_wait(self.procs_files)
        _rmdir(self.dir)
        self._created = False
        with contextlib.suppress(OSError):  # shared parent: gone once the last run leaves
            self.parent.rmdir()


Cgroup = CgroupV1 | CgroupV2


@dataclass(frozen=True)
class StaleGroup:
    """A group a killed earlier run left behind, removed by :func:`remove_stale`."""

    name: str
    paths: tuple[Path, ...]
    owner_pid: int
    killed: int

    def __str__(self) -> str:
        return (f"removed cgroup {self.name} left by a killed earlier run (owner pid "
                f"{self.owner_pid} is dead; {self.killed} leftover process(es) killed): "
                + ", ".join(map(str, self.paths)))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _group_roots(parent: str) -> list[Path]:
    """Where this process's runs make their groups: in each v1 hierarchy its own group; in v2
    ``<mount>/<parent>``."""
    roots = []
    for ctrl, mnt in sorted(v1_mounts().items()):
        root = Path(mnt) / own_cgroup(ctrl).lstrip("/")
        if root not in roots and root.is_dir():
            roots.append(root)
    mnt2 = v2_mount()
    if mnt2 is not None and (Path(mnt2) / parent.strip("/")).is_dir():
        roots.append(Path(mnt2) / parent.strip("/"))
    return roots


def remove_stale(prefix: str, parent: str) -> list[StaleGroup]:
    """Remove the groups ``<prefix>-<pid>-<n>`` whose owner ``pid`` is dead.

    A run's group is removed when the run ends, also when it fails; only a SIGKILLed job (or a
    crashed host) leaves one, with the killed job's program possibly still running in it. The
    next profiling run calls this first: it kills what is left in such a group and removes it.
    A group whose owner lives (a concurrent job) is left alone.

    Parameters
    ----------
    prefix : str
        The groups' name prefix (``sensitivity.cgroup.prefix``).
    parent : str
        v2 only, the group the runs' groups go under (``sensitivity.cgroup.parent``).

    Returns
    -------
    list of StaleGroup
        the groups removed, by name (each with its directory in every v1 hierarchy).

    Raises
    ------
    HostCapabilityError
        a stale group that cannot be removed.
    """
    pattern = re.compile(rf"{re.escape(prefix)}-(\d+)-\d+")
    stale: dict[str, list[Path]] = {}
    for root in _group_roots(parent):
        for d in sorted(root.iterdir()):
            m = pattern.fullmatch(d.name)
            if m is not None and d.is_dir() and not _pid_alive(int(m.group(1))):
                stale.setdefault(d.name, []).append(d)
    removed = []
    for name, dirs in sorted(stale.items()):
        procs = [d / "cgroup.procs" for d in dirs]
        left: set[str] = set()
        for f in procs:
            with contextlib.suppress(OSError):
                left.update(f.read_text().split())
        for d in dirs:
            if (d / "cgroup.kill").exists():
                with contextlib.suppress(OSError):
                    (d / "cgroup.kill").write_text("1")
        _kill_and_wait(procs)
        for d in dirs:
            _rmdir(d)
        owner = int(pattern.fullmatch(name).group(1))  # type: ignore[union-attr]
        removed.append(StaleGroup(name, tuple(dirs), owner, len(left)))
    return removed


def make_cgroup(limits: Limits, *, version: str, parent: str, prefix: str) -> Cgroup:
    """An (uncreated) group for ``limits`` with a unique name.

    Parameters
    ----------
    limits : Limits
        The limits the group will apply (they decide the controllers it needs).
    version : str
        ``v1``, ``v2`` or ``auto`` (v1 where the needed controllers are mounted as v1;
        ``sensitivity.cgroup.version``).
    parent : str
        v2 only, the group the new one goes under (``sensitivity.cgroup.parent``).
    prefix : str
        The group's name is ``<prefix>-<pid>-<n>`` (``sensitivity.cgroup.prefix``).

    Returns
    -------
    CgroupV1 or CgroupV2

    Raises
    ------
    HostCapabilityError
        no hierarchy offers the controllers ``limits`` needs.
    """
    v = detect_version(version, limits.controllers("v2") if version != "v1" else
                       limits.controllers("v1"))
    name = f"{prefix}-{os.getpid()}-{next(_COUNTER)}"
    if v == "v1":  # v1: under this process's own group in each hierarchy (parent is for v2)
        return CgroupV1(name, limits.controllers("v1"))
    return CgroupV2(name, limits.controllers("v2"), parent)


@contextlib.contextmanager
def fresh_cgroup(limits: Limits, *, version: str, parent: str,
                 prefix: str) -> Iterator[Cgroup]:
    """Create a group with ``limits``; always remove it (and kill what is left in it), also when
    the job is ended by SIGTERM (SLURM's time limit, ``scancel``) or SIGHUP: inside the block
    they raise :class:`perfcast.process.Terminated` (:func:`perfcast.process.ending_on_signals`)
    and unwind to the removal as SIGINT's KeyboardInterrupt does.

    Parameters
    ----------
    limits : Limits
        The limits the group applies.
    version, parent, prefix : str
        As :func:`make_cgroup`.

    Yields
    ------
    CgroupV1 or CgroupV2
        the group, created and limited; ``attach_self`` joins a starting process to it.

    Raises
    ------
    HostCapabilityError
        the group cannot be created or limited (not root, a controller missing), naming the
        control file that refused.
    """
    with ending_on_signals():  # SIGTERM / SIGHUP unwind to the finally, as SIGINT does
        cg = make_cgroup(limits, version=version, parent=parent, prefix=prefix)
        try:
            cg.create()
            cg.apply(limits)
            yield cg
        finally:
            cg.remove()
