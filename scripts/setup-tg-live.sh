#!/usr/bin/env bash
# TrustGraph 2.11.1's own services, for live tests against a running
# TrustGraph (scripts/tg_live_stack.py starts and stops them).
#
#   scripts/setup-tg-live.sh            # prints the venv's python
#
# Idempotent: everything lives under
#   ${XDG_CACHE_HOME:-$HOME/.cache}/cutline/tg-live/<version>-py<X.Y>/
# and a second run only checks the stamp. What it installs:
#   - Debian's rabbitmq-server (the pub/sub backend, PUBSUB_BACKEND=
#     rabbitmq) with apt-get when /usr/lib/rabbitmq/bin/rabbitmq-server is
#     missing: as root, or through `sudo -n` otherwise; `apt-get update`
#     runs only when the install fails without it. The Debian service is
#     never used: tg_live_stack.py runs the broker as the current user.
#   - a Python 3.13 venv (pyenv or PATH) with trustgraph-base, -flow and
#     -cli ==$TG_VERSION, the source distributions from PyPI, installed
#     with --no-deps: trustgraph-flow alone requires ~30 packages (Cassandra,
#     Milvus, Qdrant, Neo4j, faiss, fastembed, …) that the services run here
#     never import;
#   - the packages those services and CLI tools do import, pinned below
#     with their own dependencies: config-svc, no-auth-svc, api-gateway,
#     prompt-template, text-completion-openai, and tg-put-config-item,
#     tg-show-config, tg-show-prompts, tg-invoke-prompt,
#     tg-export-workspace-config and the other config tools.
# The config service's Cassandra driver (scylla-driver) is not installed:
# tg_live_stack.py gives the config service an in-memory table store.
set -euo pipefail

TG_VERSION=2.11.1
WANT="${TG_PYTHON:-3.13}"
RABBITMQ_SERVER=/usr/lib/rabbitmq/bin/rabbitmq-server

# What the services above import (checked by importing every one of them
# and running the stack), pinned to the versions checked, with the
# dependencies those pull in.
PACKAGES=(
  # trustgraph-base: trustgraph.base (logging, metrics), RabbitMQ backend,
  # trustgraph.api (the CLI's REST and WebSocket clients)
  prometheus-client==0.26.0 requests==2.34.2 aio-pika==10.2.1
  websockets==17.4
  # trustgraph-flow: api-gateway (aiohttp, JWT checks, msgpack
  # dispatchers), prompt-template (ibis, jsonschema),
  # text-completion-openai (openai)
  aiohttp==3.14.5 cryptography==50.0.2 msgpack==1.2.4
  ibis==3.3.0 jsonschema==4.26.0 openai==3.57.0
  # trustgraph-cli: tg-show-prompts
  tabulate==0.10.0
  # their dependencies
  aiohappyeyeballs==2.7.1 aiormq==7.2.4 aiosignal==1.4.0
  annotated-types==0.8.0 anyio==4.16.0 attrs==26.1.0
  certifi==2026.10.19.post1 cffi==2.1.1 charset-normalizer==3.5.3
  frozenlist==1.8.0 h11==0.16.0 httpcore2==2.16.2 httpx2==2.16.2
  idna==3.20 jiter==0.19.0 jsonschema-specifications==2025.9.1
  multidict==7.2.1 pamqp==4.0.1 propcache==0.5.4 pycparser==3.12
  pydantic==2.14.4 pydantic_core==2.50.5 referencing==0.37.0
  rpds-py==2026.9.1 sniffio==1.3.1 truststore==0.10.5
  typing_extensions==4.16.0 typing-inspection==0.4.5 urllib3==2.8.0
  yarl==1.25.1
)

while [ $# -gt 0 ]; do
  case "$1" in
    --python) WANT="$2"; shift 2 ;;
    *) echo "usage: $0 [--python 3.13]" >&2; exit 2 ;;
  esac
done

find_python() {
  local v=$1 p
  for p in "$HOME"/.pyenv/versions/"$v".*/bin/python3 "$(command -v "python$v" 2>/dev/null || true)"; do
    if [ -n "$p" ] && [ -x "$p" ]; then echo "$p"; return 0; fi
  done
  return 1
}

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/cutline/tg-live/$TG_VERSION-py$WANT"
STAMP="$CACHE/ready"
VPY="$CACHE/venv/bin/python"

if [ -f "$STAMP" ] && [ -x "$VPY" ] && [ -x "$RABBITMQ_SERVER" ]; then
  echo "$VPY"
  exit 0
fi

# RabbitMQ from Debian.
if [ ! -x "$RABBITMQ_SERVER" ]; then
  if [ "$(id -u)" = 0 ]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    echo "setup-tg-live: $RABBITMQ_SERVER is missing; install the Debian package" \
      "rabbitmq-server (apt-get install rabbitmq-server) as root" >&2
    exit 1
  fi
  echo "setup-tg-live: installing rabbitmq-server with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! "${SUDO[@]}" apt-get install -y -q rabbitmq-server >&2; then
    "${SUDO[@]}" apt-get update -q >&2
    "${SUDO[@]}" apt-get install -y -q rabbitmq-server >&2
  fi
  if [ ! -x "$RABBITMQ_SERVER" ]; then
    echo "setup-tg-live: apt-get installed rabbitmq-server but $RABBITMQ_SERVER is missing" >&2
    exit 1
  fi
fi

PY=""
if ! PY=$(find_python "$WANT"); then
  echo "setup-tg-live: Python $WANT not found (pyenv or PATH)" >&2
  exit 1
fi

mkdir -p "$CACHE/dist"
rm -rf "$CACHE/venv" "$STAMP"
"$PY" -m venv "$CACHE/venv"
PIP=("$CACHE/venv/bin/python" -m pip -q --disable-pip-version-check)
for pkg in base flow cli; do
  if ! ls "$CACHE"/dist/trustgraph_"$pkg"-"$TG_VERSION".tar.gz >/dev/null 2>&1; then
    "${PIP[@]}" download "trustgraph-$pkg==$TG_VERSION" --no-deps --no-binary :all: \
      -d "$CACHE/dist" >&2
  fi
done
"${PIP[@]}" install "${PACKAGES[@]}" >&2
"${PIP[@]}" install --no-deps \
  "$CACHE/dist/trustgraph_base-$TG_VERSION.tar.gz" \
  "$CACHE/dist/trustgraph_flow-$TG_VERSION.tar.gz" \
  "$CACHE/dist/trustgraph_cli-$TG_VERSION.tar.gz" >&2

# Every module the stack and the CLI tools load, imported once here so a
# missing dependency fails the setup, not a test (the config service's
# trustgraph.config.service imports the Cassandra table store, which
# tg_live_stack.py replaces before importing it).
"$VPY" - <<EOF >&2
import importlib, importlib.metadata as m
for d in ("trustgraph-base", "trustgraph-flow", "trustgraph-cli"):
    assert m.version(d) == "$TG_VERSION", (d, m.version(d))
for mod in (
    "trustgraph.base", "trustgraph.base.async_rabbitmq_backend",
    "trustgraph.iam.noauth.service",
    "trustgraph.gateway.service", "trustgraph.prompt.template.service",
    "trustgraph.model.text_completion.openai.llm",
    "trustgraph.cli.put_config_item", "trustgraph.cli.show_config",
    "trustgraph.cli.show_prompts", "trustgraph.cli.invoke_prompt",
    "trustgraph.cli.export_workspace_config",
):
    importlib.import_module(mod)
print("trustgraph", "$TG_VERSION", "openai", m.version("openai"),
      "aio-pika", m.version("aio-pika"), "aiohttp", m.version("aiohttp"))
EOF
echo "trustgraph $TG_VERSION, python $("$VPY" -c 'import sys; print(sys.version.split()[0])')" >"$STAMP"
echo "$VPY"
