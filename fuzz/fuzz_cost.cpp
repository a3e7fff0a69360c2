// libFuzzer target: the shape and cost model. A structured input (FuzzedDataProvider) picks an op kind,
// its attributes (keys that op reads, sometimes any key, values drawn mostly from the edges of int64:
// 0, -1, 2^31, 2^32, 2^62, INT64_MAX, ...) and up to three input shapes of rank 0 to 5, then analyses the
// one-layer model (core::make_op, core::infer_shape, core::cost_of via core::analyze) in every dtype.
// Properties: every rejection is a core::error and no arithmetic overflows (UBSan); an accepted layer has
// an output with every dimension >= 1 and no negative count, and its counts agree across dtypes
// (macs and flops do not depend on the dtype; bytes scale with the element size).
#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "ridgeline/core/layer.hpp"
#include "ridgeline/core/memory.hpp"
#include "ridgeline/core/model.hpp"

using namespace ridgeline;

namespace {

constexpr std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();

std::int64_t interesting(FuzzedDataProvider& p) {
    static constexpr std::array<std::int64_t, 24> values = {
        0, 1, 2, 3, 4, 5, 7, 8, 16, 64, 224, -1, -2, -3,
        std::int64_t{1} << 31, (std::int64_t{1} << 31) - 1, std::int64_t{1} << 32, std::int64_t{1} << 40,
        std::int64_t{1} << 62, 3037000500,  // ~sqrt(2^63): squares just overflow
        i64_max, i64_max - 1, i64_min, i64_min + 1};
    switch (p.ConsumeIntegralInRange<int>(0, 3)) {
        case 0: return values[p.ConsumeIntegralInRange<std::size_t>(0, values.size() - 1)];
        case 1: return p.ConsumeIntegral<std::int64_t>();
        default: return p.ConsumeIntegralInRange<std::int64_t>(1, 32);
    }
}

std::string int_list(FuzzedDataProvider& p, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += (i ? "x" : "") + std::to_string(interesting(p));
    return s;
}

std::string value(FuzzedDataProvider& p) {
    static const std::array<const char*, 16> floats = {"0",     "-1",   "1e-5", "1e-12", "1e308", "1e-320", "nan", "inf",
                                                       "-inf",  "0.125", "2",   "-0",    "1e400", "0x10", "1e", "."};
    static const std::array<const char*, 8> words = {"true", "false", "same", "valid", "none", "tanh", "1", "0"};
    switch (p.ConsumeIntegralInRange<int>(0, 7)) {
        case 0: case 1: return std::to_string(interesting(p));
        case 2: return int_list(p, 2);
        case 3: return int_list(p, p.ConsumeIntegralInRange<int>(1, 6));
        case 4: return words[p.ConsumeIntegralInRange<std::size_t>(0, words.size() - 1)];
        case 5: return floats[p.ConsumeIntegralInRange<std::size_t>(0, floats.size() - 1)];
        case 6: return std::to_string(p.ConsumeFloatingPoint<double>());
        default: return p.ConsumeRandomLengthString(16);
    }
}

const std::map<std::string, std::vector<std::string>>& keys_by_kind() {
    static const std::map<std::string, std::vector<std::string>> keys = {
        {"linear", {"in_features", "out_features", "bias"}},
        {"conv2d", {"in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias"}},
        {"batch_norm2d", {"num_features", "eps", "affine"}},
        {"layer_norm", {"normalized_shape", "eps", "elementwise_affine", "bias"}},
        {"gelu", {"approximate"}},
        {"softmax", {"dim"}},
        {"scale", {"factor"}},
        {"max_pool2d", {"kernel_size", "stride", "padding", "dilation", "ceil_mode"}},
        {"avg_pool2d", {"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"}},
        {"adaptive_avg_pool2d", {"output_size"}},
        {"concat", {"dim"}},
        {"embedding", {"num_embeddings", "embedding_dim"}},
        {"flatten", {"start_dim", "end_dim"}},
        {"reshape", {"shape"}},
        {"transpose", {"dim0", "dim1"}},
        {"slice", {"dim", "start", "end", "step"}},
    };
    return keys;
}

const std::vector<std::string>& all_keys() {
    static const std::vector<std::string> all = [] {
        std::vector<std::string> v;
        for (const auto& [kind, ks] : keys_by_kind()) v.insert(v.end(), ks.begin(), ks.end());
        return v;
    }();
    return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider p(data, size);
    const auto& kinds = core::op_kinds();
    const std::string kind(kinds[p.ConsumeIntegralInRange<std::size_t>(0, kinds.size() - 1)]);
    const auto known = keys_by_kind().find(kind);
    std::vector<core::attribute> attrs;
    const int n_attrs = p.ConsumeIntegralInRange<int>(0, 8);
    for (int i = 0; i < n_attrs; ++i) {
        const bool own = known != keys_by_kind().end() && p.ConsumeIntegralInRange<int>(0, 7) != 0;
        const auto& pool = own ? known->second : all_keys();
        attrs.push_back({pool[p.ConsumeIntegralInRange<std::size_t>(0, pool.size() - 1)], value(p)});
    }
    std::vector<core::shape> shapes(p.ConsumeIntegralInRange<std::size_t>(1, 3));
    for (auto& s : shapes) {
        std::vector<std::int64_t> dims(p.ConsumeIntegralInRange<std::size_t>(0, 5));
        for (auto& d : dims) d = p.ConsumeBool() ? p.ConsumeIntegralInRange<std::int64_t>(1, 64) : interesting(p);
        s = core::shape(std::move(dims));
    }
    fuzz::expect_clean([&] {
        const core::op o = core::make_op(kind, attrs, "fuzz");
        const core::model m = core::single_layer_model(o, shapes, "layer", "fuzz");
        const core::model_analysis a32 = core::analyze(m, core::dtype::fp32);
        const core::layer_analysis& l = a32.layers.at(0);
        for (std::size_t i = 0; i < l.output_shape.rank(); ++i)
            fuzz::require(l.output_shape[i] >= 1, core::to_string(o) + ": output " + l.output_shape.to_string());
        const core::cost& c = l.cost;
        fuzz::require(c.params >= 0 && c.buffers >= 0 && c.macs >= 0 && c.flops >= 0 && c.bias_flops >= 0 &&
                          c.bytes >= 0 && c.flops >= c.bias_flops,
                      core::to_string(o) + ": a negative count");
        (void)core::estimate_training(a32, core::memory_of(a32));
        for (core::dtype dt : {core::dtype::fp16, core::dtype::bf16, core::dtype::tf32}) {
            // 2-byte types move fewer bytes and tf32 as many as fp32: what fits in fp32 fits in them
            const core::model_analysis a = core::analyze(m, dt);
            const core::cost& d = a.layers.at(0).cost;
            fuzz::require(d.macs == c.macs && d.flops == c.flops && d.params == c.params && d.buffers == c.buffers,
                          core::to_string(o) + ": counts depend on the dtype");
        }
    });
    return 0;
}
