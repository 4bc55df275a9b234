// The JSON report against its documentation: the key paths kept here, the README's "JSON report"
// table and a produced report must name the same set.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "report_support.hpp"
#include "trnsim/report/writers/json_report.hpp"

using namespace trnsim;
using nlohmann::json;

namespace {

// The documented key paths (README notation: `a.b`, `a[].b`, `{x,y}` alternatives).
const std::vector<std::string> kDocumentedPaths = {
    "schema_version",
    "experiment",
    "results.{step_time_s,sequences_per_s,tokens_per_s}",
    "results.{model_flops_per_step,hardware_flops_per_step,peak_flops_per_s,mfu,hfu}",
    "results.{ranks,simulated_ranks,tasks,events}",
    "results.fast_forward",
    "breakdown.{rank,stage}",
    "breakdown.seconds.{forward,backward,recompute,optimizer,exposed_tp_comm,pipeline_send_recv,exposed_dp_comm,"
    "pipeline_bubble}",
    "engine_busy_s.{tensor,vector,scalar,hbm}",
    "op_class_s.{matmul,attention,norm,activation,elementwise,embedding,loss,optimizer}",
    "memory[].{stage,parameters,units_in_flight,fits}",
    "memory[].{weights_bytes,gradients_bytes,optimizer_bytes,activations_bytes,embedding_logits_bytes,"
    "workspace_bytes,total_bytes,capacity_bytes}",
    "stage_compute_s",
    "hbm_bound_s.{matmul,attention,norm,activation,elementwise,embedding,loss,optimizer}.seconds",
    "hbm_bound_s.{matmul,attention,norm,activation,elementwise,embedding,loss,optimizer}.excess_s",
    "ideal_compute_s",
    "critical_path.{length_s,segments}",
    "critical_path.seconds.{forward,backward,recompute,optimizer,tp_comm,pp_send_recv,dp_comm,waiting}",
    "critical_path.by_rank[].{rank,stage,seconds}",
    "critical_path.top[].{name,category,seconds,count}",
    "links.by_kind[].{kind,links,bytes,mean_busy_fraction,max_busy_fraction}",
    "links.top[].{id,kind,src,dst,bandwidth_Bps,bytes,busy_s,busy_fraction}",
    "findings[].{rule,seconds,evidence,suggestion}",
    "choices",
    "calibration.{family,record,in_family,rows,mean_abs_error_pct,worst_error_pct,leave_one_out_error_pct,"
    "leave_one_family_out_error_pct,cross_family_error_pct,note}",
};

// Expands the first {x,y,...} group of `pattern`, recursively.
void expand(const std::string& pattern, std::set<std::string>& out) {
  const auto open = pattern.find('{');
  if (open == std::string::npos) {
    out.insert(pattern);
    return;
  }
  const auto close = pattern.find('}', open);
  REQUIRE(close != std::string::npos);
  std::stringstream options(pattern.substr(open + 1, close - open - 1));
  for (std::string o; std::getline(options, o, ',');) {
    expand(pattern.substr(0, open) + o + pattern.substr(close + 1), out);
  }
}

std::set<std::string> expand_all(const std::vector<std::string>& patterns) {
  std::set<std::string> out;
  for (const auto& p : patterns) expand(p, out);
  return out;
}

// Key paths of a report: objects descend (except `experiment`, documented by the experiment
// schema), arrays of objects descend as `[]`, anything else is a leaf.
void collect(const json& j, const std::string& path, std::set<std::string>& out) {
  if (path == "experiment") {
    out.insert(path);
    return;
  }
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) collect(value, path.empty() ? key : path + "." + key, out);
    return;
  }
  if (j.is_array() && !j.empty() && j.front().is_object()) {
    for (const auto& e : j) collect(e, path + "[]", out);
    return;
  }
  out.insert(path);
}

// The first backticked token of every table row in README's "JSON report" section.
std::vector<std::string> readme_paths() {
  std::ifstream in(std::string(TRNSIM_TEST_SOURCE_DIR) + "/README.md");
  REQUIRE(in);
  std::vector<std::string> out;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("### ", 0) == 0) inside = line.find("JSON report") != std::string::npos;
    if (!inside || line.rfind("| `", 0) != 0) continue;
    const auto end = line.find('`', 3);
    out.push_back(line.substr(3, end - 3));
  }
  return out;
}

// A software preset's defaults and recipes keep null for what the stack does not state (the
// plan rule then decides); everything else of the resolved experiment is filled.
void no_nulls(const json& j, const std::string& path) {
  INFO(path);
  if (path.find("/software/defaults/") != std::string::npos || path.find("/software/recipes/") != std::string::npos)
    return;
  // A collective figure the hardware does not state is null: the runtime release gives it, and
  // the calibration shows it under "derived" (config::apply_collective_runtime).
  if (const auto at = path.find("/cluster/calibration/collective_"); at != std::string::npos && j.is_null()) return;
  CHECK_FALSE(j.is_null());
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) no_nulls(value, path + "/" + key);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) no_nulls(j[i], path + "/" + std::to_string(i));
  }
}

// PP 2 x TP 4 x DP 4 on one trn1.32xlarge, two fields left null ("not published"): every array
// of the report has elements (two stages, links, findings, choices).
test::AnalysedRun documented_run() {
  json doc = test::small_decoder(1, 2, 4, 2, 4, 16);
  doc["training"]["micro_batch"] = nullptr;
  doc["parallelism"]["zero"] = nullptr;
  doc["parallelism"].erase("schedule");
  return test::analyse_json(doc);
}

}  // namespace

TEST_CASE("json report: README documents exactly the key paths this test keeps") {
  const auto readme = readme_paths();
  CHECK(expand_all(readme) == expand_all(kDocumentedPaths));
  CHECK(readme.size() == kDocumentedPaths.size());
}

TEST_CASE("json report: a produced report has exactly the documented key paths") {
  auto a = documented_run();
  a.report.calibration = report::error_bar("Trainium x neuronx-distributed@2.19", nullptr);  // as `run` sets it
  const json j = report::to_json(a.report, a.experiment.resolved);
  REQUIRE_FALSE(a.report.findings.empty());
  REQUIRE_FALSE(a.report.links.top.empty());
  REQUIRE_FALSE(a.report.choices.empty());
  std::set<std::string> produced;
  collect(j, "", produced);
  const auto documented = expand_all(kDocumentedPaths);
  for (const auto& p : produced) {
    INFO("produced but not documented: " << p);
    CHECK(documented.count(p) == 1);
  }
  for (const auto& p : documented) {
    INFO("documented but not produced: " << p);
    CHECK(produced.count(p) == 1);
  }
  CHECK(j["schema_version"] == report::kReportSchemaVersion);
}

TEST_CASE("json report: the embedded experiment is fully resolved, the plan's choices included") {
  const auto a = documented_run();
  const json j = report::to_json(a.report, a.experiment.resolved);
  const json& ex = j["experiment"];
  no_nulls(ex, "experiment");
  // Presets expanded: the instance's chip and links are in the document, not just its name.
  CHECK(ex["cluster"]["instance"] == "trn1.32xlarge");
  CHECK(ex["cluster"].contains("chip"));
  CHECK(ex["cluster"].contains("efa"));
  CHECK(ex["model"].is_object());
  // Unset fields carry what the rule chose (replay/plan_rule.hpp): the plan that ran; the set
  // ones (sequence parallel off, recompute none) kept.
  const workload::Plan& p = a.report.plan;
  CHECK(ex["training"]["micro_batch"] == p.micro_batch);
  CHECK(ex["parallelism"]["zero"] == p.zero);
  CHECK(ex["parallelism"]["schedule"] == (p.virtual_stages > 1 ? "1f1b-interleaved" : "1f1b"));
  CHECK(ex["parallelism"]["virtual_stages"] == p.virtual_stages);
  CHECK(ex["parallelism"]["sequence_parallel"] == false);
  CHECK(ex["parallelism"]["recompute"] == "none");
  // The same report twice is byte-identical.
  CHECK(report::to_json(a.report, a.experiment.resolved).dump() == j.dump());
}
