#include "output_file.hpp"

#include "trnsim/report/writers/output_file.hpp"

namespace trnsim::cli {

void write_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  report::write_output_file(path, write);
}

void write_file(const std::string& path, const std::string& text) { report::write_output_file(path, text); }

void check_output_paths(std::initializer_list<std::string> paths) {
  for (const std::string& p : paths) {
    if (!p.empty()) report::check_output_file(p);
  }
}

}  // namespace trnsim::cli
