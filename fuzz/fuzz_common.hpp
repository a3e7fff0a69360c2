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

}  // namespace ridgeline::fuzz
