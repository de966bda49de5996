// The weight source over a checkpoint's tensors: each is handed out as the
// file holds it, after its shape is checked against the module's.
#include <map>
#include <set>

#include "core/check.hpp"
#include "tessel/models/weights.hpp"

namespace tessel {

namespace {

class TensorWeights final : public WeightSource {
 public:
  TensorWeights(
      std::vector<Tensor> tensors, std::string origin,
      std::function<std::optional<std::string>(std::string_view)> name_in_file)
      : origin_(std::move(origin)), name_in_file_(std::move(name_in_file)) {
    for (Tensor& t : tensors) {
      const std::string name = t.name();
      TESSEL_CHECK(tensors_.emplace(name, std::move(t)).second, BadConfig,
                   "load model", "'{}' appears twice in {}", name, origin_);
    }
  }

  Tensor take(const std::string& name, const Shape& shape,
              WeightInit) override {
    const auto it = tensors_.find(name);
    TESSEL_CHECK(it != tensors_.end(), BadConfig, "load model",
                 "{} has no tensor {}, which the model's configuration "
                 "needs",
                 origin_, described(name));
    TESSEL_CHECK(it->second.shape() == shape, BadConfig, "load model",
                 "tensor {} in {} has shape {} but the configuration "
                 "makes it {}",
                 described(name), origin_, shape_string(it->second.shape()),
                 shape_string(shape));
    taken_.insert(name);
    return it->second;
  }

  bool contains(const std::string& name) const override {
    return tensors_.count(name) != 0;
  }

  std::vector<std::string> untaken() const override {
    std::vector<std::string> out;
    for (const auto& [name, t] : tensors_) {
      if (taken_.count(name) == 0) out.push_back(name);
    }
    return out;
  }

 private:
  // 'model.embed_tokens.weight' (token_embd.weight in the file)
  std::string described(const std::string& name) const {
    const std::optional<std::string> own =
        name_in_file_ ? name_in_file_(name) : std::nullopt;
    return own ? fmt::format("'{}' ({} in the file)", name, *own)
               : fmt::format("'{}'", name);
  }

  std::map<std::string, Tensor> tensors_;
  std::set<std::string> taken_;
  std::string origin_;
  std::function<std::optional<std::string>(std::string_view)> name_in_file_;
};

}  // namespace

std::unique_ptr<WeightSource> tensor_weights(
    std::vector<Tensor> tensors, std::string origin,
    std::function<std::optional<std::string>(std::string_view)> name_in_file) {
  return std::make_unique<TensorWeights>(std::move(tensors), std::move(origin),
                                         std::move(name_in_file));
}

}  // namespace tessel
