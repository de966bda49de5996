// `tessel ops`: the op catalogue (tessel/autograd/op_catalogue.hpp) as a
// table or JSON — every op, or with --core-v1 the shape-engine seed's 17.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "tessel/autograd/op_catalogue.hpp"

namespace tessel::cli {

namespace {

// "1", "2 (+1 optional)", "list".
std::string operand_text(const OpDescription& d) {
  if (d.variadic) return "list";
  std::string s = std::to_string(d.operands);
  if (d.optional_operands > 0) {
    s += fmt::format(" (+{} optional)", d.optional_operands);
  }
  return s;
}

// "all", "all but bool c64 c128" when few are missing, else the names.
std::string dtype_text(const std::vector<DType>& dtypes) {
  std::vector<std::string> admitted, refused;
  for (const DType d : catalogue_dtypes()) {
    const bool in = std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
    (in ? admitted : refused).emplace_back(dtype_name(d));
  }
  if (refused.empty()) return "all";
  if (admitted.empty()) return "none";
  if (refused.size() <= 4)
    return fmt::format("all but {}", fmt::join(refused, " "));
  return fmt::format("{}", fmt::join(admitted, " "));
}

nlohmann::json as_json(const OpDescription& d) {
  nlohmann::json dtypes = nlohmann::json::array();
  for (const DType t : d.dtypes) dtypes.push_back(std::string(dtype_name(t)));
  return {{"name", d.name},
          {"core_v1", d.core_v1 ? nlohmann::json(*d.core_v1) : nullptr},
          {"kind", d.kind},
          {"operands", d.operands},
          {"optional_operands", d.optional_operands},
          {"variadic", d.variadic},
          {"differentiable", d.differentiable},
          {"dtypes", dtypes}};
}

int run_ops(bool core_v1, bool json) {
  const std::vector<OpDescription> ops =
      core_v1 ? core_v1_ops() : op_catalogue();
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const OpDescription& d : ops) out.push_back(as_json(d));
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  std::size_t width = 4;
  for (const OpDescription& d : ops) {
    const std::size_t w =
        d.name.size() +
        (d.core_v1 && *d.core_v1 != d.name ? d.core_v1->size() + 3 : 0);
    width = std::max(width, w);
  }
  fmt::print("{:<{}}  {:<15} {:<17} {:<14} {}\n", "op", width, "kind",
             "operands", "differentiable", "dtypes");
  for (const OpDescription& d : ops) {
    std::string name = d.name;
    if (d.core_v1 && *d.core_v1 != d.name) name += " (" + *d.core_v1 + ")";
    fmt::print("{:<{}}  {:<15} {:<17} {:<14} {}\n", name, width, d.kind,
               operand_text(d), d.differentiable ? "yes" : "no",
               dtype_text(d.dtypes));
  }
  fmt::print(
      "\n{} ops{}. Block-quantised operands of element-wise ops and "
      "reductions dequantise to f32.\n",
      ops.size(), core_v1 ? " (Core v1, the shape-engine seed's order)" : "");
  return 0;
}

}  // namespace

Runner add_ops_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "ops",
      "The op catalogue: operands, admissible dtypes, differentiability");
  auto core_v1 = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--core-v1", *core_v1,
                "Only the 17 ops of the Core v1 catalogue (shape-engine seed)");
  cmd->add_flag("--json", *json, "Print a JSON array, one object per op");
  return [core_v1, json] { return run_ops(*core_v1, *json); };
}

}  // namespace tessel::cli
