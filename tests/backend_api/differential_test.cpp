// Differential testing on the CPU (oneDNN) backend: random valid cases of every op against the reference loops
// (tests/support/differential.hpp). A fixed seed and a count that fits CI; bench/differential.sh runs many more.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "differential.hpp"
#include "ridgeline/profiler/profiler.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"

using namespace ridgeline;
namespace diff = ridgeline::test::differential;

namespace {

constexpr std::uint64_t seed = 20261201;

std::unique_ptr<backend_api::backend>& cpu_backend() {
    static std::unique_ptr<backend_api::backend> b = cpu::make_dnnl_backend(0);
    return b;
}

/// Every op: no mismatch, no failure, and at most `max_declined_share` of its cases declined (declining broadly
/// is not a fix). Prints each op's counts, the decline reasons and the problems.
void expect_clean(const std::map<std::string, diff::op_tally>& tallies, double max_declined_share) {
    for (const auto& [kind, t] : tallies) {
        std::string reasons;
        for (const auto& [r, n] : t.decline_reasons) reasons += "\n    x" + std::to_string(n) + " " + r;
        std::string problems;
        for (const auto& p : t.problems) problems += "\n    " + p;
        std::printf("%-20s tried %3d matched %3d declined %3d%s\n", kind.c_str(), t.tried, t.matched, t.declined,
                    reasons.c_str());
        EXPECT_EQ(t.mismatched, 0) << kind << problems;
        EXPECT_EQ(t.failed, 0) << kind << problems;
        EXPECT_LE(t.declined, static_cast<int>(max_declined_share * t.tried))
            << kind << " declines too much:" << reasons;
        EXPECT_GT(t.matched, 0) << kind;
    }
}

/// The layer on arange(16) as 1x1x4x4 on the CPU backend (outputs poisoned first): its output values.
std::vector<float> on_arange16(const std::string& layer) {
    const auto g = diff::graph_of({layer, {core::shape{1, 1, 4, 4}}}, core::dtype::fp32);
    backend_api::graph_data data;
    backend_api::host_tensor x{core::shape{1, 1, 4, 4}, {}};
    for (int i = 0; i < 16; ++i) x.data.push_back(static_cast<float>(i));
    data.tensors["input"] = x;
    auto prep = cpu_backend()->prepare(g, data);
    prep->poison_outputs();
    prep->run();
    return prep->outputs().at(0).data;
}

}  // namespace

// The generator has a case for every op kind and, over 300 draws, writes every key the parser accepts for it
// (keys taken from the parser's own "unknown attribute" error, so a new key fails here until it is generated).
TEST(Differential, GeneratorWritesEveryKeyOfEveryOp) {
    for (std::string_view kind : core::op_kinds()) {
        std::mt19937_64 rng(seed);
        std::set<std::string> seen;
        for (int i = 0; i < 300; ++i) {
            const diff::layer_case c = diff::random_case(kind, rng);
            const auto colon = c.layer.find(':');
            if (colon == std::string::npos) continue;
            std::stringstream ss(c.layer.substr(colon + 1));
            std::string item;
            while (std::getline(ss, item, ',')) seen.insert(item.substr(0, item.find('=')));
        }
        const auto keys = diff::accepted_keys(kind);
        for (const auto& key : keys) EXPECT_TRUE(seen.count(key)) << kind << " never sets " << key;
        if (kind == "conv2d") {  // the key list is read from the parser: it has every key of conv2d
            EXPECT_EQ(keys.size(), 8U) << "in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias";
        }
    }
}

// The draws reach the corners the issue names: depthwise and grouped conv, asymmetric and "same" padding, dilation,
// ceil_mode with count_include_pad, uneven adaptive windows, broadcast batch dims of matmul, a tensor read twice.
TEST(Differential, GeneratorReachesTheCorners) {
    auto count = [](std::string_view kind, auto pred) {
        std::mt19937_64 rng(seed);
        int n = 0;
        for (int i = 0; i < 300; ++i) {
            const auto c = diff::random_case(kind, rng);
            if (pred(c)) ++n;
        }
        return n;
    };
    auto has = [](const std::string& s) {
        return [s](const diff::layer_case& c) { return c.layer.find(s) != std::string::npos; };
    };
    EXPECT_GT(count("conv2d", has("padding=same")), 10);
    EXPECT_GT(count("conv2d",
                    [](const diff::layer_case& c) {  // asymmetric: top != bottom or left != right
                        const core::op o = core::parse_op(c.layer);
                        const auto p = std::get<core::conv2d>(o).padding;
                        return p.top != p.bottom || p.left != p.right;
                    }),
              10);
    EXPECT_GT(count("conv2d",
                    [](const diff::layer_case& c) {  // depthwise: groups == in_channels > 1
                        const auto g = core::parse_op(c.layer);
                        const auto& cv = std::get<core::conv2d>(g);
                        return cv.groups > 1 && cv.groups == cv.in_channels;
                    }),
              20);
    EXPECT_GT(count("conv2d", [](const diff::layer_case& c) { return c.inputs[0][0] > 1; }), 50);  // batch > 1
    EXPECT_GT(count("avg_pool2d",
                    [](const diff::layer_case& c) {
                        const core::op o = core::parse_op(c.layer);
                        const auto& p = std::get<core::avg_pool2d>(o);
                        return p.ceil_mode && p.count_include_pad;
                    }),
              30);
    EXPECT_GT(count("adaptive_avg_pool2d",
                    [](const diff::layer_case& c) {
                        const core::op o = core::parse_op(c.layer);
                        const auto& p = std::get<core::adaptive_avg_pool2d>(o);
                        return c.inputs[0][2] % p.output_size.h != 0;
                    }),
              30);
    EXPECT_GT(count("matmul", [](const diff::layer_case& c) { return c.inputs[0].rank() != c.inputs[1].rank(); }), 50);
    // storage read twice: add(x, x), matmul(x, transpose(x)), concat(x, x)
    for (std::string_view kind : {"add", "matmul", "concat"})
        EXPECT_GT(count(kind, [](const diff::layer_case& c) { return c.same_input; }), 20) << kind;
}

// fp32: 200 cases of each op (23 ops: 4,600 cases). None may mismatch or fail; at most a quarter of an op's cases may
// be declined, each with its reason.
TEST(Differential, CpuMatchesTheReferenceInFp32) {
    expect_clean(diff::run_all(*cpu_backend(), core::dtype::fp32, 200, seed), 0.25);
}

// bf16 and fp16 where this CPU runs them (oneDNN needs AVX-512 for bf16; for fp16 AVX512-FP16 and oneDNN 2.7 or
// newer, so never with Debian 12's 2.6.3): 100 cases of each op; elsewhere the test says what is missing.
class DifferentialHalf : public testing::TestWithParam<core::dtype> {};

TEST_P(DifferentialHalf, CpuMatchesTheReference) {
    const core::dtype dt = GetParam();
    const auto probe = diff::graph_of({"relu", {core::shape{4}}}, dt);
    if (const auto s = cpu_backend()->supports(probe.layers.at(0), dt); !s.supported) GTEST_SKIP() << s.reason;
    expect_clean(diff::run_all(*cpu_backend(), dt, 100, seed + 1), 0.25);
}

INSTANTIATE_TEST_SUITE_P(DataTypes, DifferentialHalf, testing::Values(core::dtype::bf16, core::dtype::fp16),
                         [](const testing::TestParamInfo<core::dtype>& i) { return std::string(core::to_string(i.param)); });

// The case that reached a user: avg_pool2d ceil_mode with count_include_pad and no padding. PyTorch
// (torch.nn.functional.avg_pool2d(arange(16).reshape(1,1,4,4), 3, 2, ceil_mode=True)) gives [5, 6.5, 11, 12.5]:
// the clipped last windows divide by their extent clipped to the input + padding (6 taps, 4 taps), e.g.
// (2+3+6+7+10+11)/6 = 6.5 and (10+11+14+15)/4 = 12.5.
TEST(Differential, AvgPoolCeilModeDividesAsPyTorch) {
    const auto out = on_arange16("avg_pool2d:kernel_size=3,stride=2,ceil_mode=true");
    ASSERT_EQ(out.size(), 4U);
    EXPECT_FLOAT_EQ(out[0], 5.0F);
    EXPECT_FLOAT_EQ(out[1], 6.5F);
    EXPECT_FLOAT_EQ(out[2], 11.0F);
    EXPECT_FLOAT_EQ(out[3], 12.5F);
}

// With padding and a ceil_mode window past it, PyTorch's divisor is neither of oneDNN's: include_padding, then a
// multiply per output position. 1x1x4x4 (arange(16)), kernel 3, stride 2, padding 1, ceil_mode: out = ceil((4+2-3)/2)+1
// = 3; the last window starts at 2*2-1 = 3 < in + pad = 5, so it is kept, spans [3, 6) and counts min(6, 5) - 3 = 2
// taps on that axis. PyTorch (avg_pool2d(x, 3, 2, 1, ceil_mode=True)) gives [[1.1111, 2.6667, 1.6667],
// [5.6667, 10, 5.5], [4.1667, 7, 3.75]]: e.g. [0][0] = (0+1+4+5)/9, [0][2] = (3+7)/(3*2), [2][2] = 15/(2*2).
TEST(Differential, AvgPoolCeilModePastThePaddingDividesAsPyTorch) {
    const auto out = on_arange16("avg_pool2d:kernel_size=3,stride=2,padding=1,ceil_mode=true");  // 3x3
    const float want[] = {10.0F / 9, 16.0F / 6, 10.0F / 6, 34.0F / 6, 10.0F,
                          22.0F / 4, 25.0F / 6, 28.0F / 4, 15.0F / 4};
    ASSERT_EQ(out.size(), 9U);
    for (std::size_t i = 0; i < 9; ++i) EXPECT_NEAR(out[i], want[i], 1e-5) << i;
}

// Convolutions with an output row or column of padding only, the shapes on which oneDNN 2.6.3's AMX convolution
// (brgconv:avx512_core_amx_bf16) crashed the process on an AMX Xeon: 2x32x6x5, kernel 1x2, stride 2, padding
// TxLxBxR 0x0x1x1 (output row 3 reads input row 6: padding). Both the row and the column case, in bf16 where the
// CPU runs bf16 and in fp32 everywhere; they must match the reference (and, above all, not crash).
TEST(Differential, ConvolutionWithAnOutputRowOfPaddingOnly) {
    const std::vector<diff::layer_case> cases = {
        {"conv2d:in_channels=32,out_channels=2,kernel_size=1x2,stride=2,padding=0x0x1x1", {core::shape{2, 32, 6, 5}}},
        {"conv2d:in_channels=32,out_channels=8,kernel_size=2x1,stride=2,padding=0x0x0x2", {core::shape{2, 32, 6, 6}}},
        {"conv2d:in_channels=64,out_channels=64,kernel_size=1,stride=2,padding=1x0x1x0", {core::shape{2, 64, 12, 12}}}};
    for (const core::dtype dt : {core::dtype::fp32, core::dtype::bf16}) {
        const auto probe = diff::graph_of({"relu", {core::shape{4}}}, dt);
        if (!cpu_backend()->supports(probe.layers.at(0), dt).supported) continue;  // bf16: the CPU lacks it
        for (const auto& c : cases) {
            const auto r = diff::run_case(*cpu_backend(), c, dt, seed);
            EXPECT_EQ(r.what, diff::outcome::matched) << core::to_string(dt) << " " << c.layer << ": " << r.detail;
        }
    }
}
