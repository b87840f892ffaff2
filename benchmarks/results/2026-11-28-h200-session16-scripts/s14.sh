#!/usr/bin/env bash
# Prepared in session 16 for the next session (not run: no device time left). The 8B f16 load's staging writes (2.44
# of its 3.81 s in S10) with 8 threads into write-combined memory (default) against cached memory
# (BLUESHIFT_UPLOAD_MEMORY=cached), alternating; the 8B q4_k_m too. With one thread the two wrote alike (S7); with 8,
# write-combined memory topped out near 11 GB/s (S9). Predicted: if cached memory scales with threads, staging writes
# 2.4 -> ~1 s and the load ~3.8 -> ~2.5 s; if not, equal. Copy to .dev/s16/ and carry .gl, .dev/carry and .dev/s16.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
ld() { local m=$1; shift; echo "== $m $*"; env "$@" BLUESHIFT_LOAD_STATS=1 timeout 60 $BS blueshift bench --model /tmp/$m --load-only 2>&1 | tail -3; }
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1
for i in 1 2; do ld m8q BLUESHIFT_UPLOAD_MEMORY=wc; ld m8q BLUESHIFT_UPLOAD_MEMORY=cached; done
rm -rf /tmp/m8q; $BS blueshift convert /tmp/h8 /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h8
for i in 1 2; do ld m8f BLUESHIFT_UPLOAD_MEMORY=wc; ld m8f BLUESHIFT_UPLOAD_MEMORY=cached; ld m8f BLUESHIFT_UPLOAD_MEMORY=cached BLUESHIFT_COPY_THREADS=16; done
stamp done
