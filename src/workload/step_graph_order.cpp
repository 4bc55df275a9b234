// check_acyclic: Boost.Graph's depth-first search on a view of the StepGraph that copies none of
// its edges (contract in step_graph_order.hpp).
#include "trnsim/workload/step_graph_order.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <span>

#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/graph_traits.hpp>
#include <boost/iterator/counting_iterator.hpp>
#include <boost/iterator/iterator_facade.hpp>
#include <boost/property_map/property_map.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace trnsim::workload {
namespace {

constexpr std::uint32_t kNoHub = std::numeric_limits<std::uint32_t>::max();

// The dependencies as a Boost.Graph IncidenceGraph and VertexListGraph. Vertices: the tasks, then
// one hub per collective call with two or more members. A member's only out-edge goes to its
// call's hub, the hub's out-edges to the successors of all its members: they wait for every
// member. A call with one member needs no hub (its successors wait for that member alone), so a
// symmetric build, where most calls have one simulated member, adds almost nothing to the graph.
class DependencyView {
 public:
  using vertex_descriptor = std::uint32_t;
  struct edge_descriptor {
    vertex_descriptor source = 0, target = 0;
    bool operator==(const edge_descriptor&) const = default;
  };
  class out_edge_iterator
      : public boost::iterator_facade<out_edge_iterator, edge_descriptor, std::forward_iterator_tag, edge_descriptor> {
   public:
    out_edge_iterator() = default;
    out_edge_iterator(vertex_descriptor source, const std::uint32_t* at) : source_(source), at_(at) {}

   private:
    friend class boost::iterator_core_access;
    edge_descriptor dereference() const { return {source_, *at_}; }
    bool equal(const out_edge_iterator& other) const { return at_ == other.at_; }
    void increment() { ++at_; }
    vertex_descriptor source_ = 0;
    const std::uint32_t* at_ = nullptr;
  };
  using vertex_iterator = boost::counting_iterator<vertex_descriptor>;
  using directed_category = boost::directed_tag;
  using edge_parallel_category = boost::allow_parallel_edge_tag;
  struct traversal_category : boost::incidence_graph_tag, boost::vertex_list_graph_tag {};
  using vertices_size_type = std::uint32_t;
  using edges_size_type = std::uint32_t;
  using degree_size_type = std::uint32_t;
  static vertex_descriptor null_vertex() { return kNoHub; }

  explicit DependencyView(const StepGraph& g) : graph_(&g), tasks_(static_cast<std::uint32_t>(g.tasks.size())) {
    std::vector<std::uint32_t> members(g.calls, 0);
    std::vector<TaskId> collectives;  // one pass over the tasks; the hubs need only these
    for (TaskId id = 0; id < tasks_; ++id) {
      const Task& t = g.tasks[id];
      if (t.kind != TaskKind::Collective) continue;
      if (t.call >= g.calls) throw InternalError(fmt::format("StepGraph: call {} of {} calls", t.call, g.calls));
      ++members[t.call];
      collectives.push_back(id);
    }
    hub_of_call_.assign(g.calls, kNoHub);
    for (std::uint32_t c = 0; c < g.calls; ++c) {
      if (members[c] < 2) continue;
      hub_of_call_[c] = tasks_ + static_cast<std::uint32_t>(hub_call_.size());
      hub_call_.push_back(c);
    }
    // The hubs' targets as CSR: members in id order, each member's successors in edge order.
    hub_begin_.assign(hub_call_.size() + 1, 0);
    if (hub_call_.empty()) return;
    for (const TaskId id : collectives) {
      const Task& t = g.tasks[id];
      if (const std::uint32_t hub = hub_of_call_[t.call]; hub != kNoHub) {
        hub_begin_[hub - tasks_ + 1] += t.succ_end - t.succ_begin;
      }
    }
    for (std::size_t h = 0; h < hub_call_.size(); ++h) hub_begin_[h + 1] += hub_begin_[h];
    hub_targets_.resize(hub_begin_.back());
    std::vector<std::uint32_t> fill(hub_begin_.begin(), hub_begin_.end() - 1);
    for (const TaskId id : collectives) {
      const Task& t = g.tasks[id];
      const std::uint32_t hub = hub_of_call_[t.call];
      if (hub == kNoHub) continue;
      for (std::uint32_t s = t.succ_begin; s < t.succ_end; ++s) hub_targets_[fill[hub - tasks_]++] = g.successors[s];
    }
  }

  std::uint32_t vertex_count() const { return tasks_ + static_cast<std::uint32_t>(hub_call_.size()); }
  std::uint32_t task_count() const { return tasks_; }
  // The call whose hub `v` is (v >= task_count()).
  std::uint32_t call_of_hub(vertex_descriptor v) const { return hub_call_[v - tasks_]; }

  std::span<const std::uint32_t> targets(vertex_descriptor v) const {
    if (v >= tasks_) {
      const std::size_t h = v - tasks_;
      return {hub_targets_.data() + hub_begin_[h], hub_targets_.data() + hub_begin_[h + 1]};
    }
    const Task& t = graph_->tasks[v];
    if (t.kind == TaskKind::Collective && !hub_call_.empty() && hub_of_call_[t.call] != kNoHub) {
      return {&hub_of_call_[t.call], 1};
    }
    return {graph_->successors.data() + t.succ_begin, graph_->successors.data() + t.succ_end};
  }

 private:
  const StepGraph* graph_;
  std::uint32_t tasks_;
  std::vector<std::uint32_t> hub_of_call_;  // per call: its hub vertex, or kNoHub
  std::vector<std::uint32_t> hub_call_;     // per hub: its call
  std::vector<std::uint32_t> hub_begin_;    // per hub: offsets into hub_targets_ (hubs + 1)
  std::vector<TaskId> hub_targets_;
};

// The free functions Boost.Graph finds by argument-dependent lookup.
using Vertex = DependencyView::vertex_descriptor;
using Edge = DependencyView::edge_descriptor;

std::pair<DependencyView::out_edge_iterator, DependencyView::out_edge_iterator> out_edges(Vertex v,
                                                                                          const DependencyView& g) {
  const auto t = g.targets(v);
  return {{v, t.data()}, {v, t.data() + t.size()}};
}
std::uint32_t out_degree(Vertex v, const DependencyView& g) { return static_cast<std::uint32_t>(g.targets(v).size()); }
Vertex source(Edge e, const DependencyView&) { return e.source; }
Vertex target(Edge e, const DependencyView&) { return e.target; }
std::pair<DependencyView::vertex_iterator, DependencyView::vertex_iterator> vertices(const DependencyView& g) {
  return {DependencyView::vertex_iterator(0), DependencyView::vertex_iterator(g.vertex_count())};
}
[[maybe_unused]] std::uint32_t num_vertices(const DependencyView& g) { return g.vertex_count(); }  // VertexListGraph

// Thrown out of the search (as Boost's own topological_sort throws not_a_dag) with the cycle.
struct CycleFound {
  std::vector<Vertex> vertices;  // in edge order: each vertex's out-edge leads to the next
};

// Records the search tree (to recover a cycle) and the finish order, reversed, of the tasks.
class OrderVisitor : public boost::default_dfs_visitor {
 public:
  // `left`: the slots of `order` not filled yet (all of them at the start).
  OrderVisitor(std::vector<Vertex>& parent, std::vector<TaskId>& order, std::size_t& left)
      : parent_(&parent), order_(&order), left_(&left) {}
  void tree_edge(Edge e, const DependencyView&) { (*parent_)[e.target] = e.source; }
  // The target is on the search path (grey): the tree path from it to the source, and this edge,
  // close a cycle.
  void back_edge(Edge e, const DependencyView&) const {
    CycleFound cycle;
    for (Vertex v = e.source;; v = (*parent_)[v]) {
      cycle.vertices.push_back(v);
      if (v == e.target) break;
    }
    std::reverse(cycle.vertices.begin(), cycle.vertices.end());
    throw cycle;
  }
  void finish_vertex(Vertex v, const DependencyView& g) {
    if (v < g.task_count()) (*order_)[--*left_] = v;
  }

 private:
  std::vector<Vertex>* parent_;
  std::vector<TaskId>* order_;
  std::size_t* left_;  // order_ fills from the back: the last task to finish comes first
};

// The member of `call` that `next` waits for (the first with `next` among its successors).
TaskId member_before(const StepGraph& g, std::uint32_t call, TaskId next) {
  const CallMembers members = call_members(g);
  for (const TaskId m : members.of(call)) {
    const auto first = g.successors.begin() + g.tasks[m].succ_begin, last = g.successors.begin() + g.tasks[m].succ_end;
    if (std::find(first, last, next) != last) return m;
  }
  return members.of(call).front();
}

// The cycle as tasks: a hub becomes the member through which the next task waits when that is
// not the member that entered it; rotated to start at the lowest id.
[[noreturn]] void report_cycle(const StepGraph& g, const DependencyView& view, const std::vector<Vertex>& cycle) {
  const std::size_t len = cycle.size();
  std::vector<TaskId> tasks;
  bool via_call = false;
  for (std::size_t i = 0; i < len; ++i) {
    const Vertex v = cycle[i];
    if (v < view.task_count()) {
      tasks.push_back(v);
      continue;
    }
    via_call = true;
    const Vertex entered = cycle[(i + len - 1) % len], next = cycle[(i + 1) % len];
    const TaskId member = member_before(g, view.call_of_hub(v), next);
    if (member != entered) tasks.push_back(member);
  }
  std::rotate(tasks.begin(), std::min_element(tasks.begin(), tasks.end()), tasks.end());
  constexpr std::size_t kShown = 16;
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < tasks.size() && i < kShown; ++i) {
    const Task& t = g.tasks[tasks[i]];
    shown.push_back(t.kind == TaskKind::Collective ? fmt::format("{} (rank {}, call {})", tasks[i], t.rank, t.call)
                                                   : fmt::format("{} (rank {})", tasks[i], t.rank));
  }
  const std::string message = fmt::format(
      "StepGraph: dependency cycle of {} tasks, each waiting for the one before it and the first for the last: "
      "{}{}; the replay would deadlock{}",
      tasks.size(), fmt::join(shown, " -> "), tasks.size() > kShown ? " -> ..." : "",
      via_call ? " (a collective call starts only when all its members have arrived)" : "");
  throw CycleError(std::move(tasks), message);
}

}  // namespace

std::vector<TaskId> check_acyclic(const StepGraph& graph) {
  const DependencyView view(graph);
  std::vector<Vertex> parent(view.vertex_count());
  std::vector<TaskId> order(graph.tasks.size());
  // One colour per vertex in a plain array: faster here than Boost's two-bit map (measured).
  std::vector<boost::default_color_type> colour(view.vertex_count());
  std::size_t left = order.size();
  try {
    boost::depth_first_search(
        view, OrderVisitor(parent, order, left),
        boost::make_iterator_property_map(colour.begin(), boost::typed_identity_property_map<Vertex>()));
  } catch (const CycleFound& cycle) {
    report_cycle(graph, view, cycle.vertices);
  }
  return order;
}

}  // namespace trnsim::workload
