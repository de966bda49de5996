// mergekit's method names and the defaults its registry gives each
// generalized task-arithmetic method (merge_methods/registry.py).
#include <array>
#include <string>
#include <utility>

#include "tessel/merge/methods.hpp"

namespace tessel::merge {

namespace {

constexpr std::array<std::pair<Method, std::string_view>, 13> kNames{{
    {Method::Linear, "linear"},
    {Method::TaskArithmetic, "task_arithmetic"},
    {Method::Slerp, "slerp"},
    {Method::Nuslerp, "nuslerp"},
    {Method::Ties, "ties"},
    {Method::DareLinear, "dare_linear"},
    {Method::DareTies, "dare_ties"},
    {Method::Breadcrumbs, "breadcrumbs"},
    {Method::BreadcrumbsTies, "breadcrumbs_ties"},
    {Method::Della, "della"},
    {Method::DellaLinear, "della_linear"},
    {Method::ModelStock, "model_stock"},
    {Method::Passthrough, "passthrough"},
}};

}  // namespace

std::optional<Method> parse_method(std::string_view name) {
  for (const auto& [m, n] : kNames) {
    if (n == name) return m;
  }
  return std::nullopt;
}

std::string_view method_name(Method method) {
  for (const auto& [m, n] : kNames) {
    if (m == method) return n;
  }
  return "?";
}

std::string supported_methods() {
  std::string out;
  for (const auto& [m, n] : kNames) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::optional<TaskArithmeticOptions> task_arithmetic_defaults(Method method) {
  using C = Consensus;
  using S = Sparsification;
  // {consensus, sparsification, normalize, rescale}
  const auto make = [](C c, S s, bool normalize, bool rescale) {
    return TaskArithmeticOptions{c, s, normalize, rescale, 1.0};
  };
  switch (method) {
    case Method::TaskArithmetic: return make(C::None, S::None, false, false);
    case Method::Ties: return make(C::Sum, S::Magnitude, true, false);
    case Method::DareTies: return make(C::Sum, S::Random, false, true);
    case Method::DareLinear: return make(C::None, S::Random, false, true);
    case Method::Breadcrumbs:
      return make(C::None, S::MagnitudeOutliers, false, false);
    case Method::BreadcrumbsTies:
      return make(C::Sum, S::MagnitudeOutliers, false, false);
    case Method::Della: return make(C::Sum, S::DellaMagprune, true, true);
    case Method::DellaLinear:
      return make(C::None, S::DellaMagprune, false, true);
    default: return std::nullopt;
  }
}

}  // namespace tessel::merge
