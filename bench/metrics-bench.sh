#!/usr/bin/env bash
# Metrics overhead on the produce path: Strata with metrics.enabled=true vs false, same jar, same run.
#
# Usage: bench/metrics-bench.sh [--rounds N] [--runs N] [--scale F] [--only REGEX] [--quick] [--strata-jar PATH] [--out DIR]
#   --rounds N        rounds, each with a fresh pair of brokers (default 4): two JVMs differ by their
#                     JIT's luck by as much as 10%, so one pair alone cannot show a 2% difference
#   --runs N          measured runs per row, round and broker, alternating which goes first (default 5)
#   --scale F         multiply every row's record count (default 1.0)
#   --only REGEX      only the rows whose name matches, e.g. 'one record per request'
#   --quick           --rounds 1 --runs 1 --scale 0.05: checks that the script works
#   --control         A/A control: the "off" broker runs with metrics on as well (and is scraped the
#                     same way), so the on/off ratios show the method's own noise, not metrics' cost
#   --strata-jar PATH the Strata jar to measure (default tools/target/strata.jar, built if missing)
#   --out DIR         where results go (default bench/target/metrics-bench/<UTC timestamp>)
#
# It builds the bench jar (and strata.jar if missing) under /tmp/strata-mvn.lock. Each round starts two
# Strata brokers from a private copy of the jar, each on its own loopback port and data directory:
# "on" (metrics.enabled=true, its /metrics scraped every second, more often than Prometheus would)
# and "off" (metrics.enabled=false); io.strata.bench.MetricsOverheadBench (a Kafka producer in its own
# JVM) runs each row against both brokers in turn, after a warm-up run each; then the brokers stop.
# The report gives, per row, the median records/s and broker CPU time per record of each side and
# the median of the on/off ratios of adjacent pairs of runs, over all rounds. The measurement holds the build
# lock so no build competes with it. Only loopback addresses are used; only the processes this script
# started are stopped; its temp dir is removed on exit. Ports: BENCH_METRICS_ON_PORT (47292),
# BENCH_METRICS_OFF_PORT (47392), BENCH_METRICS_HTTP_PORT (47644).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCK=/tmp/strata-mvn.lock
# shellcheck source=lib/common.sh
source "$ROOT/bench/lib/common.sh" # log, die, stop_pid, port_in_use (its cleanup is replaced below)
ON_PORT=${BENCH_METRICS_ON_PORT:-47292}
OFF_PORT=${BENCH_METRICS_OFF_PORT:-47392}
HTTP_PORT=${BENCH_METRICS_HTTP_PORT:-47644}
ROUNDS=4
RUNS=5
SCALE=1.0
ONLY=".*"
CONTROL=0
STRATA_JAR_SRC="$ROOT/tools/target/strata.jar"
OUT=""

usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --scale) SCALE="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --quick) ROUNDS=1; RUNS=1; SCALE=0.05; shift ;;
    --control) CONTROL=1; shift ;;
    --strata-jar) STRATA_JAR_SRC="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
done

STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
RES="${OUT:-$ROOT/bench/target/metrics-bench/$STAMP}"
mkdir -p "$RES" || die "cannot create $RES"
WORK="$(mktemp -d /tmp/strata-metrics-bench.XXXXXX)"
ON_PID=""
OFF_PID=""

cleanup() {
  trap - EXIT INT TERM
  stop_pid "$ON_PID"
  stop_pid "$OFF_PID"
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

exec 9>>"$LOCK"
flock -w 3600 9 || die "could not take $LOCK in an hour"

cd "$ROOT" || die "no $ROOT"
if [[ ! -f "$STRATA_JAR_SRC" ]]; then
  log "building strata.jar"
  ./mvnw -q -o -B -DskipTests package -pl tools -am 9>&- >"$RES/build.log" 2>&1 || die "build failed (see $RES/build.log)"
fi
log "building the bench jar"
./mvnw -q -o -B -DskipTests package -pl bench -am 9>&- >>"$RES/build.log" 2>&1 || die "build failed (see $RES/build.log)"
cp "$STRATA_JAR_SRC" "$WORK/strata.jar"
cp bench/target/benchmarks.jar "$WORK/benchmarks.jar"

for p in $ON_PORT $OFF_PORT $HTTP_PORT; do
  port_in_use "$p" && die "127.0.0.1:$p is already in use"
done

launch() { # NAME PORT METRICS_SETTINGS... -> pid on stdout
  local name=$1 port=$2; shift 2
  mkdir -p "$WORK/$name"
  java -jar "$WORK/strata.jar" server --override "listeners=PLAINTEXT://127.0.0.1:$port" \
    --override "log.dirs=$WORK/$name/data" "$@" >"$WORK/$name/broker.log" 2>&1 9>&- &
  echo $!
}
wait_ready() { # PORT PID
  local deadline=$(( $(date +%s) + 60 ))
  while (( $(date +%s) < deadline )); do
    port_in_use "$1" && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

{
  echo "date_utc: $(date -u '+%Y-%m-%d %H:%M')"
  echo "cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores"
  echo "java: $(java -version 2>&1 | head -2 | tail -1)"
  echo "strata: $(java -jar "$WORK/strata.jar" version 2>&1 | head -1 9>&-) ($STRATA_JAR_SRC, $(date -u -r "$STRATA_JAR_SRC" '+%Y-%m-%d %H:%M UTC'))"
  echo "rounds: $ROUNDS, runs_per_round: $RUNS, scale: $SCALE, control (A/A, both brokers metrics on): $CONTROL"
} | tee "$RES/environment.txt" >&2

: >"$RES/runs.tsv"
for round in $(seq 1 "$ROUNDS"); do
  log "round $round of $ROUNDS: starting a fresh pair of brokers"
  rm -rf "$WORK/on" "$WORK/off"
  ON_PID=$(launch on "$ON_PORT" --override metrics.enabled=true --override "metrics.listener=http://127.0.0.1:$HTTP_PORT")
  if (( CONTROL )); then
    OFF_PID=$(launch off "$OFF_PORT" --override metrics.enabled=true --override "metrics.listener=http://127.0.0.1:$((HTTP_PORT + 1))")
    OFF_METRICS=(--off-metrics "http://127.0.0.1:$((HTTP_PORT + 1))")
  else
    OFF_PID=$(launch off "$OFF_PORT" --override metrics.enabled=false)
    OFF_METRICS=()
  fi
  wait_ready "$ON_PORT" "$ON_PID" || die "the metrics-on broker did not start: $(tail -5 "$WORK/on/broker.log")"
  wait_ready "$OFF_PORT" "$OFF_PID" || die "the metrics-off broker did not start: $(tail -5 "$WORK/off/broker.log")"
  port_in_use "$HTTP_PORT" || die "the metrics-on broker serves no /metrics on $HTTP_PORT"
  timeout -k 10 3600 java -Xmx1g -cp "$WORK/benchmarks.jar" io.strata.bench.MetricsOverheadBench \
    --on "127.0.0.1:$ON_PORT" --on-pid "$ON_PID" --on-metrics "http://127.0.0.1:$HTTP_PORT" \
    --off "127.0.0.1:$OFF_PORT" --off-pid "$OFF_PID" "${OFF_METRICS[@]}" --runs "$RUNS" --scale "$SCALE" --only "$ONLY" \
    --round "$round" --raw "$RES/runs.tsv" --out "$RES/round-$round.md" 9>&- 2> >(tee -a "$RES/runs.log" >&2)
  rc=$?
  [[ $rc == 0 ]] || die "round $round failed (exit $rc)"
  stop_pid "$ON_PID"; ON_PID=""
  stop_pid "$OFF_PID"; OFF_PID=""
done
java -cp "$WORK/benchmarks.jar" io.strata.bench.MetricsOverheadBench --aggregate "$RES/runs.tsv" --out "$RES/results.md" 9>&- \
  || die "aggregating the runs failed"
log "results in $RES/results.md"
