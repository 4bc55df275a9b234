#pragma once
// Reading a JSON file with the errors every command gives for it.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace trnsim::config {

// A key given twice in one object: refused (hand-written files: experiments, presets), or the
// last one kept (trnsim's own reports and sweep parts, up to gigabytes, whose parse the check
// makes about four times slower).
enum class DuplicateKeys { Refused, LastWins };

// Larger than any experiment, report or sweep part (a million plans' part is about 0.5 GB).
inline constexpr std::size_t kMaxJsonFileBytes = std::size_t{4} << 30;

// The JSON document in `path` (a file or a pipe); InputError "PATH: cannot open", "PATH: expected
// a JSON file, found a directory" (or a device), one larger than kMaxJsonFileBytes, arrays and
// objects nested deeper than kMaxJsonNesting (json_nesting.hpp) or "PATH: invalid JSON: ...".
nlohmann::json read_json_file(const std::string& path, DuplicateKeys keys = DuplicateKeys::Refused);

// The JSON document in `text` (the content of `file`, which names it in messages); InputError
// "FILE: invalid JSON: ..." (an empty text included).
nlohmann::json parse_json_text(const std::string& text, const std::string& file,
                               DuplicateKeys keys = DuplicateKeys::Refused);

}  // namespace trnsim::config
