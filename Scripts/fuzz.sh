#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ (optimised, as micloop ships, with
# the address sanitizer and edge coverage) and runs each, two at a time, for SECONDS
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
declare -A checkRuns=([AudioFileFuzzer]=20000 [FileJobFuzzer]=5000 [TonePlanFuzzer]=30000
  [CommandLineFuzzer]=1000 [HTTPRequestFuzzer]=30000)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(FileJobFuzzer AudioFileFuzzer TonePlanFuzzer CommandLineFuzzer HTTPRequestFuzzer)
root=$(cd "$(dirname "$0")/.." && pwd)
scratch="$root/.build-fuzz"
swift=${SWIFT:-swift}
runtime=$(dirname "$(command -v "$swift")")/../lib/clang
runtime=$(find "$runtime" -name "libclang_rt.fuzzer_no_main-$(uname -m).a" | head -1)
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
# The targets' scratch files and record folders, in memory where the
# machine has it (the recorder's syncs then cost no disk writes).
memory=/dev/shm
[ -w "$memory" ] || memory=/tmp
export MICLOOP_FUZZ_SCRATCH
MICLOOP_FUZZ_SCRATCH=$(mktemp -d "$memory/micloop-fuzz-scratch.XXXXXX")
trap 'rm -rf "$work" "$MICLOOP_FUZZ_SCRATCH"' EXIT
total=0
# Processes per target in check mode, each with its own seed (1, 2 …) and
# its share of the inputs, run side by side: the whole-file jobs cost most
# per input, and two cores each take half (the same inputs on any machine).
declare -A checkWorkers=([FileJobFuzzer]=2)

# Runs worker $2 of target $1 with the given libFuzzer budget; its log is
# $work/$1/$2/log, and what it finds is kept in $work/$1/$2/findings.
run_worker() {
  local target=$1 worker=$2
  shift 2
  local place="$work/$target/$worker"
  mkdir -p "$place/corpus" "$place/findings"
  cp "$work/$target/seeds/"* "$place/corpus/"
  (cd "$place/findings" && "$scratch/release/$target" "$@" \
    -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 "$place/corpus" >"$place/log" 2>&1)
}

# How many processes fuzz TARGET at once: checkWorkers' count in check mode, else one.
workers_of() {
  if [ "$mode" = check ]; then echo "${checkWorkers[$1]:-1}"; else echo 1; fi
}

# Fuzzes one target with its workers; prints its line and keeps its count of
# inputs in $work/TARGET/runs, or reports and keeps what it found and fails.
fuzz_target() {
  local target=$1 workers described started pids worker budget runs
  mkdir -p "$work/$target/seeds"
  if [ -d "$root/Fuzz/Corpus/$target" ]; then cp "$root/Fuzz/Corpus/$target/"* "$work/$target/seeds/"; fi
  if [ "$target" = FileJobFuzzer ]; then
    cp "$root/Fuzz/Corpus/AudioFileFuzzer/"* "$work/$target/seeds/"
    python3 "$root/Scripts/fuzz_seeds.py" "$work/$target/seeds" >/dev/null
  fi
  workers=$(workers_of "$target")
  if [ "$mode" = check ]; then
    described="seed 1"
    [ "$workers" -gt 1 ] && described="seeds 1 to $workers, side by side"
  else
    described="${mode}s"
  fi
  started=$SECONDS
  pids=()
  for worker in $(seq "$workers"); do
    if [ "$mode" = check ]; then
      budget=(-seed="$worker" -runs=$(( ${checkRuns[$target]} / workers )))
    else
      budget=(-max_total_time="$mode")
    fi
    run_worker "$target" "$worker" "${budget[@]}" &
    pids+=($!)
  done
  local failedWorker=""
  for index in "${!pids[@]}"; do
    wait "${pids[$index]}" || failedWorker=$((index + 1))
  done
  if [ -n "$failedWorker" ]; then
    log="$work/$target/$failedWorker/log"
    echo "fuzz: $target failed; its report:" >&2
    grep -E "ERROR|SUMMARY|Fatal error|Swift runtime failure|deadly signal|Test unit written" "$log" >&2 || tail -20 "$log" >&2
    for finding in "$work/$target"/*/findings/*; do
      [ -e "$finding" ] && cp "$finding" "$root/Fuzz/" && echo "fuzz: kept $(basename "$finding") in Fuzz/" >&2
    done
    return 1
  fi
  runs=0
  for worker in $(seq "$workers"); do
    runs=$((runs + $(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target/$worker/log")))
  done
  echo "$runs" >"$work/$target/runs"
  echo "fuzz: $target: $runs inputs ($described) in $((SECONDS - started)) s, no crash, no hang, no leak"
}

# The targets run side by side on two cores' worth of workers (a target
# with two workers alone), so both cores stay busy; each one's lines are
# printed when it ends.
declare -A targetOf=() workersOf=()
busy=0
failed=0
finish_one() {
  local ended status=0
  wait -n -p ended "${!targetOf[@]}" || status=$?
  [ "$status" -eq 0 ] || failed=1
  cat "$work/${targetOf[$ended]}.out"
  busy=$((busy - workersOf[$ended]))
  unset "targetOf[$ended]" "workersOf[$ended]"
}
for target in "${targets[@]}"; do
  need=$(workers_of "$target")
  while [ "$busy" -gt 0 ] && [ $((busy + need)) -gt 2 ]; do finish_one; done
  fuzz_target "$target" >"$work/$target.out" 2>&1 &
  targetOf[$!]=$target
  workersOf[$!]=$need
  busy=$((busy + need))
done
while [ ${#targetOf[@]} -gt 0 ]; do finish_one; done
[ "$failed" -eq 0 ] || exit 1
total=0
for target in "${targets[@]}"; do total=$((total + $(cat "$work/$target/runs"))); done
echo "fuzz: $total inputs in all"
