#pragma once
// Writing an output file the user asked for (--json, --html, --trace, --csv of validate, sweep and
// merge outputs, --dot): whole or not at all (report::write_output_file: a temporary in the same
// directory, renamed when complete; SIGINT and SIGTERM remove it).
#include <functional>
#include <initializer_list>
#include <ostream>
#include <string>

namespace trnsim::cli {

// Lets `write` fill `path` atomically; throws InputError naming the path when the file cannot be
// written.
void write_file(const std::string& path, const std::function<void(std::ostream&)>& write);
// The same for a text already in memory.
void write_file(const std::string& path, const std::string& text);
// Every output the user asked for (empty paths: not asked) checked before the command's work
// (report::check_output_file): one that cannot be written fails the command before anything is
// simulated or written, not after the outputs before it were.
void check_output_paths(std::initializer_list<std::string> paths);

}  // namespace trnsim::cli
