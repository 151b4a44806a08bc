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
# Without them the script falls back to the seed replay: the same checks run
# as `cargo test` in fuzz/ on stable, over every seed, the saved corpus and
# artifacts, and bounded mutations of each. A crash found by libFuzzer is
# saved in fuzz/artifacts/<target>/, which the replay then runs every time:
# that is the regression test.
#
# --ci is the brief libFuzzer pass scripts/test.sh runs after the replay:
# when a nightly toolchain is installed it installs cargo-fuzz if missing
# (`cargo install --locked`, once: a second run finds it), then fuzzes each
# target for a few seconds; without nightly it says it skipped and exits 0.
# CUTLINE_SKIP_FUZZ=1 skips it; CUTLINE_SKIP_FUZZ_INSTALL=1 skips only the
# install (and so the run, when cargo-fuzz is missing). The libFuzzer builds
# go to the user cache ($CACHE/fuzz-target), so a fresh clone (CI) rebuilds
# only cutline itself, not every dependency with the sanitizer.
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
if [ "${1:-}" = "--ci" ]; then
  shift
  set -- "${1:-12}"
  TIMEOUT=60 # a loaded CI machine is slow; a hang is still caught
  if [ "${CUTLINE_SKIP_FUZZ:-0}" = 1 ]; then
    echo "fuzz: skipped (CUTLINE_SKIP_FUZZ=1)"
    exit 0
  fi
  # Asked of rustup, not `cargo +nightly`, which may try to install it.
  if ! { command -v rustup >/dev/null && rustup toolchain list | grep -q '^nightly'; }; then
    echo "fuzz: skipped, no nightly toolchain (rustup toolchain install nightly to run it); the seed replay ran on stable"
    exit 0
  fi
  if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    if [ "${CUTLINE_SKIP_FUZZ_INSTALL:-0}" = 1 ]; then
      echo "fuzz: skipped, cargo-fuzz missing and CUTLINE_SKIP_FUZZ_INSTALL=1"
      exit 0
    fi
    echo "fuzz: installing cargo-fuzz (once)"
    cargo install --locked --quiet cargo-fuzz
  fi
fi

SECS="${1:-30}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${TARGETS_ALL[@]}")

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
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
  { printf '\003\007\013\001\020\005\002\004'; cat "$f"; } >"fuzz/corpus/stream/seed-$(sha1sum "$f" | cut -c1-16)"
done
seed config prompts/*.toml tests/fixtures/prompts/good/* tests/fixtures/prompts/bad/*

status=0
for t in "${TARGETS[@]}"; do
  echo "== $t for ${SECS}s"
  mkdir -p "fuzz/artifacts/$t"
  log="fuzz/artifacts/$t.log"
  if ! cargo +nightly fuzz run --features libfuzzer --fuzz-dir fuzz --target-dir "$FUZZ_TARGET_DIR" "$t" "fuzz/corpus/$t" -- \
      -max_total_time="$SECS" -max_len=65536 -timeout="$TIMEOUT" -rss_limit_mb=2048 \
      -artifact_prefix="fuzz/artifacts/$t/" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "!! $t found a crash: see fuzz/artifacts/$t/ (now replayed by scripts/fuzz.sh --replay)"
    status=1
  else
    # libFuzzer's last line: "Done N runs in S second(s)"; the full log stays.
    echo "$t: $(grep -E '^Done [0-9]+ runs' "$log" | tail -n 1) (log: $log)"
  fi
done
exit $status
