#!/usr/bin/env python3
"""What TrustGraph's released prompt manager makes of responses and templates.

    python reference_tg_service.py < cases.json > verdicts.json
    python reference_tg_service.py --limits     # the measured nesting limits

Run with the venv of scripts/setup-tg-reference.sh: it imports the real
`trustgraph.template.prompt_manager` from the installed trustgraph-flow
sdist; nothing of TrustGraph's code is copied here. Only `trustgraph.base`
is stubbed (a module with `is_strict_mode_compatible`, which decides
whether the LLM call asks for structured output and never judges a
response; the real one needs Pulsar).

Each case is one of
  {"kind": "jsonl"|"json"|"text", "response": str, "schema"?: any}
      -> PromptManager.load_config({"template.p": json.dumps({"prompt": "x",
         "response-type": kind, "schema": schema})}), then
         `await invoke("p", {}, llm)` where llm returns `response`.
         Out: {"items": what invoke returned (null when it raised),
               "raised": null | {"type", "message"},
               "logs": [[level, message], ...] from the prompt manager's logger}
  {"kind": "render", "template": str, "vars": obj, "system"?: str}
      -> load_config with that template (and system), then render("p", vars).
         Out: {"rendered"} | {"load_error"} | {"render_error"}, each error as
         "Type: message".
  {"kind": "load", "config": {key: JSON-encoded string}, "release"?: "2.8.11"}
      -> load_config(config), as a config store holding that bundle, by the
         installed release or by 2.8.11's loader (which reads only
         `template-index`; its prompt_manager.py is unpacked beside the venv).
         Out: {"ids", "system", "prompts": {id: {"prompt", "response-type",
         "schema"}}} | {"load_error"}.

Stack: invoke runs under asyncio.run in the main thread with Python's default
recursion limit (1000) and thread stack, as TrustGraph's service process
runs it (trustgraph-flow and trustgraph-base never call setrecursionlimit or
move the prompt manager to a thread). The service calls invoke from its
consumer's handler, some frames deeper than here; `--limits` measures the
depths at which this harness first raises, at the corpus's stack depth (see
README and src/output/tg.rs).
"""

import asyncio
import json
import logging
import math
import sys
import types

stub = types.ModuleType("trustgraph.base")
stub.is_strict_mode_compatible = lambda schema: False
sys.modules["trustgraph.base"] = stub

from trustgraph.template import prompt_manager as pm  # noqa: E402

LOG = pm.logger


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.records = []

    def emit(self, record):
        if record.levelno >= logging.WARNING:
            self.records.append([record.levelname.lower(), record.getMessage()])


CAPTURE = Capture()
LOG.addHandler(CAPTURE)
LOG.setLevel(logging.DEBUG)
LOG.propagate = False


def text(s):
    """`s` as valid UTF-8: a lone surrogate (from a lone surrogate escape in a
    response) as U+FFFD, for log lines and exception messages."""
    return "".join("\ufffd" if 0xD800 <= ord(c) < 0xE000 else c for c in s)


def plain(value):
    """The returned value as JSON: non-finite floats as strings, so nothing
    is lost in the comparison (cutline writes them as null by design)."""
    if isinstance(value, float) and not math.isfinite(value):
        return {"$py": repr(value)}
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return {"$py_str": "".join("\ufffd" if 0xD800 <= ord(c) < 0xE000 else c for c in value)}
        return value
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {text(k): plain(v) for k, v in value.items()}
    return value


def manager(entry, system=None):
    m = pm.PromptManager()
    config = {"template.p": json.dumps(entry)}
    if system is not None:
        config["system"] = json.dumps(system)
    m.load_config(config)
    return m


async def invoke(m, response):
    async def llm(**_):
        return response

    return await m.invoke("p", {}, llm)


def run_response(case):
    entry = {"prompt": "x", "response-type": case["kind"]}
    if "schema" in case:
        entry["schema"] = case["schema"]
    m = manager(entry)
    CAPTURE.records = []
    out = {"items": None, "raised": None}
    try:
        out["items"] = asyncio.run(invoke(m, case["response"]))
    except BaseException as e:  # noqa: BLE001 - the verdict
        try:
            message = str(e)
        except BaseException:  # noqa: BLE001
            message = "<str failed>"
        out["raised"] = {"type": type(e).__name__, "message": message[:300]}
    out["logs"] = [[lvl, msg[:300]] for lvl, msg in CAPTURE.records]
    return out


def run_render(case):
    try:
        m = manager({"prompt": case["template"], "response-type": "text"}, case.get("system"))
    except BaseException as e:  # noqa: BLE001
        return {"load_error": f"{type(e).__name__}: {e}"}
    try:
        return {"rendered": m.render("p", case.get("vars", {}))}
    except BaseException as e:  # noqa: BLE001
        return {"render_error": f"{type(e).__name__}: {e}"}


OLD_RELEASE = "2.8.11"


def old_prompt_manager():
    """trustgraph-flow 2.8.11's prompt_manager.py, unpacked beside the venv by
    setup-tg-reference.sh: the last loader that reads only `template-index`."""
    import importlib.util
    import pathlib

    path = (pathlib.Path(sys.prefix).parent / "old" / f"trustgraph_flow-{OLD_RELEASE}"
            / "trustgraph" / "template" / "prompt_manager.py")
    spec = importlib.util.spec_from_file_location("prompt_manager_" + OLD_RELEASE.replace(".", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_load(case):
    """What load_config keeps of a config-store bundle (every value a JSON
    string), in the current release or, with "release": "2.8.11", the old one."""
    module = old_prompt_manager() if case.get("release") == OLD_RELEASE else pm
    m = module.PromptManager()
    try:
        m.load_config(case["config"])
    except BaseException as e:  # noqa: BLE001
        return {"load_error": f"{type(e).__name__}: {e}"}
    prompts = {
        k: {"prompt": v.template, "response-type": v.response_type, "schema": v.schema}
        for k, v in m.prompts.items()
    }
    return {"ids": list(m.prompts), "system": m.config.system_template, "prompts": prompts}


RUNNERS = {"render": run_render, "load": run_load}


def verdicts(cases):
    """Each case's verdict, all made at the same stack depth."""
    return [RUNNERS.get(c["kind"], run_response)(c) for c in cases]


def corpus():
    write(verdicts(json.load(sys.stdin)))


def limits():
    """The smallest n at which invoke raises RecursionError on each shape,
    by bisection; each probe goes through `verdicts` from a function called
    by `main`, as `corpus` does, so the stack is as deep as for the corpus."""
    shapes = {
        "json_loads_arrays": (lambda n: "[" * n + "]" * n, "jsonl", None, 200000),
        "json_loads_objects": (lambda n: '{"a": ' * n + "1" + "}" * n, "jsonl", None, 200000),
        "decode_error_cut_arrays": (lambda n: "[" * n, "jsonl", None, 200000),
        "decode_error_arrays": (lambda n: "[" * n + "x", "jsonl", None, 200000),
        "warning_arrays": (lambda n: "[" * n + "]" * n, "jsonl", {"type": "object"}, 5000),
        "warning_objects": (lambda n: '{"a": ' * n + "1" + "}" * n, "jsonl", {"type": "array"}, 5000),
        "strict_arrays": (lambda n: "[" * n + "]" * n, "json", None, 200000),
        "strict_cut_arrays": (lambda n: "[" * n, "json", None, 200000),
        "strict_warning_arrays": (lambda n: "[" * n + "]" * n, "json", {"type": "object"}, 5000),
    }
    out = {"python": sys.version.split()[0], "recursion_limit": sys.getrecursionlimit(),
           "int_max_str_digits": sys.get_int_max_str_digits()}
    for name, (make, kind, schema, hi) in shapes.items():
        lo = 1
        case = lambda n: {"kind": kind, "response": make(n), **({"schema": schema} if schema else {})}  # noqa: E731
        if (verdicts([case(hi)])[0]["raised"] or {}).get("type") != "RecursionError":
            out[name] = None
            continue
        while lo < hi:
            mid = (lo + hi) // 2
            if (verdicts([case(mid)])[0]["raised"] or {}).get("type") == "RecursionError":
                hi = mid
            else:
                lo = mid + 1
        out[name] = lo
    json.dump(out, sys.stdout)


def write(out):
    """Convert and print on a thread with a deep stack and recursion limit:
    the verdicts were made in the main thread at the default limit, and a
    kept value nested 990 deep must still be written out."""
    import threading

    def go():
        sys.setrecursionlimit(1_000_000)
        for o in out:
            if o.get("items") is not None:
                o["items"] = plain(o["items"])
            if o.get("raised"):
                o["raised"]["message"] = text(o["raised"]["message"])
            if "logs" in o:
                o["logs"] = [[lvl, text(msg)] for lvl, msg in o["logs"]]
        # dumps, not dump: json.dump's pure-Python encoder is quadratic in
        # the nesting depth.
        sys.stdout.write(json.dumps(out))

    threading.stack_size(1 << 29)
    t = threading.Thread(target=go)
    t.start()
    t.join()


def main():
    if sys.argv[1:] == ["--limits"]:
        limits()
    else:
        corpus()


if __name__ == "__main__":
    main()
