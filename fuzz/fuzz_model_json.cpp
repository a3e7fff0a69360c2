// libFuzzer target: the JSON model format (docs/model-format.md) as `--model-file` reads it.
// Properties: every rejection is a core::error (invalid JSON included); an accepted model keeps core::fuse's
// promises (fuzz::check_fuse) and exports
// (io::model_json) to a document that reads back to the same layers, shapes and costs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "ridgeline/core/memory.hpp"
#include "ridgeline/io/model_file.hpp"

using namespace ridgeline;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 16384) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    fuzz::expect_clean([&] {
        // as read_model_file reads a file: the strict pass (duplicate keys, control characters), then the model
        const core::model m = io::parse_model_json(io::parse_model_text(text, "fuzz.json"), "fuzz.json");
        const core::model_analysis a = core::analyze(m, core::dtype::fp32);
        (void)core::estimate_training(a, core::memory_of(a));
        fuzz::check_fuse(a);
        const std::string exported = io::model_json(m).dump();
        const core::model back = io::parse_model_json(io::parse_model_text(exported, "exported.json"), "exported.json");
        const core::model_analysis b = core::analyze(back, core::dtype::fp32);
        fuzz::require(a.layers.size() == b.layers.size(), "export changes the number of layers: " + exported);
        for (std::size_t i = 0; i < a.layers.size(); ++i) {
            fuzz::require(a.layers[i].layer.op == b.layers[i].layer.op && a.layers[i].output_shape == b.layers[i].output_shape &&
                              a.layers[i].cost == b.layers[i].cost,
                          "export changes layer \"" + a.layers[i].layer.name + "\": " + exported);
        }
        fuzz::require(a.totals == b.totals, "export changes the totals: " + exported);
    });
    return 0;
}
