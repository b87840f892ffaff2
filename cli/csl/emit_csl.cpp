// layout.csl and pe_program.csl for the kernel plans (Cerebras SDK 2.10, WSE-3).
//
// SDK 2.10 rules followed here and enforced by csl_check.cpp: `param memcpy_params;` (no
// comptime_struct), tasks bound with @bind_local_task and only ever @activate'd (directly or as a
// collectives callback), exported arrays of 32-bit element types, colors 0..20, task ids clear of the
// collectives' ids, and every path from the launched function ending in unblock_cmd_stream().
#include <fmt/format.h>

#include "cli/csl/emit.h"
#include "runtime/base/error.h"

namespace bs::csl {

std::string fill_template(std::string_view tmpl, const std::vector<std::pair<std::string, std::string>>& vars) {
  std::string out;
  out.reserve(tmpl.size() * 2);
  size_t i = 0;
  while (i < tmpl.size()) {
    size_t at = tmpl.find("@{", i);
    if (at == std::string_view::npos) {
      out.append(tmpl.substr(i));
      break;
    }
    out.append(tmpl.substr(i, at - i));
    size_t end = tmpl.find('}', at);
    if (end == std::string_view::npos) throw Error("csl template: unterminated @{ marker", ErrorKind::internal);
    std::string_view key = tmpl.substr(at + 2, end - at - 2);
    const std::string* value = nullptr;
    for (const auto& [k, v] : vars)
      if (k == key) value = &v;
    if (!value) throw Error(fmt::format("csl template: no value for @{{{}}}", key), ErrorKind::internal);
    out += *value;
    i = end + 1;
  }
  return out;
}

std::string csl_f32(float v) {
  // fmt prints the shortest text that reads back as the same f32; CSL parses float literals like Zig.
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string compile_params(const Plan& p) {
  std::string s = fmt::format("width:{},height:{},tile_width:{},dim:{}", p.width, p.height, p.tile_width, p.dim);
  if (p.kind == KernelKind::lm_head) s += fmt::format(",rows_per_pe:{}", p.rows_per_pe);
  return s;
}

namespace {

std::vector<std::pair<std::string, std::string>> plan_vars(const Plan& p) {
  return {
      {"kernel", std::string(p.kernel())},
      {"width", std::to_string(p.width)},
      {"height", std::to_string(p.height)},
      {"dim", std::to_string(p.dim)},
      {"padded_dim", std::to_string(p.padded_dim())},
      {"tile_width", std::to_string(p.tile_width)},
      {"tokens", std::to_string(p.tokens)},
      {"rows_per_pe", std::to_string(p.rows_per_pe)},
      {"padded_tokens", std::to_string(p.padded_tokens())},
      {"norm_eps", csl_f32(p.norm_eps)},
      {"norm_offset", p.norm_offset ? "1.0" : "0.0"},
      {"sumsq_id", std::to_string(p.tasks.sumsq)},
      {"share_id", std::to_string(p.tasks.share)},
      {"apply_id", std::to_string(p.tasks.apply)},
      {"done_id", std::to_string(p.tasks.done)},
      {"x_color_0", std::to_string(kC2dXColors[0])},
      {"x_color_1", std::to_string(kC2dXColors[1])},
      {"y_color_0", std::to_string(kC2dYColors[0])},
      {"y_color_1", std::to_string(kC2dYColors[1])},
      {"x_entry_0", std::to_string(kC2dXEntry[0])},
      {"x_entry_1", std::to_string(kC2dXEntry[1])},
      {"y_entry_0", std::to_string(kC2dYEntry[0])},
      {"y_entry_1", std::to_string(kC2dYEntry[1])},
  };
}

// The ID map is the same for both plans; it is written out so a reader can audit it by eye.
constexpr std::string_view kIdMap = R"(// ID map (colors and local task ids; ids 21-31 belong to memcpy and stay untouched):
//    @{x_color_0} c2d_x_color_0     @{x_entry_0} c2d_x_entry_0     @{sumsq_id} sumsq_task_id
//    @{x_color_1} c2d_x_color_1     @{x_entry_1} c2d_x_entry_1     @{share_id} share_task_id
//    @{y_color_0} c2d_y_color_0     @{y_entry_0} c2d_y_entry_0    @{apply_id} apply_task_id
//    @{y_color_1} c2d_y_color_1     @{y_entry_1} c2d_y_entry_1    @{done_id} done_task_id
)";

constexpr std::string_view kLayoutBody = R"(
const memcpy = @import_module("<memcpy/get_params>", .{ .width = width, .height = height });
const c2d = @import_module("<collectives_2d/params>");

layout {
  @set_rectangle(width, height);

  var px: u16 = 0;
  while (px < width) : (px += 1) {
    const memcpy_params = memcpy.get_params(px);
    var py: u16 = 0;
    while (py < height) : (py += 1) {
      const c2d_params = c2d.get_params(px, py, .{
        .x_colors      = .{ @get_color(@{x_color_0}),         @get_color(@{x_color_1}) },
        .x_entrypoints = .{ @get_local_task_id(@{x_entry_0}), @get_local_task_id(@{x_entry_1}) },
        .y_colors      = .{ @get_color(@{y_color_0}),         @get_color(@{y_color_1}) },
        .y_entrypoints = .{ @get_local_task_id(@{y_entry_0}), @get_local_task_id(@{y_entry_1}) },
      });
      @set_tile_code(px, py, "pe_program.csl", .{
        .memcpy_params = memcpy_params,
        .c2d_params = c2d_params,
@{tile_args}      });
    }
  }

  // Host-visible symbols: 32-bit element types only (f16 data travels packed in u32).
@{exports}  @export_name("compute", fn()void);
}
)";

constexpr std::string_view kLmHeadLayoutHead = R"(// lm_head: final RMSNorm + width-tiled lm_head GEMV for @{model}.
// Generated by `blueshift export-csl` for Cerebras SDK 2.10 (WSE-3); build with ./compile.sh,
// run with `cs_python run.py`. The numbers below are also in proof.json under "csl".
//
// The plan:
//   - the hidden state (dim @{dim}) is split into `width` = @{width} column tiles of `tile_width` = @{tile_width}
//     values, zero-padded to @{padded_dim};
//   - the @{tokens} selected tokens are split into `height` = @{height} row bands of `rows_per_pe` = @{rows_per_pe}
//     head rows (zero rows pad the last band to height * rows_per_pe = @{padded_tokens});
//   - PE (px, py) holds head rows [py * rows_per_pe, +rows_per_pe) x hidden [px * tile_width, +tile_width)
//     as f16 and accumulates its partial dot products in f32;
//   - collectives_2d broadcasts the hidden slice down each column, and reduce_fadds sums the squares
//     and then the partial logits along each row into column 0, where run.py reads the logits.
//
)";

constexpr std::string_view kRmsNormLayoutHead = R"(// rmsnorm: standalone final RMSNorm for @{model}, width-tiled over one row of PEs.
// Generated by `blueshift export-csl --kernel rmsnorm` for Cerebras SDK 2.10 (WSE-3); build with
// ./compile.sh, run with `cs_python run.py`. The numbers below are also in proof.json under "csl".
//
// The plan:
//   - the hidden state (dim @{dim}) is split into `width` = @{width} tiles of `tile_width` = @{tile_width} values,
//     zero-padded to @{padded_dim}; PE px holds hidden [px * tile_width, +tile_width);
//   - each PE sums its squares in f32, reduce_fadds sums the partials into PE 0, which broadcasts the
//     total back along the row; every PE then writes its normalized slice (f32) for run.py to read.
//
)";

constexpr std::string_view kParams = R"(
param width: u16;        // PE columns: tiles of the hidden dimension
param height: u16;       // PE rows@{height_note}
param tile_width: u16;   // hidden values per PE (even: f16 pairs pack into u32 for memcpy)
param dim: u16;          // true hidden size; the RMSNorm mean divides by this, not the padded size
@{rows_param}
// Model constants written in by the exporter (compile.sh's --params carries the integer shape only).
const norm_eps: f32 = @{norm_eps};
const norm_offset: f32 = @{norm_offset};  // 1.0 when the model's RMSNorm scales by (1 + w)

comptime {
  @comptime_assert(tile_width % 2 == 0);
  @comptime_assert(@as(u32, width) * @as(u32, tile_width) >= @as(u32, dim));
}
)";

}  // namespace

std::string emit_layout(const Plan& p, const EmitNotes& notes) {
  auto vars = plan_vars(p);
  vars.push_back({"model", notes.model});
  const bool head = p.kind == KernelKind::lm_head;
  vars.push_back({"height_note", head ? ": bands of selected tokens" : ": one row for this plan"});
  vars.push_back({"rows_param", head ? "param rows_per_pe: u16;  // selected tokens (head rows) per PE row\n" : ""});
  std::string tile_args =
      "        .tile_width = tile_width,\n"
      "        .dim = dim,\n"
      "        .norm_eps = norm_eps,\n"
      "        .norm_offset = norm_offset,\n";
  if (head) tile_args += "        .rows_per_pe = rows_per_pe,\n";
  vars.push_back({"tile_args", tile_args});
  std::string exports;
  for (const Transfer& t : plan_transfers(p))
    exports += fmt::format("  @export_name(\"{}\", [*]{}, true);\n", t.symbol, t.element);
  vars.push_back({"exports", exports});
  std::string text(head ? kLmHeadLayoutHead : kRmsNormLayoutHead);
  text += kIdMap;
  text += kParams;
  text += kLayoutBody;
  return fill_template(text, vars);
}

namespace {

constexpr std::string_view kPeCommon = R"(
param memcpy_params;
param c2d_params;

param tile_width: u16;
param dim: u16;
param norm_eps: f32;
param norm_offset: f32;
@{rows_param}
// Local tasks (see the ID map in layout.csl). Each one is only ever activated: by @activate or as
// the completion callback of a collectives_2d call.
const sumsq_task_id: local_task_id = @get_local_task_id(@{sumsq_id});
const share_task_id: local_task_id = @get_local_task_id(@{share_id});
const apply_task_id: local_task_id = @get_local_task_id(@{apply_id});
const done_task_id: local_task_id = @get_local_task_id(@{done_id});

const sys_mod = @import_module("<memcpy/memcpy>", memcpy_params);
const math = @import_module("<math>");

// memcpy owns queues 0 and 1; each collectives_2d axis gets its own queues and DSRs.
const row_comm = @import_module("<collectives_2d/pe>", .{
    .dim_params = c2d_params.x,
    .queues = [2]u16{ 2, 4 },
    .dest_dsr_ids = [1]u16{ 1 },
    .src0_dsr_ids = [1]u16{ 1 },
    .src1_dsr_ids = [1]u16{ 1 },
});
@{col_comm}
// This PE's slice of the hidden state before the final norm.
var hidden = @zeros([tile_width]f32);
// This PE's slice of the final norm weight (as stored: the (1 + w) offset is applied below).
var norm_weight = @zeros([tile_width]f32);
var sumsq_partial = @zeros([1]f32);
// Sum of squares of the whole hidden state, once the row reduction and broadcast are done.
var sumsq_total = @zeros([1]f32);
)";

constexpr std::string_view kColComm = R"(const col_comm = @import_module("<collectives_2d/pe>", .{
    .dim_params = c2d_params.y,
    .queues = [2]u16{ 3, 5 },
    .dest_dsr_ids = [1]u16{ 2 },
    .src0_dsr_ids = [1]u16{ 2 },
    .src1_dsr_ids = [1]u16{ 2 },
});
)";

// Both plans start the same way: the sum of squares of the slice, summed along the row into
// column 0 and handed back to every PE of the row.
constexpr std::string_view kNormTasks = R"(
task sumsq() void {
  // f32 accumulation in index order; zero padding adds nothing.
  var acc: f32 = 0.0;
  for (@range(u16, tile_width)) |d| {
    acc += hidden[d] * hidden[d];
  }
  sumsq_partial[0] = acc;
  row_comm.reduce_fadds(0, @ptrcast([*]f32, &sumsq_partial), @ptrcast([*]f32, &sumsq_total), 1, share_task_id);
}

task share() void {
  row_comm.broadcast(0, @ptrcast([*]u32, &sumsq_total), 1, apply_task_id);
}

fn inv_rms() f32 {
  return 1.0 / math.sqrt_f32(sumsq_total[0] / @as(f32, dim) + norm_eps);
}
)";

constexpr std::string_view kLmHeadPe = R"(// lm_head PE program: one PE's share of the final RMSNorm and the lm_head GEMV (plan: layout.csl).
//
// Every PE runs every step; each step is a task activated by the previous step's completion:
//   compute  the hidden slice is broadcast from row 0 down the column             -> sumsq
//   sumsq    f32 sum of squares of the slice, reduce_fadds along the row to column 0 -> share
//   share    column 0 broadcasts the total back along the row                      -> apply
//   apply    x = f16(h * inv_rms * (norm_offset + w)); f32 partial logits of the PE's head rows;
//            reduce_fadds along the row to column 0                                 -> done
//   done     unblock_cmd_stream(): run.py may copy the logits back
// Collective callbacks fire on every PE of the row or column, so every PE reaches done.
@{common}
// Head rows of this PE's tokens, row-major (row r starts at r * tile_width): the f16 operand.
var head_tile = @zeros([rows_per_pe * tile_width]f16);
// The normalized hidden slice rounded to f16: the GEMV's other operand.
var x16 = @zeros([tile_width]f16);
var partial_logits = @zeros([rows_per_pe]f32);
// Column 0 holds the logits of its band of tokens after the last row reduction.
var logits = @zeros([rows_per_pe]f32);

var hidden_ptr: [*]f32 = &hidden;
var norm_weight_ptr: [*]f32 = &norm_weight;
var head_tile_ptr: [*]u32 = @ptrcast([*]u32, &head_tile);
var logits_ptr: [*]f32 = &logits;

// Launched by run.py once the inputs are in place. Row 0 holds the hidden slice the host wrote.
fn compute() void {
  row_comm.init();
  col_comm.init();
  col_comm.broadcast(0, @ptrcast([*]u32, &hidden), tile_width, sumsq_task_id);
}
@{norm_tasks}
task apply() void {
  const scale = inv_rms();
  for (@range(u16, tile_width)) |d| {
    x16[d] = @as(f16, hidden[d] * scale * (norm_offset + norm_weight[d]));
  }
  // The product of two f16 values is exact in f32, so each step rounds once (in the add) whether
  // or not the compiler fuses it; the host emulation in proof.json relies on this.
  for (@range(u16, rows_per_pe)) |r| {
    const base = r * tile_width;
    var acc: f32 = 0.0;
    for (@range(u16, tile_width)) |d| {
      acc += @as(f32, x16[d]) * @as(f32, head_tile[base + d]);
    }
    partial_logits[r] = acc;
  }
  row_comm.reduce_fadds(0, @ptrcast([*]f32, &partial_logits), @ptrcast([*]f32, &logits), rows_per_pe, done_task_id);
}

task done() void {
  sys_mod.unblock_cmd_stream();
}

comptime {
  @bind_local_task(sumsq, sumsq_task_id);
  @bind_local_task(share, share_task_id);
  @bind_local_task(apply, apply_task_id);
  @bind_local_task(done, done_task_id);

  @export_symbol(hidden_ptr, "hidden");
  @export_symbol(norm_weight_ptr, "norm_weight");
  @export_symbol(head_tile_ptr, "head_tile");
  @export_symbol(logits_ptr, "logits");
  @export_symbol(compute);
}
)";

constexpr std::string_view kRmsNormPe = R"(// rmsnorm PE program: one PE's slice of the final RMSNorm (plan: layout.csl).
//
// Every PE runs every step; each step is a task activated by the previous step's completion:
//   compute  (the host wrote this PE's slice)                                      -> sumsq
//   sumsq    f32 sum of squares of the slice, reduce_fadds along the row to PE 0    -> share
//   share    PE 0 broadcasts the total back along the row                           -> apply
//   apply    normed = h * inv_rms * (norm_offset + w), in f32                        -> done
//   done     unblock_cmd_stream(): run.py may copy the normalized slices back
@{common}
// This PE's slice of the normalized hidden state.
var normed = @zeros([tile_width]f32);

var hidden_ptr: [*]f32 = &hidden;
var norm_weight_ptr: [*]f32 = &norm_weight;
var normed_ptr: [*]f32 = &normed;

// Launched by run.py once the inputs are in place.
fn compute() void {
  row_comm.init();
  @activate(sumsq_task_id);
}
@{norm_tasks}
task apply() void {
  const scale = inv_rms();
  for (@range(u16, tile_width)) |d| {
    normed[d] = hidden[d] * scale * (norm_offset + norm_weight[d]);
  }
  @activate(done_task_id);
}

task done() void {
  sys_mod.unblock_cmd_stream();
}

comptime {
  @bind_local_task(sumsq, sumsq_task_id);
  @bind_local_task(share, share_task_id);
  @bind_local_task(apply, apply_task_id);
  @bind_local_task(done, done_task_id);

  @export_symbol(hidden_ptr, "hidden");
  @export_symbol(norm_weight_ptr, "norm_weight");
  @export_symbol(normed_ptr, "normed");
  @export_symbol(compute);
}
)";

}  // namespace

std::string emit_pe_program(const Plan& p) {
  auto vars = plan_vars(p);
  const bool head = p.kind == KernelKind::lm_head;
  vars.push_back({"rows_param", head ? "param rows_per_pe: u16;\n" : ""});
  vars.push_back({"col_comm", head ? std::string(kColComm) : ""});
  std::string common = fill_template(kPeCommon, vars);
  vars.push_back({"common", common});
  vars.push_back({"norm_tasks", std::string(kNormTasks)});
  return fill_template(head ? kLmHeadPe : kRmsNormPe, vars);
}

}  // namespace bs::csl
