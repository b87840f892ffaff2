#!/usr/bin/env bash
# J2: the workgroup width and TEAM on the three small standard shapes, and TEAM 1's plain loop against f47e50f.
#   new = f47e50f + next-i2.patch + TEAM 1 as the plain grid-stride loop (.dev/carry/bundle.tar.xz; defaults WG 384 at
#         dim <= 2048, TEAM 1)
#   old = f47e50f (next-i1 landed; .dev/carry2/bundle-old.tar.xz, $OLD)
# Predicted: new (TEAM 1) against old: 0 everywhere (the same loop). 1B: wg512 +1.0%, wg512team4 +2.4% (J1's figures).
# qwen2.5-1.5b (dim 1536, ffn 8960: down 768 tasks of 35 blocks) and gemma-3-1b (dim 1152, ffn 6912): wg512 +0.5-1.5%
# (gate/up one round fewer), team4 at 512 +1-2% (down 9 -> 6 dependent steps on qwen).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
# Logits: new against old (expect 0) and WG 512 + TEAM 4 against old (the down sums split in 4).
timeout 80 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m "old@$OLD:" new: wg512team4:BLUESHIFT_PERSISTENT_WG=512,BLUESHIFT_PERSISTENT_TEAM=4
stamp logits
for cfg in llama-3.2-1b qwen2.5-1.5b gemma-3-1b llama-3.2-3b llama-3.1-8b; do
  v=()
  for i in 1 2; do
    v+=("old$i@$OLD:")
    case $cfg in
      llama-3.2-1b|qwen2.5-1.5b|gemma-3-1b)
        v+=("wg512-$i:BLUESHIFT_PERSISTENT_WG=512" "wg512team2-$i:BLUESHIFT_PERSISTENT_WG=512,BLUESHIFT_PERSISTENT_TEAM=2"
            "wg512team4-$i:BLUESHIFT_PERSISTENT_WG=512,BLUESHIFT_PERSISTENT_TEAM=4") ;;
    esac
  done
  left=$(( 560 - ($(date +%s) - t0) ))
  [ $left -lt 30 ] && break
  timeout $left benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m "${v[@]}"
  stamp $cfg
  tar -C /tmp -cJf $OUT/j2.tar.xz o
done
