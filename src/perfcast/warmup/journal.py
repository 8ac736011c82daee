"""Durable per-round journal: each finished round is appended (and fsync'ed) as it completes.

A JSON-lines file: a header line with the measurement key and the host (its name and CPU
model), then one line per round. A run that is killed keeps every round it finished; the next
run reads them back and carries on. A last line cut off by the kill is dropped (and truncated
away before new rounds are appended). A journal with another key (another command or planner)
is set aside as ``*.stale`` and a new one started, and so is one that records no host (written
before hosts were recorded).

Rounds from two machines must not be pooled into one mean and CI (pyperf likewise refuses to
merge runs whose checked metadata, host name and CPU model among them, differ): resuming a
journal written on another host or CPU model is refused, naming both, unless explicitly
allowed (``warmup.session.allow_other_host``); an allowed switch is recorded in the journal as
a ``host`` line before the new rounds.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import socket
from pathlib import Path

from perfcast.errors import InputError
from perfcast.warmup.runner import RoundRecord

log = logging.getLogger(__name__)
VERSION = 2
#: the host metadata that must match for rounds to be pooled
CHECKED = ("hostname", "cpu_model")


def cpu_model(cpuinfo: str | Path = "/proc/cpuinfo") -> str:
    """The CPU model: ``model name`` of ``/proc/cpuinfo`` (x86), else its ``CPU implementer`` /
    ``CPU part`` (Arm), else :func:`platform.processor`, else ``"unknown"``."""
    fields: dict[str, str] = {}
    try:
        for line in Path(cpuinfo).read_text(errors="replace").splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() not in fields:
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    if fields.get("model name"):
        return fields["model name"]
    if fields.get("CPU part"):
        return f"implementer {fields.get('CPU implementer', '?')} part {fields['CPU part']}"
    return platform.processor() or "unknown"


def host_metadata() -> dict[str, str]:
    """This host's name, CPU model and architecture (what a journal records)."""
    return {"hostname": socket.gethostname(), "cpu_model": cpu_model(),
            "machine": platform.machine()}


class HostMismatchError(InputError):
    """A journal's rounds were measured on another host or CPU model."""


class Journal:
    """The journal at ``path`` of the rounds measured under ``key``
    (:meth:`perfcast.warmup.settings.SessionSettings.measurement_key`)."""

    def __init__(self, path: str | Path, key: str, *, allow_other_host: bool,
                 host: dict[str, str] | None = None) -> None:
        self.path = Path(path)
        self.key = key
        self.allow_other_host = allow_other_host
        self.host = host_metadata() if host is None else host
        #: the hosts of the rounds, in order: the header's, then one per allowed switch
        self.hosts: list[dict[str, str]] = []

    def load(self) -> list[RoundRecord]:
        """Rounds recorded so far under this key (creating the journal if needed).

        Raises
        ------
        HostMismatchError
            the journal was written on another host or CPU model (:data:`CHECKED`) and
            ``allow_other_host`` is false.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():
            self._start()
            self.hosts = [dict(self.host)]
            return []
        good_bytes = 0
        records: list[RoundRecord] = []
        hosts: list[dict[str, str]] = []
        header = None
        with open(self.path, "rb") as fh:
            for raw in fh:
                if not raw.endswith(b"\n"):
                    break  # cut off by a kill
                try:
                    obj = json.loads(raw)
                except json.JSONDecodeError:
                    break
                if header is None:
                    header = obj
                    if not self._ours(obj):
                        break
                elif obj.get("kind") == "round":
                    records.append(RoundRecord.from_json(obj))
                elif obj.get("kind") == "host":
                    hosts.append(obj.get("host") or {})
                good_bytes += len(raw)
        if header is None or not self._ours(header):
            stale = self.path.with_suffix(self.path.suffix + ".stale")
            log.warning("journal %s belongs to other settings; moved to %s", self.path, stale)
            os.replace(self.path, stale)
            self._start()
            self.hosts = [dict(self.host)]
            return []
        if good_bytes < self.path.stat().st_size:
            log.warning("journal %s: dropping a partly written last line", self.path)
            with open(self.path, "rb+") as fh:
                fh.truncate(good_bytes)
                os.fsync(fh.fileno())
        # rounds are numbered by position: a resumed run continues the numbering
        for i, r in enumerate(records):
            if r.round != i:
                raise ValueError(f"journal {self.path}: round {r.round} at position {i}")
        self.hosts = [header.get("host") or {}, *hosts]
        self._check_host(len(records))
        log.info("journal %s: %d round(s) recorded", self.path, len(records))
        return records

    def _ours(self, header: dict) -> bool:
        """A header of this key that records its host (an older journal without one cannot say
        which machine measured its rounds: set aside like one of another key)."""
        return header.get("kind") == "header" and header.get("key") == self.key and \
            isinstance(header.get("host"), dict)

    def _check_host(self, rounds: int) -> None:
        last = self.hosts[-1]
        if all(last.get(k) == self.host.get(k) for k in CHECKED):
            return
        theirs = ", ".join(f"{k} {last.get(k, 'not recorded')!r}" for k in CHECKED)
        ours = ", ".join(f"{k} {self.host.get(k)!r}" for k in CHECKED)
        if not self.allow_other_host:
            raise HostMismatchError(
                self.path, f"its {rounds} round(s) were measured on {theirs}; this is {ours}, "
                "and rounds from two machines must not be pooled",
                expected="the same host, or remove the journal to start afresh, or set "
                         "warmup.session.allow_other_host: true to resume anyway")
        log.warning("journal %s: resuming rounds of %s on %s (allow_other_host)", self.path,
                    theirs, ours)
        self._write_line({"kind": "host", "host": self.host, "after_round": rounds})
        self.hosts.append(dict(self.host))

    def append(self, record: RoundRecord) -> None:
        """Append a finished round, flushed and fsync'ed before returning."""
        self._write_line({"kind": "round", **record.to_json()})

    def _start(self) -> None:
        with open(self.path, "w") as fh:
            fh.write(json.dumps({"kind": "header", "key": self.key, "version": VERSION,
                                 "host": self.host}, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def _write_line(self, obj: dict) -> None:
        with open(self.path, "a") as fh:
            fh.write(json.dumps(obj, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
