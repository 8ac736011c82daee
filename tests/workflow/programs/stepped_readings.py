"""A workload whose unit readings have a known warm-up, for the warm-up stage's workflow test.

``python stepped_readings.py WORK SEED`` prints WORK unit readings: the first quarter at twice
the plateau's latency (a step warm-up), the rest at the plateau of 100 us, each with 5 % seeded
Gaussian noise, as they complete: it sleeps each batch of readings' sum before printing it, so
that a round takes time and its lines arrive as a real workload's do. The
readings depend on WORK and SEED only, so the stage's analysis of them (phases, stable segment,
warm-up length) is the same whatever the machine's load; only the rounds' measured durations
vary. The real measured workload (perfcast.workloads.kvstore) runs in ``make run`` and in
tests/workflow/test_repository_alone.py.
"""

import random
import sys
import time

PLATEAU_S = 1e-4


def readings(work: int, seed: int) -> list[float]:
    rng = random.Random(seed * 1_000_003 + work)
    warm = work // 4
    return [(2.0 if i < warm else 1.0) * PLATEAU_S * (1 + 0.05 * rng.gauss(0, 1))
            for i in range(work)]


BATCH = 20

if __name__ == "__main__":
    values = readings(int(sys.argv[1]), int(sys.argv[2]))
    for k in range(0, len(values), BATCH):
        batch = values[k:k + BATCH]
        time.sleep(sum(batch))
        sys.stdout.write("".join(f"{v:.9f}\n" for v in batch))
        sys.stdout.flush()
