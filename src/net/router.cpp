#include "trnsim/net/router.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "trnsim/error.hpp"

namespace trnsim::net {

namespace {
// splitmix64: a fixed, platform-independent mix for the ECMP choice.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// Steps to go from a to b on a ring of n in the shorter direction: +k or -k (tie: +).
int ring_delta(int a, int b, int n) {
  const int fwd = ((b - a) % n + n) % n;
  return fwd <= n - fwd ? fwd : fwd - n;
}
}  // namespace

const Route& Router::route(int src_chip, int dst_chip) {
  const auto key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src_chip)) << 32) |
                   static_cast<std::uint32_t>(dst_chip);
  if (auto it = cache_.find(key); it != cache_.end()) return routes_[it->second];
  Route r;
  r.first = static_cast<std::uint32_t>(store_.size());
  if (src_chip == dst_chip) {
    store_.push_back(topo_->local_link(src_chip));
  } else {
    scratch_.clear();
    compute_path(src_chip, dst_chip, scratch_);
    for (std::size_t i = 0; i + 1 < scratch_.size(); ++i) {
      const LinkId l = topo_->find_link(scratch_[i], scratch_[i + 1]);
      if (l < 0) {
        throw InternalError(fmt::format("router: no link {} -> {}", topo_->vertex_name(scratch_[i]),
                                        topo_->vertex_name(scratch_[i + 1])));
      }
      store_.push_back(l);
    }
  }
  r.hops = static_cast<std::uint32_t>(store_.size() - r.first);
  r.bottleneck = topo_->link(store_[r.first]).bandwidth;
  for (std::uint32_t i = 0; i < r.hops; ++i) {
    const Link& l = topo_->link(store_[r.first + i]);
    r.latency += l.latency;
    r.bottleneck = std::min(r.bottleneck, l.bandwidth);
  }
  routes_.push_back(r);
  cache_.emplace(key, static_cast<std::uint32_t>(routes_.size() - 1));
  return routes_.back();
}

void Router::torus_walk(int instance, int& x, int& y, int tx, int ty, std::vector<VertexId>& path) const {
  const hw::InstanceSpec& inst = topo_->cluster().instance;
  const int nx = inst.torus_x, ny = inst.torus_y, base = instance * inst.chips;
  for (int d = ring_delta(x, tx, nx); d != 0; d += d > 0 ? -1 : 1) {
    x = (x + (d > 0 ? 1 : nx - 1)) % nx;
    path.push_back(base + y * nx + x);
  }
  for (int d = ring_delta(y, ty, ny); d != 0; d += d > 0 ? -1 : 1) {
    y = (y + (d > 0 ? 1 : ny - 1)) % ny;
    path.push_back(base + y * nx + x);
  }
}

void Router::compute_path(int src, int dst, std::vector<VertexId>& path) const {
  const hw::DeviceMap& dm = topo_->devices();
  const hw::InstanceSpec& inst = topo_->cluster().instance;
  const int cpi = dm.chips_per_instance();
  const int si = src / cpi, di = dst / cpi;
  const int zn = dm.instances_per_ultraserver();
  const int su = si / zn, du = di / zn;
  path.push_back(src);
  switch (inst.topology) {
    case hw::IntraTopology::Torus2D: {
      const bool z_ring = zn > 1 && topo_->find_link(src, ((si / zn) * zn + (si % zn + 1) % zn) * cpi + src % cpi) >= 0;
      if (si == di || (su == du && z_ring)) {
        int x = (src % cpi) % inst.torus_x, y = (src % cpi) / inst.torus_x;
        torus_walk(si, x, y, (dst % cpi) % inst.torus_x, (dst % cpi) / inst.torus_x, path);
        int z = si % zn;
        for (int d = ring_delta(z, di % zn, zn); d != 0; d += d > 0 ? -1 : 1) {
          z = (z + (d > 0 ? 1 : zn - 1)) % zn;
          path.push_back((su * zn + z) * cpi + y * inst.torus_x + x);
        }
        return;
      }
      break;
    }
    case hw::IntraTopology::NvSwitch:
      if (si == di) {
        path.push_back(topo_->nvswitch(si));
        path.push_back(dst);
        return;
      }
      break;
    case hw::IntraTopology::Switched: {
      if (src / topo_->chips_per_server() == dst / topo_->chips_per_server()) {
        path.push_back(topo_->server_switch(src));
        path.push_back(dst);
        return;
      }
      if (su == du && topo_->has_rack_switches()) {
        path.push_back(topo_->rack_switch(su));
        path.push_back(dst);
        return;
      }
      if (su != du && topo_->find_link(src, dst) >= 0) {  // inter-rack link to the same position
        path.push_back(dst);
        return;
      }
      break;
    }
    case hw::IntraTopology::Single: break;
  }
  if (si == di || !topo_->has_clos()) {
    throw InputError(fmt::format("{}: no route from chip {} to chip {} (instances {} and {}; is EFA configured?)",
                                 inst.name, src, dst, si, di));
  }
  clos_path(src, dst, path);
}

void Router::clos_path(int src, int dst, std::vector<VertexId>& path) const {
  const int cpi = topo_->devices().chips_per_instance();
  const VertexId up = topo_->leaf(src % cpi, src / cpi);
  const VertexId down = topo_->leaf(dst % cpi, dst / cpi);
  path.push_back(up);
  if (up != down) {
    const auto key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) | static_cast<std::uint32_t>(dst);
    const auto k = static_cast<int>(mix(key) % static_cast<std::uint64_t>(topo_->spine_count()));
    path.push_back(topo_->spine(k));
    path.push_back(down);
  }
  path.push_back(dst);
}

}  // namespace trnsim::net
