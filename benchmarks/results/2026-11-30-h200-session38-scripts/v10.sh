#!/usr/bin/env bash
# V10 (run as one command line on the lease right after V9, on V9's model in /tmp/m): the 8B at STREAM 0 at 640 and
# 768 wide beside the default, two rounds, to split V9's 768-wide STREAM 0 row into what 768 gives and what STREAM 0
# costs. Predicted: STREAM 0 at 640 -2..-3%, so that 768 itself gains +1..+2%. Carry .gl, .dev/carry.
. benchmarks/lease_setup.sh >/dev/null 2>&1; . benchmarks/ab_common.sh
o=/tmp/v10/llama-3.1-8b; mkdir -p $o
[ -f /tmp/m/m/manifest.json ] || { rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/m; }
for r in a b; do
  ab_bench $o base$r $BS /tmp/m/m 512 128 5
  ab_bench $o stream0_640$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_STREAM=0
  ab_bench $o stream0_768$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_STREAM=0 BLUESHIFT_PERSISTENT_WG=768
done
tar -C /tmp -cJf $OUT/v10.tar.xz v10
