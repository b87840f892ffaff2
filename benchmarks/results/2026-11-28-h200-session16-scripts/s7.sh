#!/usr/bin/env bash
# Session 16, S7: (1) load time: staging memory write-combined (default) vs cached (BLUESHIFT_UPLOAD_MEMORY), with the
# upload split (BLUESHIFT_LOAD_STATS=1) on the 8B f16 and q4_k_m; (2) decode: the persistent kernel's Q4_K dots on
# floats / int8 / int8 mx (BLUESHIFT_Q4K_DOT), 1B and 8B q4_k_m, on the H200 (S6: the 8B's matvec math is 1.24 of 3.36 ms).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
dec() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 90 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/dec-$m-$lab.json 2>/tmp/o/dec-$m-$lab.err
  python3 -c "import json; d=json.load(open('/tmp/o/dec-$m-$lab.json')); g=d['gpu_ms_by_dispatch']; k=[v for n,v in g.items() if n.startswith('decode_persistent')]; print('$m $lab: decode', round(d['decode_tok_s'],1), 'tok/s, TTFT', round(d.get('ttft_ms',0),2), 'ms, kernel', k)" || { echo "$m $lab FAILED"; tail -3 /tmp/o/dec-$m-$lab.err; }
}
ld() { env "$@" BLUESHIFT_LOAD_STATS=1 timeout 60 $BS blueshift bench --model /tmp/$m --load-only 2>&1 | tail -3; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h1
for i in 1 2; do for q in float int intmx; do dec m1q $q-$i BLUESHIFT_Q4K_DOT=$q; done; done
stamp 1B
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1
m=m8q
for i in 1 2; do for u in wc cached; do echo "== $m $u"; ld BLUESHIFT_UPLOAD_MEMORY=$u; done; done
for q in float int intmx; do dec m8q $q BLUESHIFT_Q4K_DOT=$q; done
dec m8q int-p3 BLUESHIFT_Q4K_DOT=int BLUESHIFT_PERSISTENT_PARTS=3
dec m8q float-cached BLUESHIFT_UPLOAD_MEMORY=cached
stamp 8Bq
rm -rf /tmp/m8q; $BS blueshift convert /tmp/h8 /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h8
m=m8f
for i in 1 2; do for u in wc cached; do echo "== $m $u"; ld BLUESHIFT_UPLOAD_MEMORY=$u; done; done
stamp 8Bf
tar -C /tmp -cJf $OUT/s7.tar.xz o
