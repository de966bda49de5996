// The order of a held step's streamed products (Note [the next weights]):
// what each product asks the waiting threads to pull next.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "backends/cpu/streamed_weights.hpp"

namespace tessel {
namespace {

using cpu::StreamOrder;

TEST(StreamOrder, EachProductLeadsToTheOneThatFollowedItFirst) {
  std::vector<std::uint8_t> bytes(4096);
  const ByteRange q{bytes.data(), 100}, k{bytes.data() + 100, 50},
      v{bytes.data() + 150, 50}, o{bytes.data() + 200, 300},
      head{bytes.data() + 1000, 3000};
  const ByteRange qkv[] = {q, k, v};
  StreamOrder order;
  // The first step records the order.
  EXPECT_EQ(order.note(qkv), 0u);
  EXPECT_EQ(order.note({&o, 1}), 1u);
  EXPECT_EQ(order.note({&head, 1}), 2u);
  // Later steps find each product where it was, by its first range.
  EXPECT_EQ(order.note(qkv), 0u);
  EXPECT_EQ(order.note({&q, 1}), 0u);
  EXPECT_EQ(order.note({&head, 1}), 2u);
  EXPECT_EQ(order.size(), 3u);
  const auto after_qkv = order.after(0);
  ASSERT_EQ(after_qkv.size(), 1u);
  EXPECT_EQ(after_qkv[0].data, o.data);
  EXPECT_EQ(after_qkv[0].bytes, o.bytes);
  const auto after_o = order.after(1);
  ASSERT_EQ(after_o.size(), 1u);
  EXPECT_EQ(after_o[0].data, head.data);
  EXPECT_TRUE(order.after(2).empty());  // the last product
  EXPECT_TRUE(order.after(7).empty());
  // The whole of a product is kept, every range of it.
  const ByteRange up{bytes.data() + 500, 200};
  const ByteRange gate_up[] = {{bytes.data() + 700, 100}, up};
  EXPECT_EQ(order.note(gate_up), 3u);
  const auto after_head = order.after(2);
  ASSERT_EQ(after_head.size(), 2u);
  EXPECT_EQ(after_head[1].data, up.data);
  EXPECT_EQ(after_head[1].bytes, up.bytes);
}

TEST(StreamOrder, StartsAgainPastItsBound) {
  StreamOrder order;
  std::vector<std::uint8_t> bytes(StreamOrder::kMostProducts + 1);
  for (std::size_t i = 0; i < StreamOrder::kMostProducts; ++i) {
    const ByteRange r{bytes.data() + i, 1};
    ASSERT_EQ(order.note({&r, 1}), i);
  }
  const ByteRange last{bytes.data() + StreamOrder::kMostProducts, 1};
  EXPECT_EQ(order.note({&last, 1}), 0u);
  EXPECT_EQ(order.size(), 1u);
  const ByteRange first{bytes.data(), 1};
  EXPECT_EQ(order.note({&first, 1}), 1u);  // forgotten, so new again
}

}  // namespace
}  // namespace tessel
