#!/usr/bin/env bash
# Install what is missing, build, and run every test: the plain build, the same tests under
# AddressSanitizer and UndefinedBehaviorSanitizer, and each libFuzzer target briefly.
#
#   contrib/test.sh                 everything (what CI runs)
#   FUZZ_SECONDS=60 contrib/test.sh longer fuzzing (default 20 s per target)
#   SKIP_SANITIZE=1 SKIP_FUZZ=1     skip those passes (local iterations)
set -euo pipefail
cd "$(dirname "$0")/.."
source contrib/deps.sh
tessera_install_deps

jobs=$(nproc 2>/dev/null || echo 2)
fuzz_seconds=${FUZZ_SECONDS:-20}
start=$(date +%s)

step() { printf '\n=== %s (%ss)\n' "$*" "$(( $(date +%s) - start ))"; }

step "plain build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
step "tests"
ctest --test-dir build -j2 --output-on-failure
step "quick start, from start to stop"
contrib/quickstart-check.sh

if [[ -z ${SKIP_SANITIZE:-} ]]; then
  step "sanitizer build"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTESSERA_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"$jobs"
  step "tests under ASan and UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -j2 --output-on-failure
fi

if [[ -z ${SKIP_FUZZ:-} ]]; then
  step "fuzz build (clang)"
  CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_FUZZ=ON >/dev/null
  cmake --build build-fuzz -j"$jobs"
  for target in build-fuzz/tests/bin/fuzz_*; do
    name=$(basename "$target")
    step "fuzzing $name for ${fuzz_seconds}s"
    corpus=$(mktemp -d)
    cp -r "tests/fuzz/corpus/$name/." "$corpus/" 2>/dev/null || true
    # Findings (crash-*) land in build-fuzz/, never in the source tree.
    log="build-fuzz/$name.log"
    if ! (cd build-fuzz && "./tests/bin/$name" -max_total_time="$fuzz_seconds" -print_final_stats=1 \
            -timeout=10 -rss_limit_mb=2048 "$corpus" >"$name.log" 2>&1); then
      cat "$log"
      echo "fuzz target $name failed; the input is in build-fuzz/" >&2
      exit 1
    fi
    grep -E '^(Done|stat::number_of_executed_units)' "$log" || true
    rm -rf "$corpus"
  done
fi

step "all tests passed"
