#!/usr/bin/env bash
# V4 (session 38): the q4_k_m peer table at fd20eef (QKV_ORDER the default), three rounds of each engine, alternating
# (run_peer.sh --rounds 3): llama.cpp's Vulkan backend in the same command, 512 + 128, medians of 5 a round, the
# table's figures the medians over the rounds. Usage: v4.sh CONFIG (llama-3.2-1b or llama-3.1-8b: one a call, so each
# fits the lease's 600 s). Predicted (ours): the 1B ~1,349 tok/s (V3), the 8B ~362 (V2-V3); prefill and TTFT as in U6.
# Carry .gl, .dev/carry and .dev/peer.
set -uo pipefail
cfg=$1
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/v4
timeout 560 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/$cfg.json --quant q4_k_m --out /tmp/v4/$cfg --work /tmp/bs-peer --rounds 3 2>&1 | tail -3
stamp "$cfg peer"
tar -C /tmp -cJf $OUT/v4.tar.xz v4
cat /tmp/v4/$cfg/peer.md
