// Diagnostics in compiler form: "file:line:col: error: message", the source line, a caret line.
// Several errors may be collected before the caller gives up; the formatted text goes into the
// bs::Error that parse_and_resolve / compile_wgsl throw.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bs::wgsl {

struct Loc {
  uint32_t line = 1;
  uint32_t col = 1;
  uint32_t offset = 0;  // byte offset into the source
};

struct Diagnostic {
  Loc loc;
  std::string message;
};

class Diagnostics {
 public:
  // Past this many errors the rest are noise (and fuzzed inputs could produce millions).
  static constexpr size_t kMaxErrors = 20;

  Diagnostics(std::string_view source, std::string filename) : source_(source), filename_(std::move(filename)) {}
  void error(Loc loc, std::string message);
  bool has_errors() const { return !list_.empty(); }
  bool full() const { return list_.size() >= kMaxErrors; }
  const std::vector<Diagnostic>& list() const { return list_; }
  const std::string& filename() const { return filename_; }
  // All diagnostics, each with its source line and a caret under the column.
  std::string format() const;
  // Throws bs::Error(input) carrying format() when any error was recorded.
  void throw_if_errors() const;

 private:
  std::string_view source_;
  std::string filename_;
  std::vector<Diagnostic> list_;
};

// Thrown inside the parser/resolver to abandon the current declaration or statement after the
// diagnostic was recorded; caught at the next recovery point.
struct Abort {};

}  // namespace bs::wgsl
