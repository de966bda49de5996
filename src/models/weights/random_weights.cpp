// The weight source of a model trained from scratch.
#include "core/check.hpp"
#include "tessel/core/random.hpp"
#include "tessel/models/weights.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

class RandomWeights final : public WeightSource {
 public:
  RandomWeights(std::uint64_t seed, double init_std)
      : body_(seed), head_(seed ^ 0x9e3779b97f4a7c15ull), std_(init_std) {}

  Tensor take(const std::string& name, const Shape& shape,
              WeightInit init) override {
    switch (init) {
      case WeightInit::Ones: return ones(shape);
      case WeightInit::Zeros: return zeros(shape);
      case WeightInit::Normal: break;
    }
    Generator& g = name.rfind("lm_head", 0) == 0 ? head_ : body_;
    return mul(randn(shape, g), std_);
  }
  // Holds nothing beyond what is asked for: optional tensors stay absent.
  bool contains(const std::string&) const override { return false; }
  std::vector<std::string> untaken() const override { return {}; }

 private:
  Generator body_;
  Generator head_;
  double std_;
};

}  // namespace

std::unique_ptr<WeightSource> random_weights(std::uint64_t seed,
                                             double init_std) {
  return std::make_unique<RandomWeights>(seed, init_std);
}

}  // namespace tessel
