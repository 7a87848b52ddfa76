#!/usr/bin/env bash
# Records what an Apache Kafka broker (the version of bench/broker/pom.xml) advertises in ApiVersions
# into server/src/test/resources/kafka-4.4/api-versions.txt, the reference KafkaApiVersionsParityTest
# compares Strata's advertised ranges with. Run it when the Kafka version of the tests changes, then
# review the diff: every API Strata implements must then be raised (or the test tells which).
#
# Usage: bench/record-kafka-api-versions.sh [--out FILE]
# Starts Kafka as a KRaft single node on loopback (127.0.0.1:25392, controller 25393; override with
# BENCH_RECORD_KAFKA_PORT / BENCH_RECORD_KAFKA_CONTROLLER_PORT) under /tmp/strata-build.lock, asks
# once, stops it. Only the process it started is stopped; its temp dir is removed on exit.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
LOCK=/tmp/strata-build.lock
# shellcheck source=lib/common.sh
source "$BENCH/lib/common.sh"
KAFKA_PORT=${BENCH_RECORD_KAFKA_PORT:-25392}
KAFKA_CONTROLLER_PORT=${BENCH_RECORD_KAFKA_CONTROLLER_PORT:-25393}
OUT="$ROOT/server/src/test/resources/kafka-4.4/api-versions.txt"
[[ "${1:-}" == --out ]] && OUT=$2
exec 9>>"$LOCK"

KAFKA_PID=
STRATA_PID=
WORK=$(mktemp -d /tmp/record-api-versions.XXXXXX)
trap cleanup EXIT INT TERM
JVM_PERF=()
TOOLS_LOG="-Dlog4j2.configurationFile=$BENCH/broker/log4j2-tools.properties"
BROKER_LOG="-Dlog4j2.configurationFile=$BENCH/broker/log4j2-broker.properties"
KAFKA_VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$BENCH/broker/pom.xml" | head -1)

lock
for p in $KAFKA_PORT $KAFKA_CONTROLLER_PORT; do
  port_in_use "$p" && die "127.0.0.1:$p is already in use"
done
(cd "$ROOT" && ./mvnw -q -B -f bench/broker/pom.xml dependency:build-classpath -Dmdep.outputFile="$WORK/cp.txt" 9>&-) \
  >"$WORK/resolve.log" 2>&1 || die "could not resolve Kafka: $(tail -3 "$WORK/resolve.log")"
KCP="$(cat "$WORK/cp.txt")"
javac -nowarn -d "$WORK/classes" -cp "$KCP" "$BENCH/broker/RecordApiVersions.java" || die "could not compile RecordApiVersions"
mkdir -p "$WORK/kafka"
kafka_config "$WORK/kafka"
kafka_format "$WORK/kafka" || die "kafka format failed: $(tail -3 "$WORK/kafka/format.log")"
kafka_launch "$WORK/kafka"
wait_ready "$KAFKA_PORT" "$KAFKA_PID" || die "Kafka did not start: $(tail -5 "$WORK/kafka/broker.log")"
{
  echo "# ApiVersions v4 response of an Apache Kafka $KAFKA_VERSION broker (KRaft combined broker+controller, formatted by"
  echo "# kafka-storage format --standalone, listener PLAINTEXT), recorded on $(date -u +%F) by bench/record-kafka-api-versions.sh."
  echo "# Formatted at transaction.version=1 the API ranges are identical (Kafka does not cap them; Strata does, see ApiVersionsHandler)."
  echo "# Format: API_NAME api_key min_version max_version; 'supported'/'finalized' lines are the features."
  timeout 60 java -cp "$WORK/classes:$KCP" RecordApiVersions "$KAFKA_PORT" 9>&-
} >"$WORK/out.txt" || die "ApiVersions failed"
mv "$WORK/out.txt" "$OUT"
log "wrote $OUT"
