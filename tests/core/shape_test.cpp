#include <gtest/gtest.h>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/shape.hpp"

using namespace ridgeline::core;

TEST(Shape, ParsesTheThreeSpellings) {
    EXPECT_EQ(parse_shape("1x3x224x224"), (shape{1, 3, 224, 224}));
    EXPECT_EQ(parse_shape("1,3,224,224"), (shape{1, 3, 224, 224}));
    EXPECT_EQ(parse_shape("[8, 16, 32]"), (shape{8, 16, 32}));
    EXPECT_EQ(parse_shape("7"), (shape{7}));
}

TEST(Shape, NumelIsTheProduct) {
    // 1*3*224*224 = 150,528
    EXPECT_EQ(parse_shape("1x3x224x224").numel(), 150528);
    EXPECT_EQ(shape{}.numel(), 1);  // a scalar holds one element
    EXPECT_EQ(parse_shape("1x3x224x224").to_string(), "1x3x224x224");
}

TEST(Shape, NegativeDimsCountFromTheEnd) {
    const shape s{2, 3, 5};
    EXPECT_EQ(s.at(-1), 5);
    EXPECT_EQ(s.at(0), 2);
    EXPECT_THROW((void)s.at(3), invalid_layer);
    EXPECT_THROW((void)s.at(-4), invalid_layer);
}

TEST(Shape, OverflowingElementCountIsAnError) {
    // 2^32 * 2^32 = 2^64 does not fit in int64
    try {
        (void)parse_shape("4294967296x4294967296");
        FAIL() << "expected overflow_error";
    } catch (const overflow_error& e) {
        EXPECT_STREQ(e.what(), "element count of shape 4294967296x4294967296: count does not fit in int64 (overflow)");
    }
    // 2^31 * 2^31 = 2^62 fits
    EXPECT_EQ(parse_shape("2147483648x2147483648").numel(), 4611686018427387904LL);
}
