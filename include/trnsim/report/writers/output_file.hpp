#pragma once
// Writing an output file whole or not at all: every file trnsim writes (--json, --csv, --html,
// --trace, sweep and merge outputs, --dot) goes through here. The content is written to a
// temporary file in the same directory (".NAME.tmp-XXXXXX") and renamed over `path` only when
// complete, so a reader never sees a truncated file: an error removes the temporary, and so does
// SIGINT or SIGTERM once remove_partial_outputs_on_signal() is installed.
#include <functional>
#include <ostream>
#include <string>

namespace trnsim::report {

// Contract: `path` holds exactly what `write` wrote, or (on an exception, from `write` or from the
// file system) is left as it was. Throws InputError naming the path when it cannot be written (no
// such directory, a directory in its place, no permission, disk full). A path that exists and is
// not a regular file (/dev/stdout, a pipe) is written in place: it cannot be renamed over.
void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& write);
void write_output_file(const std::string& path, const std::string& text);

// Contract: throws the InputError write_output_file(path, ...) would throw for a path it cannot
// create (a directory in its place, its directory missing or not writable), having written and
// removed an empty temporary beside it; nothing otherwise, `path` left as it was. For commands
// that check every output before their work, so that one bad path fails them before anything is
// simulated or written.
void check_output_file(const std::string& path);

// Contract: check_output_file, and where `path` exists and is not empty, that append_output_file
// would take it: its first line is `header` (the same InputError otherwise).
void check_append_output_file(const std::string& path, const std::string& header);

// Contract: appends `text` to `path` (created when missing) by rewriting it whole through
// write_output_file: a reader sees the old content or the new one, never half a row. `header`,
// when not empty, is written first into a missing or empty file; an existing file whose first line
// is not `header` is refused (InputError). Two processes appending at once may lose one row, never
// corrupt the file.
void append_output_file(const std::string& path, const std::string& header, const std::string& text);

// Installs handlers for SIGINT and SIGTERM that remove the temporaries of the writes in progress
// and then end the process by the same signal (its exit status says which). Call once, from main.
void remove_partial_outputs_on_signal();

}  // namespace trnsim::report
