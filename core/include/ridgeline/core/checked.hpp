#pragma once
// Overflow-checked int64 arithmetic for every count ridgeline reports.
//
// A count that does not fit in int64 is an error (core::overflow_error naming `what`), never a wrap.
// Source: GCC/Clang __builtin_*_overflow, which compute the exact result and report whether it fits.

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "ridgeline/core/error.hpp"

namespace ridgeline::core::checked {

[[noreturn]] void throw_overflow(std::string_view what);

/// a * b; throws overflow_error("<what>: count does not fit in int64") when it does not fit.
inline std::int64_t mul(std::int64_t a, std::int64_t b, std::string_view what) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) throw_overflow(what);
    return r;
}

/// a + b, checked like mul().
inline std::int64_t add(std::int64_t a, std::int64_t b, std::string_view what) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) throw_overflow(what);
    return r;
}

/// a - b, checked like mul().
inline std::int64_t sub(std::int64_t a, std::int64_t b, std::string_view what) {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) throw_overflow(what);
    return r;
}

/// Product of all factors, checked after each step.
inline std::int64_t product(std::initializer_list<std::int64_t> factors, std::string_view what) {
    std::int64_t r = 1;
    for (std::int64_t f : factors) r = mul(r, f, what);
    return r;
}

/// Sum of all terms, checked after each step.
inline std::int64_t sum(std::initializer_list<std::int64_t> terms, std::string_view what) {
    std::int64_t r = 0;
    for (std::int64_t t : terms) r = add(r, t, what);
    return r;
}

}  // namespace ridgeline::core::checked
