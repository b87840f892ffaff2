#include "rdrr/synth_like.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "rdrr/synth.h"
#include "rdrr/synth_like_gen.h"
#include "runtime/base/error.h"
#include "sharding/hash.h"

namespace bs {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

using Digest = std::array<uint8_t, 32>;

// Bytes [at, at + size) of an item's stream lie at `offset` in a shard.
struct Piece {
  uint32_t item;
  uint64_t at, offset, size;
};

// A tensor, or a byte range a tensor refers to outside the tensor map (an int4 table's row scales).
struct Item {
  std::string name;
  ByteStream stream;
  bool merkle = false;         // its blockMerkle root is recomputed
  std::vector<Digest> leaves;  // SHA-256 of each block of its bytes
  std::vector<uint8_t> have;   // leaves[k] was hashed during the shard pass
};

struct ShardPlan {
  std::string filename;
  uint64_t size = 0;
  std::vector<Piece> pieces;
  std::string hash;
};

struct Plan {
  ordered_json manifest;
  HashAlgorithm alg = HashAlgorithm::sha256;
  std::vector<Item> items;
  std::vector<ShardPlan> shards;
  uint64_t block_size = 0;  // blockMerkle block size; 0 when the manifest has none
  uint64_t tensors = 0, total = 0;
};

struct Context {
  std::string label;  // the manifest's path, for messages
  uint64_t seed;
  float weight_std;   // matrices: N(0, weight_std), as synth draws HF checkpoints
  float norm_mean;    // norm weights: around 1, or around 0 for (1 + w) norms
};

uint64_t name_key(uint64_t seed, const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the name: a tensor's values do not depend on its position
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return synth_mix(seed ^ synth_mix(h));
}

uint64_t get_u64(const ordered_json& j, const char* key, const Context& cx, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer() || j[key].get<int64_t>() < 0)
    fail("{}: {}.{}: expected a non-negative integer", cx.label, where, key);
  return j[key].get<uint64_t>();
}

std::string get_str(const ordered_json& j, const char* key, const std::string& fallback = "") {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

std::vector<uint64_t> get_shape(const ordered_json& t, const Context& cx, const std::string& where) {
  std::vector<uint64_t> shape;
  if (!t.contains("shape") || !t["shape"].is_array()) fail("{}: {}.shape: expected an array", cx.label, where);
  uint64_t n = 1;
  for (auto& d : t["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) fail("{}: {}.shape: expected non-negative integers", cx.label, where);
    uint64_t v = d.get<uint64_t>();
    if (v && n > (uint64_t(1) << 50) / v) fail("{}: {}.shape: too many elements", cx.label, where);
    n *= v;
    shape.push_back(v);
  }
  return shape;
}

uint64_t product(const std::vector<uint64_t>& s, size_t from = 0, size_t to = SIZE_MAX) {
  uint64_t n = 1;
  for (size_t i = from; i < std::min(to, s.size()); ++i) n *= s[i];
  return n;
}

std::string shape_str(const std::vector<uint64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

[[noreturn]] void unsupported(const Context& cx, const std::string& name, const std::string& dtype,
                              const std::string& layout, const std::string& why) {
  fail("{}: tensor '{}': synth --like cannot write dtype {} with layout {}: {}", cx.label, name, dtype,
       layout.empty() ? "(none)" : layout, why);
}

// Which tensors are a W4A16 weight's companions: name -> (role, owner).
std::map<std::string, std::pair<std::string, std::string>> companions(const ordered_json& tensors) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (auto& [name, t] : tensors.items())
    if (t.is_object() && t.contains("storage") && t["storage"].is_object() && t["storage"].contains("companions") &&
        t["storage"]["companions"].is_array())
      for (auto& c : t["storage"]["companions"])
        if (c.is_object()) out[get_str(c, "tensorId")] = {get_str(c, "role"), name};
  return out;
}

bool is_plain(const std::string& dt) { return dt == "F32" || dt == "F16" || dt == "BF16"; }
DType plain_dtype(const std::string& dt) { return dt == "F32" ? DType::F32 : dt == "BF16" ? DType::BF16 : DType::F16; }

// A quantized block tensor's rows, as DOPPLER lays them out: layout "row" (N-D) pads every row (the last
// axis) to whole blocks; "col" (2-D) is the transpose, row-wise; no layout is blocks over the flattened
// tensor, padded at its end.
void block_rows(ByteStream& s, const std::vector<uint64_t>& shape, const std::string& layout) {
  if (layout == "row" && shape.size() >= 2) {
    s.rows = product(shape, 0, shape.size() - 1);
    s.row_len = shape.back();
  } else if (layout == "col" && shape.size() == 2) {
    s.rows = shape[1];
    s.row_len = shape[0];
  } else {
    s.rows = 1;
    s.row_len = product(shape);
  }
}

// The int4 per-row table (DOPPLER's litert_axis_dequant, quantizationInfo.perLayerEmbeddings
// "int4_per_row"): the tensor's bytes are packed nibbles; its f32 row scales lie at scaleSource.
void int4_table(Item& it, const ordered_json& t, const std::vector<uint64_t>& shape, const std::string& dtype,
                const std::string& layout, const Context& cx, Item& scales) {
  const ordered_json& st = t["sourceTransform"];
  std::string kind = get_str(st, "kind"), src = get_str(st, "sourceDtype"), enc = get_str(st, "storageEncoding");
  std::string sem = get_str(st, "scaleSemantics");
  auto no = [&](const std::string& why) { unsupported(cx, it.name, dtype, layout, "sourceTransform " + why); };
  if (kind != "litert_axis_dequant") no("kind '" + kind + "' (only litert_axis_dequant)");
  if (src != "INT4") no("sourceDtype '" + src + "' (only INT4)");
  if (dtype != "F16") no("targetDtype F16 needs dtype F16");
  if (enc != "offset_binary" && enc != "signed") no("storageEncoding '" + enc + "'");
  if (sem != "step" && sem != "qmax_abs") no("scaleSemantics '" + sem + "'");
  if (st.contains("sumSource") || st.contains("scaleCompanionDtype")) no("with sumSource or a scale companion");
  if (!st.contains("storageShape") || !st["storageShape"].is_array() || st["storageShape"].size() != 2 ||
      shape.size() != 2)
    no("needs a 2-D shape and storageShape");
  uint64_t srows = st["storageShape"][0].get<uint64_t>(), scols = st["storageShape"][1].get<uint64_t>();
  int axis = st.value("quantAxis", -1);
  if (!((axis == 1 && srows == shape[0] && scols == shape[1]) || (axis == 0 && srows == shape[1] && scols == shape[0])))
    no(fmt::format("storageShape [{}, {}] with quantAxis {} does not match shape {}", srows, scols, axis, shape_str(shape)));
  it.stream.kind = StreamKind::int4_rows;
  it.stream.rows = srows;
  it.stream.row_len = scols;
  it.stream.offset_binary = enc == "offset_binary";
  // Codes in [-7, 7] have std 4.32: a step of weight_std / 4.32 gives weights-like values.
  float step = cx.weight_std / 4.32f;
  if (sem == "qmax_abs") {
    if (!st.contains("scaleDivisor") || !st["scaleDivisor"].is_number() || st["scaleDivisor"].get<double>() <= 0)
      no("qmax_abs needs scaleDivisor > 0");
    step *= st["scaleDivisor"].get<float>();
  }
  scales.name = it.name + " (sourceTransform.scaleSource)";
  scales.stream.kind = StreamKind::positive;
  scales.stream.dtype = DType::F32;
  scales.stream.key = name_key(cx.seed, scales.name);
  scales.stream.row_len = shape[0];
  scales.stream.mean = step;
}

// Sets it.stream for tensor `t`, or fails naming what it cannot write.
void resolve(Item& it, const ordered_json& t, const ordered_json& tensors,
             const std::map<std::string, std::pair<std::string, std::string>>& comps, const Context& cx,
             std::vector<Item>& extra) {
  std::string where = "tensors." + it.name;
  std::string dtype = get_str(t, "dtype"), role = get_str(t, "role"), layout;
  if (t.contains("layout") && !t["layout"].is_null()) layout = get_str(t, "layout", "?");
  if (!layout.empty() && layout != "row" && layout != "col") unsupported(cx, it.name, dtype, layout, "unknown layout");
  auto shape = get_shape(t, cx, where);
  ByteStream& s = it.stream;
  s.key = name_key(cx.seed, it.name);
  s.spread = cx.weight_std;
  auto comp = comps.find(it.name);

  if (t.contains("sourceTransform") && !t["sourceTransform"].is_null()) {
    extra.emplace_back();
    int4_table(it, t, shape, dtype, layout, cx, extra.back());
  } else if (comp != comps.end()) {
    // A W4A16 weight's companion: its group scales (positive) or its real shape (I64).
    const auto& [crole, owner] = comp->second;
    auto oshape = get_shape(tensors[owner], cx, "tensors." + owner);
    if (oshape.size() != 2) unsupported(cx, owner, "W4A16", "", "expected a 2-D shape");
    if (crole == "scales") {
      std::vector<uint64_t> want = {oshape[0], (oshape[1] + 31) / 32};
      if (!is_plain(dtype) || shape != want)
        unsupported(cx, it.name, dtype, layout,
                    fmt::format("scales of '{}' must be F32/F16/BF16 {}, got {}", owner, shape_str(want), shape_str(shape)));
      s.kind = StreamKind::positive;
      s.dtype = plain_dtype(dtype);
      s.row_len = product(shape);
      s.mean = cx.weight_std / 4.6f;  // uniform codes in [-8, 7] have std 4.6
    } else if (crole == "shape") {
      if (dtype != "I64" || shape != std::vector<uint64_t>{2})
        unsupported(cx, it.name, dtype, layout, fmt::format("shape of '{}' must be I64 [2]", owner));
      s.kind = StreamKind::int64;
      s.values = {int64_t(oshape[0]), int64_t(oshape[1])};
    } else {
      unsupported(cx, it.name, dtype, layout, fmt::format("companion role '{}' of '{}'", crole, owner));
    }
  } else if (dtype == "W4A16") {
    const ordered_json& st = t.contains("storage") ? t["storage"] : ordered_json();
    if (get_str(st, "packing") != "w4a16" || st.value("blockBytes", 0) != 16 || !st.contains("blockShape") ||
        st["blockShape"] != ordered_json::array({32}))
      unsupported(cx, it.name, dtype, layout, "expected storage {packing: w4a16, blockShape: [32], blockBytes: 16}");
    if (shape.size() != 2) unsupported(cx, it.name, dtype, layout, "expected a 2-D shape [out, in]");
    bool scales = false, shp = false;
    for (auto& [n, c] : comps) scales |= c.second == it.name && c.first == "scales", shp |= c.second == it.name && c.first == "shape";
    if (!scales || !shp) unsupported(cx, it.name, dtype, layout, "needs storage.companions with roles scales and shape");
    for (auto& [n, c] : comps)
      if (c.second == it.name && !tensors.contains(n))
        unsupported(cx, it.name, dtype, layout, fmt::format("companion '{}' is not in the tensor map", n));
    s.kind = StreamKind::w4a16;
    s.rows = shape[0];
    s.row_len = shape[1];
  } else if (dtype == "Q4_K_M" || dtype == "Q4_K" || dtype == "Q6_K") {
    s.kind = dtype == "Q6_K" ? StreamKind::q6_k : StreamKind::q4_k;
    block_rows(s, shape, layout);
  } else if (is_plain(dtype)) {
    s.kind = StreamKind::normal;
    s.dtype = plain_dtype(dtype);
    s.row_len = product(shape);
    bool named_norm = it.name.find("norm") != std::string::npos && shape.size() == 1;
    bool bias = it.name.size() >= 5 && it.name.compare(it.name.size() - 5, 5, ".bias") == 0;
    if (role == "norm" || it.name.find("layer_scalar") != std::string::npos) {
      s.mean = role == "norm" ? cx.norm_mean : 1.0f;  // a layer's output scale is not a (1 + w) norm
      s.spread = 0.1f;
    } else if (named_norm) {  // vision / audio towers' norms carry their tower's role
      s.mean = 1.0f;
      s.spread = 0.1f;
    } else if (bias) {
      s.spread = 0.1f;
    }
  } else {
    unsupported(cx, it.name, dtype, layout, "no generator for this dtype");
  }
  uint64_t size = get_u64(t, "size", cx, where);
  if (s.size() != size)
    fail("{}: tensor '{}': dtype {} layout {} shape {} is {} bytes, the manifest says {}", cx.label, it.name, dtype,
         layout.empty() ? "(none)" : layout, shape_str(shape), s.size(), size);
}

// The (shard, offset, size) ranges holding an item's bytes, in stream order.
void place(uint32_t item, const ordered_json& loc, uint64_t size, Plan& p, const std::map<uint64_t, size_t>& shard_pos,
           const Context& cx, const std::string& where) {
  std::vector<ordered_json> spans;
  if (loc.contains("spans") && loc["spans"].is_array() && !loc["spans"].empty())
    for (auto& sp : loc["spans"]) spans.push_back(sp);
  else
    spans.push_back(loc);
  uint64_t at = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    const auto& sp = spans[i];
    std::string w = spans.size() > 1 ? fmt::format("{}.spans[{}]", where, i) : where;
    uint64_t shard = get_u64(sp, sp.contains("shardIndex") ? "shardIndex" : "shard", cx, w);
    uint64_t off = get_u64(sp, "offset", cx, w), n = get_u64(sp, "size", cx, w);
    auto pos = shard_pos.find(shard);
    if (pos == shard_pos.end()) fail("{}: {}: shard {} is not in the shard list", cx.label, w, shard);
    ShardPlan& sh = p.shards[pos->second];
    if (off > sh.size || n > sh.size - off)
      fail("{}: {}: bytes [{}, {}) leave shard {} of {} bytes", cx.label, w, off, off + n, shard, sh.size);
    if (n) sh.pieces.push_back({item, at, off, n});
    at += n;
  }
  if (at != size) fail("{}: {}: spans hold {} bytes, expected {}", cx.label, where, at, size);
}

Plan make_plan(const fs::path& path, uint64_t seed) {
  Plan p;
  Context cx{path.string(), seed, 0.02f, 1.0f};
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("{}: cannot open", path.string());
  try {
    p.manifest = ordered_json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not JSON: {}", path.string(), e.what());
  }
  const ordered_json& m = p.manifest;
  if (!m.is_object() || !m.contains("shards") || !m["shards"].is_array() || !m.contains("tensors") ||
      !m["tensors"].is_object())
    fail("{}: expected an RDRR manifest (an object with 'shards' and 'tensors')", cx.label);
  std::string alg = get_str(m, "hashAlgorithm", "sha256");
  auto a = parse_hash_algorithm(alg);
  if (!a) fail("{}: hashAlgorithm: expected sha256 or blake3, got '{}'", cx.label, alg);
  p.alg = *a;
  if (m.contains("architecture") && m["architecture"].is_object() && m["architecture"].value("hiddenSize", 4096) < 512)
    cx.weight_std = 0.05f;  // as synth draws the tiny models: weights large enough to matter
  if (m.contains("inference") && m["inference"].is_object() && m["inference"].contains("normalization") &&
      m["inference"]["normalization"].value("rmsNormWeightOffset", false) == true)
    cx.norm_mean = 0.0f;

  std::map<uint64_t, size_t> shard_pos;
  for (size_t i = 0; i < m["shards"].size(); ++i) {
    const auto& s = m["shards"][i];
    std::string where = fmt::format("shards[{}]", i);
    uint64_t index = s.contains("index") ? get_u64(s, "index", cx, where) : i;
    ShardPlan sp;
    sp.filename = get_str(s, "filename", get_str(s, "fileName"));
    sp.size = get_u64(s, "size", cx, where);
    if (sp.filename.empty() || sp.filename.find('/') != std::string::npos || sp.filename == "." || sp.filename == "..")
      fail("{}: {}.filename: expected a plain file name, got '{}'", cx.label, where, sp.filename);
    if (s.contains("compression") && !s["compression"].is_null())
      fail("{}: {}: compressed shards are blueshift's extension; synth --like writes DOPPLER's plain shards", cx.label, where);
    if (!shard_pos.emplace(index, i).second) fail("{}: {}.index: {} appears twice", cx.label, where, index);
    p.total += sp.size;
    p.shards.push_back(std::move(sp));
  }

  const ordered_json& tensors = m["tensors"];
  auto comps = companions(tensors);
  std::vector<Item> extra;
  for (auto& [name, t] : tensors.items()) {
    if (!t.is_object()) fail("{}: tensors.{}: expected an object", cx.label, name);
    p.items.emplace_back();
    p.items.back().name = name;
    size_t before = extra.size();
    resolve(p.items.back(), t, tensors, comps, cx, extra);
    uint32_t idx = uint32_t(p.items.size() - 1);
    place(idx, t, p.items.back().stream.size(), p, shard_pos, cx, "tensors." + name);
    if (extra.size() > before) {  // the int4 table's scales, where its sourceTransform says
      const ordered_json& src = t["sourceTransform"]["scaleSource"];
      uint64_t want = extra.back().stream.size();
      if (get_u64(src, "size", cx, "tensors." + name + ".sourceTransform.scaleSource") != want)
        fail("{}: tensors.{}.sourceTransform.scaleSource.size: expected {} (f32 per row), got {}", cx.label, name, want,
             src["size"].dump());
      p.items.push_back(std::move(extra.back()));
      extra.pop_back();
      place(uint32_t(p.items.size() - 1), src, want, p, shard_pos, cx, "tensors." + name + ".sourceTransform.scaleSource");
    }
    ++p.tensors;
  }

  // Nothing may be written twice: pieces of one shard must not overlap.
  for (auto& sh : p.shards) {
    std::sort(sh.pieces.begin(), sh.pieces.end(), [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
    for (size_t i = 1; i < sh.pieces.size(); ++i)
      if (sh.pieces[i].offset < sh.pieces[i - 1].offset + sh.pieces[i - 1].size)
        fail("{}: {}: '{}' and '{}' overlap at byte {}", cx.label, sh.filename, p.items[sh.pieces[i - 1].item].name,
             p.items[sh.pieces[i].item].name, sh.pieces[i].offset);
  }

  // blockMerkle roots to recompute: every tensor the manifest has a root for.
  if (m.contains("integrityExtensions") && m["integrityExtensions"].is_object() &&
      m["integrityExtensions"].contains("blockMerkle") && m["integrityExtensions"]["blockMerkle"].is_object()) {
    const ordered_json& bm = m["integrityExtensions"]["blockMerkle"];
    p.block_size = bm.contains("blockSize") ? get_u64(bm, "blockSize", cx, "integrityExtensions.blockMerkle") : 1 << 20;
    if (p.block_size == 0) fail("{}: integrityExtensions.blockMerkle.blockSize: must be positive", cx.label);
    std::map<std::string, uint32_t> by_name;
    for (uint32_t i = 0; i < p.items.size(); ++i) by_name[p.items[i].name] = i;
    if (bm.contains("roots") && bm["roots"].is_object())
      for (auto& [name, root] : bm["roots"].items()) {
        auto it = by_name.find(name);
        if (it == by_name.end())
          fail("{}: integrityExtensions.blockMerkle.roots: '{}' is not in the tensor map", cx.label, name);
        Item& item = p.items[it->second];
        item.merkle = true;
        uint64_t n = std::max<uint64_t>(1, (item.stream.size() + p.block_size - 1) / p.block_size);
        item.leaves.resize(n);
        item.have.assign(n, 0);
      }
  }
  return p;
}

Digest sha256_digest(const uint8_t* data, uint64_t n) {
  std::string hex = sha256_hex({reinterpret_cast<const std::byte*>(data), n});
  Digest d;
  for (size_t i = 0; i < 32; ++i) d[i] = uint8_t(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return d;
}

// DOPPLER's block Merkle root (src/formats/rdrr/merkle.js): leaves are the SHA-256 of each block; a
// parent is the SHA-256 of its two children's 32 bytes; an odd last node pairs with itself.
std::string merkle_root(std::vector<Digest> level) {
  while (level.size() > 1) {
    std::vector<Digest> next;
    for (size_t i = 0; i < level.size(); i += 2) {
      uint8_t pair[64];
      std::memcpy(pair, level[i].data(), 32);
      std::memcpy(pair + 32, level[i + 1 < level.size() ? i + 1 : i].data(), 32);
      next.push_back(sha256_digest(pair, 64));
    }
    level = std::move(next);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string s = "sha256:";
  for (uint8_t b : level[0]) s += {kHex[b >> 4], kHex[b & 15]};
  return s;
}

// Hashes the blocks of an item's bytes that lie whole in this piece of a shard; a block that straddles
// two pieces is regenerated from the stream afterwards.
void leaves_from_piece(Item& it, const Piece& pc, const uint8_t* shard, uint64_t block) {
  const uint64_t total = it.stream.size(), end = pc.at + pc.size;
  for (uint64_t k = (pc.at + block - 1) / block; k * block < end; ++k) {
    uint64_t lo = k * block, hi = std::min(lo + block, total);
    if (hi > end) break;
    it.leaves[k] = sha256_digest(shard + pc.offset + (lo - pc.at), hi - lo);
    it.have[k] = 1;
  }
}

// Runs fn(job, worker) for job in [0, n) on `threads` workers; rethrows the first failure.
void parallel(size_t n, int threads, const std::function<void(size_t, int)>& fn) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mu;
  auto worker = [&](int w) {
    for (size_t j; !failed && (j = next++) < n;) try {
        fn(j, w);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        failed = true;
      }
  };
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) pool.emplace_back(worker, w);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

void write_bytes(const fs::path& path, const uint8_t* data, uint64_t n) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_kind(ErrorKind::resources, "{}: cannot create: {}", path.string(), std::strerror(errno));
  uint64_t put = 0;
  while (put < n) {
    ssize_t r = ::write(fd, data + put, std::min<uint64_t>(n - put, 1u << 30));
    if (r <= 0) {
      int e = errno;
      ::close(fd);
      fail_kind(ErrorKind::resources, "{}: write failed: {}", path.string(), std::strerror(e));
    }
    put += uint64_t(r);
  }
  if (::close(fd) != 0) fail_kind(ErrorKind::resources, "{}: close failed: {}", path.string(), std::strerror(errno));
}

// OUT_DIR's temporary sibling, removed on scope exit unless released.
struct TempDir {
  fs::path path;
  explicit TempDir(const fs::path& out) {
    fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
    std::string tmpl = (parent / ("." + out.filename().string() + ".partial-XXXXXX")).string();
    if (!mkdtemp(tmpl.data())) fail("{}: cannot create a temporary directory: {}", parent.string(), std::strerror(errno));
    path = tmpl;
    // mkdtemp makes it 0700; the bundle is for everyone who may read OUT_DIR's parent.
    fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

}  // namespace

SynthLikeResult synth_like(const fs::path& manifest_arg, const fs::path& out_arg, const SynthLikeOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  const fs::path manifest = fs::is_directory(manifest_arg) ? manifest_arg / "manifest.json" : manifest_arg;
  fs::path out_dir = out_arg;
  if (out_dir.filename().empty()) out_dir = out_dir.parent_path();  // "out/" names "out"
  if (fs::exists(out_dir) && !o.force)
    fail_kind(ErrorKind::usage, "{}: already exists (use --force to replace it)", out_dir.string());
  Plan p = make_plan(manifest, o.seed);
  SynthLikeResult r;
  r.shards = p.shards.size();
  r.tensors = p.tensors;
  r.bytes = p.total;
  r.hash_algorithm = std::string(hash_algorithm_name(p.alg));
  for (auto& it : p.items) r.merkle_roots += it.merkle;
  if (o.dry_run) return r;
  try {
    hash_hex(p.alg, {});  // a missing hash implementation fails here, before anything is written
  } catch (const Error& e) {
    fail_kind(e.kind(), "{}: hashAlgorithm {}: {}", manifest.string(), hash_algorithm_name(p.alg), e.what());
  }
  fs::path parent = out_dir.parent_path().empty() ? fs::path(".") : out_dir.parent_path();
  std::error_code ec;
  auto space = fs::space(parent, ec);
  if (!ec && space.available < p.total)
    fail_kind(ErrorKind::resources, "{}: needs {:.2f} GB for the shards, {:.2f} GB free", parent.string(),
              double(p.total) / 1e9, double(space.available) / 1e9);

  TempDir tmp(out_dir);
  const int threads = o.threads > 0 ? o.threads : std::max(1, int(std::thread::hardware_concurrency()));
  std::vector<std::vector<uint8_t>> bufs(static_cast<size_t>(threads));
  std::atomic<uint64_t> done{0};
  std::mutex progress_mu;
  if (o.progress) o.progress(0, p.total);
  parallel(p.shards.size(), threads, [&](size_t s, int w) {
    ShardPlan& sh = p.shards[s];
    std::vector<uint8_t>& buf = bufs[size_t(w)];
    buf.resize(sh.size);
    std::memset(buf.data(), 0, sh.size);  // bytes no tensor covers are zero
    for (const Piece& pc : sh.pieces) {
      Item& it = p.items[pc.item];
      it.stream.read(pc.at, pc.at + pc.size, buf.data() + pc.offset);
      if (it.merkle) leaves_from_piece(it, pc, buf.data(), p.block_size);
    }
    sh.hash = hash_hex(p.alg, {reinterpret_cast<const std::byte*>(buf.data()), sh.size});
    write_bytes(tmp.path / sh.filename, buf.data(), sh.size);
    uint64_t d = done += sh.size;
    if (o.progress) {
      std::lock_guard lock(progress_mu);
      o.progress(d, p.total);
    }
  });
  bufs.clear();

  // Merkle leaves that straddle two pieces (a span boundary), regenerated from the streams.
  std::vector<std::pair<uint32_t, uint64_t>> missing;
  for (uint32_t i = 0; i < p.items.size(); ++i)
    for (uint64_t k = 0; k < p.items[i].have.size(); ++k)
      if (!p.items[i].have[k]) missing.emplace_back(i, k);
  parallel(missing.size(), threads, [&](size_t j, int) {
    Item& it = p.items[missing[j].first];
    uint64_t lo = missing[j].second * p.block_size, hi = std::min(lo + p.block_size, it.stream.size());
    std::vector<uint8_t> block(hi - lo);
    it.stream.read(lo, hi, block.data());
    it.leaves[missing[j].second] = sha256_digest(block.data(), block.size());
  });

  ordered_json& m = p.manifest;
  for (size_t i = 0; i < p.shards.size(); ++i) {
    m["shards"][i]["hash"] = p.shards[i].hash;
    if (m["shards"][i].contains("blake3")) m["shards"][i]["blake3"] = p.shards[i].hash;  // older manifests' duplicate
  }
  for (auto& it : p.items)
    if (it.merkle) m["integrityExtensions"]["blockMerkle"]["roots"][it.name] = merkle_root(it.leaves);
  std::string text = m.dump(2) + "\n";
  write_bytes(tmp.path / "manifest.json", reinterpret_cast<const uint8_t*>(text.data()), text.size());

  // The tokenizer DOPPLER bundles beside its manifest, when the manifest's directory has it.
  std::vector<std::string> tok_files = {"tokenizer.json"};
  if (m.contains("tokenizer") && m["tokenizer"].is_object()) {
    std::string f = get_str(m["tokenizer"], "file");
    if (!f.empty() && f.find('/') == std::string::npos && f != "." && f != ".." && f != "manifest.json") tok_files.push_back(f);
  }
  for (auto& f : tok_files) {
    fs::path src = manifest.parent_path() / f;
    if (fs::is_regular_file(src) && !fs::exists(tmp.path / f)) {
      fs::copy_file(src, tmp.path / f);
      r.tokenizer = true;
    }
  }

  // Into place: an existing OUT_DIR (with --force) is moved aside first and removed after.
  fs::path trash;
  if (fs::exists(out_dir)) {
    trash = parent / ("." + out_dir.filename().string() + ".old-" + std::to_string(::getpid()));
    fs::rename(out_dir, trash);
  }
  fs::rename(tmp.path, out_dir);
  tmp.path.clear();
  if (!trash.empty()) fs::remove_all(trash);

  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace bs
