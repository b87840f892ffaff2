# Every kernel variant, and the only place one is declared: bs_kernel(NAME SOURCE [DEFINES ...]).
# Names read op + types, e.g. matvec_q4k_f32.

# --- runtime plumbing and micro-benchmarks ---
bs_kernel(noop noop.comp)
bs_kernel(stream_read stream_read.comp)
bs_kernel(kv_touch kv_touch.comp)  # decode: a layer's K/V rows read into L2 ahead of attention
bs_kernel(stream_rows stream_rows.comp)
bs_kernel(grid_sync grid_sync.comp)
bs_kernel(reduce_sum_f32 reduce.comp)
bs_kernel(reduce_max_f32 reduce.comp DEFINES REDUCE_MAX)

# --- model kernels ---
bs_kernel(rms_norm_f32 rms_norm.comp)
bs_kernel(matvec_f16 matvec_f16.comp)

# --- forward pass plumbing (runtime/model) ---
bs_kernel(rope_f32 rope.comp)
bs_kernel(kv_store_f16 kv_store.comp)
bs_kernel(rope_kv_f32 rope_kv.comp)
bs_kernel(rope_kv_f32_planes rope_kv.comp DEFINES QKV_PLANES)  # prefill: q, k, v summed from split-k planes
bs_kernel(rope_kv_f32_slots rope_kv.comp DEFINES BATCH_SLOTS)  # serve's batched decode: every sequence in one dispatch
bs_kernel(attention_f16kv attention.comp)
bs_kernel(attention_split_f16kv attention_split.comp)
bs_kernel(attention_split_f16kv_gqa attention_split.comp DEFINES ATTN_GQA)  # a kv head's query heads together
bs_kernel(attention_split_f16kv_chain attention_split.comp DEFINES ATTN_CHAIN)  # q/k/v -> it -> o (chain.glsl)
bs_kernel(attention_split_f16kv_slots attention_split.comp DEFINES BATCH_SLOTS)
bs_kernel(attention_split_f16kv_slots_f16o attention_split.comp DEFINES BATCH_SLOTS ATTN_OUT_F16)
bs_kernel(attention_tiled_f16kv attention_tiled.comp)
# ... prefill on tensor cores (GL_NV_cooperative_matrix: offered only where Device::has_coopmat_f16), per head_dim
bs_kernel(attention_fa_f16kv_hd64 attention_fa.comp DEFINES CM_HD=64)
bs_kernel(attention_fa_f16kv_hd128 attention_fa.comp DEFINES CM_HD=128)
bs_kernel(attention_fa_f16kv_hd64_f16o attention_fa.comp DEFINES CM_HD=64 ATTN_OUT_F16)
bs_kernel(attention_fa_f16kv_hd128_f16o attention_fa.comp DEFINES CM_HD=128 ATTN_OUT_F16)
# ... with GPT-OSS's attention sinks (binding 7)
bs_kernel(attention_f16kv_sinks attention.comp DEFINES ATTN_SINKS)
bs_kernel(attention_split_f16kv_sinks attention_split.comp DEFINES ATTN_SINKS)
bs_kernel(attention_tiled_f16kv_sinks attention_tiled.comp DEFINES ATTN_SINKS)
bs_kernel(attention_f32kv_sinks attention.comp DEFINES KV_F32 ATTN_SINKS)
bs_kernel(attention_split_f32kv_sinks attention_split.comp DEFINES KV_F32 ATTN_SINKS)
# ... with an f32 KV cache (`--precision f32`; prefill then runs attention.comp: f32 tiles exceed shared memory)
bs_kernel(kv_store_f32 kv_store.comp DEFINES KV_F32)
bs_kernel(rope_kv_f32kv rope_kv.comp DEFINES KV_F32)
bs_kernel(rope_kv_f32kv_slots rope_kv.comp DEFINES KV_F32 BATCH_SLOTS)
bs_kernel(attention_f32kv attention.comp DEFINES KV_F32)
bs_kernel(attention_split_f32kv attention_split.comp DEFINES KV_F32)
bs_kernel(attention_split_f32kv_slots attention_split.comp DEFINES KV_F32 BATCH_SLOTS)
bs_kernel(attention_split_f32kv_slots_f16o attention_split.comp DEFINES KV_F32 BATCH_SLOTS ATTN_OUT_F16)
bs_kernel(decode_persistent decode_persistent.comp)
bs_kernel(decode_persistent_i8 decode_persistent.comp DEFINES PK_INT_DOT)  # Q4_K rows on integer dot products
bs_kernel(decode_persistent_i8mx decode_persistent.comp DEFINES PK_INT_DOT Q8X_MIXED)  # ... mixed signedness (int_dot.glsl)
bs_kernel(decode_persistent_h16 decode_persistent.comp DEFINES PK_HALF_DOT)  # ... on packed f16 arithmetic
# ... with the o projection folded into the attention phase (float atomics into x: VK_EXT_shader_atomic_float)
bs_kernel(decode_persistent_fold decode_persistent.comp DEFINES PK_FOLD_O)
bs_kernel(decode_persistent_h16_fold decode_persistent.comp DEFINES PK_HALF_DOT PK_FOLD_O)
bs_kernel(gated_act_f32 elementwise.comp DEFINES GATED_ACT)
bs_kernel(gated_act_f32_f16 elementwise.comp DEFINES GATED_ACT_F16)
bs_kernel(gated_act_f16 elementwise.comp DEFINES GATED_ACT_F16 H_F16_ONLY)  # the f16 copy alone
bs_kernel(add_bias_f32 elementwise.comp DEFINES ADD_BIAS)
bs_kernel(softcap_f32 elementwise.comp DEFINES SOFTCAP)
bs_kernel(get_rows_f16 get_rows.comp)
bs_kernel(rms_norm_add_f32 rms_norm.comp DEFINES RMS_ACCUMULATE)
bs_kernel(rms_norm_f32_f16 rms_norm.comp DEFINES OUT_F16)
bs_kernel(rms_norm_f16 rms_norm.comp DEFINES OUT_F16 F16_ONLY)  # the f16 copy alone
bs_kernel(rms_norm_f32_f16_planes rms_norm.comp DEFINES OUT_F16 RMS_PLANES)  # a residual's split-k planes summed in
bs_kernel(rms_norm_f16_planes rms_norm.comp DEFINES OUT_F16 F16_ONLY RMS_PLANES)
# LFM2: the gated short conv
bs_kernel(short_conv_f32 short_conv.comp)
# Qwen 3.5 / 3.6: Gated DeltaNet (conv, recurrence) and the gated attention output
bs_kernel(conv_silu_f32 conv_silu.comp)
bs_kernel(delta_rule_f32 delta_rule.comp)
bs_kernel(delta_rule_chunk_f32 delta_rule_chunk.comp)
bs_kernel(attn_gate_split_f32 attn_gate.comp DEFINES GATE_SPLIT)
bs_kernel(attn_gate_apply_f32 attn_gate.comp DEFINES GATE_APPLY)
# Mixture of experts (runtime/model/forward_moe.cpp): router top-k, expert activation, weighted combine, prefill grouping
bs_kernel(moe_router_f32 moe.comp DEFINES MOE_ROUTER)
bs_kernel(moe_act_f32 moe.comp DEFINES MOE_ACT)
bs_kernel(moe_combine_f32 moe.comp DEFINES MOE_COMBINE)
bs_kernel(moe_group moe.comp DEFINES MOE_GROUP)
# Gemma 4: layer_scalar, and the per-layer inputs of its E variants
bs_kernel(scale_by_f32 elementwise.comp DEFINES SCALE_BY)
bs_kernel(to_f16 elementwise.comp DEFINES TO_F16)
bs_kernel(splitk_reduce elementwise.comp DEFINES SPLITK_REDUCE)
bs_kernel(ple_combine_f32 ple.comp)

# --- weight kernels: y = W x (decode), Y = X W^T (prefill), embedding rows; W in f16 / Q8_0 / Q4_K / Q6_K ---
bs_kernel(matvec_q8_0 matvec_q8_0.comp)
bs_kernel(matvec_q4k matvec_q4k.comp)
bs_kernel(matvec_q6k matvec_q6k.comp)
bs_kernel(matvec_q6k_wide matvec_q6k.comp DEFINES MV_Q6K_WIDE)  # decode's head: parts of 64 weights (matvec_q6k.comp)
bs_kernel(matvec_q6k_wide_i8 matvec_q6k.comp DEFINES MV_Q6K_WIDE MV_X_Q8)  # ... on x from quantize_x_q8
# ... Q4_K with x in two-level int8 (int_dot.glsl; integer dot products: offered only where Device::has_int_dot)
bs_kernel(quantize_x_q8 quantize_x_q8.comp)
bs_kernel(rms_norm_q8x rms_norm_q8x.comp)  # decode's output norm straight into quantize_x_q8's form (the Q6_K head)
bs_kernel(matvec_q4k_i8 matvec_q4k.comp DEFINES MV_X_Q8)
bs_kernel(matvec_q4k_i8_1level matvec_q4k.comp DEFINES MV_X_Q8 Q8X_ONE_LEVEL)  # bs_gemv_bench's speed bound only
bs_kernel(matvec_q4k_i8mx matvec_q4k.comp DEFINES MV_X_Q8 Q8X_MIXED)  # high nibbles in place, mixed-signedness dots
# ... with the preceding RMSNorm folded in (decode: attn_norm -> q/k/v, ffn_norm -> gate/up)
bs_kernel(matvec_f16_norm matvec_f16.comp DEFINES MV_NORM)
bs_kernel(matvec_q8_0_norm matvec_q8_0.comp DEFINES MV_NORM)
bs_kernel(matvec_q4k_norm matvec_q4k.comp DEFINES MV_NORM)
bs_kernel(matvec_q6k_norm matvec_q6k.comp DEFINES MV_NORM)
# ... and the decode q / k / v projections with RoPE (q, k) and the KV-cache append (k, v) in the epilogue
foreach(dt f16 q8_0 q4k q6k)
  bs_kernel(matvec_${dt}_q matvec_${dt}.comp DEFINES MV_NORM MV_ROPE)
  bs_kernel(matvec_${dt}_k matvec_${dt}.comp DEFINES MV_NORM MV_ROPE MV_KV)
  bs_kernel(matvec_${dt}_v matvec_${dt}.comp DEFINES MV_NORM MV_KV)
endforeach()
# ... and the gated FFN in one dispatch: act(W_gate xn) * (W_up xn), with the norm folded (matvec.glsl)
bs_kernel(matvec_f16_gated matvec_f16.comp DEFINES MV_NORM MV_GATED)
# ... decode's chained dispatches (matvec.glsl MV_CHAIN): o -> gate + up -> down -> q/k/v, each waiting in the shader
bs_kernel(matvec_f16_gated_chain matvec_f16.comp DEFINES MV_NORM MV_GATED MV_CHAIN)
bs_kernel(matvec_f16_chain matvec_f16.comp DEFINES MV_CHAIN)
bs_kernel(matvec_f16_q_chain matvec_f16.comp DEFINES MV_NORM MV_ROPE MV_CHAIN)  # ... and down -> the next q, k, v
bs_kernel(matvec_f16_k_chain matvec_f16.comp DEFINES MV_NORM MV_ROPE MV_KV MV_CHAIN)
bs_kernel(matvec_f16_v_chain matvec_f16.comp DEFINES MV_NORM MV_KV MV_CHAIN)
bs_kernel(matvec_q8_0_gated matvec_q8_0.comp DEFINES MV_NORM MV_GATED)
bs_kernel(matvec_q4k_gated matvec_q4k.comp DEFINES MV_NORM MV_GATED)
bs_kernel(matvec_q6k_gated matvec_q6k.comp DEFINES MV_NORM MV_GATED)
# ... and the multi-row matvec (serve's batched decode): W decoded once for NB batch rows (matvec_multi.glsl),
# plain, norm-folded, and the gated FFN
foreach(dt f16 q8_0 q4k q6k)
  bs_kernel(matvec_${dt}_multi matvec_${dt}.comp DEFINES MV_MULTI)
  bs_kernel(matvec_${dt}_multi_norm matvec_${dt}.comp DEFINES MV_MULTI MV_NORM)
  bs_kernel(matvec_${dt}_multi_gated matvec_${dt}.comp DEFINES MV_MULTI MV_NORM MV_GATED)
  bs_kernel(matvec_${dt}_multi_gated_xn matvec_${dt}.comp DEFINES MV_MULTI MV_GATED)  # x normalized beforehand
  # ... with invocations across rows of W, so a slice's x loads are broadcasts (matvec_lanes.glsl): plain, gated
  bs_kernel(matvec_${dt}_multi_lanes matvec_${dt}.comp DEFINES MV_MULTI MV_LANES)
  bs_kernel(matvec_${dt}_multi_lanes_gated matvec_${dt}.comp DEFINES MV_MULTI MV_LANES MV_GATED)
endforeach()
# ... and the mixture-of-experts matvec: W [experts, m, k], each workgroup row's expert read from the router's ids
foreach(dt f16 q8_0 q4k q6k mxfp4)
  bs_kernel(matvec_${dt}_expert matvec_${dt}.comp DEFINES MV_EXPERT)
endforeach()
# MXFP4 (GPT-OSS's experts; also a plain matvec / matmul for tests and other MXFP4 matrices)
bs_kernel(matvec_mxfp4 matvec_mxfp4.comp)
bs_kernel(matmul_mxfp4 matmul.comp DEFINES W_MXFP4)
bs_kernel(matmul_mxfp4_expert matmul.comp DEFINES W_MXFP4 MM_EXPERT)
# ... and at prefill, the grouped expert GEMM (tokens gathered per expert by moe_group)
bs_kernel(matmul_f16_expert matmul.comp DEFINES W_F16 MM_EXPERT)
bs_kernel(matmul_q8_0_expert matmul.comp DEFINES W_Q8_0 MM_EXPERT)
bs_kernel(matmul_q4k_expert matmul.comp DEFINES W_Q4K MM_EXPERT)
bs_kernel(matmul_q6k_expert matmul.comp DEFINES W_Q6K MM_EXPERT)
bs_kernel(embed_f16 embed.comp DEFINES W_F16)
bs_kernel(embed_q8_0 embed.comp DEFINES W_Q8_0)
bs_kernel(embed_q4k embed.comp DEFINES W_Q4K)
bs_kernel(embed_q6k embed.comp DEFINES W_Q6K)
bs_kernel(embed_i4 embed.comp DEFINES W_I4)  # DOPPLER's int4 per-layer-embedding table (Gemma 4 E), row scales at binding 3
bs_kernel(matmul_f16 matmul.comp DEFINES W_F16)
bs_kernel(matmul_q8_0 matmul.comp DEFINES W_Q8_0)
bs_kernel(matmul_q4k matmul.comp DEFINES W_Q4K)
bs_kernel(matmul_q6k matmul.comp DEFINES W_Q6K)
# ... on tensor cores (GL_NV_cooperative_matrix; KernelCache offers them only where Device::has_coopmat_f16),
# in three tiles (tokens x rows of W; subgroups): 64x64 (2x2), 64x128 and 128x128 (2x4) for larger grids
bs_kernel(matmul_cm_f16 matmul_cm.comp DEFINES W_F16)
bs_kernel(matmul_cm_f16_64x128 matmul_cm.comp DEFINES W_F16 CM_BN=128 CM_WARPS_N=4)
bs_kernel(matmul_cm_f16_128x128 matmul_cm.comp DEFINES W_F16 CM_BM=128 CM_BN=128 CM_WARPS_N=4)
bs_kernel(matmul_cm_f16_64x64k64 matmul_cm.comp DEFINES W_F16 CM_BK=64 CM_WARPS_N=4)
bs_kernel(matmul_cm_f16_256x128k16 matmul_cm.comp DEFINES W_F16 CM_BM=256 CM_BN=128 CM_BK=16 CM_WARPS_M=4 CM_WARPS_N=2)
bs_kernel(matmul_cm_f16_128x128sk64 matmul_cm.comp DEFINES W_F16 CM_BM=128 CM_BN=128 CM_BK=64 CM_WARPS_N=4 CM_SINGLE CM_PREFETCH)
bs_kernel(matmul_cm_f16_128x128sk64_split matmul_cm.comp DEFINES W_F16 CM_BM=128 CM_BN=128 CM_BK=64 CM_WARPS_N=4 CM_SINGLE CM_PREFETCH CM_SPLITK)
bs_kernel(matmul_cm_f16_128x128sk64_gated matmul_cm.comp DEFINES W_F16 CM_BM=128 CM_BN=128 CM_BK=64 CM_WARPS_N=4 CM_SINGLE CM_PREFETCH CM_GATED)
bs_kernel(matmul_cm_q8_0 matmul_cm.comp DEFINES W_Q8_0)
bs_kernel(matmul_cm_q8_0_64x128 matmul_cm.comp DEFINES W_Q8_0 CM_BN=128 CM_WARPS_N=4)
bs_kernel(matmul_cm_q8_0_128x128 matmul_cm.comp DEFINES W_Q8_0 CM_BM=128 CM_BN=128 CM_WARPS_N=4)
bs_kernel(matmul_cm_q8_0_64x64k64 matmul_cm.comp DEFINES W_Q8_0 CM_BK=64 CM_WARPS_N=4)
bs_kernel(matmul_cm_q8_0_256x128k16 matmul_cm.comp DEFINES W_Q8_0 CM_BM=256 CM_BN=128 CM_BK=16 CM_WARPS_M=4 CM_WARPS_N=2)
bs_kernel(matmul_cm_q8_0_128x128sk64 matmul_cm.comp DEFINES W_Q8_0 CM_BM=128 CM_BN=128 CM_BK=64 CM_WARPS_N=4 CM_SINGLE CM_PREFETCH CM_PREFETCH_X)
bs_kernel(matmul_cm_q8_0_128x128sk64_split matmul_cm.comp DEFINES W_Q8_0 CM_BM=128 CM_BN=128 CM_BK=64 CM_WARPS_N=4 CM_SINGLE CM_PREFETCH CM_PREFETCH_X CM_SPLITK)
bs_kernel(matmul_cm_q8_0_128x128sk64_gated matmul_cm.comp DEFINES W_Q8_0 CM_BM=128 CM_BN=128 CM_BK=64 CM_WARPS_N=4 CM_SINGLE CM_PREFETCH CM_PREFETCH_X CM_GATED)
bs_kernel(matmul_cm_q4k matmul_cm.comp DEFINES W_Q4K)
bs_kernel(matmul_cm_q4k_64x128 matmul_cm.comp DEFINES W_Q4K CM_BN=128 CM_WARPS_N=4)
bs_kernel(matmul_cm_q4k_128x128 matmul_cm.comp DEFINES W_Q4K CM_BM=128 CM_BN=128 CM_WARPS_N=4)
bs_kernel(matmul_cm_q4k_64x64k64 matmul_cm.comp DEFINES W_Q4K CM_BK=64 CM_WARPS_N=4)
bs_kernel(matmul_cm_q4k_256x128k16 matmul_cm.comp DEFINES W_Q4K CM_BM=256 CM_BN=128 CM_BK=16 CM_WARPS_M=4 CM_WARPS_N=2)
bs_kernel(matmul_cm_q4k_128x128sk64 matmul_cm.comp DEFINES W_Q4K CM_BM=128 CM_BN=128 CM_BK=64 CM_WARPS_N=4 CM_SINGLE)
bs_kernel(matmul_cm_q4k_128x128sk64_split matmul_cm.comp DEFINES W_Q4K CM_BM=128 CM_BN=128 CM_BK=64 CM_WARPS_N=4 CM_SINGLE CM_SPLITK)
bs_kernel(matmul_cm_q4k_128x128sk64_gated matmul_cm.comp DEFINES W_Q4K CM_BM=128 CM_BN=128 CM_BK=64 CM_WARPS_N=4 CM_SINGLE CM_GATED)
bs_kernel(matmul_cm_q6k matmul_cm.comp DEFINES W_Q6K)
bs_kernel(matmul_cm_q6k_64x128 matmul_cm.comp DEFINES W_Q6K CM_BN=128 CM_WARPS_N=4)
bs_kernel(matmul_cm_q6k_128x128 matmul_cm.comp DEFINES W_Q6K CM_BM=128 CM_BN=128 CM_WARPS_N=4)
bs_kernel(matmul_cm_q6k_64x64k64 matmul_cm.comp DEFINES W_Q6K CM_BK=64 CM_WARPS_N=4)
bs_kernel(matmul_cm_q6k_256x128k16 matmul_cm.comp DEFINES W_Q6K CM_BM=256 CM_BN=128 CM_BK=16 CM_WARPS_M=4 CM_WARPS_N=2)
bs_kernel(matmul_cm_q6k_128x128sk64 matmul_cm.comp DEFINES W_Q6K CM_BM=128 CM_BN=128 CM_BK=64 CM_WARPS_N=4 CM_SINGLE CM_PREFETCH CM_PREFETCH_X)
bs_kernel(matmul_cm_q6k_128x128sk64_split matmul_cm.comp DEFINES W_Q6K CM_BM=128 CM_BN=128 CM_BK=64 CM_WARPS_N=4 CM_SINGLE CM_PREFETCH CM_PREFETCH_X CM_SPLITK)
bs_kernel(matmul_cm_q6k_128x128sk64_gated matmul_cm.comp DEFINES W_Q6K CM_BM=128 CM_BN=128 CM_BK=64 CM_WARPS_N=4 CM_SINGLE CM_PREFETCH CM_PREFETCH_X CM_GATED)
# (each dtype's *_128x128sk64_split: the k steps split among several workgroups per tile, for grids smaller
# than the GPU; splitk_reduce sums the parts)
# ... and serve's batched decode on tensor cores (M <= 32 sequences): 16 rows of W a workgroup, k split over its
# subgroups (matmul_rows_cm.comp); plain (store / accumulate) and the gated FFN (f16 out). Coopmat-gated as above.
foreach(dt f16 q8_0 q4k q6k)
  string(TOUPPER ${dt} DT)
  bs_kernel(matmul_rows_cm_${dt} matmul_rows_cm.comp DEFINES W_${DT})
  bs_kernel(matmul_rows_cm_${dt}_gated matmul_rows_cm.comp DEFINES W_${DT} RCM_GATED)
  bs_kernel(matmul_rows_cm_${dt}_k128 matmul_rows_cm.comp DEFINES W_${DT} RCM_BK=128)  # long k: half the steps
  bs_kernel(matmul_rows_cm_${dt}_r32 matmul_rows_cm.comp DEFINES W_${DT} RCM_ROWS32)  # 32 rows a workgroup: the head
  # X staged in shared memory (M <= 16): the _xs forms of the plain, gated and 32-row kernels
  bs_kernel(matmul_rows_cm_${dt}_xs matmul_rows_cm.comp DEFINES W_${DT} RCM_X_SHARED)
  bs_kernel(matmul_rows_cm_${dt}_gated_xs matmul_rows_cm.comp DEFINES W_${DT} RCM_GATED RCM_X_SHARED)
  bs_kernel(matmul_rows_cm_${dt}_r32_xs matmul_rows_cm.comp DEFINES W_${DT} RCM_ROWS32 RCM_X_SHARED)
  # ... emulated without cooperative matrices (every device; tests only: lavapipe checks the kernel's indexing)
  bs_kernel(matmul_rows_emu_${dt} matmul_rows_cm.comp DEFINES W_${DT} RCM_EMULATE)
  bs_kernel(matmul_rows_emu_${dt}_gated matmul_rows_cm.comp DEFINES W_${DT} RCM_GATED RCM_EMULATE)
  bs_kernel(matmul_rows_emu_${dt}_k128 matmul_rows_cm.comp DEFINES W_${DT} RCM_BK=128 RCM_EMULATE)
  bs_kernel(matmul_rows_emu_${dt}_r32 matmul_rows_cm.comp DEFINES W_${DT} RCM_ROWS32 RCM_EMULATE)
  bs_kernel(matmul_rows_emu_${dt}_xs matmul_rows_cm.comp DEFINES W_${DT} RCM_X_SHARED RCM_EMULATE)
  bs_kernel(matmul_rows_emu_${dt}_gated_xs matmul_rows_cm.comp DEFINES W_${DT} RCM_GATED RCM_X_SHARED RCM_EMULATE)
  bs_kernel(matmul_rows_emu_${dt}_r32_xs matmul_rows_cm.comp DEFINES W_${DT} RCM_ROWS32 RCM_X_SHARED RCM_EMULATE)
endforeach()

# --- load-time repacks of DOPPLER's forms no weight kernel reads (runtime/model/gpu_repack.h) ---
bs_kernel(repack_w4a16_q8_0 repack_w4a16_q8_0.comp)
bs_kernel(repack_q4k_col_f16 repack_q4k_col_f16.comp)

# --- the decode loop (runtime/generate) ---
bs_kernel(sample sample.comp)
bs_kernel(sample_slots sample.comp DEFINES SLOT_PARAMS)  # serve --parallel: options per sequence from a buffer
bs_kernel(sample_parts sample.comp DEFINES ARGMAX_PARTS)  # greedy without a penalty: the argmax from argmax_parts' slices
# ... and the sampled token's embedding row into x for the next step (the table's dtype; sample.comp SAMPLE_EMBED)
bs_kernel(sample_parts_embed_f16 sample.comp DEFINES ARGMAX_PARTS SAMPLE_EMBED W_F16)
bs_kernel(sample_parts_embed_q8_0 sample.comp DEFINES ARGMAX_PARTS SAMPLE_EMBED W_Q8_0)
bs_kernel(sample_parts_embed_q4k sample.comp DEFINES ARGMAX_PARTS SAMPLE_EMBED W_Q4K)
bs_kernel(sample_parts_embed_q6k sample.comp DEFINES ARGMAX_PARTS SAMPLE_EMBED W_Q6K)
bs_kernel(argmax_parts argmax_parts.comp)
# Decode heads with greedy's argmax folded in (matvec.glsl MV_ARGMAX; 64-bit atomics: offered only where
# Device::has_int64_atomics): then the loop records no argmax_parts dispatch.
bs_kernel(matvec_q6k_wide_i8_argmax matvec_q6k.comp DEFINES MV_Q6K_WIDE MV_X_Q8 MV_ARGMAX)
bs_kernel(matvec_q6k_wide_argmax matvec_q6k.comp DEFINES MV_Q6K_WIDE MV_ARGMAX)
bs_kernel(matvec_f16_argmax matvec_f16.comp DEFINES MV_ARGMAX)
bs_kernel(gate gate.comp)
