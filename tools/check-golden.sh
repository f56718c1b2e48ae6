#!/bin/bash
# Checks that a change to the model's speed or memory left its results alone.
#
#   tools/check-golden.sh record DIR   # before the change: compare --json of every seed
#                                      # scenario and the demo into DIR
#   tools/check-golden.sh check DIR    # after it: the same runs, diffed against DIR
#
# RECLAIMSIM names the binary (default target/release/reclaimsim, or
# $CARGO_TARGET_DIR/release/reclaimsim). Host-dependent fields are left out of the
# diff: wall_s (wall time) and model_bytes (the model's host memory, printed beside it
# so a memory change shows). Exit 1 when any result or printed table differs.
set -euo pipefail
mode=${1:?record or check}
dir=${2:?a directory}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${RECLAIMSIM:-${CARGO_TARGET_DIR:-$root/target}/release/reclaimsim}
out=$dir
[ "$mode" = check ] && out=$(mktemp -d)
mkdir -p "$out"
for f in "$root"/scenarios/seeds/*.toml "$root"/scenarios/demo.toml; do
    n=$(basename "$f" .toml)
    "$bin" compare "$f" --json "$out/$n.json" -q --allow-long >"$out/$n.txt"
done
[ "$mode" = record ] && exit 0
strip='walk(if type == "object" then del(.wall_s, .model_bytes) else . end)'
rc=0
for j in "$dir"/*.json; do
    n=$(basename "$j" .json)
    if ! diff <(jq -S "$strip" "$j") <(jq -S "$strip" "$out/$n.json") >/dev/null ||
        ! diff -q "$dir/$n.txt" "$out/$n.txt" >/dev/null; then
        echo "DIFFERS: $n (new results in $out)"
        rc=1
    fi
    echo "$n model_bytes: $(jq -c '[.variants[].model_bytes]' "$j") -> $(jq -c '[.variants[].model_bytes]' "$out/$n.json")"
done
[ $rc = 0 ] && echo "identical (wall_s and model_bytes aside)"
exit $rc
