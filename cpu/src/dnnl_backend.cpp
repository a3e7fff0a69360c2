// "cpu": every op of the cost model on oneDNN primitives (Debian's libdnnl 2.x, OpenMP runtime).
//
// A graph (a whole model, or one layer as a one-layer model) is prepared once: every tensor gets a
// dnnl::memory, weights are reordered into the layouts the primitives prefer, scratchpads are allocated,
// and the model inputs are stored directly in the layout their first consumer wants. run() then only
// executes primitives. Layouts flow between layers as oneDNN chooses them (blocked nChw8c for
// convolutions, for example); a reorder step is added where a consumer needs another layout, and it is
// part of the end-to-end time (as it would be in a framework), never of a single layer's time.
// Views alias their source's buffer with new dims and strides; consumers that need dense data get a copy.

#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_version.h>

#include "ridgeline/backends/timing.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"
#include "ridgeline/cpu/cpu_ceilings.hpp"
#include "ridgeline/cpu/cpu_info.hpp"

namespace ridgeline::cpu {

std::string dnnl_version() {
    const dnnl_version_t* v = ::dnnl_version();
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

memory::data_type to_dnnl(core::dtype dt) {
    switch (dt) {
        case core::dtype::fp32: return memory::data_type::f32;
        case core::dtype::bf16: return memory::data_type::bf16;
        case core::dtype::fp16: return memory::data_type::f16;
        case core::dtype::tf32: break;
    }
    throw backends::unsupported("tf32 is a tensor-core format of NVIDIA GPUs; use fp32 on the CPU");
}

dims to_dims(const core::shape& s) { return dims(s.dims().begin(), s.dims().end()); }

dims row_major_strides(const dims& d) {
    dims s(d.size(), 1);
    for (std::size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
    return s;
}

memory::desc plain_md(const dims& d, memory::data_type dt) { return memory::desc(d, dt, row_major_strides(d)); }

memory::desc any_md(const dims& d, memory::data_type dt) { return memory::desc(d, dt, tag::any); }

std::string isa_name() {
    switch (dnnl::get_effective_cpu_isa()) {
        case dnnl::cpu_isa::sse41: return "sse41";
        case dnnl::cpu_isa::avx: return "avx";
        case dnnl::cpu_isa::avx2: return "avx2";
        case dnnl::cpu_isa::avx512_core: return "avx512_core";
        case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
        case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
        case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
        default: return "other";
    }
}

bool isa_at_least_avx512();

/// Layout for a 4-D activation given to a graph: the channel-blocked layout oneDNN's convolutions
/// produce on this CPU (nChw16c with AVX-512, nChw8c otherwise) when the channels fill whole blocks, so
/// that a layer timed alone reads its input as it would inside the model; plain row-major otherwise.
memory::desc activation_md(const dims& d, memory::data_type dt) {
    if (d.size() == 4) {
        const bool wide = isa_at_least_avx512();
        const std::int64_t block = wide ? 16 : 8;
        if (d[1] % block == 0) return memory::desc(d, dt, wide ? tag::nChw16c : tag::nChw8c);
    }
    return memory::desc(d, dt, row_major_strides(d));
}

bool isa_at_least_avx512() {
    const auto isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core || isa == dnnl::cpu_isa::avx512_core_vnni ||
           isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

/// Strides of a non-blocked memory descriptor (plain or strided); empty when blocked or offset.
dims plain_strides(const memory::desc& md) {
    const auto& d = md.data;
    if (d.format_kind != dnnl_blocked || d.format_desc.blocking.inner_nblks != 0 || d.offset0 != 0) return {};
    return dims(d.format_desc.blocking.strides, d.format_desc.blocking.strides + d.ndims);
}

bool is_plain_dense(const memory::desc& md) {
    const dims s = plain_strides(md);
    if (s.empty()) return false;
    return s == row_major_strides(md.dims());
}

/// Copies the elements of a strided view (dims `d`, element strides `s` from `src`) into dense row-major `dst`:
/// for the views oneDNN cannot describe. Row by row: the innermost dim in one loop, the outer index carried.
void strided_gather(const unsigned char* src, unsigned char* dst, const dims& d, const dims& s, std::size_t es) {
    const std::size_t rank = d.size();
    std::int64_t rows = 1;
    for (std::size_t i = 0; i + 1 < rank; ++i) rows *= d[i];
    const std::int64_t inner = rank > 0 ? d[rank - 1] : 1, inner_stride = rank > 0 ? s[rank - 1] : 1;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
        std::int64_t offset = 0, rest = r;
        for (std::size_t i = rank - 1; i-- > 0;) {
            offset += (rest % d[i]) * s[i];
            rest /= d[i];
        }
        unsigned char* out = dst + static_cast<std::size_t>(r * inner) * es;
        for (std::int64_t j = 0; j < inner; ++j)
            std::memcpy(out + static_cast<std::size_t>(j) * es, src + static_cast<std::size_t>(offset + j * inner_stride) * es, es);
    }
}

/// A tensor of the graph.
struct slot {
    memory mem;
    bool constant = false;  // a model input: layout changes happen at prepare time
    bool strided = false;   // a non-dense view (transpose, slice): dense consumers need a copy
    bool view = false;      // aliases another tensor's buffer
};

/// Translates a oneDNN error into a backend decision: "unimplemented" declines, anything else fails.
[[noreturn]] void rethrow(const dnnl::error& e, const std::string& where) {
    if (e.status == dnnl_unimplemented)
        throw backends::unsupported(where + ": oneDNN " + dnnl_version() + " has no implementation for this problem on " +
                                    isa_name());
    throw backends::backend_error(where + ": oneDNN error " + std::to_string(static_cast<int>(e.status)) + ": " + e.what());
}

class dnnl_graph final : public backends::prepared {
public:
    dnnl_graph(dnnl::engine& engine, dnnl::stream& stream, core::dtype dt) : engine_(engine), stream_(stream), dt_(dt) {}

    void build(const core::model_analysis& graph, const backends::graph_data& data) {
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
        for (const auto& la : graph.layers) {
            try {
                add_layer(la);
            } catch (const dnnl::error& e) {
                rethrow(e, core::where(la.layer));
            }
        }
        outputs_ = graph.outputs;
        for (const auto& o : graph.outputs) {
            output_shapes_.push_back(find_shape(graph, o));
            // an output that is a view aliases another buffer (maybe a model input): give it its own,
            // so poisoning and reading it never touches the source
            slot& s = slots_.at(o);
            if (s.view) {
                const memory::desc md = s.mem.get_desc();
                memory dst(plain_md(md.dims(), md.data_type()), engine_);
                steps_.push_back({dnnl::reorder(s.mem, dst), {{DNNL_ARG_FROM, s.mem}, {DNNL_ARG_TO, dst}}, {}});
                notes_.emplace_back("reorder");
                s.mem = dst;
                s.view = s.strided = s.constant = false;
            }
        }
        stream_.wait();
        data_ = nullptr;
    }

    void run() override {
        for (auto& st : steps_) {
            if (st.fn)
                st.fn();
            else
                st.prim.execute(stream_, st.args);
        }
        stream_.wait();
    }

    void poison_outputs() override {
        for (const auto& o : outputs_) {
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
                default: std::memset(p, 0xff, n);
            }
        }
    }

    std::vector<backends::host_tensor> outputs() override {
        stream_.wait();
        std::vector<backends::host_tensor> out;
        for (std::size_t i = 0; i < outputs_.size(); ++i) {
            memory& src = slots_.at(outputs_[i]).mem;
            backends::host_tensor t{output_shapes_[i], {}};
            t.data.resize(static_cast<std::size_t>(t.dims.numel()));
            memory dst(plain_md(src.get_desc().dims(), memory::data_type::f32), engine_, t.data.data());
            dnnl::reorder(src, dst).execute(stream_, src, dst);
            stream_.wait();
            out.push_back(std::move(t));
        }
        return out;
    }

    [[nodiscard]] std::int64_t workspace_bytes() const override { return workspace_; }

    [[nodiscard]] std::string notes() const override {
        std::string s;
        for (const auto& n : notes_) s += (s.empty() ? "" : "+") + n;
        return s;
    }

private:
    struct step {
        dnnl::primitive prim;
        std::unordered_map<int, memory> args;
        std::function<void()> fn;
    };

    static core::shape find_shape(const core::model_analysis& g, const std::string& name) {
        for (const auto& la : g.layers)
            if (la.layer.name == name) return la.output_shape;
        for (const auto& in : g.inputs)
            if (in.name == name) return in.dims;
        throw backends::backend_error("unknown output tensor " + name);
    }

    /// Host floats -> a new memory of descriptor `md` (any layout and data type), at prepare time.
    memory upload(const backends::host_tensor& host, const memory::desc& md) {
        auto* ptr = const_cast<float*>(host.data.data());
        memory src(plain_md(md.dims(), memory::data_type::f32), engine_, ptr);
        memory dst(md, engine_);
        dnnl::reorder(src, dst).execute(stream_, src, dst);
        stream_.wait();
        return dst;
    }

    memory upload_param(const core::layer& l, const std::string& param, const memory::desc& md,
                        const std::optional<dims>& host_dims = std::nullopt) {
        const auto& host = data_->tensors.at(backends::param_key(l, param));
        if (host_dims) {
            // the host tensor viewed with other dims (same element order)
            backends::host_tensor view{core::shape(std::vector<std::int64_t>(host_dims->begin(), host_dims->end())),
                                       host.data};
            return upload(view, md);
        }
        return upload(host, md);
    }

    /// A memory with descriptor `md` holding tensor `name`: the slot itself when it already has that
    /// layout; otherwise a reorder (done now for constant inputs, else a step of the run).
    memory to_layout(const std::string& name, const memory::desc& md) {
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
    memory dense(const std::string& name) {
        const slot& s = slots_.at(name);
        const memory::desc md = s.mem.get_desc();
        if (is_plain_dense(md)) return s.mem;
        return to_layout(name, plain_md(md.dims(), md.data_type()));
    }

    /// The tensor as it is, unless it is a strided view, in which case a dense copy.
    memory dense_or_blocked(const std::string& name) {
        const slot& s = slots_.at(name);
        return s.strided ? dense(name) : s.mem;
    }

    memory scratchpad(const dnnl::primitive_desc_base& pd) {
        const memory::desc md = pd.scratchpad_desc();
        workspace_ += static_cast<std::int64_t>(md.get_size());
        return memory(md, engine_);
    }

    void record(const dnnl::primitive_desc_base& pd) { notes_.emplace_back(pd.impl_info_str()); }

    void set_output(const std::string& name, memory m, bool strided = false, bool view = false) {
        slot s;
        s.mem = std::move(m);
        s.strided = strided;
        s.view = view;
        slots_[name] = std::move(s);
    }

    dnnl::primitive_attr attr() const {
        dnnl::primitive_attr a;
        a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        return a;
    }

    void add_layer(const core::layer_analysis& la) {
        std::visit([&](const auto& op) { add(la, op); }, la.layer.op);
    }

    // ------------------------------------------------------------ dense ops
    void add(const core::layer_analysis& la, const core::linear& op) {
        const auto dt = to_dnnl(dt_);
        const memory in = dense(la.layer.inputs[0]);
        const std::int64_t rows = la.input_shapes[0].numel() / op.in_features;
        const memory src(in.get_desc().reshape({rows, op.in_features}), engine_, in.get_data_handle());
        const memory::desc w_any = any_md({op.out_features, op.in_features}, dt);
        const memory::desc b_md = plain_md({op.out_features}, dt == memory::data_type::f32 ? dt : memory::data_type::f32);
        const memory::desc dst_md = plain_md({rows, op.out_features}, dt);
        dnnl::inner_product_forward::desc d =
            op.bias ? dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_inference, src.get_desc(), w_any, b_md, dst_md)
                    : dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_inference, src.get_desc(), w_any, dst_md);
        dnnl::inner_product_forward::primitive_desc pd(d, attr(), engine_);
        record(pd);
        memory w = upload_param(la.layer, "weight", pd.weights_desc());
        memory dst(dst_md, engine_);
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst},
                                             {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}};
        if (op.bias) args[DNNL_ARG_BIAS] = upload_param(la.layer, "bias", pd.bias_desc());
        steps_.push_back({dnnl::inner_product_forward(pd), args, {}});
        set_output(la.layer.name, memory(plain_md(to_dims(la.output_shape), dt), engine_, dst.get_data_handle()));
        keep_.push_back(dst);
    }

    /// Prepends 1s so the memory has `rank` dims (dense or strided memory; same buffer).
    memory with_rank(const memory& m, std::size_t rank) {
        const memory::desc md = m.get_desc();
        dims d = md.dims();
        if (d.size() == rank) return m;
        dims s = plain_strides(md);
        if (s.empty()) throw backends::unsupported("matmul: blocked input layout");
        const std::int64_t outer = d.empty() ? 1 : d[0] * s[0];
        while (d.size() < rank) {
            d.insert(d.begin(), 1);
            s.insert(s.begin(), outer);
        }
        return memory(memory::desc(d, md.data_type(), s), engine_, m.get_data_handle());
    }

    void add(const core::layer_analysis& la, const core::matmul&) {
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
            } catch (const backends::unsupported&) {
                return std::nullopt;
            }
        };
        const slot& sa = slots_.at(la.layer.inputs[0]);
        const slot& sb = slots_.at(la.layer.inputs[1]);
        auto pd = (plain_strides(sa.mem.get_desc()).empty() || plain_strides(sb.mem.get_desc()).empty())
                      ? std::nullopt
                      : try_make(sa.mem, sb.mem);
        if (!pd) pd = try_make(dense(la.layer.inputs[0]), dense(la.layer.inputs[1]));
        if (!pd) throw backends::unsupported(core::where(la.layer) + ": oneDNN matmul declined these shapes");
        record(*pd);
        memory dst(dst_md, engine_);
        steps_.push_back({dnnl::matmul(*pd),
                          {{DNNL_ARG_SRC, pending_a_}, {DNNL_ARG_WEIGHTS, pending_b_}, {DNNL_ARG_DST, dst},
                           {DNNL_ARG_SCRATCHPAD, scratchpad(*pd)}},
                          {}});
        set_output(la.layer.name, dst);
    }

    void add(const core::layer_analysis& la, const core::embedding& op) {
        const auto dt = to_dnnl(dt_);
        const auto ids_it = ids_.find(la.layer.inputs[0]);
        if (ids_it == ids_.end())
            throw backends::unsupported(core::where(la.layer) + ": embedding reads token ids from a model input only");
        const std::vector<std::int64_t>& ids = ids_it->second;
        for (auto id : ids)
            if (id < 0 || id >= op.num_embeddings)
                throw backends::backend_error(core::where(la.layer) + ": token id " + std::to_string(id) + " out of range");
        memory table = upload_param(la.layer, "weight", plain_md({op.num_embeddings, op.embedding_dim}, dt));
        memory dst(plain_md(to_dims(la.output_shape), dt), engine_);
        const std::size_t row_bytes = static_cast<std::size_t>(op.embedding_dim) * memory::data_type_size(dt);
        const auto* src = static_cast<const unsigned char*>(table.get_data_handle());
        auto* out = static_cast<unsigned char*>(dst.get_data_handle());
        const auto n = static_cast<std::int64_t>(ids.size());
        const std::int64_t* id_data = ids.data();
        notes_.emplace_back("ridgeline:gather");
        keep_.push_back(table);
        steps_.push_back({{}, {}, [=] {
#pragma omp parallel for
                              for (std::int64_t i = 0; i < n; ++i)
                                  std::memcpy(out + static_cast<std::size_t>(i) * row_bytes,
                                              src + static_cast<std::size_t>(id_data[i]) * row_bytes, row_bytes);
                          }});
        set_output(la.layer.name, dst);
    }

    // ------------------------------------------------------------ convolution
    void add(const core::layer_analysis& la, const core::conv2d& op) {
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
        auto d = op.bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                           dnnl::algorithm::convolution_direct, src_any, w_any,
                                                           plain_md({op.out_channels}, bias_dt), dst_any, strides, dil,
                                                           pad_l, pad_r)
                         : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                           dnnl::algorithm::convolution_direct, src_any, w_any, dst_any,
                                                           strides, dil, pad_l, pad_r);
        dnnl::convolution_forward::primitive_desc pd(d, attr(), engine_);
        record(pd);
        const memory src = to_layout_dense_first(la.layer.inputs[0], pd.src_desc());
        memory w = upload_param(la.layer, "weight", pd.weights_desc(), w_dims);
        memory dst(pd.dst_desc(), engine_);
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst},
                                             {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}};
        if (op.bias) args[DNNL_ARG_BIAS] = upload_param(la.layer, "bias", pd.bias_desc());
        steps_.push_back({dnnl::convolution_forward(pd), args, {}});
        set_output(la.layer.name, dst);
    }

    /// to_layout, going through a dense copy first when the tensor is a strided view.
    memory to_layout_dense_first(const std::string& name, const memory::desc& md) {
        if (slots_.at(name).strided) (void)dense(name);
        return to_layout(name, md);
    }

    // ------------------------------------------------------------ normalisation
    void add(const core::layer_analysis& la, const core::batch_norm2d& op) {
        const memory src = dense_or_blocked(la.layer.inputs[0]);
        auto flags = dnnl::normalization_flags::use_global_stats;
        if (op.affine) flags = flags | dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
        dnnl::batch_normalization_forward::desc d(dnnl::prop_kind::forward_inference, src.get_desc(),
                                                  static_cast<float>(op.eps), flags);
        dnnl::batch_normalization_forward::primitive_desc pd(d, attr(), engine_);
        record(pd);
        const memory::desc stat = plain_md({op.num_features}, memory::data_type::f32);
        memory dst(pd.dst_desc(), engine_);
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

    void add(const core::layer_analysis& la, const core::layer_norm& op) {
        const memory in = dense(la.layer.inputs[0]);
        const core::shape& x = la.input_shapes[0];
        std::int64_t norm = 1;
        for (auto d : op.normalized_shape) norm *= d;
        const std::int64_t rows = x.numel() / norm;
        const memory src(in.get_desc().reshape({rows, norm}), engine_, in.get_data_handle());
        auto flags = dnnl::normalization_flags::none;
        if (op.elementwise_affine) flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
        dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, src.get_desc(),
                                                  static_cast<float>(op.eps), flags);
        dnnl::layer_normalization_forward::primitive_desc pd(d, attr(), engine_);
        record(pd);
        memory dst(pd.dst_desc(), engine_);
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst},
                                             {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}};
        if (op.elementwise_affine) {
            const memory::desc stat = plain_md({norm}, memory::data_type::f32);
            args[DNNL_ARG_SCALE] = upload_param(la.layer, "weight", stat, dims{norm});
            args[DNNL_ARG_SHIFT] = upload_param(la.layer, "bias", stat, dims{norm});
        }
        steps_.push_back({dnnl::layer_normalization_forward(pd), args, {}});
        keep_.push_back(dst);
        set_output(la.layer.name, memory(plain_md(to_dims(la.output_shape), dst.get_desc().data_type()), engine_,
                                         dst.get_data_handle()));
    }

    // ------------------------------------------------------------ elementwise
    void eltwise(const core::layer_analysis& la, dnnl::algorithm alg, float alpha, float beta) {
        const memory src = dense_or_blocked(la.layer.inputs[0]);
        dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, alg, src.get_desc(), alpha, beta);
        dnnl::eltwise_forward::primitive_desc pd(d, attr(), engine_);
        record(pd);
        memory dst(pd.dst_desc(), engine_);
        steps_.push_back({dnnl::eltwise_forward(pd),
                          {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                          {}});
        set_output(la.layer.name, dst);
    }
    void add(const core::layer_analysis& la, const core::relu&) { eltwise(la, dnnl::algorithm::eltwise_relu, 0, 0); }
    void add(const core::layer_analysis& la, const core::relu6&) { eltwise(la, dnnl::algorithm::eltwise_clip_v2, 0, 6); }
    void add(const core::layer_analysis& la, const core::gelu& op) {
        eltwise(la, op.tanh_approximation ? dnnl::algorithm::eltwise_gelu_tanh : dnnl::algorithm::eltwise_gelu_erf, 0, 0);
    }
    void add(const core::layer_analysis& la, const core::tanh_op&) { eltwise(la, dnnl::algorithm::eltwise_tanh, 0, 0); }
    void add(const core::layer_analysis& la, const core::sigmoid&) { eltwise(la, dnnl::algorithm::eltwise_logistic, 0, 0); }
    void add(const core::layer_analysis& la, const core::scale& op) {
        eltwise(la, dnnl::algorithm::eltwise_linear, static_cast<float>(op.factor), 0);
    }

    void add(const core::layer_analysis& la, const core::softmax& op) {
        const memory src = dense(la.layer.inputs[0]);
        const int axis = static_cast<int>(core::normalize_dim(op.dim, la.input_shapes[0].rank(), core::where(la.layer)));
        dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, src.get_desc(), axis);
        dnnl::softmax_forward::primitive_desc pd(d, attr(), engine_);
        record(pd);
        memory dst(pd.dst_desc(), engine_);
        steps_.push_back({dnnl::softmax_forward(pd),
                          {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                          {}});
        set_output(la.layer.name, dst);
    }

    void binary(const core::layer_analysis& la, dnnl::algorithm alg) {
        std::string a = la.layer.inputs[0], b = la.layer.inputs[1];
        core::shape sa = la.input_shapes[0], sb = la.input_shapes[1];
        if (sa != la.output_shape) {  // oneDNN broadcasts src1 only; add and mul commute
            std::swap(a, b);
            std::swap(sa, sb);
        }
        if (sa != la.output_shape) {
            // both inputs broadcast; oneDNN broadcasts src1 only: first a = 0 + a into the output's shape (exact), then
            // the operation with b broadcast
            const auto dt = to_dnnl(dt_);
            const dims od = to_dims(la.output_shape);
            memory zeros(plain_md(od, dt), engine_);
            std::memset(zeros.get_data_handle(), 0, zeros.get_desc().get_size());
            memory wide(plain_md(od, dt), engine_);
            const memory da = dense(a);
            dims ad = da.get_desc().dims();
            while (ad.size() < od.size()) ad.insert(ad.begin(), 1);
            const memory a1(plain_md(ad, dt), engine_, da.get_data_handle());
            dnnl::binary::desc d(dnnl::algorithm::binary_add, zeros.get_desc(), a1.get_desc(), wide.get_desc());
            dnnl::binary::primitive_desc pd(d, attr(), engine_);
            record(pd);
            steps_.push_back({dnnl::binary(pd),
                              {{DNNL_ARG_SRC_0, zeros}, {DNNL_ARG_SRC_1, a1}, {DNNL_ARG_DST, wide},
                               {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                              {}});
            keep_.push_back(da);
            a = la.layer.name + "#broadcast";
            sa = la.output_shape;
            set_output(a, wide);
        }
        const memory src0 = dense_or_blocked(a);
        memory src1;
        if (sb == sa) {
            src1 = slots_.at(b).strided ? dense(b) : to_layout(b, src0.get_desc());
        } else {
            const memory d1 = dense(b);
            dims bd = d1.get_desc().dims();
            while (bd.size() < sa.rank()) bd.insert(bd.begin(), 1);
            src1 = memory(plain_md(bd, d1.get_desc().data_type()), engine_, d1.get_data_handle());
        }
        dnnl::binary::desc d(alg, src0.get_desc(), src1.get_desc(), src0.get_desc());
        dnnl::binary::primitive_desc pd(d, attr(), engine_);
        record(pd);
        memory dst(pd.dst_desc(), engine_);
        steps_.push_back({dnnl::binary(pd),
                          {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst},
                           {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                          {}});
        set_output(la.layer.name, dst);
    }
    void add(const core::layer_analysis& la, const core::add&) { binary(la, dnnl::algorithm::binary_add); }
    void add(const core::layer_analysis& la, const core::mul&) { binary(la, dnnl::algorithm::binary_mul); }

    // ------------------------------------------------------------ pooling
    /// Right padding that makes oneDNN's floor formula give PyTorch's (possibly ceil_mode) output size, per axis.
    static core::pair2d right_padding(const core::layer_analysis& la, core::pair2d kernel, core::pair2d stride,
                                      core::pair2d pad, core::pair2d dilation) {
        const core::shape& x = la.input_shapes[0];
        const core::shape& y = la.output_shape;
        const std::int64_t ext_h = (kernel.h - 1) * dilation.h + 1, ext_w = (kernel.w - 1) * dilation.w + 1;
        return {std::max<std::int64_t>(0, (y[2] - 1) * stride.h + ext_h - x[2] - pad.h),
                std::max<std::int64_t>(0, (y[3] - 1) * stride.w + ext_w - x[3] - pad.w)};
    }
    void pooling(const core::layer_analysis& la, dnnl::algorithm alg, core::pair2d kernel, core::pair2d stride,
                 core::pair2d pad, core::pair2d dilation, bool plain_dst = false) {
        const auto dt = to_dnnl(dt_);
        const memory src = dense_or_blocked(la.layer.inputs[0]);
        const core::shape& y = la.output_shape;
        const core::pair2d pr = right_padding(la, kernel, stride, pad, dilation);
        dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, src.get_desc(),
                                         plain_dst ? plain_md(to_dims(y), dt) : any_md(to_dims(y), dt),
                                         {stride.h, stride.w}, {kernel.h, kernel.w},
                                         {dilation.h - 1, dilation.w - 1}, {pad.h, pad.w}, {pr.h, pr.w});
        dnnl::pooling_v2_forward::primitive_desc pd(d, attr(), engine_);
        record(pd);
        memory dst(pd.dst_desc(), engine_);
        steps_.push_back({dnnl::pooling_v2_forward(pd),
                          {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                          {}});
        set_output(la.layer.name, dst);
    }
    /// A dilated window can hold only padding; PyTorch's max over no element is -inf (ATen's max_pool2d starts from
    /// -inf and skips padding), oneDNN's is the lowest finite value. Those output positions are set to -inf after the
    /// pooling (a plain output then, so that they are easy to find).
    void add(const core::layer_analysis& la, const core::max_pool2d& op) {
        const core::shape& x = la.input_shapes[0];
        const core::shape& y = la.output_shape;
        auto empty_windows = [](std::int64_t out, std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t pad,
                                std::int64_t dilation) {
            std::vector<bool> empty(static_cast<std::size_t>(out), true);
            for (std::int64_t o = 0; o < out; ++o)
                for (std::int64_t t = 0; t < k; ++t) {
                    const std::int64_t i = o * stride - pad + t * dilation;
                    if (i >= 0 && i < in) empty[static_cast<std::size_t>(o)] = false;
                }
            return empty;
        };
        const auto rows = empty_windows(y[2], x[2], op.kernel_size.h, op.stride.h, op.padding.h, op.dilation.h);
        const auto cols = empty_windows(y[3], x[3], op.kernel_size.w, op.stride.w, op.padding.w, op.dilation.w);
        std::vector<std::int64_t> positions;  // oh * W_out + ow of each all-padding window
        for (std::int64_t oh = 0; oh < y[2]; ++oh)
            for (std::int64_t ow = 0; ow < y[3]; ++ow)
                if (rows[static_cast<std::size_t>(oh)] || cols[static_cast<std::size_t>(ow)]) positions.push_back(oh * y[3] + ow);
        pooling(la, dnnl::algorithm::pooling_max, op.kernel_size, op.stride, op.padding, op.dilation, !positions.empty());
        if (positions.empty()) return;
        const memory dst = slots_.at(la.layer.name).mem;
        const std::int64_t planes = y[0] * y[1], plane = y[2] * y[3];
        const auto data_type = dst.get_desc().data_type();
        steps_.push_back({{}, {}, [dst, positions, planes, plane, data_type] {
                              auto* base = static_cast<unsigned char*>(dst.get_data_handle());
                              const std::uint32_t f32 = 0xff800000u;  // -inf in each format
                              const std::uint16_t b16 = 0xff80u, f16 = 0xfc00u;
                              const std::size_t es = memory::data_type_size(data_type);
                              const void* value = data_type == memory::data_type::f32    ? static_cast<const void*>(&f32)
                                                  : data_type == memory::data_type::bf16 ? static_cast<const void*>(&b16)
                                                                                         : static_cast<const void*>(&f16);
                              for (std::int64_t p = 0; p < planes; ++p)
                                  for (std::int64_t at : positions)
                                      std::memcpy(base + static_cast<std::size_t>(p * plane + at) * es, value, es);
                          }});
        notes_.emplace_back("ridgeline -inf for windows of padding only");
    }
    /// PyTorch's divisor with count_include_pad counts a window clipped to [-pad, in + pad), so the taps a ceil_mode
    /// window hangs past in + pad are not counted (ATen's AvgPool2d: hend = min(hstart + kH, H + padH)). oneDNN's
    /// include_padding counts every tap of the window, its exclude_padding only those inside the input. With no
    /// padding PyTorch's rule is exclude_padding; where the right padding oneDNN needs stays within the symmetric
    /// padding it is include_padding; otherwise include_padding followed by a multiply with kh*kw / PyTorch's divisor
    /// per output position (a (1, 1, H_out, W_out) tensor, broadcast).
    void add(const core::layer_analysis& la, const core::avg_pool2d& op) {
        const core::pair2d pr = right_padding(la, op.kernel_size, op.stride, op.padding, {1, 1});
        const bool no_padding = op.padding.h == 0 && op.padding.w == 0;
        pooling(la,
                op.count_include_pad && !no_padding ? dnnl::algorithm::pooling_avg_include_padding
                                                    : dnnl::algorithm::pooling_avg_exclude_padding,
                op.kernel_size, op.stride, op.padding, {1, 1});
        if (!op.count_include_pad || no_padding || (pr.h <= op.padding.h && pr.w <= op.padding.w)) return;
        const core::shape& x = la.input_shapes[0];
        const core::shape& y = la.output_shape;
        auto extent = [](std::int64_t o, std::int64_t stride, std::int64_t pad, std::int64_t k, std::int64_t in) {
            const std::int64_t start = o * stride - pad;
            return std::min(start + k, in + pad) - start;
        };
        backends::host_tensor factor{core::shape{1, 1, y[2], y[3]}, {}};
        for (std::int64_t oh = 0; oh < y[2]; ++oh)
            for (std::int64_t ow = 0; ow < y[3]; ++ow)
                factor.data.push_back(static_cast<float>(op.kernel_size.h * op.kernel_size.w) /
                                      static_cast<float>(extent(oh, op.stride.h, op.padding.h, op.kernel_size.h, x[2]) *
                                                         extent(ow, op.stride.w, op.padding.w, op.kernel_size.w, x[3])));
        const auto dt = to_dnnl(dt_);
        const memory f = upload(factor, plain_md({1, 1, y[2], y[3]}, dt));
        const memory pooled = slots_.at(la.layer.name).mem;
        dnnl::binary::primitive_desc pd(dnnl::binary::desc(dnnl::algorithm::binary_mul, pooled.get_desc(), f.get_desc(), pooled.get_desc()),
                                        attr(), engine_);
        record(pd);
        memory dst(pd.dst_desc(), engine_);
        steps_.push_back({dnnl::binary(pd),
                          {{DNNL_ARG_SRC_0, pooled}, {DNNL_ARG_SRC_1, f}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                          {}});
        keep_.insert(keep_.end(), {pooled, f});
        set_output(la.layer.name, dst);
    }
    void add(const core::layer_analysis& la, const core::adaptive_avg_pool2d& op) {
        const core::shape& x = la.input_shapes[0];
        if (x[2] % op.output_size.h != 0 || x[3] % op.output_size.w != 0) {
            adaptive_as_matmuls(la, op);
            return;
        }
        const core::pair2d k{x[2] / op.output_size.h, x[3] / op.output_size.w};
        pooling(la, dnnl::algorithm::pooling_avg_exclude_padding, k, k, {0, 0}, {1, 1});
    }

    /// Windows of different sizes (PyTorch's [floor(i*H/out), ceil((i+1)*H/out))), which oneDNN pooling cannot
    /// express, as two matmuls with averaging matrices: the mean over a window is separable, so per (n, c) plane
    /// Y = Ph X Pw with Ph[i][h] = 1/len_i on the rows of window i and Pw[w][j] = 1/len_j on its columns.
    void adaptive_as_matmuls(const core::layer_analysis& la, const core::adaptive_avg_pool2d& op) {
        const auto dt = to_dnnl(dt_);
        const core::shape& x = la.input_shapes[0];
        const std::int64_t planes = x[0] * x[1], h = x[2], w = x[3], oh = op.output_size.h, ow = op.output_size.w;
        auto averaging = [](std::int64_t in, std::int64_t out, bool transposed) {
            backends::host_tensor m{transposed ? core::shape{1, in, out} : core::shape{1, out, in},
                                    std::vector<float>(static_cast<std::size_t>(in * out), 0.0F)};
            for (std::int64_t i = 0; i < out; ++i) {
                const std::int64_t lo = (i * in) / out, hi = ((i + 1) * in + out - 1) / out;
                for (std::int64_t k = lo; k < hi; ++k)
                    m.data[static_cast<std::size_t>(transposed ? k * out + i : i * in + k)] = 1.0F / static_cast<float>(hi - lo);
            }
            return m;
        };
        const memory pw = upload(averaging(w, ow, true), plain_md({1, w, ow}, dt));
        const memory ph = upload(averaging(h, oh, false), plain_md({1, oh, h}, dt));
        const memory in = dense(la.layer.inputs[0]);
        const memory rows(plain_md({1, planes * h, w}, dt), engine_, in.get_data_handle());
        memory mid(plain_md({1, planes * h, ow}, dt), engine_);
        dnnl::matmul::primitive_desc pd1(dnnl::matmul::desc(rows.get_desc(), pw.get_desc(), mid.get_desc()), attr(), engine_);
        record(pd1);
        steps_.push_back({dnnl::matmul(pd1),
                          {{DNNL_ARG_SRC, rows}, {DNNL_ARG_WEIGHTS, pw}, {DNNL_ARG_DST, mid}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd1)}},
                          {}});
        const memory mid3(plain_md({planes, h, ow}, dt), engine_, mid.get_data_handle());
        memory dst(plain_md({planes, oh, ow}, dt), engine_);
        dnnl::matmul::primitive_desc pd2(dnnl::matmul::desc(ph.get_desc(), mid3.get_desc(), dst.get_desc()), attr(), engine_);
        record(pd2);
        steps_.push_back({dnnl::matmul(pd2),
                          {{DNNL_ARG_SRC, ph}, {DNNL_ARG_WEIGHTS, mid3}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd2)}},
                          {}});
        keep_.insert(keep_.end(), {in, mid, dst, pw, ph});
        set_output(la.layer.name, memory(plain_md(to_dims(la.output_shape), dt), engine_, dst.get_data_handle()));
    }

    // ------------------------------------------------------------ data movement and views
    void add(const core::layer_analysis& la, const core::concat& op) {
        const int axis = static_cast<int>(core::normalize_dim(op.dim, la.output_shape.rank(), core::where(la.layer)));
        std::vector<memory> srcs;
        std::vector<memory::desc> mds;
        for (const auto& t : la.layer.inputs) {
            srcs.push_back(dense_or_blocked(t));
            mds.push_back(srcs.back().get_desc());
        }
        dnnl::concat::primitive_desc pd(axis, mds, engine_, attr());
        record(pd);
        memory dst(pd.dst_desc(), engine_);
        std::unordered_map<int, memory> args{{DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}};
        for (std::size_t i = 0; i < srcs.size(); ++i) args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = srcs[i];
        steps_.push_back({dnnl::concat(pd), args, {}});
        set_output(la.layer.name, dst);
    }

    void reinterpret(const core::layer_analysis& la) {
        const memory src = dense(la.layer.inputs[0]);
        set_output(la.layer.name,
                   memory(plain_md(to_dims(la.output_shape), src.get_desc().data_type()), engine_, src.get_data_handle()),
                   false, true);
    }
    void add(const core::layer_analysis& la, const core::flatten&) { reinterpret(la); }
    void add(const core::layer_analysis& la, const core::reshape&) { reinterpret(la); }

    /// Source of a strided view: the tensor itself when plain or strided, else a dense copy.
    memory viewable(const std::string& name) {
        const slot& s = slots_.at(name);
        if (!plain_strides(s.mem.get_desc()).empty()) return s.mem;
        return dense(name);
    }

    void add(const core::layer_analysis& la, const core::transpose& op) {
        const memory src = viewable(la.layer.inputs[0]);
        const memory::desc md = src.get_desc();
        dims d = md.dims(), s = plain_strides(md);
        const std::size_t a = core::normalize_dim(op.dim0, d.size(), core::where(la.layer));
        const std::size_t b = core::normalize_dim(op.dim1, d.size(), core::where(la.layer));
        std::swap(d[a], d[b]);
        std::swap(s[a], s[b]);
        const memory::desc out(d, md.data_type(), s);
        set_output(la.layer.name, memory(out, engine_, src.get_data_handle()), !is_plain_dense(out), true);
    }

    void add(const core::layer_analysis& la, const core::slice& op) {
        const memory src = viewable(la.layer.inputs[0]);
        const memory::desc md = src.get_desc();
        dims d = md.dims(), s = plain_strides(md);
        const std::size_t k = core::normalize_dim(op.dim, d.size(), core::where(la.layer));
        const std::int64_t size = d[k];
        std::int64_t start = op.start < 0 ? std::max<std::int64_t>(0, op.start + size) : std::min(op.start, size);
        const std::int64_t offset = start * s[k];
        d[k] = la.output_shape[k];
        s[k] *= op.step;
        auto* base = static_cast<unsigned char*>(src.get_data_handle()) +
                     static_cast<std::size_t>(offset) * memory::data_type_size(md.data_type());
        std::optional<memory::desc> out;
        try {
            out = memory::desc(d, md.data_type(), s);
        } catch (const dnnl::error&) {
            // oneDNN describes only strides whose dims do not interleave (a step wider than the next dim's extent,
            // e.g. every third column of 6x4 has strides 4, 3 over 6x2): copy those elements instead
        }
        if (out) {
            set_output(la.layer.name, memory(*out, engine_, base), !is_plain_dense(*out), true);
            return;
        }
        memory dst(plain_md(d, md.data_type()), engine_);
        const std::size_t es = memory::data_type_size(md.data_type());
        steps_.push_back({{}, {}, [base, dst, d, s, es] {
                              strided_gather(base, static_cast<unsigned char*>(dst.get_data_handle()), d, s, es);
                          }});
        notes_.emplace_back("ridgeline strided copy");
        keep_.push_back(src);
        set_output(la.layer.name, dst);
    }

    dnnl::engine& engine_;
    dnnl::stream& stream_;
    core::dtype dt_;
    const backends::graph_data* data_ = nullptr;
    std::map<std::string, slot> slots_;
    std::map<std::string, std::vector<std::pair<memory::desc, memory>>> converted_;
    std::map<std::string, std::vector<std::int64_t>> ids_;
    std::vector<step> steps_;
    std::vector<memory> keep_;
    std::vector<std::string> outputs_;
    std::vector<core::shape> output_shapes_;
    std::vector<std::string> notes_;
    std::int64_t workspace_ = 0;
    memory pending_a_, pending_b_;
};

class dnnl_backend final : public backends::backend {
public:
    explicit dnnl_backend(int threads) : threads_(set_threads(threads)) {
        try {
            engine_ = dnnl::engine(dnnl::engine::kind::cpu, 0);
            stream_ = dnnl::stream(engine_);
        } catch (const dnnl::error& e) {
            throw backends::backend_error(std::string("oneDNN could not create a CPU engine: ") + e.what());
        }
    }

    [[nodiscard]] std::string name() const override { return "cpu"; }

    [[nodiscard]] backends::device_info device() const override {
        const cpu_info& c = host_cpu();
        backends::device_info d;
        d.backend = "cpu";
        d.kind = "cpu";
        d.name = c.model_name;
        d.cores = c.physical_cores;
        d.threads = threads_;
        d.isa = c.isa();
        d.memory_bytes = c.memory_bytes;
        d.last_level_cache_bytes = c.l3_bytes ? c.l3_bytes : c.l2_bytes;
        d.details = {{"library", "oneDNN " + dnnl_version()},
                     {"onednn_isa", isa_name()},
                     {"threading", "OpenMP"},
                     {"governor", c.governor.empty() ? "unknown" : c.governor}};
        if (c.max_mhz > 0) d.details.emplace_back("max_mhz", std::to_string(static_cast<int>(c.max_mhz)));
        return d;
    }

    [[nodiscard]] backends::support supports(const core::layer_analysis& la, core::dtype dt) const override {
        switch (dt) {
            case core::dtype::fp32: break;
            case core::dtype::tf32:
                return backends::support::no("tf32 is a tensor-core format of NVIDIA GPUs; use fp32 on the CPU");
            case core::dtype::bf16:
                if (!isa_at_least_avx512())
                    return backends::support::no("bf16 needs AVX-512 (oneDNN " + dnnl_version() +
                                                 " runs bf16 on avx512_core and newer); this CPU runs " + isa_name());
                break;
            case core::dtype::fp16:
                if (!host_cpu().has("avx512_fp16"))
                    return backends::support::no("fp16 needs AVX512-FP16 on the CPU; this CPU runs " + isa_name());
                break;
        }
        (void)la;
        return backends::support::yes();
    }

    std::unique_ptr<backends::prepared> prepare(const core::model_analysis& graph,
                                                const backends::graph_data& data) override {
        for (const auto& la : graph.layers) {
            const auto s = supports(la, graph.data_type);
            if (!s.supported) throw backends::unsupported(s.reason);
        }
        auto g = std::make_unique<dnnl_graph>(engine_, stream_, graph.data_type);
        g->build(graph, data);
        return g;
    }

    void synchronize() override { stream_.wait(); }
    backends::device_timer& timer() override { return timer_; }

    void flush_cache() override {
        if (flush_.empty()) {
            const auto& c = host_cpu();
            const std::int64_t llc = c.llc_total_bytes > 0 ? c.llc_total_bytes : (32 << 20);
            flush_.assign(static_cast<std::size_t>(2 * llc), 0);
        }
        char* p = flush_.data();
        const auto n = static_cast<std::int64_t>(flush_.size());
#pragma omp parallel for
        for (std::int64_t i = 0; i < n; i += 64) p[i] = static_cast<char>(p[i] + 1);
    }

    [[nodiscard]] std::int64_t free_memory_bytes() const override { return available_memory_bytes(); }

    backends::ceilings measure_ceilings(const backends::ceilings_options& options) override {
        return measure_cpu_ceilings(*this, options);
    }
    std::optional<backends::ceilings_spot_check> spot_check_ceilings(const backends::ceilings& cached,
                                                                     const backends::ceilings_options& options) override {
        return spot_check_cpu_ceilings(cached, options);
    }

private:
    int threads_;
    dnnl::engine engine_;
    dnnl::stream stream_;
    backends::steady_timer timer_;
    std::vector<char> flush_;
};

}  // namespace

std::unique_ptr<backends::backend> make_dnnl_backend(int threads) { return std::make_unique<dnnl_backend>(threads); }

}  // namespace ridgeline::cpu
