#!/usr/bin/env bash
# Side-by-side benchmarks; writes Docs/BENCHMARKS.md. Run with `make bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .build/venv/bin/python Bench/bench.py --micloop .build/release/micloop --output Docs/BENCHMARKS.md "$@"
