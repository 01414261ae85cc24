#!/usr/bin/env bash
# Builds and runs a separate package that depends on micloop by version —
# a local git repository of this tree, tagged — as an adopter's package
# would. SwiftPM refuses unsafe flags in such a dependency, so this also
# proves that no library target carries any.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
swift=${SWIFT:-swift}
work=$(mktemp -d /tmp/micloop-consumer.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The version micloop says it is (`micloop --version`): what an adopter tags.
version=$(sed -n 's/^ *version: "\([0-9.]*\)",$/\1/p' "$root/Sources/MicLoopCLI/MicLoop.swift")
[ -n "$version" ] || { echo "no version in Sources/MicLoopCLI/MicLoop.swift" >&2; exit 1; }
mkdir "$work/micloop"
(cd "$root" && git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do
  [ -e "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -cf -) | tar -xf - -C "$work/micloop"
git -C "$work/micloop" init -q
git -C "$work/micloop" add -A
git -C "$work/micloop" -c user.name=micloop -c user.email=micloop@localhost commit -qm "micloop $version"
git -C "$work/micloop" tag "$version"
mkdir -p "$work/consumer/Sources/Consumer"
sed -e "s#@MICLOOP_URL@#file://$work/micloop#" -e "s#@MICLOOP_VERSION@#$version#" \
  "$root/Tests/Consumer/Package.swift.in" > "$work/consumer/Package.swift"
cp "$root/Tests/Consumer/Sources/Consumer/main.swift" "$work/consumer/Sources/Consumer/"
cd "$work/consumer"
if ! "$swift" build > build.log 2>&1; then
  tail -30 build.log >&2
  echo "the consumer package did not build against micloop $version" >&2
  exit 1
fi
output=$(.build/debug/Consumer)
echo "$output"
case "$output" in "consumer: ok"*) ;; *) exit 1 ;; esac
