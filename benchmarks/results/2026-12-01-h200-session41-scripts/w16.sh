#!/usr/bin/env bash
# W16: attention_split_f16kv_gqa on the plain grid with a runtime switch (this tree: windows of GQA_FROM positions or
# more take the grouped form, shorter ones the plain form). W15 (session 40's grouped-only form on the 1B f16): 512 +
# 128 -4.4% (attention 0.21 -> 0.28 ms), 4,096 + 128 +14.9% (0.68 -> 0.48 ms).
# Predicted: 512 + 128 with the switch at 1,024 (plain form taken, the grouped code present) even, +-0.5%. Grouped
# always (FROM=0): 1,024 ~-1..+2%, 2,048 +5-8%, 4,096 +15% on the 1B; the 8B (head_dim 128, 32 heads x 64 splits = 2,048
# workgroups at 4,096) +5-10% at 4,096. Greedy ids: the same (each head's sums in the plain form's order).
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w16 $OUT
A=BLUESHIFT_ATTN_GQA
F=BLUESHIFT_ATTN_GQA_FROM
prof() {
  python3 - "$o" "$@" <<'PY'
import json, sys
for n in sys.argv[2:]:
    d = json.load(open(f"{sys.argv[1]}/{n}.json"))
    print(f"  {n:22s} {d['decode_tok_s']:7.1f} tok/s  attention {d['gpu_ms_by_dispatch'].get('attention', 0):.4f} ms")
PY
}
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  o=/tmp/w16/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg f16"
  ab_bench $o p512_off_a $BS /tmp/m/m 512 128 5 $A=0
  ab_bench $o p512_sw_a $BS /tmp/m/m 512 128 5 $A=1
  ab_bench $o p512_sw_b $BS /tmp/m/m 512 128 5 $A=1
  ab_bench $o p512_off_b $BS /tmp/m/m 512 128 5 $A=0
  for P in 1024 2048 4096; do
    ab_bench $o p${P}_off $BS /tmp/m/m $P 128 3 $A=0
    ab_bench $o p${P}_grp $BS /tmp/m/m $P 128 3 $A=1 $F=0
  done
  prof p512_off_a p512_sw_a p512_sw_b p512_off_b p1024_off p1024_grp p2048_off p2048_grp p4096_off p4096_grp
  ab_ids $o/ids-0.txt $BS /tmp/m/m $A=0
  ab_ids $o/ids-1.txt $BS /tmp/m/m $A=1 $F=0
  cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids: same" || echo "  greedy ids: DIFFER"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w16.tar.xz w16
done
