#!/usr/bin/env python3
"""Generate a large cutline session through cutline itself, offline.

The session is the one `cutline eval` records, not a hand-written file:
`--batch-file` writes the OpenAI batch input of a prompt pair over N inputs
at two limits, this script answers every line the way a model would (items
from the input, a limit under 100 cuts the answer), and `--batch-results`
records those answers through the same path as a streamed run.

    python3 scripts/gen-session.py DIR --runs 100000 [--cutline BIN]

DIR gets cutline.toml, inputs.jsonl and sessions/big.jsonl. The runs are
split evenly: RUNS / 4 inputs x 2 prompts (the pair) x 2 limits (64, none).
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEY_ENV = "CUTLINE_GEN_SESSION_KEY"
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def answer(body):
    """Items from the input's length; a limit under 100 cuts the answer."""
    user = body["messages"][-1]["content"]
    n = len(user) % 4 + 2
    items = [
        json.dumps({"entity": f"term{i}-{len(user)}", "definition": f"meaning {i} of {WORDS[i % 12]}"})
        for i in range(n)
    ]
    as_array = "JSON array" in user
    text = "[" + ", ".join(items) + "]" if as_array else "\n".join(items)
    cut = (body.get("max_completion_tokens") or 10**9) < 100
    if cut:
        text = text[: len(text) * 2 // 3]
    return text, ("length" if cut else "stop"), (64 if cut else 90)


def cutline(bin_path, d, *args):
    env = dict(os.environ, CUTLINE_CONFIG=str(d / "cutline.toml"), CUTLINE_LEARNED_FILE="")
    env[KEY_ENV] = "sk-gen-session-0000"
    cmd = [bin_path, "--prompts", str(ROOT / "prompts"), "--sessions", "sessions", *args]
    done = subprocess.run(cmd, cwd=d, env=env, stdout=subprocess.DEVNULL)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {done.returncode}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--cutline", default=str(ROOT / "target/release/cutline"))
    a = ap.parse_args()
    d = a.dir
    (d / "sessions").mkdir(parents=True, exist_ok=True)
    (d / "cutline.toml").write_text(
        '[[provider]]\nname = "gpt"\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        f'model = "gpt-4.1-mini"\napi_key_env = "{KEY_ENV}"\n'
    )
    inputs = max(a.runs // 4, 1)
    with open(d / "inputs.jsonl", "w") as f:
        for i in range(inputs):
            text = f"Document {i}: " + " ".join(WORDS[(i + k) % 12] for k in range(i % 40))
            f.write(json.dumps({"id": f"doc{i}", "text": text}) + "\n")
    eval_args = [
        "eval", "--prompt", "extract-definitions", "--provider", "gpt",
        "--max-tokens", "64,none", "--inputs", "inputs.jsonl",
        "--session", "big", "--no-progress",
    ]
    cutline(a.cutline, d, *eval_args, "--batch-file", "batch-in.jsonl")
    with open(d / "batch-in.jsonl") as src, open(d / "batch-out.jsonl", "w") as dst:
        for line in src:
            req = json.loads(line)
            text, finish, out = answer(req["body"])
            body = {
                "id": "chatcmpl-gen", "object": "chat.completion", "model": "gpt-4.1-mini",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": finish}],
                "usage": {"prompt_tokens": 300, "completion_tokens": out},
            }
            dst.write(json.dumps({"id": "r", "custom_id": req["custom_id"], "error": None,
                                  "response": {"status_code": 200, "request_id": "q", "body": body}}) + "\n")
    cutline(a.cutline, d, *eval_args, "--batch-results", "batch-out.jsonl")
    size = (d / "sessions/big.jsonl").stat().st_size
    print(f"{d / 'sessions/big.jsonl'}: {size / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
