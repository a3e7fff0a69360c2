#!/usr/bin/env bash
# Packs the header-only dependencies of ridgeline (and GoogleTest's sources) from this Debian machine into
# one folder, so that scripts/gpu-check.sh can build on a GPU machine that has only the CUDA toolkit, CMake
# and a compiler (no Debian -dev packages, no network):
#
#   scripts/gpu-pack-deps.sh [DIR]        default DIR: carry/deps (git-ignored)
#
# DIR gets include/{fmt,spdlog,nlohmann,CLI}, src/googletest, and CMake package files in lib/cmake/ that
# make find_package() give the targets ridgeline links: fmt::fmt (header-only, FMT_HEADER_ONLY),
# spdlog::spdlog (header-only, external fmt), nlohmann_json::nlohmann_json, CLI11::CLI11 and
# GTest::gtest / GTest::gtest_main (built from the sources into the build folder). Use it with
#   cmake -DCMAKE_PREFIX_PATH=DIR ...     or     scripts/gpu-check.sh --deps DIR
# oneDNN is not packed: without it the "cpu" backend is left out of the build ("cpu-ref" remains).
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${1:-carry/deps}"

need=(/usr/include/fmt/format-inl.h /usr/include/spdlog/spdlog.h /usr/include/nlohmann/json.hpp
      /usr/include/CLI/CLI.hpp /usr/src/googletest/CMakeLists.txt)
missing=()
for f in "${need[@]}"; do [[ -e "$f" ]] || missing+=("$f"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "gpu-pack-deps: missing on this machine: ${missing[*]}" >&2
  echo "gpu-pack-deps: install them with: sudo apt-get install libfmt-dev libspdlog-dev nlohmann-json3-dev libcli11-dev googletest" >&2
  exit 1
fi

version_of() {  # package version from dpkg, or "0" when unknown
  dpkg-query -W -f='${Version}' "$1" 2>/dev/null | sed -E 's/^[0-9]+://; s/[+~-].*//' || echo 0
}
fmt_version=$(version_of libfmt-dev)
spdlog_version=$(version_of libspdlog-dev)
json_version=$(version_of nlohmann-json3-dev)
cli11_version=$(version_of libcli11-dev)
gtest_version=$(version_of googletest)

rm -rf "$dest"
mkdir -p "$dest/include" "$dest/src" "$dest/lib/cmake"
cp -r /usr/include/fmt /usr/include/spdlog /usr/include/nlohmann /usr/include/CLI "$dest/include/"
cp -r /usr/src/googletest "$dest/src/googletest"

write_version() {  # dir name version: a ConfigVersion file accepting any requested version <= ours
  cat > "$1/$2ConfigVersion.cmake" <<EOF
set(PACKAGE_VERSION "$3")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
EOF
}

write_header_only() {  # package target title: the Config file of a header-only library with no definitions
  mkdir -p "$dest/lib/cmake/$1"
  cat > "$dest/lib/cmake/$1/$1Config.cmake" <<EOF
# $3, header-only (packed by scripts/gpu-pack-deps.sh)
if(NOT TARGET $2)
  add_library($2 INTERFACE IMPORTED)
  set_target_properties($2 PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "\${CMAKE_CURRENT_LIST_DIR}/../../../include")
endif()
set($1_FOUND TRUE)
EOF
}

mkdir -p "$dest/lib/cmake/fmt"
cat > "$dest/lib/cmake/fmt/fmtConfig.cmake" <<'EOF'
# fmt, header-only (packed by scripts/gpu-pack-deps.sh)
if(NOT TARGET fmt::fmt)
  add_library(fmt::fmt INTERFACE IMPORTED)
  set_target_properties(fmt::fmt PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR}/../../../include"
    INTERFACE_COMPILE_DEFINITIONS "FMT_HEADER_ONLY=1")
endif()
set(fmt_FOUND TRUE)
EOF
write_version "$dest/lib/cmake/fmt" fmt "$fmt_version"

mkdir -p "$dest/lib/cmake/spdlog"
cat > "$dest/lib/cmake/spdlog/spdlogConfig.cmake" <<'EOF'
# spdlog, header-only with an external (header-only) fmt (packed by scripts/gpu-pack-deps.sh)
include(CMakeFindDependencyMacro)
find_dependency(fmt)
if(NOT TARGET spdlog::spdlog)
  add_library(spdlog::spdlog INTERFACE IMPORTED)
  set_target_properties(spdlog::spdlog PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR}/../../../include"
    INTERFACE_COMPILE_DEFINITIONS "SPDLOG_FMT_EXTERNAL"
    INTERFACE_LINK_LIBRARIES "fmt::fmt")
endif()
set(spdlog_FOUND TRUE)
EOF
write_version "$dest/lib/cmake/spdlog" spdlog "$spdlog_version"

write_header_only nlohmann_json nlohmann_json::nlohmann_json "nlohmann/json"
write_version "$dest/lib/cmake/nlohmann_json" nlohmann_json "$json_version"

write_header_only CLI11 CLI11::CLI11 CLI11
write_version "$dest/lib/cmake/CLI11" CLI11 "$cli11_version"

mkdir -p "$dest/lib/cmake/GTest"
cat > "$dest/lib/cmake/GTest/GTestConfig.cmake" <<'EOF'
# GoogleTest from its sources, built inside the build folder (packed by scripts/gpu-pack-deps.sh).
# googletest >= 1.11 defines GTest::gtest and GTest::gtest_main itself.
if(NOT TARGET GTest::gtest)
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  get_filename_component(_ridgeline_gtest_src "${CMAKE_CURRENT_LIST_DIR}/../../../src/googletest" ABSOLUTE)
  add_subdirectory("${_ridgeline_gtest_src}" "${CMAKE_BINARY_DIR}/_deps/googletest" EXCLUDE_FROM_ALL)
  unset(_ridgeline_gtest_src)
endif()
set(GTest_FOUND TRUE)
EOF
write_version "$dest/lib/cmake/GTest" GTest "$gtest_version"

cat > "$dest/README" <<EOF
Packed by scripts/gpu-pack-deps.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ) from Debian packages:
fmt $fmt_version, spdlog $spdlog_version, nlohmann_json $json_version, CLI11 $cli11_version, googletest $gtest_version.
Use: cmake -DCMAKE_PREFIX_PATH=$(cd "$dest" && pwd) ...   or   scripts/gpu-check.sh --deps $dest
EOF
echo "gpu-pack-deps: wrote $dest ($(du -sh "$dest" | cut -f1)): fmt $fmt_version, spdlog $spdlog_version, nlohmann_json $json_version, CLI11 $cli11_version, googletest $gtest_version"
