#!/usr/bin/env python3
"""A tiny random-weight Phi-3 with LongRoPE (the rope of Phi-3's 128k checkpoints), with float32 reference
logits from HF transformers in both of its regimes.

HF picks LongRoPE's factors by the positions of each forward: short_factor up to
original_max_position_embeddings (32 here), long_factor beyond. logits_full.npy is one forward of 48 tokens
(long factors), logits_short.npy one of their first 24 (short factors); `greedy` continues an 8-token prompt
to 32 positions (short throughout). The weights are rounded to bfloat16 values but the model stays float32,
so HF's inverse frequencies are not rounded (make_refs.py's model.to(bfloat16) would round them).

Runs where torch + transformers exist (the GPU lease image; no GPU needed):
    python3 scripts/make_longrope_ref.py OUT_DIR
writes OUT_DIR/phi3-longrope/{config.json, generation_config.json, model.safetensors, ref.json,
logits_full.npy, logits_short.npy}; commit them under tests/model/goldens/phi3-longrope/."""
import json, os, sys
import numpy as np
import torch
import transformers
from transformers import Phi3Config, Phi3ForCausalLM

NAME = "phi3-longrope"
HEAD_DIM = 16


def build():
    short = [1.0 + 0.05 * i for i in range(HEAD_DIM // 2)]
    long = [1.0 + 1.7 * i for i in range(HEAD_DIM // 2)]
    kw = dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=128, original_max_position_embeddings=32,
              rms_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, pad_token_id=0)
    try:  # transformers 5: rope_parameters
        cfg = Phi3Config(rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0, "short_factor": short,
                                          "long_factor": long, "original_max_position_embeddings": 32}, **kw)
    except Exception as e:  # older: rope_scaling
        print("rope_parameters refused:", e)
        cfg = Phi3Config(rope_theta=10000.0, rope_scaling={"type": "longrope", "short_factor": short,
                                                           "long_factor": long}, **kw)
    cfg._attn_implementation = "eager"
    model = Phi3ForCausalLM(cfg)
    g = torch.Generator().manual_seed(sum(NAME.encode()))
    with torch.no_grad():
        for pname, p in model.named_parameters():
            w = (0.1 if "norm" in pname else 0.08) * torch.randn(p.shape, generator=g)
            if "norm" in pname:
                w += 1.0
            p.copy_(w.bfloat16().float())
    return model.eval()


def main():
    out = os.path.join(sys.argv[1], NAME)
    os.makedirs(out, exist_ok=True)
    print("transformers", transformers.__version__, "torch", torch.__version__)
    model = build()
    vocab = model.config.vocab_size
    rng = np.random.default_rng(len(NAME))
    ids = [model.config.bos_token_id] + rng.integers(3, vocab, size=47).tolist()
    with torch.no_grad():
        full = model(torch.tensor([ids])).logits[0].float().numpy()
        short = model(torch.tensor([ids[:24]])).logits[0].float().numpy()
        prompt = ids[:8]
        gen = model.generate(torch.tensor([prompt]), max_new_tokens=24, min_new_tokens=24, do_sample=False,
                             eos_token_id=None, pad_token_id=0)
    np.save(os.path.join(out, "logits_full.npy"), full.astype(np.float32))
    np.save(os.path.join(out, "logits_short.npy"), short.astype(np.float32))
    model.to(torch.bfloat16).save_pretrained(out, safe_serialization=True)  # exact: the weights are bf16 values
    meta = {"name": NAME, "arch": type(model).__name__, "transformers": transformers.__version__,
            "tokens": ids, "prompt": prompt, "greedy": gen[0, len(prompt):].tolist(),
            "logits_shape": list(full.shape), "short_tokens": 24, "top1_full": full.argmax(-1).tolist(),
            "logit_std": float(full.std())}
    with open(os.path.join(out, "ref.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(NAME, full.shape, "std", round(float(full.std()), 3), "greedy", meta["greedy"][:8])
    print(open(os.path.join(out, "config.json")).read())


main()
