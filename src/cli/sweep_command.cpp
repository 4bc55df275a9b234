// trnsim sweep EXPERIMENT.json [--tp LIST] ... [--vary PATH=V1,V2]...: plans and experiment
// variants side by side (explore/sweep.hpp); trnsim merge PARTS...: the shards of one sweep.
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "command.hpp"
#include "output_file.hpp"
#include "sweep_output.hpp"
#include "trnsim/config/json_file.hpp"
#include "trnsim/enum_names.hpp"
#include "trnsim/error.hpp"
#include "trnsim/explore/sweep.hpp"
#include "trnsim/explore/sweep_json.hpp"

namespace trnsim::cli {

namespace {

struct SweepOptions {
  std::string experiment;
  explore::SweepAxes axes;  // the integer lists and --set bind here; the rest is parsed into it
  std::vector<std::string> recompute, sequence_parallel, vary;
  std::vector<std::int64_t> cp;  // --cp: a --vary axis on parallelism.cp (appended after the others)
  std::string network;
  int threads = 0;
  bool search = false;
  bool no_fast_forward = false;
  std::string shard;
  SweepOutputs outputs;
  MemoryLimitOption memory;
};

// "V1,V2,...": split at the commas outside brackets, braces and quotes, so a JSON value may hold
// commas ("[1,2]", "{\"a\":1,\"b\":2}").
std::vector<std::string> split_values(const std::string& text) {
  std::vector<std::string> out(1);
  int depth = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '\\' && i + 1 < text.size()) {
      out.back() += c;
      out.back() += text[++i];
      continue;
    }
    if (c == '"') quoted = !quoted;
    if (!quoted && (c == '[' || c == '{')) ++depth;
    if (!quoted && (c == ']' || c == '}')) --depth;
    if (!quoted && depth == 0 && c == ',') {
      out.emplace_back();
      continue;
    }
    out.back() += c;
  }
  return out;
}

explore::VaryAxis parse_vary(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw InputError(fmt::format("--vary: expected PATH=V1,V2,... (e.g. cluster.count=16,32), found \"{}\"", text));
  explore::VaryAxis axis{text.substr(0, eq), split_values(text.substr(eq + 1))};
  for (const std::string& v : axis.values)
    if (v.empty()) throw InputError(fmt::format("--vary {}: an empty value in \"{}\"", axis.path, text));
  return axis;
}

// "I/N": two decimal integers, nothing else (no sign, space or overflow), 0 <= I < N.
std::pair<int, int> parse_shard(const std::string& text) {
  const auto fail = [&text]() -> std::pair<int, int> {
    throw InputError(fmt::format("--shard: expected I/N with 0 <= I < N (e.g. 0/4), found \"{}\"", text));
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) return fail();
  const auto number = [&](std::size_t from, std::size_t to, int& out) {
    const char* first = text.data() + from;
    const char* last = text.data() + to;
    const auto [end, error] = std::from_chars(first, last, out);
    return first != last && std::isdigit(static_cast<unsigned char>(*first)) && error == std::errc() && end == last;
  };
  int i = 0, n = 0;
  if (!number(0, slash, i) || !number(slash + 1, text.size(), n) || n < 1 || i >= n) return fail();
  return {i, n};
}

bool parse_switch(const std::string& text) {
  if (text == "on" || text == "true") return true;
  if (text == "off" || text == "false") return false;
  throw InputError(fmt::format("--sp: expected on, off, true or false, found \"{}\"", text));
}

// Plans done, rate and time left on stderr, rewritten in place; only on a terminal, not with -q,
// and only once the sweep has run a second.
class ProgressBar {
 public:
  ProgressBar() : enabled_(isatty(fileno(stderr)) != 0 && spdlog::get_level() <= spdlog::level::info) {}
  void operator()(std::size_t done, std::size_t total) {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < 1) return;  // under a second (finished or not): nothing shown yet
    const double rate = static_cast<double>(done) / elapsed;
    const double left = rate > 0 ? static_cast<double>(total - done) / rate : 0;
    if (done == total && ended_) return;
    fmt::print(stderr, "\r{} / {} plans, {:.1f} plans/s, {:.0f} s left   ", done, total, rate, left);
    shown_ = true;
    ended_ = done == total;
    if (ended_) fmt::print(stderr, "\n");
  }
  // A sweep that stops on an error leaves its line ended, so the message starts on its own line.
  ~ProgressBar() {
    if (shown_ && !ended_) fmt::print(stderr, "\n");
  }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

 private:
  bool enabled_;
  bool shown_ = false, ended_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

int run_sweep_command(const SweepOptions& o) {
  explore::SweepAxes axes = o.axes;
  for (const std::string& r : o.recompute) {
    const auto mode = workload::parse_recompute(r);
    if (!mode) throw InputError(fmt::format("--recompute: expected {}, found \"{}\"", workload::kRecomputeExpected, r));
    axes.recompute.push_back(*mode);
  }
  for (const std::string& s : o.sequence_parallel) axes.sequence_parallel.push_back(parse_switch(s));
  for (const std::string& v : o.vary) axes.vary.push_back(parse_vary(v));
  if (!o.cp.empty()) {
    explore::VaryAxis cp{"parallelism.cp", {}};
    for (const std::int64_t v : o.cp) {
      if (v < 1) throw InputError(fmt::format("--cp: expected integers in [1, 1048576], found {}", v));
      cp.values.push_back(std::to_string(v));
    }
    for (const explore::VaryAxis& v : axes.vary)
      if (v.path == cp.path) throw InputError("--cp: parallelism.cp is also given by --vary; give it once");
    axes.vary.push_back(std::move(cp));
  }
  std::vector<std::string> vary_paths;
  for (const explore::VaryAxis& v : axes.vary) vary_paths.push_back(v.path);
  check_sweep_outputs(o.outputs, vary_paths);
  if (!o.network.empty()) axes.overrides.push_back("network.model=" + o.network);

  explore::SweepOptions run;
  run.fast_forward = !o.no_fast_forward;
  run.threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  if (!o.shard.empty()) std::tie(run.shard, run.shards) = parse_shard(o.shard);
  run.search = o.search;
  run.keep = o.outputs.top;
  run.max_memory_bytes = o.memory.bytes();
  auto bar = std::make_shared<ProgressBar>();
  run.progress = [bar](std::size_t done, std::size_t total) { (*bar)(done, total); };
  const explore::SweepResult result = explore::run_sweep(config::read_json_file(o.experiment), o.experiment, axes, run);
  return write_sweep_outputs(result, o.outputs);
}

struct MergeOptions {
  std::vector<std::string> parts;
  SweepOutputs outputs;
};

int run_merge_command(const MergeOptions& o) {
  check_output_paths({o.outputs.json_path, o.outputs.csv_path, o.outputs.html_path});
  std::vector<explore::SweepResult> parts;
  // Parts are trnsim's own output, up to gigabytes: a key given twice is not looked for (DuplicateKeys).
  for (const std::string& p : o.parts)
    parts.push_back(explore::sweep_from_json(config::read_json_file(p, config::DuplicateKeys::LastWins), p));
  return write_sweep_outputs(explore::merge_shards(std::move(parts), o.parts), o.outputs);
}

void add_output_options(CLI::App* cmd, SweepOutputs& outputs) {
  cmd->add_option("--top", outputs.top, "How many of the fastest plans to print (default 10)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--csv", outputs.csv_path,
                  "Also write every plan, valid or not, one row each with its status and reason, to this CSV file");
  cmd->add_option("--json", outputs.json_path,
                  "Also write the sweep (or this shard of it) as JSON to this file: what `trnsim merge` reads");
  CLI::Option* html = cmd->add_option(
      "--html", outputs.html_path,
      "Also write a self-contained HTML page to this file: a heat map of the best plan over two axes, the ranked "
      "plans and the pruned ones with their reason");
  cmd->add_option("--axes", outputs.axes,
                  "The heat map's axes X,Y (X across, Y down), two of tp, pp, dp, micro_batch (mb), virtual_stages (v), "
                  "recompute, zero, sp or a --vary path (default: the first two of that order, --vary paths last, that "
                  "take more than one value)")
      ->needs(html);
  cmd->add_option("--metric", outputs.metric,
                  "What colours the heat map: step_time (default; each cell the fastest plan) or mfu (the highest MFU)")
      ->check(CLI::IsMember({"step_time", "mfu"}))
      ->needs(html);
}

}  // namespace

void add_sweep_command(CLI::App& app, Action& action) {
  auto [cmd, o] = add_subcommand<SweepOptions>(
      app, action, "sweep",
      "Simulate the product of plan values (and of --vary values) of an experiment and rank the plans by step time",
      run_sweep_command);
  cmd->add_option("experiment", o->experiment, "Experiment file (JSON): the fields not swept")->required();
  const auto list = [cmd = cmd](const char* name, std::vector<std::int64_t>& into, const char* what, std::int64_t least = 1) {
    // The range check runs on the text, before CLI11 converts (and would clamp) a huge value.
    cmd->add_option(name, into, what)->delimiter(',')->check(integers_in(least, std::int64_t{1} << 20));
  };
  list("--tp", o->axes.tp, "Tensor-parallel degrees, e.g. 4,8,16");
  list("--pp", o->axes.pp, "Pipeline-parallel degrees");
  list("--dp", o->axes.dp, "Data-parallel degrees (default: derived, the cluster's ranks / (tp x pp x cp))");
  list("--micro-batch", o->axes.micro_batch, "Sequences per micro-batch");
  list("--virtual-stages", o->axes.virtual_stages, "Model chunks per pipeline rank (above 1: 1f1b-interleaved)");
  list("--zero", o->axes.zero, "ZeRO stages: 0, 1, 2, 3 (FSDP)", 0);
  list("--cp", o->cp,
       "Context-parallel degrees: a --vary axis on parallelism.cp, after the --vary axes (columns, CSV and JSON "
       "name it parallelism.cp)");
  cmd->add_option("--recompute", o->recompute,
                  "Activation recompute modes: none, selective, selective-op, full, full-every-N (N from 2 to 1048576; "
                  "N = 1 is full, spelled full)")
      ->delimiter(',');
  cmd->add_option("--sp", o->sequence_parallel, "Sequence parallelism: on, off")->delimiter(',');
  cmd->add_option("--vary", o->vary,
                  "Any experiment field: PATH=V1,V2,... as --set takes it, e.g. cluster.count=16,32 or "
                  "cluster.chip.hbm_GiB=96,192 (repeatable: the product of all)");
  cmd->add_option("--set", o->axes.overrides, "Override a value for every plan: PATH=VALUE, as `trnsim run --set`");
  cmd->add_option("--network", o->network, network_model_help())->check(CLI::IsMember(network_model_choices()));
  cmd->add_option("--threads", o->threads, "Plans simulated at once (default: all cores); the output does not depend on it")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--search", o->search,
                "Instead of the product of the lists, every valid plan of the cluster (axes given as lists keep "
                "their lists), replaying in order of a compute lower bound and pruning exactly: the --top ranking is "
                "the one a full sweep would print");
  cmd->add_flag("--no-fast-forward", o->no_fast_forward,
                "Replay every micro-batch of each plan instead of fast-forwarding over the pipeline's steady "
                "state (the default where the repetition is checked exact: the same step time in picoseconds; for "
                "comparison)");
  cmd->add_option("--shard", o->shard,
                  "Run only slice I of N (I/N, 0 <= I < N: every N-th plan from plan I); write it with --json and "
                  "join the slices with `trnsim merge`");
  add_output_options(cmd, o->outputs);
  o->memory.add_to(*cmd,
                   "Refuse a sweep estimated, before any plan runs, to need more memory than this: the largest plan's "
                   "step (as `trnsim run` estimates it) times the plans simulated at once (--threads), plus every "
                   "point's outcome, kept to the end");
}

void add_merge_command(CLI::App& app, Action& action) {
  auto [cmd, o] = add_subcommand<MergeOptions>(
      app, action, "merge",
      "Join the shards of one sweep (`trnsim sweep --shard I/N --json PART`): prints and writes exactly what the "
      "unsharded sweep does",
      run_merge_command);
  cmd->add_option("parts", o->parts, "The --json files of the shards 0..N-1, each once, in any order")->required();
  add_output_options(cmd, o->outputs);
}

}  // namespace trnsim::cli
