#!/usr/bin/env bash
# Fuzz cutline's parsers and loaders for a bounded time.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]    (default 30 s; all targets)
#   scripts/fuzz.sh --replay                            (stable: seed replay only)
#   scripts/fuzz.sh --ci [SECONDS_PER_TARGET]           (what CI runs; default 12 s)
#
# Targets (fuzz/fuzz_targets/, checks in fuzz/src/lib.rs): jsonl, salvage,
# stream (arbitrary chunking; streaming == one-shot), config (prompt loaders).
# Seeds: the model-output fixtures (tests/fixtures/cli) and the prompt
# configs (prompts/, tests/fixtures/prompts), copied into fuzz/corpus/<target>.
#
# libFuzzer needs cargo-fuzz and a nightly toolchain (`cargo +nightly fuzz`).
# Run by hand without them, the script falls back to the seed replay: the
# same checks run as `cargo test` in fuzz/ on stable, over every seed, the
# committed regressions, the saved corpus and artifacts, and bounded
# mutations of each.
#
# A crash libFuzzer finds (fuzz/artifacts/<target>/, ignored by git) is
# copied into fuzz/regressions/<target>/, which is committed: the replay runs
# every file there on every clone, so a crash found once is a regression
# test from then on. The script names the file to commit.
#
# --ci is the libFuzzer pass scripts/test.sh runs after the replay. It
# installs what it needs when missing (a minimal nightly toolchain through
# rustup, then cargo-fuzz with `cargo install --locked`, once: a second run
# finds them) and fails when it cannot, so CI is never green without
# fuzzing. CUTLINE_SKIP_FUZZ_INSTALL=1 forbids the installs (a missing tool
# is then a failure, not a skip); CUTLINE_SKIP_FUZZ=1 skips the pass, for a
# person's local run only (refused when CI is set). The
# libFuzzer builds go to the user cache ($CACHE/fuzz-target), so a fresh
# clone (CI) rebuilds only cutline itself, not every dependency with the
# sanitizer.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
TARGETS_ALL=(jsonl salvage stream config)

replay() {
  echo "== seed replay (stable, no libFuzzer)"
  CARGO_TARGET_DIR="$ROOT/target" cargo test --quiet --manifest-path fuzz/Cargo.toml --lib
}

if [ "${1:-}" = "--replay" ]; then
  replay
  exit
fi

CACHE="${CUTLINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cutline}"
FUZZ_TARGET_DIR="${CUTLINE_FUZZ_TARGET_DIR:-$CACHE/fuzz-target}"
TIMEOUT=10
CI_PASS=0
if [ "${1:-}" = "--ci" ]; then
  CI_PASS=1
  shift
  set -- "${1:-12}"
  TIMEOUT=60 # a loaded CI machine is slow; a hang is still caught
  if [ "${CUTLINE_SKIP_FUZZ:-0}" = 1 ]; then
    if [ -n "${CI:-}" ]; then
      echo "fuzz: CUTLINE_SKIP_FUZZ=1 is not allowed in CI" >&2
      exit 1
    fi
    echo "fuzz: skipped (CUTLINE_SKIP_FUZZ=1, a local run)"
    exit 0
  fi
  # Asked of rustup, not `cargo +nightly`, which may try to install it.
  if ! command -v rustup >/dev/null; then
    echo "fuzz: rustup is missing, so no nightly toolchain can be installed for libFuzzer" >&2
    exit 1
  fi
  if ! rustup toolchain list | grep -q '^nightly'; then
    if [ "${CUTLINE_SKIP_FUZZ_INSTALL:-0}" = 1 ]; then
      echo "fuzz: no nightly toolchain and CUTLINE_SKIP_FUZZ_INSTALL=1 forbids installing it" >&2
      exit 1
    fi
    echo "fuzz: installing a minimal nightly toolchain (once)"
    if ! rustup toolchain install nightly --profile minimal; then
      echo "fuzz: could not install the nightly toolchain libFuzzer needs" >&2
      exit 1
    fi
  fi
  if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    if [ "${CUTLINE_SKIP_FUZZ_INSTALL:-0}" = 1 ]; then
      echo "fuzz: cargo-fuzz is missing and CUTLINE_SKIP_FUZZ_INSTALL=1 forbids installing it" >&2
      exit 1
    fi
    echo "fuzz: installing cargo-fuzz (once)"
    if ! cargo install --locked --quiet cargo-fuzz; then
      echo "fuzz: could not install cargo-fuzz" >&2
      exit 1
    fi
  fi
fi

SECS="${1:-30}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${TARGETS_ALL[@]}")

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  if [ "$CI_PASS" = 1 ]; then
    echo "fuzz: cargo +nightly fuzz does not run; no libFuzzer pass" >&2
    exit 1
  fi
  echo "cargo-fuzz or a nightly toolchain is missing (cargo install cargo-fuzz; rustup toolchain install nightly)." >&2
  echo "Falling back to the seed replay." >&2
  replay
  exit
fi

seed() { # target dir files...
  local dir="fuzz/corpus/$1"; shift
  mkdir -p "$dir"
  for f in "$@"; do
    [ -f "$f" ] || continue
    cp "$f" "$dir/seed-$(sha1sum "$f" | cut -c1-16)"
  done
}
OUTPUTS=(tests/fixtures/cli/*.jsonl tests/fixtures/cli/*.json)
seed jsonl "${OUTPUTS[@]}"
seed salvage "${OUTPUTS[@]}"
mkdir -p fuzz/corpus/stream
for f in "${OUTPUTS[@]}"; do # 8 chunk-size control bytes, then the text
  [ -f "$f" ] || continue
  { printf '\003\007\013\001\020\005\002\004'; cat "$f"; } >"fuzz/corpus/stream/seed-$(sha1sum "$f" | cut -c1-16)"
done
seed config prompts/*.toml tests/fixtures/prompts/good/* tests/fixtures/prompts/bad/*

# Copy every crash libFuzzer saved for target $1 into the committed
# regressions (named by content, so a second copy is a no-op) and name it.
keep_crashes() {
  local t=$1 f dest
  for f in "fuzz/artifacts/$t"/*; do
    [ -f "$f" ] || continue
    case "$(basename "$f")" in crash-* | leak-* | timeout-* | oom-* | slow-unit-*) ;; *) continue ;; esac
    mkdir -p "fuzz/regressions/$t"
    dest="fuzz/regressions/$t/$(basename "$f" | cut -d- -f1)-$(sha1sum "$f" | cut -c1-16)"
    if [ ! -f "$dest" ]; then
      cp "$f" "$dest"
      echo "!! $t: kept $f as $dest; commit it (git add $dest): the seed replay runs it on every clone"
    fi
  done
}

status=0
for t in "${TARGETS[@]}"; do
  echo "== $t for ${SECS}s"
  mkdir -p "fuzz/artifacts/$t"
  log="fuzz/artifacts/$t.log"
  if ! cargo +nightly fuzz run --features libfuzzer --fuzz-dir fuzz --target-dir "$FUZZ_TARGET_DIR" "$t" "fuzz/corpus/$t" -- \
      -max_total_time="$SECS" -max_len=65536 -timeout="$TIMEOUT" -rss_limit_mb=2048 \
      -artifact_prefix="fuzz/artifacts/$t/" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "!! $t found a crash: see fuzz/artifacts/$t/"
    keep_crashes "$t"
    status=1
  else
    # libFuzzer's last line: "Done N runs in S second(s)"; the full log stays.
    echo "$t: $(grep -E '^Done [0-9]+ runs' "$log" | tail -n 1) (log: $log)"
  fi
done
exit $status
