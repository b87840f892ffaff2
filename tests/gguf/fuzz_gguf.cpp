// Fuzz target: the GGUF header parser on arbitrary bytes, and on what it accepts, the import's reading
// of the header (architecture, hyperparameters, tensor names, types and dims; the vocabulary). Built as a
// libFuzzer binary with -DBLUESHIFT_FUZZ=ON (clang); test_gguf.cpp runs the same function on deterministic
// mutations.
#include <cstddef>
#include <cstdint>
#include <span>

#include "rdrr/gguf.h"
#include "rdrr/gguf_import.h"
#include "runtime/base/error.h"

int fuzz_gguf(const uint8_t* data, size_t size) {
  bs::gguf::Header h;
  try {
    auto bytes = std::as_bytes(std::span(data, size));
    h = bs::gguf::parse_header(bytes, size, "fuzz.gguf");
    // Whatever was accepted must be self-consistent: every tensor's data inside the file, aligned.
    for (const auto& t : h.tensors)
      if (h.data_offset + t.offset + t.size > size || t.offset % h.alignment || t.ne.empty())
        __builtin_trap();
  } catch (const bs::Error&) {
    return 0;
  }
  try {
    bs::GgufImportPlan p = bs::plan_gguf_import(h, "fuzz.gguf", std::as_bytes(std::span(data, size)));
    // An accepted plan reads only tensors of the header, each of the size its type and dims give.
    for (const auto& t : p.tensors) {
      uint64_t elems = 1;
      for (int64_t d : t.shape) elems *= uint64_t(d);
      if (t.shape.empty() || elems == 0 || t.info->size == 0) __builtin_trap();
      if (t.up && (t.up->size != t.info->size || t.shape.size() < 2)) __builtin_trap();  // joined experts: halves
    }
  } catch (const bs::Error&) {
  }
  try {
    std::string why;
    if (auto tok = bs::gguf_tokenizer(h, "fuzz.gguf", why))
      if (!tok->tokenizer["model"]["vocab"].is_object()) __builtin_trap();
  } catch (const bs::Error&) {
  }
  return 0;
}

#ifdef BLUESHIFT_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_gguf(data, size); }
#endif
