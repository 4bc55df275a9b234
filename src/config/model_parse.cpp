// A model object (configs/models/*.json, or inline in an experiment) -> workload::ModelSpec.
#include <fmt/core.h>

#include "parse.hpp"
#include "trnsim/workload/plan.hpp"

namespace trnsim::config::detail {

workload::ModelSpec parse_model(const json& value, const std::string& file, const std::string& path) {
  ObjectReader r(value, file, path);
  r.documentation();
  workload::ModelSpec m;
  m.name = r.string("name");
  m.source = r.source();
  m.arch = r.optional_choice<workload::ModelArch>("arch").value_or(workload::ModelArch::Decoder);
  m.layers = r.integer("layers", 1);
  m.hidden = r.integer("hidden", 1);
  m.heads = r.integer("heads", 1);
  m.kv_heads = r.integer_or("kv_heads", m.heads, 1);  // absent: no grouped-query attention
  m.ffn_hidden = r.integer("ffn_hidden", 1);
  m.vocab = r.integer("vocab", 1);
  m.mlp = r.choice<workload::MlpKind>("mlp");
  m.norm = r.choice<workload::NormKind>("norm");
  m.learned_positions = r.boolean_or("learned_positions", false);
  m.tied_embeddings = r.boolean_or("tied_embeddings", false);
  m.max_positions = r.integer_or("max_positions", 0, 0);
  m.biases = r.boolean_or("biases", false);
  m.experts = r.integer_or("experts", 0, 0);
  m.experts_per_token = r.integer_or("experts_per_token", 0, 0);
  r.finish();
  in_file(file, [&] { workload::check_model(m, path); });
  return m;
}

json to_json(const workload::ModelSpec& m) {
  return json{{"name", m.name},
              {"arch", trnsim::to_string(m.arch)},
              {"layers", m.layers},
              {"hidden", m.hidden},
              {"heads", m.heads},
              {"kv_heads", m.kv_heads},
              {"ffn_hidden", m.ffn_hidden},
              {"vocab", m.vocab},
              {"mlp", trnsim::to_string(m.mlp)},
              {"norm", trnsim::to_string(m.norm)},
              {"learned_positions", m.learned_positions},
              {"tied_embeddings", m.tied_embeddings},
              {"max_positions", m.max_positions},
              {"biases", m.biases},
              {"experts", m.experts},
              {"experts_per_token", m.experts_per_token}};
}

}  // namespace trnsim::config::detail
