#!/usr/bin/env bash
# Record sessions/migrations.jsonl: the local model (Gemma 3 270M, installed
# by `cutline setup local` / scripts/setup-local.sh) on every sample input of
# the six bundled JSON prompts' migrations, exactly as `cutline migrate <id>`
# writes them by default (id <id>-jsonl-2: the bundled twin has <id>-jsonl),
# at 768 tokens like sessions/demo.jsonl. Replay matches recordings on the
# rendered request, so these make a bundled prompt's migration replayable
# offline; tests/first_hour.rs fails when `migrate` would render one
# differently, and this script records them again. Real answers only: run
# it on the model, never edit the file by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CUTLINE:-target/release/cutline}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r prompts "$work/prompts"
mkdir "$work/sessions"
ids=()
for p in agent-kg-extract extract-definitions extract-relationships extract-rows extract-topics extract-with-ontologies; do
    "$BIN" --prompts "$work/prompts" migrate "$p" --write "$work/prompts/$p-jsonl-2.toml" --output json >/dev/null
    ids+=("$p-jsonl-2")
done
"$BIN" --prompts "$work/prompts" --sessions "$work/sessions" eval --prompt "$(IFS=,; echo "${ids[*]}")" \
    --no-twins --provider local --max-tokens 768 --session migrations --no-progress --output pretty
cp "$work/sessions/migrations.jsonl" sessions/migrations.jsonl
