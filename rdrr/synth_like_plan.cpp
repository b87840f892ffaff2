#include "rdrr/synth_like_plan.h"

#include <fstream>
#include <map>

#include "rdrr/synth.h"
#include "runtime/base/error.h"

namespace bs::synth_like_detail {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

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
  if (!st.contains("scaleSource") || !st["scaleSource"].is_object()) no("needs a scaleSource {shard, offset, size}");
  if (!st.contains("storageShape") || !st["storageShape"].is_array() || st["storageShape"].size() != 2 ||
      shape.size() != 2)
    no("needs a 2-D shape and storageShape");
  for (auto& d : st["storageShape"])
    if (!d.is_number_unsigned()) no("storageShape must hold non-negative integers");
  uint64_t srows = st["storageShape"][0].get<uint64_t>(), scols = st["storageShape"][1].get<uint64_t>();
  int axis = st.contains("quantAxis") && st["quantAxis"].is_number_integer() ? st["quantAxis"].get<int>() : -1;
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
    if (n > size - at) fail("{}: {}: spans hold more than the {} bytes expected", cx.label, w, size);
    if (n) sh.pieces.push_back({item, at, off, n});
    at += n;
  }
  if (at != size) fail("{}: {}: spans hold {} bytes, expected {}", cx.label, where, at, size);
}

Plan plan_of(ordered_json manifest, const std::string& label, uint64_t seed) {
  Plan p;
  Context cx{label, seed, 0.02f, 1.0f};
  p.manifest = std::move(manifest);
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
    if (sp.size > (uint64_t(1) << 40) - p.total) fail("{}: {}.size: shards add up to over 1 TiB", cx.label, where);
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

}  // namespace

Plan make_plan(const fs::path& path, uint64_t seed) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("{}: cannot open", path.string());
  std::string text{std::istreambuf_iterator<char>(f), {}};
  return make_plan_text(text, path.string(), seed);
}

Plan make_plan_text(std::string_view text, const std::string& label, uint64_t seed) {
  try {
    return plan_of(ordered_json::parse(text), label, seed);
  } catch (const nlohmann::json::exception& e) {  // a field of the wrong JSON type the checks above missed
    fail("{}: {}", label, e.what());
  }
}

}  // namespace bs::synth_like_detail
