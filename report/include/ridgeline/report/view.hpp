#pragma once
// How a profile's rows are shown (`--group-by`, `--sort`, `--top`): the options alone, so that a report's run
// information can carry them; rollup.hpp makes the rows.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ridgeline::report {

/// What layers are grouped by (`--group-by`).
enum class group_key {
    none,    // every layer its own row
    op,      // the op kind: conv2d, linear, attention, ...
    module,  // the name's dotted prefix before its first numbered part: layer1.0.conv1 -> layer1,
             // transformer.h.3.attn.c_attn -> transformer.h; a name without one drops its last part
             // (embeddings.LayerNorm -> embeddings); a one-part name is its own module (fc -> fc)
    prefix,  // the first N dotted parts (`module:N`): layer1.0.conv1 -> layer1.0 for N = 2
    block,   // the numbered block: the name up to its first numbered part (layer1.0, transformer.h.3,
             // encoder.layer.11); a name without one groups as `module` does
    bound,   // the roofline verdict: compute, memory, overhead, ... ("-" without one)
};

/// The order of the rows (`--sort`): the model's order, the longest time first, the furthest below its roof first
/// (the lowest %roof; rows without one last), or by name.
enum class sort_key { model, time, roof, name };

struct view_options {
    group_key group = group_key::none;
    int prefix_parts = 0;  // for group_key::prefix: how many dotted parts (>= 1)
    sort_key sort = sort_key::model;
    std::optional<std::size_t> top;  // only the first N rows (after sorting); a line says what the rest take
    [[nodiscard]] bool any() const { return group != group_key::none || sort != sort_key::model || top.has_value(); }
};

/// "op", "module", "module:2", "block", "bound" -> the grouping. Throws core::request_error (field "group-by") for
/// anything else, naming the closest known value.
view_options parse_group_by(const std::string& text, view_options v = {});
/// "model", "time", "roof", "name". Throws core::request_error (field "sort") naming the closest.
sort_key parse_sort(const std::string& text);
std::string_view to_string(group_key g);
std::string_view to_string(sort_key s);

}  // namespace ridgeline::report
