#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ (optimised, as micloop ships, with
# the address sanitizer and edge coverage) and runs each for SECONDS
# seconds, starting from the committed seed corpus in Fuzz/Corpus/<target>
# (FileJobFuzzer also from the files Scripts/fuzz_seeds.py writes, and from
# AudioFileFuzzer's corpus). Fails on any crash, sanitizer report, leak or
# input that runs longer than 10 s (a hang); prints how many inputs each
# target tried and how long it took.
# Usage: Scripts/fuzz.sh SECONDS [TARGET...]   random inputs for SECONDS each
#        Scripts/fuzz.sh check                  the same inputs on every run
#          (seed 1, a fixed count per target): what `make test` runs, so a
#          test run never depends on luck; `make fuzz` searches at random.
set -euo pipefail
mode=${1:-60}
shift || true
declare -A checkRuns=([AudioFileFuzzer]=20000 [FileJobFuzzer]=4000 [TonePlanFuzzer]=30000
  [CommandLineFuzzer]=1000 [HTTPRequestFuzzer]=30000)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(AudioFileFuzzer FileJobFuzzer TonePlanFuzzer CommandLineFuzzer HTTPRequestFuzzer)
root=$(cd "$(dirname "$0")/.." && pwd)
scratch="$root/.build-fuzz"
swift=${SWIFT:-swift}
runtime=$(dirname "$(command -v "$swift")")/../lib/clang
runtime=$(find "$runtime" -name 'libclang_rt.fuzzer_no_main-x86_64.a' | head -1)
[ -n "$runtime" ] || { echo "fuzz: libFuzzer runtime not found next to $swift" >&2; exit 1; }

# Optimised: the code micloop ships (no check is lost: the sources use no
# assert), and several times the inputs a debug build runs in the same time.
(cd "$root/Fuzz" && "$swift" build -c release --scratch-path "$scratch" \
  -Xswiftc -sanitize=address \
  -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table \
  -Xswiftc -parse-as-library -Xlinker "$runtime" -Xlinker -lstdc++)

export LSAN_OPTIONS="suppressions=$root/Fuzz/leak-suppressions.txt:print_suppressions=0"
# A trap goes straight to libFuzzer, which keeps the input: the Swift
# runtime's own backtracer would read the stack in ways the sanitizer reports.
export SWIFT_BACKTRACE=enable=no
work=$(mktemp -d /tmp/micloop-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
total=0
for target in "${targets[@]}"; do
  mkdir -p "$work/$target/corpus" "$work/$target/findings"
  if [ -d "$root/Fuzz/Corpus/$target" ]; then cp "$root/Fuzz/Corpus/$target/"* "$work/$target/corpus/"; fi
  if [ "$target" = FileJobFuzzer ]; then
    cp "$root/Fuzz/Corpus/AudioFileFuzzer/"* "$work/$target/corpus/"
    python3 "$root/Scripts/fuzz_seeds.py" "$work/$target/corpus" >/dev/null
  fi
  log="$work/$target/log"
  if [ "$mode" = check ]; then
    budget=(-seed=1 -runs="${checkRuns[$target]}")
    described="seed 1"
  else
    budget=(-max_total_time="$mode")
    described="${mode}s"
  fi
  started=$SECONDS
  if ! (cd "$work/$target/findings" && "$scratch/release/$target" "${budget[@]}" \
    -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 "$work/$target/corpus" >"$log" 2>&1); then
    echo "fuzz: $target failed; its report:" >&2
    grep -E "ERROR|SUMMARY|Fatal error|Swift runtime failure|deadly signal|Test unit written" "$log" >&2 || tail -20 "$log" >&2
    for finding in "$work/$target/findings"/*; do
      [ -e "$finding" ] && cp "$finding" "$root/Fuzz/" && echo "fuzz: kept $(basename "$finding") in Fuzz/" >&2
    done
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  total=$((total + runs))
  echo "fuzz: $target: $runs inputs ($described) in $((SECONDS - started)) s, no crash, no hang, no leak"
done
echo "fuzz: $total inputs in all"
