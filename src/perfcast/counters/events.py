"""Counter lists: duplicate detection and the split into PMU-sized groups.

PMU slots are limited, so counters run in separate executions ("groups"); every group also
counts the base events (instructions, cycles) so each run has its own PKI base and the runs can be
joined on cumulative instructions (docs/methods/counters.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from perfcast.counters.settings import BaseEvents

__all__ = ["BaseEvents", "check_unique", "make_groups", "pki_column", "split_event_list"]


def _key(event: str) -> str:
    return re.sub(r"[^a-z0-9]", "", event.lower())


def check_unique(events: Sequence[str]) -> None:
    """Refuse the same event listed twice under two spellings.

    Patkar's list names ``L1I_CACHE_REFILL`` and ``l1i_cache_refill`` (one PMU event, the raw
    ARM name and perf's alias): counting both would weigh it twice in the model. Names are
    compared case-insensitively with punctuation removed.

    Raises
    ------
    ValueError
        naming both spellings.
    """
    seen: dict[str, str] = {}
    for ev in events:
        k = _key(ev)
        if k in seen:
            raise ValueError(
                f"counters.events lists one event twice: {seen[k]!r} and {ev!r}; keep one"
            )
        seen[k] = ev


def make_groups(events: Sequence[str], group_size: int, base: BaseEvents) -> list[list[str]]:
    """Split ``events`` into runs of at most ``group_size`` events, base events first in each.

    Parameters
    ----------
    events : sequence of str
        ``counters.events`` (a base event listed there is not counted twice).
    group_size : int
        ``counters.group_size``, events per run besides the base events.
    base : BaseEvents
        ``counters.base_events``.

    Returns
    -------
    list of list of str
        one event list per group run (at least one: the base events alone).

    Raises
    ------
    ValueError
        ``group_size`` below 1, or an event listed twice (:func:`check_unique`).
    """
    if group_size < 1:
        raise ValueError("group_size must be at least 1")
    check_unique(events)
    rest = [e for e in events if _key(e) not in {_key(b) for b in base.names}]
    chunks = [rest[i : i + group_size] for i in range(0, len(rest), group_size)] or [[]]
    return [[*base.names, *chunk] for chunk in chunks]


def pki_column(event: str) -> str:
    """The table column of ``event`` per kilo-instruction: ``<event>_pki``."""
    return f"{event}_pki"


def split_event_list(text: str) -> list[str]:
    """The events of a comma-separated list, as perf's ``-e`` reads it: a comma between a PMU's
    slashes belongs to the event (``cha/event=0x34,umask=0x1fe001/``), any other one separates
    two events; empty items are dropped.

    Examples
    --------
    >>> split_event_list("instructions,cha/event=0x34,umask=0x1fe001/,cycles:u")
    ['instructions', 'cha/event=0x34,umask=0x1fe001/', 'cycles:u']
    """
    events, current, inside = [], [], False
    for c in text:
        if c == "/":
            inside = not inside
        if c == "," and not inside:
            events.append("".join(current))
            current = []
        else:
            current.append(c)
    events.append("".join(current))
    return [e.strip() for e in events if e.strip()]
