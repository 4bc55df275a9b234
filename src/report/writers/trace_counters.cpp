#include "trace_counters.hpp"

#include <algorithm>
#include <array>

#include "trnsim/net/collective.hpp"
#include "trnsim/net/topology.hpp"

namespace trnsim::report::trace {
namespace {

using workload::Stream;
using workload::TaskKind;

constexpr double kGB = 1e9;  // counters in GB/s, 10^9 bytes per second (README: GB = 10^9)

std::string_view stream_key(Stream s) {
  switch (s) {
    case Stream::Compute: return "compute";
    case Stream::TpComm: return "tp";
    case Stream::DpComm: return "dp";
    case Stream::PpComm: return "pp";
  }
  return "?";
}

// One change of a stream's rate: at `at`, stream `stream` moves at `gbps` (0: idle).
struct RateChange {
  sim::Time at;
  bool starts = false;  // at equal times an end is applied before a start
  std::size_t order = 0;
  Stream stream = Stream::Compute;
  double gbps = 0;
};

void counter_event(EventStream& events, std::string_view name, std::int32_t pid, sim::Time at,
                   const std::vector<std::pair<std::string_view, double>>& values) {
  auto& b = events.next();
  fmt::format_to(std::back_inserter(b), R"({{"ph":"C","name":"{}","pid":{},"ts":)", name, pid);
  append_us(b, at);
  b.append(std::string_view(",\"args\":{"));
  for (std::size_t i = 0; i < values.size(); ++i) {
    fmt::format_to(std::back_inserter(b), R"({}"{}":)", i ? "," : "", values[i].first);
    append_number(b, values[i].second);
  }
  b.append(std::string_view("}}"));
}

}  // namespace

void write_rank_counters(EventStream& events, const workload::StepGraph& graph, const std::vector<replay::Span>& spans,
                         std::int32_t rank, const std::vector<workload::TaskId>& tasks) {
  std::vector<RateChange> changes;
  std::array<bool, workload::kStreamCount> used{};
  for (const workload::TaskId id : tasks) {
    const workload::Task& t = graph.tasks[id];
    if (t.kind == TaskKind::Compute) continue;
    used[static_cast<std::size_t>(t.stream)] = true;
    const replay::Span& s = spans[id];
    if (s.end <= s.active) continue;  // no time on the network: no rate to show
    double bus_bytes = t.bytes;       // a send moves its bytes once
    if (t.kind == TaskKind::Collective) {
      const workload::Collective& c = graph.collectives[t.index];
      const int n = c.group_set < graph.group_sets.size() ? graph.group_sets[c.group_set].group_size : 1;
      bus_bytes = c.bytes * net::bus_bandwidth_factor(c.op, n);
    }
    const double gbps = bus_bytes / (s.end - s.active).to_seconds() / kGB;
    changes.push_back({s.active, true, changes.size(), t.stream, gbps});
    changes.push_back({s.end, false, changes.size(), t.stream, 0});
  }
  if (changes.empty()) return;
  std::sort(changes.begin(), changes.end(), [](const RateChange& a, const RateChange& b) {
    if (a.at != b.at) return a.at < b.at;
    if (a.starts != b.starts) return !a.starts;
    return a.order < b.order;
  });
  // A stream runs one task at a time, so its rate is that task's rate, never a sum.
  std::array<double, workload::kStreamCount> rate{};
  std::vector<std::pair<std::string_view, double>> values;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    rate[static_cast<std::size_t>(changes[i].stream)] = changes[i].gbps;
    if (i + 1 < changes.size() && changes[i + 1].at == changes[i].at) continue;
    values.clear();
    for (std::size_t s = 0; s < used.size(); ++s) {
      if (used[s]) values.emplace_back(stream_key(static_cast<Stream>(s)), rate[s]);
    }
    counter_event(events, "busbw GB/s", rank, changes[i].at, values);
  }
}

void write_network_counters(EventStream& events, const replay::StepRun& run, std::int32_t pid) {
  const double step_s = run.timeline.step_time.to_seconds();
  if (step_s <= 0) return;
  struct KindTotals {
    int links = 0;
    double busy_s = 0, bytes = 0;
  };
  std::array<KindTotals, net::kLinkKinds> kinds{};
  for (const net::LinkUsage& l : run.links) {
    KindTotals& k = kinds[static_cast<std::size_t>(l.kind)];
    ++k.links;
    k.busy_s += l.busy_s;
    k.bytes += l.bytes;
  }
  std::vector<std::pair<std::string_view, double>> busy, traffic;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i].links == 0) continue;
    const std::string_view name = trnsim::to_string(static_cast<net::LinkKind>(i));
    busy.emplace_back(name, 100 * kinds[i].busy_s / (kinds[i].links * step_s));
    traffic.emplace_back(name, kinds[i].bytes / step_s / kGB);
  }
  for (const sim::Time at : {sim::Time::zero(), run.timeline.step_time}) {
    counter_event(events, "link busy % (step mean)", pid, at, busy);
    counter_event(events, "link traffic GB/s (step mean)", pid, at, traffic);
  }
}

nlohmann::json counter_notes() {
  return {
      {"busbw GB/s",
       "per rank and communication stream (tp, dp, pp): the bus bandwidth of the collective or send the stream has on "
       "the network, bytes x bus factor (nccl-tests: all-reduce 2(n-1)/n; reduce-scatter, all-gather (n-1)/n; send 1) "
       "/ its time on the network, in 10^9 bytes/s; 0 while the stream waits or is idle"},
      {"link busy % (step mean)",
       "per link kind: busy seconds of the links of that kind that carried traffic, over (those links x step time); "
       "flow model: time with a flow on the link; analytic model: bytes / bandwidth. A step-level constant, not a "
       "time series"},
      {"link traffic GB/s (step mean)",
       "per link kind: bytes carried by all links of that kind during the step over the step time, in 10^9 bytes/s; "
       "a step-level constant"},
  };
}

}  // namespace trnsim::report::trace
