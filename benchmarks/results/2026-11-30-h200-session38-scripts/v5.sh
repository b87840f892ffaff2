#!/usr/bin/env bash
# V5: where the persistent kernel's registers go (STUB, BLUESHIFT_PERSISTENT_STUB: p.skip's bits 0-5 at compile time,
# so the skipped phase's code is not in the kernel): 1 q/k/v, 2 attention, 4 o (the fold), 8 gate/up, 16 down,
# 32 the staging loads. The 8B also at 512 wide, where the driver's cap is 128 registers, not 96 (640 wide), so that
# what each phase asks for shows. Then the default kernel against $OLD (fd20eef) on the 1B, to check that STUB = 0
# leaves it as it was. Predicted: the attention code (bit 2) holds the 1B's peak (session 37's ATT_PRE moved it there),
# gate/up or down the 8B's at 512; STUB 0 the same registers and tok/s as fd20eef.
# Carry .gl, .dev/carry, .dev/carry2.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/v5
stubs="p1:BLUESHIFT_PERSISTENT_STUB=1 att:BLUESHIFT_PERSISTENT_STUB=2 o:BLUESHIFT_PERSISTENT_STUB=4
  gateup:BLUESHIFT_PERSISTENT_STUB=8 down:BLUESHIFT_PERSISTENT_STUB=16 staging:BLUESHIFT_PERSISTENT_STUB=32
  all_but_att:BLUESHIFT_PERSISTENT_STUB=61 all_but_gateup:BLUESHIFT_PERSISTENT_STUB=55
  all_but_down:BLUESHIFT_PERSISTENT_STUB=47 all_but_p1:BLUESHIFT_PERSISTENT_STUB=62 all_but_o:BLUESHIFT_PERSISTENT_STUB=59
  all:BLUESHIFT_PERSISTENT_STUB=63"
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/v5/$cfg; mkdir -p $o
  echo "== $cfg q4_k_m registers (default width)"
  benchmarks/kernel_registers.sh $BS /tmp/m/m $stubs | tee $o/registers.txt
  if [ $cfg = llama-3.1-8b ]; then
    echo "== $cfg q4_k_m registers at 512 wide"
    w512=$(for s in $stubs; do echo "$s,BLUESHIFT_PERSISTENT_WG=512"; done)
    benchmarks/kernel_registers.sh $BS /tmp/m/m w512:BLUESHIFT_PERSISTENT_WG=512 $w512 | tee $o/registers512.txt
  else
    echo "== $cfg STUB 0 against fd20eef"
    $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
    for r in a b; do
      ab_bench $o new$r $BS /tmp/m/m 512 128 5
      ab_bench $o old$r $OLD /tmp/m/m 512 128 5
    done
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/v5.tar.xz v5
done
