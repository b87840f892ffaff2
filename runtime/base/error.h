// Errors by whose fault they are (see ../shared/docs/STYLE.md):
//   bad input (a file, a flag, a model)  -> throw bs::Error, caught once in main, exit code by kind;
//   a Vulkan call that fails             -> VK_CHECK (runtime/gpu/vk.h) throws bs::Error(kind=gpu);
//   a broken invariant                   -> assert.
// Nothing throws inside the per-token loop.
#pragma once
#include <fmt/format.h>
#include <stdexcept>
#include <string>

namespace bs {

// Exit codes main() returns; scripts rely on them, so they never change meaning.
enum class ErrorKind : int {
  usage = 2,         // bad command line (CLI11 uses 2 as well)
  input = 3,         // a file or model that is malformed, missing or unsupported
  integrity = 4,     // a hash or size that does not match the manifest
  gpu = 5,           // no usable Vulkan device, a missing feature, a failed Vulkan call
  resources = 6,     // the model does not fit (VRAM, context length)
  internal = 70,     // a bug: please report
};

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, ErrorKind kind = ErrorKind::input)
      : std::runtime_error(std::move(message)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// fail("{}: expected {} bytes, got {}", path, want, got) — formats and throws bs::Error(input).
template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...), ErrorKind::input);
}

template <class... Args>
[[noreturn]] void fail_kind(ErrorKind kind, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...), kind);
}

}  // namespace bs
