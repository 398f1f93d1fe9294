#!/usr/bin/env bash
# A crate's own tests, built as they are (`cargo test`, debug), each checked by smc-run under
# the given models with a time limit: one line per test and model with the verdict, the
# executions and the time. The crate comes from crates.io (network needed).
#
#   benches/crate_tests.sh CRATE VERSION [SECONDS] [MODELS] [FILTER]
#   benches/crate_tests.sh spin 0.10.1 60 "sc tso" "^mutex::spin::tests::(smoke|try_lock)$"
#
# SMC_RUN names the checker (default: target/release/smc-run of this checkout).
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
crate=$1 version=$2 limit=${3:-60} models=${4:-"sc tso"} filter=${5:-}
here=$(cd "$(dirname "$0")/.." && pwd)
smc=${SMC_RUN:-$here/target/release/smc-run}
[ -x "$smc" ] || { echo "crate_tests: no checker at $smc (cargo build --release)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# fetch the crate's source through a project that depends on it
mkdir -p "$work/fetch/src"
printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n%s = "=%s"\n' \
    "$crate" "$version" > "$work/fetch/Cargo.toml"
touch "$work/fetch/src/lib.rs"
(cd "$work/fetch" && cargo fetch --quiet)
src=$(cd "$work/fetch" && cargo metadata --format-version 1 |
    python3 -c "import json,sys; m=json.load(sys.stdin); print(next(p['manifest_path'] for p in m['packages'] if p['name']=='$crate'))")
cp -r "$(dirname "$src")" "$work/crate"
cd "$work/crate"
bins=$(cargo test --no-run --message-format=json 2>/dev/null | python3 -c "
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get('reason') == 'compiler-artifact' and m.get('executable') and m['profile']['test']:
        print(m['executable'])")

printf '%-60s %-5s %-8s %10s %8s\n' test model verdict executions seconds
for bin in $bins; do
    for t in $("$bin" --list 2>/dev/null | sed -n 's/: test$//p' | grep -E -- "$filter" || true); do
        for m in $models; do
            start=$(date +%s.%N)
            # (at the limit smc-run is interrupted: it stops its workers and gives no verdict)
            timeout -s INT "$limit" "$smc" --json -q -j1 --model "$m" "$bin" -- \
                --exact "$t" --test-threads=1 2>/dev/null | tail -n 1 > "$work/json" || true
            python3 - "$t" "$m" "$start" "$work/json" <<'EOF'
import json, sys, time
name, model, start, path = sys.argv[1:5]
secs = time.time() - float(start)
try:
    r = json.load(open(path))
    verdict, n = r.get("verdict", "?"), r.get("executions", "?")
except ValueError:
    verdict, n = "timeout", "-"
print(f"{name:60} {model:5} {verdict:8} {n:>10} {secs:8.1f}")
EOF
        done
    done
done
