#!/usr/bin/env bash
# W15: ATTN_TPP chosen per item (next-tpp-per-item.patch of session 40) against HEAD (dd9cdcd, TPP 2 for every item at
# head_dim 64) in one call: $OLD is HEAD's bundle, $BS the patched tree's (both patches of session 40 applied; the
# second, attention_split_f16kv_gqa, is behind BLUESHIFT_ATTN_GQA=1 and not taken here). Also TPP 4 on the patched tree.
# Predicted: 0.5B shape 512 + 128: per-item = TPP 4 >= HEAD +0.9% (W14: TPP 2 -0.9%); 4,096 + 128: per-item = HEAD,
# both +2.8% over TPP 4. 1B: per-item = HEAD at both (its items at 512 are 64+ positions: 512 / 8 splits; wg 256 / 4 = 64,
# so items of 65+ take TPP 2 - at 512 + 128 items are 64-80 positions, most of the run above 64).
# (Found afterwards: $OLD was not HEAD's bundle but the one session 40 left in .dev/carry, most likely the per-item tree;
# see the results' W15.)
# Then W16a: the 1B f16 with BLUESHIFT_ATTN_GQA 0/1 (next-w16.sh's 1B half).
# Carry .gl, .dev/carry, .dev/carry2.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
S=benchmarks/results/2026-12-01-h200-session41-scripts
mkdir -p /tmp/w15 $OUT
T=BLUESHIFT_PERSISTENT_ATTN_TPP
for cfg in qwen2.5-0.5b-shape llama-3.2-1b; do
  json=benchmarks/configs/$cfg.json
  [ -f $json ] || json=$S/$cfg.json
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS $json q4_k_m /tmp/m
  o=/tmp/w15/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o head_$r $OLD /tmp/m/m 512 128 5
    ab_bench $o item_$r $BS /tmp/m/m 512 128 5
    ab_bench $o tpp4_$r $BS /tmp/m/m 512 128 5 $T=4
  done
  ab_bench $o long4k_head $OLD /tmp/m/m 4096 128 3
  ab_bench $o long4k_item $BS /tmp/m/m 4096 128 3
  ab_bench $o long4k_tpp4 $BS /tmp/m/m 4096 128 3 $T=4
  ab_ids $o/ids-head.txt $OLD /tmp/m/m
  ab_ids $o/ids-item.txt $BS /tmp/m/m
  cmp -s $o/ids-head.txt $o/ids-item.txt && echo "  greedy ids: same" || echo "  greedy ids: DIFFER"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w15.tar.xz w15
done
# W16a
A=BLUESHIFT_ATTN_GQA
prof() {
  python3 - "$o" "$@" <<'PY'
import json, sys
for n in sys.argv[2:]:
    d = json.load(open(f"{sys.argv[1]}/{n}.json"))
    print(f"  {n:22s} {d['decode_tok_s']:7.1f} tok/s  attention {d['gpu_ms_by_dispatch'].get('attention', 0):.4f} ms")
PY
}
cfg=llama-3.2-1b
rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
o=/tmp/w15/f16-$cfg; mkdir -p $o
$BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
echo "== $cfg f16"
for v in 0a 1a 1b 0b; do ab_bench $o g$v $BS /tmp/m/m 512 128 5 $A=${v:0:1}; done
for v in 0a 1a; do ab_bench $o long4k_g$v $BS /tmp/m/m 4096 128 3 $A=${v:0:1}; done
prof g0a g1a g1b g0b long4k_g0a long4k_g1a
ab_ids $o/ids-0.txt $BS /tmp/m/m $A=0
ab_ids $o/ids-1.txt $BS /tmp/m/m $A=1
cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids: same" || echo "  greedy ids: DIFFER"
stamp "f16 done"
tar -C /tmp -cJf $OUT/w15.tar.xz w15
