// Where a model's parameters come from (candle's VarBuilder): a module asks
// its source for each parameter by canonical HuggingFace name and shape,
// and keeps what it gets. A checkpoint's source hands out the file's own
// tensors (mapped, dtype as stored: bf16 stays bf16, GGUF blocks stay
// quantised), so loading copies nothing and touches no weight page; the
// random source draws fresh weights for training.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/core/tensor.hpp"

namespace tessel {

// How the random source fills a parameter (checkpoints ignore it).
enum class WeightInit { Normal, Ones, Zeros };

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // The parameter `name`, which must have `shape`: E4001 naming the tensor
  // and the file when it is missing or has another shape.
  virtual Tensor take(const std::string& name, const Shape& shape,
                      WeightInit init) = 0;
  virtual bool contains(const std::string& name) const = 0;
  // Tensors of the source that no take() asked for, by name.
  virtual std::vector<std::string> untaken() const = 0;
};

// A scope of a source: Weights(source)["model"]["layers.0"] asks for
// "model.layers.0.<name>".
class Weights {
 public:
  explicit Weights(WeightSource& source, std::string prefix = "")
      : source_(&source), prefix_(std::move(prefix)) {}
  Weights operator[](const std::string& child) const {
    return Weights(*source_, prefix_ + child + ".");
  }
  Tensor take(const std::string& name, const Shape& shape,
              WeightInit init = WeightInit::Normal) const {
    return source_->take(prefix_ + name, shape, init);
  }
  bool contains(const std::string& name) const {
    return source_->contains(prefix_ + name);
  }

 private:
  WeightSource* source_;
  std::string prefix_;
};

// Fresh weights: Normal draws N(0, init_std) from a generator seeded with
// `seed`, in the order they are asked for (names under "lm_head" from a
// stream of their own, so that tying or untying the head leaves the rest
// as it is); Ones and Zeros are what they say.
std::unique_ptr<WeightSource> random_weights(std::uint64_t seed,
                                             double init_std);

// The given tensors under their names, handed out as they are. `origin`
// names the file(s) in messages, and `name_in_file` (when given) what the
// file calls a tensor, for files with names of their own (GGUF).
std::unique_ptr<WeightSource> tensor_weights(
    std::vector<Tensor> tensors, std::string origin,
    std::function<std::optional<std::string>(std::string_view)> name_in_file =
        {});

}  // namespace tessel
