// The error catalogue (issue 6; counted in docs/reliability.md): bad inputs of every kind, each run through
// the real binary as a user would. Layer strings, --input shapes, JSON model files, ONNX files (when this
// build reads ONNX) and command-line flags. Every entry must
//   - exit with its code (2: a command-line mistake; 1: any other error), never by a signal or a timeout,
//   - print exactly one line on stderr, "ridgeline: error: ..." with the entry's key words (the thing at
//     fault and the rule), no stack trace, and nothing on stdout.
// Files are written to a fresh folder per entry ("{dir}" in the arguments).
// The entries are written by input kind in catalogue_cli.cpp, catalogue_json.cpp and catalogue_onnx.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../support/scratch.hpp"
#include "catalogue.hpp"
#include "process.hpp"
#include "ridgeline/config.hpp"

namespace fs = std::filesystem;
using ridgeline::test::run_ridgeline;

namespace ridgeline::test::catalogue {

namespace {
std::vector<entry> g_entries;
}  // namespace

void add(std::string name, std::vector<std::string> args, int code, std::vector<std::string> words,
         std::map<std::string, std::string> files) {
    g_entries.push_back({std::move(name), std::move(args), code, std::move(words), std::move(files)});
}

void layer(std::string name, std::string text, std::vector<std::string> inputs, std::vector<std::string> words,
           int code) {
    std::vector<std::string> args{"summary", "--layer", std::move(text)};
    for (auto& s : inputs) {
        args.push_back("--input");
        args.push_back(std::move(s));
    }
    add("layer_" + name, std::move(args), code, std::move(words));
}

void model_file(std::string name, std::string json, std::vector<std::string> words, std::vector<std::string> extra) {
    std::vector<std::string> args{"summary", "--model-file", "{dir}/model.json"};
    args.insert(args.end(), extra.begin(), extra.end());
    add("json_" + name, std::move(args), 1, std::move(words), {{"model.json", std::move(json)}});
}

std::string net(const std::string& layers, const std::string& shape) {
    return R"({"inputs": [{"name": "x", "shape": )" + shape + R"(}], "layers": )" + layers + "}";
}

/// How gtest prints an entry (in ctest's list and in failures): its name, not its bytes.
[[maybe_unused]] void PrintTo(const entry& e, std::ostream* os) { *os << e.name; }

}  // namespace ridgeline::test::catalogue

using ridgeline::test::catalogue::entry;

namespace {

const std::vector<entry>& catalogue() {
    using namespace ridgeline::test::catalogue;
    static const bool built = [] {
        flags();
        shapes();
        layers();
        json_models();
#if RIDGELINE_HAVE_ONNX
        onnx_models();
#endif
        return true;
    }();
    (void)built;
    return g_entries;
}

std::string substitute(std::string s, const std::string& dir) {
    for (std::size_t p; (p = s.find("{dir}")) != std::string::npos;) s.replace(p, 5, dir);
    return s;
}

class Catalogue : public testing::TestWithParam<entry> {};

}  // namespace

TEST(CatalogueSize, AtLeastOneHundredDistinctEntries) {
    const auto& all = catalogue();
    std::set<std::string> names;
    std::set<std::pair<std::vector<std::string>, std::map<std::string, std::string>>> inputs;
    for (const auto& e : all) {
        EXPECT_TRUE(names.insert(e.name).second) << "duplicate name " << e.name;
        EXPECT_TRUE(inputs.insert({e.args, e.files}).second) << "duplicate input " << e.name;
    }
    std::map<std::string, int> by_kind;
    for (const auto& e : all) ++by_kind[e.name.substr(0, e.name.find('_'))];
    std::string counts;
    for (const auto& [k, n] : by_kind) counts += " " + k + "=" + std::to_string(n);
    std::printf("catalogue: %zu entries:%s\n", all.size(), counts.c_str());
    EXPECT_GE(all.size(), 100u);
}

TEST_P(Catalogue, OneLineErrorNoCrash) {
    const entry& e = GetParam();
    const fs::path dir = ridgeline::test::fresh_scratch_dir(e.name);
    for (const auto& [name, bytes] : e.files) {
        fs::create_directories((dir / name).parent_path());
        std::ofstream(dir / name, std::ios::binary) << bytes;
    }
    std::vector<std::string> args;
    for (const auto& a : e.args) args.push_back(substitute(a, dir.string()));
    const auto r = run_ridgeline(args, 120);
    fs::remove_all(dir);

    ASSERT_GE(r.exit_code, 0) << "killed by signal " << -r.exit_code << " (or timed out): " << r.err.substr(0, 2000);
    EXPECT_EQ(r.exit_code, e.exit_code) << r.err.substr(0, 2000);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err.substr(0, 2000);
    EXPECT_EQ(r.err.rfind("ridgeline: error: ", 0), 0u) << r.err.substr(0, 2000);
    std::string err = r.err;
    for (const auto& w : e.key_words) {
        const std::string word = substitute(w, dir.string());
        EXPECT_NE(err.find(word), std::string::npos) << "missing \"" << word << "\" in: " << err.substr(0, 2000);
    }
    EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 2000);
}

INSTANTIATE_TEST_SUITE_P(All, Catalogue, testing::ValuesIn(catalogue()),
                         [](const testing::TestParamInfo<entry>& param_info) { return param_info.param.name; });
