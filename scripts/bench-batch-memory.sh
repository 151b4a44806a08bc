#!/usr/bin/env bash
# Peak memory of `eval --batch-file` and `eval --batch-results` against the
# number of runs (issue 37): both should grow with the runs' keys only, not
# with their requests or answers.
#
#   scripts/bench-batch-memory.sh [--bin PATH] N...      (default N: 10000 40000)
#
# For each N: N inputs (one JSONL file), the bundled `extract-definitions`
# prompt alone (`--no-twins`) at one limit, so N runs; `--batch-file` writes
# their OpenAI batch lines (nothing is sent: the provider's URL is never
# called), an answer per line is made (three items each), and
# `--batch-results` records them into a fresh session. Prints the peak RSS
# (GNU time's %M) and wall time of each. Uses target/release/cutline
# (built if missing) unless --bin names another.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=""
SIZES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN="$2"; shift 2 ;;
    *) SIZES+=("$1"); shift ;;
  esac
done
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000 40000)
if [ -z "$BIN" ]; then
  cargo build --release --quiet
  BIN="$ROOT/target/release/cutline"
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
printf '[[provider]]\nname = "gpt"\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "gpt-4.1-mini"\napi_key_env = "CUTLINE_BENCH_KEY"\n' > cutline.toml
export CUTLINE_CONFIG="$WORK/cutline.toml" CUTLINE_LEARNED_FILE="" CUTLINE_BENCH_KEY=sk-bench
echo "runs | --batch-file peak RSS, wall | --batch-results peak RSS, wall"
for n in "${SIZES[@]}"; do
  rm -rf sessions in.jsonl out.jsonl
  python3 - "$n" <<'PY'
import json, sys
n = int(sys.argv[1])
with open("inputs.jsonl", "w") as f:
    for i in range(n):
        f.write(json.dumps({"id": f"doc{i}", "text": f"Document {i}: " + "word " * (i % 13)}) + "\n")
PY
  eval_args=(--prompts "$ROOT/prompts" --sessions sessions eval --prompt extract-definitions --provider gpt
             --max-tokens 64 --no-twins --inputs inputs.jsonl --session bench --no-progress)
  file=$( { /usr/bin/time -f '%M KiB, %e s' "$BIN" "${eval_args[@]}" --batch-file in.jsonl >/dev/null; } 2>&1 | tail -1)
  python3 - <<'PY'
import json
text = '{"entity": "Document", "definition": "a text"}\n' * 3
with open("out.jsonl", "w") as out:
    for line in open("in.jsonl"):
        r = json.loads(line)
        body = {"id": "c", "object": "chat.completion", "model": "gpt-4.1-mini",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "[\n" + text + "]"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 300, "completion_tokens": 40}}
        out.write(json.dumps({"id": "r", "custom_id": r["custom_id"], "response": {"status_code": 200, "request_id": "q", "body": body}, "error": None}) + "\n")
PY
  results=$( { /usr/bin/time -f '%M KiB, %e s' "$BIN" "${eval_args[@]}" --batch-results out.jsonl >/dev/null; } 2>&1 | tail -1)
  echo "$n | $file | $results"
done
