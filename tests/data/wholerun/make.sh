#!/bin/sh
# Regenerates the whole-run perf stat files of the whole-run reader's tests: real `perf stat`
# runs WITHOUT -I of four small Python programs, each twice ("here" and "again": the two
# "generations" are two runs on the same host), every run once as `-x,` and once as `-j`.
# Software events only: the host that made them (a 2-CPU VM) exposes no hardware PMU, so
# task-clock and cpu-clock play the roles of instructions and cycles; duration_time gives the
# wall time.
set -eu
cd "$(dirname "$0")"
events=task-clock,cpu-clock,page-faults,context-switches,duration_time
run() {  # machine bench program
  mkdir -p "$1"
  perf stat -x, -e "$events" -o "$1/$2.csv" -- python3 -c "$3"
  perf stat -j -e "$events" -o "$1/$2.json" -- python3 -c "$3"
}
for m in here again; do
  run "$m" alloc 'x=[bytearray(4096) for _ in range(40000)]'
  run "$m" spin 's=sum(i * i for i in range(1500000))'
  run "$m" sort 'import random; r=random.Random(1); a=[r.random() for _ in range(300000)]; a.sort()'
  run "$m" text 's="".join(str(i) for i in range(400000)); t=s.count("7")'
done
perf --version > perf_version.txt
