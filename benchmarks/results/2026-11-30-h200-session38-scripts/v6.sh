#!/usr/bin/env bash
# V6: DTYPES (decode_persistent.comp spec constant 23): dot2 holds the decoders of the layers' dtypes alone (a q4_k_m
# model: Q4_K and Q6_K; the Q8_0 and F16 paths leave the kernel), against BLUESHIFT_PERSISTENT_DTYPES_ALL=1 (all four,
# as at fd20eef). V5 found the down phase's code (dot2 through add_matvec) the largest alone (99 registers at 512 wide,
# P1's 95, the gate/up stream's 81). Registers at the default widths and at 768, where the driver caps the kernel at
# 80 (session 27, M5: 80 bytes spilled, the 8B -5 to -7% at 672-736); then the 8B's decode, default against ALL, and
# at 768 wide. Predicted: registers -0 to -6 (the Q4_K path likely holds the peak, not the unused ones); tok/s even
# (+-0.3%); at 768 a spill still, the 8B below the default. Greedy ids the same (the same code for the dtypes used).
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/v6
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/v6/$cfg; mkdir -p $o
  echo "== $cfg q4_k_m registers"
  benchmarks/kernel_registers.sh $BS /tmp/m/m all:BLUESHIFT_PERSISTENT_DTYPES_ALL=1 w768:BLUESHIFT_PERSISTENT_WG=768 \
    w768_all:BLUESHIFT_PERSISTENT_WG=768,BLUESHIFT_PERSISTENT_DTYPES_ALL=1 | tee $o/registers.txt
  if [ $cfg = llama-3.1-8b ]; then
    $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
    for r in a b; do
      ab_bench $o mask$r $BS /tmp/m/m 512 128 5
      ab_bench $o all$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_DTYPES_ALL=1
    done
    ab_bench $o w768 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_WG=768
    for v in 0 1; do ab_ids $o/ids-$v.txt $BS /tmp/m/m BLUESHIFT_PERSISTENT_DTYPES_ALL=$v; done
    cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
    wc -w $o/ids-*.txt | head -2
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/v6.tar.xz v6
done
