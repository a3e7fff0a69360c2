// libFuzzer target: layer strings and --input shapes as the command line reads them.
// Input: line 1 is a layer string, lines 2-4 are input shapes ("1x3x224x224").
// Properties: every rejection is a core::error; an accepted op prints (core::to_string) to a canonical
// string that parses back to the same op; a one-layer model on the shapes analyses, or fails with a
// core::error, and its counts are never negative.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "ridgeline/core/layer.hpp"
#include "ridgeline/core/memory.hpp"
#include "ridgeline/core/model.hpp"

using namespace ridgeline;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096) return 0;
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> lines;
    std::size_t pos = 0;
    while (lines.size() < 4) {
        const std::size_t nl = text.find('\n', pos);
        lines.push_back(text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
        if (nl == std::string::npos) break;
        pos = nl + 1;
    }
    fuzz::expect_clean([&] {
        const core::op o = core::parse_op(lines[0], "fuzz");
        const std::string canonical = core::to_string(o);
        fuzz::require(core::parse_op(canonical, "fuzz") == o, "\"" + lines[0] + "\" prints as \"" + canonical +
                                                                  "\", which parses to a different op");
        std::vector<core::shape> shapes;
        for (std::size_t i = 1; i < lines.size(); ++i) shapes.push_back(core::parse_shape(lines[i]));
        if (shapes.empty()) return;
        const core::model_analysis a = core::analyze(core::single_layer_model(o, shapes, "layer", "fuzz"), core::dtype::fp32);
        const core::cost& c = a.layers.at(0).cost;
        fuzz::require(c.params >= 0 && c.buffers >= 0 && c.macs >= 0 && c.flops >= 0 && c.bytes >= 0,
                      "negative count for \"" + canonical + "\"");
        const core::memory_summary m = core::memory_of(a);
        (void)core::estimate_training(a, m);
    });
    return 0;
}
