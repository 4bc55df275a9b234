#pragma once
// Net-internal: the analytic model's price of one call on every group of a replica set (its time:
// the slowest group's closed form; its link bytes: every group's schedule on its routes), without
// redoing per size what does not depend on size.
//
// A group's schedule under one algorithm has the same transfers at every size, only their bytes
// change; its routes and the bandwidth shares its steps leave each transfer (TransferTerms) are
// computed once per (group's ranks, op, algorithm). Groups whose schedules have the same shape (the
// same steps, and per transfer the same terms and bytes) take the same time at every size, so the
// time of a size is computed once per shape, on the shape's first group. The premise: an
// algorithm's transfer sizes depend only on the call's size and the schedule's shape (ranks per
// ring, instance, row), so equal shapes at one size are equal at every size.
//
// These terms, shapes and sizes depend only on the fabric (topology, routes, calibration) and the
// group's ranks, so they live in the fabric (GroupTerms) and the plans of a sweep that share it
// share them: a plan whose groups are the same ranks as an earlier plan's (another micro-batch or
// recompute mode) neither schedules nor routes them again.
//
// A group inside one unit (an UltraServer, or an instance; unit_translation.hpp) other than the
// first is priced as the image of the same group in unit 0, and a group across several units as
// the image of the group whole Clos periods back (leaf groups of instances: a pair's spine is the
// same for both, router.hpp), when every link that group's routes cross translates by that shift;
// a group whose ranks all sit c > 0 cores into their chips, as the image of the group c cores
// back (the same chips and routes, DMA links c further). Such a group has no schedule, route or
// terms of its own: its time is the image's (the same terms), its link bytes the image's
// per-group tally with each link moved. A set's groups are sorted by image once (images_of), and
// the algorithm is chosen once per image and call.
//
// The result is what one closed form and link tally per group give (AnalyticModel::result), to
// the picosecond and, link by link, in the same order of additions.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "trnsim/net/analytic_cache.hpp"
#include "trnsim/net/closed_form.hpp"
#include "link_tally.hpp"
#include "network_model.hpp"
#include "unit_translation.hpp"

namespace trnsim::net {

// A fabric's group schedules (Fabric::group_terms), shared by the GroupSetPricing of every plan on it.
struct GroupTerms {
  struct GroupPlan {
    CollectiveOp op{};
    Algorithm algorithm{};
    std::vector<int> ranks;   // the group's, in its order
    std::uint32_t shape = 0;  // into shapes
    std::uint32_t first = 0;  // its transfers' terms: terms[first, first + count), schedule order
    std::uint32_t count = 0;
    int period = 0;  // its links' (UnitTranslation::period_of): 0 when one does not translate
  };
  struct Shape {
    std::vector<double> key;  // what equality of shapes compares (group_shape_key)
    std::uint32_t plan = 0;   // its first group's, which prices it at each size
  };
  struct Sized {              // a shape at one size
    sim::Time time;
    std::vector<double> bytes;  // per transfer, schedule order: its bytes x its step's repeats
  };
  struct SizedKey {
    std::uint32_t shape;
    std::uint64_t bytes;  // the size's bits
    bool operator==(const SizedKey&) const = default;
  };
  struct SizedKeyHash {
    std::size_t operator()(const SizedKey& k) const;
  };

  std::vector<TransferTerms> terms;  // every plan's transfers
  std::vector<GroupPlan> plans;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> plan_index;   // hash_key(op, algorithm, 0, ranks) -> plans
  std::vector<Shape> shapes;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> shape_index;  // key hash -> shapes
  std::vector<Sized> sized;
  std::unordered_map<SizedKey, std::uint32_t, SizedKeyHash> sized_index;
};

class GroupSetPricing {
 public:
  // Contract: uses (creating it when absent) the group terms of the context's fabric, and the two
  // tallies (sized to the topology's links, empty) as scratch between calls of price(): their
  // owner may use them between calls (the analytic model lends its own: at 65,536 chips each is
  // 7 MB to zero and fault in).
  GroupSetPricing(NetworkContext& context, LinkTally& group_tally, LinkTally& set_tally);

  // Contract: `c` on every group of `set` (c.ranks unused). The first call of a (group's ranks, op,
  // algorithm) on the fabric schedules and routes that group, or its image in unit 0 and core 0
  // (see above); later calls cost, per group, the algorithm's choice and a pass over its
  // transfers' links (a translated group: over its image's distinct links), plus one schedule and
  // closed form per distinct (shape, size) on the fabric. Throws what make_schedule throws (a
  // group the algorithm cannot run).
  AnalyticResult price(const Collective& c, ReplicaSetId set);
  // Contract: the closed-form time of `c` alone (ClosedForm::estimate(c), to the picosecond),
  // from its plan on the fabric or its image's, as price() finds them (scheduled and routed now if
  // new: a set's first call containing the group finds it). Throws what make_schedule throws.
  sim::Time time_of(const Collective& c);

 private:
  // A group's plan, and the units and cores its ranks lie beyond the plan's (0, 0: its own plan).
  struct GroupRef {
    std::uint32_t plan = 0;  // + 1 (0: none yet)
    std::int32_t units = 0;
    std::int32_t cores = 0;
  };
  using LinkBytes = std::vector<std::pair<LinkId, double>>;

  // A set's groups by image, found once per set: the groups moved back by whole units (or Clos
  // periods) and cores (UnitTranslation::offset_of) fall on a few distinct rank lists, and the
  // algorithm's choice and the plan of each are asked once per list, not once per group. The
  // choice is the same for a group and its image: the policy reads the op, the size and whether
  // the ranks span instances, and supports() how they sit in instances and chips, all kept by
  // whole-unit and core shifts; the optimum compares the schedules' times, which are the image's
  // where the group's links translate, and otherwise (a group priced on its own: switch links,
  // a shift that is no whole Clos period) equal because every unit of a cluster is one instance
  // preset wired alike (checked link by link for the translated kinds, by construction for
  // switches).
  struct SetImages {
    std::vector<std::uint32_t> of_group;           // per group: its image, into `ranks`
    std::vector<UnitTranslation::Offset> offset;   // per group
    std::vector<std::vector<int>> ranks;           // the distinct images' ranks
  };
  const SetImages& images_of(ReplicaSetId set);

  Collective group_call(const Collective& c, ReplicaSetId set, std::size_t g) const;
  // The plan of group g of `set` (`image` its image in images_of) under algorithm a: the image's
  // where its links translate by the group's units, else image_plan of the group; kept per group.
  GroupRef plan_of(const Collective& c, Algorithm a, ReplicaSetId set, std::size_t g, std::uint32_t image);
  // The plan of the group's image (UnitTranslation::offset_of) where its links translate, else its own.
  GroupRef image_plan(const Collective& group, Algorithm a);
  std::uint32_t find_or_schedule(const Collective& group, Algorithm a);
  // The group tally of `plan` at `size`: its transfers' bytes per link, each link once (in the
  // order its transfers first cross them).
  LinkBytes group_bytes(const GroupTerms::GroupPlan& plan, const GroupTerms::Sized& size);
  std::uint32_t shape_of(std::vector<double> key, std::uint32_t plan);
  const GroupTerms::Sized& sized(std::uint32_t shape, const Collective& c, Algorithm a);

  NetworkContext& context_;
  GroupTerms& shared_;
  // (set, op, algorithm) -> per group of the set
  std::unordered_map<std::uint64_t, std::vector<GroupRef>> plan_index_;
  // (set, op, algorithm) -> per image of the set: its plan + 1 (0: not asked yet)
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> image_plan_index_;
  std::unordered_map<ReplicaSetId, SetImages> set_images_;
  std::vector<Algorithm> chosen_;  // scratch of price(): per image, the algorithm chosen (Auto: not yet)
  LinkTally& group_tally_;  // one group's link bytes
  LinkTally& set_tally_;    // the set's
  std::vector<int> image_ranks_;  // scratch: a group's ranks shifted into unit 0
  // Within one price(): the group tallies of the plans translated groups are images of, with
  // each link's range (UnitTranslation::range_of).
  struct ImageBytes {
    std::uint32_t plan = 0;
    LinkBytes bytes;
    std::vector<std::int8_t> ranges;
  };
  std::vector<ImageBytes> image_bytes_;
};

}  // namespace trnsim::net
