#pragma once
// Writes small ONNX files at test time with ONNX's protobuf API (a few KB each), so the importer's tests
// need no model downloads.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace ridgeline::test {

class onnx_builder {
public:
    explicit onnx_builder(std::int64_t opset = 13) {
        m_.set_ir_version(7);
        m_.set_producer_name("ridgeline-test");
        auto* o = m_.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        g_ = m_.mutable_graph();
        g_->set_name("test_model");
    }

    /// A graph input; a dimension < 0 is symbolic ("batch" for dimension 0, "d<i>" otherwise).
    onnx_builder& input(const std::string& name, const std::vector<std::int64_t>& dims,
                        int elem = onnx::TensorProto::FLOAT) {
        auto* v = g_->add_input();
        v->set_name(name);
        auto* t = v->mutable_type()->mutable_tensor_type();
        t->set_elem_type(elem);
        auto* s = t->mutable_shape();
        for (std::size_t i = 0; i < dims.size(); ++i) {
            auto* d = s->add_dim();
            if (dims[i] < 0) d->set_dim_param(i == 0 ? "batch" : "d" + std::to_string(i));
            else d->set_dim_value(dims[i]);
        }
        return *this;
    }

    onnx_builder& output(const std::string& name) {
        g_->add_output()->set_name(name);
        return *this;
    }

    /// A float initializer stored as raw little-endian data.
    onnx::TensorProto& init(const std::string& name, const std::vector<std::int64_t>& dims, const std::vector<float>& values) {
        auto* t = g_->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        for (auto d : dims) t->add_dims(d);
        t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
        return *t;
    }

    /// A float initializer whose data lives in an external file, described by these external_data entries in order
    /// ("location", "offset", "length"; any key and value, for the importer's error paths).
    onnx::TensorProto& init_external(const std::string& name, const std::vector<std::int64_t>& dims,
                                     const std::vector<std::pair<std::string, std::string>>& keys) {
        auto& t = init(name, dims, {});
        t.clear_raw_data();
        t.set_data_location(onnx::TensorProto::EXTERNAL);
        for (const auto& [k, v] : keys) {
            auto* e = t.add_external_data();
            e->set_key(k);
            e->set_value(v);
        }
        return t;
    }

    /// A float initializer with `n` deterministic values (0.01 * ((i * 7) % 23 - 11)).
    onnx::TensorProto& init_n(const std::string& name, const std::vector<std::int64_t>& dims) {
        std::int64_t n = 1;
        for (auto d : dims) n *= d;
        std::vector<float> v(static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.01f * static_cast<float>(static_cast<int>((i * 7) % 23) - 11);
        return init(name, dims, v);
    }

    onnx::TensorProto& init_ints(const std::string& name, const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& values) {
        auto* t = g_->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        for (auto d : dims) t->add_dims(d);
        for (auto v : values) t->add_int64_data(v);
        return *t;
    }

    onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "") {
        auto* n = g_->add_node();
        n->set_op_type(op);
        n->set_name(name.empty() ? "/" + outputs.at(0) + "/" + op : name);
        for (const auto& i : inputs) n->add_input(i);
        for (const auto& o : outputs) n->add_output(o);
        return *n;
    }

    /// A Constant node with a float scalar.
    onnx::NodeProto& scalar(const std::string& out, float v) {
        auto& n = node("Constant", {}, {out});
        auto* a = n.add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        auto* t = a->mutable_t();
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->add_float_data(v);
        return n;
    }

    static void set(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    }
    static void set(onnx::NodeProto& n, const std::string& name, float v) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(v);
    }
    static void set(onnx::NodeProto& n, const std::string& name, const std::string& v) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s(v);
    }
    static void set(onnx::NodeProto& n, const std::string& name, const std::vector<std::int64_t>& v) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (auto x : v) a->add_ints(x);
    }

    onnx::ModelProto& proto() { return m_; }

    /// Serialises to `path` and returns it.
    std::filesystem::path save(const std::filesystem::path& path) const {
        std::filesystem::create_directories(path.parent_path());
        std::ofstream f(path, std::ios::binary);
        m_.SerializeToOstream(&f);
        return path;
    }

private:
    onnx::ModelProto m_;
    onnx::GraphProto* g_;
};

}  // namespace ridgeline::test
