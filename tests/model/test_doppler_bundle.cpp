// A Gemma 3 model as DOPPLER's converter writes it today, end to end: rows of 320 and 640 and 128
// (none a multiple of 256) in Q4_K "row" layout padded to whole blocks, BF16 norm weights, an F16
// embedding used as the tied head, a BF16 matrix, a W4A16 matrix with its BF16 scales and I64 shape
// companions, a "col" (transposed) Q4_K matrix, tensors crossing 64 KiB shards. The GPU forward (prefill and decode) must match the
// float64 CPU forward over the same weights, as for blueshift's own conversions (test_synth.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "rdrr/quant.h"
#include "rdrr/safetensors.h"
#include "runtime/base/half.h"
#include "runtime/base/npy.h"
#include "sharding/hash.h"
#include "tests/common/testing.h"

namespace bs::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<float> to_floats(const SafeTensor& t) {
  std::vector<float> f(t.elements());
  auto* u16 = reinterpret_cast<const uint16_t*>(t.data.data());
  for (size_t i = 0; i < f.size(); ++i)
    f[i] = t.dtype == DType::BF16 ? bf16_to_float(u16[i])
         : t.dtype == DType::F16  ? half_to_float(u16[i])
                                  : reinterpret_cast<const float*>(t.data.data())[i];
  return f;
}

template <class T>
void append(std::vector<std::byte>& out, const T* p, size_t n) {
  auto* b = reinterpret_cast<const std::byte*>(p);
  out.insert(out.end(), b, b + n * sizeof(T));
}

// Q4_K rows of k values padded with zeros to whole blocks, as DOPPLER's quantizeToQ4KMRowWise lays them out.
std::vector<std::byte> q4k_rows(const std::vector<float>& w, int64_t rows, int64_t k) {
  const int64_t kp = int64_t(padded_blocks(DType::Q4_K, uint64_t(k))) * 256;
  std::vector<float> row(size_t(kp), 0.0f);
  std::vector<std::byte> out(size_t(rows) * padded_row_bytes(DType::Q4_K, uint64_t(k)));
  for (int64_t r = 0; r < rows; ++r) {
    std::copy(w.begin() + r * k, w.begin() + (r + 1) * k, row.begin());
    quantize_row(DType::Q4_K, row.data(), out.data() + size_t(r) * padded_row_bytes(DType::Q4_K, uint64_t(k)), kp);
  }
  return out;
}

// Symmetric int4 in groups of 32 (compressed-tensors W4A16): scale = max|w| / 7 as BF16, code q + 8.
void w4a16(const std::vector<float>& w, int64_t rows, int64_t k, std::vector<std::byte>& packed, std::vector<uint16_t>& scales) {
  for (int64_t g = 0; g < rows * k / 32; ++g) {
    float mx = 0;
    for (int i = 0; i < 32; ++i) mx = std::max(mx, std::abs(w[size_t(g * 32 + i)]));
    uint16_t s = float_to_bf16(mx > 0 ? mx / 7 : 1.0f);
    scales.push_back(s);
    for (int i = 0; i < 32; i += 2) {
      auto code = [&](int j) { return uint8_t(std::clamp(int(std::lround(w[size_t(g * 32 + j)] / bf16_to_float(s))), -8, 7) + 8); };
      packed.push_back(std::byte(code(i) | code(i + 1) << 4));
    }
  }
}

// The same weights as F16, dequantized here (not by the runtime): the control for the padded layouts.
std::vector<std::byte> as_f16(const std::vector<float>& f) {
  std::vector<std::byte> b;
  for (float v : f) {
    uint16_t h = float_to_half(v);
    append(b, &h, 1);
  }
  return b;
}

// Writes DIR as DOPPLER would convert the checkpoint `hf`, in shards of `shard_size` bytes. With
// `dequantized`, every Q4_K and W4A16 matrix is stored instead as F16 of its dequantized values,
// computed by this test: a model that must give the same logits up to f16 rounding.
void write_doppler_bundle(const fs::path& hf, const fs::path& dir, uint64_t shard_size, bool dequantized = false) {
  Checkpoint ck(hf);
  std::vector<std::byte> all;
  json tensors = json::object();
  auto place = [&](const std::string& name, const std::vector<std::byte>& b, json e) {
    uint64_t off = all.size();
    all.insert(all.end(), b.begin(), b.end());
    e["size"] = b.size();
    uint64_t first = off / shard_size, last = (off + b.size() - 1) / shard_size;
    if (first == last) {
      e["shard"] = first;
      e["offset"] = off % shard_size;
    } else {
      json spans = json::array();
      for (uint64_t s = first, pos = off; s <= last; ++s) {
        uint64_t end = std::min((s + 1) * shard_size, off + b.size());
        spans.push_back({{"shardIndex", s}, {"offset", pos - s * shard_size}, {"size", end - pos}});
        pos = end;
      }
      e["spans"] = spans;
    }
    tensors[name] = e;
  };
  for (const SafeTensor& t : ck.tensors()) {
    auto f = to_floats(t);
    json e = {{"shape", t.shape}};
    std::vector<std::byte> b;
    if (t.shape.size() == 1) {  // norms: BF16, as DOPPLER keeps them from the checkpoint
      for (float v : f) {
        uint16_t h = float_to_bf16(v);
        append(b, &h, 1);
      }
      e["dtype"] = "BF16";
      e["role"] = "norm";
    } else if (t.name.find("embed_tokens") != std::string::npos) {
      for (float v : f) {
        uint16_t h = float_to_half(v);
        append(b, &h, 1);
      }
      e["dtype"] = "F16";
      e["role"] = "embedding";
    } else if (t.name.find("layers.0.self_attn.k_proj") != std::string::npos) {  // one BF16 matrix
      for (float v : f) {
        uint16_t h = float_to_bf16(v);
        append(b, &h, 1);
      }
      e["dtype"] = "BF16";
      e["role"] = "matmul";
    } else if (t.name.find("layers.1.mlp.up_proj") != std::string::npos) {  // one W4A16 matrix
      std::vector<uint16_t> scales;
      w4a16(f, t.shape[0], t.shape[1], b, scales);
      if (dequantized) {
        std::vector<float> dq(f.size());
        for (size_t i = 0; i < dq.size(); ++i)
          dq[i] = float((int((uint8_t(b[i / 2]) >> (4 * (i & 1))) & 15) - 8)) * bf16_to_float(scales[i / 32]);
        place(t.name, as_f16(dq), {{"shape", t.shape}, {"dtype", "F16"}, {"role", "matmul"}});
        continue;
      }
      e["dtype"] = "W4A16";
      e["role"] = "matmul";
      e["storage"] = {{"packing", "w4a16"}, {"blockShape", {32}}, {"blockBytes", 16},
                      {"companions", {{{"role", "scales"}, {"tensorId", t.name + "_scale"}},
                                      {{"role", "shape"}, {"tensorId", t.name + "_shape"}}}}};
      std::vector<std::byte> sb, hb;
      append(sb, scales.data(), scales.size());
      place(t.name + "_scale", sb, {{"shape", {t.shape[0], t.shape[1] / 32}}, {"dtype", "BF16"}, {"role", "other"}});
      append(hb, t.shape.data(), 2);
      place(t.name + "_shape", hb, {{"shape", {2}}, {"dtype", "I64"}, {"role", "other"}});
    } else if (t.name.find("layers.0.self_attn.o_proj") != std::string::npos) {  // one "col" Q4_K matrix
      const int64_t m = t.shape[0], k = t.shape[1];
      std::vector<float> wt(f.size());  // W^T [k, m]
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < k; ++c) wt[size_t(c * m + r)] = f[size_t(r * k + c)];
      b = q4k_rows(wt, k, m);
      e["dtype"] = "Q4_K_M";
      e["layout"] = "col";
      e["role"] = "matmul";
      if (dequantized) {
        const uint64_t rb = padded_row_bytes(DType::Q4_K, uint64_t(m));
        const int64_t mp = int64_t(rb / 144 * 256);
        std::vector<float> col(static_cast<size_t>(mp)), dq(f.size());
        for (int64_t c = 0; c < k; ++c) {
          dequantize_row(DType::Q4_K, b.data() + size_t(c) * rb, col.data(), mp);
          for (int64_t r = 0; r < m; ++r) dq[size_t(r * k + c)] = col[size_t(r)];
        }
        b = as_f16(dq);
        e["dtype"] = "F16";
        e.erase("layout");
      }
    } else {
      b = q4k_rows(f, t.shape[0], t.shape[1]);
      e["dtype"] = "Q4_K_M";
      e["layout"] = "row";
      e["role"] = "matmul";
      if (dequantized) {  // whole padded rows dequantized, the padding dropped
        const uint64_t rb = padded_row_bytes(DType::Q4_K, uint64_t(t.shape[1]));
        const int64_t kp = int64_t(rb / 144 * 256);
        std::vector<float> row(static_cast<size_t>(kp)), dq;
        for (int64_t r = 0; r < t.shape[0]; ++r) {
          dequantize_row(DType::Q4_K, b.data() + size_t(r) * rb, row.data(), kp);
          dq.insert(dq.end(), row.begin(), row.begin() + t.shape[1]);
        }
        b = as_f16(dq);
        e["dtype"] = "F16";
        e.erase("layout");
      }
    }
    place(t.name, b, e);
  }
  json shards = json::array();
  for (uint64_t s = 0; s * shard_size < all.size(); ++s) {
    uint64_t n = std::min<uint64_t>(shard_size, all.size() - s * shard_size);
    std::span<const std::byte> b(all.data() + s * shard_size, n);
    std::string name = fmt::format("shard_{:05d}.bin", s);
    std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(n));
    shards.push_back({{"index", s}, {"filename", name}, {"size", n}, {"hash", sha256_hex(b)}, {"offset", s * shard_size}});
  }
  json m = {
      {"version", 1}, {"modelId", "doppler-gemma3-tiny"}, {"modelType", "gemma3_text"}, {"quantization", "Q4_K_M"},
      {"quantizationInfo", {{"weights", "q4k"}, {"embeddings", "f16"}, {"layout", "row"}}},
      {"hashAlgorithm", "sha256"},
      {"architecture", {{"numLayers", 2}, {"hiddenSize", 320}, {"intermediateSize", 640}, {"numAttentionHeads", 2},
                        {"numKeyValueHeads", 1}, {"headDim", 64}, {"vocabSize", 300}, {"maxSeqLen", 1024}, {"ropeTheta", 1e6}}},
      {"inference", json::parse(R"({
        "attention": {"queryKeyNorm": true, "queryPreAttnScalar": 64, "slidingWindow": 5, "attentionBias": false},
        "normalization": {"rmsNormEps": 1e-06, "rmsNormWeightOffset": true, "postAttentionNorm": true,
                          "preFeedforwardNorm": true, "postFeedforwardNorm": true},
        "ffn": {"activation": "gelu", "gatedActivation": true},
        "rope": {"ropeTheta": 1000000, "ropeLocalTheta": 10000, "ropeScalingType": null, "ropeScalingFactor": 1},
        "output": {"tieWordEmbeddings": true, "scaleEmbeddings": true, "finalLogitSoftcapping": null},
        "layerPattern": {"type": "custom", "layerTypes": ["sliding_attention", "full_attention"]}})")},
      {"shards", shards}, {"tensors", tensors}, {"eos_token_id", {1}}, {"totalSize", all.size()}};
  std::ofstream(dir / "manifest.json") << m.dump(1);
}

std::vector<float> logits(const fs::path& model, const std::string& tokens, const fs::path& out,
                          std::vector<std::string> extra) {
  std::vector<std::string> args = {"logits", "--model", model.string(), "--tokens", tokens, "--out", out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_blueshift(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? read_npy_f32(out).data : std::vector<float>{};
}

double worst_rel_l2(const std::vector<float>& a, const std::vector<float>& ref, size_t vocab) {
  double worst = 0;
  for (size_t r = 0; r * vocab < ref.size(); ++r) {
    double num = 0, den = 0;
    for (size_t i = 0; i < vocab; ++i) {
      double d = double(a[r * vocab + i]) - ref[r * vocab + i];
      num += d * d;
      den += double(ref[r * vocab + i]) * ref[r * vocab + i];
    }
    worst = std::max(worst, std::sqrt(num / den));
  }
  return worst;
}

TEST(DopplerBundle, Gemma3WithPaddedQ4KColBf16AndW4A16Runs) {
  TempDir tmp;
  json cfg = {{"model_type", "gemma3_text"}, {"architectures", {"Gemma3ForCausalLM"}}, {"hidden_size", 320},
              {"intermediate_size", 640}, {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"head_dim", 64},
              {"num_hidden_layers", 2}, {"vocab_size", 300}, {"max_position_embeddings", 1024}, {"rms_norm_eps", 1e-6},
              {"query_pre_attn_scalar", 64}, {"sliding_window", 5}, {"hidden_activation", "gelu_pytorch_tanh"},
              {"layer_types", {"sliding_attention", "full_attention"}}, {"rope_theta", 1000000.0},
              {"rope_local_base_freq", 10000.0}, {"tie_word_embeddings", true}};
  auto r = synth_into(tmp.path, cfg.dump(), {"--seed", "11"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  fs::path dir = tmp / "doppler";
  fs::create_directories(dir);
  write_doppler_bundle(tmp / "hf", dir, 64 << 10);

  r = run_blueshift({"verify", dir.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string ids;
  for (int i = 0; i < 12; ++i) ids += (i ? "," : "") + std::to_string(rng()() % 300);
  auto ref = logits(dir, ids, tmp / "ref.npy", {"--cpu-reference"});
  auto pre = logits(dir, ids, tmp / "pre.npy", {});
  auto step = logits(dir, ids, tmp / "step.npy", {"--step"});
  ASSERT_FALSE(ref.empty());
  ASSERT_EQ(pre.size(), ref.size());
  ASSERT_EQ(step.size(), ref.size());
  double e_pre = worst_rel_l2(pre, ref, 300), e_step = worst_rel_l2(step, ref, 300);
  std::printf("DOPPLER Gemma 3 bundle: GPU vs float64 CPU, worst row rel L2: prefill %.2e, decode %.2e\n", e_pre, e_step);
  EXPECT_LE(e_pre, 5e-3);
  EXPECT_LE(e_step, 5e-3);
  // The W4A16 and "col" matrices are repacked on the GPU at load; the host repack (the kernels' CPU
  // reference) makes the same bytes, so the logits are the same bit for bit.
  setenv("BLUESHIFT_HOST_REPACK", "1", 1);
  auto host_pre = logits(dir, ids, tmp / "host_pre.npy", {});
  auto host_step = logits(dir, ids, tmp / "host_step.npy", {"--step"});
  unsetenv("BLUESHIFT_HOST_REPACK");
  EXPECT_TRUE(host_pre == pre) << "prefill logits differ between GPU and host repack";
  EXPECT_TRUE(host_step == step) << "decode logits differ between GPU and host repack";
  // Both forwards read the padded layouts through the runtime; the control bundle holds the same
  // weights dequantized by this test as F16, so it checks the runtime's reading of the layouts.
  fs::path control = tmp / "control";
  fs::create_directories(control);
  write_doppler_bundle(tmp / "hf", control, 64 << 10, true);
  auto want = logits(control, ids, tmp / "control.npy", {"--cpu-reference"});
  ASSERT_EQ(want.size(), ref.size());
  double e_control = worst_rel_l2(ref, want, 300);
  std::printf("DOPPLER Gemma 3 bundle vs the same weights as F16: worst row rel L2 %.2e\n", e_control);
  EXPECT_LE(e_control, 5e-3);  // f16 rounding of the weights only

  // The embedding table and tied head bound in row ranges, as a 262144-row table is on lavapipe (128 MiB
  // per binding): 64 KiB bindings split the 192 KB table into 5 ranges.
  setenv("BLUESHIFT_MAX_BINDING", "65536", 1);
  // The repacks run in chunks too (the W4A16 matrix in 4, the "col" one in 3): still the host's bytes.
  auto split_pre = logits(dir, ids, tmp / "split_pre.npy", {});
  auto split_step = logits(dir, ids, tmp / "split_step.npy", {"--step"});
  setenv("BLUESHIFT_HOST_REPACK", "1", 1);
  auto split_host = logits(dir, ids, tmp / "split_host.npy", {});
  unsetenv("BLUESHIFT_HOST_REPACK");
  unsetenv("BLUESHIFT_MAX_BINDING");
  EXPECT_TRUE(split_host == split_pre) << "split prefill logits differ between GPU and host repack";
  ASSERT_EQ(split_pre.size(), ref.size());
  ASSERT_EQ(split_step.size(), ref.size());
  EXPECT_LE(worst_rel_l2(split_pre, ref, 300), 5e-3);
  EXPECT_LE(worst_rel_l2(split_step, ref, 300), 5e-3);
}

}  // namespace
}  // namespace bs::testing
