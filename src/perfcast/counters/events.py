"""perf event names and counter lists: what a name stands for in perf's output, duplicate
detection and the split into PMU-sized groups.

Every place that matches a configured event to what perf printed (the interval and whole-run
readers, the collection's check, the sweep's perf sensor) goes through :func:`split_event`,
:func:`resolve_event` and :func:`claim_events`. perf prints an event as it was asked for plus
its modifiers: ``cycles:kpp``, ``cpu_core/instructions/u``. For a user without
``CAP_PERFMON`` and ``perf_event_paranoid`` >= 2 perf restricts every event to user mode and
appends ``:u`` itself (``task-clock`` is printed ``task-clock:u``); a configured name without a
privilege modifier stands for that event (:func:`resolve_event`), and the scheduler's software
events, which happen in the kernel and so never count in user mode, are told apart
(:func:`user_mode_blind`): perf prints 0 for them, which is no count.

PMU slots are limited, so counters run in separate executions ("groups"); every group also
counts the base events (instructions, cycles) so each run has its own PKI base and the runs can be
joined on cumulative instructions (docs/methods/counters.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from perfcast.counters.settings import BaseEvents
from perfcast.errors import InputError

__all__ = ["BaseEvents", "USER_ONLY", "check_unique", "claim_events", "make_groups",
           "pki_column", "resolve_event", "split_event", "split_event_list", "user_mode_blind"]


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


# --- event names: modifiers and hybrid PMUs ------------------------------------------------------

_PMU_EVENT = re.compile(r"(?P<pmu>[A-Za-z0-9_]+)/(?P<body>[^/]*)/(?P<mods>[A-Za-z]*)")
_PLAIN_EVENT = re.compile(r"(?P<body>[^:/]+)(:(?P<mods>[A-Za-z]+))?")


#: modifiers that change what is counted (privilege level, guest/host, idle); the others (``p``
#: precise, ``D`` pinned, ``S`` sampled read, ``e`` exclusive, ``W`` weak group, ...) only change
#: how, so ``instructions:D`` still plays the role of ``instructions``
_COUNTING_MODIFIERS = frozenset("ukhGHI")

#: the counting modifiers perf gives every event of a user it restricts to user mode
#: (``perf_event_paranoid`` >= 2 without ``CAP_PERFMON``): ``task-clock`` is printed
#: ``task-clock:u``, ``cpu_core/cycles/`` ``cpu_core/cycles/u``
USER_ONLY = "u"

#: perf's software events that the scheduler counts in the kernel's own context (a task switched
#: out or moved to another CPU): restricted to user mode they never count and perf prints 0
#: (``perf stat -e context-switches:u``: 0 where the same run as root counts 39 to 47)
_KERNEL_CONTEXT_EVENTS = frozenset({"context-switches", "cs", "cpu-migrations", "migrations",
                                    "cgroup-switches"})


def split_event(name: str) -> tuple[str, str, str]:
    """The PMU, the event and its counting modifiers, of an event as configured or as perf
    prints it.

    Only the modifiers that change what is counted are kept, sorted; raw events keep their whole
    text as the name.

    Parameters
    ----------
    name : str
        The event: ``cycles``, ``cycles:kpp``, ``cpu_core/instructions/u``,
        ``cha/event=0x34,umask=0x1fe001/``.

    Returns
    -------
    tuple of str
        ``(pmu, name, modifiers)``; ``pmu`` empty for an event without one.

    Examples
    --------
    >>> split_event("cpu_core/instructions/u")
    ('cpu_core', 'instructions', 'u')
    >>> split_event("cycles:kpp")
    ('', 'cycles', 'k')
    >>> split_event("instructions:D")
    ('', 'instructions', '')
    """
    m = _PMU_EVENT.fullmatch(name)
    if m and "=" not in m["body"]:
        body, mods = m["body"], m["mods"]
        if ":" in body:
            body, _, inner = body.partition(":")
            mods += inner
        return m["pmu"], body, _counting(mods)
    m = _PLAIN_EVENT.fullmatch(name)
    if m:
        return "", m["body"], _counting(m["mods"] or "")
    return "", name, ""


def _counting(mods: str) -> str:
    return "".join(sorted(set(mods) & _COUNTING_MODIFIERS))


def resolve_event(wanted: str, available: Iterable[str]) -> list[str]:
    """The events of perf's output that ``wanted`` (a configured name) stands for.

    The exact name if present. Otherwise a name without a PMU stands for that event with the
    same counting modifiers (``u``, ``k``, ...; ``:D`` or ``:pp`` do not change the count) on
    every PMU that reports it (``instructions`` -> ``cpu_core/instructions/``
    and ``cpu_atom/instructions/`` on a hybrid CPU: the program ran on both kinds of core, so
    its count is their sum); a name with a PMU stands for that PMU's event only. A name without
    a counting modifier that matches nothing so stands for the event with perf's user-mode
    restriction (:data:`USER_ONLY`), which perf appends itself for a user it restricts.

    Parameters
    ----------
    wanted : str
        The configured name.
    available : iterable of str
        The events as perf printed them.

    Returns
    -------
    list of str
        The printed events ``wanted`` stands for, in their order; empty when none.

    Examples
    --------
    >>> resolve_event("task-clock", ["task-clock:u", "page-faults:u"])
    ['task-clock:u']
    >>> resolve_event("instructions", ["cpu_core/instructions/u", "cpu_atom/instructions/u"])
    ['cpu_core/instructions/u', 'cpu_atom/instructions/u']
    >>> resolve_event("instructions:D", ["instructions:u"]), resolve_event("cycles:k", ["cycles"])
    (['instructions:u'], [])
    """
    available = list(available)
    if wanted in available:
        return [wanted]
    pmu, body, mods = split_event(wanted)
    same = [split_event(ev) for ev in available]
    for accepted in (mods, USER_ONLY if not mods else None):
        found = [ev for ev, (p, b, m) in zip(available, same, strict=True)
                 if accepted is not None and b == body and m == accepted
                 and (p == pmu or not pmu)]
        if found:
            return found
    return []


def user_mode_blind(printed: str) -> str | None:
    """Why an event as perf printed it cannot count, if it is one of the scheduler's software
    events restricted to user mode (perf prints 0 for it); else None.

    Parameters
    ----------
    printed : str
        The event as perf printed it (``context-switches:u``).

    Returns
    -------
    str or None
        The reason, said wherever the event is reported as not counted.

    Examples
    --------
    >>> user_mode_blind("context-switches:u") is None, user_mode_blind("page-faults:u") is None
    (False, True)
    >>> user_mode_blind("context-switches") is None
    True
    """
    pmu, body, mods = split_event(printed)
    if pmu not in ("", "software") or body not in _KERNEL_CONTEXT_EVENTS:
        return None
    if "u" not in mods or "k" in mods:
        return None
    return (f"{printed} counts nothing: perf restricted it to user mode (perf_event_paranoid "
            ">= 2 for a user without CAP_PERFMON) and the scheduler counts it in the kernel; "
            "run as root or with CAP_PERFMON to count it")


def claim_events(names: Iterable[str], present: Sequence[str], path: str | Path,
                 required: Iterable[str] = ()) -> dict[str, list[str]]:
    """The events of a file each configured name stands for (:func:`resolve_event`), each name
    on its own: ``{name: events}``, in the order of ``names``, a name the file lacks left out.

    Every name gets exactly the rows it names, whatever else is configured: ``a`` the sum of
    ``cpu_core/a/`` and ``cpu_atom/a/`` even beside ``cpu_core/a/``, which gets its PMU's rows.
    What the names do not define is refused: two names that stand for the same rows
    (``instructions`` and ``instructions:D`` where the file has ``instructions`` only: one event
    configured twice, its PKI 1000 by construction) and one name that stands for two events on
    one PMU, or for an event without a PMU beside one with (``a:p`` for both ``a`` and ``a:D``:
    one count read twice, a sum of the two would double it).

    Parameters
    ----------
    names : iterable of str
        the configured names.
    present : sequence of str
        the events of the file.
    path : str or Path
        the file (for errors).
    required : iterable of str, default=()
        the names the file must have (a missing one is an error).

    Raises
    ------
    InputError
        naming the file and the name(s): a required name the file lacks, a name for two copies
        of one count, two names for the same rows.
    """
    required = set(required)
    claims: dict[str, list[str]] = {}
    owner: dict[tuple[str, ...], str] = {}
    for name in dict.fromkeys(names):
        found = resolve_event(name, present)
        if not found:
            if name in required:
                raise InputError(path, f"event {name!r} is missing",
                                 expected=f"{name} in every group run (found {list(present)[:10]})")
            continue
        pmus = [split_event(ev)[0] for ev in found]
        if len(found) > 1 and (len(set(pmus)) < len(pmus) or "" in pmus):
            raise InputError(path, f"event {name!r} stands for {found} in the file: copies of one "
                                   "count on one PMU (or with and without a PMU), whose sum counts "
                                   "it twice", expected="the exact name of one of them")
        key = tuple(sorted(found))
        if key in owner:
            raise InputError(path, f"events {owner[key]!r} and {name!r} both stand for "
                                   f"{list(key)} in the file: one event configured twice",
                             expected="each event configured once: keep one of the two names")
        owner[key] = name
        claims[name] = found
    return claims
