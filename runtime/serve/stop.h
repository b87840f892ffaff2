// Stop strings matched on the generated text, across token boundaries: text that could still be the
// start of a stop string is held back until the next token decides, so a client never receives any
// part of a stop string (OpenAI's behaviour: the stop sequence is not in the output).
#pragma once
#include <string>
#include <vector>

namespace bs::serve {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // Appends newly decoded text; returns what may be sent now. After a match, stopped() is true and
  // the returned text ends where the stop string began.
  std::string push(const std::string& text);
  // The end of the generation: whatever was held back (no stop string can complete any more).
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;  // undecided tail: a proper prefix of some stop string
  bool stopped_ = false;
};

}  // namespace bs::serve
