#include "rdrr/synth.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "rdrr/hf_config.h"
#include "rdrr/moe_tensors.h"
#include "rdrr/tensor_names.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr uint64_t kChunkElems = 4ull << 20;  // values generated per work item (8 MB of bf16)

struct Item {
  std::string name;       // HF name
  std::vector<int64_t> shape;
  float mean, stddev;
  uint64_t key;           // per-tensor stream
  uint64_t elems, bytes;
  int file;               // which output file
  uint64_t offset;        // absolute offset of its data in that file
};

void write_text(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << s;
  if (!f) fail("{}: write failed", p.string());
}

}  // namespace

uint64_t synth_checkpoint(const fs::path& config_path, const fs::path& out_dir, const SynthOptions& opt) {
  if (opt.dtype != DType::BF16 && opt.dtype != DType::F16) fail("synth: --dtype must be bf16 or f16");
  json config = read_json_file(config_path);
  HfArch arch = hf_arch(config, config_path.string());
  ModelConfig c = config_from_hf(config, nullptr, opt.dtype, config_path.string());
  TensorNames names(arch.model_type, arch.multimodal);

  // Tensors and their values' distributions.
  std::vector<Item> items;
  const float wstd = c.dim < 512 ? 0.05f : 0.02f;
  uint64_t index = 0;
  // Phi-3 checkpoints store q/k/v and gate/up fused (qkv_proj, gate_up_proj): write them so, one
  // fused tensor in place of its parts.
  std::vector<std::string> tensors;
  for (auto& internal : expected_tensors(c)) {
    if (arch.model_type != "phi3" || tensor_layer(internal) < 0) {
      tensors.push_back(internal);
      continue;
    }
    std::string b = "blk." + std::to_string(tensor_layer(internal)) + ".";
    if (internal == b + "attn_q") tensors.push_back(b + "attn_qkv");
    else if (internal == b + "ffn_gate") tensors.push_back(b + "ffn_gate_up");
    else if (internal != b + "attn_k" && internal != b + "attn_v" && internal != b + "ffn_up") tensors.push_back(internal);
  }
  for (auto& internal : tensors) {
    // MoE experts: the checkpoint's own forms (per-expert or GPT-OSS's fused), which convert stacks.
    if (c.moe() && (internal.ends_with("_exps") || internal.ends_with("_exps_bias"))) {
      if (!internal.ends_with(".ffn_gate_up_exps")) continue;  // one layer's set, written once
      for (auto& h : moe_hf_tensors(c, tensor_layer(internal))) {
        Item it;
        it.name = h.name;
        it.shape = h.shape;
        it.mean = 0.0f;
        it.stddev = h.bias ? 0.1f : wstd;
        it.key = synth_mix(opt.seed ^ synth_mix(++index));
        it.elems = 1;
        for (auto d : it.shape) it.elems *= uint64_t(d);
        it.bytes = it.elems * 2;
        items.push_back(std::move(it));
      }
      continue;
    }
    Item it;
    it.name = names.to_hf(internal);
    if (arch.multimodal && it.name.rfind("model.", 0) == 0) it.name = "model.language_model." + it.name.substr(6);
    it.shape = expected_shape(c, internal);
    std::string role = tensor_role(internal);
    if (role == "norm") {
      it.mean = c.norm_offset ? 0.0f : 1.0f;
      it.stddev = 0.1f;
    } else if (internal.ends_with(".layer_scalar")) {
      it.mean = 1.0f;  // Gemma 4's residual multiplier
      it.stddev = 0.05f;
    } else if (role == "bias") {
      it.mean = 0.0f;
      it.stddev = 0.1f;
    } else if (internal.ends_with(".conv_kernel")) {
      it.mean = 0.0f;
      it.stddev = 0.3f;  // LFM2's 3-tap filters are O(0.1 .. 1): the conv must matter in tests
    } else {
      it.mean = 0.0f;
      it.stddev = wstd;
    }
    // Qwen 3.5's DeltaNet: the gated norm scales by plain w; a conv wide enough to matter; decay rates
    // exp(A_log) spread around 1, as trained checkpoints have them.
    if (internal.ends_with(".linear_norm")) it.mean = 1.0f;
    if (internal.ends_with(".linear_conv")) it.stddev = 0.3f;
    if (internal.ends_with(".linear_a_log")) it.stddev = 0.7f;
    if (internal.ends_with(".linear_dt_bias")) it.stddev = 1.0f;
    it.key = synth_mix(opt.seed ^ synth_mix(++index));
    it.elems = 1;
    for (auto d : it.shape) it.elems *= uint64_t(d);
    it.bytes = it.elems * 2;
    items.push_back(std::move(it));
  }

  // Files: one, or as many as needed to keep each under max_file_bytes (HF's sharded layout).
  uint64_t total = 0;
  for (auto& it : items) total += it.bytes;
  std::vector<std::vector<Item*>> files(1);
  uint64_t in_file = 0;
  if (total > opt.max_file_bytes)
    for (auto& it : items) {
      if (in_file > 0 && in_file + it.bytes > opt.max_file_bytes) {
        files.emplace_back();
        in_file = 0;
      }
      files.back().push_back(&it);
      in_file += it.bytes;
    }
  else
    for (auto& it : items) files.back().push_back(&it);

  fs::create_directories(out_dir);
  const char* dt = opt.dtype == DType::BF16 ? "BF16" : "F16";
  std::vector<std::string> file_names;
  std::vector<uint64_t> file_sizes;
  json weight_map = json::object();
  for (size_t f = 0; f < files.size(); ++f) {
    std::string fname = files.size() == 1 ? "model.safetensors"
                                          : fmt::format("model-{:05d}-of-{:05d}.safetensors", f + 1, files.size());
    ordered_json header = ordered_json::object();
    header["__metadata__"] = {{"format", "pt"}};
    uint64_t off = 0;
    for (Item* it : files[f]) {
      header[it->name] = {{"dtype", dt}, {"shape", it->shape}, {"data_offsets", {off, off + it->bytes}}};
      it->offset = off;
      it->file = int(f);
      off += it->bytes;
      weight_map[it->name] = fname;
    }
    std::string h = header.dump();
    h.resize((h.size() + 8 + 7) / 8 * 8 - 8, ' ');  // data section 8-byte aligned, as HF writes it
    uint64_t hlen = h.size();
    std::string prefix(8, '\0');
    for (int i = 0; i < 8; ++i) prefix[size_t(i)] = char((hlen >> (8 * i)) & 0xff);
    for (Item* it : files[f]) it->offset += 8 + hlen;
    fs::path p = out_dir / fname;
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail("{}: cannot create: {}", p.string(), std::strerror(errno));
    std::string head = prefix + h;
    bool ok = ::pwrite(fd, head.data(), head.size(), 0) == ssize_t(head.size()) &&
              ::ftruncate(fd, off_t(8 + hlen + off)) == 0;
    ::close(fd);
    if (!ok) fail("{}: write failed: {}", p.string(), std::strerror(errno));
    file_names.push_back(fname);
    file_sizes.push_back(8 + hlen + off);
  }

  // Values: work items of kChunkElems values, generated and written by a pool of threads.
  struct Work { Item* it; uint64_t begin, end; };
  std::vector<Work> work;
  for (auto& it : items)
    for (uint64_t b = 0; b < it.elems; b += kChunkElems) work.push_back({&it, b, std::min(it.elems, b + kChunkElems)});
  std::vector<int> fds;
  for (auto& n : file_names) {
    int fd = ::open((out_dir / n).c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail("{}: cannot open: {}", (out_dir / n).string(), std::strerror(errno));
    fds.push_back(fd);
  }
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done{0};
  std::atomic<bool> failed{false};
  std::string error;
  std::mutex mu;
  const bool bf16 = opt.dtype == DType::BF16;
  auto worker = [&] {
    std::vector<uint16_t> buf(kChunkElems);
    for (size_t w; !failed && (w = next++) < work.size();) {
      const Work& wk = work[w];
      const Item& it = *wk.it;
      uint64_t n = wk.end - wk.begin;
      for (uint64_t i = 0; i < n; ++i) {
        float v = it.mean + it.stddev * synth_gauss(it.key, wk.begin + i);
        buf[i] = bf16 ? float_to_bf16(v) : float_to_half(v);
      }
      const char* p = reinterpret_cast<const char*>(buf.data());
      uint64_t bytes = n * 2, off = it.offset + wk.begin * 2, put = 0;
      while (put < bytes) {
        ssize_t r = ::pwrite(fds[size_t(it.file)], p + put, bytes - put, off_t(off + put));
        if (r <= 0) {
          std::lock_guard lock(mu);
          error = fmt::format("{}: write failed: {}", file_names[size_t(it.file)], std::strerror(errno));
          failed = true;
          break;
        }
        put += uint64_t(r);
      }
      uint64_t d = done += bytes;
      if (opt.progress && w % 4 == 0) {
        std::lock_guard lock(mu);
        opt.progress(d, total);
      }
    }
  };
  int threads = opt.threads > 0 ? opt.threads : std::max(1, int(std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  for (int fd : fds) ::close(fd);
  if (failed) fail_kind(ErrorKind::resources, "{}", error);
  if (opt.progress) opt.progress(total, total);

  if (files.size() > 1)
    write_text(out_dir / "model.safetensors.index.json",
               json{{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}}.dump(2));
  json out_config = config;
  out_config["dtype"] = bf16 ? "bfloat16" : "float16";
  write_text(out_dir / "config.json", out_config.dump(2));
  json gen = {{"_from_model_config", true}};
  if (c.bos_id >= 0) gen["bos_token_id"] = c.bos_id;
  if (!c.eos_ids.empty()) gen["eos_token_id"] = c.eos_ids.size() == 1 ? json(c.eos_ids[0]) : json(c.eos_ids);
  write_text(out_dir / "generation_config.json", gen.dump(2));
  if (!opt.tokenizer.empty()) {
    fs::copy_file(opt.tokenizer, out_dir / "tokenizer.json", fs::copy_options::overwrite_existing);
    fs::path tc = opt.tokenizer.parent_path() / "tokenizer_config.json";
    if (fs::exists(tc)) fs::copy_file(tc, out_dir / "tokenizer_config.json", fs::copy_options::overwrite_existing);
  }
  return total;
}

}  // namespace bs
