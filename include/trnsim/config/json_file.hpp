#pragma once
// Reading a JSON file with the errors every command gives for it.
#include <string>

#include <nlohmann/json.hpp>

namespace trnsim::config {

// The JSON document in `path`; InputError "PATH: cannot open", "PATH: is a directory" or
// "PATH: invalid JSON: ...".
nlohmann::json read_json_file(const std::string& path);

// The JSON document in `text` (the content of `file`, which names it in messages); InputError
// "FILE: invalid JSON: ..." (an empty text included).
nlohmann::json parse_json_text(const std::string& text, const std::string& file);

}  // namespace trnsim::config
