"""The block device holding a path, as the ``MAJ:MIN`` the I/O throttles need.

``blkio.throttle.*_bps_device`` (cgroup v1) and ``io.max`` (v2) take the whole disk's device
number; a partition is mapped to its disk through ``/sys/dev/block/MAJ:MIN``. A filesystem with no
block device of its own (overlay, tmpfs, NFS: major 0) is resolved through
``/proc/self/mountinfo`` when its mount source is a device node, and otherwise refused with a
message that says how to name the device in the config.
"""

from __future__ import annotations

import os
from pathlib import Path

from perfcast.errors import HostCapabilityError, InputError

SYS_BLOCK = Path("/sys/dev/block")


def _whole_disk(major: int, minor: int) -> tuple[int, int]:
    node = SYS_BLOCK / f"{major}:{minor}"
    if (node / "partition").exists():
        parent_dev = (node.resolve().parent / "dev").read_text().strip()
        ma, mi = parent_dev.split(":")
        return int(ma), int(mi)
    return major, minor


def _mount_source(path: Path) -> tuple[str, str]:
    """(fstype, source) of the mount holding ``path`` (longest mount-point prefix)."""
    best, best_len = ("", ""), -1
    real = str(path.resolve())
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            left, _, right = line.partition(" - ")
            mnt = left.split()[4].replace("\\040", " ")
            fstype, source = (right.split() + ["", ""])[:2]
            inside = real == mnt or real.startswith(mnt.rstrip("/") + "/") or mnt == "/"
            if inside and len(mnt) > best_len:
                best, best_len = (fstype, source), len(mnt)
    return best


def block_device(path: str | Path) -> str:
    """``"MAJ:MIN"`` of the whole disk holding ``path`` (the device a disk throttle names).

    Raises
    ------
    InputError
        ``path`` does not exist.
    HostCapabilityError
        ``path`` lies on a filesystem with no block device of its own (then set
        ``sensitivity.cgroup.device``).
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError as exc:
        raise InputError(p, "target path for the disk throttle does not exist") from exc
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    if major == 0:
        fstype, source = _mount_source(p)
        if source.startswith("/dev/") and os.path.exists(source):
            rdev = os.stat(source).st_rdev
            major, minor = os.major(rdev), os.minor(rdev)
        else:
            raise HostCapabilityError(
                f"{p}: lies on a {fstype or 'virtual'} filesystem ({source or 'no source'}) with "
                "no block device of its own; set sensitivity.cgroup.device to the disk's MAJ:MIN"
            )
    if not (SYS_BLOCK / f"{major}:{minor}").exists():
        raise HostCapabilityError(f"{SYS_BLOCK}/{major}:{minor}: {p} is not on a block device")
    major, minor = _whole_disk(major, minor)
    return f"{major}:{minor}"
