#!/usr/bin/env bash
# Sourced by decode_ab.sh and logits_ab.sh (the synth model they compare variants on, and their variant syntax), and by
# coopmat_check.sh, decode_check.sh and profile_decode.sh (the model).
#   ab_model RUNNER CONFIG_JSON QUANT WORK   -> WORK/m: the config's checkpoint (`synth --seed 1`) converted to QUANT
#                                               (the checkpoint itself is removed)
#   ab_variant RUNNER NAME[@RUNNER2]:VAR=VAL,...
#                                            -> $ab_name, $ab_run (RUNNER2 where given: an older bundle's `run`, one
#                                               tree against another; else RUNNER) and the array ab_env (VAR=VAL ...)
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
