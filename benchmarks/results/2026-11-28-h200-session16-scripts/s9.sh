#!/usr/bin/env bash
# Session 16, S9: load time with large host copies split across threads (runtime/base/parallel.h) against one thread
# (BLUESHIFT_COPY_THREADS=1), 8B q4_k_m and f16, alternating. Predicted: 8B f16 8.0-8.5 -> ~2.5-3 s, 8B q4_k_m 1.7-2.5 ->
# ~1.0-1.3 s.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nproc; grep -m1 "model name" /proc/cpuinfo
ld() { local m=$1; shift; echo "== $m $*"; env "$@" BLUESHIFT_LOAD_STATS=1 timeout 60 $BS blueshift bench --model /tmp/$m --load-only 2>&1 | tail -3; }
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1
stamp convert
for i in 1 2; do ld m8q BLUESHIFT_COPY_THREADS=1; ld m8q X=1; done
ld m8q BLUESHIFT_COPY_THREADS=16
rm -rf /tmp/m8q; $BS blueshift convert /tmp/h8 /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h8
stamp convert
for i in 1 2; do ld m8f BLUESHIFT_COPY_THREADS=1; ld m8f X=1; done
ld m8f BLUESHIFT_COPY_THREADS=16
stamp done
