#include "cli/csl/csl_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "cli/csl/csl_lex.h"
#include "cli/csl/plan.h"

namespace bs::csl {

std::string to_string(const CslFinding& f) {
  return f.line > 0 ? fmt::format("{}:{}: [{}] {}", f.file, f.line, f.rule, f.message)
                    : fmt::format("{}: [{}] {}", f.file, f.rule, f.message);
}

namespace {

constexpr size_t kMaxSource = size_t(1) << 20;  // generated files are a few KiB; more is not ours
constexpr int kMaxNesting = 64;

struct Export {
  std::string element;  // element type of [*]T, or "fn"
  int line = 0;
};

struct Checker {
  std::vector<CslFinding> findings;
  void add(std::string_view file, int line, std::string_view rule, std::string msg) {
    findings.push_back({std::string(file), line, std::string(rule), std::move(msg)});
  }

  // --- shared ---
  void removed_syntax(std::string_view file, const Tokens& tk) {
    for (size_t i = 0; i < tk.size(); ++i) {
      const Token& t = tk.t[i];
      if (t.kind == TokKind::ident && t.text == "comptime_struct")
        add(file, t.line, "removed-syntax", "comptime_struct was removed in SDK 2.x; declare `param memcpy_params;` untyped");
      if (t.kind == TokKind::builtin && (t.text == "@concat_structs" || t.text == "@concat_struct"))
        add(file, t.line, "removed-syntax", t.text + " was removed in SDK 2.x");
      if (t.kind == TokKind::builtin && t.text == "@rpc")
        add(file, t.line, "removed-syntax", "@rpc was removed; export the function and launch it through memcpy");
      if (t.kind == TokKind::builtin && t.text == "@bind_task")
        add(file, t.line, "removed-syntax", "@bind_task was removed; bind with @bind_local_task");
      if (t.kind == TokKind::string && t.text.find("memcpy_multi") != std::string::npos)
        add(file, t.line, "removed-syntax", "the memcpy_multi library was removed; use <memcpy/memcpy>");
      if (t.kind == TokKind::ident && t.text == "fabric_color" && tk.punct(i - 1, '.'))
        add(file, t.line, "removed-syntax", "fabric DSDs no longer take .fabric_color; bind the color through a queue");
      if (t.kind == TokKind::builtin && (t.text == "@bind_data_task" || t.text == "@bind_control_task"))
        add(file, t.line, "tasks", t.text + ": tasks here are only @activate'd (no wavelet-triggered data or control tasks)");
    }
  }

  // Colors and task ids; `role` tells which range applies.
  void check_id(std::string_view file, const Token& builtin, const Token& num, bool c2d) {
    long n = -1;
    try {
      n = std::stol(num.text, nullptr, 0);
    } catch (...) {
    }
    bool color = builtin.text == "@get_color";
    if (n < 0 || n > kAppTaskLast) {
      add(file, num.line, "ids", fmt::format("{}({}): ids 21-31 belong to memcpy; application ids are 0..{}", builtin.text, num.text, kAppColorMax));
    } else if (c2d && (n < kC2dFirstId || n > kC2dLastId)) {
      add(file, num.line, "ids", fmt::format("{}({}): collectives ids must lie in {}..{}", builtin.text, n, kC2dFirstId, kC2dLastId));
    } else if (!c2d && !color && (n < kAppTaskFirst || n > kAppTaskLast)) {
      add(file, num.line, "ids", fmt::format("task id {} collides with the collectives' ids {}..{}; use {}..{}", n, kC2dFirstId,
                                             kC2dLastId, kAppTaskFirst, kAppTaskLast));
    } else if (!c2d && color && n >= kC2dFirstId && n <= kC2dLastId) {
      add(file, num.line, "ids", fmt::format("color {} is one of the collectives' colors", n));
    }
  }

  // The struct field an id sits in (".x_entrypoints = .{ @get_local_task_id(4), ... }").
  static std::string field_of(const Tokens& tk, size_t i) {
    for (size_t k = 1; k <= 24 && k <= i; ++k) {
      size_t j = i - k;
      if (tk.punct(j, ';') || tk.punct(j, '}')) break;
      if (tk.punct(j, '.') && tk.ident(j + 1) && tk.punct(j + 2, '=')) return tk.t[j + 1].text;
    }
    return {};
  }

  void ids(std::string_view file, const Tokens& tk, bool layout) {
    for (size_t i = 0; i + 3 < tk.size(); ++i) {
      const Token& t = tk.t[i];
      if (t.kind != TokKind::builtin || (t.text != "@get_color" && t.text != "@get_local_task_id")) continue;
      if (!tk.punct(i + 1, '(') || tk.t[i + 2].kind != TokKind::number) {
        add(file, t.line, "ids", t.text + " takes a literal id here, so it can be checked");
        continue;
      }
      std::string field = layout ? field_of(tk, i) : "";
      bool c2d = field.ends_with("entrypoints") || field.ends_with("colors");
      check_id(file, t, tk.t[i + 2], c2d);
    }
  }

  // --- layout.csl ---
  std::map<std::string, Export> layout_exports;
  void layout(const Tokens& tk) {
    const std::string_view f = kLayoutFile;
    removed_syntax(f, tk);
    ids(f, tk, true);
    bool get_params = false, rect = false, tile = false;
    for (size_t i = 0; i < tk.size(); ++i) {
      const Token& t = tk.t[i];
      if (t.kind != TokKind::builtin) continue;
      if (t.text == "@import_module" && tk.punct(i + 1, '(') && tk.is(i + 2, TokKind::string, "<memcpy/get_params>")) get_params = true;
      if (t.text == "@set_rectangle") rect = true;
      if (t.text == "@set_tile_code") {
        for (size_t j = i + 1; j < tk.close_of(i + 1) && j < tk.size(); ++j)
          if (tk.is(j, TokKind::string, "pe_program.csl")) tile = true;
      }
      if (t.text == "@export_name" && tk.punct(i + 1, '(') && i + 3 < tk.size() && tk.t[i + 2].kind == TokKind::string) {
        const std::string& name = tk.t[i + 2].text;
        size_t j = i + 4;
        if (tk.is(j, TokKind::ident, "fn")) {
          layout_exports[name] = {"fn", t.line};
        } else if (tk.punct(j, '[') && tk.punct(j + 1, '*') && tk.punct(j + 2, ']') && tk.ident(j + 3)) {
          layout_exports[name] = {tk.t[j + 3].text, t.line};
        } else {
          add(f, t.line, "exports", fmt::format("@export_name(\"{}\"): expected a [*]T array or fn()void", name));
        }
      }
    }
    if (!get_params) add(f, 0, "memcpy", "does not import <memcpy/get_params>");
    if (!rect) add(f, 0, "memcpy", "has no @set_rectangle");
    if (!tile) add(f, 0, "memcpy", "no @set_tile_code places \"pe_program.csl\"");
  }

  // --- pe_program.csl ---
  std::map<std::string, Export> pe_exports;
  std::map<std::string, int> task_ids;            // const name -> id
  std::map<std::string, std::string> bound;       // id const -> task
  std::map<std::string, std::pair<size_t, size_t>> fns, tasks;  // name -> body [open, close]
  std::set<std::string> comm_modules;             // consts importing <collectives_2d/pe>

  void pe(const Tokens& tk) {
    const std::string_view f = kPeFile;
    removed_syntax(f, tk);
    ids(f, tk, false);
    bool memcpy_param = false, memcpy_import = false;
    std::map<std::string, std::string> var_types;  // var name -> element type of [*]T
    std::map<int, std::string> id_owner;
    for (size_t i = 0; i < tk.size(); ++i) {
      const Token& t = tk.t[i];
      if (tk.is(i, TokKind::ident, "param") && tk.is(i + 1, TokKind::ident, "memcpy_params")) {
        if (tk.punct(i + 2, ';')) memcpy_param = true;
        else add(f, t.line, "memcpy", "declare `param memcpy_params;` without a type (SDK 2.10)");
      }
      if (tk.is(i, TokKind::ident, "const") && tk.ident(i + 1) && tk.punct(i + 2, '=') &&
          tk.is(i + 3, TokKind::builtin, "@import_module") && tk.punct(i + 4, '(') && i + 5 < tk.size()) {
        if (tk.is(i + 5, TokKind::string, "<memcpy/memcpy>")) memcpy_import = tk.punct(i + 6, ',') && tk.is(i + 7, TokKind::ident, "memcpy_params");
        if (tk.is(i + 5, TokKind::string, "<collectives_2d/pe>")) comm_modules.insert(tk.t[i + 1].text);
      }
      if (tk.is(i, TokKind::ident, "const") && tk.ident(i + 1) && tk.punct(i + 2, ':') && tk.is(i + 3, TokKind::ident, "local_task_id") &&
          tk.punct(i + 4, '=') && tk.is(i + 5, TokKind::builtin, "@get_local_task_id") && i + 7 < tk.size() &&
          tk.t[i + 7].kind == TokKind::number) {
        int id = std::atoi(tk.t[i + 7].text.c_str());
        const std::string& name = tk.t[i + 1].text;
        task_ids[name] = id;
        if (auto it = id_owner.find(id); it != id_owner.end())
          add(f, t.line, "ids", fmt::format("task ids {} and {} share id {}", it->second, name, id));
        id_owner[id] = name;
      }
      if (tk.is(i, TokKind::ident, "var") && tk.ident(i + 1) && tk.punct(i + 2, ':') && tk.punct(i + 3, '[') &&
          tk.punct(i + 4, '*') && tk.punct(i + 5, ']') && tk.ident(i + 6))
        var_types[tk.t[i + 1].text] = tk.t[i + 6].text;
      if ((tk.is(i, TokKind::ident, "fn") || tk.is(i, TokKind::ident, "task")) && tk.ident(i + 1) && tk.punct(i + 2, '(')) {
        size_t j = tk.close_of(i + 2);
        while (j < tk.size() && !tk.punct(j, '{') && !tk.punct(j, ';')) ++j;
        if (tk.punct(j, '{') && tk.close_of(j) < tk.size())
          (t.text == "fn" ? fns : tasks)[tk.t[i + 1].text] = {j, tk.close_of(j)};
      }
      if (tk.is(i, TokKind::builtin, "@bind_local_task") && tk.punct(i + 1, '(') && tk.ident(i + 2) && tk.punct(i + 3, ',') && tk.ident(i + 4))
        bound[tk.t[i + 4].text] = tk.t[i + 2].text;
      if (tk.is(i, TokKind::builtin, "@export_symbol") && tk.punct(i + 1, '(') && tk.ident(i + 2)) {
        const std::string& sym = tk.t[i + 2].text;
        if (tk.punct(i + 3, ')')) {
          pe_exports[sym] = {"fn", t.line};
        } else if (tk.punct(i + 3, ',') && i + 4 < tk.size() && tk.t[i + 4].kind == TokKind::string) {
          auto vt = var_types.find(sym);
          if (vt == var_types.end())
            add(f, t.line, "exports", fmt::format("@export_symbol({}): not declared as `var {}: [*]T` before it", sym, sym));
          pe_exports[tk.t[i + 4].text] = {vt == var_types.end() ? "?" : vt->second, t.line};
        }
      }
    }
    if (!memcpy_param) add(f, 0, "memcpy", "has no `param memcpy_params;`");
    if (!memcpy_import) add(f, 0, "memcpy", "does not import <memcpy/memcpy> with memcpy_params");
    for (const auto& [name, body] : tasks) {
      bool is_bound = false;
      for (const auto& [id, task] : bound) is_bound |= task == name;
      if (!is_bound) add(f, tk.t[body.first].line, "tasks", fmt::format("task {} is never bound with @bind_local_task", name));
    }
    for (const auto& [id, task] : bound) {
      if (!task_ids.count(id)) add(f, 0, "tasks", fmt::format("@bind_local_task({}, {}): {} is not a local_task_id constant", task, id, id));
      if (!tasks.count(task)) add(f, 0, "tasks", fmt::format("@bind_local_task({}, {}): no task {}", task, id, task));
    }
    // A task runs when activated; calling it like a function is not allowed.
    for (size_t i = 0; i + 1 < tk.size(); ++i) {
      if (!tk.ident(i) || !tk.punct(i + 1, '(') || !tasks.count(tk.t[i].text)) continue;
      bool definition = i > 0 && tk.is(i - 1, TokKind::ident, "task");
      bool member = i > 0 && tk.punct(i - 1, '.');
      if (!definition && !member)
        add(f, tk.t[i].line, "tasks", fmt::format("task {} is called directly; tasks are only @activate'd", tk.t[i].text));
    }
  }

  // --- unblock reachability ---
  enum class Flow { reaches, exits, falls_through };
  const Tokens* pe_tokens = nullptr;
  std::set<std::string> visiting;
  int depth = 0;
  bool too_deep = false;

  // The task bound to a task-id constant, or "".
  std::string task_for(const std::string& id) const {
    auto it = bound.find(id);
    return it == bound.end() ? "" : it->second;
  }

  bool routine_reaches(const std::string& name) {
    auto body = fns.count(name) ? fns.at(name) : tasks.count(name) ? tasks.at(name) : std::pair<size_t, size_t>{0, 0};
    if (body.second == 0 || visiting.count(name)) return false;
    if (++depth > kMaxNesting) {
      too_deep = true;
      --depth;
      return false;
    }
    visiting.insert(name);
    bool ok = block(body.first + 1, body.second) == Flow::reaches;
    visiting.erase(name);
    --depth;
    return ok;
  }

  // A simple statement [b, e): does running it guarantee unblock_cmd_stream() is reached?
  bool statement_reaches(size_t b, size_t e) {
    const Tokens& tk = *pe_tokens;
    for (size_t i = b; i < e; ++i) {
      if (tk.is(i, TokKind::ident, "unblock_cmd_stream") && tk.punct(i + 1, '(')) return true;
      if (tk.is(i, TokKind::builtin, "@activate") && tk.punct(i + 1, '(') && tk.ident(i + 2)) {
        std::string task = task_for(tk.t[i + 2].text);
        if (!task.empty() && routine_reaches(task)) return true;
      }
      // comm.op(args..., callback): the callback task runs when the collective completes.
      if (tk.ident(i) && comm_modules.count(tk.t[i].text) && tk.punct(i + 1, '.') && tk.ident(i + 2) && tk.punct(i + 3, '(')) {
        size_t close = tk.close_of(i + 3);
        if (close < e && tk.ident(close - 1) && tk.punct(close - 2, ',')) {
          std::string task = task_for(tk.t[close - 1].text);
          if (!task.empty() && routine_reaches(task)) return true;
        }
      }
      if (tk.ident(i) && tk.punct(i + 1, '(') && fns.count(tk.t[i].text) && !(i > b && tk.punct(i - 1, '.')) &&
          routine_reaches(tk.t[i].text))
        return true;
    }
    return false;
  }

  // Statements in [b, e) (the inside of a block).
  Flow block(size_t b, size_t e) {
    const Tokens& tk = *pe_tokens;
    if (++depth > kMaxNesting) {
      too_deep = true;
      --depth;
      return Flow::exits;
    }
    Flow result = Flow::falls_through;
    size_t i = b;
    while (i < e && result == Flow::falls_through) {
      if (tk.is(i, TokKind::ident, "if")) {
        result = if_chain(i, e, &i);
      } else if (tk.is(i, TokKind::ident, "for") || tk.is(i, TokKind::ident, "while")) {
        // The body may run zero times: a loop never guarantees anything, but a return inside it exits.
        size_t j = i + 1;
        while (j < e && !tk.punct(j, '{')) j = tk.punct(j, '(') ? std::min(tk.close_of(j), e) + 1 : j + 1;
        size_t close = std::min(tk.close_of(j), e);
        if (j < e && block(j + 1, close) == Flow::exits) result = Flow::exits;
        i = close + 1;
      } else if (tk.punct(i, '{')) {
        size_t close = std::min(tk.close_of(i), e);
        result = block(i + 1, close);
        i = close + 1;
      } else {
        size_t j = i;
        while (j < e && !tk.punct(j, ';')) j = (tk.punct(j, '(') || tk.punct(j, '[') || tk.punct(j, '{')) ? std::min(tk.close_of(j), e) + 1 : j + 1;
        bool is_return = tk.is(i, TokKind::ident, "return");
        if (statement_reaches(i, std::min(j, e))) result = Flow::reaches;
        else if (is_return) result = Flow::exits;
        i = j + 1;
      }
    }
    --depth;
    return result;
  }

  // if (...) {..} [else if (...) {..}]* [else {..}]; *next is set past the chain.
  Flow if_chain(size_t i, size_t e, size_t* next) {
    const Tokens& tk = *pe_tokens;
    size_t cond = i + 1;
    size_t j = tk.punct(cond, '(') ? std::min(tk.close_of(cond), e) + 1 : cond;
    if (tk.punct(j, '|')) {  // optional capture |x|
      ++j;
      while (j < e && !tk.punct(j, '|')) ++j;
      ++j;
    }
    if (!tk.punct(j, '{')) {  // braceless body: treat as one statement that guarantees nothing
      while (j < e && !tk.punct(j, ';')) ++j;
      *next = j + 1;
      return Flow::falls_through;
    }
    size_t close = std::min(tk.close_of(j), e);
    Flow then_flow = block(j + 1, close);
    Flow else_flow = Flow::falls_through;
    *next = close + 1;
    if (tk.is(*next, TokKind::ident, "else")) {
      if (tk.is(*next + 1, TokKind::ident, "if")) {
        else_flow = if_chain(*next + 1, e, next);
      } else if (tk.punct(*next + 1, '{')) {
        size_t c2 = std::min(tk.close_of(*next + 1), e);
        else_flow = block(*next + 2, c2);
        *next = c2 + 1;
      }
    }
    if (then_flow == Flow::reaches && else_flow == Flow::reaches) return Flow::reaches;
    if (then_flow == Flow::exits || else_flow == Flow::exits) return Flow::exits;
    return Flow::falls_through;
  }

  void unblock(const Tokens& tk) {
    pe_tokens = &tk;
    for (const auto& [name, ex] : pe_exports) {
      if (ex.element != "fn") continue;
      if (!fns.count(name)) {
        add(kPeFile, ex.line, "unblock", fmt::format("exported function {} has no body here", name));
        continue;
      }
      too_deep = false;
      if (!routine_reaches(name))
        add(kPeFile, tk.t[fns.at(name).first].line, "unblock",
            fmt::format("{}: some path on some PE never reaches unblock_cmd_stream(); the host would wait forever", name));
      if (too_deep) add(kPeFile, 0, "unblock", "control flow nested too deeply to follow");
    }
  }

  // --- cross-file: exports, run.py, compile.sh ---
  static std::vector<std::pair<std::string, int>> py_calls(std::string_view text, std::string_view call) {
    std::vector<std::pair<std::string, int>> out;
    std::string needle = std::string(call) + "(\"";
    for (size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) {
      size_t start = at + needle.size(), end = text.find('"', start);
      if (end == std::string_view::npos || end - start > 64) continue;
      int line = 1 + int(std::count(text.begin(), text.begin() + long(at), '\n'));
      out.push_back({std::string(text.substr(start, end - start)), line});
    }
    return out;
  }

  void exports(const BundleSources& src) {
    static const std::set<std::string> kAllowed = {"f32", "u32", "i32", "f16", "u16", "i16"};
    for (const auto& [name, ex] : layout_exports)
      if (ex.element != "fn" && !kAllowed.count(ex.element))
        add(kLayoutFile, ex.line, "exports", fmt::format("\"{}\" exports [*]{}: only 16/32-bit element types may be exported", name, ex.element));
    for (const auto& [name, ex] : pe_exports)
      if (ex.element != "fn" && ex.element != "?" && !kAllowed.count(ex.element))
        add(kPeFile, ex.line, "exports", fmt::format("\"{}\" exports [*]{}: only 16/32-bit element types may be exported", name, ex.element));
    for (const auto& [name, ex] : layout_exports) {
      auto it = pe_exports.find(name);
      if (it == pe_exports.end()) add(kLayoutFile, ex.line, "exports", fmt::format("\"{}\" is exported by the layout but not by pe_program.csl", name));
      else if (it->second.element != ex.element && it->second.element != "?")
        add(kLayoutFile, ex.line, "exports", fmt::format("\"{}\": layout exports {}, pe_program.csl {}", name, ex.element, it->second.element));
    }
    for (const auto& [name, ex] : pe_exports)
      if (!layout_exports.count(name)) add(kPeFile, ex.line, "exports", fmt::format("\"{}\" is exported by pe_program.csl but not named in layout.csl", name));

    std::set<std::string> used;
    for (const auto& [name, line] : py_calls(src.run_py, "get_id")) {
      used.insert(name);
      auto it = layout_exports.find(name);
      if (it == layout_exports.end() || it->second.element == "fn")
        add(kRunFile, line, "exports", fmt::format("get_id(\"{}\"): no such exported array in layout.csl", name));
    }
    for (const auto& [name, ex] : layout_exports)
      if (ex.element != "fn" && !used.count(name)) add(kRunFile, 0, "exports", fmt::format("never copies exported array \"{}\"", name));
    auto launches = py_calls(src.run_py, "launch");
    if (launches.empty()) add(kRunFile, 0, "exports", "launches no function");
    for (const auto& [name, line] : launches) {
      auto it = layout_exports.find(name);
      if (it == layout_exports.end() || it->second.element != "fn")
        add(kRunFile, line, "exports", fmt::format("launch(\"{}\"): not an exported function of layout.csl", name));
    }
    for (const char* flag : {"cslc ", "--arch=wse3", "--fabric-dims=", "--fabric-offsets=", "--params=", "--memcpy", "--channels=1", "layout.csl"})
      if (src.compile_sh.find(flag) == std::string::npos) add(kCompileFile, 0, "compile", fmt::format("the cslc line lacks {}", flag));
  }
};

}  // namespace

std::vector<CslFinding> check_csl(const BundleSources& src) {
  Checker c;
  const std::array<std::pair<std::string_view, const std::string*>, 4> files = {
      {{kLayoutFile, &src.layout}, {kPeFile, &src.pe}, {kRunFile, &src.run_py}, {kCompileFile, &src.compile_sh}}};
  for (const auto& [name, text] : files) {
    if (text->empty()) c.add(name, 0, "present", "missing or empty");
    if (text->size() > kMaxSource) c.add(name, 0, "present", fmt::format("{} bytes: larger than any bundle blueshift writes", text->size()));
  }
  if (!c.findings.empty()) return c.findings;
  std::vector<Token> layout_tokens = lex_csl(src.layout), pe_tokens = lex_csl(src.pe);
  Tokens layout(layout_tokens), pe(pe_tokens);
  c.layout(layout);
  c.pe(pe);
  c.unblock(pe);
  c.exports(src);
  return c.findings;
}

}  // namespace bs::csl
