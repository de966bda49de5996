// Runs the ONNX operator corpus (tests/conformance/onnx, see its NOTICE.md)
// through tessel: every test whose op is mapped must pass; the report goes
// to docs/conformance.md. Usage: onnx_runner CORPUS_DIR REPORT.md
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "onnx_ops.hpp"

namespace fs = std::filesystem;
using namespace tessel;

namespace {

enum class Outcome { Passed, Failed, NotMapped };

struct Result {
  std::string test;
  std::string op;
  Outcome outcome;
  std::string detail;
};

// Loads one corpus tensor, applying the manifest's "bits" convention.
Tensor load_tensor(const fs::path& corpus, const nlohmann::json& entry) {
  const std::string name = entry["dtype"].get<std::string>();
  const auto dtype = onnx::dtype_of_onnx_name(name);
  if (!dtype) throw onnx::NotMapped("dtype " + name + " is not a tessel dtype");
  Tensor raw = load_npy(corpus / entry["file"].get<std::string>());
  if (!entry.value("bits", false)) return raw;
  if (*dtype == DType::I4 || *dtype == DType::U4) return raw.to(*dtype);
  // Raw bit patterns: reinterpret the same bytes.
  return Tensor(raw.storage(), raw.shape(), raw.strides(), raw.storage_offset(),
                *dtype);
}

struct Tolerance {
  double rtol;
  double atol;
};

// ONNX's own runner uses rtol 1e-3, atol 1e-7; narrow floats get two units
// in the last place of their own precision, since one rounding of an f32
// intermediate may land on either neighbour.
Tolerance tolerance_for(DType d) {
  switch (d) {
    case DType::F16: return {2.0 * 0x1p-10, 1e-5};
    case DType::BF16: return {2.0 * 0x1p-7, 1e-5};
    default: return {1e-3, 1e-7};
  }
}

std::string compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) {
    return fmt::format("dtype {} but expected {}", dtype_name(got.dtype()),
                       dtype_name(want.dtype()));
  }
  if (got.shape() != want.shape()) {
    return fmt::format("shape {} but expected {}", shape_string(got.shape()),
                       shape_string(want.shape()));
  }
  const DType d = want.dtype();
  const bool exact_bits = d == DType::F8E4M3FN || d == DType::F8E5M2;
  if (is_floating_point(d) && !exact_bits) {
    const Tensor g = got.to(DType::F64).contiguous();
    const Tensor w = want.to(DType::F64).contiguous();
    const Tolerance tol = tolerance_for(d);
    for (std::int64_t i = 0; i < g.numel(); ++i) {
      const double a = g.const_data<double>()[i];
      const double b = w.const_data<double>()[i];
      if (std::isnan(a) && std::isnan(b)) continue;
      if (a == b) continue;
      if (std::fabs(a - b) <= tol.atol + tol.rtol * std::fabs(b)) continue;
      return fmt::format("element {}: got {} expected {}", i, a, b);
    }
    return {};
  }
  // Integers, bools and f8 bit patterns must match exactly (NaN bit
  // patterns of f8 included).
  const Tensor g =
      exact_bits ? got.contiguous() : got.to(DType::I64).contiguous();
  const Tensor w =
      exact_bits ? want.contiguous() : want.to(DType::I64).contiguous();
  if (std::memcmp(g.raw_data(), w.raw_data(),
                  static_cast<std::size_t>(g.nbytes())) != 0) {
    for (std::int64_t i = 0; i < g.numel(); ++i) {
      const auto a =
          exact_bits
              ? static_cast<const std::uint8_t*>(g.raw_data())[i]
              : static_cast<std::int64_t>(g.const_data<std::int64_t>()[i]);
      const auto b =
          exact_bits
              ? static_cast<const std::uint8_t*>(w.raw_data())[i]
              : static_cast<std::int64_t>(w.const_data<std::int64_t>()[i]);
      if (a != b) return fmt::format("element {}: got {} expected {}", i, a, b);
    }
  }
  return {};
}

Result run_test(const fs::path& corpus, const nlohmann::json& test) {
  Result r{test["name"], test["op_type"], Outcome::Passed, ""};
  const auto& table = onnx::mappings();
  const auto it = table.find(r.op);
  if (it == table.end()) {
    r.outcome = Outcome::NotMapped;
    r.detail = "op not implemented in tessel yet";
    return r;
  }
  try {
    onnx::Node node;
    node.attributes = test["attributes"];
    node.opset = test["opset"].get<int>();
    node.outputs = test["node_outputs"].size();
    std::map<std::string, Tensor> graph_inputs;
    for (const auto& in : test["inputs"]) {
      graph_inputs[in["name"].get<std::string>()] = load_tensor(corpus, in);
    }
    for (const auto& name : test["node_inputs"]) {
      const std::string n = name.get<std::string>();
      if (n.empty()) {
        node.inputs.emplace_back();
      } else {
        node.inputs.emplace_back(graph_inputs.at(n));
      }
    }
    std::vector<Tensor> expected;
    for (const auto& out : test["outputs"])
      expected.push_back(load_tensor(corpus, out));
    // Mappings return one tensor per node output position; ONNX leaves
    // unwanted optional outputs unnamed, and the corpus has no data for them.
    const std::vector<Tensor> all = it->second(node);
    std::vector<Tensor> got;
    for (std::size_t i = 0; i < all.size() && i < node.outputs; ++i) {
      if (!test["node_outputs"][i].get<std::string>().empty())
        got.push_back(all[i]);
    }
    if (got.size() != expected.size()) {
      r.outcome = Outcome::Failed;
      r.detail =
          fmt::format("{} outputs, expected {}", got.size(), expected.size());
      return r;
    }
    for (std::size_t i = 0; i < got.size(); ++i) {
      const std::string why = compare(got[i], expected[i]);
      if (!why.empty()) {
        r.outcome = Outcome::Failed;
        r.detail = fmt::format("output {}: {}", i, why);
        return r;
      }
    }
  } catch (const onnx::NotMapped& e) {
    r.outcome = Outcome::NotMapped;
    r.detail = e.what();
  } catch (const std::exception& e) {
    r.outcome = Outcome::Failed;
    r.detail = e.what();
  }
  return r;
}

void write_report(const fs::path& path, const std::vector<Result>& results,
                  const nlohmann::json& manifest) {
  struct Counts {
    int passed = 0, failed = 0, not_mapped = 0;
  };
  std::map<std::string, Counts> per_op;
  for (const auto& op : manifest["selection"]["op_types"])
    per_op[op.get<std::string>()];
  Counts total;
  for (const auto& r : results) {
    auto& c = per_op[r.op];
    auto& t = total;
    if (r.outcome == Outcome::Passed) ++c.passed, ++t.passed;
    if (r.outcome == Outcome::Failed) ++c.failed, ++t.failed;
    if (r.outcome == Outcome::NotMapped) ++c.not_mapped, ++t.not_mapped;
  }
  std::ostringstream md;
  md << "# ONNX operator conformance\n\n"
     << "Generated by `tests/conformance/onnx_runner` (a ctest test in the "
        "README's\n"
     << "test command) from the ONNX node-test corpus in "
        "`tests/conformance/onnx/`\n"
     << "(ONNX commit "
     << manifest["source"]["commit"].get<std::string>().substr(0, 12)
     << ", Apache-2.0, see its NOTICE.md). Do not edit by hand.\n\n"
     << "Outputs must have ONNX's dtype and shape. Floats compare with ONNX's "
        "own\n"
     << "tolerance (|got - want| <= 1e-7 + 1e-3 |want|), f16 and bf16 with "
        "two\n"
     << "units in their last place (rtol 2^-9 and 2^-6: one rounding of an "
        "f32\n"
     << "intermediate may land on either neighbour); f8 bit patterns, "
        "integers\n"
     << "and bools must match exactly. A mapped test that fails fails the "
        "run.\n\n"
     << fmt::format("**{} passed, {} failed, {} not mapped** of {} tests.\n\n",
                    total.passed, total.failed, total.not_mapped,
                    results.size())
     << "| op | passed | failed | not mapped |\n|---|---|---|---|\n";
  for (const auto& [op, c] : per_op) {
    md << fmt::format("| {} | {} | {} | {} |\n", op, c.passed, c.failed,
                      c.not_mapped);
  }
  md << "\n## Tests not passed\n\n| test | outcome | why |\n|---|---|---|\n";
  for (const auto& r : results) {
    if (r.outcome == Outcome::Passed) continue;
    std::string why = r.detail;
    std::replace(why.begin(), why.end(), '|', '/');
    std::replace(why.begin(), why.end(), '\n', ' ');
    md << fmt::format("| {} | {} | {} |\n", r.test,
                      r.outcome == Outcome::Failed ? "FAILED" : "not mapped",
                      why);
  }
  std::ofstream(path) << md.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: onnx_runner CORPUS_DIR REPORT.md\n";
    return 2;
  }
  const fs::path corpus = argv[1];
  nlohmann::json manifest;
  std::ifstream(corpus / "manifest.json") >> manifest;
  std::vector<Result> results;
  int failed = 0;
  for (const auto& test : manifest["tests"]) {
    results.push_back(run_test(corpus, test));
    if (results.back().outcome == Outcome::Failed) {
      ++failed;
      std::cout << "FAILED " << results.back().test << ": "
                << results.back().detail << "\n";
    }
  }
  write_report(argv[2], results, manifest);
  std::cout << results.size() << " tests, " << failed << " failed; report in "
            << argv[2] << "\n";
  return failed == 0 ? 0 : 1;
}
