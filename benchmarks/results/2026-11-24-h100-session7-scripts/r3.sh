#!/usr/bin/env bash
# Session 7, run 3: rows kernel with two k steps' loads in flight (the _d2 variants, BLUESHIFT_ROWSCM_DEPTH=2).
# Prediction: the rows kernels are chains of one round trip a step (k = 2048 at 8 subgroups: 5 of them -> 3), so
# -25% of their time: profiled 3.08 -> ~2.3 ms, the N = 16 step 3.12 -> ~2.6 ms.
# The _d2 variants were reverted after this run (not in the tree).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
NEW=$BS
t0=$(date +%s)
timeout 200 $NEW test_coopmat > $OUT/test_coopmat.txt 2>&1; echo "test_coopmat rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/test_coopmat.txt | tr '\n' ' ')"
grep -E 'Failure|actual|Which' $OUT/test_coopmat.txt | head -6
for dt in "q4k 2048x2048,512x2048,8192x2048,2048x8192,128256x2048" "q6k 512x2048,2048x8192,128256x2048"; do
  read -r d shapes <<< "$dt"
  timeout 100 $NEW bs_gemv_bench --multi 16 --only rowscm,rowscm_d2,rowscm_r32,rowscm_r32_d2,rowscm_gated,rowscm_gated_d2 --dtype $d --shape $shapes \
    --wg 128,192,256 --rows 2 --reps 10 --json > $OUT/gemv-$d.json 2>/tmp/g.err || tail -3 /tmp/g.err
done
python3 - $OUT <<'PY'
import json, sys, os
for d in ("q4k", "q6k"):
    try: g = json.load(open(os.path.join(sys.argv[1], f"gemv-{d}.json")))
    except Exception as e: print(d, "no results", e); continue
    for r in g["results"]:
        if "skipped" in r: continue
        best = {}
        for c in r["configs"]:
            b = best.get(c["kernel"])
            if b is None or c["median_us"] < b["median_us"]: best[c["kernel"]] = c
        print(f"N=16 {d} {r['m']:>6}x{r['k']:<5} " + "  ".join(f"{k} {v['median_us']:.1f}us/wg{v['wg']}" for k, v in sorted(best.items())))
PY
$NEW blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$NEW blueshift convert /tmp/hf /tmp/m1 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf; echo "m1 ready $(( $(date +%s) - t0 )) s"
sv() { env $2 timeout 60 $NEW blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 256 --reps 3 --json --parallel 16 ${3:-} > /tmp/s.json 2>/tmp/s.err \
  && python3 -c "
import json; d=json.load(open('/tmp/s.json')); by=d.get('profile_ms_by_kernel') or {}
print('serve16 %-26s %8.1f tok/s %.3f ms/step' % ('$2', d['aggregate_decode_tok_s'], d['ms_per_step']), ' '.join('%s %.3f' % kv for kv in sorted(by.items(), key=lambda kv: -kv[1])[:9]))" \
  || { echo "serve $2 failed: $(tail -2 /tmp/s.err)"; }; }
$NEW blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 32 --reps 1 >/dev/null 2>&1
timeout 60 $NEW blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 256 --reps 3 --json > /tmp/b1.json 2>/dev/null && python3 -c "
import json; d=json.load(open('/tmp/b1.json')); print('batch 1 %.1f tok/s, bar 6x -> %.3f ms/step at N=16' % (d['decode_tok_s'], 16e3/(6*d['decode_tok_s'])))"
for r in 1 2; do sv x BLUESHIFT_ROWSCM_DEPTH=1; sv x BLUESHIFT_ROWSCM_DEPTH=2; done
sv x "BLUESHIFT_ROWSCM_DEPTH=2 BLUESHIFT_ROWSCM_SG=4"
sv x "BLUESHIFT_ROWSCM_DEPTH=2 BLUESHIFT_ROWSCM_GATED_SG=4"
sv x BLUESHIFT_ROWSCM_DEPTH=1 --profile
sv x BLUESHIFT_ROWSCM_DEPTH=2 --profile
timeout 60 $NEW blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 256 --reps 3 --json > /tmp/b1.json 2>/dev/null && python3 -c "
import json; d=json.load(open('/tmp/b1.json')); print('batch 1 %.1f tok/s, bar 6x -> %.3f ms/step at N=16' % (d['decode_tok_s'], 16e3/(6*d['decode_tok_s'])))"
echo "all done $(( $(date +%s) - t0 )) s"
