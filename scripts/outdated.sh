#!/usr/bin/env bash
# Lists direct dependencies behind their newest release, so the drift shows
# in every CI log (issue 36). It never fails the build: a crate kept behind
# on purpose says why in ARCHITECTURE.md ("Dependencies"). Cargo's own
# resolver answers (`cargo update --dry-run --verbose`), so no extra tool is
# installed; the wait on the registry is bounded.
set -uo pipefail
cd "$(dirname "$0")/.."
direct=$(python3 - <<'PY'
import tomllib
with open("Cargo.toml", "rb") as f:
    m = tomllib.load(f)
names = set(m.get("dependencies", {})) | set(m.get("dev-dependencies", {}))
print("\n".join(sorted(names)))
PY
)
out=$(timeout 120 cargo update --dry-run --verbose 2>&1) || {
    echo "outdated: the registry did not answer within 120 s; skipped"
    exit 0
}
behind=$(grep -E '^ +Unchanged .*\(available: ' <<<"$out" | while read -r _ name ver rest; do
    if grep -qx "$name" <<<"$direct"; then echo "  $name $ver → ${rest#(available: }"; fi
done | tr -d ')')
if [ -z "$behind" ]; then
    echo "outdated: every direct dependency is on its newest release"
else
    echo "outdated: direct dependencies behind their newest release (why: ARCHITECTURE.md, Dependencies)"
    echo "$behind"
fi
