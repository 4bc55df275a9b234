#pragma once
// Writing an output file the user asked for (--json, --html, --trace, --csv of validate).
#include <functional>
#include <ostream>
#include <string>

namespace trnsim::cli {

// Opens `path`, lets `write` fill it and flushes; throws InputError naming the path when the file
// cannot be opened or written.
void write_file(const std::string& path, const std::function<void(std::ostream&)>& write);
// The same for a text already in memory.
void write_file(const std::string& path, const std::string& text);

}  // namespace trnsim::cli
