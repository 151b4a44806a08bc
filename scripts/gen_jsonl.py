#!/usr/bin/env python3
"""Generate model-like JSONL extraction outputs for the reference comparison.

    gen_jsonl.py OUT_DIR [--lines 1000,10000] [--seed 6]
    gen_jsonl.py --big PATH --bytes 1073741824     # one huge file, streamed

Writes OUT_DIR/schema.json (the per-object schema: `type` discriminated union
of `definition` and `relationship` objects) and OUT_DIR/out-<N>.jsonl. Each
file mixes what real models emit: valid objects (some with non-ASCII text and
escapes), lines that are not JSON (prose, single quotes, trailing commas,
array brackets), JSON that the schema rejects (missing keys, wrong types,
unknown `type`, extra keys), blank lines, a leading code fence, and a last
line cut mid-object as a token limit does. Deterministic for a given seed.
"""

import argparse
import json
import os
import random
import sys

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "oneOf": [
        {
            "properties": {
                "type": {"const": "definition"},
                "entity": {"type": "string", "minLength": 1},
                "definition": {"type": "string", "minLength": 1},
            },
            "required": ["type", "entity", "definition"],
            "additionalProperties": False,
        },
        {
            "properties": {
                "type": {"const": "relationship"},
                "subject": {"type": "string", "minLength": 1},
                "predicate": {"type": "string", "minLength": 1},
                "object": {"type": "string", "minLength": 1},
                "object-entity": {"type": "boolean"},
            },
            "required": ["type", "subject", "predicate", "object", "object-entity"],
            "additionalProperties": False,
        },
    ],
}

WORDS = (
    "bridge council library river school parking fee summit energy forest panel "
    "club chair ride hospital course racks bakery jersey delegate flood drought "
    "公園 清掃 図書室 運動会 café naïve Zürich 東京 \"quoted\" back\\slash tab\t"
).split(" ")


def phrase(rng, n_lo=2, n_hi=9):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(n_lo, n_hi)))


def valid(rng):
    if rng.random() < 0.55:
        obj = {"type": "definition", "entity": phrase(rng, 1, 3), "definition": phrase(rng, 5, 14)}
    else:
        obj = {
            "type": "relationship",
            "subject": phrase(rng, 1, 3),
            "predicate": phrase(rng, 1, 2),
            "object": phrase(rng, 1, 4),
            "object-entity": rng.random() < 0.5,
        }
    return json.dumps(obj, ensure_ascii=rng.random() < 0.3)


def schema_invalid(rng):
    obj = json.loads(valid(rng))
    kind = rng.randrange(5)
    if kind == 0:
        obj.pop(rng.choice([k for k in obj if k != "type"]))
    elif kind == 1:
        obj["type"] = rng.choice(["entity", "attribute", "Definition"])
    elif kind == 2:
        obj["extra"] = phrase(rng, 1, 2)
    elif kind == 3:
        k = rng.choice([k for k in obj if k != "type"])
        obj[k] = rng.choice([42, None, [], ""])
    else:
        return json.dumps([obj])  # JSON, but not an object
    return json.dumps(obj, ensure_ascii=False)


def invalid_json(rng):
    v = valid(rng)
    kind = rng.randrange(6)
    if kind == 0:
        return v + ","  # array habit
    if kind == 1:
        return v.replace('"', "'")
    if kind == 2:
        return "Here are the extracted " + phrase(rng, 1, 3) + ":"
    if kind == 3:
        return v[: len(v) // 2]  # cut inside a line that is not the last
    if kind == 4:
        return rng.choice(["[", "]", "{"])
    return v[:-1] + ',}'  # trailing comma inside the object


def lines(rng, n):
    out = []
    out.append("```json")  # a model habit the reference strips
    for _ in range(n - 2):
        r = rng.random()
        if r < 0.80:
            out.append(valid(rng))
        elif r < 0.88:
            out.append(invalid_json(rng))
        elif r < 0.96:
            out.append(schema_invalid(rng))
        else:
            out.append(rng.choice(["", "   ", "\t"]))
    last = valid(rng)
    out.append(last[: rng.randint(1, len(last) - 2)])  # cut by the token limit
    return out


def write_big(path, target, seed):
    rng = random.Random(seed)
    pool = [l for l in lines(rng, 4000)[1:-1]]
    written = 0
    with open(path, "w", encoding="utf-8") as f:
        while written < target:
            chunk = "\n".join(pool) + "\n"
            f.write(chunk)
            written += len(chunk.encode("utf-8"))
        f.write(valid(rng)[:20])
    return written


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--lines", default="1000,10000")
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--big")
    ap.add_argument("--bytes", type=int, default=1 << 30)
    a = ap.parse_args()
    if a.big:
        n = write_big(a.big, a.bytes, a.seed)
        print(f"{a.big}: {n} bytes", file=sys.stderr)
        return
    if not a.out_dir:
        ap.error("OUT_DIR or --big")
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "schema.json"), "w") as f:
        json.dump(SCHEMA, f, indent=2)
    for n in (int(x) for x in a.lines.split(",")):
        rng = random.Random(a.seed * 1_000_003 + n)
        path = os.path.join(a.out_dir, f"out-{n}.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines(rng, n)))
        print(path)


if __name__ == "__main__":
    main()
