#include "trnsim/report/writers/csv_report.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "trnsim/report/writers/output_file.hpp"
#include "trnsim/units.hpp"

namespace trnsim::report {
namespace {

using units::kGiB;


std::string number(double v) { return fmt::format("{:.6g}", v); }

}  // namespace

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_header() {
  return "experiment_file,experiment_id,model,instance,instances,chips,tp,pp,dp,micro_batch,virtual_stages,"
         "schedule,recompute,sequence_parallel,zero,network,step_time_s,tokens_per_s,sequences_per_s,mfu,hfu,"
         "peak_memory_GiB,fits,top_finding";
}

std::string csv_row(const StepReport& r, const RunLabel& label) {
  const auto& p = r.plan;
  double peak = 0;
  bool fits = true;
  for (const auto& m : r.memory) {
    peak = std::max(peak, m.memory.total());
    fits = fits && m.fits();
  }
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3f},{},{}",
                     csv_field(label.file), csv_field(label.id), csv_field(r.model), csv_field(r.instance),
                     r.instances, r.chips, p.tp, p.pp, p.dp, p.micro_batch, p.virtual_stages,
                     schedule_name(p.schedule), recompute_name(p.recompute),
                     p.sequence_parallel ? "true" : "false", p.zero, r.network, number(r.step_time_s),
                     number(r.tokens_per_s), number(r.sequences_per_s), number(r.mfu), number(r.hfu), peak / kGiB,
                     fits ? "true" : "false", r.findings.empty() ? std::string() : csv_field(r.findings.front().rule));
}

void check_append_csv(const std::string& path) { check_append_output_file(path, csv_header()); }

void append_csv(const std::string& path, const StepReport& report, const RunLabel& label) {
  // A file of another kind or schema is refused by its first line.
  append_output_file(path, csv_header(), csv_row(report, label) + '\n');
}

}  // namespace trnsim::report
