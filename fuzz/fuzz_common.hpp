#pragma once
// What the fuzz targets treat as a finding, besides what the sanitizers catch (crash, out-of-bounds access,
// use after free, leak, signed overflow, timeout): an exception that is not a core::error. The command
// line would print it on one line too, but its text ("vector::_M_range_check", "stoll", "std::bad_alloc")
// names neither the layer nor the rule, and it means some input was used before it was checked.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/fusion.hpp"

namespace ridgeline::fuzz {

/// Runs `f`; a core::error is the expected outcome for bad input, anything else aborts with its type and text.
template <class F>
void expect_clean(F&& f) {
    try {
        f();
    } catch (const core::error&) {
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ridgeline fuzz: unexpected %s: %s\n", typeid(e).name(), e.what());
        std::abort();
    }
}

/// A property that must hold for every accepted input: aborts with `what` when it does not.
inline void require(bool ok, const std::string& what) {
    if (ok) return;
    std::fprintf(stderr, "ridgeline fuzz: property violated: %s\n", what.c_str());
    std::abort();
}

/// core::fuse's promises (core/fusion.hpp) on an analysed model: the totals keep their params, buffers, MACs and
/// FLOPs; bytes never grow (a group's bytes are only what crosses its boundary); every layer is in exactly one row;
/// a group's counts are its members' sums but for bytes; unfuse gives back the layers as they were.
inline void check_fuse(const core::model_analysis& a) {
    const core::model_analysis f = core::fuse(a);
    const core::cost &before = a.totals, &after = f.totals;
    require(after.params == before.params && after.buffers == before.buffers && after.macs == before.macs &&
                after.skipped_macs == before.skipped_macs && after.flops == before.flops,
            "fuse changes the totals' counts");
    require(after.bytes <= before.bytes, "fuse adds bytes");
    std::size_t members = 0;
    for (const auto& g : f.layers) {
        members += g.fused.empty() ? 1 : g.fused.size();
        if (g.fused.empty()) continue;
        require(g.fused.size() >= 2 && g.fused.size() <= core::max_post_ops + 1,
                "fused group \"" + g.layer.name + "\" has " + std::to_string(g.fused.size()) + " members");
        core::cost sum;
        for (const auto& m : g.fused) sum += m.cost;
        require(g.cost.macs == sum.macs && g.cost.flops == sum.flops && g.cost.params == sum.params &&
                    g.cost.bytes <= sum.bytes,
                "fused group \"" + g.layer.name + "\" does not count its members' sums");
        for (std::size_t k = 1; k < g.fused.size(); ++k) (void)core::rule_of(g, k);
    }
    require(members == a.layers.size(), "fuse loses or repeats layers");
    const core::model_analysis back = core::unfuse(f);
    require(back.layers.size() == a.layers.size(), "unfuse does not give back every layer");
    for (std::size_t i = 0; i < a.layers.size(); ++i)
        require(back.layers[i].layer.name == a.layers[i].layer.name && back.layers[i].layer.op == a.layers[i].layer.op &&
                    back.layers[i].output_shape == a.layers[i].output_shape && back.layers[i].cost == a.layers[i].cost,
                "unfuse changes layer \"" + a.layers[i].layer.name + "\"");
}

}  // namespace ridgeline::fuzz
