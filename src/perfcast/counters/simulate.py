"""Two-generation counter simulator: the embedded default data, and it says so.

No public data set has per-interval counters of the same benchmarks on two CPU generations, so the
default run simulates them (docs/methods/counters.md). A synthetic benchmark is a sequence of
program phases; a phase is a small vector of microarchitectural rates from which every counter's
events per kilo-instruction (PKI) follow. Each generation turns a phase into cycles with a
mechanistic CPI stack (Eyerman et al., "A mechanistic performance model for superscalar
out-of-order processors", TOCS 2009)::

    CPI_gen = base_gen(vector, fp) + sum_k penalty_{k,gen} * events_{k,gen} / 1000

with its own penalties and miss rates per generation. Group runs are separate executions, each with
its own speed jitter and per-interval noise, written in perf's exact ``-I -x,`` format. Because the
IPC ratio between generations is a function of the old generation's counters, the KNN stage can be
scored against it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np

from perfcast.counters.perfstat import format_perf_csv
from perfcast.errors import InputError

#: the most intervals one simulated run may take (scale 1 at 100 ms: about a thousand)
MAX_INTERVALS = 1_000_000
SIMULATED_HEADER = "Thu Jan  1 00:00:00 1970 (SIMULATED by perfcast: synthetic counters)"


@dataclass(frozen=True)
class Phase:
    """Microarchitectural rates of one program phase (per instruction unless noted)."""

    mem: float  # loads+stores per instruction
    l1d_miss: float  # L1D refills per L1D access
    l2_miss: float  # L2 refills per L2 access
    l3_miss: float  # L3 refills per L3 access
    dtlb: float  # L1D TLB refills per L1D access
    branch: float  # branches per instruction
    mispredict: float  # mispredicts per branch
    l1i_miss: float  # L1I refills per L1I access
    itlb: float  # L1I TLB refills per L1I access
    vector: float  # SIMD (ASE) fraction of instructions
    fp: float  # scalar FP fraction of instructions
    ginst: float  # length in 10^9 instructions


@dataclass(frozen=True)
class Generation:
    """A CPU generation: core clock, base CPI, miss-rate scaling and penalties in cycles."""

    name: str
    clock_ghz: float
    base_cpi: float
    vector_cpi: float
    fp_cpi: float
    l2_scale: float  # l2 refills relative to the reference design (bigger L2 -> < 1)
    l3_scale: float
    mispredict_scale: float
    pen_l1d: float
    pen_l2: float
    pen_dram: float
    pen_dtlb: float
    pen_l1i: float
    pen_itlb: float
    pen_branch: float


#: an older and a newer core (Neoverse-N1-like vs V1-like in spirit, not in calibration)
GENERATIONS = {
    "old": Generation("old", 2.5, 0.42, 0.55, 0.30, 1.00, 1.00, 1.00,
                      5.0, 22.0, 95.0, 7.0, 9.0, 12.0, 13.0),
    "new": Generation("new", 2.6, 0.36, 0.22, 0.22, 0.75, 0.70, 0.90,
                      4.0, 17.0, 70.0, 5.0, 8.0, 11.0, 12.0),
}

#: archetype phases shared by the synthetic benchmarks (each benchmark perturbs them)
ARCHETYPES: dict[str, Phase] = {
    "int": Phase(0.32, 0.010, 0.15, 0.20, 0.0010, 0.18, 0.010, 0.002, 0.0002, 0.00, 0.00, 1),
    "branchy": Phase(0.30, 0.015, 0.20, 0.25, 0.0015, 0.24, 0.050, 0.006, 0.0006, 0.00, 0.00, 1),
    "pointer": Phase(0.38, 0.080, 0.55, 0.60, 0.0150, 0.14, 0.020, 0.001, 0.0001, 0.00, 0.00, 1),
    "stream": Phase(0.42, 0.060, 0.35, 0.75, 0.0040, 0.06, 0.002, 0.001, 0.0001, 0.10, 0.25, 1),
    "vector": Phase(0.36, 0.020, 0.20, 0.30, 0.0020, 0.05, 0.004, 0.001, 0.0001, 0.40, 0.10, 1),
    "fp": Phase(0.34, 0.025, 0.30, 0.40, 0.0030, 0.08, 0.008, 0.001, 0.0001, 0.05, 0.35, 1),
    "frontend": Phase(0.28, 0.012, 0.25, 0.30, 0.0020, 0.20, 0.030, 0.030, 0.0040, 0.00, 0.02, 1),
    "startup": Phase(0.33, 0.040, 0.50, 0.60, 0.0080, 0.16, 0.030, 0.020, 0.0030, 0.00, 0.00, 1),
}

#: synthetic benchmarks: (archetype, length in 10^9 instructions) in program order; names echo
#: SPEC CPU 2017 workloads whose phase mix they imitate, nothing more
BENCHMARKS: dict[str, list[tuple[str, float]]] = {
    "perlbench": [("startup", 8), ("branchy", 60), ("int", 40), ("branchy", 50)],
    "gcc": [("startup", 10), ("frontend", 40), ("pointer", 20), ("frontend", 40), ("int", 20)],
    "mcf": [("startup", 5), ("pointer", 70), ("int", 10), ("pointer", 50)],
    "omnetpp": [("startup", 8), ("pointer", 40), ("branchy", 30), ("pointer", 40)],
    "xalancbmk": [("startup", 10), ("frontend", 50), ("pointer", 30), ("frontend", 30)],
    "x264": [("startup", 5), ("vector", 90), ("int", 20), ("vector", 60)],
    "deepsjeng": [("startup", 5), ("branchy", 110), ("int", 30)],
    "leela": [("startup", 5), ("branchy", 80), ("pointer", 15), ("branchy", 40)],
    "exchange2": [("startup", 3), ("int", 140), ("branchy", 30)],
    "xz": [("startup", 5), ("int", 50), ("pointer", 40), ("stream", 20)],
    "lbm": [("startup", 5), ("stream", 90), ("fp", 40)],
    "nab": [("startup", 5), ("fp", 80), ("vector", 30), ("fp", 30)],
    "imagick": [("startup", 5), ("vector", 60), ("fp", 50), ("stream", 20)],
    "cactus": [("startup", 10), ("fp", 60), ("stream", 40), ("fp", 30)],
    "namd": [("startup", 5), ("fp", 70), ("vector", 40)],
    "povray": [("startup", 5), ("fp", 40), ("branchy", 40), ("fp", 30)],
}

#: events the simulator can emit (Patkar's 25 counters, duplicates merged)
SIM_EVENTS = (
    "L1I_TLB_REFILL", "L1D_TLB_REFILL", "L3D_CACHE_ALLOCATE", "L3D_CACHE_REFILL", "L3D_CACHE",
    "l1i_cache", "l1i_cache_refill", "l1d_cache", "l1d_cache_refill", "l2d_cache",
    "l2d_cache_refill", "br_mis_pred", "br_pred", "mem_access", "stall_backend",
    "stall_frontend", "ASE_SPEC", "VFP_SPEC", "INST_SPEC", "BR_RETIRED", "BR_MIS_PRED_RETIRED",
    "branch-loads", "MEM_ACCESS_RD",
)


def stable_seed(*parts: object) -> int:
    """A seed from names and numbers that does not depend on Python's hash randomisation."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def benchmark_phases(name: str, seed: int, scale: float) -> list[Phase]:
    """The phases of synthetic benchmark ``name``, in program order.

    The plan lists (archetype, 10^9 instructions); each planned block becomes a few phases, each a
    blend of the block's archetype with another archetype of the same benchmark, perturbed a
    little: benchmarks share the archetypes, so the space of system states is covered by several
    benchmarks (the premise of Patkar's method). Unknown names get a random plan.

    Parameters
    ----------
    name : str
        the benchmark (a name of :data:`BENCHMARKS`, or any other).
    seed : int
        the workflow's seed.
    scale : float
        multiplies every phase's length (``counters.simulate.scale``).
    """
    rng = np.random.default_rng(stable_seed(seed, "benchmark", name))
    plan = BENCHMARKS.get(name)
    if plan is None:
        keys = sorted(k for k in ARCHETYPES if k != "startup")
        picks = rng.choice(keys, size=int(rng.integers(2, 5)))
        plan = [("startup", 5.0)] + [(str(k), float(rng.uniform(20, 80))) for k in picks]
    own = sorted({a for a, _ in plan if a != "startup"}) or ["int"]
    phases = []
    for arch, ginst in plan:
        n_sub = 1 if arch == "startup" else int(rng.integers(2, 5))
        cuts = np.sort(rng.uniform(0.15, 0.85, n_sub - 1))
        shares = np.diff(np.concatenate(([0.0], cuts, [1.0])))
        for share in shares:
            other = ARCHETYPES[own[int(rng.integers(len(own)))]]
            w = 1.0 if arch == "startup" else float(rng.uniform(0.55, 1.0))
            a = np.array(_rates(ARCHETYPES[arch]))
            b = np.array(_rates(other))
            vals = (w * a + (1 - w) * b) * rng.lognormal(0.0, 0.08, size=len(a))
            vals[1:5] = np.minimum(vals[1:5], 0.9)
            phases.append(Phase(*vals.tolist(), ginst=ginst * share * scale))
    return phases


def _rates(p: Phase) -> list[float]:
    return [p.mem, p.l1d_miss, p.l2_miss, p.l3_miss, p.dtlb, p.branch, p.mispredict,
            p.l1i_miss, p.itlb, p.vector, p.fp]


def phase_pki(phase: Phase, gen: Generation) -> dict[str, float]:
    """Events per kilo-instruction of ``phase`` on ``gen`` (cache sizes change miss counts)."""
    k = 1000.0
    l1d = phase.mem * 1.05 * k
    l1d_refill = l1d * phase.l1d_miss
    l1i = 0.26 * k
    l1i_refill = l1i * phase.l1i_miss
    l2 = l1d_refill + l1i_refill
    l2_refill = l2 * phase.l2_miss * gen.l2_scale
    l3 = l2_refill
    l3_refill = l3 * phase.l3_miss * gen.l3_scale
    br = phase.branch * k
    mis = br * 1.04 * phase.mispredict * gen.mispredict_scale
    pki = {
        "L1I_TLB_REFILL": l1i * phase.itlb,
        "L1D_TLB_REFILL": l1d * phase.dtlb,
        "L3D_CACHE_ALLOCATE": 0.6 * l3_refill,
        "L3D_CACHE_REFILL": l3_refill,
        "L3D_CACHE": l3,
        "l1i_cache": l1i,
        "l1i_cache_refill": l1i_refill,
        "l1d_cache": l1d,
        "l1d_cache_refill": l1d_refill,
        "l2d_cache": l2,
        "l2d_cache_refill": l2_refill,
        "br_mis_pred": mis,
        "br_pred": br * 1.04,
        "mem_access": phase.mem * k,
        "ASE_SPEC": phase.vector * k,
        "VFP_SPEC": phase.fp * k,
        "INST_SPEC": k * (1.02 + 4.0 * mis / k),
        "BR_RETIRED": br,
        "BR_MIS_PRED_RETIRED": br * phase.mispredict * gen.mispredict_scale,
        "branch-loads": br * 1.01,
        "MEM_ACCESS_RD": 0.66 * phase.mem * k,
    }
    backend, frontend = cpi_stack(phase, gen, pki)
    pki["stall_backend"] = backend * k
    pki["stall_frontend"] = frontend * k
    return pki


def cpi_stack(phase: Phase, gen: Generation, pki: dict[str, float]) -> tuple[float, float]:
    """Backend and frontend stall cycles per instruction of the mechanistic CPI model.

    Parameters
    ----------
    phase : Phase
        the program phase.
    gen : Generation
        the simulated core.
    pki : dict of str to float
        the phase's events per kilo-instruction on this core (:func:`phase_pki`).
    """
    backend = (
        gen.pen_l1d * pki["l1d_cache_refill"]
        + gen.pen_l2 * pki["l2d_cache_refill"]
        + gen.pen_dram * pki["L3D_CACHE_REFILL"]
        + gen.pen_dtlb * pki["L1D_TLB_REFILL"]
    ) / 1000.0 + gen.vector_cpi * phase.vector + gen.fp_cpi * phase.fp
    frontend = (
        gen.pen_l1i * pki["l1i_cache_refill"]
        + gen.pen_itlb * pki["L1I_TLB_REFILL"]
        + gen.pen_branch * pki["BR_MIS_PRED_RETIRED"]
    ) / 1000.0
    return backend, frontend


def phase_cpi(phase: Phase, gen: Generation) -> float:
    """CPI = base + backend stalls + frontend stalls."""
    backend, frontend = cpi_stack(phase, gen, phase_pki(phase, gen))
    return gen.base_cpi + backend + frontend


def generation_for(role: str, clock_ghz: float | None = None) -> Generation:
    """The simulated core of ``role`` (``"old"``/``"new"``), at ``clock_ghz`` when given."""
    gen = GENERATIONS[role]
    return replace(gen, clock_ghz=clock_ghz) if clock_ghz else gen


def simulate_run(
    phases: list[Phase],
    gen: Generation,
    events: list[str],
    *,
    interval_s: float,
    rng: np.random.Generator,
    noise: float,
    jitter: float,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """One perf run: interval end times and per-interval counts of ``events``.

    The run walks the instruction stream phase by phase; each interval gets ``clock * dt`` cycles
    (the core is busy throughout), slowed by this run's speed jitter and an AR(1) per-interval
    noise. Event counts are the phase PKI times the interval's instructions, with noise.

    Parameters
    ----------
    phases : list of Phase
        the benchmark's phases, in program order.
    gen : Generation
        the simulated core.
    events : list of str
        the events to count (``instructions`` and ``cycles`` included).
    interval_s : float
        the interval length (``perf stat -I``, in seconds).
    rng : numpy.random.Generator
        this run's random numbers.
    noise : float
        relative noise of the per-interval rates (``counters.simulate.noise``).
    jitter : float
        relative speed jitter of the run (``counters.simulate.jitter``).

    Raises
    ------
    InputError
        a run that would take more than :data:`MAX_INTERVALS` intervals (the scale, interval
        and clock together; each within its own bound may still multiply to days of work).
    """
    unknown = [e for e in events if e not in SIM_EVENTS and e not in ("instructions", "cycles")]
    if unknown:
        raise ValueError(f"the simulator has no model for event(s) {unknown}; "
                         f"it knows {list(SIM_EVENTS)}")
    cpis = np.array([phase_cpi(p, gen) for p in phases])
    pkis = [phase_pki(p, gen) for p in phases]
    remaining = np.array([p.ginst * 1e9 for p in phases])
    # run-to-run IPC differs far less than timing does
    run_speed = 1.0 + 0.1 * jitter * rng.standard_normal()
    cycles_per_interval = gen.clock_ghz * 1e9 * interval_s
    intervals = float(np.sum(cpis * remaining)) / cycles_per_interval
    if not intervals <= MAX_INTERVALS:  # (each is a line per event of the perf file)
        raise InputError(None, f"the simulated run would take about {intervals:.3g} intervals "
                               f"of {interval_s * 1000:g} ms at {gen.clock_ghz:g} GHz",
                         expected=f"at most {MAX_INTERVALS:,}: a smaller counters.simulate."
                                  "scale, a longer counters.interval_ms or a faster "
                                  "counters.clock_ghz")
    times, instr, cyc = [], [], []
    ev_counts: dict[str, list[float]] = {e: [] for e in events}
    t, ar, k = 0.0, 0.0, 0
    while k < len(phases):
        ar = 0.6 * ar + noise * 0.3 * rng.standard_normal()
        slow = max(0.5, run_speed * (1.0 + ar))
        budget = cycles_per_interval * (1.0 + 2e-4 * rng.standard_normal())
        used_cycles = 0.0
        n_instr = 0.0
        acc = dict.fromkeys(events, 0.0)
        while k < len(phases) and used_cycles < budget:
            cpi = cpis[k] * slow
            can = (budget - used_cycles) / cpi
            take = min(can, remaining[k])
            used_cycles += take * cpi
            n_instr += take
            for e in events:
                if e in pkis[k]:
                    acc[e] += pkis[k][e] * take / 1000.0
            remaining[k] -= take
            if remaining[k] <= 0.5:
                k += 1
        dt = interval_s * used_cycles / budget
        stretch = 1.0 + jitter * 0.05 * abs(rng.standard_normal())
        t += dt * stretch + abs(1.2e-4 * rng.standard_normal())
        times.append(t)
        instr.append(n_instr)
        cyc.append(used_cycles)
        for e in events:
            if e == "instructions":
                ev_counts[e].append(n_instr)
            elif e == "cycles":
                ev_counts[e].append(used_cycles)
            else:
                mean = acc[e]
                ev_counts[e].append(max(0.0, mean * (1.0 + noise * rng.standard_normal())))
    return np.array(times), {e: np.array(v) for e, v in ev_counts.items()}


def simulate_group_csv(
    benchmark: str,
    role: str,
    group: int,
    events: list[str],
    *,
    seed: int,
    interval_ms: int,
    clock_ghz: float | None,
    scale: float,
    noise: float,
    jitter: float,
    base: tuple[str, str],
    run_variation: float,
) -> str:
    """perf ``-I -x,`` text of group run ``group`` of ``benchmark`` on generation ``role``.

    Parameters
    ----------
    benchmark : str
        a name of :data:`BENCHMARKS` (any other name gets a random plan).
    role : str
        ``"old"`` or ``"new"`` (:data:`GENERATIONS`).
    group : int
        the group run's index (each run has its own noise and jitter).
    events : list of str
        the group's events; the base events are emitted under their configured names.
    seed : int
        the workflow's seed; with ``benchmark``, ``role`` and ``group`` it fixes the run.
    interval_ms : int
        ``perf stat -I`` interval.
    clock_ghz : float or None
        the generation's clock (None: the simulated core's own).
    scale, noise, jitter : float
        ``counters.simulate`` (see :func:`simulate_run`).
    base : (str, str)
        the events playing instructions and cycles (``counters.base_events``).
    run_variation : float
        ``counters.simulate.run_variation``: each phase of this run retires a factor
        drawn uniformly from ``[1 - v, 1 + v]`` of its instructions (separate runs of one program
        differ: allocator paths, spin loops, timers), so no two group runs have equal totals.

    Raises
    ------
    ValueError
        an event the simulator has no model for.

    Examples
    --------
    The same seed, benchmark, generation and group give the same run; another group run of
    it has its own noise:

    >>> kw = dict(seed=7, interval_ms=100, clock_ghz=None, scale=0.02, noise=0.05,
    ...           jitter=0.02, base=("instructions", "cycles"), run_variation=0.03)
    >>> events = ["instructions", "cycles", "l1d_cache_refill"]
    >>> a = simulate_group_csv("mcf", "old", 0, events, **kw)
    >>> a == simulate_group_csv("mcf", "old", 0, events, **kw)
    True
    >>> a == simulate_group_csv("mcf", "old", 1, events, **kw)
    False
    >>> a.splitlines()[2].split(",")[3]  # perf's -I -x, layout: time,count,unit,event,...
    'instructions'
    """
    phases = benchmark_phases(benchmark, seed, scale)
    gen = generation_for(role, clock_ghz)
    rng = np.random.default_rng(stable_seed(seed, "run", benchmark, role, group))
    if run_variation:
        phases = [replace(p, ginst=p.ginst * (1.0 + run_variation * rng.uniform(-1.0, 1.0)))
                  for p in phases]
    sim_events = [
        "instructions" if e == base[0] else "cycles" if e == base[1] else e for e in events
    ]
    times, counts = simulate_run(phases, gen, sim_events, interval_s=interval_ms / 1000.0,
                                 rng=rng, noise=noise, jitter=jitter)
    named = {name: counts[sim] for name, sim in zip(events, sim_events, strict=True)}
    return format_perf_csv(times, named, header=SIMULATED_HEADER)
