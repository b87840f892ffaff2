#!/usr/bin/env bash
# W8 (session 40): K/V touches on the per-phase decode (kv_touch.comp, BLUESHIFT_KV_TOUCH: 1 after a layer's q/k/v
# dispatches, 2 before them, 0 none), on the f16 models, which decode per phase. 512 + 128 and 4,096 + 128, medians of
# 5 (3 at 4,096), the variants alternating in one command; the attention and kv_touch dispatches' GPU ms a step from
# bench's profile. Carry .gl and .dev/carry.
# Count: attention reads a layer's K and V rows [0, pos): at 512 that is 1 MB a layer (1B, kv_dim 512) and 2 MB (8B,
# kv_dim 1024); session 20's E5 gave the 1B f16's K/V loads 1.9 us of attention's 14.3 a layer.
# Predicted: mode 1, 512 + 128: 1B f16 +1-2% (876 -> ~890), 8B f16 +0.5-1.5% (194 -> ~196); 4,096 + 128: +5-10% on
# both (the persistent kernel's TOUCH gave +11-13% there). Mode 2 below mode 1 on the 8B f16 (48 MB of q/k/v weights
# stream between the touch and attention, about L2's size), near it on the 1B (12.6 MB).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w8
T=BLUESHIFT_KV_TOUCH
prof() {  # NAME...: attention and kv_touch ms a step from each run's profile
  python3 - "$o" "$@" <<'PY'
import json, sys
for n in sys.argv[2:]:
    d = json.load(open(f"{sys.argv[1]}/{n}.json"))
    g = d["gpu_ms_by_dispatch"]
    print(f"  {n:22s} {d['decode_tok_s']:7.1f} tok/s  attention {g.get('attention', 0):.4f} ms  "
          f"kv_touch {g.get('kv_touch', 0):.4f} ms  dispatches {d['dispatches_per_token']}")
PY
}
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w8/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg f16"
  for v in 0a 1a 2a 1b 0b; do ab_bench $o t$v $BS /tmp/m/m 512 128 5 $T=${v:0:1}; done
  for v in 0a 1a 0b 1b; do ab_bench $o long4k_t$v $BS /tmp/m/m 4096 128 3 $T=${v:0:1}; done
  prof t0a t1a t2a t1b t0b long4k_t0a long4k_t1a long4k_t0b long4k_t1b
  if [ $cfg = llama-3.2-1b ]; then
    ab_ids $o/ids-0.txt $BS /tmp/m/m $T=0
    ab_ids $o/ids-1.txt $BS /tmp/m/m $T=1
    cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids: same" || echo "  greedy ids: DIFFER"
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w8.tar.xz w8
done
