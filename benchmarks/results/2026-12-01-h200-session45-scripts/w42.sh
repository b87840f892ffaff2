#!/usr/bin/env bash
# W42 (session 45): W41's load poll (BLUESHIFT_CHAIN=3) ran 1B f16 913 and 8B f16 204 tok/s against 881 / 194.5
# unchained, but the 8B's greedy ids parted at token 2: a plain `coherent volatile` load let consumers through before
# gate + up were done (a stale counter, likely the L1's copy of the last step's, or x's lines stale there). Bit 2 now
# polls with an atomicLoad (OpAtomicLoad, device scope, relaxed); bit 16 (matvec_f16_chain_cx) reads x `coherent`,
# past the SM's L1. c9 is the chain's kernels with the barrier kept (W41: 864 / 196.4).
# Predicted: c3 ids the same as c0; 1B +1..+3% over c1 (no RMW queue on the counter), 8B +0.5..+2%, below W41's
# invalid c3. c19 against c3: -0.5..-2% (x's 4 bytes a column from L2 in every workgroup, as many as the weights').
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w42 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w42/$cfg-f16; mkdir -p $o
  echo "== $cfg f16: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 c0:BLUESHIFT_CHAIN=0 c1:BLUESHIFT_CHAIN=1 c3:BLUESHIFT_CHAIN=3 \
    c19:BLUESHIFT_CHAIN=19 c9:BLUESHIFT_CHAIN=9
  # More ids: a second prompt, 128 tokens, for the variants that chain.
  for v in 0 1 3 19; do
    BLUESHIFT_CHAIN=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 7,300,4000,50000,12,99,1234 \
      --max-tokens 128 --deterministic --json 2>/dev/null |
      python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" \
      > $o/ids2-c$v.txt
  done
  md5sum $o/ids2-*.txt
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w42.tar.xz w42
done
