#include "rdrr/manifest.h"
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "rdrr/checked.h"
#include "rdrr/hf_config.h"
#include "rdrr/tensor_names.h"
#include "runtime/base/error.h"

namespace bs {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

// A manifest larger than this is not a manifest (a 400-layer model's is a few MB).
constexpr size_t kMaxManifestBytes = 256u << 20;

namespace {

struct Ctx {
  const std::string& label;
  const char* hash_name = "SHA-256";  // the manifest's hashAlgorithm, as messages name it

  const json& need(const json& obj, const char* key, const std::string& where) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail("{}: {}: missing field '{}'", label, where, key);
    return *it;
  }
  uint64_t u64(const json& v, const std::string& where) const {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      fail("{}: {}: expected a non-negative integer, got {}", label, where, v.dump());
    return v.get<uint64_t>();
  }
  std::string str(const json& v, const std::string& where) const {
    if (!v.is_string()) fail("{}: {}: expected a string, got {}", label, where, v.dump());
    return v.get<std::string>();
  }
  std::string hex_hash(const json& v, const std::string& where) const {
    std::string s = str(v, where);
    bool ok = s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
                return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
              });
    if (!ok) fail("{}: {}: expected 64 lowercase hex digits ({}), got '{}'", label, where, hash_name, s);
    return s;
  }
};

ShardInfo parse_shard(const Ctx& cx, const json& s, size_t i) {
  std::string where = fmt::format("shards[{}]", i);
  if (!s.is_object()) fail("{}: {}: expected an object", cx.label, where);
  ShardInfo sh;
  uint64_t index = cx.u64(cx.need(s, "index", where), where + ".index");
  if (index != i) fail("{}: {}.index: expected {}, got {}", cx.label, where, i, index);
  sh.index = uint32_t(i);
  const char* name_key = s.contains("filename") ? "filename" : "fileName";
  sh.filename = cx.str(cx.need(s, name_key, where), where + "." + name_key);
  if (!is_plain_filename(sh.filename))
    fail("{}: {}.{}: '{}' is not a plain file name inside the model directory", cx.label, where, name_key,
         sh.filename);
  sh.size = cx.u64(cx.need(s, "size", where), where + ".size");
  // Older DOPPLER manifests repeat the hash under "blake3" (whatever hashAlgorithm says it is).
  const char* hash_key = s.contains("hash") ? "hash" : "blake3";
  sh.hash = cx.hex_hash(cx.need(s, hash_key, where), where + "." + hash_key);
  sh.offset = s.contains("offset") ? cx.u64(s["offset"], where + ".offset") : 0;
  std::string comp = s.contains("compression") && !s["compression"].is_null()
                         ? cx.str(s["compression"], where + ".compression") : "none";
  if (comp == "zstd") {
    sh.compressed = true;
    sh.stored_size = cx.u64(cx.need(s, "storedSize", where), where + ".storedSize");
    sh.stored_hash = cx.hex_hash(cx.need(s, "storedHash", where), where + ".storedHash");
  } else if (comp != "none") {
    fail("{}: {}.compression: expected \"zstd\" or none, got '{}'", cx.label, where, comp);
  }
  return sh;
}

// One more entry for bytes a tensor names outside "tensors" (sourceTransform.scaleSource): an F32
// vector of `elems`, so loading, overlap checks and span validation treat it like any tensor.
TensorEntry companion_entry(const Ctx& cx, const TensorEntry& of, const json& ref, uint64_t elems,
                            const std::vector<ShardInfo>& shards, const std::string& where) {
  if (!ref.is_object()) fail("{}: {}: expected an object {{shard, offset, size}}", cx.label, where);
  TensorEntry c;
  c.name = of.name + "#scales";
  c.dtype = DType::F32;
  c.shape = {int64_t(elems)};
  c.size = cx.u64(cx.need(ref, "size", where), where + ".size");
  if (c.size / 4 != elems || c.size % 4)
    fail("{}: {}.size: {} F32 row scales need {} bytes, size says {}", cx.label, where, elems, elems * 4.0, c.size);
  uint64_t shard = cx.u64(ref.contains("shardIndex") ? ref["shardIndex"] : cx.need(ref, "shard", where), where + ".shard");
  uint64_t offset = cx.u64(cx.need(ref, "offset", where), where + ".offset");
  auto end = checked_add(offset, c.size);
  if (shard >= shards.size() || !end || *end > shards[shard].size)
    fail("{}: {}: bytes [{}, {}+{}) of shard {} are not inside a shard of this manifest", cx.label, where, offset, offset,
         c.size, shard);
  c.spans.push_back({uint32_t(shard), offset, c.size});
  c.companion_of = of.name;
  c.implied = true;
  c.role = "other";
  c.group = of.group;
  return c;
}

// DOPPLER's int4 per-row table ("F16" + sourceTransform litert_axis_dequant, quantizationInfo
// perLayerEmbeddings "int4_per_row"): value [r, c] = (nibble - 8) * scale[r], nibbles low first, one F32
// scale per row. Only the variant DOPPLER's converter writes is accepted; anything else is named.
void parse_int4_table(const Ctx& cx, TensorEntry& e, const json& tr, const std::string& where) {
  if (!tr.is_object()) fail("{}: {}: expected an object", cx.label, where);
  auto want_str = [&](const char* key, std::string_view expect) {
    std::string v = cx.str(cx.need(tr, key, where), where + "." + key);
    if (v != expect)
      fail("{}: {}.{}: '{}' is not supported (blueshift reads DOPPLER's int4_per_row table: '{}')", cx.label, where,
           key, v, expect);
  };
  want_str("kind", "litert_axis_dequant");
  want_str("sourceDtype", "INT4");
  want_str("targetDtype", "F16");
  want_str("storageEncoding", "offset_binary");
  want_str("scaleSemantics", "step");
  if (e.dtype != DType::F16) fail("{}: {}: targetDtype F16 but the tensor's dtype is {}", cx.label, where, dtype_name(e.dtype));
  uint64_t axis = cx.u64(cx.need(tr, "quantAxis", where), where + ".quantAxis");
  if (axis != 1) fail("{}: {}.quantAxis: expected 1 (one scale per row), got {}", cx.label, where, axis);
  if (e.shape.size() != 2) fail("{}: {}: the int4 table must be 2-D, shape has {} dims", cx.label, where, e.shape.size());
  const json& ss = cx.need(tr, "storageShape", where);
  if (!ss.is_array() || ss.size() != 2 || cx.u64(ss[0], where + ".storageShape") != uint64_t(e.shape[0]) ||
      cx.u64(ss[1], where + ".storageShape") != uint64_t(e.shape[1]))
    fail("{}: {}.storageShape: expected [{}, {}] (the shape, quantAxis 1), got {}", cx.label, where, e.shape[0],
         e.shape[1], ss.dump());
  e.dtype = DType::I4;
}

TensorEntry parse_tensor(const Ctx& cx, const std::string& name, const json& t, const std::vector<ShardInfo>& shards) {
  std::string where = "tensors['" + name + "']";
  if (!t.is_object()) fail("{}: {}: expected an object", cx.label, where);
  TensorEntry e;
  e.name = name;
  std::string dt = cx.str(cx.need(t, "dtype", where), where + ".dtype");
  auto dtype = parse_dtype(dt);
  if (!dtype)
    fail("{}: {}.dtype: '{}' is not supported (F32, F16, BF16, I32, I64, Q8_0, Q4_K, Q4_K_M, Q6_K, W4A16)", cx.label,
         where, dt);
  e.dtype = *dtype;
  const json& shape = cx.need(t, "shape", where);
  if (!shape.is_array() || shape.size() > 8) fail("{}: {}.shape: expected a list of at most 8 dims", cx.label, where);
  for (auto& d : shape) {
    uint64_t v = cx.u64(d, where + ".shape");
    if (v > uint64_t(INT64_MAX)) fail("{}: {}.shape: dimension {} too large", cx.label, where, v);
    e.shape.push_back(int64_t(v));
  }
  e.size = cx.u64(cx.need(t, "size", where), where + ".size");
  if (t.contains("group") && t["group"].is_string()) e.group = t["group"].get<std::string>();
  if (t.contains("role") && t["role"].is_string()) e.role = t["role"].get<std::string>();
  // DOPPLER writes "layout" on the Q4_K matrices it quantizes row by row; a blocked tensor without it
  // (a conv weight of 3 dims, say) was quantized flat over all its elements.
  e.layout = traits(e.dtype).block_elems > 1 ? Layout::flat : Layout::row;
  if (t.contains("layout") && !t["layout"].is_null()) {
    std::string layout = cx.str(t["layout"], where + ".layout");
    if (layout == "row") e.layout = Layout::row;
    else if (layout == "col") e.layout = Layout::col;
    else fail("{}: {}.layout: expected 'row' or 'col', got '{}'", cx.label, where, layout);
    if (e.layout == Layout::col && (e.dtype != DType::Q4_K || e.shape.size() != 2))
      fail("{}: {}.layout: 'col' is DOPPLER's transposed Q4_K of a matrix, not {} with {} dims", cx.label, where, dt,
           e.shape.size());
  }
  if (e.dtype == DType::W4A16) e.layout = Layout::row;  // groups of 32 along each row (compressed-tensors)
  if (t.contains("sourceTransform") && !t["sourceTransform"].is_null()) {
    parse_int4_table(cx, e, t["sourceTransform"], where + ".sourceTransform");
    e.scales = e.name + "#scales";  // parse_manifest_json adds that entry (companion_entry)
  }
  if (e.dtype == DType::W4A16) {
    std::string w = where + ".storage";
    const json& st = cx.need(t, "storage", where);
    if (!st.is_object()) fail("{}: {}: expected an object", cx.label, w);
    std::string packing = cx.str(cx.need(st, "packing", w), w + ".packing");
    const json& bs = cx.need(st, "blockShape", w);
    uint64_t bb = cx.u64(cx.need(st, "blockBytes", w), w + ".blockBytes");
    if (packing != "w4a16" || bs != json::array({32}) || bb != 16)
      fail("{}: {}: expected packing 'w4a16', blockShape [32], blockBytes 16 (compressed-tensors int4), got {}, {}, {}",
           cx.label, w, packing, bs.dump(), bb);
    if (e.shape.size() != 2) fail("{}: {}.shape: a W4A16 tensor is a matrix, got {} dims", cx.label, where, e.shape.size());
    const json& comps = cx.need(st, "companions", w);
    if (!comps.is_array()) fail("{}: {}.companions: expected a list", cx.label, w);
    for (size_t i = 0; i < comps.size(); ++i) {
      std::string cw = fmt::format("{}.companions[{}]", w, i);
      if (!comps[i].is_object()) fail("{}: {}: expected an object", cx.label, cw);
      std::string role = cx.str(cx.need(comps[i], "role", cw), cw + ".role");
      std::string id = cx.str(cx.need(comps[i], "tensorId", cw), cw + ".tensorId");
      if (role == "scales") e.scales = id;
      else if (role == "shape") e.shape_tensor = id;
      else fail("{}: {}.role: expected 'scales' or 'shape', got '{}'", cx.label, cw, role);
    }
    if (e.scales.empty() || e.shape_tensor.empty())
      fail("{}: {}.companions: a W4A16 tensor needs a 'scales' and a 'shape' companion", cx.label, w);
  } else if (t.contains("storage") && !t["storage"].is_null()) {
    fail("{}: {}.storage: only W4A16 tensors carry a storage descriptor, this one is {}", cx.label, where, dt);
  }

  auto want = tensor_bytes(e.dtype, e.shape, e.layout);
  if (!want) fail("{}: {}: shape {} of {} overflows or is not a tensor of blocks", cx.label, where, shape.dump(), dt);
  if (*want != e.size)
    fail("{}: {}.size: {} {} ({} layout{}) needs {} bytes, size says {}", cx.label, where, dtype_name(e.dtype),
         shape.dump(), layout_name(e.layout), e.dtype == DType::I4 ? ", int4 per row" : "", *want, e.size);

  auto add_span = [&](uint64_t shard, uint64_t offset, uint64_t size, const std::string& w) {
    if (shard >= shards.size())
      fail("{}: {}: shard {} does not exist ({} shards)", cx.label, w, shard, shards.size());
    auto end = checked_add(offset, size);
    if (!end || *end > shards[shard].size)
      fail("{}: {}: bytes [{}, {}+{}) leave shard {} ({} bytes)", cx.label, w, offset, offset, size, shard,
           shards[shard].size);
    e.spans.push_back({uint32_t(shard), offset, size});
  };
  if (t.contains("spans") && !t["spans"].is_null()) {
    const json& spans = t["spans"];
    if (!spans.is_array() || spans.empty()) fail("{}: {}.spans: expected a non-empty list", cx.label, where);
    uint64_t total = 0;
    for (size_t i = 0; i < spans.size(); ++i) {
      std::string w = fmt::format("{}.spans[{}]", where, i);
      if (!spans[i].is_object()) fail("{}: {}: expected an object", cx.label, w);
      uint64_t size = cx.u64(cx.need(spans[i], "size", w), w + ".size");
      add_span(cx.u64(cx.need(spans[i], "shardIndex", w), w + ".shardIndex"),
               cx.u64(cx.need(spans[i], "offset", w), w + ".offset"), size, w);
      total += size;  // each size <= its shard, so the sum of a bounded list cannot overflow 64 bits
    }
    if (total != e.size) fail("{}: {}.spans: sizes add up to {}, size is {}", cx.label, where, total, e.size);
  } else {
    add_span(cx.u64(cx.need(t, "shard", where), where + ".shard"), cx.u64(cx.need(t, "offset", where), where + ".offset"),
             e.size, where);
  }
  if (t.contains("x-blueshift") && t["x-blueshift"].is_object()) {
    const json& x = t["x-blueshift"];
    auto s = [&](const char* k) { return x.contains(k) ? cx.str(x[k], where + ".x-blueshift." + k) : std::string(); };
    e.internal = s("name");
    e.source_dtype = s("source");
    e.requested_dtype = s("requested");
    e.fallback = s("fallback");
  }
  return e;
}

// A W4A16 tensor's companions must exist, be of the right kind and match its shape: scales
// [rows, ceil(k / 32)] in a float type, the logical shape as 2 integers (its values are checked when
// loaded). Each companion serves one tensor.
void check_companions(const Ctx& cx, std::vector<TensorEntry>& tensors) {
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < tensors.size(); ++i) at[tensors[i].name] = i;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].dtype != DType::W4A16) continue;
    const TensorEntry& w = tensors[i];
    auto link = [&](const std::string& id, const char* role) -> TensorEntry& {
      auto it = at.find(id);
      if (it == at.end()) fail("{}: tensors['{}'].storage: its {} companion '{}' is not in the manifest", cx.label, w.name, role, id);
      TensorEntry& c = tensors[it->second];
      if (!c.companion_of.empty() && c.companion_of != w.name)
        fail("{}: tensors['{}']: companion of both '{}' and '{}'", cx.label, c.name, c.companion_of, w.name);
      c.companion_of = w.name;
      return c;
    };
    const TensorEntry& sc = link(w.scales, "scales");
    std::vector<int64_t> want = {w.shape[0], int64_t(padded_blocks(DType::W4A16, uint64_t(w.shape[1])))};
    if ((sc.dtype != DType::BF16 && sc.dtype != DType::F16 && sc.dtype != DType::F32) || sc.shape != want)
      fail("{}: tensors['{}']: the scales of W4A16 '{}' [{}, {}] must be BF16|F16|F32 [{}, {}], got {} {}", cx.label, sc.name,
           w.name, w.shape[0], w.shape[1], want[0], want[1], dtype_name(sc.dtype), json(sc.shape).dump());
    const TensorEntry& sh = link(w.shape_tensor, "shape");
    if ((sh.dtype != DType::I64 && sh.dtype != DType::I32) || sh.shape != std::vector<int64_t>{2})
      fail("{}: tensors['{}']: the shape companion of '{}' must be I64|I32 [2], got {} {}", cx.label, sh.name, w.name,
           dtype_name(sh.dtype), json(sh.shape).dump());
  }
}

// Rejects two tensors sharing bytes of a shard.
void check_overlaps(const Ctx& cx, const std::vector<TensorEntry>& tensors) {
  struct Piece { uint32_t shard; uint64_t begin, end; const std::string* name; };
  std::vector<Piece> pieces;
  for (auto& t : tensors)
    for (auto& s : t.spans)
      if (s.size) pieces.push_back({s.shard, s.offset, s.offset + s.size, &t.name});
  std::sort(pieces.begin(), pieces.end(), [](auto& a, auto& b) {
    return a.shard != b.shard ? a.shard < b.shard : a.begin < b.begin;
  });
  for (size_t i = 1; i < pieces.size(); ++i)
    if (pieces[i].shard == pieces[i - 1].shard && pieces[i].begin < pieces[i - 1].end)
      fail("{}: tensors '{}' and '{}' overlap in shard {} at byte {}", cx.label, *pieces[i - 1].name, *pieces[i].name,
           pieces[i].shard, pieces[i].begin);
}

}  // namespace

std::optional<uint64_t> tensor_bytes(DType t, const std::vector<int64_t>& shape, Layout layout) {
  const auto& tr = traits(t);
  auto elems = checked_elements(shape);
  if (!elems) return std::nullopt;
  if (tr.block_elems == 1) return checked_mul(*elems, tr.block_bytes);
  if (shape.empty()) return std::nullopt;
  switch (layout) {
    case Layout::flat:
      return checked_mul(padded_blocks(t, *elems), tr.block_bytes);
    case Layout::col:
      if (shape.size() != 2) return std::nullopt;
      return checked_mul(uint64_t(shape[1]), padded_row_bytes(t, uint64_t(shape[0])));
    case Layout::row:
      break;
  }
  auto rows = checked_elements(std::span<const int64_t>(shape.data(), shape.size() - 1));
  return rows ? checked_mul(*rows, padded_row_bytes(t, uint64_t(shape.back()))) : std::nullopt;
}

Manifest parse_manifest(std::string_view text, const std::string& label) {
  if (text.size() > kMaxManifestBytes) fail("{}: {} bytes is larger than any manifest ({} max)", label, text.size(),
                                            kMaxManifestBytes);
  // nlohmann keeps the last of duplicate keys silently; a manifest naming a tensor twice is rejected.
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  json j;
  try {
    j = json::parse(text, [&](int, json::parse_event_t ev, json& v) {
      if (ev == json::parse_event_t::object_start) keys.emplace_back();
      else if (ev == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
      else if (ev == json::parse_event_t::key && !keys.empty() && !keys.back().insert(v.get<std::string>()).second &&
               duplicate.empty())
        duplicate = v.get<std::string>();
      return true;
    });
  } catch (const json::exception& e) {
    fail("{}: not valid JSON: {}", label, e.what());
  }
  if (!duplicate.empty()) fail("{}: key '{}' appears twice in one object", label, duplicate);
  return parse_manifest_json(j, label);
}

Manifest parse_manifest_json(const json& j, const std::string& label) {
  Ctx cx{label};
  if (!j.is_object()) fail("{}: expected a JSON object", label);
  Manifest m;
  const json& ver = cx.need(j, "version", "manifest");
  if (!ver.is_number_integer() || ver.get<int64_t>() != 1)
    fail("{}: version: expected 1, got {} (this blueshift reads RDRR version 1)", label, ver.dump());
  auto opt_str = [&](const char* k) { return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : ""; };
  m.model_id = opt_str("modelId");
  m.model_type = opt_str("modelType");
  m.quantization = opt_str("quantization");
  if (j.contains("hashAlgorithm")) {
    m.hash_algorithm = cx.str(j["hashAlgorithm"], "hashAlgorithm");
    if (m.hash_algorithm != "sha256" && m.hash_algorithm != "blake3")
      fail("{}: hashAlgorithm: expected \"sha256\" or \"blake3\", got \"{}\"", label, m.hash_algorithm);
    cx.hash_name = m.hash_algorithm == "blake3" ? "BLAKE3" : "SHA-256";
  }
  const json& shards = cx.need(j, "shards", "manifest");
  if (!shards.is_array()) fail("{}: shards: expected a list", label);
  std::set<std::string> names;
  for (size_t i = 0; i < shards.size(); ++i) {
    ShardInfo s = parse_shard(cx, shards[i], i);
    if (!names.insert(s.filename).second) fail("{}: shards[{}]: file '{}' is listed twice", label, i, s.filename);
    if (s.offset != m.total_size)
      fail("{}: shards[{}].offset: expected {} (the sizes of the shards before it), got {}", label, i, m.total_size,
           s.offset);
    auto total = checked_add(m.total_size, s.size);
    if (!total) fail("{}: shards[{}].size: total size overflows", label, i);
    m.total_size = *total;
    m.shards.push_back(std::move(s));
  }
  const json& tensors = cx.need(j, "tensors", "manifest");
  if (!tensors.is_object()) fail("{}: tensors: expected an object", label);
  for (auto& [name, t] : tensors.items()) {
    m.tensors.push_back(parse_tensor(cx, name, t, m.shards));
    if (m.tensors.back().dtype == DType::I4) {
      std::string w = "tensors['" + name + "'].sourceTransform";
      TensorEntry scales = companion_entry(cx, m.tensors.back(), cx.need(t["sourceTransform"], "scaleSource", w),
                                           uint64_t(m.tensors.back().shape[0]), m.shards, w + ".scaleSource");
      m.tensors.push_back(std::move(scales));
    }
  }
  {
    std::set<std::string> seen;
    for (auto& t : m.tensors)
      if (!seen.insert(t.name).second) fail("{}: tensor '{}' appears twice", label, t.name);
  }
  check_companions(cx, m.tensors);
  check_overlaps(cx, m.tensors);
  std::sort(m.tensors.begin(), m.tensors.end(), [](auto& a, auto& b) {
    return a.spans[0].shard != b.spans[0].shard ? a.spans[0].shard < b.spans[0].shard
                                                : a.spans[0].offset < b.spans[0].offset;
  });

  if (j.contains("eos_token_id") && !j["eos_token_id"].is_null()) {
    const json& e = j["eos_token_id"];
    for (auto& id : e.is_array() ? e : json::array({e})) m.eos_ids.push_back(int32_t(cx.u64(id, "eos_token_id")));
  }
  m.tokenizer = j.contains("tokenizer") ? j["tokenizer"] : json();
  m.metadata = j.contains("metadata") && j["metadata"].is_object() ? j["metadata"] : json::object();
  m.quantization_info = j.contains("quantizationInfo") ? j["quantizationInfo"] : json();

  // The model description: ours when present (it is complete), else DOPPLER's blocks.
  const json* xb = j.contains("x-blueshift") && j["x-blueshift"].is_object() ? &j["x-blueshift"] : nullptr;
  if (xb && xb->contains("config")) {
    m.config = config_from_json((*xb)["config"], label);
  } else {
    try {
      m.config = config_from_doppler(j, label);
    } catch (const Error& e) {
      m.config_error = e.what();
    }
  }
  // DOPPLER manifests have no internal names: derive them from the HF names, by the config's flags
  // (DOPPLER's modelType is "transformer", "gemma4", ..., not HF's model_type).
  if (m.config) {
    // A tied model that stores its head anyway (DOPPLER's Qwen 3.5: a Q4_K lm_head beside the F16 embedding)
    // runs the stored head, as DOPPLER does.
    if (m.config->tied_embeddings)
      for (auto& t : m.tensors)
        if (t.name.ends_with("lm_head.weight") && t.shape.size() == 2) m.config->tied_embeddings = false;
    TensorNames map(*m.config);
    for (auto& t : m.tensors)
      if (t.internal.empty()) {
        auto r = map.to_internal(t.name);
        if (r.kind == TensorNames::Kind::mapped) t.internal = r.internal;
        t.skipped = r.kind == TensorNames::Kind::skipped;
      }
  }
  return m;
}

Manifest read_manifest(const fs::path& dir) {
  fs::path p = dir / "manifest.json";
  std::ifstream f(p, std::ios::binary);
  if (!f) fail("{}: cannot open (is {} an RDRR model directory?)", p.string(), dir.string());
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_manifest(ss.str(), p.string());
}

const TensorEntry* Manifest::find(std::string_view name) const {
  for (auto& t : tensors)
    if (t.name == name || t.internal == name) return &t;
  return nullptr;
}

const ModelConfig& Manifest::model_config() const {
  if (!config) throw Error(config_error.empty() ? "manifest has no model configuration" : config_error);
  return *config;
}

ordered_json manifest_to_json(const Manifest& m) {
  const ModelConfig& c = m.model_config();
  ordered_json j;
  j["version"] = m.version;
  j["modelId"] = m.model_id;
  j["modelType"] = m.model_type;
  j["quantization"] = m.quantization;
  if (!m.quantization_info.is_null()) j["quantizationInfo"] = m.quantization_info;
  j["hashAlgorithm"] = m.hash_algorithm;
  j["architecture"] = doppler_architecture(c);
  j["inference"] = doppler_inference(c);
  auto& shards = j["shards"] = ordered_json::array();
  for (auto& s : m.shards) {
    ordered_json o = {{"index", s.index}, {"filename", s.filename}, {"size", s.size}, {"hash", s.hash},
                      {"offset", s.offset}};
    if (s.compressed) {
      o["compression"] = "zstd";
      o["storedSize"] = s.stored_size;
      o["storedHash"] = s.stored_hash;
    }
    shards.push_back(std::move(o));
  }
  auto& tensors = j["tensors"] = ordered_json::object();
  for (auto& t : m.tensors) {
    if (t.name.find('#') != std::string::npos) continue;  // made by the parser from a sourceTransform
    ordered_json o;
    if (t.spans.size() == 1) {
      o["shard"] = t.spans[0].shard;
      o["offset"] = t.spans[0].offset;
    }
    o["size"] = t.size;
    o["shape"] = t.shape;
    o["dtype"] = dtype_name(t.dtype);
    o["role"] = t.role;
    o["group"] = t.group;
    if (t.layout != Layout::flat) o["layout"] = layout_name(t.layout);
    if (t.spans.size() > 1) {
      auto& sp = o["spans"] = ordered_json::array();
      for (auto& s : t.spans) sp.push_back({{"shardIndex", s.shard}, {"offset", s.offset}, {"size", s.size}});
    }
    ordered_json x = {{"name", t.internal}};
    if (!t.source_dtype.empty()) x["source"] = t.source_dtype;
    if (!t.requested_dtype.empty()) x["requested"] = t.requested_dtype;
    if (!t.fallback.empty()) x["fallback"] = t.fallback;
    o["x-blueshift"] = std::move(x);
    tensors[t.name] = std::move(o);
  }
  if (!m.tokenizer.is_null()) j["tokenizer"] = m.tokenizer;
  j["eos_token_id"] = m.eos_ids;
  j["totalSize"] = m.total_size;
  j["metadata"] = m.metadata;
  j["x-blueshift"] = {{"formatVersion", 1}, {"config", config_to_json(c)}};
  return j;
}

void write_manifest(const Manifest& m, const fs::path& file) {
  std::ofstream f(file, std::ios::binary | std::ios::trunc);
  f << manifest_to_json(m).dump(1) << '\n';
  f.flush();
  if (!f) fail("{}: write failed", file.string());
}

}  // namespace bs
