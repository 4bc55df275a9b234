// Chrome trace event JSON of one step (format: the "Trace Event Format" document of the Chromium
// project; X complete events, s/f flow events, C counters, M metadata). Layout in chrome_trace.hpp.
#include "trnsim/report/writers/chrome_trace.hpp"

#include <algorithm>
#include <array>
#include <sstream>

#include "trace_counters.hpp"
#include "trace_events.hpp"
#include "trnsim/error.hpp"
#include "trnsim/hw/device_map.hpp"

namespace trnsim::report {
namespace {

using trace::append_number;
using trace::append_us;
using trace::EventStream;
using trace::json_string;
using workload::Category;
using workload::Stream;
using workload::TaskId;
using workload::TaskKind;

std::string_view category_name(Category c) {
  switch (c) {
    case Category::Forward: return "forward";
    case Category::Backward: return "backward";
    case Category::Recompute: return "recompute";
    case Category::Optimizer: return "optimizer";
    case Category::TpComm: return "tp_comm";
    case Category::DpComm: return "dp_comm";
    case Category::PpComm: return "pp_comm";
    case Category::EpComm: return "ep_comm";
    case Category::CpComm: return "cp_comm";
  }
  return "?";
}

// Pipeline sends are the only tasks on the PpComm stream (a receive is its consumer's wait).
constexpr std::string_view kSendName = "pp send";

// What the trace needs of every Work once: its name as a JSON string, FLOPs and HBM bytes.
struct WorkInfo {
  std::string name;
  double flops = 0, hbm_bytes = 0;
};

class TraceWriter {
 public:
  TraceWriter(std::ostream& out, const replay::StepInput& input, const replay::StepRun& run,
              const TraceOptions& options)
      : events_(out), input_(input), run_(run), graph_(run.graph), spans_(run.timeline.spans), devices_(input.cluster),
        requested_(options.ranks), ranks_(traced_ranks(run, options.ranks)) {
    slot_.assign(static_cast<std::size_t>(std::max(run.ranks, graph_.total_ranks)), -1);
    for (std::size_t i = 0; i < ranks_.size(); ++i) slot_[idx(ranks_[i])] = static_cast<std::int32_t>(i);
    for (std::size_t w = 0; w < graph_.works.size(); ++w) {
      WorkInfo info{json_string(graph_.works[w].name), w < run.work_costs.size() ? run.work_costs[w].flops : 0, 0};
      for (const cost::Kernel& k : graph_.works[w].kernels) info.hbm_bytes += k.hbm_bytes;
      works_.push_back(std::move(info));
    }
    // Layer -> the chunk (virtual stage index on its rank) that holds it: chunk k of the model
    // lives on stage k mod pp as that stage's chunk k / pp (workload::Plan::chunks).
    const workload::Plan& plan = run.plan;
    chunk_of_layer_.assign(static_cast<std::size_t>(std::max<std::int64_t>(input.model.layers, 0)), -1);
    for (std::int64_t k = 0; k < plan.chunks(); ++k) {
      const std::int64_t first = plan.chunk_first_layer(input.model.layers, k);
      for (std::int64_t l = first; l < first + plan.chunk_layers(input.model.layers, k); ++l) {
        if (l >= 0 && l < input.model.layers) chunk_of_layer_[static_cast<std::size_t>(l)] = static_cast<std::int32_t>(k / plan.pp);
      }
    }
  }

  void write() {
    select_tasks();
    events_.append("{\"traceEvents\":[\n");
    for (std::size_t i = 0; i < ranks_.size(); ++i) write_rank_metadata(i);
    const bool network = !run_.links.empty();
    if (network) write_network_metadata();
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      for (const TaskId t : tasks_[i]) write_task(t);
    }
    for (std::size_t i = 0; i < ranks_.size(); ++i) write_flows(i);
    for (std::size_t i = 0; i < ranks_.size(); ++i) trace::write_rank_counters(events_, graph_, spans_, ranks_[i], tasks_[i]);
    if (network) trace::write_network_counters(events_, run_, network_pid());
    events_.append("\n],\n\"otherData\":");
    events_.append(other_data().dump());
    events_.append("}\n");
    events_.flush();
  }

 private:
  static std::size_t idx(std::int32_t v) { return static_cast<std::size_t>(v); }
  std::int32_t network_pid() const { return static_cast<std::int32_t>(run_.ranks); }
  static std::int32_t tid_of(std::int32_t rank, Stream s) { return kTidPerRank * rank + static_cast<std::int32_t>(s) + 1; }

  // Tasks of each traced rank, by stream then start (then id): each thread's events in time order.
  void select_tasks() {
    tasks_.assign(ranks_.size(), {});
    for (TaskId t = 0; t < graph_.tasks.size(); ++t) {
      const std::int32_t r = graph_.tasks[t].rank;
      if (r >= 0 && idx(r) < slot_.size() && slot_[idx(r)] >= 0) tasks_[idx(slot_[idx(r)])].push_back(t);
    }
    for (auto& list : tasks_) {
      std::sort(list.begin(), list.end(), [this](TaskId a, TaskId b) {
        const auto sa = graph_.tasks[a].stream, sb = graph_.tasks[b].stream;
        if (sa != sb) return sa < sb;
        if (spans_[a].start != spans_[b].start) return spans_[a].start < spans_[b].start;
        return a < b;
      });
    }
  }

  void metadata(std::string_view what, std::int32_t pid, const std::int32_t* tid, const nlohmann::json& args) {
    auto& b = events_.next();
    fmt::format_to(std::back_inserter(b), R"({{"ph":"M","name":"{}","pid":{})", what, pid);
    if (tid) fmt::format_to(std::back_inserter(b), R"(,"tid":{})", *tid);
    fmt::format_to(std::back_inserter(b), R"(,"args":{}}})", args.dump());
  }

  void write_rank_metadata(std::size_t i) {
    const std::int32_t rank = ranks_[i];
    const hw::DeviceLocation loc = devices_.locate(rank);
    const bool gpu = input_.cluster.instance.chip.family == hw::Family::Gpu;
    std::string name = gpu ? fmt::format("rank {}: instance {} / gpu {}", rank, loc.instance, loc.chip_in_instance)
                           : fmt::format("rank {}: instance {} / chip {} / core {}", rank, loc.instance,
                                         loc.chip_in_instance, loc.core_in_chip);
    const std::int32_t stage = tasks_[i].empty() ? 0 : graph_.tasks[tasks_[i].front()].stage;
    name += fmt::format(" (stage {} of {}", stage, run_.plan.pp);
    if (symmetric()) name += fmt::format("; stands for its stage's {} ranks", run_.plan.tp * run_.plan.grad_dp());
    name += ")";
    metadata("process_name", rank, nullptr, {{"name", name}});
    metadata("process_sort_index", rank, nullptr, {{"sort_index", rank}});
    std::array<bool, workload::kStreamCount> used{};
    for (const TaskId t : tasks_[i]) used[static_cast<std::size_t>(graph_.tasks[t].stream)] = true;
    static constexpr std::array<std::string_view, workload::kStreamCount> kStreamNames = {"compute", "tp comm", "dp comm",
                                                                                         "pp send/recv"};
    for (std::size_t s = 0; s < used.size(); ++s) {
      if (!used[s]) continue;
      const std::int32_t tid = tid_of(rank, static_cast<Stream>(s));
      metadata("thread_name", rank, &tid, {{"name", kStreamNames[s]}});
      metadata("thread_sort_index", rank, &tid, {{"sort_index", static_cast<int>(s)}});
    }
  }

  void write_network_metadata() {
    metadata("process_name", network_pid(), nullptr, {{"name", "network: links by kind, step means (all ranks)"}});
    metadata("process_sort_index", network_pid(), nullptr, {{"sort_index", network_pid()}});
  }

  bool symmetric() const { return graph_.simulated_ranks.size() < static_cast<std::size_t>(run_.ranks); }

  void write_task(TaskId id) {
    const workload::Task& t = graph_.tasks[id];
    const replay::Span& s = spans_[id];
    auto& b = events_.next();
    auto it = std::back_inserter(b);
    fmt::format_to(it, R"({{"ph":"X","pid":{},"tid":{},"ts":)", t.rank, tid_of(t.rank, t.stream));
    append_us(b, s.start);
    b.append(std::string_view(",\"dur\":"));
    append_us(b, s.end - s.start);
    b.append(std::string_view(",\"name\":"));
    const workload::Collective* c = t.kind == TaskKind::Collective ? &graph_.collectives[t.index] : nullptr;
    if (t.kind == TaskKind::Compute) {
      b.append(works_[t.index].name);
    } else if (c) {
      fmt::format_to(it, "\"{}\"", trnsim::to_string(c->op));
    } else {
      fmt::format_to(it, "\"{}\"", kSendName);
    }
    fmt::format_to(it, R"(,"cat":"{}","args":{{"task":{})", category_name(t.category), id);
    if (t.layer >= 0) {
      fmt::format_to(it, R"(,"layer":{})", t.layer);
      if (idx(t.layer) < chunk_of_layer_.size()) fmt::format_to(it, R"(,"chunk":{})", chunk_of_layer_[idx(t.layer)]);
    }
    if (t.micro_batch >= 0) fmt::format_to(it, R"(,"micro_batch":{})", t.micro_batch);
    if (t.kind == TaskKind::Compute) {
      b.append(std::string_view(",\"flops\":"));
      append_number(b, works_[t.index].flops);
      b.append(std::string_view(",\"hbm_bytes\":"));
      append_number(b, works_[t.index].hbm_bytes);
    } else {
      b.append(std::string_view(",\"bytes\":"));
      append_number(b, c ? c->bytes : t.bytes);
      if (c) {
        const workload::GroupSet* groups = c->group_set < graph_.group_sets.size() ? &graph_.group_sets[c->group_set] : nullptr;
        fmt::format_to(it, R"(,"op":"{}","group_size":{},"groups":{})", trnsim::to_string(c->op),
                       groups ? groups->group_size : 0, groups ? groups->count() : 0);
      } else {
        fmt::format_to(it, R"(,"to_rank":{})", t.peer);
      }
      // Time between reaching the call (or send) and its start on the network: waiting for peers.
      b.append(std::string_view(",\"wait_us\":"));
      append_us(b, s.active - s.start);
    }
    b.append(std::string_view("}}"));
  }

  // Middle of a span: inside its X event, so "enclosing slice" binding is unambiguous.
  static sim::Time middle(const replay::Span& s) { return sim::Time::ps(s.start.picoseconds() + (s.end - s.start).picoseconds() / 2); }

  void flow_event(char ph, TaskId flow, TaskId on) {
    const workload::Task& t = graph_.tasks[on];
    auto& b = events_.next();
    fmt::format_to(std::back_inserter(b), R"({{"ph":"{}","id":{},"name":"{}","cat":"pp_comm","pid":{},"tid":{},"ts":)", ph,
                   flow, kSendName, t.rank, tid_of(t.rank, t.stream));
    append_us(b, middle(spans_[on]));
    b.append(std::string_view(ph == 'f' ? ",\"bp\":\"e\"}" : "}"));
  }

  // Send -> the receiver's task that waits for it (a successor of the Transfer on the peer rank).
  void write_flows(std::size_t i) {
    for (const TaskId t : tasks_[i]) {
      const workload::Task& send = graph_.tasks[t];
      if (send.kind != TaskKind::Transfer || send.peer < 0 || idx(send.peer) >= slot_.size() || slot_[idx(send.peer)] < 0) continue;
      for (std::uint32_t e = send.succ_begin; e < send.succ_end; ++e) {
        const TaskId consumer = graph_.successors[e];
        if (graph_.tasks[consumer].rank != send.peer) continue;
        flow_event('s', t, t);
        flow_event('f', t, consumer);
        break;
      }
    }
  }

  nlohmann::json other_data() const {
    nlohmann::json d;
    d["model"] = input_.model.name;
    d["instance"] = input_.cluster.instance.name;
    d["instances"] = input_.cluster.instances;
    d["ranks"] = run_.ranks;
    d["simulated_ranks"] = graph_.simulated_ranks.size();
    d["network_model"] = std::string(net::to_string(input_.network));
    d["plan"] = fmt::format("TP {} PP {} DP {}, {} micro-batches", run_.plan.tp, run_.plan.pp, run_.plan.dp,
                            run_.plan.micro_batches);
    d["step_time_us"] = run_.timeline.step_time.to_us();
    d["rank_selection"] =
        requested_.empty()
            ? "default: one representative rank per pipeline stage (TP 0, DP 0 of the stage)"
            : "--trace-ranks; a rank that was not simulated is shown as its stage's representative (TP 0, DP 0)";
    d["requested_ranks"] = requested_;
    d["traced_ranks"] = ranks_;
    d["time_unit"] = "us; simulated time from the start of the step";
    d["counters"] = trace::counter_notes();
    return {{"trnsim", d}};
  }

  EventStream events_;
  const replay::StepInput& input_;
  const replay::StepRun& run_;
  const workload::StepGraph& graph_;
  const std::vector<replay::Span>& spans_;
  hw::DeviceMap devices_;
  std::vector<std::int32_t> requested_;
  std::vector<std::int32_t> ranks_;
  std::vector<std::int32_t> slot_;  // per real rank: index into ranks_, or -1
  std::vector<std::vector<TaskId>> tasks_;
  std::vector<WorkInfo> works_;
  std::vector<std::int32_t> chunk_of_layer_;
};

}  // namespace

void write_chrome_trace(std::ostream& out, const replay::StepInput& input, const replay::StepRun& run,
                        const TraceOptions& options) {
  if (run.timeline.spans.size() != run.graph.tasks.size()) throw InternalError("chrome trace: timeline and graph differ in size");
  TraceWriter(out, input, run, options).write();
}

nlohmann::json chrome_trace(const replay::StepInput& input, const replay::StepRun& run, const TraceOptions& options) {
  std::ostringstream s;
  write_chrome_trace(s, input, run, options);
  return nlohmann::json::parse(s.str());
}

}  // namespace trnsim::report
