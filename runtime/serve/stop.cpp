#include "runtime/serve/stop.h"

#include <algorithm>

namespace bs::serve {

std::string StopMatcher::push(const std::string& text) {
  if (stopped_) return "";
  held_ += text;
  // The earliest complete stop string wins.
  size_t cut = std::string::npos;
  for (const auto& s : stops_)
    if (size_t at = held_.find(s); at != std::string::npos) cut = std::min(cut, at);
  if (cut != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, cut);
    held_.clear();
    return out;
  }
  // Keep the longest suffix of the text that is a proper prefix of a stop string.
  size_t keep = 0;
  for (const auto& s : stops_)
    for (size_t n = std::min(s.size() - 1, held_.size()); n > keep; --n)
      if (held_.compare(held_.size() - n, n, s, 0, n) == 0) {
        keep = n;
        break;
      }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopMatcher::flush() {
  if (stopped_) return "";
  std::string out;
  out.swap(held_);
  return out;
}

}  // namespace bs::serve
