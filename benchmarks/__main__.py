"""Run every benchmark script in this folder (``python -m benchmarks``)."""

import runpy
import sys
from pathlib import Path

for script in sorted(Path(__file__).parent.glob("bench_*.py")):
    if len(sys.argv) > 1 and not any(a in script.name for a in sys.argv[1:]):
        continue
    print(f"== {script.name}", flush=True)
    runpy.run_path(str(script), run_name="__main__")
