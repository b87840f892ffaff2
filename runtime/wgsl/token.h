// WGSL tokens. Keywords are identifiers here (the parser knows its keywords); '<' and '>' that
// open and close template lists are their own tokens, decided by the spec's template-list
// discovery before tokenizing, so `array<vec4<f32>>` and `a < b && c > d` both come out right.
#pragma once
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/wgsl/diag.h"

namespace bs::wgsl {

enum class Tok : uint8_t {
  eof,
  ident,        // identifiers and keywords; "_" alone as well
  int_lit,      // text includes the suffix: "12u", "0x1Fi"
  float_lit,    // "1.5", "2e3f", "0.5h", "0x1p4"
  punct,        // operators and punctuation: "(", "<<=", "->", "@" ...
  tmpl_start,   // '<' that opens a template list
  tmpl_end,     // '>' that closes a template list
};

struct Token {
  Tok kind = Tok::eof;
  std::string text;
  Loc loc;
};

// Byte offsets of the '<' and '>' that delimit template lists (WGSL spec, "Template Lists").
struct TemplateMarks {
  std::set<uint32_t> starts;
  std::set<uint32_t> ends;
};
TemplateMarks discover_template_lists(std::string_view src);

// Shared by the lexer and the template discovery, which must skip literals the same way.
// Returns the end offset of the numeric literal starting at `pos` (pos when there is none) and
// whether it is a float literal.
size_t scan_number(std::string_view src, size_t pos, bool* is_float);
size_t scan_ident(std::string_view src, size_t pos);  // end of identifier at pos, or pos
// Skips blankspace and comments from pos; reports an unterminated block comment through *bad.
size_t skip_blank(std::string_view src, size_t pos, bool* bad = nullptr);

std::vector<Token> tokenize(std::string_view src, Diagnostics& diags);

}  // namespace bs::wgsl
