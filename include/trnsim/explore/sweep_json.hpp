#pragma once
// A sweep as JSON (`trnsim sweep --json F`): the whole sweep, or one shard of it (`--shard I/N`),
// which `trnsim merge` reads back. Lossless: numbers are written so that they read back to the
// same doubles, so merged shards print byte for byte what the unsharded sweep prints.
//
// {"kind": "trnsim-sweep", "schema_version": 1, "experiment": FILE, "title": ..., "vary": [PATH...],
//  "points": N, "shard": I, "shards": N,
//  "plans": [{"index", "vary": [...], "status", "reason", "detail", "tp", ..., "step_time_s", ...}]}
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/explore/sweep.hpp"

namespace trnsim::explore {

inline constexpr int kSweepSchemaVersion = 1;

nlohmann::json to_json(const SweepResult& result);
// One point as the "plans" array holds it (sensitivity's JSON embeds plans the same way).
nlohmann::json to_json(const PlanOutcome& outcome);

// Contract: the result `document` holds; throws InputError naming `name` and the JSON path when
// it is not a sweep of this schema version.
SweepResult sweep_from_json(const nlohmann::json& document, const std::string& name);

// Merges shards (`names[k]` names parts[k] in messages) into what the unsharded sweep gives.
// Throws InputError naming the part when the parts are not the shards 0..N-1 of one sweep, each once.
SweepResult merge_shards(std::vector<SweepResult> parts, const std::vector<std::string>& names);

}  // namespace trnsim::explore
