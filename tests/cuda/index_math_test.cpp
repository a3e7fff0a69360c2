// The index arithmetic of the CUDA backend's own kernels (cuda/src/index_math.hpp), checked on the host: the same
// functions run on the device, so these tests check what the kernels compute without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "index_math.hpp"

using namespace ridgeline::cuda::kernels;
using u32 = std::uint32_t;
using i64 = std::int64_t;

TEST(IndexMath, ASplitHasAHeadUpToTheFirst16ByteBoundaryThenVectorsThenATail) {
    struct split_case {
        std::uint64_t address;
        i64 count;
        int element_bytes;
        i64 head, vectors, tail;
        int width;  // elements per 16-byte vector
    };
    for (const split_case& c : {
             // 37 floats at an aligned address: no head, 37 / 4 = 9 vectors of 4, a tail of 37 - 36 = 1
             split_case{0x1000, 37, 4, 0, 9, 1, 4},
             // 4 bytes past a boundary: 12 bytes (3 floats) to the next, then (37 - 3) / 4 = 8 vectors, a tail of 2
             split_case{0x1004, 37, 4, 3, 8, 2, 4},
             // bf16 (2 bytes) at 2 bytes past: 14 bytes = 7 elements of head; 8 per vector: (100 - 7) / 8 = 11, tail 5
             split_case{0x2002, 100, 2, 7, 11, 5, 8},
             // fewer elements than the head: everything is head
             split_case{0x2002, 5, 2, 5, 0, 0, 8},
         }) {
        const vector_split s = split_for_vectors(c.address, c.count, c.element_bytes);
        EXPECT_EQ(s.head, c.head) << c.address << " " << c.count;
        EXPECT_EQ(s.vectors, c.vectors) << c.address << " " << c.count;
        EXPECT_EQ(s.tail, c.tail) << c.address << " " << c.count;
        EXPECT_EQ(s.width, c.width) << c.address << " " << c.count;
    }
    EXPECT_EQ(split_for_vectors(0x1000, 0, 4).head, 0);
}

TEST(IndexMath, BuffersMisalignedDifferentlyAreWalkedElementByElement) {
    // x at a boundary, y 4 bytes past one: no 16-byte access can serve both, so all 64 elements are head
    const std::uint64_t y = 0x3004;
    vector_split s = split_for_vectors(0x1000, 64, 4, &y, 1);
    EXPECT_EQ(s.head, 64);
    EXPECT_EQ(s.vectors, 0);
    // the same offset modulo 16 (0x1008 and 0x5008): split together, head 2, 15 vectors, tail 2
    const std::uint64_t same = 0x5008;
    s = split_for_vectors(0x1008, 64, 4, &same, 1);
    EXPECT_EQ(s.head, 2);
    EXPECT_EQ(s.vectors, 15);
    EXPECT_EQ(s.tail, 2);
    // every element is covered exactly once, whatever the offset and count
    for (int offset = 0; offset < 16; offset += 2)
        for (i64 n : {1, 7, 8, 9, 63, 64, 65, 1000}) {
            const vector_split v = split_for_vectors(0x4000 + offset, n, 2);
            EXPECT_EQ(v.head + v.vectors * v.width + v.tail, n) << offset << " " << n;
            EXPECT_LT(v.tail, v.width);
        }
}

TEST(IndexMath, FastDivisionEqualsIntegerDivisionForEvery32BitDividend) {
    std::mt19937_64 rng(20261201);
    std::uniform_int_distribution<u32> any;
    for (u32 d : {1u, 2u, 3u, 5u, 7u, 49u, 56u, 224u, 1000u, 3136u, 65535u, 65537u, (1u << 20) + 1, (1u << 31) - 1,
                  1u << 31}) {
        const fast_divider f(d);
        std::vector<u32> ns{0u, 1u, d - 1, d, d + 1, 2 * d - 1, (1u << 31) - 1, 1u << 31, 0xfffffffeu, 0xffffffffu};
        for (int i = 0; i < 20000; ++i) ns.push_back(any(rng));
        for (u32 n : ns) {
            u32 q = 0, r = 0;
            f.divmod(n, q, r);
            ASSERT_EQ(q, n / d) << n << " / " << d;
            ASSERT_EQ(r, n % d) << n << " % " << d;
        }
    }
}

TEST(IndexMath, TheFastMapGivesTheOffsetsOfThe64BitWalk) {
    // a [2, 3, 4, 5] output; a is dense (strides 60, 20, 5, 1), b broadcasts over dims 0 and 2 (a [1, 3, 1, 5]
    // tensor: strides 0, 5, 0, 1); every element's offsets against the plain 64-bit division walk
    const i64 dims[4] = {2, 3, 4, 5}, sa[4] = {60, 20, 5, 1}, sb[4] = {0, 5, 0, 1};
    ASSERT_TRUE(fits_32_bits(120, 4, dims, sa, sb));
    fast_index_map m;
    m.rank = 4;
    for (int d = 0; d < 4; ++d) {
        m.dims[d] = fast_divider(static_cast<u32>(dims[d]));
        m.stride_a[d] = static_cast<u32>(sa[d]);
        m.stride_b[d] = static_cast<u32>(sb[d]);
    }
    for (u32 i = 0; i < 120; ++i) {
        i64 rest = i, oa = 0, ob = 0;
        for (int d = 3; d >= 0; --d) {
            oa += (rest % dims[d]) * sa[d];
            ob += (rest % dims[d]) * sb[d];
            rest /= dims[d];
        }
        u32 fa = 0, fb = 0;
        m.offsets(i, fa, fb);
        EXPECT_EQ(fa, oa) << i;
        EXPECT_EQ(fb, ob) << i;
    }
    // element 119 = (1, 2, 3, 4): a at 60 + 40 + 15 + 4 = 119, b at 10 + 4 = 14
    u32 fa = 0, fb = 0;
    m.offsets(119, fa, fb);
    EXPECT_EQ(fa, 119u);
    EXPECT_EQ(fb, 14u);
}

TEST(IndexMath, ThirtyTwoBitIndicesOnlyWhereEveryIndexAndOffsetFits) {
    const i64 limit = i64{1} << 31;
    const i64 one[1] = {1}, zero[1] = {0};
    // 2^31 - 1 elements walked densely: the last index and offset are 2^31 - 2
    const i64 big[1] = {limit - 1};
    EXPECT_TRUE(fits_32_bits(limit - 1, 1, big, one, zero));
    // 2^31 elements: not
    const i64 bigger[1] = {limit};
    EXPECT_FALSE(fits_32_bits(limit, 1, bigger, one, zero));
    // few elements, far offsets: a [2, 2] walk with stride 2^30 on dim 0 reaches 2^30 + 1 (fits); stride 2^31 does not
    const i64 dims[2] = {2, 2}, near_[2] = {i64{1} << 30, 1}, far_[2] = {limit, 1}, none[2] = {0, 0};
    EXPECT_TRUE(fits_32_bits(4, 2, dims, near_, none));
    EXPECT_FALSE(fits_32_bits(4, 2, dims, far_, none));
    // the terms add up: dims [2^16, 2^15], strides [2^15, 1] reach (2^16 - 1) x 2^15 + 2^15 - 1 = 2^31 - 1 (fits);
    // a stride of 2^15 + 1 on dim 0 alone reaches (2^16 - 1)(2^15 + 1) = 2^31 + 2^15 - 1 (does not)
    const i64 d2[2] = {i64{1} << 16, i64{1} << 15}, s2[2] = {i64{1} << 15, 1};
    EXPECT_TRUE(fits_32_bits(limit - 1, 2, d2, s2, none));
    const i64 s3[2] = {(i64{1} << 15) + 1, 1};
    EXPECT_FALSE(fits_32_bits(1000, 2, d2, s3, none));
    // a negative stride (never made by ridgeline) is refused rather than wrapped
    const i64 neg[1] = {-1};
    EXPECT_FALSE(fits_32_bits(4, 1, dims, neg, zero));
}

TEST(IndexMath, StreamCountsEachArrayOnce) {
    // copy c = a: one read, one write of n floats; triad a = b + s c: two reads, one write (no write-allocate)
    EXPECT_EQ(stream_bytes(stream_kind::copy, 1'000'000, 4), 8'000'000);
    EXPECT_EQ(stream_bytes(stream_kind::triad, 1'000'000, 4), 12'000'000);
    // an H200 copy bench of 8x its 60 MiB L2: 503,316,480 bytes per array, 125,829,120 floats
    EXPECT_EQ(stream_bytes(stream_kind::copy, 125'829'120, 4), 1'006'632'960);
    // read: the sum of a, one read of n floats and nothing written
    EXPECT_EQ(stream_bytes(stream_kind::read, 1'000'000, 4), 4'000'000);
}

// A streaming kernel's grid is one wave of the blocks that fit at once: 132 SMs x 5 resident blocks of 256 (a kernel of
// 48 registers on sm_90: 65,536 / (48 x 256) = 5.3) = 660 blocks for large work, not 8 x 132 = 1,056, whose last 396
// blocks would run as a thin second wave; small work gets ceil(work / 256) blocks, at least 1.
TEST(IndexMath, AStreamingGridIsOneWaveOfTheBlocksThatFit) {
    EXPECT_EQ(stream_grid(i64{1} << 30, 256, 5, 132), 660);
    EXPECT_EQ(stream_grid(1000, 256, 5, 132), 4);  // ceil(1000 / 256)
    EXPECT_EQ(stream_grid(660 * 256, 256, 5, 132), 660);
    EXPECT_EQ(stream_grid(660 * 256 + 1, 256, 5, 132), 660);
    EXPECT_EQ(stream_grid(0, 256, 5, 132), 1);
    EXPECT_EQ(stream_grid(i64{1} << 30, 256, 0, 132), 132);  // a failed query: one block per SM, never none
}

// A reduction takes one block per output where its inputs per output are many and its outputs few: mean over the
// last 4,096 of [4, 4096] (4 outputs) does; [3, 4, 10] over 10 inputs does not; 1,000,000 outputs fill the device
// with one thread each.
TEST(IndexMath, AReductionTakesABlockPerOutputWhereOutputsAreFewAndInputsMany) {
    EXPECT_TRUE(reduce_per_block(4, 4096));
    EXPECT_TRUE(reduce_per_block(65536, 256));
    EXPECT_FALSE(reduce_per_block(12, 10));
    EXPECT_FALSE(reduce_per_block(65537, 4096));
    EXPECT_FALSE(reduce_per_block(1'000'000, 4096));
    EXPECT_FALSE(reduce_per_block(4, 255));
}
