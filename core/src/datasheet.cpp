#include "ridgeline/core/datasheet.hpp"

#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace ridgeline::core {

namespace {

// Sources (datasheets print tensor-core figures "with sparsity"; the dense figure is half of it):
constexpr std::string_view a100_source =
    "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf), "
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf";
constexpr std::string_view h100_source =
    "NVIDIA H100 Tensor Core GPU datasheet, https://resources.nvidia.com/en-us-tensor-core/"
    "nvidia-tensor-core-gpu-datasheet (sparsity figures halved)";
constexpr std::string_view h200_source =
    "NVIDIA H200 Tensor Core GPU specifications, https://www.nvidia.com/en-us/data-center/h200/ "
    "(sparsity figures halved)";
constexpr std::string_view l4_source =
    "NVIDIA L4 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/l4/ (sparsity figures halved)";
constexpr std::string_view t4_source =
    "NVIDIA T4 Tensor Core GPU datasheet (t4-tensor-core-datasheet-951643.pdf), "
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf "
    "(fp16: mixed precision FP16/FP32; no TF32 or BF16 on Turing)";
constexpr std::string_view ada_source =
    "NVIDIA Ada GPU Architecture whitepaper v2.1, appendix table of GeForce RTX 4090 "
    "(FP16/BF16 tensor with FP32 accumulate, dense), "
    "https://images.nvidia.com/aem-dam/Solutions/Data-Center/l4/nvidia-ada-gpu-architecture-whitepaper-v2.1.pdf";

// CPUs: the vendor gives cores and clocks; the FLOP/s peak is derived: cores x base clock x FP32 FLOP per
// cycle per core (two 256-bit FMA pipes = 32 on Zen 2/3/4; two 512-bit FMA units = 64 on Sapphire Rapids),
// bf16 from AVX512-BF16 / AMX where present (AMX-BF16: 1024 FLOP per cycle per core). Bandwidth: channels
// x MT/s x 8 bytes.
constexpr std::string_view epyc_7b13_source =
    "AMD EPYC 7B13 (Milan, Google Cloud): 64 cores, 2.45 GHz base; derived 64 x 2.45e9 x 32 = 5.02 TFLOP/s "
    "fp32; 8 channels DDR4-3200 = 204.8 GB/s (https://www.amd.com/en/products/processors/server/epyc/"
    "7003-series.html)";
constexpr std::string_view epyc_9654_source =
    "AMD EPYC 9654 (Genoa): 96 cores, 2.4 GHz base; derived 96 x 2.4e9 x 32 = 7.37 TFLOP/s fp32 (bf16 via "
    "AVX512-BF16 at 2x); 12 channels DDR5-4800 = 460.8 GB/s (https://www.amd.com/en/products/processors/server/"
    "epyc/4th-generation-9004-and-8004-series/amd-epyc-9654.html)";
constexpr std::string_view xeon_8480_source =
    "Intel Xeon Platinum 8480+ (Sapphire Rapids): 56 cores, 2.0 GHz base; derived 56 x 2.0e9 x 64 = 7.17 "
    "TFLOP/s fp32, AMX-BF16 56 x 2.0e9 x 1024 = 114.7 TFLOP/s bf16 (no AMX-FP16 before Granite Rapids: fp16 on "
    "AVX512-FP16, 56 x 2.0e9 x 128 = 14.34 TFLOP/s); 8 channels DDR5-4800 = 307.2 GB/s "
    "(https://ark.intel.com/content/www/us/en/ark/products/231746.html)";

// The SM counts, L2 sizes and memory sizes of the GPUs:
constexpr std::string_view a100_spec =
    "NVIDIA A100 Tensor Core GPU Architecture whitepaper (v1.0): 108 SMs, 40 MB L2 (A100 40GB and 80GB alike)";
constexpr std::string_view h100_spec =
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper (v1.03): H100 SXM5 132 SMs, H100 PCIe 114 SMs, 50 MB L2; "
    "measured here (the device tool's KINDS.md, 2026-11-13): PyTorch reported 132 multiprocessors and 50 MB of L2";
constexpr std::string_view h200_spec =
    "the H100 SXM5's processor (132 SMs, NVIDIA H200 specifications: 141 GB HBM3e); measured here (the device tool's "
    "KINDS.md, 2026-10-28): PyTorch reported 132 multiprocessors and 60 MB of L2";
constexpr std::string_view ada_spec =
    "NVIDIA Ada GPU Architecture whitepaper v2.1: RTX 4090 128 SMs, 72 MB L2; L4 (AD104): 58 SMs, 48 MB L2 (the "
    "L4's from NVIDIA's L4 product brief, not re-read here: unvalidated)";
constexpr std::string_view t4_spec = "NVIDIA Turing GPU Architecture whitepaper: Tesla T4 (TU104) 40 SMs, 4 MB L2, 16 GB";

}  // namespace

const std::vector<datasheet_entry>& datasheet() {
    //                device,                     name pattern(s),                                 fp32,  tf32,  fp16,  bf16,   GB/s
    static const std::vector<datasheet_entry> table = {
        {"NVIDIA A100 SXM4 80GB", "NVIDIA A100-SXM4-80GB", 19.5, 156, 312, 312, 2039, a100_source, "a100-sxm4-80gb", 108, 80, 40, 80, a100_spec},
        {"NVIDIA A100 SXM4 40GB", "NVIDIA A100-SXM4-40GB", 19.5, 156, 312, 312, 1555, a100_source, "a100-sxm4-40gb", 108, 80, 40, 40, a100_spec},
        {"NVIDIA A100 PCIe 80GB", "NVIDIA A100 80GB PCIe|NVIDIA A100-PCIE-80GB", 19.5, 156, 312, 312, 1935, a100_source, "a100-pcie-80gb", 108, 80, 40, 80, a100_spec},
        {"NVIDIA A100 PCIe 40GB", "NVIDIA A100-PCIE-40GB|NVIDIA A100 40GB PCIe", 19.5, 156, 312, 312, 1555, a100_source, "a100-pcie-40gb", 108, 80, 40, 40, a100_spec},
        {"NVIDIA H100 SXM5 80GB", "NVIDIA H100 80GB HBM3|NVIDIA H100 SXM5 80GB|NVIDIA H100 SXM", 67, 494.5, 989.5,
         989.5, 3350, h100_source, "h100", 132, 90, 50, 80, h100_spec},
        {"NVIDIA H100 PCIe", "NVIDIA H100 PCIe", 51, 378, 756.5, 756.5, 2000, h100_source, "h100-pcie", 114, 90, 50, 80, h100_spec},
        {"NVIDIA H100 NVL", "NVIDIA H100 NVL", 60, 417.5, 835.5, 835.5, 3900, h100_source, "h100-nvl", 132, 90, 50, 94, h100_spec},
        {"NVIDIA H200 SXM 141GB", "NVIDIA H200", 67, 494.5, 989.5, 989.5, 4800, h200_source, "h200", 132, 90, 60, 141, h200_spec},
        {"NVIDIA H200 NVL", "NVIDIA H200 NVL", 60, 417.5, 835.5, 835.5, 4800, h200_source, "h200-nvl", 132, 90, 60, 141, h200_spec},
        {"NVIDIA L4", "NVIDIA L4", 30.3, 60, 121, 121, 300, l4_source, "l4", 58, 89, 48, 24, ada_spec},
        {"NVIDIA T4", "Tesla T4|NVIDIA T4", 8.1, 0, 65, 0, 320, t4_source, "t4", 40, 75, 4, 16, t4_spec},
        {"NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090", 82.6, 82.6, 165.2, 165.2, 1008, ada_source, "rtx4090", 128, 89, 72, 24, ada_spec},
        {"AMD EPYC 7B13", "AMD EPYC 7B13 64-Core Processor|AMD EPYC 7B13", 5.02, 0, 0, 0, 204.8, epyc_7b13_source, "epyc-7b13", 0, 0, 0, 0, {}},
        {"AMD EPYC 9654", "AMD EPYC 9654 96-Core Processor|AMD EPYC 9654", 7.37, 0, 0, 14.75, 460.8, epyc_9654_source, "epyc-9654", 0, 0, 0, 0, {}},
        {"Intel Xeon Platinum 8480+", "Intel(R) Xeon(R) Platinum 8480+|Intel Xeon Platinum 8480+", 7.17, 0, 14.34, 114.7,
         307.2, xeon_8480_source, "xeon-8480", 0, 0, 0, 0, {}},
    };
    return table;
}

std::optional<double> datasheet_entry::peak_tflops(dtype dt) const {
    double v = 0;
    switch (dt) {
        case dtype::fp32: v = fp32_tflops; break;
        case dtype::tf32: v = tf32_tflops; break;
        case dtype::fp16: v = fp16_tflops; break;
        case dtype::bf16: v = bf16_tflops; break;
    }
    if (!(v > 0)) return std::nullopt;
    return v;
}

std::string normalize_device_name(std::string_view name) {
    std::string upper;
    for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const std::string_view mark : {"(R)", "(TM)"}) {
        for (auto at = upper.find(mark); at != std::string::npos; at = upper.find(mark)) upper.erase(at, mark.size());
    }
    std::string out;
    bool space = false;
    for (char c : upper) {
        const bool sep = c == ' ' || c == '-' || c == '_' || c == '(' || c == ')' || c == '\t';
        if (sep) {
            space = !out.empty();
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += c;
    }
    return out;
}

std::optional<datasheet_entry> find_datasheet(std::string_view device_name) {
    const std::string want = normalize_device_name(device_name);
    if (want.empty()) return std::nullopt;
    for (const auto& e : datasheet()) {
        // the entry's own display name names it too: a datasheet target carries it as its device name
        if (normalize_device_name(e.device) == want) return e;
        std::string_view rest = e.name_pattern;
        while (!rest.empty()) {
            const auto bar = rest.find('|');
            const std::string_view alternative = rest.substr(0, bar);
            if (normalize_device_name(alternative) == want) return e;
            if (bar == std::string_view::npos) break;
            rest.remove_prefix(bar + 1);
        }
    }
    return std::nullopt;
}

const datasheet_entry& datasheet_by_name(std::string_view name) {
    const std::string want = normalize_device_name(name);
    auto keys = [](const std::vector<const datasheet_entry*>& list) {
        std::string s;
        for (const auto* e : list) s += (s.empty() ? "" : ", ") + std::string(e->key);
        return s;
    };
    std::vector<const datasheet_entry*> all, prefixed;
    for (const auto& e : datasheet()) {
        all.push_back(&e);
        const std::string key = normalize_device_name(e.key), device = normalize_device_name(e.device);
        if (!want.empty() && (key == want || device == want)) return e;
        if (!want.empty() && (key.rfind(want, 0) == 0 || device.rfind(want, 0) == 0)) prefixed.push_back(&e);
    }
    if (prefixed.size() == 1) return *prefixed.front();
    if (prefixed.empty())
        throw std::invalid_argument("no datasheet entry is named \"" + std::string(name) + "\" (the entries: " + keys(all) +
                                    ")");
    throw std::invalid_argument("\"" + std::string(name) + "\" names " + std::to_string(prefixed.size()) +
                                " datasheet entries (" + keys(prefixed) + "); give one of them");
}

std::string describe_peaks(const datasheet_entry& e) {
    auto num = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", v);
        return std::string(buf);
    };
    std::string s;
    for (dtype dt : {dtype::fp32, dtype::tf32, dtype::fp16, dtype::bf16}) {
        const auto p = e.peak_tflops(dt);
        if (!p) continue;
        s += (s.empty() ? "" : " / ") + std::string(to_string(dt)) + " " + num(*p);
    }
    s += " TFLOP/s dense, " + num(e.memory_bandwidth_gbs) + " GB/s";
    return s;
}

}  // namespace ridgeline::core
