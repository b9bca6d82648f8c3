#!/usr/bin/env bash
# Fetch Apache Kafka's artifacts with Maven into .cache/kafka/VERSION (git-ignored) and
# build the project's Java consumer driver (kafka/driver/) against them, for every version
# in KAFKA_VERSIONS (default: 4.4.0, the version groupcheck follows). Installs Maven and a
# JDK with apt-get when missing. Nothing is fetched at test time: `groupcheck kafka` and the
# tests read only this cache. Idempotent: a version whose READY file is newer than the
# driver's source and the pom is left as it is.
#
#   KAFKA_VERSIONS="4.4.0 4.2.0" bash scripts/kafka-setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "groupcheck setup: $*"; }
# shellcheck source=scripts/apt.sh
. scripts/apt.sh
versions="${KAFKA_VERSIONS:-4.4.0}"
cache="${GROUPCHECK_KAFKA_CACHE:-.cache/kafka}"

need_pkgs=()
command -v mvn >/dev/null 2>&1 || need_pkgs+=(maven)
# javac builds the driver; Debian's JDK 17 (Kafka 4.x runs on Java 17+).
command -v javac >/dev/null 2>&1 || need_pkgs+=(openjdk-17-jdk-headless)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  apt_install "error: install ${need_pkgs[*]} (Maven and a JDK 17+) to run a Kafka broker" \
    "${need_pkgs[@]}" || exit 1
fi

sources=(kafka/pom.xml kafka/driver/*.java)
for v in $versions; do
  if ! [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    say "error: KAFKA_VERSIONS: '$v' is not a version such as 4.4.0"
    exit 2
  fi
  dest="$cache/$v"
  if [ -f "$dest/READY" ]; then
    fresh=1
    for s in "${sources[@]}"; do [ "$s" -nt "$dest/READY" ] && fresh=0; done
    if [ $fresh = 1 ]; then continue; fi
  fi
  say "fetching Apache Kafka $v with Maven into $dest"
  work="$cache/.$v.partial.$$"
  rm -rf "$work"
  mkdir -p "$work/lib" "$work/classes"
  mvn -q -B -f kafka/pom.xml -Dkafka.version="$v" dependency:copy-dependencies \
    -DoutputDirectory="$(pwd)/$work/lib" -DincludeScope=runtime >"$work/maven.log" 2>&1 || {
      tail -20 "$work/maven.log" >&2
      say "error: Maven could not fetch Apache Kafka $v (log above)"
      rm -rf "$work"
      exit 1
    }
  # Kafka logs through SLF4J 1.7 to Log4j 2, whose SLF4J binding is not among its runtime
  # dependencies: without it the broker logs nothing. Take the binding of the Log4j version
  # Kafka brought.
  core=$(ls "$work/lib" | sed -n 's/^log4j-core-\(.*\)\.jar$/\1/p' | head -1)
  if [ -z "$core" ]; then
    say "error: Apache Kafka $v brought no log4j-core jar; cannot add its SLF4J binding"
    rm -rf "$work"
    exit 1
  fi
  mvn -q -B dependency:copy -Dartifact="org.apache.logging.log4j:log4j-slf4j-impl:$core" \
    -DoutputDirectory="$(pwd)/$work/lib" >>"$work/maven.log" 2>&1 || {
      tail -20 "$work/maven.log" >&2
      say "error: Maven could not fetch log4j-slf4j-impl $core"
      rm -rf "$work"
      exit 1
    }
  say "building the Java consumer driver against kafka-clients $v"
  javac -nowarn -d "$work/classes" -cp "$work/lib/*" kafka/driver/*.java
  {
    echo "kafka_version=$v"
    echo "log4j_version=$core"
  } >"$work/READY"
  rm -rf "$dest"
  mkdir -p "$cache"
  mv "$work" "$dest"
done
