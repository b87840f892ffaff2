#!/usr/bin/env bash
# For the next session (not run): where the H100 host's ~6 us a recorded dispatch goes (bs_prefill_profile --record,
# 091e2a3), with and without object names; and serve's TTFT with the prefill in parts (870124f) against one
# command buffer. Carry .gl, .dev/carry (the bundle) and this file's folder as .dev/s13.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
which perf || echo "no perf on the lease"
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h1
$BS bs_prefill_profile /tmp/m1q --tokens 512 --record 20
BLUESHIFT_DEBUG_NAMES=1 $BS bs_prefill_profile /tmp/m1q --tokens 512 --record 20
# serve: see benchmarks/serve_common.sh / serve_load.py for the TTFT measurement; A/B with BLUESHIFT_PREFILL_SPLIT=0.
