// tessel.merge: the model-merge methods of the C++ API, one tensor at a
// time (mergekit's methods, parameters and defaults; docs/merge.md), and
// merge.run, the whole-checkpoint merge of a mergekit YAML (what `tessel
// merge` runs).
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "bindings.hpp"

namespace tessel::python {

namespace {

std::vector<Tensor> tensors_of(nb::handle sequence) {
  std::vector<Tensor> out;
  for (nb::handle item : nb::borrow<nb::sequence>(sequence))
    out.push_back(to_tensor(item));
  return out;
}

// A per-model parameter: one number for every model, or one per model.
std::vector<double> per_model(nb::handle value, std::size_t models,
                              double fallback, const char* name) {
  if (value.is_none()) return std::vector<double>(models, fallback);
  if (PyFloat_Check(value.ptr()) || PyLong_Check(value.ptr()))
    return std::vector<double>(models, nb::cast<double>(value));
  std::vector<double> out;
  for (nb::handle item : nb::borrow<nb::sequence>(value))
    out.push_back(nb::cast<double>(item));
  if (out.size() != models) {
    throw_error(ErrorCode::BadConfig, std::string("[merge] ") + name + " has " +
                                          std::to_string(out.size()) +
                                          " values for " +
                                          std::to_string(models) + " models");
  }
  return out;
}

merge::Method method_of(const std::string& name) {
  const auto method = merge::parse_method(name);
  if (!method) {
    throw_error(ErrorCode::BadConfig,
                "[merge] unknown method '" + name +
                    "'; supported: " + merge::supported_methods());
  }
  return *method;
}

}  // namespace

void bind_merge(nb::module_& parent) {
  nb::module_ m = parent.def_submodule(
      "merge", "Model-merge methods on tensors (mergekit's), in float32.");
  m.def(
      "methods",
      [] {
        std::vector<std::string> names;
        for (int i = 0; i <= static_cast<int>(merge::Method::Passthrough); ++i)
          names.emplace_back(merge::method_name(static_cast<merge::Method>(i)));
        return names;
      },
      "mergekit's names of the methods tessel implements.");
  m.def(
      "linear",
      [](nb::handle tensors, nb::handle weights, bool normalize) {
        const std::vector<Tensor> inputs = tensors_of(tensors);
        const std::vector<double> w =
            per_model(weights, inputs.size(), 1.0, "weights");
        return without_gil_if(
            true, [&] { return merge::linear(inputs, w, normalize); });
      },
      nb::arg("tensors"), nb::arg("weights") = nb::none(),
      nb::arg("normalize") = true,
      "sum(weight * tensor), divided by the sum of the weights when "
      "normalize.");
  m.def(
      "slerp",
      [](nb::handle base, nb::handle other, double t) {
        const Tensor a = to_tensor(base), b = to_tensor(other);
        return without_gil_if(true, [&] { return merge::slerp(a, b, t); });
      },
      nb::arg("base"), nb::arg("other"), nb::arg("t"),
      "Spherical interpolation from base (t = 0) to other (t = 1), the angle "
      "in float64; linear when the tensors are nearly colinear.");
  m.def(
      "nuslerp",
      [](nb::handle a, nb::handle b, nb::handle base, double weight_a,
         double weight_b, bool row_wise, bool flatten) {
        const Tensor ta = to_tensor(a), tb = to_tensor(b);
        const Tensor tbase = base.is_none() ? Tensor() : to_tensor(base);
        const merge::NuslerpOptions o{weight_a, weight_b, row_wise, flatten};
        return without_gil_if(true, [&] {
          return merge::nuslerp(base.is_none() ? nullptr : &tbase, ta, tb, o);
        });
      },
      nb::arg("a"), nb::arg("b"), nb::arg("base") = nb::none(), nb::kw_only(),
      nb::arg("weight_a") = 1.0, nb::arg("weight_b") = 1.0,
      nb::arg("row_wise") = false, nb::arg("flatten") = true,
      "mergekit's nuslerp of a and b (of their deltas from base when given).");
  m.def(
      "task_arithmetic",
      [](nb::handle base, nb::handle tensors, const std::string& method,
         nb::handle weights, nb::handle density, double gamma, double epsilon,
         double lambda, nb::handle normalize, nb::handle rescale,
         std::uint64_t seed) {
        const merge::Method m_ = method_of(method);
        auto options = merge::task_arithmetic_defaults(m_);
        if (!options) {
          throw_error(ErrorCode::BadConfig,
                      "[merge] '" + method +
                          "' is not a task-arithmetic method (task_arithmetic, "
                          "ties, dare_linear, dare_ties, breadcrumbs, "
                          "breadcrumbs_ties, della, della_linear)");
        }
        // Handles, not std::optional<bool>: GCC 12 warns that the latter's
        // caster may be read uninitialised.
        if (!normalize.is_none())
          options->normalize = nb::cast<bool>(normalize);
        if (!rescale.is_none()) options->rescale = nb::cast<bool>(rescale);
        options->lambda = lambda;
        const Tensor b = to_tensor(base);
        const std::vector<Tensor> models = tensors_of(tensors);
        const auto w = per_model(weights, models.size(), 1.0, "weights");
        const auto d = per_model(density, models.size(), 1.0, "density");
        std::vector<merge::TaskInput> inputs;
        for (std::size_t i = 0; i < models.size(); ++i) {
          inputs.push_back({models[i],
                            w[i],
                            d[i],
                            gamma,
                            epsilon,
                            {seed, static_cast<std::uint64_t>(i)}});
        }
        return without_gil_if(
            true, [&] { return merge::task_arithmetic(b, inputs, *options); });
      },
      nb::arg("base"), nb::arg("tensors"), nb::kw_only(),
      nb::arg("method") = "task_arithmetic", nb::arg("weights") = nb::none(),
      nb::arg("density") = nb::none(), nb::arg("gamma") = 0.01,
      nb::arg("epsilon") = 0.15, nb::arg("lambda_") = 1.0,
      nb::arg("normalize") = nb::none(), nb::arg("rescale") = nb::none(),
      nb::arg("seed") = 0,
      "base + lambda * the merged deltas of `tensors` from base, as "
      "`method` merges them (task_arithmetic, ties, dare_linear, dare_ties, "
      "breadcrumbs, breadcrumbs_ties, della, della_linear; mergekit's "
      "defaults for normalize and rescale). weights and density: one value "
      "or one per tensor; random masks from `seed`, stream i for tensor i.");
  m.def(
      "model_stock",
      [](nb::handle base, nb::handle others, bool filter_wise) {
        const Tensor b = to_tensor(base);
        const std::vector<Tensor> o = tensors_of(others);
        return without_gil_if(
            true, [&] { return merge::model_stock(b, o, filter_wise); });
      },
      nb::arg("base"), nb::arg("others"), nb::arg("filter_wise") = false,
      "Model Stock: from base towards the mean of the others by their "
      "deltas' mean pairwise cosine.");
  m.def(
      "run",
      [](const std::filesystem::path& config,
         const std::filesystem::path& output, std::uint64_t seed,
         const std::string& quantize, std::int64_t shard_bytes,
         const std::string& tokenizer_pre, nb::handle progress) {
        merge::RunOptions o;
        o.config = config;
        o.output = output;
        o.seed = seed;
        o.quantize = quantize;
        o.shard_bytes = shard_bytes;
        o.tokenizer_pre = tokenizer_pre;
        if (!progress.is_none()) {
          // Called with the GIL taken back; an exception it raises stops
          // the merge (nothing is left at the output) and reaches the
          // caller.
          o.on_progress = [progress](const merge::RunProgress& p) {
            nb::gil_scoped_acquire gil;
            progress(p.done, p.total, p.bytes_read, std::string(p.tensor));
          };
        }
        const merge::RunReport r =
            without_gil_if(true, [&] { return merge::run(o); });
        nb::dict report;
        report["method"] = r.method;
        report["output_format"] = r.output_format;
        report["models"] = r.models;
        report["tensors"] = r.tensors;
        report["layers"] = r.layers;
        report["bytes_read"] = r.bytes_read;
        report["bytes_written"] = r.bytes_written;
        report["seconds"] = r.seconds;
        report["notes"] = r.notes;
        return report;
      },
      nb::arg("config"), nb::arg("output"), nb::kw_only(), nb::arg("seed") = 0,
      nb::arg("quantize") = "", nb::arg("shard_bytes") = 5'000'000'000,
      nb::arg("tokenizer_pre") = "", nb::arg("progress") = nb::none(),
      "Runs a mergekit YAML over local HF directories and GGUF files into "
      "`output` (a directory, or a .gguf file; written whole or not at "
      "all), one tensor in memory at a time. `quantize` names a llama.cpp "
      "mix for a GGUF output; `progress(done, total, bytes_read, tensor)` "
      "is called after each tensor. Returns a summary dict.");
}

}  // namespace tessel::python
