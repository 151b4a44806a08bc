#!/usr/bin/env python3
"""Record a real model output as a test fixture.

Renders a bundled prompt with one of its sample inputs, sends it to a running
llama-server's native /completion endpoint with `"stream": true`, and writes

  <out>/<prompt-id>-<n_predict>.txt          the raw `content`, pieces joined
  <out>/<prompt-id>-<n_predict>.pieces.json  one string per SSE `data:` event,
                                             in order: one event per token, but
                                             text that may start a stop string is
                                             held back (an empty piece) and sent
                                             with the next event
  <out>/<prompt-id>-<n_predict>.meta.json    request, finish (stop_type,
                                             stopping_word, token counts) and
                                             the exact prompt text sent

Rendering is the simple one the fixtures were recorded with: the system text
(if any) + "\\n\\n" + the prompt, with `{{text}}` and every `{{variable}}` of
the prompt's [variables] (or the input's own) replaced by plain substitution.
The request is greedy and uncached: temperature 0, cache_prompt false.

Standard library only (Python 3.11+ for tomllib). Example:

  scripts/record-fixture.py --url http://127.0.0.1:8091 \\
      --prompt prompts/extract-definitions.toml --n-predict 512 --n-predict 48

With --check, each output is also requested without streaming and compared
with the joined pieces (exit 1 on a difference). With --print, nothing is
written: the content is printed (for tuning prompts).
"""

import argparse
import json
import re
import sys
import tomllib
import urllib.request
from pathlib import Path


def render(p: dict, inp: dict) -> str:
    variables = dict(p.get("variables", {}))
    variables.update({k: v for k, v in inp.items() if k != "name"})

    def sub(template: str) -> str:
        def one(m: re.Match) -> str:
            name = m.group(1)
            if name not in variables:
                sys.exit(f"{p['id']}: template uses {{{{{name}}}}} but no value is given")
            return str(variables[name])

        return re.sub(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", one, template)

    prompt = sub(p["prompt"])
    system = sub(p.get("system", ""))
    return f"{system}\n\n{prompt}" if system else prompt


def pick_input(p: dict, which: str | None) -> dict:
    inputs = p.get("input", [])
    if not inputs:
        sys.exit(f"{p['id']}: no [[input]]")
    if which is None:
        return inputs[0]
    if which.isdigit():
        return inputs[int(which)]
    for i in inputs:
        if i["name"] == which:
            return i
    sys.exit(f"{p['id']}: no input named {which!r} (have: {', '.join(i['name'] for i in inputs)})")


def request(url: str, body: dict, timeout: float):
    req = urllib.request.Request(
        url.rstrip("/") + "/completion",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    return urllib.request.urlopen(req, timeout=timeout)


def complete_stream(url: str, body: dict, timeout: float) -> tuple[list[str], dict]:
    """The content of every SSE event, and the final event (minus content)."""
    pieces: list[str] = []
    final: dict = {}
    with request(url, {**body, "stream": True}, timeout) as r:
        for raw in r:
            line = raw.decode("utf-8").rstrip("\r\n")
            if not line.startswith("data:"):
                continue
            data = line[len("data:"):].strip()
            if data == "[DONE]":
                break
            ev = json.loads(data)
            if ev.get("stop"):
                if ev.get("content"):
                    pieces.append(ev["content"])
                final = {k: v for k, v in ev.items() if k != "content"}
                break
            pieces.append(ev.get("content", ""))
    return pieces, final


def complete(url: str, body: dict, timeout: float) -> dict:
    with request(url, {**body, "stream": False}, timeout) as r:
        return json.loads(r.read())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True, help="llama-server base URL, e.g. http://127.0.0.1:8091")
    ap.add_argument("--prompt", required=True, type=Path, help="a prompts/*.toml file")
    ap.add_argument("--input", help="sample input name or index (default: the first)")
    ap.add_argument("--n-predict", type=int, action="append", required=True, help="max tokens; repeatable")
    ap.add_argument("--out", type=Path, default=Path("tests/fixtures/output"))
    ap.add_argument("--check", action="store_true", help="compare with a non-streamed request")
    ap.add_argument("--print", action="store_true", help="print the content instead of writing files")
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()

    p = tomllib.loads(a.prompt.read_text(encoding="utf-8"))
    inp = pick_input(p, a.input)
    text = render(p, inp)
    rc = 0
    for n in a.n_predict:
        body = {
            "prompt": text,
            "n_predict": n,
            "temperature": 0,
            "cache_prompt": False,
            "stop": p.get("stop", []),
        }
        pieces, final = complete_stream(a.url, body, a.timeout)
        content = "".join(pieces)
        if a.check:
            plain = complete(a.url, body, a.timeout)["content"]
            if plain != content:
                print(f"MISMATCH {p['id']} n={n}: streamed != non-streamed", file=sys.stderr)
                print(f"  streamed: {content!r}\n  plain:    {plain!r}", file=sys.stderr)
                rc = 1
        finish = {k: final.get(k) for k in ("stop_type", "stopping_word", "tokens_predicted", "tokens_evaluated",
                                            "truncated", "model")}
        if a.print:
            print(f"--- {p['id']} [{inp['name']}] n_predict={n} {finish}")
            print(content)
            continue
        a.out.mkdir(parents=True, exist_ok=True)
        stem = a.out / f"{p['id']}-{n}"
        Path(f"{stem}.txt").write_text(content, encoding="utf-8")
        Path(f"{stem}.pieces.json").write_text(json.dumps(pieces, ensure_ascii=False, indent=0) + "\n",
                                              encoding="utf-8")
        meta = {
            "prompt_id": p["id"],
            "input": inp["name"],
            "request": {k: v for k, v in body.items() if k != "prompt"} | {"stream": True},
            "finish": finish,
            "pieces": len(pieces),
            "prompt": text,
        }
        Path(f"{stem}.meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {stem}.txt ({len(pieces)} pieces, stop_type={finish['stop_type']})")
    return rc


if __name__ == "__main__":
    sys.exit(main())
