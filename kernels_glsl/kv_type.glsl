// The KV cache's element type: f16 (default), or f32 with KV_F32 (the *_f32kv variants, `--precision f32`:
// models whose attention logits are large, e.g. Gemma 4's scale-1 softmax over normalized q and k, where
// f16 keys alone move the logits by ~2%).
#ifdef KV_F32
#define KV_T float
#define KV_T4 vec4
#else
#define KV_T float16_t
#define KV_T4 f16vec4
#endif
