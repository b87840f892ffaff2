#!/usr/bin/env bash
# U8 (session 37): the 1B q4_k_m peer row twice in one call, to split llama.cpp's spread between session 36's T5 and
# U6 (decode 466.0 -> 572.3 tok/s, prefill 31,268 -> 40,908) into run-to-run and lease-to-lease parts. Same bundle as
# U6 (70b08ad). Predicted: within 2% of each other if the spread is the lease's (its CPU: llama.cpp's host side is a
# large share of a 1B's ~2 ms a token). Carry .gl, .dev/carry and .dev/peer.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/u8
for r in a b; do
  timeout 120 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m --out /tmp/peer-$r --work /tmp/bs-peer 2>&1 | tail -1
  stamp "run $r"
  cp -r /tmp/peer-$r /tmp/u8/
  tar -C /tmp -cJf $OUT/u8.tar.xz u8
  grep "llama-3.2-1b" /tmp/peer-$r/peer.md
done
nproc; lscpu | grep -i "model name\|mhz" | head -3
