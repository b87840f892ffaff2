#!/usr/bin/env bash
# blueshift and llama.cpp's Vulkan backend on the same random-weight model, in one command:
#   benchmarks/peer/run_peer.sh --bundle DIR --llama DIR|TAR.XZ --config CONFIG.json --quant q4_k_m[,f16] --out OUT
#        [--work DIR] [--prompt-tokens 512] [--gen-tokens 128] [--reps 5] [--rounds 1] [--seed 1] [--keep]
# For the config (a published architecture, e.g. ../shared/data/configs/llama-3.1-8b.json): synthesize the
# checkpoint (`blueshift synth`), convert it to each quant (`blueshift convert`), write it as GGUF
# (`blueshift export-gguf`: the same blocks, llama.cpp's names and q/k row order), then run
# `blueshift bench --json` and llama_bench_peer (the same prompt length, generated tokens, medians of reps)
# and write OUT/NAME.QUANT.{blueshift,llama}.json and the table of every row in OUT: OUT/peer.md, OUT/peer.json.
#   --rounds  run both engines N times, alternating (round k > 1 writes NAME.QUANT.rK.*.json): the table gives each
#             figure's median over the rounds and the spread of every engine's rounds (llama.cpp's 1B decode moved
#             8.7% between two rounds of one command on the H200: benchmarks/results/2026-11-30-h200-session37.md)
#   --bundle  scripts/bundle.sh's output (bin/, lib/, run); or a build folder holding the blueshift binary
#   --llama   benchmarks/peer/pack_peer.sh's output: llama_bench_peer + npm @node-llama-cpp/linux-x64-vulkan's
#             libraries (a folder, or its .tar.xz, unpacked under --work)
#   --work    where models are made (default /tmp/bs-peer: never under a folder that is sent back); the HF
#             checkpoint, RDRR and GGUF files are deleted as soon as they are used unless --keep (an 8B f16
#             needs ~16 GB for each of the three)
# Files in OUT: per model NAME.log (every step's output), per quant NAME.QUANT.{blueshift,llama}.json, and
# peer.md / peer.json (all rows in OUT).
# Steps whose output exists are skipped, so a run cut off by a time limit continues where it stopped.
# On lavapipe (a check, not a benchmark): BLUESHIFT_DEVICE=llvmpipe GGML_VK_VISIBLE_DEVICES=0 (llama.cpp
# skips CPU-type Vulkan devices unless named).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle= llama= config= quants= out= work= keep=0 prompt=512 gen=128 reps=5 rounds=1 seed=1
while [ $# -gt 0 ]; do
  case $1 in
    --bundle) bundle=$2; shift ;;
    --llama) llama=$2; shift ;;
    --config) config=$2; shift ;;
    --quant) quants=$2; shift ;;
    --out) out=$2; shift ;;
    --work) work=$2; shift ;;
    --prompt-tokens) prompt=$2; shift ;;
    --gen-tokens) gen=$2; shift ;;
    --reps) reps=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --seed) seed=$2; shift ;;
    --keep) keep=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run_peer.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
for v in bundle llama config quants out; do
  [ -n "${!v}" ] || { echo "run_peer.sh: --$v is required (see --help)" >&2; exit 2; }
done
[ -f "$config" ] || { echo "run_peer.sh: --config $config: no such file" >&2; exit 3; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "run_peer.sh: --rounds $rounds (expected a count >= 1)" >&2; exit 2; }
# Round k's result files for a quant: NAME.QUANT (round 1) or NAME.QUANT.rK, then .blueshift.json / .llama.json.
res_of() { if [ "$2" = 1 ]; then echo "$out/$name.$1"; else echo "$out/$name.$1.r$2"; fi; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=${work:-${TMPDIR:-/tmp}/bs-peer}
mkdir -p "$work"
bundle=$(cd "$bundle" && pwd)
if [ -x "$bundle/run" ]; then
  bs() { "$bundle/run" blueshift "$@"; }
elif [ -x "$bundle/blueshift" ]; then
  bs() { "$bundle/blueshift" "$@"; }
else
  echo "run_peer.sh: --bundle $bundle holds neither run (scripts/bundle.sh) nor blueshift" >&2; exit 3
fi
if [ -f "$llama" ]; then  # the packed .tar.xz
  mkdir -p "$work/llama"
  tar -C "$work/llama" -xJf "$llama"
  llama=$(dirname "$(find "$work/llama" -name llama_bench_peer -type f | head -1)")
fi
llama=$(cd "$llama" && pwd)
[ -x "$llama/llama_bench_peer" ] || { echo "run_peer.sh: $llama/llama_bench_peer missing (make it with benchmarks/peer/pack_peer.sh)" >&2; exit 3; }
# llama.cpp's Vulkan backend needs libvulkan.so.1: the machine's, or the one the blueshift bundle carries.
peer_path="$llama${bundle:+:$bundle/lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

name=$(basename "$config" .json)
m=$work/$name
IFS=, read -r -a qs <<< "$quants"
todo=()
for q in "${qs[@]}"; do
  case $q in q4_k_m|f16|q8_0) ;; *) echo "run_peer.sh: --quant $q (expected q4_k_m, f16 or q8_0)" >&2; exit 2 ;; esac
  done_all=1
  for k in $(seq 1 "$rounds"); do
    r=$(res_of "$q" "$k")
    [ -s "$r.blueshift.json" ] && [ -s "$r.llama.json" ] || done_all=0
  done
  [ $done_all = 1 ] || todo+=("$q")
done
logf=$out/$name.log
log() { echo "[$(date +%T)] $*" | tee -a "$logf" >&2; }
# Runs a step with its stdout and stderr appended to the log; on failure shows the log's tail.
step() { "$@" >> "$logf" 2>&1 || { echo "run_peer.sh: failed: $*" >&2; tail -15 "$logf" >&2; exit 1; }; }

# Models: one synthesized checkpoint, one RDRR per quant.
for q in "${todo[@]}"; do
  [ -f "$m/$q/manifest.json" ] && continue
  if [ ! -f "$m/hf/.done" ]; then
    log "synth $name"
    rm -rf "$m/hf"
    step bs synth --config "$config" "$m/hf" --seed "$seed"
    touch "$m/hf/.done"
  fi
  log "convert $name $q"
  step bs convert "$m/hf" "$m/$q" --quant "$q" --force --json
done
[ $keep = 1 ] || rm -rf "$m/hf"

for q in "${todo[@]}"; do
  gguf=$m/$q.gguf
  if [ ! -f "$gguf" ]; then
    log "export-gguf $name $q"
    step bs export-gguf --model "$m/$q" --out "$gguf.part" --json
    mv "$gguf.part" "$gguf"
  fi
  for k in $(seq 1 "$rounds"); do
    res=$(res_of "$q" "$k")
    if [ ! -s "$res.blueshift.json" ]; then
      log "bench blueshift $name $q (round $k of $rounds)"
      bs bench --model "$m/$q" --prompt-tokens "$prompt" --gen-tokens "$gen" --reps "$reps" --json \
        > "$res.blueshift.json.part" 2>> "$logf" || { tail -15 "$logf" >&2; exit 1; }
      mv "$res.blueshift.json.part" "$res.blueshift.json"
    fi
    if [ ! -s "$res.llama.json" ]; then
      log "bench llama.cpp $name $q (round $k of $rounds)"
      LD_LIBRARY_PATH=$peer_path "$llama/llama_bench_peer" --model "$gguf" --backends "$llama" \
        --prompt-tokens "$prompt" --gen-tokens "$gen" --reps "$reps" > "$res.llama.json.part" 2>> "$logf" \
        || { tail -15 "$logf" >&2; exit 1; }
      mv "$res.llama.json.part" "$res.llama.json"
    fi
  done
  [ $keep = 1 ] || rm -rf "$gguf" "$m/$q"
done
[ $keep = 1 ] || rmdir "$m" 2>/dev/null || true

python3 "$here/peer_report.py" "$out"
