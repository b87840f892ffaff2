#!/usr/bin/env bash
# Sourced by decode_ab.sh and logits_ab.sh (the synth model they compare variants on, and their variant syntax), and by
# coopmat_check.sh, decode_check.sh and profile_decode.sh (the model).
#   ab_model RUNNER CONFIG_JSON QUANT WORK   -> WORK/m: the config's checkpoint (`synth --seed 1`) converted to QUANT
#                                               (the checkpoint itself is removed)
#   ab_variant RUNNER NAME[@RUNNER2]:VAR=VAL,...
#                                            -> $ab_name, $ab_run (RUNNER2 where given: an older bundle's `run`, one
#                                               tree against another; else RUNNER) and the array ab_env (VAR=VAL ...)
#   ab_bench OUT NAME RUNNER MODEL PROMPT GEN REPS [VAR=VAL ...]
#                                            -> OUT/NAME.json (`bench --json`, 60 s at most) and one line: NAME,
#                                               decode tok/s and decode_persistent's GPU ms a step (the run scripts
#                                               of benchmarks/results/*-scripts each wrote this helper for itself)
#   ab_ids FILE RUNNER MODEL [VAR=VAL ...]   -> FILE: the greedy ids of `generate --deterministic` on a fixed 6-token
#                                               prompt, 64 tokens, one line (two settings whose files differ part the
#                                               decode; the run scripts of sessions 36-37 each wrote this for itself)
#   ab_rounds OUT RUNNER MODEL PROMPT GEN REPS ROUNDS VARIANT...
#                                            -> every VARIANT (ab_variant's syntax) through ab_bench, ROUNDS times
#                                               alternated (OUT/NAME-a.json, -b, ..), then each one's ab_ids
#                                               (OUT/ids-NAME.txt) and the token where it parts from the first's (the
#                                               loop the run scripts of session 43 each wrote for itself)
ab_model() {
  "$1" blueshift synth --config "$2" "$4/hf" --seed 1 >/dev/null
  "$1" blueshift convert "$4/hf" "$4/m" --quant "$3" >/dev/null
  rm -rf "$4/hf"
}
ab_variant() {
  ab_name=${2%%:*}
  ab_run=$1
  if [[ $ab_name == *@* ]]; then ab_run=${ab_name#*@}; ab_name=${ab_name%%@*}; fi
  ab_env=()
  IFS=',' read -r -a ab_env <<< "${2#*:}"
}
ab_bench() {
  local out=$1 name=$2 runner=$3 model=$4 prompt=$5 gen=$6 reps=$7
  shift 7
  env "$@" timeout 60 "$runner" blueshift bench --model "$model" --prompt-tokens "$prompt" --gen-tokens "$gen" \
    --reps "$reps" --json > "$out/$name.json" || { echo "$name: bench failed (rc $?)"; return 1; }
  python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
k = next((v for n, v in d["gpu_ms_by_dispatch"].items() if n.startswith("decode_persistent")), None)
print(f"{sys.argv[2]:36s} decode {d['decode_tok_s']:7.1f} tok/s, decode_persistent "
      + (f"{k:.4f} ms a step" if k is not None else f"not taken ({d['decode_kernel'].get('why', '')})"))
PY
}
ab_ids() {
  local file=$1 runner=$2 model=$3
  shift 3
  env "$@" "$runner" blueshift generate --model "$model" --prompt-tokens 1,5,77,1000,31000,9 --max-tokens 64 \
    --deterministic --json 2>/dev/null |
    python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" \
    > "$file"
}
ab_rounds() {
  local out=$1 runner=$2 model=$3 prompt=$4 gen=$5 reps=$6 rounds=$7 r v first=
  shift 7
  for r in $(printf '%s\n' a b c d e f g h | head -n "$rounds"); do
    for v in "$@"; do
      ab_variant "$runner" "$v"
      ab_bench "$out" "$ab_name-$r" "$ab_run" "$model" "$prompt" "$gen" "$reps" "${ab_env[@]}"
    done
  done
  for v in "$@"; do
    ab_variant "$runner" "$v"
    ab_ids "$out/ids-$ab_name.txt" "$ab_run" "$model" "${ab_env[@]}"
    if [[ -z $first ]]; then first=$ab_name; continue; fi
    python3 - "$out/ids-$first.txt" "$out/ids-$ab_name.txt" "$ab_name" "$first" <<'PY'
import sys
a, b = (open(f).read().split() for f in sys.argv[1:3])
if not a or not b:
    sys.exit(print(f"{sys.argv[3]}: no ids to compare (generate failed for {sys.argv[4] if not a else sys.argv[3]})"))
i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), None)
same = i is None and len(a) == len(b)
print(f"{sys.argv[3]}: --deterministic ids " + ("the same as " + sys.argv[4] if same else
      f"part from {sys.argv[4]}'s at token {i if i is not None else min(len(a), len(b))} of {len(a)}"))
PY
  done
}
