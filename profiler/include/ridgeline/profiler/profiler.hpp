#pragma once
// The Profiler: every layer of a model prepared, verified and timed in isolation on a backend, then the
// whole forward pass end to end; plus memory and a training estimate.
//
// Per layer: views are not run (they compute and move nothing); an op the backend declines is
// "unsupported" with its reason; a layer that does not fit in memory, or whose allocation fails, is
// "skipped" with the reason; a layer whose output disagrees with the reference is "failed" and is not
// timed; otherwise it is "measured". Interruption (the stop flag) leaves the remaining layers
// "not_measured" and the result marked incomplete.

#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/backend_api/timing.hpp"
#include "ridgeline/core/memory.hpp"
#include "ridgeline/core/roofline.hpp"
#include "ridgeline/core/model.hpp"

namespace ridgeline::profiler {

/// What became of a layer, of the end-to-end pass or of the graph replay (the header comment above); written as
/// its name (to_string) only at output.
enum class run_state {
    measured,      // verified (or verification off) and timed
    view,          // a view: computes and moves nothing, not run
    unsupported,   // the backend declined the op (the reason says why)
    skipped,       // not attempted: does not fit in memory, its allocation failed, or not asked for
    failed,        // ran and disagreed with the reference, or threw
    not_measured,  // interrupted before it was timed
    /// the end-to-end pass or the graph replay only: timed, but fewer than the minimum of samples were clean (other
    /// work took them); its time is kept for the record and never used as a measurement (a layer keeps `measured`
    /// and takes the bound "disturbed" instead)
    disturbed,
};
std::string_view to_string(run_state s);
std::ostream& operator<<(std::ostream& os, run_state s);

/// The verification of a layer's output against the reference.
enum class verification_state { passed, failed, unsupported, skipped };
std::string_view to_string(verification_state s);
std::ostream& operator<<(std::ostream& os, verification_state s);

/// Relative L2 error allowed against the reference, per data type (docs/timing.md, "Verification"):
/// fp32 1e-4, tf32 5e-3, fp16 5e-3, bf16 2e-2.
double verification_tolerance(core::dtype dt);
/// The tolerance for a graph: twice the data type's in fp16 and bf16 where it holds an attention layer, whose
/// probabilities are rounded to the data type before they weight the values (as PyTorch's math path and every unfused
/// kernel do): where the weighted values cancel, that rounding is larger against the output than the output's own.
double verification_tolerance(core::dtype dt, const core::model_analysis& g);

struct verification_result {
    verification_state state = verification_state::skipped;
    double rel_l2_error = std::numeric_limits<double>::quiet_NaN();
    double tolerance = 0;
    std::int64_t unwritten = 0;     // output elements left at the poison value
    std::string message;
};

/// Compares `got` with `want` (same shapes): relative L2 error ||got - want|| / ||want||, and counts
/// elements still NaN (poisoned, never written) where the reference is finite.
verification_result compare_outputs(const std::vector<backend_api::host_tensor>& got, const std::vector<backend_api::host_tensor>& want,
                                    double tolerance);

/// What profiling one layer allocates at its peak, in bytes: checked before anything is allocated, against
/// --max-memory or the backend's free memory (a layer over it is skipped with the reason). The backend's tensors
/// (inputs, parameters, buffers, output) at the data type's size; where the backend's memory is the host's
/// (`host_memory`, the CPU backends), also the seeded host data in float32 and, with `verify`, verification's
/// float32 copies: the reference's inputs, its output and the copy of it returned, and the backend's result read
/// back. Against the peak RSS less the process's own (234 MB on the Xeon VM: the CUDA libraries mapped), with
/// --quick: 1.10x for a bilinear 1x3x1000x1000 -> 4000x4000 (804 MB estimated, 731 MB measured; 1.30x with
/// --no-verify), 1.35x for a 3x3 convolution on 8x256x56x56, 1.15x for a bf16 linear 8192 -> 8192 on 64 rows;
/// the former rule (the backend's tensors twice) was 0.56x, 0.78x and 0.75x: below the real need.
/// Throws core::overflow_error when the count passes int64.
std::int64_t layer_bytes_needed(const core::layer_analysis& la, core::dtype dt, bool verify, bool host_memory);

/// The twin check of a layer (profile_model): layers of one run with the same signature (core::layer_signature: op,
/// attributes, input shapes, data type) are the same work, so their medians must agree. When two twins' 95% CIs lie
/// apart by more than twin_tolerance, every twin of the group is measured again and keeps the lower of its two
/// medians (other work only slows a layer: an unseen neighbour on the memory bus, a cache another tenant holds), and a
/// twin still apart from the group's fastest is measured up to twin_extra_tries times more; if they still lie apart,
/// each says so (`disagree`, the verdict's reason, the table's mark, a warning).
struct twin_check {
    /// the other measured layers of the same signature, in model order (the first twin_names_listed of them)
    std::vector<std::string> twins;
    int group_size = 0;              // the layers of its signature in this run, itself included
    int measurements = 1;            // how often it was measured (1, or 2 to 2 + twin_extra_tries)
    bool remeasured = false;         // its group disagreed, so it was measured again
    double first_median_ms = std::numeric_limits<double>::quiet_NaN();   // its median before that
    double second_median_ms = std::numeric_limits<double>::quiet_NaN();  // and measured again (NaN: disturbed)
    bool disagree = false;           // still apart from a twin after measuring again
};

/// How far apart two twins' CIs may lie before they disagree: 10% of the faster one's upper bound. On the 2-core VM,
/// separately allocated copies of one small layer (a 3 us relu, a 12 us BatchNorm of resnet18) stayed 5-15% apart
/// through three measurements each, with CIs of +-2%; a VM's speed modes put a layer 1.6-2x apart (resnet18's
/// layer4.0.conv2 once read 1.600 ms beside its twin's 0.874 ms, layer1's 3x3 convolutions 0.52 and 0.98 ms).
inline constexpr double twin_tolerance = 0.10;

/// More measurements of a twin still apart from its group's fastest after everyone was measured again.
inline constexpr int twin_extra_tries = 2;
/// How many of its twins a layer names (a transformer's 24 blocks would list 23 names in each of 24 layers).
inline constexpr std::size_t twin_names_listed = 8;

/// Whether two measurements of the same work disagree: the slower one's CI starts above the faster one's end by
/// more than twin_tolerance.
bool twins_disagree(const backend_api::timing_result& a, const backend_api::timing_result& b);

struct layer_profile {
    core::layer_analysis analysis;
    run_state state = run_state::skipped;
    std::string reason;  // why not measured
    std::optional<backend_api::timing_result> time;
    verification_result verification;
    std::int64_t workspace_bytes = 0;
    std::string implementation;  // what the backend ran
    /// Host time of one run() call without waiting for the device (ms): the API and launch cost on a
    /// GPU; on the CPU, where run() is synchronous, the whole run. NaN when not measured.
    double host_ms_per_run = std::numeric_limits<double>::quiet_NaN();
    /// Roofline verdict against the device's ceilings (when the profile had them and the layer a time).
    std::optional<core::roofline_point> roofline;
    core::roofs roofs_used;  // the roofs this layer was judged against
    std::optional<twin_check> twins;  // set where the run measured other layers of the same signature
    /// The earlier layer of the same signature whose measurement this layer reports (profile_options::every_layer
    /// false); empty when this layer was measured itself.
    std::string measured_as;

    [[nodiscard]] bool has_time() const { return state == run_state::measured && time && time->samples > 0; }
    /// Executed FLOPs (padding taps excluded, core::cost::executed_flops) / median time, in GFLOP/s: the rate
    /// the kernel ran at, comparable with the compute roof (benchdnn counts the same); NaN without a time.
    [[nodiscard]] double achieved_gflops() const;
    /// bytes / median time, in GB/s (10^9 bytes per second); NaN without a time.
    [[nodiscard]] double achieved_gbs() const;
};

/// One group a deployment would fuse (core::fuse of the profiled model), timed once as one kernel
/// (profile_options::fusion_savings), against the sum of its members' medians in the profile.
struct fusion_saving {
    core::layer_analysis group;  // the fused group (its members in group.fused)
    layer_profile fused;         // the group timed and verified as one kernel (measured_as: a twin group's)
    /// Sum of the members' medians in the profile; NaN where a member has no clean time (none, or disturbed by other
    /// work): then no saving is claimed.
    double members_ms = std::numeric_limits<double>::quiet_NaN();
};

/// What fusing would save: every group, and the fused model's end-to-end pass.
struct fusion_savings {
    std::vector<fusion_saving> groups;
    std::optional<backend_api::timing_result> end_to_end;  // the fused model's forward pass
    run_state end_to_end_state = run_state::skipped;
    std::string end_to_end_reason;
    /// Its outputs against the reference run of the fused model, as profile_result::end_to_end_verification.
    verification_result end_to_end_verification;
};

struct progress_event {
    std::size_t index = 0;  // 0-based layer index; == total for the end-to-end pass
    std::size_t total = 0;
    std::string name;
    double elapsed_s = 0;
    double eta_s = -1;  // < 0 when unknown
};

/// What verification compares a backend's outputs with, as CUTLASS's profiler takes its reference providers:
/// `outputs` computes a graph's outputs on the same inputs and weights by a trusted method, and `backend` names
/// the backend that is itself this reference (its outputs are not compared with themselves).
struct reference_provider {
    std::string backend;
    std::function<std::vector<backend_api::host_tensor>(const core::model_analysis&, const backend_api::graph_data&)> outputs;
};

/// The largest model (executed MACs, all layers) whose end-to-end pass is verified against the reference run of the
/// whole model, on top of the per-layer verification (each distinct layer once): the reference loops (fp64
/// accumulation) took 4.9 s more for resnet50 at batch 4 (16.4 G MACs: a --quick profile 13.0 s verified, 8.1 s not,
/// its per-layer checks included) on the 2-core Zen 4 VM.
inline constexpr std::int64_t end_to_end_verify_max_macs = 20'000'000'000;

/// The CPU reference loops (cpu::reference_graph_outputs, what the cpu-ref backend runs): every op, in fp64
/// accumulation, on the host. Thread count untouched.
reference_provider cpu_reference();

struct profile_options {
    backend_api::timing_options timing;
    bool verify = true;
    reference_provider reference = cpu_reference();  // what `verify` compares with
    bool end_to_end = true;
    bool per_layer = true;  // false: only the end-to-end pass (sweeps of whole models)
    std::uint64_t seed = 20261130;
    std::int64_t max_memory_bytes = 0;  // 0: what the backend reports free
    bool graph_replay = false;          // also time the forward pass replayed as one captured graph
    /// profile --trace: after the end-to-end timing, up to this many more passes with a mark after each layer
    /// (backend_api::prepared::run_marked; at least 3, no more once 2 s have gone), kept in profile_result::trace;
    /// 0: none.
    std::size_t trace_passes = 0;
    /// Without fusing (no group in the analysis): time each group core::fuse would make once as one kernel, and the
    /// fused model's end to end (profile_result::fusion); the groups' twins report the first one's time.
    bool fusion_savings = false;
    /// Measure every layer, twins included (then twins must agree: check_twins). false (the default): a layer with
    /// the signature of one measured before (core::layer_signature: the same op, attributes, input shapes and data
    /// type: a transformer's repeated blocks, resnet's repeated convolutions) reports that layer's measurement and
    /// says so (layer_profile::measured_as), which is what lets a 32-block model profile in minutes.
    bool every_layer = false;
    /// Real parameter values (a model file's weights) by param_key; random where absent.
    std::shared_ptr<const backend_api::graph_data> weights;
    /// The device's ceilings: when given, every measured layer gets a roofline verdict.
    std::optional<backend_api::ceilings> ceilings;
    /// Without ceilings: why (not asked for, the backend has none, disturbed); the report says it beside the table.
    std::string no_ceilings_reason;
    std::function<void(const progress_event&)> on_progress;
    const std::atomic<bool>* stop = nullptr;
};

/// One forward pass run for a trace: when it started and when each layer's work ended, in ns of the host's steady
/// clock since the first traced pass started. Layers without work of their own (views) have no entry.
struct traced_pass {
    double start_ns = 0;
    double end_ns = 0;
    std::vector<std::pair<std::size_t, double>> layer_end_ns;  // (index in analysis.layers, end)
};

struct profile_result {
    core::model_analysis analysis;
    backend_api::device_info device;
    std::string timer_name;
    double timer_resolution_ns = 0;
    double timer_overhead_ns = 0;
    backend_api::timing_options timing;
    bool verify = true;
    std::uint64_t seed = 0;
    std::vector<layer_profile> layers;
    std::optional<backend_api::timing_result> end_to_end;
    std::optional<backend_api::timing_result> graph_replay;  // the forward pass as one captured graph (--graph)
    run_state graph_replay_state = run_state::skipped;
    std::string graph_replay_reason;
    run_state end_to_end_state = run_state::skipped;  // never view
    /// profile_options::trace_passes passes with a mark after each layer; empty with the reason in trace_note.
    std::vector<traced_pass> trace;
    std::string trace_note;
    std::string end_to_end_reason;
    /// The end-to-end pass's outputs against the reference run of the whole model, before it is timed (a pass whose
    /// buffers are reused or written in place can be wrong where every layer alone is right): skipped without
    /// verification, on the reference backend itself, or past end_to_end_verify_max_macs (the message says which).
    verification_result end_to_end_verification;
    double sum_of_layers_ms = 0;  // sum of the measured layers' medians
    std::int64_t workspace_bytes = 0;
    core::memory_summary memory;
    core::training_estimate training;
    bool complete = true;
    std::vector<std::string> not_measured;
    std::optional<backend_api::ceilings> ceilings;
    std::string no_ceilings_reason;  // profile_options::no_ceilings_reason, where ceilings is empty
    /// When a layer beat its memory roof by more than the tolerance (hot cache), the sweep points behind that
    /// roof were measured again right after the layers (a shared host's cache bandwidth drifts by 10-20% from one
    /// minute to the next, and a roof measured in a slow minute is not the machine's): each raised point is
    /// kept in `ceilings` (the higher of the two readings) and every layer judged again. One line per check,
    /// for the report's warnings; empty when no roof was checked.
    std::vector<std::string> roof_rechecks;
    bool ceilings_raised = false;  // a recheck raised a sweep point: the caller may cache the raised ceilings
    /// Sum of layer medians per roofline bound, in ms.
    std::map<core::bound_class, double> bound_ms;
    /// Layers measured again because their twins disagreed, and those that still disagree (in model order).
    std::vector<std::string> twins_remeasured;
    std::vector<std::string> twins_disagreeing;
    /// Layers that report an identical earlier layer's measurement (measured_as), and how many distinct layers ran.
    std::size_t layers_reused = 0;
    std::size_t layers_measured = 0;
    bool twins_interrupted = false;  // stopped while twins were measured again: judged on what was measured
    /// profile_options::fusion_savings, where the model has groups to fuse; empty otherwise.
    std::optional<fusion_savings> fusion;
};

/// The roofs a layer is judged against: the compute roof of its data type, the bandwidth of its working set
/// (hot cache) or of DRAM (cold cache), the dispatch overhead, and the tolerances from the ceilings' spread.
/// `implementation` is what the backend ran (prepared::notes()): a Winograd or FFT algorithm does fewer
/// multiplies than any count, so the compute roof cannot mistrust it (core::roofs::compute_checked).
core::roofs roofs_for(const core::layer_analysis& l, core::dtype dt, const backend_api::ceilings& c, backend_api::cache_mode cache,
                      const std::string& implementation = {});

/// The bandwidth roof of a whole model's end-to-end pass: its bytes over the sum of its layers' memory floors, each
/// layer's bytes at the roof of its own working set (hot cache: bandwidth_for_working_set_gbs; cold: dram_roof_gbs
/// of its bytes). Derived: the sum of every layer's bytes is no working set (judged as one, a model of small layers
/// would get the DRAM roof of a few hundred MB), and the pass's memory floor is the sum of its layers' floors. GB/s;
/// dram_roof_gbs() where no layer moves a byte.
double model_bandwidth_gbs(const core::model_analysis& a, const backend_api::ceilings& c, backend_api::cache_mode cache);

/// Whether a backend's implementation note names an algorithm that does fewer multiplies than the direct
/// count: Winograd ("wino") or FFT.
bool fewer_multiplies(const std::string& implementation);

/// The roofline verdict of a measured time: core::classify on the executed FLOPs and the bytes, or the bound
/// "disturbed" (no verdict) when the time could not collect enough clean samples.
core::roofline_point judge(const core::cost& cost, const backend_api::timing_result& t, const core::roofs& roofs);

/// Throws core::error when the model's KV cache (core::memory_of's kv_cache_bytes: 2 x layers x kv heads x head_dim x
/// cached tokens x batch x the dtype's bytes) is larger than the memory allowed (`max_memory_bytes`, or what `b`
/// reports free when 0): a decode step cannot run without its whole cache, so it is refused before anything is
/// measured. profile_model calls it first; a command calls it before it measures the ceilings.
void require_kv_cache_fits(const core::model_analysis& analysis, backend_api::backend& b, std::int64_t max_memory_bytes);

/// Profiles every layer of `analysis` on `b`, then the whole forward pass. Never throws for a layer's
/// problem (it is recorded); throws only for a broken model or a KV cache that cannot fit (core::error).
profile_result profile_model(const core::model_analysis& analysis, backend_api::backend& b, const profile_options& options);

/// Profiles one layer alone (a one-layer model).
layer_profile profile_layer(const core::layer_analysis& layer, const core::model_analysis& parent, backend_api::backend& b,
                            const profile_options& options);

}  // namespace ridgeline::profiler
