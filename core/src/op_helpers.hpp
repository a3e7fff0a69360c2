#pragma once
// Shared rules of the op implementations (private to core).

#include <cstdint>
#include <string>
#include <vector>

#include "ridgeline/core/checked.hpp"
#include "ridgeline/core/cost.hpp"
#include "ridgeline/core/dtype.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/ops.hpp"
#include "ridgeline/core/shape.hpp"

namespace ridgeline::core::detail {

[[noreturn]] inline void fail(const std::string& where, const std::string& message) {
    throw invalid_layer(where + ": " + message);
}

/// "1x16x64 (rank 3)"
inline std::string describe(const shape& s) {
    return s.to_string() + " (rank " + std::to_string(s.rank()) + ")";
}

inline void expect_rank(const shape& s, std::size_t rank, const std::string& where, const char* layout) {
    if (s.rank() != rank)
        fail(where, "expects a " + std::to_string(rank) + "-D " + layout + " input, got " + describe(s));
}

/// A 4-D NCHW input of `channels` channels (the layer's attribute `key`); throws naming both counts otherwise.
inline void expect_nchw_channels(const shape& x, std::int64_t channels, const char* key, const std::string& where) {
    expect_rank(x, 4, where, "NCHW");
    if (x[1] != channels)
        fail(where, "input has " + std::to_string(x[1]) + " channels (dimension 1 of " + x.to_string() + ") but " + key +
                        " is " + std::to_string(channels));
}

inline std::int64_t param_elements(const std::vector<param_spec>& params) {
    std::int64_t n = 0;
    for (const auto& p : params) n = checked::add(n, p.dims.numel(), "parameter elements");
    return n;
}

/// Minimal compulsory traffic: every input and parameter element read once, every output element
/// written once, at the data type's size.
inline std::int64_t standard_bytes(const shapes& in, const shape& out, std::int64_t param_elems, dtype dt) {
    std::int64_t elems = checked::add(out.numel(), param_elems, "bytes");
    for (const auto& s : in) elems = checked::add(elems, s.numel(), "bytes");
    return checked::mul(elems, size_bytes(dt), "bytes");
}

/// A copy or selection (concat, pad, expand, where, nearest interpolate): no arithmetic, every input read once and the
/// output written once.
inline cost copy_work(const shapes& in, const shape& out, dtype dt) {
    cost c;
    c.bytes = standard_bytes(in, out, 0, dt);
    return c;
}

/// NumPy broadcasting of two shapes; throws naming both shapes and the first dimension that differs.
shape broadcast(const shape& a, const shape& b, const std::string& where);

/// Requires v >= minimum for an attribute; throws parse_error "<where>: <key> must be >= <min>, got v".
void require_at_least(attribute_reader& r, const char* key, std::int64_t v, std::int64_t minimum);
void require_at_least(attribute_reader& r, const char* key, pair2d v, std::int64_t minimum);

}  // namespace ridgeline::core::detail
