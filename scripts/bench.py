#!/usr/bin/env python3
"""Regenerate BENCHMARKS.md's figures and print each beside what it claims.

    scripts/bench.py [--quick] [--bin PATH] [--only ID[,ID...]] [--list]

Each figure the document states is marked where it is stated with
`<!-- figure ID claim=VALUE -->` (VALUE is the number the text gives). This
script measures every marked figure it knows how to measure, in one run, the
peer beside cutline where the figure is a ratio, and prints a table: the
figure, what the document claims, what was measured now, and whether the
claim still holds (a ratio or speed within 10% of the claim or better, a
size within 10% or smaller). A marked figure this script cannot measure
yet, and a measured one the document does not mark, are listed as such, so
the document and the script cannot drift apart unseen.

--quick is what CI runs (scripts/test.sh): the debug binary cargo test
built, small inputs, one run each. Its numbers are printed, never asserted,
and are not comparable to the claims (a debug build, a loaded machine);
only the deterministic figures (dhat heap counts) are judged in it. The
exit status is 0 unless a measurement itself fails (a tool missing, a
command that errs): a slow figure never fails anything.

Full mode builds the release binary (and the criterion benches for the
in-process figures) and takes several minutes: run it on a quiet machine
and copy what it prints into BENCHMARKS.md with the date and machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cutline"
MARK = re.compile(r"<!--\s*figure\s+([a-z0-9-]+)\s+claim=([0-9.]+)\s*-->")


@dataclass
class Figure:
    """One figure: how it is measured and which way is better."""

    id: str
    what: str
    unit: str
    higher_is_better: bool
    measure: Callable[["Ctx"], float]
    deterministic: bool = False
    full_only: bool = False
    quick_size: str = ""


@dataclass
class Ctx:
    quick: bool
    bin: Path
    work: Path
    runs: int


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    """Run `cmd`; an error names the command and its stderr's tail."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {p.returncode}: {p.stderr[-600:]}")
    return p


def wall(cmd: list[str], runs: int) -> float:
    """Median wall seconds of `cmd` over `runs` runs (output discarded)."""
    times = []
    for _ in range(runs):
        s = time.perf_counter()
        # Discarded, not captured: reading and decoding a command's output
        # through a pipe is the script's time, not the command's.
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - s)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, cmd))} exited {p.returncode}: {p.stderr[-600:]}")
    return statistics.median(times)


def peak_kib(cmd: list[str], env: Optional[dict] = None) -> int:
    """Peak RSS of `cmd` in KiB, from GNU time."""
    p = run(["/usr/bin/time", "-f", "%M", *cmd], env=env)
    return int(p.stderr.strip().splitlines()[-1])


# ------------------------------------------------------------- the figures


def reference_venv() -> Path:
    """The reference's Python (jsonschema), made once as bench-reference.sh makes it."""
    venv = CACHE / "reference-venv"
    py = venv / "bin" / "python"
    if subprocess.run([py, "-c", "import jsonschema"], capture_output=True).returncode != 0:
        CACHE.mkdir(parents=True, exist_ok=True)
        run([sys.executable, "-m", "venv", str(venv)])
        run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", "jsonschema"])
    return py


def reference_ratio(once: bool) -> Callable[[Ctx], float]:
    """TrustGraph's own way (Python json.loads + jsonschema per line, or the
    validator built once) over `cutline parse`, whole processes, 10k lines
    (1k in quick form)."""

    def measure(ctx: Ctx) -> float:
        py = reference_venv()
        n = 1000 if ctx.quick else 10000
        out = ctx.work / "ref"
        if not (out / f"out-{n}.jsonl").exists():
            run([str(py), str(ROOT / "scripts/gen_jsonl.py"), str(out), "--lines", str(n)])
        f, schema = out / f"out-{n}.jsonl", out / "schema.json"
        ref = [str(py), str(ROOT / "scripts/reference_jsonl.py"), str(f), str(schema)] + (["--once"] if once else [])
        cut = [str(ctx.bin), "parse", str(f), "--as", "jsonl", "--schema", str(schema), "--output", "json"]
        return wall(ref, ctx.runs) / wall(cut, ctx.runs)

    return measure


def batch_memory(side: str, runs: int = 10000) -> Callable[[Ctx], float]:
    """Peak RSS in MiB of `eval --batch-file` or `--batch-results` at `runs`
    runs (2,000 in quick form), by scripts/bench-batch-memory.sh."""

    def measure(ctx: Ctx) -> float:
        n = 2000 if ctx.quick else runs
        key = f"batch-{n}"
        if key not in CACHED:
            p = run(["bash", str(ROOT / "scripts/bench-batch-memory.sh"), "--bin", str(ctx.bin), str(n)])
            row = p.stdout.strip().splitlines()[-1]
            cells = [c.strip() for c in row.split("|")]
            CACHED[key] = {"file": cells[1], "results": cells[2]}
        kib = int(CACHED[key][side].split()[0])
        return kib / 1024

    return measure


def sweep_dense_heap(schema: str) -> Callable[[Ctx], float]:
    """Heap the sweep holds on 200,000 `{"a":1}` (1.6 MB), as a multiple of
    the text, from tests/sweep_memory.rs (dhat: the same on every machine)."""

    def measure(ctx: Ctx) -> float:
        if "sweep-dense" not in CACHED:
            p = run(
                ["cargo", "test", "--quiet", "--locked", "--test", "sweep_memory", "--", "--nocapture"],
                cwd=ROOT,
            )
            CACHED["sweep-dense"] = {
                m.group(1): int(m.group(2)) / int(m.group(3))
                for m in re.finditer(r'\{"type":"(\w+)"\}: held (\d+) bytes for (\d+) bytes', p.stdout + p.stderr)
            }
        return CACHED["sweep-dense"][schema]

    return measure


def criterion_ratio(group: str, num: str, den: str) -> Callable[[Ctx], float]:
    """num / den of two criterion benchmarks' mean times (`cargo bench
    --bench analysis -- GROUP`), an in-process ratio."""

    def measure(ctx: Ctx) -> float:
        if group not in CACHED:
            run(
                ["cargo", "bench", "--locked", "--bench", "analysis", "--", group,
                 "--warm-up-time", "1", "--measurement-time", "5"],
                cwd=ROOT,
            )
            CACHED[group] = True
        base = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "criterion" / group

        def mean(name: str) -> float:
            est = json.loads((base / name / "new" / "estimates.json").read_text())
            return est["mean"]["point_estimate"]

        return mean(num) / mean(den)

    return measure


class OpenAiServer:
    """A local OpenAI-wire chat server that holds each answer 50 ms and
    logs when each request started and ended (streamed or not, as asked)."""

    HOLD = 0.05

    def __init__(self) -> None:
        import http.server
        import threading

        self.spans: list[tuple[float, float]] = []
        lock = threading.Lock()
        items = json.dumps([{"entity": f"E{i}", "definition": "a definition"} for i in range(3)])
        usage = {"prompt_tokens": 300, "completion_tokens": 40, "total_tokens": 340}
        spans = self.spans

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):  # noqa: N802 - the Models API, which cutline asks about the model once
                model = self.path.rstrip("/").rsplit("/", 1)[-1]
                data = json.dumps({"id": model, "object": "model", "created": 0, "owned_by": "openai"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):  # noqa: N802 - http.server's name
                start = time.perf_counter()
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                time.sleep(OpenAiServer.HOLD)
                if req.get("stream"):
                    chunks = [
                        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": items},
                                      "finish_reason": None}]},
                        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                        {"choices": [], "usage": usage},
                    ]
                    data = ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()
                    kind = "text/event-stream"
                else:
                    data = json.dumps({
                        "id": "c", "object": "chat.completion", "created": 0, "model": req.get("model", "m"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": items},
                                     "finish_reason": "stop"}],
                        "usage": usage,
                    }).encode()
                    kind = "application/json"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                with lock:
                    spans.append((start, time.perf_counter()))

        class Server(http.server.ThreadingHTTPServer):
            # A listen backlog for 50 clients connecting at once (the
            # default 5 drops SYNs, and the client that opens the most
            # connections waits out TCP's retransmit seconds).
            request_queue_size = 256

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def busy(self) -> float:
        """Mean requests in flight from the first request's start to the last's end."""
        first, last = min(s for s, _ in self.spans), max(e for _, e in self.spans)
        return sum(e - s for s, e in self.spans) / (last - first)

    def close(self) -> None:
        self.server.shutdown()


def cutline_eval(ctx: Ctx, url: str, n: int) -> tuple[float, float]:
    """Wall seconds of a cutline eval of `n` runs at --concurrency 50 against
    `url`, and the seconds its runs took together (their `total_ms`)."""
    w = ctx.work / f"eval-{n}-{time.monotonic_ns()}"
    w.mkdir()
    with open(w / "inputs.jsonl", "w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"doc{i}", "text": f"Document {i}."}) + "\n")
    (w / "cutline.toml").write_text(
        f'[[provider]]\nname = "srv"\nkind = "openai"\nbase_url = "{url}"\n'
        'model = "gpt-4.1-mini"\napi_key_env = "CUTLINE_BENCH_KEY"\n'
    )
    env = dict(os.environ, CUTLINE_CONFIG=str(w / "cutline.toml"), CUTLINE_LEARNED_FILE="",
               CUTLINE_BENCH_KEY="sk-bench")
    start = time.perf_counter()
    p = run([str(ctx.bin), "--prompts", str(ROOT / "prompts"), "--sessions", str(w / "sessions"), "eval",
             "--prompt", "extract-definitions", "--provider", "srv", "--max-tokens", "256", "--no-twins",
             "--inputs", str(w / "inputs.jsonl"), "--session", "bench", "--no-progress", "--concurrency", "50",
             "--output", "jsonl"], env=env, cwd=w)
    wall = time.perf_counter() - start
    runs = [json.loads(line) for line in p.stdout.splitlines() if '"type": "run"' in line or '"type":"run"' in line]
    return wall, sum(r["total_ms"] for r in runs) / 1000


def eval_slots_busy(ctx: Ctx) -> float:
    """Mean runs in flight over a 500-run `eval --concurrency 50` (100 runs
    in quick form) against a local OpenAI-wire server that holds each
    answer 50 ms: the slots the engine keeps busy (group commit; one disk
    sync per run held it near 10)."""
    n = 100 if ctx.quick else 500
    srv = OpenAiServer()
    try:
        wall, busy_s = cutline_eval(ctx, srv.url, n)
    finally:
        srv.close()
    if len(srv.spans) != n:
        raise RuntimeError(f"the server answered {len(srv.spans)} requests for {n} runs")
    # Slots are cutline's: each run's own time (request to analysed
    # answer) over the whole process's wall time, start-up and the final
    # table included (so a conservative mean). The server's view
    # (srv.busy()) is lower by the Python server's own latency.
    return busy_s / wall


# 0.120.27: the newest promptfoo that runs on Node 20 (Debian's; 0.121+ needs Node 22.22).
PROMPTFOO = CACHE / "promptfoo-0.120.27"


def promptfoo_ratio(ctx: Ctx) -> float:
    """promptfoo's wall time over cutline's for the same 500 requests at
    concurrency 50 on the same local server (promptfoo from npm, installed
    once under the user's cache; no assertions, no cache, nothing written)."""
    pf = PROMPTFOO / "node_modules" / ".bin" / "promptfoo"
    if not pf.exists():
        PROMPTFOO.mkdir(parents=True, exist_ok=True)
        run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "promptfoo@0.120.27"], cwd=PROMPTFOO)
    n = 500
    srv = OpenAiServer()
    w = ctx.work / "promptfoo"
    w.mkdir(exist_ok=True)
    tests = "".join(f"  - vars: {{text: 'Document {i}.'}}\n" for i in range(n))
    (w / "promptfooconfig.yaml").write_text(
        "prompts:\n  - 'Extract definitions as a JSON array from: {{text}}'\n"
        "providers:\n  - id: openai:chat:gpt-4.1-mini\n    config:\n"
        f"      apiBaseUrl: {srv.url}\n      apiKey: sk-bench\n      max_tokens: 256\n"
        f"tests:\n{tests}"
    )
    # Its log files off: promptfoo 0.120's file logger can throw "write
    # after end" as it exits, after the eval is done.
    env = dict(os.environ, PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1",
               PROMPTFOO_DISABLE_DEBUG_LOG="1", PROMPTFOO_DISABLE_ERROR_LOG="1",
               PROMPTFOO_CONFIG_DIR=str(w / "home"), OPENAI_API_KEY="sk-bench")
    cuts, pfs = [], []
    try:
        # Alternated, so both sides meet the same moments of the machine.
        for _ in range(ctx.runs):
            cuts.append(cutline_eval(ctx, srv.url, n)[0])
            start = time.perf_counter()
            run([str(pf), "eval", "-c", str(w / "promptfooconfig.yaml"), "--max-concurrency", "50", "--no-cache",
                 "--no-write", "--no-table", "--no-progress-bar"], env=env, cwd=w)
            pfs.append(time.perf_counter() - start)
    finally:
        srv.close()
    if len(srv.spans) != 2 * n * ctx.runs:
        raise RuntimeError(f"the server answered {len(srv.spans)} requests for {n} runs on each side")
    print(f"  eval-vs-promptfoo: cutline {statistics.median(cuts):.2f} s, promptfoo {statistics.median(pfs):.2f} s "
          f"(medians of {ctx.runs})")
    return statistics.median(pfs) / statistics.median(cuts)


CACHED: dict = {}

FIGURES = [
    Figure("reference-10k", "TrustGraph's reference (json.loads + jsonschema per line) / cutline parse, 10k JSONL lines",
           "×", True, reference_ratio(once=False), quick_size="1,000 lines, debug"),
    Figure("reference-once-10k", "the reference with its validator built once / cutline parse, 10k JSONL lines",
           "×", True, reference_ratio(once=True), quick_size="1,000 lines, debug"),
    Figure("jsonl-vs-serde-10k", "cutline's JSONL parse+validate speed / serde_json per line (no schema), 10k lines",
           "×", True, criterion_ratio("jsonl_validate", "serde_json_per_line/10000", "cutline_jsonl_schema/10000"),
           full_only=True),
    Figure("salvage-vs-plain", "salvage of the cut array / one serde_json parse of the whole (time)",
           "×", False, criterion_ratio("salvage", "salvage_cut", "serde_json_parse_whole"), full_only=True),
    Figure("salvage-vs-jiter", "salvage / jiter's partial-mode parse of the same cut array, 1.3 MB (time)",
           "×", False, criterion_ratio("salvage", "salvage_cut", "jiter_partial_cut"), full_only=True),
    Figure("salvage-vs-jiter-13mb", "salvage / jiter's partial-mode parse of the same cut array, 13 MB (time)",
           "×", False, criterion_ratio("salvage_big", "salvage_cut", "jiter_partial_cut"), full_only=True),
    Figure("eval-slots-busy", "mean requests in flight, eval of 500 runs at --concurrency 50, 50 ms answers",
           "of 50", True, eval_slots_busy, quick_size="100 runs, debug"),
    Figure("eval-vs-promptfoo", "promptfoo's wall time / cutline eval's, 500 requests at concurrency 50, same server",
           "×", True, promptfoo_ratio, full_only=True),
    Figure("batch-file-rss-10k", "peak RSS of eval --batch-file, 10,000 runs", "MiB", False, batch_memory("file"),
           quick_size="2,000 runs, debug"),
    Figure("batch-results-rss-10k", "peak RSS of eval --batch-results, 10,000 runs", "MiB", False,
           batch_memory("results"), quick_size="2,000 runs, debug"),
    Figure("batch-file-rss-100k", "peak RSS of eval --batch-file, 100,000 runs", "MiB", False,
           batch_memory("file", 100000), full_only=True),
    Figure("batch-results-rss-100k", "peak RSS of eval --batch-results, 100,000 runs", "MiB", False,
           batch_memory("results", 100000), full_only=True),
    Figure("sweep-dense-array", "heap the sweep holds / text, 200,000 {\"a\":1}, items {\"type\":\"array\"}",
           "×", False, sweep_dense_heap("array"), deterministic=True),
    Figure("sweep-dense-object", "heap the sweep holds / text, 200,000 {\"a\":1}, items {\"type\":\"object\"}",
           "×", False, sweep_dense_heap("object"), deterministic=True),
]

# Figures BENCHMARKS.md states that no command here regenerates yet, and
# the command that made each (so the gap is printed, not hidden).
NOT_YET = {
    "salvage-phantoms": "elements jiter, json_repair and partial-json invent at a cut (issue 37's; no script)",
    "client-overhead": "scripts/bench-client.sh (needs the local model)",
    "parse-1g-rss": "scripts/bench-reference.sh --memory (a 1 GB file in /tmp)",
}


def claims() -> dict[str, float]:
    """Every `<!-- figure ID claim=VALUE -->` in BENCHMARKS.md."""
    text = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    return {m.group(1): float(m.group(2)) for m in MARK.finditer(text)}


def holds(f: Figure, claim: float, got: float) -> bool:
    return got >= claim * 0.9 if f.higher_is_better else got <= claim * 1.1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI's form: debug binary, small inputs, one run each")
    ap.add_argument("--bin", type=Path, help="the cutline binary (default: release, built; quick: target/debug)")
    ap.add_argument("--only", help="comma-separated figure ids")
    ap.add_argument("--runs", type=int, default=5, help="runs per timed command in full mode (median)")
    ap.add_argument("--list", action="store_true", help="list the figures and exit")
    a = ap.parse_args()
    wanted = set(a.only.split(",")) if a.only else None
    said = claims()
    if a.list:
        for f in FIGURES:
            print(f"{f.id:24} {f.what}")
        for k, how in NOT_YET.items():
            print(f"{k:24} not regenerated here: {how}")
        return 0
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if a.bin:
        binary = a.bin.resolve()
    elif a.quick:
        binary = target / "debug" / "cutline"
    else:
        run(["cargo", "build", "--release", "--locked", "--quiet", "--bin", "cutline"], cwd=ROOT)
        binary = target / "release" / "cutline"
    load = os.getloadavg()[0]
    print(f"# bench.py {'--quick ' if a.quick else ''}on {os.uname().nodename}, {os.cpu_count()} cores, "
          f"load {load:.1f}, {time.strftime('%Y-%m-%d %H:%M %Z')}, binary {binary}")
    failed = 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="cutline-bench.") as work:
        ctx = Ctx(quick=a.quick, bin=binary, work=Path(work), runs=1 if a.quick else a.runs)
        for f in FIGURES:
            if wanted and f.id not in wanted:
                continue
            claim = said.get(f.id)
            if a.quick and f.full_only:
                rows.append((f, claim, None, "full mode only"))
                continue
            try:
                got = f.measure(ctx)
            except Exception as e:  # noqa: BLE001 - a figure's failure is printed, then the exit is 1
                failed += 1
                rows.append((f, claim, None, f"FAILED: {e}"))
                continue
            if claim is None:
                verdict = "not marked in BENCHMARKS.md"
            elif a.quick and not f.deterministic:
                verdict = f"quick form{' (' + f.quick_size + ')' if f.quick_size else ''}: not compared"
            else:
                verdict = "holds" if holds(f, claim, got) else "NO LONGER HOLDS"
            rows.append((f, claim, got, verdict))
    print(f"{'figure':24} {'claimed':>12} {'measured':>12}  verdict")
    for f, claim, got, verdict in rows:
        c = "—" if claim is None else f"{claim:g} {f.unit}"
        g = "—" if got is None else f"{got:.3g} {f.unit}"
        print(f"{f.id:24} {c:>12} {g:>12}  {verdict}")
    known = {f.id for f in FIGURES} | set(NOT_YET)
    for k in sorted(set(said) - known):
        print(f"{k:24} marked in BENCHMARKS.md but no figure here measures it")
    for k, how in NOT_YET.items():
        if wanted is None:
            print(f"{k:24} not regenerated here: {how}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
