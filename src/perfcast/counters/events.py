"""Counter lists: duplicate detection and the split into PMU-sized groups.

PMU slots are limited, so counters run in separate executions ("groups"); every group also
counts the base events (instructions, cycles) so each run has its own PKI base and the runs can be
joined on cumulative instructions (docs/methods/counters.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class BaseEvents:
    """The events that play the roles of instructions and cycles on this host."""

    instructions: str = "instructions"
    cycles: str = "cycles"

    @property
    def names(self) -> tuple[str, str]:
        return (self.instructions, self.cycles)


def _key(event: str) -> str:
    return re.sub(r"[^a-z0-9]", "", event.lower())


def check_unique(events: list[str]) -> None:
    """Refuse the same event listed twice under two spellings.

    Patkar's list names ``L1I_CACHE_REFILL`` and ``l1i_cache_refill`` (one PMU event, the raw
    ARM name and perf's alias): counting both would weigh it twice in the model.
    """
    seen: dict[str, str] = {}
    for ev in events:
        k = _key(ev)
        if k in seen:
            raise ValueError(
                f"counters.events lists one event twice: {seen[k]!r} and {ev!r}; keep one"
            )
        seen[k] = ev


def make_groups(events: list[str], group_size: int, base: BaseEvents) -> list[list[str]]:
    """Split ``events`` into runs of at most ``group_size`` events, base events first in each."""
    if group_size < 1:
        raise ValueError("group_size must be at least 1")
    check_unique(events)
    rest = [e for e in events if _key(e) not in {_key(b) for b in base.names}]
    chunks = [rest[i : i + group_size] for i in range(0, len(rest), group_size)] or [[]]
    return [[*base.names, *chunk] for chunk in chunks]


def pki_column(event: str) -> str:
    return f"{event}_pki"
