#!/usr/bin/env bash
# cutline vs the TrustGraph reference (scripts/reference_jsonl.py) on JSONL
# model outputs of 1k and 10k lines (scripts/gen_jsonl.py).
#
#   scripts/bench-reference.sh [--runs N] [--memory]
#   scripts/bench-reference.sh --check      # what CI runs (scripts/test.sh)
#
# 1. builds cutline in release;
# 2. installs `jsonschema` into a venv under the user's cache dir (once);
# 3. generates the inputs and the per-object schema into a temp dir;
# 4. checks that both keep exactly the same items (canonical JSON, in order);
# 5. times both whole processes side by side (hyperfine when installed, else
#    a loop with `date +%s%N`, median of N runs) and prints the ratio;
# 6. with --memory: peak RSS of `cutline parse` (default JSONL output, which
#    streams) on a generated 1 GB file in /tmp, deleted afterwards.
#
# --check is the correctness check CI runs: steps 1-4 only (exit 1 when the
# kept items differ), and the ratio from the one timed run of each side that
# step 4 makes anyway. It prints that ratio and never asserts a time. About
# 30-40 s on the dev machine, almost all of it the reference on 10k lines.
# CUTLINE_BIN=PATH uses that binary instead of building a release one
# (scripts/test.sh passes the debug build cargo test made, so CI compiles
# nothing more; the ratio it prints is then a debug build's).
set -euo pipefail

RUNS=10
MEMORY=0
CHECK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --memory) MEMORY=1; shift ;;
    --check) CHECK=1; shift ;;
    *) echo "usage: $0 [--runs N] [--memory] | --check" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/cutline"
VENV="$CACHE/reference-venv"
PY="$VENV/bin/python"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/cutline-bench.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

if [ -n "${CUTLINE_BIN:-}" ]; then
  CUTLINE="$CUTLINE_BIN" # e.g. CI's debug build: the check needs no release build
else
  echo "== build (release)" >&2
  cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" --bin cutline
  CUTLINE="$ROOT/target/release/cutline"
fi

if ! "$PY" -c 'import jsonschema' 2>/dev/null; then
  echo "== venv with jsonschema in $VENV" >&2
  mkdir -p "$CACHE"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check jsonschema
fi
echo "python: $("$PY" --version 2>&1), jsonschema $("$PY" -c 'import importlib.metadata as m; print(m.version("jsonschema"))')" >&2
echo "cutline: $("$CUTLINE" --version 2>/dev/null || echo '?')" >&2
echo "cutline binary: $CUTLINE" >&2

"$PY" "$ROOT/scripts/gen_jsonl.py" "$WORK" --lines 1000,10000 >/dev/null
SCHEMA="$WORK/schema.json"

# Canonical form of kept items: one `json.dumps(sort_keys=True)` per line,
# from cutline's envelope on stdin.
canon_cutline() {
  "$PY" -c 'import json,sys
env = json.load(sys.stdin)
assert env["ok"], env
for it in env["data"]["items"]:
    print(json.dumps(it, sort_keys=True, ensure_ascii=False))'
}

median_ms() { # command... ; prints the median wall time in ms over $RUNS runs
  local t=() i s e
  for ((i = 0; i < RUNS; i++)); do
    s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N)
    t+=($(( (e - s) / 1000 )))
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.3f\n", m / 1000}'
}

status=0
for n in 1000 10000; do
  f="$WORK/out-$n.jsonl"
  echo "== $n lines ($(wc -c <"$f") bytes)"
  s=$(date +%s%N)
  "$PY" "$ROOT/scripts/reference_jsonl.py" "$f" "$SCHEMA" >"$WORK/ref-$n.txt"
  r=$(date +%s%N)
  "$PY" "$ROOT/scripts/reference_jsonl.py" "$f" "$SCHEMA" --once >"$WORK/once-$n.txt"
  o=$(date +%s%N)
  "$CUTLINE" parse "$f" --as jsonl --schema "$SCHEMA" --output json >"$WORK/cut-$n.json"
  c=$(date +%s%N)
  canon_cutline <"$WORK/cut-$n.json" >"$WORK/cut-$n.txt"
  cmp -s "$WORK/ref-$n.txt" "$WORK/once-$n.txt" || { echo "reference --once keeps other items"; status=1; }
  if cmp -s "$WORK/ref-$n.txt" "$WORK/cut-$n.txt"; then
    echo "same items: yes ($(wc -l <"$WORK/ref-$n.txt") kept by both)"
  else
    echo "same items: NO"; diff "$WORK/ref-$n.txt" "$WORK/cut-$n.txt" | head -20; status=1
  fi
  if [ "$CHECK" = 1 ]; then
    awk -v r=$(((r - s) / 1000)) -v o=$(((o - r) / 1000)) -v c=$(((c - o) / 1000)) 'BEGIN {printf "one run each (not a benchmark; never asserted): reference %.1f ms, reference --once %.1f ms, cutline %.2f ms; ratio %.0fx (spec'"'"'s code), %.1fx (validator built once)\n", r / 1000, o / 1000, c / 1000, r / c, o / c}'
    continue
  fi
  ref_cmd=("$PY" "$ROOT/scripts/reference_jsonl.py" "$f" "$SCHEMA")
  once_cmd=("${ref_cmd[@]}" --once)
  cut_cmd=("$CUTLINE" parse "$f" --as jsonl --schema "$SCHEMA" --output json)
  if command -v hyperfine >/dev/null; then
    q() { printf '%q ' "$@"; }
    # Interleaved would be fairer still; hyperfine runs each command's runs
    # back to back, so the three are measured within one invocation.
    hyperfine --style basic --warmup 1 --runs "$RUNS" -N --export-json "$WORK/h-$n.json" \
      -n reference "$(q "${ref_cmd[@]}")" -n reference-once "$(q "${once_cmd[@]}")" \
      -n cutline "$(q "${cut_cmd[@]}")" >&2
    "$PY" - "$WORK/h-$n.json" <<'PYEOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
ref, once, cut = (r[k]["median"] for k in ("reference", "reference-once", "cutline"))
print(f"median wall time: reference {ref*1000:.1f} ms, reference --once {once*1000:.1f} ms, "
      f"cutline {cut*1000:.2f} ms; ratio {ref/cut:.0f}x (spec's code), {once/cut:.1f}x (validator built once) (hyperfine, medians)")
PYEOF
  else
    ref_ms=$(median_ms "${ref_cmd[@]}")
    once_ms=$(median_ms "${once_cmd[@]}")
    cut_ms=$(median_ms "${cut_cmd[@]}")
    awk -v r="$ref_ms" -v o="$once_ms" -v c="$cut_ms" 'BEGIN {printf "median wall time: reference %.1f ms, reference --once %.1f ms, cutline %.2f ms; ratio %.0fx (spec'"'"'s code), %.1fx (validator built once) (date loop)\n", r, o, c, r / c, o / c}'
  fi
done

if [ "$MEMORY" = 1 ]; then
  BIG="${TMPDIR:-/tmp}/cutline-1g.jsonl"
  trap 'rm -rf "$WORK" "$BIG"' EXIT
  "$PY" "$ROOT/scripts/gen_jsonl.py" --big "$BIG" --bytes $((1 << 30))
  echo "== peak RSS, cutline parse (JSONL output, streaming) on $(du -h "$BIG" | cut -f1)"
  /usr/bin/time -v "$CUTLINE" parse "$BIG" --as jsonl --schema "$SCHEMA" >/dev/null 2>"$WORK/time.txt" || true
  grep -E 'Maximum resident|Elapsed|Exit status' "$WORK/time.txt"
  rm -f "$BIG"
fi
exit $status
