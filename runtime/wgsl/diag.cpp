#include "runtime/wgsl/diag.h"

#include <fmt/format.h>

#include "runtime/base/error.h"

namespace bs::wgsl {

void Diagnostics::error(Loc loc, std::string message) {
  // Two errors at the same place are one error seen from two angles; keep the first.
  for (const auto& d : list_)
    if (d.loc.offset == loc.offset && d.loc.line == loc.line) return;
  if (list_.size() < kMaxErrors) list_.push_back({loc, std::move(message)});
}

std::string Diagnostics::format() const {
  std::string out;
  for (const auto& d : list_) {
    out += fmt::format("{}:{}:{}: error: {}\n", filename_, d.loc.line, d.loc.col, d.message);
    size_t start = std::min<size_t>(d.loc.offset, source_.size());
    while (start > 0 && source_[start - 1] != '\n') --start;
    size_t end = start;
    while (end < source_.size() && source_[end] != '\n' && source_[end] != '\r') ++end;
    std::string line(source_.substr(start, end - start));
    std::string caret;
    for (size_t i = 0; i + 1 < d.loc.col && i < line.size(); ++i) caret += line[i] == '\t' ? '\t' : ' ';
    out += "  " + line + "\n  " + caret + "^\n";
  }
  if (list_.size() >= kMaxErrors) out += "(further errors suppressed)\n";
  return out;
}

void Diagnostics::throw_if_errors() const {
  if (has_errors()) {
    std::string text = format();
    if (!text.empty() && text.back() == '\n') text.pop_back();
    throw bs::Error(text, bs::ErrorKind::input);
  }
}

}  // namespace bs::wgsl
