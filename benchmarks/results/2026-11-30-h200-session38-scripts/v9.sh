#!/usr/bin/env bash
# V9: V8 found the gate/up stream the phase that tips the 768-wide 8B kernel into spilling (no_gateup: 79 registers,
# no spill; only_gateup 71). Its EARLY 2 holds the first step's words through the grid barrier's wait and the norm's
# staging. At 768: EARLY 1 / 0 and STREAM 0 (gate/up through dot2), registers and spill, then decode where none spills.
# Predicted: EARLY 0 or STREAM 0 fits 80 without spill; the 8B at 768 then within -2..+5% of 640's 365.
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
o=/tmp/v9/llama-3.1-8b; mkdir -p $o
[ -f /tmp/m/m/manifest.json ] || { rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/m; }
benchmarks/kernel_registers.sh $BS /tmp/m/m w768:BLUESHIFT_PERSISTENT_WG=768 \
  early1:BLUESHIFT_PERSISTENT_WG=768,BLUESHIFT_PERSISTENT_EARLY=1 early0:BLUESHIFT_PERSISTENT_WG=768,BLUESHIFT_PERSISTENT_EARLY=0 \
  stream0:BLUESHIFT_PERSISTENT_WG=768,BLUESHIFT_PERSISTENT_STREAM=0 | tee $o/registers.txt
stamp registers
ab_bench $o base $BS /tmp/m/m 512 128 5
for v in early1:EARLY=1 early0:EARLY=0 stream0:STREAM=0; do
  grep -q "^${v%%:*}: .*spill 0$" $o/registers.txt && \
    ab_bench $o w768_${v%%:*} $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_WG=768 BLUESHIFT_PERSISTENT_${v#*:}
done
stamp done
tar -C /tmp -cJf $OUT/v9.tar.xz v9
