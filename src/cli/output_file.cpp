#include "output_file.hpp"

#include "trnsim/report/writers/output_file.hpp"

namespace trnsim::cli {

void write_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  report::write_output_file(path, write);
}

void write_file(const std::string& path, const std::string& text) { report::write_output_file(path, text); }

}  // namespace trnsim::cli
