#!/usr/bin/env bash
# cutline's client overhead over calling llama-server directly.
#
#   scripts/bench-client.sh [--runs N] [--max-tokens M] [--prompt ID]
#                           (defaults: 10 runs, 64 tokens, extract-definitions-jsonl)
#
# What "client overhead" means here: the wall time of the whole
# `cutline run PROMPT --provider bench --no-record --output json` process
# (start-up, config, prompt load and render, HTTP request, SSE stream read to
# the end, the analysis, the envelope) against `curl -N` sending the very same
# /completion request body to the same server and reading its SSE stream to
# the end. Both are separate processes talking to one llama-server.
#
# 1. builds cutline in release; needs llama-server + Gemma 3 270M in the
#    user cache (scripts/setup-local.sh);
# 2. starts one llama-server (the arguments src/llm/local.rs uses) on a free
#    loopback port;
# 3. captures the exact body cutline sends: one run against a stub server
#    that records the request and answers with an empty final event;
# 4. warms up once each, then alternates direct / cutline N times (so load
#    from other processes hits both alike), timing each process;
# 5. checks that every run of both generated the same text and token count
#    (temperature 0, `cache_prompt: false`, same n_predict), and prints the
#    medians, the median of the per-pair ratios and the overhead in ms;
#    also each client's own CPU time (user + sys, from /usr/bin/time): the
#    work cutline adds, which load from other processes disturbs far less
#    than wall time (llama.cpp's threads are very sensitive to it).
set -euo pipefail

RUNS=10
MAXTOK=64
PROMPT=extract-definitions-jsonl
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --max-tokens) MAXTOK="$2"; shift 2 ;;
    --prompt) PROMPT="$2"; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--max-tokens M] [--prompt ID]" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${CUTLINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cutline}"
SERVER_BIN="${CUTLINE_LLAMA_SERVER:-$CACHE/bin/llama-server}"
MODEL="$CACHE/models/gemma-3-270m-q4_k_m.gguf"
[ -x "$SERVER_BIN" ] && [ -f "$MODEL" ] || { echo "no local model: run scripts/setup-local.sh" >&2; exit 1; }
WORK="$(mktemp -d "${TMPDIR:-/tmp}/cutline-client.XXXXXX")"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== build (release)" >&2
cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" --bin cutline
CUTLINE="$ROOT/target/release/cutline"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
"$SERVER_BIN" -m "$MODEL" --host 127.0.0.1 --port "$PORT" -c 4096 -np 1 --no-webui \
  </dev/null >"$WORK/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 240); do
  curl -sf "$URL/health" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -sf "$URL/health" >/dev/null || { echo "llama-server did not start:" >&2; tail "$WORK/server.log" >&2; exit 1; }

# The stub that records the body cutline sends.
CPORT=$(free_port)
python3 - "$CPORT" "$WORK/body.json" <<'PYEOF' &
import http.server, sys
port, out = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        open(out, "wb").write(body)
        ev = b'data: {"content":"","tokens":[],"stop":true,"stop_type":"eos","tokens_predicted":0,"tokens_evaluated":0}\n\n'
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(ev)))
        self.end_headers()
        self.wfile.write(ev)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PYEOF
PIDS+=($!)
sleep 0.5

cat >"$WORK/cutline.toml" <<EOF
[[provider]]
name = "bench"
kind = "llama-server"
base_url = "$URL"
model = "gemma-3-270m"

[[provider]]
name = "capture"
kind = "llama-server"
base_url = "http://127.0.0.1:$CPORT"
model = "gemma-3-270m"
EOF
export CUTLINE_CONFIG="$WORK/cutline.toml"
cd "$ROOT"
cut_cmd=("$CUTLINE" run "$PROMPT" --provider bench --no-record --max-tokens "$MAXTOK" --output json)
"$CUTLINE" run "$PROMPT" --provider capture --no-record --max-tokens "$MAXTOK" --output json >/dev/null
[ -s "$WORK/body.json" ] || { echo "no request captured" >&2; exit 1; }
echo "request body (sent by both): $(head -c 300 "$WORK/body.json")..." >&2
direct_cmd=(curl -sS -N --fail -H 'Content-Type: application/json' --data-binary @"$WORK/body.json" "$URL/completion")

now() { date +%s%N; }
# Wall time from date; the client's CPU seconds (user sys) from GNU time.
timed() { # out-file cpu-file command...
  local out="$1" cpu="$2"; shift 2
  /usr/bin/time -f '%U %S' -o "$cpu" "$@" >"$out"
}
# Warm-up, one of each (page cache, the server's first request).
"${direct_cmd[@]}" >"$WORK/direct-warm.sse"
"${cut_cmd[@]}" >"$WORK/cut-warm.json"
: >"$WORK/times.txt"
for ((i = 0; i < RUNS; i++)); do
  s=$(now); timed "$WORK/direct-$i.sse" "$WORK/direct-$i.cpu" "${direct_cmd[@]}"; e=$(now); d=$((e - s))
  s=$(now); timed "$WORK/cut-$i.json" "$WORK/cut-$i.cpu" "${cut_cmd[@]}"; e=$(now); c=$((e - s))
  echo "$d $c" >>"$WORK/times.txt"
done

python3 - "$WORK" "$RUNS" "$MAXTOK" "$PROMPT" <<'PYEOF'
import json, statistics, sys
work, runs, maxtok, prompt = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

def direct(path):
    text, predicted = [], None
    for line in open(path, encoding="utf-8"):
        if line.startswith("data: "):
            ev = json.loads(line[6:])
            text.append(ev.get("content", ""))
            if ev.get("stop"):
                predicted = ev.get("tokens_predicted")
    return "".join(text), predicted

def cut(path):
    env = json.load(open(path, encoding="utf-8"))
    assert env["ok"], env
    s = json.dumps(env["data"])
    d = env["data"]
    text = d.get("text") or d.get("record", {}).get("text") or d.get("run", {}).get("text")
    usage = d.get("usage") or d.get("record", {}).get("usage") or d.get("run", {}).get("usage") or {}
    return text, usage.get("completion_tokens"), s

outs = [direct(f"{work}/direct-{i}.sse") for i in range(runs)]
cuts = [cut(f"{work}/cut-{i}.json") for i in range(runs)]
same = all(o == outs[0] for o in outs) and all(c[:2] == cuts[0][:2] for c in cuts)
agree = cuts[0][0] is None or (cuts[0][0] == outs[0][0] and cuts[0][1] == outs[0][1])
times = [tuple(int(x) / 1e6 for x in l.split()) for l in open(f"{work}/times.txt")]
d = [t[0] for t in times]
c = [t[1] for t in times]
ratios = [b / a for a, b in times]
md, mc = statistics.median(d), statistics.median(c)
print(f"prompt {prompt}, max tokens {maxtok}: {outs[0][1]} tokens generated, {len(outs[0][0])} characters")
print(f"same output every run, both sides: {'yes' if same and agree else 'NO'}")
print(f"direct (curl)  median {md:.1f} ms  min {min(d):.1f}  max {max(d):.1f}")
print(f"cutline run    median {mc:.1f} ms  min {min(c):.1f}  max {max(c):.1f}")
print(f"overhead: median of pair ratios {statistics.median(ratios):.4f} "
      f"({(statistics.median(ratios) - 1) * 100:+.1f}%), medians {mc / md:.4f}, "
      f"median pair difference {statistics.median(b - a for a, b in times):+.1f} ms ({runs} alternated pairs)")
cpu = lambda side: [sum(map(float, open(f"{work}/{side}-{i}.cpu").read().split()[-2:])) * 1000 for i in range(runs)]
dc, cc = cpu("direct"), cpu("cut")
print(f"client CPU (user+sys): curl median {statistics.median(dc):.0f} ms, cutline median {statistics.median(cc):.0f} ms; "
      f"cutline's extra CPU is {(statistics.median(cc) - statistics.median(dc)) / md * 100:.2f}% of the direct median wall time")
if not (same and agree):
    sys.exit(1)
PYEOF
