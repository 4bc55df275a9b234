#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace trnsim::config::detail {

// The JSON document in `path`; InputError "PATH: cannot open" or "PATH: invalid JSON: ...".
nlohmann::json read_json_file(const std::string& path);

}  // namespace trnsim::config::detail
