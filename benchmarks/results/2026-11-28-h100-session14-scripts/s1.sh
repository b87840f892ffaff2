#!/usr/bin/env bash
# Session 14, run S1: (a) split-k GEMMs summing their own planes (the last workgroup of each tile, vec4 loads
# batched; BLUESHIFT_SPLITK_FUSED=0: splitk_reduce after): test_coopmat, logits bit for bit, TTFT A/B on 1B
# q4_k_m / f16 and 8B q4_k_m; (b) serve's text arrival with TCP_NODELAY against Nagle (BLUESHIFT_SERVE_NODELAY=0);
# (c) the persistent decode kernel's fixed cost per phase (BLUESHIFT_PERSISTENT_SKIP); (d) the Q6_K padding's
# load time against the tree before it (90b1653, .dev/carry_old).
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
mkdir -p /tmp/o /tmp/t && tar -C /tmp/t -xJf .dev/s14/tests.tar.xz
echo "== test_coopmat"
LD_LIBRARY_PATH=/tmp/bs/bundle/lib timeout 120 /tmp/t/test_coopmat 2>&1 | tail -4 | tee /tmp/o/test_coopmat.txt
LD_LIBRARY_PATH=/tmp/bs/bundle/lib timeout 120 /tmp/t/test_coopmat --gtest_filter='*SplitK*' > /tmp/o/test_splitk.txt 2>&1
grep -q "PASSED  ] 1 test" /tmp/o/test_splitk.txt && ok=1 || { ok=0; grep -m5 "Failure\|error\|fused" /tmp/o/test_splitk.txt; }
LD_LIBRARY_PATH=/tmp/bs/bundle/lib timeout 120 /tmp/t/test_gpu --gtest_filter='KernelsModel.TensorCore*' 2>&1 | tail -3 | tee /tmp/o/test_fa.txt
stamp "tests (splitk ok=$ok)"
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 --tokenizer builtin >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
stamp "1B models"
[ $ok = 1 ] || export BLUESHIFT_SPLITK_FUSED=0  # every row without the fused form when its test failed
same m1q re $RE; same m1q nf $NF; same m1f re $RE
for m in m1q m1f; do
  bench $m new; bench $m re BLUESHIFT_SPLITK_FUSED=0; bench $m nf $NF
  bench $m new2; bench $m re2 BLUESHIFT_SPLITK_FUSED=0; bench $m nf2 $NF
done
for lab in new re; do
  e=""; [ $lab = re ] && e="BLUESHIFT_SPLITK_FUSED=0 BLUESHIFT_FA_F16_OUT=0"
  env $e timeout 60 $BS bs_prefill_profile /tmp/m1q --tokens 512 --reps 3 --warm 30 > /tmp/o/profile-m1q-$lab.txt 2>&1
  echo "profile m1q $lab:"; head -11 /tmp/o/profile-m1q-$lab.txt
done
stamp "1B A/B"
echo "== serve, concurrency 1, TCP_NODELAY vs Nagle: each content chunk's arrival (ms) for 3 requests"
for lab in nodelay nagle; do
  e=""; [ $lab = nagle ] && e="BLUESHIFT_SERVE_NODELAY=0"
  env $e $BS blueshift serve --model /tmp/m1q --port 0 --parallel 1 --ctx 1024 > /tmp/serve.out 2> /tmp/serve.log &
  pid=$!; port=""
  for _ in $(seq 1 300); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' /tmp/serve.out 2>/dev/null | grep -o '[0-9]*$'); [ -n "$port" ] && break; sleep 0.1
  done
  if [ -z "$port" ]; then echo "serve $lab did not start"; tail -3 /tmp/serve.log; kill $pid; continue; fi
  timeout 60 python3 benchmarks/serve_load.py "http://127.0.0.1:$port" --requests 20 --concurrency 1 --max-tokens 32 --trace 3 --label "serve $lab" | tee /tmp/o/serve-$lab.json
  kill $pid; wait $pid 2>/dev/null
done
stamp "serve"
echo "== persistent decode: phase costs (SKIP 0 = all, 31 = no phase work, 63 = no work, no staging: barriers)"
for m in m1q; do for s in 0 31 63; do
  BLUESHIFT_PERSISTENT_SKIP=$s timeout 60 $BS blueshift bench --model /tmp/$m --prompt-tokens 16 --gen-tokens 128 --reps 3 --json > /tmp/o/pk-$m-$s.json 2>/dev/null
  python3 -c "import json; d=json.load(open('/tmp/o/pk-$m-$s.json')); k=d['gpu_ms_by_dispatch']; print('$m skip $s: decode', round(d['decode_tok_s'],1), 'tok/s; kernel ms', {n: round(v,4) for n,v in k.items()})"
done; done
rm -rf /tmp/m1q /tmp/m1f
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B q4_k_m"
for s in 0 31 63; do
  BLUESHIFT_PERSISTENT_SKIP=$s timeout 60 $BS blueshift bench --model /tmp/m8q --prompt-tokens 16 --gen-tokens 128 --reps 3 --json > /tmp/o/pk-m8q-$s.json 2>/dev/null
  python3 -c "import json; d=json.load(open('/tmp/o/pk-m8q-$s.json')); k=d['gpu_ms_by_dispatch']; print('m8q skip $s: decode', round(d['decode_tok_s'],1), 'tok/s; kernel ms', {n: round(v,4) for n,v in k.items()})"
done
same m8q nf $NF
bench m8q new; bench m8q re BLUESHIFT_SPLITK_FUSED=0; bench m8q nf $NF
bench m8q new2; bench m8q re2 BLUESHIFT_SPLITK_FUSED=0; bench m8q nf2 $NF
stamp "8B"
if [ -f .dev/carry_old/bundle.tar.xz ]; then
  echo "== load time, 8B q4_k_m: this tree (Q6_K padded in staging) vs 90b1653 (stored blocks)"
  mkdir -p /tmp/old && tar -C /tmp/old -xJf .dev/carry_old/bundle.tar.xz && cp -n /tmp/bs/bundle/lib/* /tmp/old/bundle/lib/ 2>/dev/null
  for i in 1 2 3; do for r in new old; do R=$BS; [ $r = old ] && R=/tmp/old/bundle/run
    echo "$r load_s $($R blueshift bench --model /tmp/m8q --prompt-tokens 8 --gen-tokens 2 --reps 1 --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["load_s"])')"
  done; done
fi
tar -C /tmp -cJf $OUT/s1.tar.xz o
stamp "all done"
