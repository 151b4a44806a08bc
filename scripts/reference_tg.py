#!/usr/bin/env python3
"""TrustGraph's prompt service, ported for cutline's differential tests.

    reference_tg.py render    < cases.json   # [{"template", "vars"}] -> [rendered | {"error"}]
    reference_tg.py load FILE                # a bundle file -> what PromptManager.load_config keeps

`render` renders each case with ibis (`ibis.Template(t).render(vars)`), as
`PromptManager.render` does. `load` reads the `prompt` config type of a
file in any shape cutline reads (a `tg-show-config` dump with a `Version:`
line, a config-store bundle, a configurator `config.json`), turns a
configurator's raw values into what the template seeder stores
(`json.dumps` of each value), and runs `PromptManager.load_config`
(trustgraph-flow/trustgraph/template/prompt_manager.py), printing
{"system", "ids", "prompts": {id: {"prompt", "response-type", "schema"}},
 "raw": {key: stored string}}.
"""

import json
import sys

import ibis


def render(cases):
    out = []
    for case in cases:
        try:
            out.append(ibis.Template(case["template"]).render(case["vars"]))
        except Exception as e:  # noqa: BLE001 - reported, not raised
            out.append({"error": f"{type(e).__name__}: {e}"})
    return out


def load_config(config):
    """PromptManager.load_config, minus the ibis compile of each template."""
    try:
        system = json.loads(config["system"])
    except (KeyError, TypeError, json.JSONDecodeError):
        system = "Be helpful."
    try:
        ix = json.loads(config["template-index"])
    except (KeyError, TypeError, json.JSONDecodeError):
        ix = []
    prompts = {}
    for k in ix:
        data = json.loads(config[f"template.{k}"])
        prompts[k] = {
            "prompt": data.get("prompt"),
            "response-type": data.get("response-type", "text"),
            "schema": data.get("schema", None),
        }
        ibis.Template(prompts[k]["prompt"])
    ibis.Template(system)
    return system, ix, prompts


def stored(path):
    with open(path) as f:
        text = f.read()
    first, _, rest = text.partition("\n")
    if first.startswith("Version:"):
        text = rest
    root = json.loads(text)
    bundle = root.get("prompt", root) if isinstance(root.get("prompt"), dict) else root
    encoded = all(isinstance(v, str) for k, v in bundle.items() if k.startswith("template"))
    if encoded:
        return bundle
    # The template seeder: json.dumps of every value.
    return {k: json.dumps(v) for k, v in bundle.items()}


def main():
    if sys.argv[1] == "render":
        json.dump(render(json.load(sys.stdin)), sys.stdout)
    elif sys.argv[1] == "load":
        config = stored(sys.argv[2])
        system, ix, prompts = load_config(config)
        json.dump({"system": system, "ids": ix, "prompts": prompts, "raw": config}, sys.stdout)
    else:
        sys.exit(f"unknown command {sys.argv[1]!r}")


if __name__ == "__main__":
    main()
