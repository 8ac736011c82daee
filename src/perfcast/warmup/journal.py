"""Durable per-round journal: each finished round is appended (and fsync'ed) as it completes.

A JSON-lines file: a header line with the measurement key, then one line per round. A run that
is killed keeps every round it finished; the next run reads them back and carries on. A last
line cut off by the kill is dropped (and truncated away before new rounds are appended). A
journal with another key (another command or planner) is set aside as ``*.stale`` and a new one
started.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from perfcast.warmup.runner import RoundRecord

log = logging.getLogger(__name__)
VERSION = 1


class Journal:
    """The journal at ``path`` of the rounds measured under ``key``
    (:meth:`perfcast.warmup.settings.SessionSettings.measurement_key`)."""

    def __init__(self, path: str | Path, key: str) -> None:
        self.path = Path(path)
        self.key = key

    def load(self) -> list[RoundRecord]:
        """Rounds recorded so far under this key (creating the journal if needed)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():
            self._start()
            return []
        good_bytes = 0
        records: list[RoundRecord] = []
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
                    if obj.get("kind") != "header" or obj.get("key") != self.key:
                        break
                elif obj.get("kind") == "round":
                    records.append(RoundRecord.from_json(obj))
                good_bytes += len(raw)
        if header is None or header.get("kind") != "header" or header.get("key") != self.key:
            stale = self.path.with_suffix(self.path.suffix + ".stale")
            log.warning("journal %s belongs to other settings; moved to %s", self.path, stale)
            os.replace(self.path, stale)
            self._start()
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
        log.info("journal %s: %d round(s) recorded", self.path, len(records))
        return records

    def append(self, record: RoundRecord) -> None:
        """Append a finished round, flushed and fsync'ed before returning."""
        self._write_line({"kind": "round", **record.to_json()})

    def _start(self) -> None:
        with open(self.path, "w") as fh:
            fh.write(json.dumps({"kind": "header", "key": self.key, "version": VERSION}) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def _write_line(self, obj: dict) -> None:
        with open(self.path, "a") as fh:
            fh.write(json.dumps(obj, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
