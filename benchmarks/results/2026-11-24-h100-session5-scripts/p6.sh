#!/usr/bin/env bash
# P6: causal row blocks of the tiled prefill attention started longest first (new) vs index order (base:
# 1eb5be3's build with BLUESHIFT_NO_CM_ATTENTION=1); then the batch branch's serve_multi.sh (its blueshift).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/alt && xz -dc .dev/s5/base-blueshift.xz > /tmp/alt/base && chmod +x /tmp/alt/base
[ -f .dev/s5/bx-blueshift.xz ] && xz -dc .dev/s5/bx-blueshift.xz > /tmp/alt/bx && chmod +x /tmp/alt/bx
LIB=/tmp/bs/bundle/lib
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
mk() { local cfg=$1 q=$2; local d=/tmp/m/$(basename $cfg .json).$q
  [ -d $d ] && return; mkdir -p /tmp/m
  $BS blueshift synth --config $cfg /tmp/m/hf --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/m/hf $d --quant $q >/dev/null 2>&1; rm -rf /tmp/m/hf; }
t0=$(date +%s); mk benchmarks/configs/llama-3.2-1b.json q4_k_m; mk benchmarks/configs/llama-3.1-8b.json q4_k_m; echo "made in $(( $(date +%s) - t0 )) s"
echo "== prefill A/B (512 + 16, 5 reps)"
for d in /tmp/m/llama-3.2-1b.q4_k_m /tmp/m/llama-3.1-8b.q4_k_m; do
  for r in 1 2; do for v in base new; do
    if [ $v = base ]; then R="env BLUESHIFT_NO_CM_ATTENTION=1 LD_LIBRARY_PATH=$LIB /tmp/alt/base"; else R="$BS blueshift"; fi
    timeout 120 $R bench --model $d --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > $OUT/$(basename $d).$v.$r.json 2>/dev/null
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:32s} prefill {d['prefill_tok_s']:8.0f} tok/s  TTFT {d['ttft_ms']:7.2f} ms  decode {d['decode_tok_s']:6.1f}\")" $OUT/$(basename $d).$v.$r.json "$(basename $d) $v"
  done; done
done
timeout 60 $BS bs_prefill_profile /tmp/m/llama-3.1-8b.q4_k_m --reps 5 > $OUT/profile-8b.txt 2>&1; grep -m1 "^  attention" $OUT/profile-8b.txt
timeout 60 $BS bs_prefill_profile /tmp/m/llama-3.2-1b.q4_k_m --reps 5 > $OUT/profile-1b.txt 2>&1; head -1 $OUT/profile-1b.txt; grep -m1 "^  attention" $OUT/profile-1b.txt
if [ -x /tmp/alt/bx ]; then
  echo "== serve_multi (batch branch)"
  printf '#!/bin/bash\nprog=$1; shift\nif [ "$prog" = blueshift ]; then LD_LIBRARY_PATH=%s exec /tmp/alt/bx "$@"; else exec /tmp/bs/bundle/run "$prog" "$@"; fi\n' $LIB > /tmp/alt/bxrun; chmod +x /tmp/alt/bxrun
  sed 's|^\. benchmarks/lease_setup.sh.*|. benchmarks/lease_setup.sh >/dev/null 2>\&1; BS=/tmp/alt/bxrun|' .dev/s5/serve_multi.sh > /tmp/alt/sm.sh
  mkdir -p $OUT/sm; OUT=$OUT/sm timeout 300 bash /tmp/alt/sm.sh 2>&1 | tail -40
  (cd $OUT && tar -cJf sm.tar.xz sm && rm -rf sm)
fi
