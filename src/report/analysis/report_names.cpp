// Spellings of the cost model's and the plan's enums in the reports (declared in step_report.hpp).
#include "trnsim/report/analysis/step_report.hpp"

#include "trnsim/enum_names.hpp"

namespace trnsim::report {

std::string_view engine_name(cost::Engine e) { return trnsim::to_string(e); }
std::string_view op_class_name(cost::OpClass c) { return trnsim::to_string(c); }
std::string_view schedule_name(workload::PipelineSchedule s) { return trnsim::to_string(s); }
std::string recompute_name(workload::Recompute r) { return workload::recompute_text(r); }

}  // namespace trnsim::report
