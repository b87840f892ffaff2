#!/usr/bin/env bash
# Session 14, run S2: (a) split-k GEMMs summing their own planes (S1 ran every row with BLUESHIFT_SPLITK_FUSED=0
# after a wrong grep of its passing test): logits bit for bit, TTFT A/B on 1B q4_k_m / f16 and 8B q4_k_m;
# (b) the persistent decode kernel's work per phase (BLUESHIFT_PERSISTENT_SKIP with one phase's work kept);
# (c) the Q6_K padding's load time against the tree before it (90b1653, .dev/carry_old).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
bench() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 90 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json \
    > /tmp/o/bench-$m-$lab.json 2> /tmp/err.txt
  python3 - /tmp/o/bench-$m-$lab.json $m $lab <<'PY'
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[2], sys.argv[3], "FAILED", e); sys.exit()
print(f"{sys.argv[2]} {sys.argv[3]:8s} ttft {d['ttft_ms']:6.2f} first {d['prefill_first_submit_ms']:5.2f} rec {d['prefill_record_ms']:5.2f} gpu {d['prefill_gpu_ms']:6.2f} | prefill {d['prefill_tok_s']:8.0f} tok/s | decode {d['decode_tok_s']:7.1f} {d['pct_of_peak']:5.1f}% peak {d['peak_gb_s']:5.0f} load {d['load_s']:.2f}")
PY
  grep -E "internal|rror" /tmp/err.txt | head -3
}
plog() { local m=$1 lab=$2; shift 2; env "$@" $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/pl-$m-$lab.npy >/dev/null 2>/tmp/perr.txt || { echo "$m $lab: logits FAILED"; head -3 /tmp/perr.txt; }; }
ids() { local m=$1 lab=$2; shift 2; env "$@" $BS blueshift generate --model /tmp/$m --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 32 > /tmp/ids-$m-$lab.txt 2>/dev/null; }
same() {  # model label env: logits and ids, defaults vs env
  local m=$1 lab=$2; shift 2
  plog $m new; plog $m $lab "$@"
  cmp -s /tmp/pl-$m-new.npy /tmp/pl-$m-$lab.npy && echo "$m prefill logits (300 rows): new == $lab ($*), bit for bit" \
    || { echo "$m logits DIFFER new vs $lab"; python3 .dev/s14/cmp.py /tmp/pl-$m-new.npy /tmp/pl-$m-$lab.npy; }
  rm -f /tmp/pl-$m-*.npy
  ids $m new; ids $m $lab "$@"
  cmp -s /tmp/ids-$m-new.txt /tmp/ids-$m-$lab.txt && echo "$m greedy ids (32 after 300): same" || echo "$m greedy ids DIFFER"
}
RE=BLUESHIFT_SPLITK_FUSED=0
NF=BLUESHIFT_FA_F16_OUT=0
mkdir -p /tmp/o
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
stamp "1B models"
same m1q re $RE; same m1f re $RE
for m in m1q m1f; do
  bench $m new; bench $m re $RE; bench $m new2; bench $m re2 $RE; bench $m new3; bench $m re3 $RE
done
timeout 60 $BS bs_prefill_profile /tmp/m1q --tokens 512 --reps 3 --warm 30 > /tmp/o/profile-m1q-new.txt 2>&1
echo "profile m1q new:"; head -10 /tmp/o/profile-m1q-new.txt
stamp "1B A/B"
pk() {  # model: decode kernel time with one phase's work (1-5), none (31) or everything (0)
  local m=$1
  for s in 0 31 30 29 27 23 15; do
    BLUESHIFT_PERSISTENT_SKIP=$s timeout 60 $BS blueshift bench --model /tmp/$m --prompt-tokens 16 --gen-tokens 64 --reps 3 --json > /tmp/o/pk-$m-$s.json 2>/dev/null
    python3 -c "import json; d=json.load(open('/tmp/o/pk-$m-$s.json')); print('$m skip $s: decode_persistent', round(d['gpu_ms_by_dispatch']['decode_persistent'],4), 'ms')"
  done
}
echo "== persistent decode: skip 0 = all work, 31 = none, 30/29/27/23/15 = only phase 1/2/3/4/5 (qkv, attention, o, gate-up, down)"
pk m1q
rm -rf /tmp/m1q /tmp/m1f
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B q4_k_m"
pk m8q
same m8q re $RE
bench m8q new; bench m8q re $RE; bench m8q new2; bench m8q re2 $RE
stamp "8B"
if [ -f .dev/carry_old/bundle.tar.xz ]; then
  echo "== load time, 8B q4_k_m: this tree (Q6_K padded in staging) vs 90b1653 (stored blocks)"
  mkdir -p /tmp/old && tar -C /tmp/old -xJf .dev/carry_old/bundle.tar.xz && cp -n /tmp/bs/bundle/lib/* /tmp/old/bundle/lib/ 2>/dev/null
  for i in 1 2 3; do for r in new old; do R=$BS; [ $r = old ] && R=/tmp/old/bundle/run
    echo "$r load_s $($R blueshift bench --model /tmp/m8q --prompt-tokens 8 --gen-tokens 2 --reps 1 --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["load_s"])')"
  done; done
fi
tar -C /tmp -cJf $OUT/s2.tar.xz o
stamp "all done"
