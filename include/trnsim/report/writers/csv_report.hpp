#pragma once
// One CSV row per run (`trnsim run --csv F`): the headline figures, for spreadsheets and for
// comparing runs. Numbers are printed with a fixed format ({:.6g}, memory {:.3f}), so the same
// inputs give byte-identical rows. Fields holding a comma, quote or newline are quoted (RFC 4180).
#include <string>

#include "trnsim/report/analysis/step_report.hpp"

namespace trnsim::report {

// Which experiment a row comes from.
struct RunLabel {
  std::string file;  // the experiment file as given on the command line
  std::string id;    // the experiment's id, else its name
};

// experiment_file,experiment_id,model,instance,instances,chips,tp,pp,dp,micro_batch,virtual_stages,
// schedule,recompute,sequence_parallel,zero,network,step_time_s,tokens_per_s,sequences_per_s,mfu,
// hfu,peak_memory_GiB,fits,top_finding   (no trailing newline)
// One CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, quote or newline.
std::string csv_field(const std::string& text);

std::string csv_header();
// The row of `report` (no trailing newline). peak_memory_GiB: the largest stage total per rank;
// fits: every stage fits; top_finding: the first finding's rule, empty when there is none.
std::string csv_row(const StepReport& report, const RunLabel& label);

// Contract: appends the row to `path`, writing the header first when the file is missing or
// empty. Throws InputError when the file cannot be written, or when its first line is not this
// header (a file of another kind or another schema).
void append_csv(const std::string& path, const StepReport& report, const RunLabel& label);
// Contract: throws what append_csv would throw for `path` before writing anything (a path that
// cannot be created, a file of another kind by its first line); nothing otherwise.
void check_append_csv(const std::string& path);

}  // namespace trnsim::report
