#!/bin/sh
# Regenerates the perf stat files of the reader's tests from ONE recording, so every form holds
# the same counts and perf's own aggregated output is the known answer for the per-CPU, per-core,
# per-socket, per-die and per-node forms (perf stat record / perf stat report). Software events
# only: the host that made them (a 2-CPU VM) exposes no hardware PMU. Needs root or
# perf_event_paranoid <= 0 for -a.
set -eu
cd "$(dirname "$0")"
prog='import time
t=time.time(); x=[]
while time.time()-t<0.45: x.append(bytearray(4096))'
perf stat record -o rec.data -a -I 100 -e task-clock,page-faults,context-switches,cpu-clock \
  -- python3 -c "$prog" 2>/dev/null
perf stat -x, report -i rec.data > aggregated.csv 2>&1
perf stat -x, report -i rec.data -A > no_aggr.csv 2>&1
perf stat -x'|' report -i rec.data -A > no_aggr_pipe.csv 2>&1
perf stat -x"$(printf '\t')" report -i rec.data -A > no_aggr_tab.csv 2>&1
perf stat -x';' report -i rec.data --per-core > per_core_semicolon.csv 2>&1
perf stat -x, report -i rec.data --per-socket > per_socket.csv 2>&1
perf stat -x, report -i rec.data --per-die > per_die.csv 2>&1
perf stat -x, report -i rec.data --per-node > per_node.csv 2>&1
perf stat -j report -i rec.data > aggregated.json 2>&1
perf stat -j report -i rec.data -A > no_aggr.json 2>&1
perf stat -j report -i rec.data --per-core > per_core.json 2>&1
perf stat report -i rec.data > human.txt 2>&1
perf --version > perf_version.txt
rm -f rec.data
