#!/usr/bin/env bash
# Session 9, run P2: (a) NV vs KHR: prefill logits of a 400-token prompt and 64 greedy ids, 1B and 8B q4_k_m;
# (b) where the 512-token prefill goes with KHR (bs_prefill_profile, median of 3), 1B and 8B q4_k_m.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128000)) for _ in range(400)))")
P=$(python3 -c "import random; random.seed(6); print(','.join(str(random.randrange(128000)) for _ in range(24)))")
check() {
  BLUESHIFT_COOPMAT_NV=1 $BS blueshift logits --model /tmp/$1 --tokens $T --out /tmp/nv.npy >/dev/null 2>&1
  $BS blueshift logits --model /tmp/$1 --tokens $T --out /tmp/khr.npy >/dev/null 2>&1
  python3 .dev/s9/cmp.py /tmp/khr.npy /tmp/nv.npy; cmp -s /tmp/khr.npy /tmp/nv.npy && echo "$1 prefill logits: bit-identical"
  BLUESHIFT_COOPMAT_NV=1 $BS blueshift generate --model /tmp/$1 --prompt-tokens $P --max-tokens 64 --json 2>/dev/null | python3 -c "import sys,json; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > /tmp/g_nv.txt
  $BS blueshift generate --model /tmp/$1 --prompt-tokens $P --max-tokens 64 --json 2>/dev/null | python3 -c "import sys,json; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > /tmp/g_khr.txt
  cmp -s /tmp/g_nv.txt /tmp/g_khr.txt && echo "$1 greedy ids: same ($(wc -w < /tmp/g_khr.txt) ids)" || { echo "$1 greedy ids DIFFER"; cat /tmp/g_nv.txt /tmp/g_khr.txt; }
}
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
check m1q
$BS blueshift bench --model /tmp/m1q --prompt-tokens 512 --gen-tokens 4 --reps 1 >/dev/null 2>&1
timeout 90 $BS bs_prefill_profile /tmp/m1q --tokens 512 --reps 3 > $OUT/profile-1b-q4.txt 2>&1; head -30 $OUT/profile-1b-q4.txt
rm -rf /tmp/m1q
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
echo "8B ready $(( $(date +%s) - t0 )) s"
check m8q
timeout 90 $BS bs_prefill_profile /tmp/m8q --tokens 512 --reps 3 > $OUT/profile-8b-q4.txt 2>&1; head -30 $OUT/profile-8b-q4.txt
echo "all done $(( $(date +%s) - t0 )) s"
