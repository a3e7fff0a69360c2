#pragma once
// "Did you mean ...?": the known name closest to a mistyped one, for messages that guess right.
//
// Closeness is the Levenshtein edit distance (V. I. Levenshtein, "Binary codes capable of correcting deletions,
// insertions and reversals", 1966), compared without regard to case, so "GPT2" finds "gpt2" and "resnet19"
// "resnet18". A name is suggested only when it is close: at most 2 edits, or a third of the longer name's length;
// or when it begins exactly one candidate (at least 3 characters of it: "kernel" finds "kernel_size").

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ridgeline::core {

/// Edits (insert, delete, substitute one character) that turn `a` into `b`, ignoring ASCII case.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `name` (the first of equals), when it is close enough to be the one meant.
std::optional<std::string> closest(std::string_view name, const std::vector<std::string>& candidates);

/// " (did you mean \"gpt2\"?)" for closest(), or "" when nothing is close.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace ridgeline::core
