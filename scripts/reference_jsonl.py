#!/usr/bin/env python3
"""The TrustGraph reference for `response-type: jsonl`, as its spec describes it.

    reference_jsonl.py FILE SCHEMA.json          # prints each kept object as one JSON line
    reference_jsonl.py FILE SCHEMA.json --once   # the validator built once (not the spec's code)

`PromptManager.parse_jsonl` + the validation loop of `invoke`:

1. `text.strip()`;
2. a leading fence: `re.sub(r'^```(?:json|jsonl)?\\s*\\n?', '', text)` when the
   text starts with ```;
3. a trailing fence: the last three characters removed when it ends with ```;
4. `split('\\n')`, each line `strip()`ped, empty lines and lines starting with
   ``` skipped, `json.loads` per line (errors skipped);
5. `jsonschema.validate(instance=obj, schema=schema)` per object, the
   valid ones kept.

`validate` is called per object exactly as the spec's code does it (it
re-checks the schema and builds a validator each call); that is the cost the
reference pays. `--once` builds the validator once and reuses it, a fairer
Python baseline that the spec's code does not use; the benchmark reports
both. Output: `json.dumps(obj, sort_keys=True, ensure_ascii=False)`
per kept object, so it can be compared with cutline's items after the same
canonicalisation.
"""

import json
import re
import sys

from jsonschema import validate, validators

FENCE = re.compile(r"^```(?:json|jsonl)?\s*\n?")


def parse_jsonl(text):
    results = []
    text = text.strip()
    if text.startswith("```"):
        text = FENCE.sub("", text, count=1)
    if text.endswith("```"):
        text = text[:-3]
    for line in text.strip().split("\n"):
        line = line.strip()
        if not line:
            continue
        if line.startswith("```"):
            continue
        try:
            results.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return results


def main():
    path, schema_path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    check = lambda obj: validate(instance=obj, schema=schema)  # noqa: E731
    if "--once" in sys.argv[3:]:
        cls = validators.validator_for(schema)
        cls.check_schema(schema)
        check = cls(schema).validate
    validated = []
    for obj in parse_jsonl(text):
        try:
            check(obj)
            validated.append(obj)
        except Exception:  # noqa: BLE001 - the reference catches everything
            pass
    out = sys.stdout
    for obj in validated:
        out.write(json.dumps(obj, sort_keys=True, ensure_ascii=False))
        out.write("\n")


if __name__ == "__main__":
    main()
