#!/usr/bin/env bash
# TrustGraph's released prompt manager in a cached venv, for the
# differential test (tests/tg_parity.rs, scripts/reference_tg_service.py).
#
#   scripts/setup-tg-reference.sh [--python 3.13|3.11]   # prints the venv's python
#
# Idempotent: everything lives under
#   ${XDG_CACHE_HOME:-$HOME/.cache}/cutline/tg/<version>-py<X.Y>/
# and a second run only checks the stamp. What it installs:
#   - trustgraph-flow==$TG_VERSION, the source distribution from PyPI
#     (`pip download --no-deps --no-binary :all:`), installed with --no-deps:
#     its hundred service dependencies are never imported by
#     trustgraph/template/prompt_manager.py;
#   - the two it does import: ibis (the template engine; trustgraph-flow
#     requires `ibis` unpinned, 3.3.0 is the release) and jsonschema 4.x
#     (with its own dependencies).
# `trustgraph.base` (trustgraph-base, which pulls in Pulsar) is stubbed by
# the reference script: the prompt manager uses only is_strict_mode_compatible
# from it, to choose structured output for the LLM call, never to judge.
# Python: 3.13 (what TrustGraph's containers run) from pyenv or PATH; 3.11
# when 3.13 is absent or asked for with --python 3.11.
# Beside the venv, the sdist of trustgraph-flow==$OLD_VERSION is unpacked
# (not installed) under old/: the last release whose loader reads only
# `template-index`; the reference script loads its prompt_manager.py by path
# to check exports against the old loader too.
set -euo pipefail

TG_VERSION=2.11.1
IBIS_VERSION=3.3.0
JSONSCHEMA_VERSION=4.26.0
OLD_VERSION=2.8.11
WANT="${TG_PYTHON:-3.13}"
while [ $# -gt 0 ]; do
  case "$1" in
    --python) WANT="$2"; shift 2 ;;
    *) echo "usage: $0 [--python 3.13|3.11]" >&2; exit 2 ;;
  esac
done

find_python() {
  local v=$1 p
  for p in "$HOME"/.pyenv/versions/"$v".*/bin/python3 "$(command -v "python$v" 2>/dev/null || true)"; do
    if [ -n "$p" ] && [ -x "$p" ]; then echo "$p"; return 0; fi
  done
  return 1
}

PY=""
if ! PY=$(find_python "$WANT"); then
  if [ "$WANT" = 3.13 ] && PY=$(find_python 3.11); then
    WANT=3.11
    echo "setup-tg-reference: Python 3.13 not found; using 3.11 (nesting limits differ, see README)" >&2
  else
    echo "setup-tg-reference: Python $WANT not found (pyenv or PATH)" >&2
    exit 1
  fi
fi

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/cutline/tg/$TG_VERSION-py$WANT"
STAMP="$CACHE/ready"
VPY="$CACHE/venv/bin/python"
OLD_PM="$CACHE/old/trustgraph_flow-$OLD_VERSION/trustgraph/template/prompt_manager.py"

# The old release's prompt manager, unpacked beside the venv (idempotent).
unpack_old() {
  [ -f "$OLD_PM" ] && return 0
  mkdir -p "$CACHE/old"
  if ! ls "$CACHE"/old/trustgraph_flow-"$OLD_VERSION".tar.gz >/dev/null 2>&1; then
    "$PY" -m pip -q --disable-pip-version-check download "trustgraph-flow==$OLD_VERSION" --no-deps \
      --no-binary :all: -d "$CACHE/old" >&2
  fi
  tar -xzf "$CACHE/old/trustgraph_flow-$OLD_VERSION.tar.gz" -C "$CACHE/old" \
    "trustgraph_flow-$OLD_VERSION/trustgraph/template/prompt_manager.py"
}

if [ -f "$STAMP" ] && [ -x "$VPY" ] && "$VPY" -c "import ibis, jsonschema" 2>/dev/null; then
  unpack_old
  echo "$VPY"
  exit 0
fi

mkdir -p "$CACHE/dist"
rm -rf "$CACHE/venv"
"$PY" -m venv "$CACHE/venv"
PIP=("$CACHE/venv/bin/python" -m pip -q --disable-pip-version-check)
if ! ls "$CACHE"/dist/trustgraph_flow-"$TG_VERSION".tar.gz >/dev/null 2>&1; then
  "${PIP[@]}" download "trustgraph-flow==$TG_VERSION" --no-deps --no-binary :all: -d "$CACHE/dist" >&2
fi
"${PIP[@]}" install --no-deps "$CACHE/dist/trustgraph_flow-$TG_VERSION.tar.gz" >&2
"${PIP[@]}" install "ibis==$IBIS_VERSION" "jsonschema==$JSONSCHEMA_VERSION" >&2
"$VPY" - <<EOF >&2
import importlib.metadata as m
assert m.version("trustgraph-flow") == "$TG_VERSION", m.version("trustgraph-flow")
print("trustgraph-flow", m.version("trustgraph-flow"), "ibis", m.version("ibis"), "jsonschema", m.version("jsonschema"))
EOF
unpack_old
echo "trustgraph-flow $TG_VERSION, python $("$VPY" -c 'import sys; print(sys.version.split()[0])')" >"$STAMP"
echo "$VPY"
