#!/usr/bin/env python3
"""The results table of benchmarks/peer/run_peer.sh: every NAME.QUANT.{blueshift,llama}.json pair in OUT_DIR
becomes a row (both engines' prefill tok/s, TTFT, decode tok/s and blueshift/llama.cpp ratios), written
to OUT_DIR/peer.md and OUT_DIR/peer.json. With run_peer.sh --rounds N, the pairs NAME.QUANT.rK.* (K = 2..N) join
round 1's row: each figure is the median over the rounds (the ratios of the medians), and the spread of each
engine's rounds (largest / smallest - 1) is reported beside it.

    benchmarks/peer/peer_report.py OUT_DIR
"""
import json
import pathlib
import re
import statistics
import sys

FIGURES = ("prefill_tok_s", "ttft_ms", "decode_tok_s")


def ratio(a, b):
    return a / b if a and b else None


def spread(values):
    values = [v for v in values if v]
    return max(values) / min(values) - 1 if len(values) > 1 else None


def main():
    out = pathlib.Path(sys.argv[1])
    rounds = {}  # (name, quant) -> [(round, blueshift json, llama json)]
    for bs_file in sorted(out.glob("*.blueshift.json")):
        stem = bs_file.name[: -len(".blueshift.json")]
        peer_file = out / f"{stem}.llama.json"
        if not peer_file.exists():
            continue
        m = re.fullmatch(r"(.+)\.r(\d+)", stem)
        k, stem = (int(m.group(2)), m.group(1)) if m else (1, stem)
        name, quant = stem.rsplit(".", 1)
        rounds.setdefault((name, quant), []).append(
            (k, json.loads(bs_file.read_text()), json.loads(peer_file.read_text())))
    rows = []
    for (name, quant), runs in sorted(rounds.items()):
        runs.sort(key=lambda r: r[0])
        b, p = runs[0][1], runs[0][2]  # round 1: the setup fields
        # Each engine's figures, round by round, then their medians.
        br = {k: [r[1][k] for r in runs] for k in FIGURES}
        pr = {k: [r[2][k] for r in runs] for k in FIGURES}
        bm = {k: statistics.median(v) for k, v in br.items()}
        pm = {k: statistics.median(v) for k, v in pr.items()}
        rows.append({
            "model": name, "quant": quant,
            "prompt_tokens": b["prompt_tokens"], "gen_tokens": b["gen_tokens"], "reps": b["reps"],
            "rounds": len(runs),
            "device": b["device"], "llama_devices": p["devices"], "llama_flash_attn": p["flash_attn"],
            "blueshift": bm,
            "llama_cpp": pm,
            # > 1: blueshift is faster (for TTFT: llama.cpp's TTFT / blueshift's).
            "ratio": {"prefill": ratio(bm["prefill_tok_s"], pm["prefill_tok_s"]),
                      "ttft": ratio(pm["ttft_ms"], bm["ttft_ms"]),
                      "decode": ratio(bm["decode_tok_s"], pm["decode_tok_s"])},
            # Each round's figures, and their spread (largest / smallest - 1; null for one round).
            "blueshift_rounds": br,
            "llama_cpp_rounds": pr,
            "spread": {"blueshift": {k: spread(v) for k, v in br.items()},
                       "llama_cpp": {k: spread(v) for k, v in pr.items()}},
            "blueshift_bandwidth": {k: b.get(k) for k in ("weight_bytes_per_token", "achieved_gb_s", "peak_gb_s",
                                                          "pct_of_peak", "peak_error", "floor_tok_s")},
            "llama_model_bytes": p.get("model_bytes"),
            "same_prompt_length": all(r[1]["prompt_tokens"] == r[2]["prompt_tokens"] and
                                      r[1]["gen_tokens"] == r[2]["gen_tokens"] for r in runs),
        })
    (out / "peer.json").write_text(json.dumps(rows, indent=2) + "\n")

    def f(x, digits=1):
        return "—" if x is None else f"{x:,.{digits}f}"

    def pc(x):
        return "—" if x is None else f"{100 * x:.1f}%"

    multi = any(r["rounds"] > 1 for r in rows)
    lines = [
        "| model | quant | prefill tok/s blueshift | llama.cpp | × | TTFT ms blueshift | llama.cpp | × "
        "| decode tok/s blueshift | llama.cpp | × | blueshift % of peak (floor tok/s) |"
        + (" rounds: spread of prefill, decode (blueshift; llama.cpp) |" if multi else ""),
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if multi else ""),
    ]
    for r in rows:
        b, p, x, bw = r["blueshift"], r["llama_cpp"], r["ratio"], r["blueshift_bandwidth"]
        pct = f(bw["pct_of_peak"]) + "%" + (" (peak error)" if bw["peak_error"] else "")
        sb, sp = r["spread"]["blueshift"], r["spread"]["llama_cpp"]
        lines.append(
            f"| {r['model']} | {r['quant']} | {f(b['prefill_tok_s'], 0)} | {f(p['prefill_tok_s'], 0)} | {f(x['prefill'], 2)} "
            f"| {f(b['ttft_ms'])} | {f(p['ttft_ms'])} | {f(x['ttft'], 2)} "
            f"| {f(b['decode_tok_s'])} | {f(p['decode_tok_s'])} | {f(x['decode'], 2)} "
            f"| {pct} ({f(bw['floor_tok_s'], 0)}) |"
            + (f" {r['rounds']}: {pc(sb['prefill_tok_s'])}, {pc(sb['decode_tok_s'])}; "
               f"{pc(sp['prefill_tok_s'])}, {pc(sp['decode_tok_s'])} |" if multi else ""))
    if rows:
        r = rows[0]
        over = ", then the median of the rounds" if multi else ""
        lines += ["", f"{r['prompt_tokens']}-token prompt in one batch, then {r['gen_tokens']} greedy tokens, "
                      f"medians of {r['reps']}{over}; × = blueshift / llama.cpp (TTFT: llama.cpp / blueshift), > 1 is "
                      f"blueshift ahead. blueshift on {r['device']}; llama.cpp on {r['llama_devices']}, flash attention "
                      f"{r['llama_flash_attn']}, all layers on the GPU."]
    (out / "peer.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
