// mergekit YAML as tessel reads it, and the plan it makes: parameter
// precedence, gradients, filters, slices, and the errors for what a
// config gets wrong.
#include <gtest/gtest.h>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using namespace tessel::merge;

double number(const std::optional<Value>& v) {
  EXPECT_TRUE(v.has_value());
  return v && std::holds_alternative<double>(*v) ? std::get<double>(*v) : NAN;
}

TEST(MergeConfig, ReadsModelsParametersAndDtypes) {
  const MergeConfig c = MergeConfig::parse(R"(
models:
  - model: a
    parameters:
      weight: 0.7
      density: [1, 0.5]
  - model: b
    parameters:
      weight: 0.3
merge_method: ties
base_model: base
parameters:
  normalize: true
  lambda: "1e-1"
dtype: bfloat16
out_dtype: float16
tokenizer_source: base
)",
                                           "t.yml");
  EXPECT_EQ(c.method, Method::Ties);
  ASSERT_EQ(c.models.size(), 2u);
  EXPECT_EQ(c.models[0].model, "a");
  EXPECT_EQ(*c.base_model, "base");
  EXPECT_EQ(*c.dtype, DType::BF16);
  EXPECT_EQ(*c.out_dtype, DType::F16);
  EXPECT_TRUE(c.tokenizer_from_base);
  EXPECT_EQ(c.referenced_models(),
            (std::vector<std::string>{"base", "a", "b"}));
  // A gradient of two numbers at t = 0.25: 1 * 0.75 + 0.5 * 0.25.
  EXPECT_DOUBLE_EQ(
      number(evaluate(c.models[0].parameters.at("density"), "x", 0.25)), 0.875);
}

TEST(MergeConfig, GradientsInterpolateAndFiltersPickCases) {
  const MergeConfig c = MergeConfig::parse(R"(
slices:
  - sources:
      - model: a
        layer_range: [0, 4]
      - model: b
        layer_range: [0, 4]
merge_method: slerp
base_model: a
parameters:
  t:
    - filter: self_attn
      value: [0, 0.5, 1]
    - filter: mlp
      value: 0.9
    - value: 0.25
)",
                                           "t.yml");
  const Setting& t = c.parameters.at("t");
  // [0, 0.5, 1] at t = 0.75: scaled 1.5, between 0.5 and 1.
  EXPECT_DOUBLE_EQ(
      number(evaluate(t, "model.layers.3.self_attn.q_proj.weight", 0.75)),
      0.75);
  EXPECT_DOUBLE_EQ(number(evaluate(t, "model.layers.0.mlp.up_proj.weight", 0)),
                   0.9);
  EXPECT_DOUBLE_EQ(number(evaluate(t, "model.norm.weight", 0)), 0.25);
}

TEST(MergeConfig, NonNumericGradientsPickAnEntry) {
  Setting s;
  s.values = {Value(true), Value(false), Value(true)};
  // floor(0.6 * 2) = 1.
  EXPECT_EQ(std::get<bool>(*evaluate(s, "", 0.6)), false);
  EXPECT_EQ(std::get<bool>(*evaluate(s, "", 1.0)), true);
}

TEST(MergeConfig, UnknownKeysAndValuesNameTheLine) {
  EXPECT_TESSEL_ERROR(MergeConfig::parse("merge_method: linear\n"
                                         "models:\n"
                                         "  - model: a\n"
                                         "residual_weight: 0.1\n",
                                         "c.yml"),
                      "E4001", "c.yml:4", "'residual_weight'");
  EXPECT_TESSEL_ERROR(MergeConfig::parse("merge_method: karcher\n"
                                         "models:\n  - model: a\n",
                                         "c.yml"),
                      "E4001", "c.yml:1", "karcher", "supported");
  EXPECT_TESSEL_ERROR(MergeConfig::parse("merge_method: linear\n"
                                         "models:\n"
                                         "  - model: a\n"
                                         "    parameters:\n"
                                         "      density: 0.5\n",
                                         "c.yml"),
                      "E4001", "c.yml:5",
                      "linear takes no parameter 'density'");
  EXPECT_TESSEL_ERROR(MergeConfig::parse("merge_method: slerp\n"
                                         "base_model: a\n"
                                         "models:\n"
                                         "  - model: a\n"
                                         "    parameters:\n"
                                         "      t: 0.5\n",
                                         "c.yml"),
                      "E4001", "c.yml:6", "whole merge");
  EXPECT_TESSEL_ERROR(MergeConfig::parse("merge_method: ties\n"
                                         "base_model: a\n"
                                         "models:\n  - model: a\n"
                                         "parameters:\n  normalize: maybe\n",
                                         "c.yml"),
                      "E4001", "c.yml:6", "boolean");
  EXPECT_TESSEL_ERROR(MergeConfig::parse("merge_method: linear\n"
                                         "models:\n  - model: a\n"
                                         "dtype: int8\n",
                                         "c.yml"),
                      "E4001", "c.yml:4", "int8");
  EXPECT_TESSEL_ERROR(MergeConfig::parse("merge_method: linear\n"
                                         "models:\n  - model: a\n"
                                         "tokenizer_source: union\n",
                                         "c.yml"),
                      "E4001", "union");
  EXPECT_TESSEL_ERROR(MergeConfig::parse("merge_method: linear\n", "c.yml"),
                      "E4001", "exactly one of 'models' and 'slices'");
  EXPECT_TESSEL_ERROR(MergeConfig::parse("merge_method: [linear\n", "c.yml"),
                      "E4001", "not valid YAML");
}

// A two-layer qwen3-shaped model; `hidden` changes one model's shapes.
ModelSummary summary(std::int64_t layers, std::int64_t hidden = 8,
                     bool head = false) {
  ModelSummary s;
  s.config.model_type = "qwen3";
  s.config.num_hidden_layers = layers;
  s.config.hidden_size = hidden;
  s.shapes["model.embed_tokens.weight"] = Shape{16, hidden};
  s.shapes["model.norm.weight"] = Shape{hidden};
  if (head) s.shapes["lm_head.weight"] = Shape{16, hidden};
  for (std::int64_t i = 0; i < layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    s.shapes[p + "input_layernorm.weight"] = Shape{hidden};
    s.shapes[p + "mlp.down_proj.weight"] = Shape{hidden, 12};
    s.shapes[p + "self_attn.q_proj.weight"] = Shape{hidden, hidden};
  }
  return s;
}

const PlannedTensor& find(const MergePlan& p, const std::string& name) {
  for (const PlannedTensor& t : p.tensors) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no " << name;
  return p.tensors.front();
}

TEST(MergePlan, ModelsMergeEveryLayerWithPrecedenceAndGradient) {
  const MergeConfig c = MergeConfig::parse(R"(
models:
  - model: a
    parameters:
      weight: [0, 1]
      density: 0.5
  - model: b
    parameters:
      weight: 1
merge_method: ties
base_model: base
parameters:
  density: 0.9
  normalize: false
)",
                                           "t.yml");
  const MergePlan p =
      plan_merge(c, {summary(3), summary(3), summary(3, 8, true)});
  // embedding + 3 x 3 layer tensors + norm + head (b has one).
  EXPECT_EQ(p.tensors.size(), 1u + 9u + 2u);
  EXPECT_FALSE(p.config.tie_word_embeddings);
  const PlannedTensor& l1 = find(p, "model.layers.1.mlp.down_proj.weight");
  // Inputs a, b, then the base added last; the base takes no weight.
  ASSERT_EQ(l1.inputs.size(), 3u);
  EXPECT_EQ(*l1.base, 2u);
  // Layer 1 of 3: t = 0.5, so a's weight [0, 1] is 0.5.
  EXPECT_DOUBLE_EQ(number_parameter(l1.inputs[0].parameters, "weight"), 0.5);
  EXPECT_DOUBLE_EQ(number_parameter(l1.inputs[0].parameters, "density"), 0.5);
  // b has no density of its own: the global 0.9.
  EXPECT_DOUBLE_EQ(number_parameter(l1.inputs[1].parameters, "density"), 0.9);
  EXPECT_FALSE(l1.inputs[2].parameters.contains("weight"));
  EXPECT_FALSE(flag_parameter(l1.parameters, "normalize"));
  EXPECT_DOUBLE_EQ(number_parameter(l1.parameters, "lambda"), 1.0);
  // The embedding is at t = 0: a's weight 0. The head falls back to the
  // tied models' embeddings.
  EXPECT_DOUBLE_EQ(
      number_parameter(
          find(p, "model.embed_tokens.weight").inputs[0].parameters, "weight"),
      0.0);
  const PlannedTensor& head = find(p, "lm_head.weight");
  EXPECT_EQ(head.inputs[0].tensor, "model.embed_tokens.weight");
  EXPECT_EQ(head.inputs[1].tensor, "lm_head.weight");
}

TEST(MergePlan, SlicesBuildAFrankenmerge) {
  const MergeConfig c = MergeConfig::parse(R"(
slices:
  - sources:
      - model: a
        layer_range: [0, 2]
  - sources:
      - model: b
        layer_range: [1, 3]
        parameters:
          scale: 0.5
merge_method: passthrough
)",
                                           "t.yml");
  const MergePlan p = plan_merge(c, {summary(3), summary(3)});
  EXPECT_EQ(p.config.num_hidden_layers, 4);
  EXPECT_TRUE(p.config.tie_word_embeddings);
  // Output layer 3 is b's layer 2, scaled.
  const PlannedTensor& t = find(p, "model.layers.3.self_attn.q_proj.weight");
  ASSERT_EQ(t.inputs.size(), 1u);
  EXPECT_EQ(t.inputs[0].model, 1u);
  EXPECT_EQ(t.inputs[0].tensor, "model.layers.2.self_attn.q_proj.weight");
  EXPECT_DOUBLE_EQ(number_parameter(t.inputs[0].parameters, "scale"), 0.5);
  EXPECT_FALSE(find(p, "model.layers.1.mlp.down_proj.weight")
                   .inputs[0]
                   .parameters.contains("scale"));
  // The final norm comes from the last slice's model.
  EXPECT_EQ(find(p, "model.norm.weight").inputs[0].model, 1u);
}

TEST(MergePlan, StructuralErrorsAreNamed) {
  const auto parse = [](const std::string& yaml) {
    return MergeConfig::parse(yaml, "t.yml");
  };
  // Shapes disagree: the tensor and both shapes.
  EXPECT_TESSEL_ERROR(
      plan_merge(parse("models:\n  - model: a\n    parameters: {weight: 1}\n"
                       "  - model: b\n    parameters: {weight: 1}\n"
                       "merge_method: linear\n"),
                 {summary(2), summary(2, 4)}),
      "E4001", "model.embed_tokens.weight", "(16, 8)", "(16, 4)");
  // slerp needs a base.
  EXPECT_TESSEL_ERROR(
      plan_merge(parse("models:\n  - model: a\n  - model: b\n"
                       "merge_method: slerp\nparameters: {t: 0.5}\n"),
                 {summary(2), summary(2)}),
      "E4001", "slerp needs a base_model");
  // A required parameter missing.
  EXPECT_TESSEL_ERROR(plan_merge(parse("models:\n  - model: a\n  - model: b\n"
                                       "merge_method: slerp\nbase_model: a\n"),
                                 {summary(2), summary(2)}),
                      "E4001", "parameter 't'");
  // Layer counts differ between the models of a slice.
  EXPECT_TESSEL_ERROR(
      plan_merge(parse("models:\n  - model: a\n    parameters: {weight: 1}\n"
                       "  - model: b\n    parameters: {weight: 1}\n"
                       "merge_method: linear\n"),
                 {summary(2), summary(3)}),
      "E4001", "same number of layers");
  // A layer range past the model.
  EXPECT_TESSEL_ERROR(
      plan_merge(parse("slices:\n  - sources:\n      - model: a\n"
                       "        layer_range: [0, 5]\n"
                       "merge_method: passthrough\n"),
                 {summary(2)}),
      "E4001", "goes past its 2 layers");
  // model_stock with too few models.
  EXPECT_TESSEL_ERROR(
      plan_merge(parse("models:\n  - model: a\n  - model: b\n"
                       "merge_method: model_stock\nbase_model: a\n"),
                 {summary(2), summary(2)}),
      "E4001", "at least two others");
}

}  // namespace
}  // namespace tessel
