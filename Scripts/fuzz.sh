#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ (address sanitizer, edge coverage)
# and runs each for SECONDS seconds, starting from the committed seed corpus
# in Fuzz/Corpus/<target>. Fails on any crash, sanitizer report, leak or
# input that runs longer than 10 s (a hang); prints how many inputs each
# target tried.
# Usage: Scripts/fuzz.sh SECONDS [TARGET...]   random inputs for SECONDS each
#        Scripts/fuzz.sh check                  the same inputs on every run
#          (seed 1, a fixed count per target): what `make test` runs, so a
#          test run never depends on luck; `make fuzz` searches at random.
set -euo pipefail
mode=${1:-60}
shift || true
declare -A checkRuns=([AudioFileFuzzer]=20000 [TonePlanFuzzer]=30000 [CommandLineFuzzer]=1000)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(AudioFileFuzzer TonePlanFuzzer CommandLineFuzzer)
root=$(cd "$(dirname "$0")/.." && pwd)
scratch="$root/.build-fuzz"
swift=${SWIFT:-swift}
runtime=$(dirname "$(command -v "$swift")")/../lib/clang
runtime=$(find "$runtime" -name 'libclang_rt.fuzzer_no_main-x86_64.a' | head -1)
[ -n "$runtime" ] || { echo "fuzz: libFuzzer runtime not found next to $swift" >&2; exit 1; }

(cd "$root/Fuzz" && "$swift" build --scratch-path "$scratch" \
  -Xswiftc -sanitize=address \
  -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table \
  -Xswiftc -parse-as-library -Xlinker "$runtime" -Xlinker -lstdc++)

export LSAN_OPTIONS="suppressions=$root/Fuzz/leak-suppressions.txt:print_suppressions=0"
work=$(mktemp -d /tmp/micloop-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
total=0
for target in "${targets[@]}"; do
  mkdir -p "$work/$target/corpus" "$work/$target/findings"
  cp "$root/Fuzz/Corpus/$target/"* "$work/$target/corpus/"
  log="$work/$target/log"
  if [ "$mode" = check ]; then
    budget=(-seed=1 -runs="${checkRuns[$target]}")
    described="seed 1"
  else
    budget=(-max_total_time="$mode")
    described="${mode}s"
  fi
  if ! (cd "$work/$target/findings" && "$scratch/debug/$target" "${budget[@]}" \
    -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 "$work/$target/corpus" >"$log" 2>&1); then
    echo "fuzz: $target failed; its report:" >&2
    grep -E "ERROR|SUMMARY|Swift runtime failure|Test unit written" "$log" >&2 || tail -20 "$log" >&2
    for finding in "$work/$target/findings"/*; do
      [ -e "$finding" ] && cp "$finding" "$root/Fuzz/" && echo "fuzz: kept $(basename "$finding") in Fuzz/" >&2
    done
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  total=$((total + runs))
  echo "fuzz: $target: $runs inputs ($described), no crash, no hang, no leak"
done
echo "fuzz: $total inputs in all"
