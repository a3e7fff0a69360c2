#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ridgeline/profiler/profiler.hpp"

using namespace ridgeline::backend_api;
using namespace ridgeline::profiler;

namespace {
host_tensor t(std::vector<float> v) { return {ridgeline::core::shape{static_cast<std::int64_t>(v.size())}, std::move(v)}; }
}  // namespace

TEST(Verification, RelativeL2Error) {
    // want (3, 4): norm 5; got (3, 4.05): diff 0.05 -> relative 0.01
    auto v = compare_outputs({t({3, 4.05f})}, {t({3, 4})}, 0.02);
    EXPECT_EQ(v.state, verification_state::passed);
    EXPECT_NEAR(v.rel_l2_error, 0.01, 1e-6);
    auto f = compare_outputs({t({3, 4.05f})}, {t({3, 4})}, 0.005);
    EXPECT_EQ(f.state, verification_state::failed);
    EXPECT_NE(f.message.find("exceeds the tolerance"), std::string::npos);
}

TEST(Verification, PoisonedElementsAreUnwritten) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto v = compare_outputs({t({1, nan, 3})}, {t({1, 2, 3})}, 1.0);
    EXPECT_EQ(v.state, verification_state::failed);
    EXPECT_EQ(v.unwritten, 1);
    EXPECT_EQ(v.message, "1 output elements were never written");
}

TEST(Verification, ANonFiniteReferenceIsNotAPass) {
    // NaN weights make the reference NaN at element 1; the backend agrees (NaN there too) and elements 0
    // and 2 match exactly, yet nothing was checked at element 1: failed, with the reason. Element 3 is +inf in the
    // reference and 5 in the output: not checked either (2 elements)
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    auto v = compare_outputs({t({1, nan, 3, 5})}, {t({1, nan, 3, inf})}, 1.0);
    EXPECT_EQ(v.state, verification_state::failed);
    EXPECT_EQ(v.message, "the reference output has 2 NaN or infinite elements (are the weights finite? `ridgeline weights` counts them)");
}

TEST(Verification, AnInfinityTheOpDefinesMatchesTheSameInfinity) {
    // max_pool2d over a window of padding only is -inf in PyTorch and the reference: the same -inf in the output is
    // agreement; the finite elements decide the error (here exact: 0). -inf where the reference has +inf is not.
    const float inf = std::numeric_limits<float>::infinity();
    auto v = compare_outputs({t({1, -inf, 3})}, {t({1, -inf, 3})}, 1e-4);
    EXPECT_EQ(v.state, verification_state::passed) << v.message;
    EXPECT_EQ(v.rel_l2_error, 0.0);
    EXPECT_EQ(compare_outputs({t({1, -inf, 3})}, {t({1, inf, 3})}, 1e-4).state, verification_state::failed);
}

TEST(Verification, ShapeMismatchFails) {
    auto v = compare_outputs({t({1, 2})}, {t({1, 2, 3})}, 1.0);
    EXPECT_EQ(v.state, verification_state::failed);
    EXPECT_EQ(verification_tolerance(ridgeline::core::dtype::fp32), 1e-4);
    EXPECT_EQ(verification_tolerance(ridgeline::core::dtype::bf16), 2e-2);
}

TEST(Verification, RoundingToBf16KeepsEightSignificantBits) {
    // 1 + 2^-8 is halfway between bf16 neighbours 1 and 1 + 2^-7: ties to even -> 1
    // 1 + 3*2^-8 rounds up to 1 + 2^-6 (ties to even: 1+2^-7 has odd last bit... 3*2^-8 is a tie between
    // 2^-7 and 2^-6 -> the even one, 2^-6)
    std::vector<float> v{1.0f + 1.0f / 256, 1.0f + 3.0f / 256, 3.14159265f};
    round_to(v, ridgeline::core::dtype::bf16);
    EXPECT_EQ(v[0], 1.0f);
    EXPECT_EQ(v[1], 1.0f + 1.0f / 64);
    EXPECT_EQ(v[2], 3.140625f);  // pi to 8 significant bits: 0x4049 -> 3.140625
}
