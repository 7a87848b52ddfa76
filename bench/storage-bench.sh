#!/usr/bin/env bash
# Storage benchmarks: append throughput vs raw FileChannel.write, random reads by offset over
# a large log, and start-up time of a data directory of 1,000 partitions. Builds the bench
# module, runs the three, prints the machine and the RESULT lines (also saved to
# bench/target/storage-bench-results.txt). Figures are recorded in bench/README.md.
#
# Environment:
#   STRATA_BENCH_DIR   where the benchmark data goes (default: bench/target/storage-bench-data);
#                      the 10 GiB read log and the 1,000-partition directory are created once
#                      there and reused until the end of the script, which deletes them
#   STRATA_BENCH_KEEP  1 keeps the data for the next run of the script
#   STRATA_READ_LOG_GIB  size of the random-read log (default: 10, lowered if the disk is short)
#   STRATA_BENCH_LOCK  lock file held for the whole run so that no build competes with the
#                      benchmarks (default /tmp/strata-mvn.lock; empty: no lock). Do not also
#                      wrap the script in flock on the same file: it would wait for itself.
#   STRATA_MVN_FLAGS   extra Maven flags, e.g. -o
#   STRATA_BENCH_JAVA_OPTS  JVM options for the benchmarks (default -Xms1g -Xmx1g)
set -euo pipefail

SCRIPT=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
LOCK=${STRATA_BENCH_LOCK-/tmp/strata-mvn.lock}
if [[ -n "$LOCK" && -z "${STRATA_BENCH_LOCKED:-}" ]]; then
  exec env STRATA_BENCH_LOCKED=1 flock "$LOCK" "$SCRIPT" "$@"
fi

cd "$(dirname "$SCRIPT")/.."
ROOT=$(pwd)

DATA=${STRATA_BENCH_DIR:-$ROOT/bench/target/storage-bench-data}
JAVA_OPTS=${STRATA_BENCH_JAVA_OPTS:--Xms1g -Xmx1g}
RESULTS=$ROOT/bench/target/storage-bench-results.txt

echo "== build"
# shellcheck disable=SC2086
./mvnw -q ${STRATA_MVN_FLAGS:-} -DskipTests package -pl bench -am
JAR=$ROOT/bench/target/benchmarks.jar
mkdir -p "$DATA"

# The read log wants 10 GiB; keep 4 GiB of the disk free for everything else.
READ_GIB=${STRATA_READ_LOG_GIB:-10}
AVAIL_GIB=$(( $(df --output=avail -B1 "$DATA" | tail -1) / 1024 / 1024 / 1024 ))
EXISTING_GIB=0
if [[ -d "$DATA/read" ]]; then
  EXISTING_GIB=$(( $(du -sb "$DATA/read" | cut -f1) / 1024 / 1024 / 1024 ))
fi
if (( AVAIL_GIB + EXISTING_GIB - 4 < READ_GIB )); then
  READ_GIB=$(( AVAIL_GIB + EXISTING_GIB - 4 ))
  echo "note: only ${AVAIL_GIB} GiB free at $DATA: the random-read log is ${READ_GIB} GiB instead of 10 GiB"
fi
if (( READ_GIB < 1 )); then
  echo "not enough free disk at $DATA for the read benchmark" >&2
  exit 1
fi
# The append runs write 2 GiB per run and delete it afterwards.
if (( AVAIL_GIB < 6 )); then
  echo "not enough free disk at $DATA for the append benchmark (need 6 GiB, have ${AVAIL_GIB})" >&2
  exit 1
fi

cleanup() {
  rm -rf "$DATA/append"
  if [[ "${STRATA_BENCH_KEEP:-0}" != 1 ]]; then
    rm -rf "$DATA/read" "$DATA/open"
  fi
}
trap cleanup EXIT

{
  echo "== machine"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "memory: $(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
  echo "java: $(java -version 2>&1 | head -1)"
  echo "disk: $(df -h --output=source,fstype,size,avail "$DATA" | tail -1)"
  echo "java options: $JAVA_OPTS"
} | tee "$RESULTS"

run() {
  # shellcheck disable=SC2086
  java $JAVA_OPTS -cp "$JAR" "$@" | tee -a "$RESULTS"
}

echo "== append (UnifiedLog.appendAsLeader vs FileChannel.write, same bytes, same directory)" | tee -a "$RESULTS"
run io.strata.bench.StorageAppendBench --dir "$DATA/append"
run io.strata.bench.StorageAppendBench --dir "$DATA/append" --fsync true --runs 4 --warmup-runs 1

echo "== random read by offset (${READ_GIB} GiB log)" | tee -a "$RESULTS"
run io.strata.bench.StorageRandomReadBench --dir "$DATA/read" --log-gib "$READ_GIB"

echo "== open 1,000 partitions after a clean shutdown" | tee -a "$RESULTS"
run io.strata.bench.StorageOpenBench --dir "$DATA/open"
run io.strata.bench.StorageOpenBench --dir "$DATA/open" --recovery-threads 1

echo "== results"
grep '^RESULT' "$RESULTS"
