// ONNX ops that the import rewrites into several layers, checked by running the imported layers on the reference
// loops against the op's definition (issue 11 item 2): Einsum where it is a (batched) matmul (transposes and
// reshapes around one matmul; refused with its reason where it is not a matmul), and Gather of several indices of
// an activation (slices of the runs of consecutive indices, a concat, a reshape for indices of rank > 1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "onnx_builder.hpp"
#include "onnx_test_graphs.hpp"
#include "ridgeline/backend_api/tensor.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/cpu/reference.hpp"
#include "ridgeline/io/onnx_import.hpp"
#include "../support/scratch.hpp"

namespace core = ridgeline::core;
namespace io = ridgeline::io;
namespace backend_api = ridgeline::backend_api;
using ridgeline::test::import_error;
using ridgeline::test::onnx_builder;

namespace {

onnx_builder einsum_graph(const std::string& eq, const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
    onnx_builder g(14);
    g.input("a", a);
    g.input("b", b);
    auto& n = g.node("Einsum", {"a", "b"}, {"out"}, "/Einsum");
    onnx_builder::set(n, "equation", std::string(eq));
    g.output("out");
    return g;
}

/// out[o] = sum over the contracted indices of a[...] * b[...], straight from the equation (explicit "->", letters
/// only): every assignment of every index, the definition of einsum.
std::vector<double> by_definition(const std::string& eq, const backend_api::host_tensor& a, const backend_api::host_tensor& b,
                                  std::vector<std::int64_t>& out_dims) {
    const auto comma = eq.find(','), arrow = eq.find("->");
    const std::string ta = eq.substr(0, comma), tb = eq.substr(comma + 1, arrow - comma - 1), to = eq.substr(arrow + 2);
    std::map<char, std::int64_t> size;
    for (std::size_t i = 0; i < ta.size(); ++i) size[ta[i]] = a.dims[i];
    for (std::size_t i = 0; i < tb.size(); ++i) size[tb[i]] = b.dims[i];
    std::string all;
    for (const auto& [ch, s] : size) all += ch;
    out_dims.clear();
    for (char ch : to) out_dims.push_back(size[ch]);
    std::int64_t out_n = 1;
    for (auto d : out_dims) out_n *= d;
    std::vector<double> out(static_cast<std::size_t>(out_n), 0.0);
    std::map<char, std::int64_t> at;
    for (char ch : all) at[ch] = 0;
    auto flat = [&](const std::string& term, const std::vector<std::int64_t>& dims) {
        std::int64_t f = 0;
        for (std::size_t i = 0; i < term.size(); ++i) f = f * dims[i] + at[term[i]];
        return static_cast<std::size_t>(f);
    };
    while (true) {
        out[flat(to, out_dims)] += static_cast<double>(a.data[flat(ta, a.dims.dims())]) * b.data[flat(tb, b.dims.dims())];
        std::size_t k = all.size();
        while (k > 0 && ++at[all[k - 1]] == size[all[k - 1]]) at[all[--k]] = 0;
        if (k == 0) break;
    }
    return out;
}

/// Imports the Einsum, runs the imported layers on the reference loops with seeded inputs, and compares with the
/// definition; returns the layers' kinds and the MACs.
std::pair<std::vector<std::string>, std::int64_t> check(const std::string& eq, const std::vector<std::int64_t>& a,
                                                        const std::vector<std::int64_t>& b) {
    SCOPED_TRACE(eq);
    onnx_builder g = einsum_graph(eq, a, b);
    const io::onnx_model m = io::import_onnx(g.save(ridgeline::test::scratch_dir() / "einsum.onnx"));
    const auto an = core::analyze(m.model, core::dtype::fp32);
    const backend_api::graph_data data = backend_api::make_graph_data(an, core::dtype::fp32, 7);
    const auto got = ridgeline::cpu::reference_graph_outputs(an, data);
    std::vector<std::int64_t> dims;
    const auto want = by_definition(eq, data.tensors.at("a"), data.tensors.at("b"), dims);
    EXPECT_EQ(got.at(0).dims.dims(), dims);
    EXPECT_EQ(got.at(0).data.size(), want.size());
    for (std::size_t i = 0; i < want.size() && i < got.at(0).data.size(); ++i)
        EXPECT_NEAR(got.at(0).data[i], want[i], 1e-4) << "element " << i;
    std::vector<std::string> kinds;
    for (const auto& l : m.model.layers()) kinds.emplace_back(core::kind_of(l.op));
    return {kinds, an.totals.macs};
}

std::string import_error(const std::string& eq, const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
    onnx_builder g = einsum_graph(eq, a, b);
    return import_error(g, "einsum_bad.onnx");
}

}  // namespace

TEST(OnnxEinsum, MatmulFormsComputeTheEquation) {
    // a plain matmul: one layer; MACs 3 x 5 x 4 = 60
    auto [k1, m1] = check("ij,jk->ik", {3, 4}, {4, 5});
    EXPECT_EQ(k1, (std::vector<std::string>{"matmul"}));
    EXPECT_EQ(m1, 60);
    // attention scores q k^T: the second operand's last two dims swapped (a view), then the matmul;
    // MACs 2 batch x 2 heads x 3 queries x 5 keys x 4 = 240
    auto [k2, m2] = check("bhqd,bhkd->bhqk", {2, 2, 3, 4}, {2, 2, 5, 4});
    EXPECT_EQ(k2, (std::vector<std::string>{"transpose", "matmul"}));
    EXPECT_EQ(m2, 240);
    // the output in another order: the matmul's [b, i, k] transposed to [b, k, i]; MACs 2 x 3 x 5 x 4 = 120
    auto [k3, m3] = check("bij,bjk->bki", {2, 3, 4}, {2, 4, 5});
    EXPECT_EQ(k3, (std::vector<std::string>{"matmul", "transpose"}));
    EXPECT_EQ(m3, 120);
    // two contracted and two row indices: reshapes to [6, 20] x [20, 3]; MACs 6 x 3 x 20 = 360
    auto [k4, m4] = check("abcd,cde->abe", {2, 3, 4, 5}, {4, 5, 3});
    EXPECT_EQ(k4, (std::vector<std::string>{"reshape", "reshape", "matmul", "reshape"}));
    EXPECT_EQ(m4, 360);
    // a batch index that is not leading in either operand: jbi -> bji, bjk stays; MACs 2 x 3 x 5 x 4 = 120
    auto [k5, m5] = check("jbi,bik->bjk", {3, 2, 4}, {2, 4, 5});
    EXPECT_EQ(m5, 120);
}

TEST(OnnxEinsum, EllipsisAndImplicitOutput) {
    onnx_builder g = einsum_graph("...ij,...jk->...ik", {2, 3, 4, 5}, {2, 3, 5, 6});
    const io::onnx_model m = io::import_onnx(g.save(ridgeline::test::scratch_dir() / "einsum_dots.onnx"));
    const auto a = core::analyze(m.model, core::dtype::fp32);
    ASSERT_EQ(a.layers.size(), 1u);
    EXPECT_EQ(a.layers[0].output_shape.dims(), (std::vector<std::int64_t>{2, 3, 4, 6}));
    EXPECT_EQ(a.totals.macs, 2 * 3 * 4 * 6 * 5);  // 720
    // implicit output: the letters that appear once, alphabetically: "ij,jk" is "ij,jk->ik"
    onnx_builder h = einsum_graph("ij,jk", {3, 4}, {4, 5});
    const io::onnx_model mi = io::import_onnx(h.save(ridgeline::test::scratch_dir() / "einsum_implicit.onnx"));
    EXPECT_EQ(core::analyze(mi.model, core::dtype::fp32).layers.back().output_shape.dims(), (std::vector<std::int64_t>{3, 5}));
}

TEST(OnnxEinsum, WhatIsNotAMatmulIsRefusedWithItsReason) {
    EXPECT_NE(import_error("ij,ij->ij", {3, 4}, {3, 4}).find("is not a matmul (it needs a row, a column and a contracted index"),
              std::string::npos);
    EXPECT_NE(import_error("ii,ij->j", {3, 3}, {3, 4}).find("repeats \"i\" in one operand (a diagonal)"), std::string::npos);
    EXPECT_NE(import_error("ij,kl->ik", {3, 4}, {5, 6}).find("sums operand 0 over \"j\" alone"), std::string::npos);
    EXPECT_NE(import_error("ij,jk->ik", {3, 4}, {5, 6}).find("\"j\" is 4 in one operand and 5 in the other"),
              std::string::npos);
    EXPECT_NE(import_error("ijk,jk->ik", {3, 4}, {4, 5}).find("operand 0 has 2 dimensions, its term names 3"),
              std::string::npos);
    const std::string three = [] {
        onnx_builder g(14);
        g.input("a", {3, 4});
        g.input("b", {4, 5});
        g.input("c", {5, 6});
        auto& n = g.node("Einsum", {"a", "b", "c"}, {"out"}, "/Einsum");
        onnx_builder::set(n, "equation", std::string("ij,jk,kl->il"));
        g.output("out");
        return import_error(g, "einsum3.onnx");
    }();
    EXPECT_NE(three.find("Einsum of 3 operands; ridgeline maps two"), std::string::npos) << three;
}

namespace {

/// Gather(x, indices, axis) imported and run on the reference loops, against out[..., j..., ...] = x[..., idx[j], ...].
std::vector<std::string> check_gather(const std::vector<std::int64_t>& x_dims, std::int64_t axis,
                                      const std::vector<std::int64_t>& idx_dims, const std::vector<std::int64_t>& idx) {
    onnx_builder g(14);
    g.input("x", x_dims);
    g.init_ints("idx", idx_dims, idx);
    auto& n = g.node("Gather", {"x", "idx"}, {"out"}, "/Gather");
    onnx_builder::set(n, "axis", axis);
    g.output("out");
    const io::onnx_model m = io::import_onnx(g.save(ridgeline::test::scratch_dir() / "gather.onnx"));
    const auto an = core::analyze(m.model, core::dtype::fp32);
    const backend_api::graph_data data = backend_api::make_graph_data(an, core::dtype::fp32, 11);
    const auto got = ridgeline::cpu::reference_graph_outputs(an, data);
    const auto& x = data.tensors.at("x");
    if (axis < 0) axis += static_cast<std::int64_t>(x_dims.size());
    std::int64_t outer = 1, inner = 1;
    for (std::int64_t d = 0; d < axis; ++d) outer *= x_dims[static_cast<std::size_t>(d)];
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < x_dims.size(); ++d) inner *= x_dims[d];
    const std::int64_t size = x_dims[static_cast<std::size_t>(axis)];
    std::vector<float> want;
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i : idx)
            for (std::int64_t k = 0; k < inner; ++k)
                want.push_back(x.data[static_cast<std::size_t>((o * size + (i < 0 ? i + size : i)) * inner + k)]);
    std::vector<std::int64_t> dims(x_dims.begin(), x_dims.begin() + axis);
    dims.insert(dims.end(), idx_dims.begin(), idx_dims.end());
    dims.insert(dims.end(), x_dims.begin() + axis + 1, x_dims.end());
    EXPECT_EQ(got.at(0).dims.dims(), dims);
    EXPECT_EQ(got.at(0).data, want);  // copies: exact
    std::vector<std::string> kinds;
    for (const auto& l : m.model.layers()) kinds.emplace_back(core::kind_of(l.op));
    return kinds;
}

}  // namespace

TEST(OnnxGather, SeveralIndicesOfAnActivationAreSlicesAndAConcat) {
    // x[:, [4, 0, 1, 5]] of [2, 6, 3]: runs [4, 5), [0, 2), [5, 6): three slices and a concat -> [2, 4, 3]
    EXPECT_EQ(check_gather({2, 6, 3}, 1, {4}, {4, 0, 1, 5}),
              (std::vector<std::string>{"slice", "slice", "slice", "concat"}));
    // consecutive indices are one slice, a view: x[:, 1:4] written as x[:, [1, 2, 3]]; a negative index counts
    // from the end (-1 is 2 here)
    EXPECT_EQ(check_gather({2, 6, 3}, 1, {3}, {1, 2, 3}), (std::vector<std::string>{"slice"}));
    EXPECT_EQ(check_gather({4, 3}, -1, {2}, {-1, 0}), (std::vector<std::string>{"slice", "slice", "concat"}));
    // indices of rank 2 put their dims at the axis: [[0, 2], [1, 1]] of [2, 5, 3] along 1 -> [2, 2, 2, 3]
    // (runs [0, 1), [2, 3), [1, 2), [1, 2): a repeated index is read twice)
    EXPECT_EQ(check_gather({2, 5, 3}, 1, {2, 2}, {0, 2, 1, 1}),
              (std::vector<std::string>{"slice", "slice", "slice", "slice", "concat", "reshape"}));
}

TEST(OnnxGather, IndicesOutOfRangeOrTooManyRunsAreRefused) {
    auto error_of = [](const std::vector<std::int64_t>& idx) {
        onnx_builder g(14);
        g.input("x", {2, 600});
        g.init_ints("idx", {static_cast<std::int64_t>(idx.size())}, idx);
        auto& n = g.node("Gather", {"x", "idx"}, {"out"}, "/Gather");
        onnx_builder::set(n, "axis", std::int64_t{1});
        g.output("out");
        return import_error(g, "gather_bad.onnx");
    };
    EXPECT_NE(error_of({0, 600}).find("index 600 is out of range for axis 1 of size 600"), std::string::npos);
    // every other index of 600: 300 runs of one, more than 256
    std::vector<std::int64_t> every_other;
    for (std::int64_t i = 0; i < 600; i += 2) every_other.push_back(i);
    EXPECT_NE(error_of(every_other).find("by 300 indices in 300 runs; ridgeline maps at most 256 runs"), std::string::npos);
}
