#!/usr/bin/env bash
# W17: why the switch cost the plain form 3.8% (1B f16) at 512 + 128 in W16 (attention 0.208 -> 0.253 ms, with the
# grouped code present but not taken). Hypothesis: registers. The grouped form's 4 accumulators and 16 V loads in
# flight push the kernel past 128 registers, so one 256-wide workgroup an SM, and the 1B's 256 working workgroups
# (32 heads x 8 splits) take two waves on 132 SMs. Registers of each attention kernel first (the driver's statistics),
# then the three grouped forms: V loads in flight 16 (_gqa), 8 (_gqa_v8), 4 (_gqa_v4).
# Predicted: _gqa > 128 registers, plain ~<= 96; a form at <= 128 costs nothing at 512 (switch: plain taken), and at
# 4,096 (FROM 0) keeps most of W16's +12%.
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w17 $OUT
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
  o=/tmp/w17/$cfg; mkdir -p $o
  echo "== $cfg f16"
  for v in 1 8 4; do
    env $A=$v BLUESHIFT_PIPELINE_STATS=1 $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 4 \
      --reps 1 --json 2>&1 >/dev/null | grep -i "attention_split" | sort -u | head -4
  done
  for r in a b; do
    ab_bench $o p512_off_$r $BS /tmp/m/m 512 128 5 $A=0
    for v in 1 8 4; do ab_bench $o p512_sw${v}_$r $BS /tmp/m/m 512 128 5 $A=$v; done
  done
  ab_bench $o p4096_off $BS /tmp/m/m 4096 128 3 $A=0
  for v in 1 8 4; do ab_bench $o p4096_grp$v $BS /tmp/m/m 4096 128 3 $A=$v $F=0; done
  prof p512_off_a p512_sw1_a p512_sw8_a p512_sw4_a p512_off_b p512_sw1_b p512_sw8_b p512_sw4_b p4096_off p4096_grp1 p4096_grp8 p4096_grp4
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w17.tar.xz w17
done
