#!/usr/bin/env bash
# Next (written in session 40, not run: no device time left): the per-phase decode's split attention by kv head
# (`next-attn-split-gqa.patch`, on 0e72465: the attention_split_f16kv_gqa variant, BLUESHIFT_ATTN_GQA=1). A workgroup
# (kv head, split) takes the kv head's 2-4 query heads: each K and V piece loaded once for them, and 4x fewer
# workgroups (the 8B f16 at 4,096 + 128: 2,048 workgroups of 256 in the plain form, two waves on 132 SMs).
# Count: W8 put the 8B f16's attention at 1.43 ms a step at 4,096 with its K and V in L2 (45 us a layer for 16 MB,
# ~0.36 TB/s), 0.44 at 512; the 1B f16's at 0.68 and 0.21.
# Predicted: 4,096 + 128: attention -30..-50%, decode +5-10% (8B f16 159 -> ~170, 1B f16 613 -> ~650); 512 + 128 even
# to -1% (8 splits x 8 kv heads = 64 workgroups, each 4 heads' math). Greedy ids the same: each head's sums run in the
# plain form's order.
# The lavapipe checks it passed: SplitAttentionMatchesFloat64 with the variant (G 2, 3 and 4, head_dim 20-256, up to
# 20 splits, windows, softcap; a planted bug in the third head's scores fails it), and 40 test_model tests with
# BLUESHIFT_ATTN_GQA=1 in the environment. Carry .gl and .dev/carry (the bundle of the patched tree).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w16
A=BLUESHIFT_ATTN_GQA
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
  for v in 0a 1a 1b 0b; do ab_bench $o g$v $BS /tmp/m/m 512 128 5 $A=${v:0:1}; done
  for v in 0a 1a; do ab_bench $o long4k_g$v $BS /tmp/m/m 4096 128 3 $A=${v:0:1}; done
  prof g0a g1a g1b g0b long4k_g0a long4k_g1a
  ab_ids $o/ids-0.txt $BS /tmp/m/m $A=0
  ab_ids $o/ids-1.txt $BS /tmp/m/m $A=1
  cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids: same" || echo "  greedy ids: DIFFER"
  tar -C /tmp -cJf $OUT/w16.tar.xz w16
done
