// Adding an op is a list (docs/adding-an-op.md); these tests fail when a place on it was forgotten: the JSON schema's
// op enum, the per-op table of docs/conventions.md and the kinds of the PyTorch golden file each name exactly the
// kinds of core::op_kinds(), and every file the list names exists.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "ridgeline/core/layer.hpp"

namespace {

namespace fs = std::filesystem;
const fs::path root = RIDGELINE_SOURCE_DIR;

std::string text_of(const fs::path& p) {
    std::ifstream f(root / p);
    if (!f) throw std::runtime_error(p.string() + " is missing");
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::set<std::string> op_kinds() {
    std::set<std::string> s;
    for (auto k : ridgeline::core::op_kinds()) s.insert(std::string(k));
    return s;
}

std::string listed(const std::set<std::string>& s) {
    std::string t;
    for (const auto& x : s) t += (t.empty() ? "" : ", ") + x;
    return t.empty() ? "(none)" : t;
}

/// a - b, as text.
std::string missing(const std::set<std::string>& a, const std::set<std::string>& b) {
    std::set<std::string> d;
    for (const auto& x : a)
        if (!b.count(x)) d.insert(x);
    return listed(d);
}

}  // namespace

// docs/model-format.schema.json: $defs.layer.properties.op.enum (the kinds a model file may name).
TEST(OpList, TheJsonSchemaNamesEveryKind) {
    const auto schema = nlohmann::json::parse(text_of("docs/model-format.schema.json"));
    std::set<std::string> in_schema;
    // wherever the schema lists op kinds: the enum beside "op" under a layer's properties
    std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& j) {
        if (j.is_object()) {
            if (j.contains("op") && j["op"].is_object() && j["op"].contains("enum"))
                for (const auto& k : j["op"]["enum"]) in_schema.insert(k.get<std::string>());
            for (const auto& [key, v] : j.items()) walk(v);
        } else if (j.is_array()) {
            for (const auto& v : j) walk(v);
        }
    };
    walk(schema);
    EXPECT_EQ(in_schema, op_kinds()) << "not in the schema: " << missing(op_kinds(), in_schema)
                                     << "; in the schema only: " << missing(in_schema, op_kinds());
}

// docs/conventions.md, "## Per-op rules": the first cell of each row, kinds separated by ", ".
TEST(OpList, TheConventionsTableHasARowForEveryKind) {
    const std::string doc = text_of("docs/conventions.md");
    const auto start = doc.find("## Per-op rules");
    ASSERT_NE(start, std::string::npos) << "docs/conventions.md has no '## Per-op rules' section";
    std::istringstream lines(doc.substr(start));
    std::set<std::string> in_table;
    std::string line;
    bool in_rows = false;
    while (std::getline(lines, line)) {
        if (line.rfind("| op |", 0) == 0) {
            in_rows = true;
            continue;
        }
        if (!in_rows || line.rfind("|---", 0) == 0) continue;
        if (line.rfind("|", 0) != 0) break;  // the table ended
        const std::string cell = line.substr(2, line.find(" |", 1) - 2);
        std::stringstream cs(cell);
        std::string kind;
        while (std::getline(cs, kind, ',')) in_table.insert(kind.substr(kind.find_first_not_of(' ')));
    }
    EXPECT_EQ(in_table, op_kinds()) << "no row: " << missing(op_kinds(), in_table)
                                    << "; a row of no kind: " << missing(in_table, op_kinds());
}

// tests/data/golden/pytorch_reference.json: the kind of each case's layer string (before ':').
TEST(OpList, ThePyTorchGoldenFileHasCasesOfEveryKind) {
    const auto golden = nlohmann::json::parse(text_of("tests/data/golden/pytorch_reference.json"));
    std::set<std::string> in_golden;
    for (const auto& c : golden.at("cases")) {
        const auto layer = c.at("layer").get<std::string>();
        in_golden.insert(layer.substr(0, layer.find(':')));
    }
    EXPECT_EQ(in_golden, op_kinds()) << "no case: " << missing(op_kinds(), in_golden)
                                     << "; a case of no kind: " << missing(in_golden, op_kinds());
}

// docs/adding-an-op.md names files in backticks (`core/src/ops_*.cpp` is a pattern: its folder must exist); each
// must be in the tree, so the list stays true when files move.
TEST(OpList, EveryFileTheChecklistNamesExists) {
    const std::string doc = text_of("docs/adding-an-op.md");
    const std::regex path(R"(`((?:core|cpu|cuda|io|tests|docs|scripts|report|profiler|apps|backend_api)/[A-Za-z0-9_./*<>-]+)`)");
    int named = 0;
    for (auto it = std::sregex_iterator(doc.begin(), doc.end(), path); it != std::sregex_iterator(); ++it) {
        const std::string p = (*it)[1];
        ++named;
        const bool pattern = p.find('*') != std::string::npos || p.find('<') != std::string::npos;
        const fs::path must = pattern ? fs::path(p).parent_path() : fs::path(p);
        EXPECT_TRUE(fs::exists(root / must)) << "docs/adding-an-op.md names " << p << ", which is not in the tree";
    }
    EXPECT_GE(named, 20) << "the checklist names fewer files than it should (the regex or the page changed)";
}
