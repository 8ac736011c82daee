"""Network bandwidth limits with ``tc`` on a configured interface.

The paper (Table 2) limits network bandwidth through ``net_cls.classid``: the program's group
tags its packets with a class id and an HTB class on the interface shapes that class. That is
mode ``net_cls`` (cgroup v1 with the net_cls controller mounted):

    tc qdisc add dev IF root handle 1: htb default 2
    tc class add dev IF parent 1: classid 1:1 htb rate R ceil R     (the program)
    tc class add dev IF parent 1: classid 1:2 htb rate 100gbit      (everything else)
    tc filter add dev IF parent 1: protocol all prio 10 handle 1: cgroup

Mode ``interface`` (cgroup v2, or v1 without net_cls) shapes all egress traffic of the interface
to R (``htb default 1``): correct while the program runs alone on it, as profiling requires. Only
egress is shaped (as in the paper). The root qdisc is removed afterwards, also on failure; an
interface that already has a configured root qdisc is refused rather than overwritten, and one
lock file per interface keeps two runs from shaping it at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from perfcast.errors import HostCapabilityError, InputError

#: class id 1:1 as net_cls.classid writes it (0xAAAABBBB)
NET_CLS_CLASSID = 0x00010001
_DEFAULT_QDISCS = {"noqueue", "pfifo_fast", "mq", "fq_codel", "fq", "noop", "pfifo", "cake"}


def _tc(*args: str) -> str:
    tc = shutil.which("tc")
    if tc is None:
        raise HostCapabilityError("tc: not found on PATH (iproute2 is needed to limit network "
                                  "bandwidth)")
    proc = subprocess.run([tc, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise HostCapabilityError(f"tc {' '.join(args)}: {proc.stderr.strip() or proc.stdout}")
    return proc.stdout


def root_qdisc(interface: str) -> dict:
    """The interface's root qdisc as ``tc -j qdisc show`` reports it (empty: none).

    Raises
    ------
    HostCapabilityError
        ``tc`` is missing or fails.
    """
    out = _tc("-j", "qdisc", "show", "dev", interface, "root")
    items = json.loads(out or "[]")
    return items[0] if items else {}


def check_interface(interface: str) -> None:
    """Raise :class:`InputError` (naming the interfaces there are) if ``interface`` does not
    exist."""
    if not Path("/sys/class/net", interface).exists():
        known = sorted(p.name for p in Path("/sys/class/net").iterdir())
        raise InputError(None, f"network interface {interface!r} does not exist",
                         expected=f"one of {known}")


@contextlib.contextmanager
def _lock(interface: str) -> Iterator[None]:
    path = Path(tempfile.gettempdir()) / f"perfcast-tc-{interface}.lock"
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def shaped(interface: str, rate_bits: int, mode: str) -> Iterator[None]:
    """Limit ``interface`` egress to ``rate_bits`` bit/s for the duration of the block.

    Parameters
    ----------
    interface : str
        The network interface.
    rate_bits : int
        The rate, bit/s (an HTB class with that rate and ceiling).
    mode : str
        ``interface``: every packet of the interface is shaped; ``net_cls``: only packets of
        processes in a net_cls group with classid ``1:1`` (a ``tc`` cgroup filter), the rest go
        through an unlimited class (``sensitivity.network.mode``, ``auto`` resolved).

    Raises
    ------
    ValueError
        an unknown ``mode`` or a rate that is not positive.
    InputError
        no such interface.
    HostCapabilityError
        ``tc`` refuses (not root), or the interface already has a configured root qdisc, which
        is never replaced.
    """
    if mode not in ("interface", "net_cls"):
        raise ValueError(f"unknown network mode {mode!r}")
    if rate_bits <= 0:
        raise ValueError("rate must be positive")
    check_interface(interface)
    with _lock(interface):
        current = root_qdisc(interface)
        if current and (current.get("kind") not in _DEFAULT_QDISCS
                        or current.get("handle", "0:") not in ("0:", "")):
            raise HostCapabilityError(
                f"tc qdisc show dev {interface}: the interface already has a configured root "
                f"qdisc ({current.get('kind')} {current.get('handle')}); perfcast will not "
                "replace it")
        rate = f"{int(rate_bits)}bit"
        try:
            _tc("qdisc", "add", "dev", interface, "root", "handle", "1:", "htb", "default",
                "1" if mode == "interface" else "2")
            _tc("class", "add", "dev", interface, "parent", "1:", "classid", "1:1", "htb",
                "rate", rate, "ceil", rate)
            if mode == "net_cls":
                _tc("class", "add", "dev", interface, "parent", "1:", "classid", "1:2", "htb",
                    "rate", "100gbit")
                _tc("filter", "add", "dev", interface, "parent", "1:", "protocol", "all",
                    "prio", "10", "handle", "1:", "cgroup")
            yield
        finally:
            with contextlib.suppress(HostCapabilityError):
                if root_qdisc(interface).get("kind") == "htb":
                    _tc("qdisc", "del", "dev", interface, "root")
