#!/usr/bin/env bash
# Issue 16 on the H100 (one command, ~5 min of device time): MoE parity of mixtral-tiny, qwen3moe-tiny and
# gptoss-tiny against HF logits made on the lease (prefill, decode, greedy), then bench rows at real shapes:
#   Mixtral-8x7B-shaped, q4_k_m (32 layers), and GPT-OSS-20B-shaped, experts MXFP4 (24 layers).
# A bf16 checkpoint of either does not fit the disk or the time (Mixtral 93 GB), so each is synthesized with
# 2 layers (bf16), converted (uncompressed shards) and grown to its real layer count by repeating those layers
# (benchmarks/moe_expand_layers.py: same bytes per layer, shards re-hashed; `verify` checks them). Weights are
# random: decode speed and bytes read are what a real checkpoint of the shape gives. bench counts only the
# active experts' bytes (k of E) in weight_bytes_per_token and the floor. Results go to $OUT/moe.tar.
# STEPS="parity mixtral gptoss" (the default) picks the parts, to split the run over commands if one is slow.
# LOCAL=1 runs the same steps at small shapes on whatever device there is (a check of the script on lavapipe).
set -uo pipefail
if [ "${LOCAL:-0}" = 1 ]; then BS=${BS:-build/blueshift}; BSRUN() { $BS "$@"; }; else
  . benchmarks/lease_setup.sh >/dev/null 2>&1; BSRUN() { $BS blueshift "$@"; }; fi
OUT=${OUT:-/tmp/out}; R=/tmp/moe; W=/tmp/moe-w; mkdir -p "$OUT" $R $W
PROMPT=${PROMPT:-512}; GEN=${GEN:-128}; REPS=${REPS:-5}; STEPS=${STEPS:-parity mixtral gptoss}
{
[ "${LOCAL:-0}" = 1 ] || nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
if [ "${LOCAL:-0}" != 1 ] && [[ " $STEPS " == *" parity "* ]]; then
  echo "== parity vs HF (refs made here)"
  python3 $SHARED/tools/make_refs_2026.py /tmp/refs mixtral-tiny,qwen3moe-tiny,gptoss-tiny > $R/make_refs.txt 2>&1 || tail -3 $R/make_refs.txt
  timeout 150 python3 benchmarks/parity_check.py "$BS" /tmp/refs mixtral-tiny qwen3moe-tiny gptoss-tiny
fi
summary() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}: decode {d['decode_tok_s']:.1f} tok/s (floor {d['floor_tok_s']:.0f}, {d['achieved_gb_s']:.0f} GB/s = "
      f"{d['pct_of_peak']:.1f}% of {d['peak_gb_s']:.0f}), prefill {d['prefill_tok_s']:.0f} tok/s, TTFT {d['ttft_ms']:.1f} ms, "
      f"submits/token {d['submits_per_token']:.4f}, active experts {d['active_experts']}, bytes/token weights "
      f"{d['weight_bytes_per_token']/1e9:.3f} GB (all weights {d['weight_bytes']/1e9:.2f} GB) kv {d['kv_bytes_per_token']/1e6:.1f} MB, "
      f"dispatches/token {d['dispatches_per_token']}, load {d['load_s']:.1f} s")
top = sorted(d['gpu_ms_by_kernel'].items(), key=lambda kv: -kv[1])[:6]
print("   step ms by kernel: " + ", ".join(f"{k} {v:.3f}" for k, v in top))
PY
}
row() {  # tag config quant layers
  local tag=$1 cfg=$2 quant=$3 layers=$4 t0
  python3 - "$cfg" $W/$tag.json "${LOCAL:-0}" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["num_hidden_layers"] = 2
if "layer_types" in c: c["layer_types"] = c["layer_types"][:2]
if sys.argv[3] == "1":  # small shapes for a local check of the script
    c.update(hidden_size=256, intermediate_size=256, num_attention_heads=4, num_key_value_heads=2, vocab_size=512,
             bos_token_id=1, eos_token_id=2)
    if "head_dim" in c: c["head_dim"] = 64
json.dump(c, open(sys.argv[2], "w"))
PY
  t0=$(date +%s)
  BSRUN synth --config $W/$tag.json $W/$tag-hf --seed 1 > $R/$tag.synth.txt 2>&1 || { echo "$tag: synth failed"; tail -3 $R/$tag.synth.txt; return; }
  BSRUN convert $W/$tag-hf $W/$tag-2 --quant $quant --no-compress --force > $R/$tag.convert.txt 2>&1 || { echo "$tag: convert failed"; tail -3 $R/$tag.convert.txt; return; }
  rm -rf $W/$tag-hf
  python3 benchmarks/moe_expand_layers.py $W/$tag-2 $W/$tag $layers || { echo "$tag: expand failed"; return; }
  rm -rf $W/$tag-2
  echo "$tag: made in $(( $(date +%s) - t0 )) s ($(tail -1 $R/$tag.convert.txt | cut -c1-100))"
  timeout 300 bash -c "$(declare -f BSRUN); BS='$BS'; BSRUN bench --model $W/$tag --prompt-tokens $PROMPT --gen-tokens $GEN --reps $REPS --json" \
    > $R/$tag.bench.json 2> $R/$tag.bench.err && summary $R/$tag.bench.json $tag || { echo "$tag: bench failed"; tail -3 $R/$tag.bench.err; }
  rm -rf $W/$tag
}
echo "== bench rows ($PROMPT + $GEN tokens, medians of $REPS)"
[[ " $STEPS " == *" mixtral "* ]] && row mixtral-8x7b-q4_k_m benchmarks/configs/mixtral-8x7b.json q4_k_m 32
[[ " $STEPS " == *" gptoss "* ]] && row gpt-oss-20b-mxfp4 benchmarks/configs/gpt-oss-20b.json mxfp4 24
} 2>&1 | tee $R/moe.txt
tar -C /tmp -cf "$OUT/moe.tar" moe
