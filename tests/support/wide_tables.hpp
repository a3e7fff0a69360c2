// For tests that read a sentence of a report, not its layout: tables and footers at no width limit (as `--wide`)
// for the guard's lifetime, so a sentence is not broken across lines.
#pragma once

#include "ridgeline/report/format.hpp"

namespace ridgeline::testing {

class wide_tables {
public:
    wide_tables() : saved_(report::table_width()) { report::set_table_width(0); }
    ~wide_tables() { report::set_table_width(saved_); }
    wide_tables(const wide_tables&) = delete;
    wide_tables& operator=(const wide_tables&) = delete;

private:
    std::size_t saved_;
};

}  // namespace ridgeline::testing
