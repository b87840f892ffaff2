// GPT-OSS checkpoints as OpenAI ships them: experts in MXFP4 (*_blocks [E, out, in / 32, 16] with element 2i in
// the low nibble of byte i, *_scales [E, out, in / 32] E8M0; gate_up rows interleaved). A synthesized GPT-OSS is
// converted with --quant mxfp4 (experts quantized by blueshift, the rest F16); the same MXFP4 blocks are then
// written in GPT-OSS's own layout, and that checkpoint converted with --quant f16 must give byte-identical
// expert tensors (read, never re-quantized) and the same logits, from RDRR and straight from the checkpoint.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rdrr/manifest.h"
#include "rdrr/quant.h"
#include "rdrr/safetensors.h"
#include "runtime/base/half.h"
#include "runtime/base/npy.h"
#include "tests/common/testing.h"
#include "tests/rdrr/st_builder.h"

namespace bs::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Values of a [rows, cols] view of a BF16 checkpoint tensor, column `col` of a transposed one ([.., in, out]).
float bf16_at(const SafeTensor& t, uint64_t i) {
  uint16_t h;
  std::memcpy(&h, t.data.data() + 2 * i, 2);
  return bf16_to_float(h);
}

// One output row (length `in`) of GPT-OSS's transposed expert tensor [E, in, out] as GPT-OSS's MXFP4 blocks and
// scales, appended to `blocks` / `scales`.
void pack_row(const SafeTensor& t, int64_t e, int64_t o, int64_t in, int64_t out, std::vector<uint8_t>& blocks,
              std::vector<uint8_t>& scales) {
  std::vector<float> row(static_cast<size_t>(in));
  for (int64_t d = 0; d < in; ++d) row[size_t(d)] = bf16_at(t, uint64_t((e * in + d) * out + o));
  for (int64_t b = 0; b < in / 32; ++b) {
    uint8_t g[17];
    quantize_block_mxfp4(row.data() + 32 * b, g);  // GGML's order: element j low nibble of g[1 + j], j + 16 high
    auto nib = [&](int m) { return m < 16 ? g[1 + m] & 15 : g[1 + m - 16] >> 4; };
    scales.push_back(g[0]);
    for (int i = 0; i < 16; ++i) blocks.push_back(uint8_t(nib(2 * i) | (nib(2 * i + 1) << 4)));
  }
}

TEST(GptOssMxfp4, ShippedBlocksAreReadAsTheyAre) {
  TempDir tmp;
  const json cfg = {{"model_type", "gpt_oss"}, {"architectures", {"GptOssForCausalLM"}}, {"hidden_size", 128},
                    {"intermediate_size", 64}, {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 32},
                    {"num_hidden_layers", 2}, {"vocab_size", 260}, {"max_position_embeddings", 512},
                    {"rms_norm_eps", 1e-5}, {"num_local_experts", 4}, {"num_experts_per_tok", 2},
                    {"attention_bias", true}, {"sliding_window", 8}, {"tie_word_embeddings", false},
                    {"layer_types", {"sliding_attention", "full_attention"}},
                    {"rope_parameters", {{"rope_type", "yarn"}, {"rope_theta", 150000.0}, {"factor", 32.0},
                                         {"beta_fast", 32.0}, {"beta_slow", 1.0},
                                         {"original_max_position_embeddings", 64}, {"truncate", false}}}};
  auto hf = tmp / "hf", mx = tmp / "mx";
  ASSERT_EQ(synth_into(tmp.path, cfg.dump(), {"--seed", "3"}).exit_code, 0);
  auto a = run_blueshift({"convert", hf.string(), (tmp / "a").string(), "--quant", "mxfp4"});
  ASSERT_EQ(a.exit_code, 0) << a.err;

  // The checkpoint as GPT-OSS ships it.
  const int64_t E = 4, D = 128, F = 64;
  Checkpoint ck(hf);
  std::vector<StTensor> out;
  for (auto& t : ck.tensors()) {
    const bool gu = t.name.ends_with("mlp.experts.gate_up_proj"), dn = t.name.ends_with("mlp.experts.down_proj");
    if (!gu && !dn) {
      out.push_back({t.name, "BF16", t.shape, std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(t.data.data()),
                                                                    reinterpret_cast<const uint8_t*>(t.data.data()) + t.data.size())});
      continue;
    }
    const int64_t in = gu ? D : F, rows = gu ? 2 * F : D;
    std::vector<uint8_t> blocks, scales;
    for (int64_t e = 0; e < E; ++e)
      for (int64_t o = 0; o < rows; ++o) pack_row(t, e, o, in, rows, blocks, scales);
    out.push_back({t.name + "_blocks", "U8", {E, rows, in / 32, 16}, blocks});
    out.push_back({t.name + "_scales", "U8", {E, rows, in / 32}, scales});
  }
  fs::create_directories(mx);
  write_file(mx / "model.safetensors", st_file(out));
  fs::copy_file(hf / "config.json", mx / "config.json");
  auto b = run_blueshift({"convert", mx.string(), (tmp / "b").string(), "--quant", "f16"});
  ASSERT_EQ(b.exit_code, 0) << b.err;

  Manifest ma = read_manifest(tmp / "a"), mb = read_manifest(tmp / "b");
  int experts = 0;
  for (auto& t : mb.tensors)
    if (t.internal.ends_with("_exps")) {
      ++experts;
      EXPECT_EQ(t.dtype, DType::MXFP4) << t.internal;
      EXPECT_EQ(t.source_dtype, "MXFP4") << t.internal;
      const TensorEntry* ta = ma.find(t.internal);
      ASSERT_TRUE(ta);
      EXPECT_EQ(ta->dtype, DType::MXFP4);
      EXPECT_EQ(ta->size, t.size);
    }
  EXPECT_EQ(experts, 4);  // per layer: gate_up [E, 2F, dim] and down [E, dim, F], as DOPPLER stores them
  std::vector<std::string> logits_args = {"--tokens", "1,7,9,30,2,100,4,5,6,7,8,9,10,11", "--out"};
  auto run = [&](const fs::path& m, const char* name, bool step) {
    std::vector<std::string> args = {"logits", "--model", m.string()};
    args.insert(args.end(), logits_args.begin(), logits_args.end());
    args.push_back((tmp / name).string());
    if (step) args.push_back("--step");
    auto r = run_blueshift(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return read_npy_f32(tmp / name).data;
  };
  for (bool step : {false, true}) {
    auto la = run(tmp / "a", "a.npy", step), lb = run(tmp / "b", "b.npy", step), lm = run(mx, "m.npy", step);
    ASSERT_FALSE(la.empty());
    EXPECT_EQ(la, lb) << "the shipped MXFP4 blocks are the quantized ones, read without change";
    EXPECT_EQ(la, lm) << "straight from the checkpoint";
  }

  // Malformed: a scales tensor of the wrong shape, a missing one, and U8 bytes where a weight should be fail
  // naming the tensor (exit 3), through convert and straight from the checkpoint.
  auto broken = [&](auto&& mutate, const std::string& want) {
    auto ts = out;
    mutate(ts);
    fs::create_directories(tmp / "bad");
    write_file(tmp / "bad" / "model.safetensors", st_file(ts));
    fs::copy_file(hf / "config.json", tmp / "bad" / "config.json", fs::copy_options::overwrite_existing);
    auto r = run_blueshift({"convert", (tmp / "bad").string(), (tmp / "bad-out").string(), "--quant", "f16", "--force"});
    EXPECT_EQ(r.exit_code, 3) << want;
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
    r = run_blueshift({"logits", "--model", (tmp / "bad").string(), "--tokens", "1,2", "--out", (tmp / "x.npy").string()});
    EXPECT_EQ(r.exit_code, 3) << want;
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
  };
  auto find = [](std::vector<StTensor>& ts, const std::string& suffix) -> StTensor& {
    for (auto& t : ts)
      if (t.name.ends_with(suffix)) return t;
    throw std::runtime_error(suffix);
  };
  broken([&](auto& ts) {
    auto& s = find(ts, "layers.1.mlp.experts.down_proj_scales");
    s.shape = {E, D, F / 32 + 1};
    s.bytes.resize(size_t(E * D * (F / 32 + 1)));
  }, "model.layers.1.mlp.experts.down_proj_scales");
  broken([&](auto& ts) { ts.erase(std::find_if(ts.begin(), ts.end(), [](auto& t) { return t.name.ends_with("0.mlp.experts.gate_up_proj_blocks"); })); },
         "model.layers.0.mlp.experts.gate_up_proj_blocks");
  broken([&](auto& ts) { find(ts, "layers.0.self_attn.q_proj.weight").dtype = "U8"; }, "self_attn.q_proj.weight");
}

}  // namespace
}  // namespace bs::testing
