"""Stage 1: hardware counters per benchmark and CPU generation (collect, parse, post-process)."""
