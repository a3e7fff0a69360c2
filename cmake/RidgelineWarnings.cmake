# Warnings for ridgeline's own targets: link ridgeline_warnings PRIVATE.
# -Wno-restrict: GCC 12 reports false positives inside std::string concatenation at -O2/-O3 (GCC PR 105329).
add_library(ridgeline_warnings INTERFACE)
target_compile_options(ridgeline_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
    -Wimplicit-fallthrough -Wformat=2
    $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict> $<$<BOOL:${RIDGELINE_WERROR}>:-Werror>>)
# ridgeline's states are enums written as their names (to_string) at output: nlohmann-json would write an enum
# it is handed as its integer, silently. With this an enum put into a JSON document is a compile error.
target_compile_definitions(ridgeline_warnings INTERFACE JSON_DISABLE_ENUM_SERIALIZATION=1)
