#!/usr/bin/env bash
# Session 22, G2: is the persistent kernel's Q4_K math on its critical path, and does occupancy move it?
# Carry .gl and .dev/carry. ~5 minutes.
# 1. PROBE bit 16 (new): the float Q4_K rows skip the high-nibble half of the dequantization and dot products.
#    Session 18's C1 put the math (SKIP bit 6: loads without math) at 0.244 ms of the 1B's 0.842 and 1.24 of the
#    8B's 3.36. If the math's issue is on the critical path, bit 16 takes about 45% of that: 1B -0.09 ms, 8B
#    -0.45 ms. If it takes under a tenth of it, a cheaper dequantization (packed f16) is not worth building.
#    PROBE 9 (no headers, no codes: no weight traffic at all) gives the kernel without DRAM.
# 2. Occupancy: workgroups of 512, 768 and 1024 at PARTS 1 and 2, with the registers the driver gave.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
for s in 3.2-1b 3.1-8b; do
  $BS blueshift synth --config benchmarks/configs/llama-$s.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/m$s --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
done
stamp models
kt() {  # name model env...: decode_persistent ms a step and decode tok/s (16-token prompt, 64 tokens, 3 reps)
  local name=$1 m=$2; shift 2
  env "$@" $BS blueshift bench --model $m --prompt-tokens 16 --gen-tokens 64 --reps 3 --json > /tmp/o/$name.json 2>/dev/null
  python3 -c "import json,sys; d=json.load(open('/tmp/o/$name.json')); print(f\"{'$name':28s} kernel {d['gpu_ms_by_dispatch'].get('decode_persistent',0):.4f} ms  decode {d['decode_tok_s']:7.1f} tok/s\")"
}
for s in 3.2-1b 3.1-8b; do
  m=/tmp/m$s
  $BS blueshift bench --model $m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null 2>&1
  for r in a b; do
    kt $s-base-$r $m
    kt $s-probe16-$r $m BLUESHIFT_PERSISTENT_PROBE=16
    kt $s-probe9-$r $m BLUESHIFT_PERSISTENT_PROBE=9
    kt $s-loads-$r $m BLUESHIFT_PERSISTENT_SKIP=64
  done
  stamp probes-$s
  for wg in 512 768 1024; do for parts in 1 2; do
    kt $s-wg$wg-p$parts $m BLUESHIFT_PERSISTENT_WG=$wg BLUESHIFT_PERSISTENT_PARTS=$parts
    BLUESHIFT_PERSISTENT_WG=$wg BLUESHIFT_PERSISTENT_PARTS=$parts BLUESHIFT_PIPELINE_STATS=1 timeout 60 $BS blueshift bench \
      --model $m --prompt-tokens 16 --gen-tokens 8 --reps 1 --json 2>&1 >/dev/null | grep "pipeline-stats" \
      | grep -i "persistent" | head -2 | cut -c1-220
  done; done
  stamp occupancy-$s
  tar -C /tmp -cJf $OUT/g2.tar.xz o
done
