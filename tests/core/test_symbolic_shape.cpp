#include <gtest/gtest.h>

#include <limits>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

TEST(SymbolicShape, DimsArePolynomials) {
  const Dim batch("batch"), seq("seq");
  EXPECT_TRUE(Dim(768).is_constant());
  EXPECT_EQ(Dim(768).value(), 768);
  EXPECT_FALSE(seq.is_constant());
  EXPECT_EQ((batch * seq).str(), "batch*seq");
  EXPECT_EQ((seq + seq).str(), "2*seq");
  EXPECT_EQ((Dim("past") + seq + Dim(1)).str(), "past + seq + 1");
  EXPECT_EQ(batch * seq, seq * batch);
  EXPECT_EQ(seq + Dim(-1) * seq, Dim(0));
  EXPECT_NE(seq, Dim(768));
  EXPECT_EQ((batch * seq * Dim(768)).divide_exactly(seq * Dim(3)),
            batch * Dim(256));
  EXPECT_FALSE((seq + Dim(1)).divide_exactly(seq).has_value());
  EXPECT_FALSE(Dim(7).divide_exactly(Dim(2)).has_value());
  EXPECT_EQ((batch * seq + Dim(2)).evaluate({{"batch", 3}, {"seq", 5}}), 17);
  EXPECT_EQ(shape_string(SymbolicShape{"batch", "seq", 768}),
            "(batch, seq, 768)");
  EXPECT_TESSEL_ERROR(seq.value(), "E2102", "seq", "symbolic");
  EXPECT_TESSEL_ERROR(Dim(""), "E2102", "needs a name");
  EXPECT_EQ((Dim("seq-len") * Dim(2)).str(), "2*'seq-len'");
  EXPECT_FALSE(Dim(std::numeric_limits<std::int64_t>::min())
                   .divide_exactly(Dim(-1))
                   .has_value());
  EXPECT_TESSEL_ERROR(seq.evaluate({}), "E2102", "seq");
}

TEST(SymbolicShape, BindingChecksTheConstraints) {
  const SymbolicShape s = {"batch", Dim("seq") * Dim(2), 64};
  const std::map<std::string, DimConstraint> limits = {{"seq", {1, 2048, 8}}};
  EXPECT_EQ(bind(s, {{"batch", 3}, {"seq", 16}}, limits), (Shape{3, 32, 64}));
  EXPECT_TESSEL_ERROR(bind(s, {{"batch", 3}, {"seq", 12}}, limits), "E2102",
                      "'seq' = 12", "multiple of 8");
  EXPECT_TESSEL_ERROR(bind(s, {{"batch", 3}, {"seq", 4096}}, limits), "E2102",
                      "above its maximum 2048");
  EXPECT_TESSEL_ERROR(bind(s, {{"batch", 3}, {"seq", 0}}, limits), "E2102",
                      "below its minimum 1");
  EXPECT_TESSEL_ERROR(bind(s, {{"seq", 8}}, limits), "E2102", "'batch'");
  EXPECT_TESSEL_ERROR(bind(s, {{"batch", -1}, {"seq", 8}}), "E2102",
                      "negative");
  // A descriptor's symbolic dimensions feed the checker.
  const TensorDescriptor d = descriptor_from_json(R"({
    "version": "1.0",
    "shape": {"dimensions": ["batch", "seq", 768], "symbolic": true,
              "constraints": {"seq": {"max": 128}}},
    "dtype": {"base_type": "FLOAT32"}})");
  EXPECT_EQ(shape_string(symbolic::linear(d.symbolic_dims(), {3072, 768})),
            "(batch, seq, 3072)");
  EXPECT_TESSEL_ERROR(
      bind(d.symbolic_dims(), {{"batch", 1}, {"seq", 129}}, d.constraints),
      "E2102", "above its maximum 128");
}

}  // namespace
}  // namespace tessel
