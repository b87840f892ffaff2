#!/usr/bin/env bash
# Session 13, run S1: (a) q, k and v's split-k GEMMs in their own workspace regions, reduced after all three
# (BLUESHIFT_QKV_TOGETHER=0: the old order): logits bit for bit, TTFT A/B on 1B q4_k_m / f16 and 8B q4_k_m;
# (b) where the host's ~6 us a recorded dispatch goes (bs_prefill_profile --record); (c) serve with the prefill in
# parts against one command buffer (BLUESHIFT_PREFILL_SPLIT=0), at concurrency 1.
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
print(f"{sys.argv[2]} {sys.argv[3]:8s} ttft {d['ttft_ms']:6.2f} first {d['prefill_first_submit_ms']:5.2f} rec {d['prefill_record_ms']:5.2f} gpu {d['prefill_gpu_ms']:6.2f} | prefill {d['prefill_tok_s']:8.0f} tok/s | decode {d['decode_tok_s']:7.1f} {d['pct_of_peak']:5.1f}% peak {d['peak_gb_s']:5.0f}")
PY
  grep -E "internal|rror" /tmp/err.txt | head -3
}
plog() { local m=$1 lab=$2; shift 2; env "$@" $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/pl-$m-$lab.npy >/dev/null 2>/tmp/perr.txt || { echo "$m $lab: logits FAILED"; head -3 /tmp/perr.txt; }; }
ids() { local m=$1 lab=$2; shift 2; env "$@" $BS blueshift generate --model /tmp/$m --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 32 > /tmp/ids-$m-$lab.txt 2>/dev/null; }
same() {  # model: logits and ids, together vs apart
  local m=$1
  plog $m tog; plog $m apart BLUESHIFT_QKV_TOGETHER=0
  cmp -s /tmp/pl-$m-tog.npy /tmp/pl-$m-apart.npy && echo "$m prefill logits (300 rows): together == apart, bit for bit" \
    || { echo "$m logits DIFFER"; python3 .dev/s13/cmp.py /tmp/pl-$m-tog.npy /tmp/pl-$m-apart.npy; }
  rm -f /tmp/pl-$m-*.npy
  ids $m tog; ids $m apart BLUESHIFT_QKV_TOGETHER=0
  cmp -s /tmp/ids-$m-tog.txt /tmp/ids-$m-apart.txt && echo "$m greedy ids (32 after 300): same" || echo "$m greedy ids DIFFER"
}
mkdir -p /tmp/o
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
stamp "1B models"
same m1q; same m1f
for m in m1q m1f; do
  bench $m tog; bench $m apart BLUESHIFT_QKV_TOGETHER=0; bench $m tog2; bench $m apart2 BLUESHIFT_QKV_TOGETHER=0
done
for lab in tog apart; do
  e=""; [ $lab = apart ] && e="BLUESHIFT_QKV_TOGETHER=0"
  env $e timeout 60 $BS bs_prefill_profile /tmp/m1q --tokens 512 --reps 3 --warm 30 > /tmp/o/profile-m1q-$lab.txt 2>&1
  echo "profile m1q $lab:"; head -12 /tmp/o/profile-m1q-$lab.txt
done
stamp "1B A/B"
echo "== recording (m1q, 512 tokens, 20 forwards)"
timeout 60 $BS bs_prefill_profile /tmp/m1q --tokens 512 --record 20 2>&1 | tail -25
echo "== the same with object names"
BLUESHIFT_DEBUG_NAMES=1 timeout 60 $BS bs_prefill_profile /tmp/m1q --tokens 512 --record 20 2>&1 | tail -12
which perf >/dev/null 2>&1 && echo "perf present" || echo "no perf on the lease"
nproc; cat /proc/cpuinfo | grep "model name" | head -1
stamp "recording"
echo "== serve, concurrency 1, split vs one command buffer"
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf1 --seed 1 --tokenizer builtin >/dev/null 2>&1
$BS blueshift convert /tmp/hf1 /tmp/ms --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf1
for lab in split one split2 one2; do
  e=""; case $lab in one*) e="BLUESHIFT_PREFILL_SPLIT=0";; esac
  env $e $BS blueshift serve --model /tmp/ms --port 0 --parallel 1 --ctx 1024 > /tmp/serve.out 2> /tmp/serve.log &
  pid=$!; port=""
  for _ in $(seq 1 300); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' /tmp/serve.out 2>/dev/null | grep -o '[0-9]*$'); [ -n "$port" ] && break; sleep 0.1
  done
  if [ -z "$port" ]; then echo "serve $lab did not start"; tail -3 /tmp/serve.log; kill $pid; continue; fi
  timeout 60 python3 benchmarks/serve_load.py "http://127.0.0.1:$port" --requests 30 --concurrency 1 --max-tokens 16 --label "serve $lab"
  kill $pid; wait $pid 2>/dev/null
done
stamp "serve"
rm -rf /tmp/m1q /tmp/m1f /tmp/ms
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B q4_k_m"
same m8q
bench m8q tog; bench m8q apart BLUESHIFT_QKV_TOGETHER=0; bench m8q tog2; bench m8q apart2 BLUESHIFT_QKV_TOGETHER=0
tar -C /tmp -cJf $OUT/s1.tar.xz o
stamp "all done"
