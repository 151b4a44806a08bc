#!/usr/bin/env bash
# Every check cutline has: formatting, lints (pedantic, warnings are errors)
# and every test. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (pedantic, -D warnings)"
cargo clippy --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --locked --all-targets
cargo test --locked --doc
