#!/usr/bin/env bash
# G4: main with gguf + serve merged and the 256x128k16 tile: coopmat tests, prefill A/B vs 044039a, serve batching.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/o /tmp/base && tar -C /tmp/base -xJf .dev/gemm/base.tar.xz; B0=/tmp/base/bundle/run
echo "== tests on the H100"
$BS test_coopmat 2>&1 | grep -E "OK|FAILED|PASSED|Failure|Expected|Which|actual" | tail -14
$BS test_kernels --gtest_filter='Matmul*:Matvec*:*Sampl*' 2>&1 | grep -E "FAILED|PASSED|Failure" | tail -4
echo "== prefill A/B (512-token prompt, 16 generated, 5 reps): base = 044039a, new = this tree"
mk() { local cfg=$1 q=$2; local d=/tmp/m/$(basename $cfg .json).$q
  [ -d $d ] && return; mkdir -p /tmp/m
  $BS blueshift synth --config $cfg /tmp/m/hf --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/m/hf $d --quant $q >/dev/null 2>&1; rm -rf /tmp/m/hf; }
ab() { local d=$1
  for r in 1 2; do for v in base new; do R=$BS; [ $v = base ] && R=$B0
    timeout 120 $R blueshift bench --model $d --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > /tmp/o/$(basename $d).$v.$r.json 2>/dev/null
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:32s} prefill {d['prefill_tok_s']:8.0f} tok/s  TTFT {d['ttft_ms']:7.2f} ms  decode {d['decode_tok_s']:6.1f}\")" /tmp/o/$(basename $d).$v.$r.json "$(basename $d) $v"
  done; done; }
mk benchmarks/configs/llama-3.2-1b.json q4_k_m; ab /tmp/m/llama-3.2-1b.q4_k_m
mk benchmarks/configs/llama-3.1-8b.json q4_k_m; ab /tmp/m/llama-3.1-8b.q4_k_m
rm -rf /tmp/m
tar -C /tmp -cJf $OUT/ab.tar.xz o
echo "== serve (benchmarks/serve_parallel.sh)"
OUT=/tmp/sv timeout 330 bash benchmarks/serve_parallel.sh 2>&1 | tail -40
tar -C /tmp -cJf $OUT/serve.tar.xz sv
