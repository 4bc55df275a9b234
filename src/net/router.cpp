// Routing as breadth-first search on the topology's graph, one routing stage at a time (the
// policies are described in include/trnsim/net/router.hpp).
#include "trnsim/net/router.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/property_map.hpp>
#include <fmt/core.h>

#include "link_graph.hpp"
#include "trnsim/error.hpp"
#include "trnsim/huge_pages.hpp"
#include "unit_translation.hpp"

namespace trnsim::net {

namespace {

// splitmix64: a fixed, platform-independent mix for the ECMP choice.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The ECMP choice of a pair across the Clos: a hash of the source's instance within its leaf
// group, how many instances on the destination lies, and the two rails. Pairs that can meet on
// one link still draw their spines independently, as with a hash of the chip pair: the uplinks of
// one leaf (one rail, leaf_radix consecutive instances) carry pairs with distinct (source
// instance, destination chip), so distinct keys; the downlinks into one leaf carry pairs with
// distinct (source chip, destination instance), whose keys differ too (two sources of one rail
// and one offset in the group are one source). Pairs moved by whole leaf groups of instances keep
// their spine: a group of ranks across several UltraServers is priced as the image of one that
// many instances back (unit_translation.hpp). What that costs: each leaf group's pattern of
// spines repeats in the others (the rails' patterns do not), so the busiest spine link of a large
// cluster is the busiest of one leaf group's.
std::uint64_t clos_spine_hash(const Topology& t, int src_chip, int dst_chip) {
  const int cpi = t.devices().chips_per_instance();
  const int si = src_chip / cpi, di = dst_chip / cpi;
  return mix(mix(pair_key(si % t.leaf_group_size(), di - si)) ^ pair_key(src_chip % cpi, dst_chip % cpi));
}

enum class StageKind : std::uint8_t {
  Torus,         // the source's row, the destination's column (source instance), the Z ring at the destination
  NvSwitch,      // GPU -> NVSwitch -> GPU
  ServerSwitch,  // trn3: chip -> server switch -> chip
  RackSwitch,    // trn3: chip -> UltraServer switch -> chip
  InterRack,     // trn3: the direct link to the same position in a neighbouring UltraServer
  Clos,          // up-down through the rail leaves and the spine the hash picks
};

// The routing stages of each kind of topology, in the order they are tried.
struct Stages {
  std::array<StageKind, 4> kinds{};
  int count = 0;
};
Stages stages_of(hw::IntraTopology t) {
  switch (t) {
    case hw::IntraTopology::Torus2D: return {{StageKind::Torus, StageKind::Clos}, 2};
    case hw::IntraTopology::NvSwitch: return {{StageKind::NvSwitch, StageKind::Clos}, 2};
    case hw::IntraTopology::Switched:
      return {{StageKind::ServerSwitch, StageKind::RackSwitch, StageKind::InterRack, StageKind::Clos}, 4};
    case hw::IntraTopology::Single: break;
  }
  return {{StageKind::Clos}, 1};
}

// The edges one stage opens for the pair (src, dst).
struct Stage {
  StageKind kind = StageKind::Clos;
  const Topology* topo = nullptr;
  VertexId src = 0, dst = 0;
  // Torus: the source's instance and row, the destination's column and position in its instance.
  int instance = 0, row = 0, column = 0, position = 0;
  // Clos: the spine the hash picks (its index and vertex) and the destination's leaf.
  int spine_index = 0;
  VertexId spine = -1, down_leaf = -1;

  bool opens(const Link& l) const {
    switch (kind) {
      case StageKind::Torus: return torus_opens(l);
      case StageKind::NvSwitch: return l.kind == LinkKind::NvLink && (l.src == src || l.dst == dst);
      case StageKind::ServerSwitch: return l.kind == LinkKind::ServerSwitch && (l.src == src || l.dst == dst);
      case StageKind::RackSwitch: return l.kind == LinkKind::RackSwitch && (l.src == src || l.dst == dst);
      case StageKind::InterRack: return l.kind == LinkKind::InterRack && l.src == src && l.dst == dst;
      case StageKind::Clos:
        // Up from the source, across the chosen spine, down to the destination. Any other down
        // edge leads to a leaf the destination is not on, from where up-down cannot climb again:
        // closing those prunes dead ends without changing the shortest path.
        switch (l.kind) {
          case LinkKind::EfaPort: return l.src == src || l.dst == dst;
          case LinkKind::ClosUplink: return l.dst == spine;
          case LinkKind::ClosDownlink: return l.src == spine && l.dst == down_leaf;
          default: return false;
        }
    }
    return false;
  }

  bool torus_opens(const Link& l) const {
    const int cpi = topo->devices().chips_per_instance();
    const int nx = topo->cluster().instance.torus_x;
    const int u = l.src % cpi, v = l.dst % cpi;
    if (l.kind == LinkKind::NeuronLink) {
      if (l.src / cpi != instance) return false;
      return (u / nx == row && v / nx == row) || (u % nx == column && v % nx == column);
    }
    return l.kind == LinkKind::UltraServerZ && u == position;
  }
};

// The up-down path a Clos stage opens is unique: the source's port to its rail leaf, then the
// destination's port when that leaf holds it, else the uplink to the chosen spine, the downlink to
// the destination's leaf and its port. Built from the topology's Clos tables, it is what the
// breadth-first search over the stage's open edges finds, without scanning a spine's links to
// every leaf (at 65,536 chips that scan was a quarter of a replay) nor looking pairs up. False,
// with nothing appended, if a link is missing or not what the stage opens: the caller searches then.
bool clos_path(const Stage& stage, int src_position, int src_instance, std::vector<LinkId>& store) {
  const Topology* topo = stage.topo;
  const VertexId up_leaf = topo->leaf(src_position, src_instance);
  const int src = static_cast<int>(stage.src), dst = static_cast<int>(stage.dst);
  std::array<LinkId, 4> links{};
  std::array<VertexId, 5> hops{};
  std::size_t n = 0;
  if (up_leaf == stage.down_leaf) {
    links = {topo->efa_port_up(src), topo->efa_port_down(dst), -1, -1};
    hops = {stage.src, up_leaf, stage.dst, -1, -1};
    n = 2;
  } else {
    links = {topo->efa_port_up(src), topo->clos_uplink(up_leaf, stage.spine_index),
             topo->clos_downlink(stage.spine_index, stage.down_leaf), topo->efa_port_down(dst)};
    hops = {stage.src, up_leaf, stage.spine, stage.down_leaf, stage.dst};
    n = 4;
  }
  for (std::size_t i = 0; i < n; ++i) {
    // The link of the table joins the two hops, as find_link's would (pairs are distinct).
    if (links[i] < 0) return false;
    const Link& l = topo->link(links[i]);
    if (l.src != hops[i] || l.dst != hops[i + 1] || !stage.opens(l)) return false;
  }
  store.insert(store.end(), links.begin(), links.begin() + static_cast<std::ptrdiff_t>(n));
  return true;
}

}  // namespace

// Breadth-first search over the edges a stage opens. The colour map and the predecessor links
// are sized once for the graph; only the vertices a search discovered are reset after it, and it
// stops once the destination is discovered (its predecessor, like every earlier one, is final
// then), so a search costs what it visits, not the size of the graph.
class Router::Search {
 public:
  explicit Search(const Topology& topo)
      : topo_(&topo),
        graph_(&topo.graph().graph),
        color_(boost::num_vertices(*graph_), boost::white_color),
        pred_(boost::num_vertices(*graph_), -1) {}

  // Contract: appends to `path` the links of the shortest path from src to dst over the edges
  // `stage` opens (ties: the neighbour wired first) and returns true; false when they do not
  // reach dst. O(vertices reached x their out-degree).
  bool shortest(const Stage& stage, std::vector<LinkId>& path) {
    const boost::filtered_graph<const LinkGraph::Graph, Open> g(*graph_, Open{&stage, graph_});
    queue_.clear();
    touched_.clear();
    head_ = 0;
    target_ = static_cast<std::size_t>(stage.dst);
    found_ = false;
    Fifo fifo{this};
    const auto color = boost::make_iterator_property_map(color_.begin(), boost::get(boost::vertex_index, *graph_));
    boost::breadth_first_visit(g, static_cast<LinkGraph::VertexDescriptor>(stage.src), fifo, Visitor{this}, color);
    if (found_) {
      const std::size_t first = path.size();
      for (VertexId v = stage.dst; v != stage.src; v = topo_->link(pred_[static_cast<std::size_t>(v)]).src) {
        path.push_back(pred_[static_cast<std::size_t>(v)]);
      }
      std::reverse(path.begin() + static_cast<std::ptrdiff_t>(first), path.end());
    }
    for (const std::size_t v : touched_) {
      color_[v] = boost::white_color;
      pred_[v] = -1;
    }
    return found_;
  }

 private:
  // The filtered graph's edge predicate: the edges the stage opens.
  struct Open {
    const Stage* stage = nullptr;
    const LinkGraph::Graph* graph = nullptr;
    bool operator()(const LinkGraph::Edge& e) const { return stage->opens(stage->topo->link((*graph)[e])); }
  };
  // The BFS queue over a reused vector (boost::queue would allocate per search); it reads as empty
  // once the destination is discovered, which ends the search.
  struct Fifo {
    Search* search;
    void push(std::size_t v) { search->queue_.push_back(v); }
    std::size_t top() const { return search->queue_[search->head_]; }
    void pop() { ++search->head_; }
    bool empty() const { return search->found_ || search->head_ == search->queue_.size(); }
  };
  struct Visitor : boost::default_bfs_visitor {
    Search* search;
    explicit Visitor(Search* s) : search(s) {}
    template <class G>
    void discover_vertex(std::size_t v, const G&) const {
      search->touched_.push_back(v);
      if (v == search->target_) search->found_ = true;
    }
    template <class G>
    void tree_edge(const LinkGraph::Edge& e, const G&) const {
      search->pred_[boost::target(e, *search->graph_)] = (*search->graph_)[e];
    }
  };

  const Topology* topo_;
  const LinkGraph::Graph* graph_;
  std::vector<boost::default_color_type> color_;
  std::vector<LinkId> pred_;  // per vertex: the link it was discovered through
  std::vector<std::size_t> queue_, touched_;
  std::size_t head_ = 0, target_ = 0;
  bool found_ = false;
};

Router::Router(const Topology& topology)
    : topo_(&topology),
      translation_(std::make_unique<UnitTranslation>(unit_translation(topology))),
      search_(std::make_unique<Search>(topology)) {}

Router::~Router() = default;

const Route& Router::route(int src_chip, int dst_chip) {
  const auto key = pair_key(src_chip, dst_chip);
  if (const std::uint32_t* i = cache_.find(key)) return routes_[*i];
  Route r;
  if (src_chip == dst_chip || !translated(src_chip, dst_chip, r)) {
    // The stores grow to millions of entries at 65,536 chips: on huge pages (huge_pages.hpp).
    grow_huge(store_, 8);
    r.first = static_cast<std::uint32_t>(store_.size());
    if (src_chip != dst_chip) search(src_chip, dst_chip);
  }
  finish(r);
  cache_.insert(key, static_cast<std::uint32_t>(routes_.size() - 1));
  return routes_.back();
}

void Router::search(int src_chip, int dst_chip) {
  const hw::DeviceMap& dm = topo_->devices();
  const hw::InstanceSpec& inst = topo_->cluster().instance;
  const int cpi = dm.chips_per_instance();
  const int si = src_chip / cpi, di = dst_chip / cpi;
  Stage stage;
  stage.topo = topo_;
  stage.src = topo_->chip_vertex(src_chip);
  stage.dst = topo_->chip_vertex(dst_chip);
  const Stages stages = stages_of(inst.topology);
  for (int i = 0; i < stages.count; ++i) {
    stage.kind = stages.kinds[static_cast<std::size_t>(i)];
    if (stage.kind == StageKind::Torus) {
      // Its open edges stay inside the source's UltraServer: no search for a chip outside it.
      if (si / dm.instances_per_ultraserver() != di / dm.instances_per_ultraserver()) continue;
      stage.instance = si;
      stage.row = (src_chip % cpi) / inst.torus_x;
      stage.column = (dst_chip % cpi) % inst.torus_x;
      stage.position = dst_chip % cpi;
    } else if (stage.kind == StageKind::Clos) {
      // Between instances only: inside one, a pair the instance's own links do not join has no route.
      if (si == di || !topo_->has_clos()) continue;
      stage.spine_index =
          static_cast<int>(clos_spine_hash(*topo_, src_chip, dst_chip) % static_cast<std::uint64_t>(topo_->spine_count()));
      stage.spine = topo_->spine(stage.spine_index);
      stage.down_leaf = topo_->leaf(dst_chip % cpi, di);
    }
    if ((stage.kind == StageKind::Clos && clos_path(stage, src_chip % cpi, si, store_)) ||
        search_->shortest(stage, store_))
      return;
  }
  throw InputError(fmt::format("{}: no route from chip {} to chip {} (instances {} and {}; is EFA configured?)",
                               inst.name, src_chip, dst_chip, si, di));
}

bool Router::translated(int src_chip, int dst_chip, Route& r) {
  // Only the torus and Z-ring rules are images of the first unit's; switches are not translated.
  const UnitTranslation& t = *translation_;
  if (t.units == 0 || topo_->cluster().instance.topology != hw::IntraTopology::Torus2D) return false;
  const int unit = src_chip / t.chips_per_unit;
  if (unit == 0 || dst_chip / t.chips_per_unit != unit) return false;
  const int shift = unit * t.chips_per_unit;
  Route image;  // a copy: route() may move routes_
  try {
    image = route(src_chip - shift, dst_chip - shift);
  } catch (const InputError&) {
    return false;  // searched, so that the error names this pair, not its image
  }
  grow_huge(store_, image.hops);
  const std::size_t first = store_.size();
  for (std::uint32_t i = 0; i < image.hops; ++i) {
    const LinkId l = t.shift(store_[image.first + i], unit);
    if (l < 0) {  // a kind the builder did not wire alike in every unit: searched instead
      store_.resize(first);
      return false;
    }
    store_.push_back(l);
  }
  r.first = static_cast<std::uint32_t>(first);
  return true;
}

const Route& Router::path(int src_rank, int dst_rank) {
  const hw::DeviceMap& dm = topo_->devices();
  const int src_chip = dm.chip_of(src_rank), dst_chip = dm.chip_of(dst_rank);
  const auto key = pair_key(src_rank, dst_chip);
  if (const std::uint32_t* i = paths_.find(key)) return routes_[*i];
  const Route& found = route(src_chip, dst_chip);
  const auto at = static_cast<std::uint32_t>(&found - routes_.data());
  const Route network = found;  // a copy: the next push may move routes_
  bool dma = src_chip == dst_chip;
  if (!dma && topo_->cluster().instance.chip.family == hw::Family::Trainium) {
    dma = topo_->link(store_[network.first]).kind != LinkKind::EfaPort;
  }
  // The path is the route itself (EFA, NVLink): returned, neither copied nor indexed, as the
  // route's own index finds it again. At 65,536 chips the pairs across EFA are a million, and a
  // second index of them was about a tenth of a replay (its growth, its pages).
  if (!dma) return routes_[at];
  grow_huge(store_, 1 + network.hops);
  Route r;
  r.first = static_cast<std::uint32_t>(store_.size());
  store_.push_back(topo_->dma_link(src_rank));
  for (std::uint32_t i = 0; i < network.hops; ++i) {
    const LinkId l = store_[network.first + i];
    store_.push_back(l);
  }
  finish(r);
  paths_.insert(key, static_cast<std::uint32_t>(routes_.size() - 1));
  return routes_.back();
}

void Router::finish(Route& r) {
  r.hops = static_cast<std::uint32_t>(store_.size() - r.first);
  r.latency = 0;
  r.bottleneck = std::numeric_limits<double>::infinity();
  for (std::uint32_t i = 0; i < r.hops; ++i) {
    const Link& l = topo_->link(store_[r.first + i]);
    r.latency += l.latency;
    r.bottleneck = std::min(r.bottleneck, l.bandwidth);
  }
  grow_huge(routes_);
  routes_.push_back(r);
}

}  // namespace trnsim::net
