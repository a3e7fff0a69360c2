// The oneDNN lowering (dnnl_graph.hpp): tensors and layouts, dense ops, convolution, normalisation.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "dnnl_graph.hpp"
#include "dnnl_loops.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"

namespace ridgeline::cpu::dnnl_detail {

void dnnl_graph::build(const core::model_analysis& graph, const backend_api::graph_data& data) {
    data_ = &data;
    for (const auto& in : graph.inputs) {
        if (in.indices) {
            const auto& host = data.tensors.at(in.name);
            auto& ids = ids_[in.name];
            ids.reserve(host.data.size());
            for (float v : host.data) ids.push_back(static_cast<std::int64_t>(v));
            continue;
        }
        slot s;
        s.mem = upload(data.tensors.at(in.name), activation_md(to_dims(in.dims), to_dnnl(dt_)));
        s.constant = true;
        slots_[in.name] = s;
    }
    step_layer_.assign(steps_.size(), no_layer);
    outputs_ = graph.outputs;
    for (std::size_t i = 0; i < graph.layers.size(); ++i) {
        for (const auto& t : graph.layers[i].layer.inputs) last_reader_[t] = i;
        if (core::is_view(graph.layers[i].layer.op) && !graph.layers[i].layer.inputs.empty())
            viewed_.insert(graph.layers[i].layer.inputs[0]);
    }
    for (std::size_t i = 0; i < graph.layers.size(); ++i) {
        const auto& la = graph.layers[i];
        current_layer_ = i;
        try {
            add_layer(la);
        } catch (const dnnl::error& e) {
            rethrow(e, core::where(la.layer));
        }
        step_layer_.resize(steps_.size(), i);  // the steps this layer added are its work
        release_dead_buffers(i);
    }
    for (const auto& o : graph.outputs) {
        output_shapes_.push_back(find_shape(graph, o));
        // an output that is a view aliases another buffer (maybe a model input), and a held tensor (parameter) is
        // written once, when prepared: give it its own, written by every run, so poisoning never touches the source
        slot& s = slots_.at(o);
        if (s.view || s.constant) {
            const memory::desc md = s.mem.get_desc();
            memory dst(plain_md(md.dims(), md.data_type()), engine_);
            steps_.push_back({dnnl::reorder(s.mem, dst), {{DNNL_ARG_FROM, s.mem}, {DNNL_ARG_TO, dst}}, {}});
            notes_.emplace_back("reorder");
            s.mem = dst;
            s.view = s.strided = s.constant = false;
        }
    }
    step_layer_.resize(steps_.size(), no_layer);  // the outputs' own copies belong to no layer
    stream_.wait();
    data_ = nullptr;
}

void dnnl_graph::run() {
    for (auto& st : steps_) run_step(st);
    stream_.wait();
}

void dnnl_graph::run_step(step& st) {
    if (st.fn)
        st.fn();
    else
        st.prim.execute(stream_, st.args);
}

bool dnnl_graph::run_marked(const std::function<void(std::size_t layer)>& mark) {
    for (std::size_t k = 0; k < steps_.size(); ++k) {
        run_step(steps_[k]);
        const std::size_t layer = step_layer_[k];
        if (layer != no_layer && (k + 1 == steps_.size() || step_layer_[k + 1] != layer)) {
            stream_.wait();
            mark(layer);
        }
    }
    stream_.wait();
    return true;
}

void dnnl_graph::poison_outputs() {
    for (const auto& o : outputs_) {
        if (slots_.at(o).holds_state) continue;
        memory& m = slots_.at(o).mem;
        const memory::desc md = m.get_desc();
        auto* p = static_cast<unsigned char*>(m.get_data_handle());
        const std::size_t n = md.get_size();
        switch (md.data_type()) {
            case memory::data_type::f32: {
                const std::uint32_t nan = 0x7fc00000u;
                for (std::size_t i = 0; i + 4 <= n; i += 4) std::memcpy(p + i, &nan, 4);
                break;
            }
            case memory::data_type::bf16: {
                const std::uint16_t nan = 0x7fc0u;
                for (std::size_t i = 0; i + 2 <= n; i += 2) std::memcpy(p + i, &nan, 2);
                break;
            }
            case memory::data_type::f16: {
                const std::uint16_t nan = 0x7e00u;
                for (std::size_t i = 0; i + 2 <= n; i += 2) std::memcpy(p + i, &nan, 2);
                break;
            }
            default:
                std::memset(p, 0xff, n);
        }
    }
    // a sum post-op's output that starts from a model input: the input again, not NaN (the producer writes every
    // element, and the run adds to what the buffer holds)
    for (auto& [dst, addend] : addends_) dnnl::reorder(addend, dst).execute(stream_, addend, dst);
    stream_.wait();
}

std::vector<backend_api::host_tensor> dnnl_graph::outputs() {
    stream_.wait();
    std::vector<backend_api::host_tensor> out;
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
        memory& src = slots_.at(outputs_[i]).mem;
        backend_api::host_tensor t{output_shapes_[i], {}};
        t.data.resize(static_cast<std::size_t>(t.dims.numel()));
        memory dst(plain_md(src.get_desc().dims(), memory::data_type::f32), engine_, t.data.data());
        dnnl::reorder(src, dst).execute(stream_, src, dst);
        stream_.wait();
        out.push_back(std::move(t));
    }
    return out;
}

std::int64_t dnnl_graph::workspace_bytes() const { return workspace_; }

std::string dnnl_graph::notes() const {
    std::string s;
    for (const auto& n : notes_) s += (s.empty() ? "" : "+") + n;
    return s;
}

core::shape dnnl_graph::find_shape(const core::model_analysis& g, const std::string& name) {
    for (const auto& la : g.layers)
        if (la.layer.name == name) return la.output_shape;
    for (const auto& in : g.inputs)
        if (in.name == name) return in.dims;
    throw backend_api::backend_error("unknown output tensor " + name);
}

/// Host floats -> a new memory of descriptor `md` (any layout and data type), at prepare time.
memory dnnl_graph::upload(const backend_api::host_tensor& host, const memory::desc& md) {
    auto* ptr = const_cast<float*>(host.data.data());
    memory src(plain_md(md.dims(), memory::data_type::f32), engine_, ptr);
    memory dst(md, engine_);
    dnnl::reorder(src, dst).execute(stream_, src, dst);
    stream_.wait();
    return dst;
}

memory dnnl_graph::upload_param(const core::layer& l, const std::string& param, const memory::desc& md,
                                const std::optional<dims>& host_dims) {
    const std::string key = backend_api::param_key(l, param);
    const auto folded = folded_.find(key);
    const auto& host = folded != folded_.end() ? folded->second : data_->tensors.at(key);
    if (host_dims) {
        // the host tensor viewed with other dims (same element order)
        backend_api::host_tensor view{core::shape(std::vector<std::int64_t>(host_dims->begin(), host_dims->end())),
                                   host.data};
        return upload(view, md);
    }
    return upload(host, md);
}

/// A memory with descriptor `md` holding tensor `name`: the slot itself when it already has that
/// layout; otherwise a reorder (done now for constant inputs, else a step of the run).
memory dnnl_graph::to_layout(const std::string& name, const memory::desc& md) {
    slot& s = slots_.at(name);
    if (s.mem.get_desc() == md) return s.mem;
    for (auto& [cached_md, cached] : converted_[name])
        if (cached_md == md) return cached;
    memory dst(md, engine_);
    dnnl::reorder r(s.mem, dst);
    if (s.constant) {
        r.execute(stream_, s.mem, dst);
        stream_.wait();
    } else {
        steps_.push_back({r, {{DNNL_ARG_FROM, s.mem}, {DNNL_ARG_TO, dst}}, {}});
    }
    converted_[name].emplace_back(md, dst);
    return dst;
}

/// Dense row-major copy (or the tensor itself when it already is one).
memory dnnl_graph::dense(const std::string& name) {
    const slot& s = slots_.at(name);
    const memory::desc md = s.mem.get_desc();
    if (is_plain_dense(md)) return s.mem;
    return to_layout(name, plain_md(md.dims(), md.data_type()));
}

/// The tensor as it is, unless it is a strided view, in which case a dense copy.
memory dnnl_graph::dense_or_blocked(const std::string& name) {
    const slot& s = slots_.at(name);
    return s.strided ? dense(name) : s.mem;
}

memory dnnl_graph::scratchpad(const dnnl::primitive_desc_base& pd) {
    const memory::desc md = pd.scratchpad_desc();
    workspace_ += static_cast<std::int64_t>(md.get_size());
    return memory(md, engine_);
}

memory dnnl_graph::fresh(const memory::desc& md) {
    const std::size_t bytes = md.get_size();
    drawn_buffer* best = nullptr;
    for (auto& b : drawn_)
        if (!b.in_use && b.bytes >= bytes && (!best || b.bytes < best->bytes)) best = &b;
    if (!best) {
        const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64;  // oneDNN's alignment
        void* p = std::aligned_alloc(64, rounded);
        if (!p) throw std::bad_alloc();
        drawn_.push_back({std::shared_ptr<void>(p, std::free), rounded, false});
        best = &drawn_.back();
    }
    best->in_use = true;
    return memory(md, engine_, best->data.get());
}

memory dnnl_graph::elementwise_dst(const memory::desc& md, const std::string& input, const memory& src) {
    const slot& s = slots_.at(input);
    if (!s.constant && !s.view && !s.strided && !s.holds_state && s.mem.get_data_handle() == src.get_data_handle() &&
        src.get_desc() == md && dead_after(input)) {
        notes_.emplace_back("in place");
        return src;
    }
    return fresh(md);
}

bool dnnl_graph::live_after(const std::string& name, const slot& s, std::size_t layer) const {
    const auto it = last_reader_.find(name);
    const bool read_later = it != last_reader_.end() && it->second > layer;
    return read_later || s.constant || s.holds_state || std::find(outputs_.begin(), outputs_.end(), name) != outputs_.end();
}

void dnnl_graph::release_dead_buffers(std::size_t layer) {
    std::vector<std::pair<const char*, const char*>> live;  // the bytes of every tensor still to be read
    for (const auto& [name, s] : slots_) {
        if (!live_after(name, s, layer)) continue;
        const auto* p = static_cast<const char*>(s.mem.get_data_handle());
        live.emplace_back(p, p + std::max<std::size_t>(s.mem.get_desc().get_size(), 1));
    }
    for (auto& b : drawn_) {
        if (!b.in_use) continue;
        const auto* lo = static_cast<const char*>(b.data.get());
        const auto* hi = lo + b.bytes;
        b.in_use = std::any_of(live.begin(), live.end(), [&](const auto& r) { return r.first < hi && lo < r.second; });
    }
}

void dnnl_graph::record(const dnnl::primitive_desc_base& pd) { notes_.emplace_back(pd.impl_info_str()); }

void dnnl_graph::set_output(const std::string& name, memory m, bool strided, bool view) {
    slot s;
    s.mem = std::move(m);
    s.strided = strided;
    s.view = view;
    slots_[name] = std::move(s);
}

dnnl::primitive_attr dnnl_graph::attr() const {
    dnnl::primitive_attr a;
    a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (post_ops_pending_) a.set_post_ops(post_ops_);
    return a;
}

void dnnl_graph::add_layer(const core::layer_analysis& la) {
    if (!la.fused.empty()) return add_fused(la);
    std::visit([&](const auto& op) { add(la, op); }, la.layer.op);
}

// ------------------------------------------------------------ dense ops

void dnnl_graph::add(const core::layer_analysis& la, const core::linear& op) {
    const auto dt = to_dnnl(dt_);
    const memory in = dense(la.layer.inputs[0]);
    const std::int64_t rows = la.input_shapes[0].numel() / op.in_features;
    const memory src(in.get_desc().reshape({rows, op.in_features}), engine_, in.get_data_handle());
    const memory::desc w_any = any_md({op.out_features, op.in_features}, dt);
    const memory::desc b_md = plain_md({op.out_features}, dt == memory::data_type::f32 ? dt : memory::data_type::f32);
    const memory::desc dst_md = plain_md({rows, op.out_features}, dt);
    dnnl::inner_product_forward::desc d =
        op.bias
            ? dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_inference, src.get_desc(), w_any, b_md, dst_md)
            : dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_inference, src.get_desc(), w_any, dst_md);
    dnnl::inner_product_forward::primitive_desc pd(d, attr(), engine_);
    record(pd);
    memory w = upload_param(la.layer, "weight", pd.weights_desc());
    memory dst = producer_dst(dst_md);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}};
    if (op.bias) args[DNNL_ARG_BIAS] = upload_param(la.layer, "bias", pd.bias_desc());
    steps_.push_back({dnnl::inner_product_forward(pd), args, {}});
    set_output(la.layer.name, memory(plain_md(to_dims(la.output_shape), dt), engine_, dst.get_data_handle()));
    keep_.push_back(dst);
}

/// Prepends 1s so the memory has `rank` dims (dense or strided memory; same buffer).
memory dnnl_graph::with_rank(const memory& m, std::size_t rank) {
    const memory::desc md = m.get_desc();
    dims d = md.dims();
    if (d.size() == rank) return m;
    dims s = plain_strides(md);
    if (s.empty()) throw backend_api::unsupported("matmul: blocked input layout");
    const std::int64_t outer = d.empty() ? 1 : d[0] * s[0];
    while (d.size() < rank) {
        d.insert(d.begin(), 1);
        s.insert(s.begin(), outer);
    }
    return memory(memory::desc(d, md.data_type(), s), engine_, m.get_data_handle());
}

void dnnl_graph::add(const core::layer_analysis& la, const core::matmul&) {
    const auto dt = to_dnnl(dt_);
    const std::size_t rank = la.output_shape.rank();
    const memory::desc dst_md = plain_md(to_dims(la.output_shape), dt);
    auto try_make = [&](const memory& a, const memory& b) -> std::optional<dnnl::matmul::primitive_desc> {
        try {
            const memory ar = with_rank(a, rank), br = with_rank(b, rank);
            dnnl::matmul::desc d(ar.get_desc(), br.get_desc(), dst_md);
            dnnl::matmul::primitive_desc pd(d, attr(), engine_);
            pending_a_ = ar;
            pending_b_ = br;
            return pd;
        } catch (const dnnl::error&) {
            return std::nullopt;
        } catch (const backend_api::unsupported&) {
            return std::nullopt;
        }
    };
    const slot& sa = slots_.at(la.layer.inputs[0]);
    const slot& sb = slots_.at(la.layer.inputs[1]);
    auto pd = (plain_strides(sa.mem.get_desc()).empty() || plain_strides(sb.mem.get_desc()).empty())
                  ? std::nullopt
                  : try_make(sa.mem, sb.mem);
    if (!pd) pd = try_make(dense(la.layer.inputs[0]), dense(la.layer.inputs[1]));
    if (!pd) throw backend_api::unsupported(core::where(la.layer) + ": oneDNN matmul declined these shapes");
    record(*pd);
    memory dst = producer_dst(dst_md);
    steps_.push_back({dnnl::matmul(*pd),
                      {{DNNL_ARG_SRC, pending_a_},
                       {DNNL_ARG_WEIGHTS, pending_b_},
                       {DNNL_ARG_DST, dst},
                       {DNNL_ARG_SCRATCHPAD, scratchpad(*pd)}},
                      {}});
    set_output(la.layer.name, dst);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::embedding& op) {
    const auto dt = to_dnnl(dt_);
    if (!op.indices.empty()) {  // held ids: converted once, here
        auto& held = ids_[la.layer.name + "\x01indices"];
        for (const float v : data_->tensors.at(backend_api::param_key(la.layer, "indices")).data)
            held.push_back(static_cast<std::int64_t>(v));
    }
    const auto ids_it = ids_.find(op.indices.empty() ? la.layer.inputs[0] : la.layer.name + "\x01indices");
    if (ids_it == ids_.end())
        throw backend_api::unsupported(core::where(la.layer) + ": embedding reads token ids from a model input only");
    const std::vector<std::int64_t>& ids = ids_it->second;
    for (auto id : ids)
        if (id < 0 || id >= op.num_embeddings)
            throw backend_api::backend_error(core::where(la.layer) + ": token id " + std::to_string(id) + " out of range");
    memory table = upload_param(la.layer, "weight", plain_md({op.num_embeddings, op.embedding_dim}, dt));
    memory dst(plain_md(to_dims(la.output_shape), dt), engine_);
    const std::size_t row_bytes = static_cast<std::size_t>(op.embedding_dim) * memory::data_type_size(dt);
    const auto* src = static_cast<const unsigned char*>(table.get_data_handle());
    auto* out = static_cast<unsigned char*>(dst.get_data_handle());
    const auto n = static_cast<std::int64_t>(ids.size());
    const std::int64_t* id_data = ids.data();
    notes_.emplace_back("ridgeline:gather");
    keep_.push_back(table);
    // rows of an output past the last-level cache streamed (no read for ownership: dnnl_loops.hpp); the next id's row
    // prefetched while this one is copied (the ids jump, so no hardware prefetcher can guess it)
    const bool stream = stream_output(n * static_cast<std::int64_t>(row_bytes));
    steps_.push_back({{}, {}, [=] {
#pragma omp parallel
                          {
#pragma omp for schedule(static)
                              for (std::int64_t i = 0; i < n; ++i) {
                                  if (i + 1 < n) {
                                      const unsigned char* next =
                                          src + static_cast<std::size_t>(id_data[i + 1]) * row_bytes;
                                      for (std::size_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(next + b, 0, 2);
                                  }
                                  unsigned char* o = out + static_cast<std::size_t>(i) * row_bytes;
                                  const unsigned char* r = src + static_cast<std::size_t>(id_data[i]) * row_bytes;
                                  if (stream)
                                      stream_bytes(o, r, static_cast<std::int64_t>(row_bytes));
                                  else
                                      std::memcpy(o, r, row_bytes);
                              }
                              stream_fence();
                          }
                      }});
    set_output(la.layer.name, dst);
}

// ------------------------------------------------------------ convolution

namespace {

/// Whether some output row (or column) of the convolution reads only padding: every tap o*stride - pad + k*dilation
/// of that output position lies outside [0, input). Derived from the convolution's index arithmetic.
bool has_padding_only_output(std::int64_t input, std::int64_t output, std::int64_t kernel, std::int64_t stride,
                             std::int64_t dilation, std::int64_t pad_before) {
    for (std::int64_t o = 0; o < output; ++o) {
        bool reads_input = false;
        for (std::int64_t k = 0; k < kernel && !reads_input; ++k) {
            const std::int64_t i = o * stride - pad_before + k * dilation;
            reads_input = i >= 0 && i < input;
        }
        if (!reads_input) return true;
    }
    return false;
}

}  // namespace

/// oneDNN 2.x's AMX convolution (brgconv:avx512_core_amx_*) crashes (SIGSEGV while executing) when an output row
/// reads only padding, e.g. bf16 2x32x6x5, kernel 1x2, stride 2, bottom padding 1 (found by the differential suite
/// on an AMX Xeon; a standalone oneDNN 2.6.3 program crashes the same way; stride 1 and rows that reach the input
/// do not). For those convolutions the next implementation oneDNN offers that is not AMX runs instead (its name is
/// the layer's note, as always). oneDNN 3 and newer are trusted as they are.
void dnnl_graph::avoid_amx_on_padding_only_outputs(dnnl::convolution_forward::primitive_desc& pd,
                                                   const core::conv2d& op, const core::shape& input,
                                                   const core::shape& output) {
    if (::dnnl_version()->major >= 3) return;
    const core::padding2d p = op.resolved_padding();
    const bool risky = has_padding_only_output(input[2], output[2], op.kernel_size.h, op.stride.h, op.dilation.h, p.top) ||
                       has_padding_only_output(input[3], output[3], op.kernel_size.w, op.stride.w, op.dilation.w, p.left);
    if (!risky) return;
    while (std::string(pd.impl_info_str()).find("amx") != std::string::npos)
        if (!pd.next_impl()) throw backend_api::unsupported("conv2d: oneDNN " + dnnl_version() +
                                                         " offers only its AMX kernel for a convolution with an output "
                                                         "row of padding only, and that kernel crashes");
}

void dnnl_graph::add(const core::layer_analysis& la, const core::conv2d& op) {
    const auto dt = to_dnnl(dt_);
    const auto bias_dt = dt == memory::data_type::f32 ? dt : memory::data_type::f32;
    const core::padding2d p = op.resolved_padding();
    const dims w_dims = op.groups == 1 ? dims{op.out_channels, op.in_channels, op.kernel_size.h, op.kernel_size.w}
                                       : dims{op.groups, op.out_channels / op.groups, op.in_channels / op.groups,
                                              op.kernel_size.h, op.kernel_size.w};
    const memory::desc src_any = any_md(to_dims(la.input_shapes[0]), dt);
    const memory::desc dst_any = any_md(to_dims(la.output_shape), dt);
    const memory::desc w_any = any_md(w_dims, dt);
    const dims strides{op.stride.h, op.stride.w}, dil{op.dilation.h - 1, op.dilation.w - 1};
    const dims pad_l{p.top, p.left}, pad_r{p.bottom, p.right};
    auto d = op.bias ? dnnl::convolution_forward::desc(
                           dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_any, w_any,
                           plain_md({op.out_channels}, bias_dt), dst_any, strides, dil, pad_l, pad_r)
                     : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                       dnnl::algorithm::convolution_direct, src_any, w_any, dst_any,
                                                       strides, dil, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc pd(d, attr(), engine_);
    avoid_amx_on_padding_only_outputs(pd, op, la.input_shapes[0], la.output_shape);
    record(pd);
    const memory src = to_layout_dense_first(la.layer.inputs[0], pd.src_desc());
    memory w = upload_param(la.layer, "weight", pd.weights_desc(), w_dims);
    memory dst = producer_dst(pd.dst_desc());
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}};
    if (op.bias) args[DNNL_ARG_BIAS] = upload_param(la.layer, "bias", pd.bias_desc());
    steps_.push_back({dnnl::convolution_forward(pd), args, {}});
    set_output(la.layer.name, dst);
}

/// to_layout, going through a dense copy first when the tensor is a strided view.
memory dnnl_graph::to_layout_dense_first(const std::string& name, const memory::desc& md) {
    if (slots_.at(name).strided) (void)dense(name);
    return to_layout(name, md);
}

// ------------------------------------------------------------ normalisation

void dnnl_graph::add(const core::layer_analysis& la, const core::batch_norm2d& op) {
    const memory src = dense_or_blocked(la.layer.inputs[0]);
    auto flags = dnnl::normalization_flags::use_global_stats;
    if (op.affine) flags = flags | dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    dnnl::batch_normalization_forward::desc d(dnnl::prop_kind::forward_inference, src.get_desc(),
                                              static_cast<float>(op.eps), flags);
    dnnl::batch_normalization_forward::primitive_desc pd(d, attr(), engine_);
    record(pd);
    const memory::desc stat = plain_md({op.num_features}, memory::data_type::f32);
    memory dst = fresh(pd.dst_desc());
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                         {DNNL_ARG_DST, dst},
                                         {DNNL_ARG_MEAN, upload_param(la.layer, "running_mean", stat)},
                                         {DNNL_ARG_VARIANCE, upload_param(la.layer, "running_var", stat)},
                                         {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}};
    if (op.affine) {
        args[DNNL_ARG_SCALE] = upload_param(la.layer, "weight", stat);
        args[DNNL_ARG_SHIFT] = upload_param(la.layer, "bias", stat);
    }
    steps_.push_back({dnnl::batch_normalization_forward(pd), args, {}});
    set_output(la.layer.name, dst);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::layer_norm& op) {
    const memory in = dense(la.layer.inputs[0]);
    const core::shape& x = la.input_shapes[0];
    std::int64_t norm = 1;
    for (auto d : op.normalized_shape) norm *= d;
    const std::int64_t rows = x.numel() / norm;
    const memory src(in.get_desc().reshape({rows, norm}), engine_, in.get_data_handle());
    auto flags = dnnl::normalization_flags::none;
    if (op.elementwise_affine) flags = dnnl::normalization_flags::use_scale;
    if (op.bias) flags = flags | dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, src.get_desc(),
                                              static_cast<float>(op.eps), flags);
    dnnl::layer_normalization_forward::primitive_desc pd(d, attr(), engine_);
    record(pd);
    memory dst = fresh(pd.dst_desc());
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}};
    if (op.elementwise_affine) {
        const memory::desc stat = plain_md({norm}, memory::data_type::f32);
        args[DNNL_ARG_SCALE] = upload_param(la.layer, "weight", stat, dims{norm});
        if (op.bias) args[DNNL_ARG_SHIFT] = upload_param(la.layer, "bias", stat, dims{norm});
    }
    steps_.push_back({dnnl::layer_normalization_forward(pd), args, {}});
    keep_.push_back(dst);
    set_output(la.layer.name,
               memory(plain_md(to_dims(la.output_shape), dst.get_desc().data_type()), engine_, dst.get_data_handle()));
}

}  // namespace ridgeline::cpu::dnnl_detail
