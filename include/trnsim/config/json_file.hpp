#pragma once
// Reading a JSON file with the errors every command gives for it.
#include <string>

#include <nlohmann/json.hpp>

namespace trnsim::config {

// The JSON document in `path`; InputError "PATH: cannot open" or "PATH: invalid JSON: ...".
nlohmann::json read_json_file(const std::string& path);

}  // namespace trnsim::config
