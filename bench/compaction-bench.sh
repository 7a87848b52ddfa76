#!/usr/bin/env bash
# Log compaction promptness: Strata vs Apache Kafka, same machine, same clients, same run.
#
# Usage: bench/compaction-bench.sh [options]
#   --runs N              runs per row and broker (default 3; medians are reported)
#   --quick               2 runs, a smaller LogCompactionTester load: checks the script works
#   --delete-retention-ms MS  delete.retention.ms of the tombstone row (default 5000)
#   --fill-bytes-per-sec N    background write rate of the tombstone row (default 524288: a 1 MiB
#                         segment rolls about every 2 s)
#   --tester-messages N   LogCompactionTester --messages (default 100000)
#   --rows "R..."         rows to run, of cleanable tombstones tester (default all three)
#   --strata-ref REF      git commit/ref of Strata to measure (default HEAD), built from `git archive`
#   --strata-jar PATH     measure this Strata jar instead of building --strata-ref
#   --out DIR             where results go (default bench/target/compaction-bench/<UTC timestamp>)
#   -h, --help            this text
#
# Both brokers run with the cleaner settings they ship with (log.cleaner.backoff.ms 15000,
# log.cleaner.threads 1, min.cleanable.dirty.ratio 0.5), and log.segment.bytes=1048576 so that
# LogCompactionTester's topics (it sets only cleanup.policy=compact) roll segments at all.
#
# Rows (bench/broker/BenchCompaction.java, kafka-clients only; see its javadoc):
#   cleanable   time from the acknowledgement of the record that rolls a full segment of a
#               compacted topic (the log becomes cleanable, dirty ratio 1.0) to the log's size
#               (DescribeLogDirs) showing it compacted; each run pauses 1-5 s first, so runs fall
#               at different points of the cleaner's backoff
#   tombstones  100 keys deleted, then a roll: time to the first cleaning (which starts
#               delete.retention.ms), then from it to the tombstones being gone from the log while
#               a background producer keeps rolling segments
#   tester      Apache Kafka's own org.apache.kafka.tools.LogCompactionTester (kafka-tools 4.4):
#               produce, sleep 5 s, consume; its "% reduction" and its validation of the result
#
# Kafka 4.4 runs as a KRaft single node (127.0.0.1:25092, controller 25093), Strata through
# bin/strata (127.0.0.1:25192); override with BENCH_COMPACTION_KAFKA_PORT,
# BENCH_COMPACTION_KAFKA_CONTROLLER_PORT, BENCH_COMPACTION_STRATA_PORT. Builds and every row hold
# /tmp/strata-build.lock (the machine's shared build lock). Only loopback addresses; every run is
# bounded by a timeout; only the processes this script started are stopped; its temp dir is
# removed on exit. Writes runs.tsv and results.md into --out and prints results.md.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
LOCK=/tmp/strata-build.lock
# shellcheck source=lib/common.sh
source "$BENCH/lib/common.sh"
KAFKA_PORT=${BENCH_COMPACTION_KAFKA_PORT:-25092}
KAFKA_CONTROLLER_PORT=${BENCH_COMPACTION_KAFKA_CONTROLLER_PORT:-25093}
STRATA_PORT=${BENCH_COMPACTION_STRATA_PORT:-25192}
RUN_TIMEOUT=900

RUNS=3
QUICK=0
DELETE_RETENTION_MS=5000
FILL_BYTES_PER_SEC=524288
TESTER_MESSAGES=100000
ROWS="cleanable tombstones tester"
STRATA_REF=HEAD
STRATA_JAR_SRC=""
OUT=""

usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS_OPT="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --delete-retention-ms) DELETE_RETENTION_MS="$2"; shift 2 ;;
    --fill-bytes-per-sec) FILL_BYTES_PER_SEC="$2"; shift 2 ;;
    --tester-messages) TESTER_MESSAGES_OPT="$2"; shift 2 ;;
    --rows) ROWS="$2"; shift 2 ;;
    --strata-ref) STRATA_REF="$2"; shift 2 ;;
    --strata-jar) STRATA_JAR_SRC="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [[ $QUICK == 1 ]]; then RUNS=2; TESTER_MESSAGES=50000; fi
[[ -n "${RUNS_OPT:-}" ]] && RUNS=$RUNS_OPT
[[ -n "${TESTER_MESSAGES_OPT:-}" ]] && TESTER_MESSAGES=$TESTER_MESSAGES_OPT
bench_start compaction-bench java javac flock timeout od base64 sort

setup_kafka
mkdir -p "$WORK/classes"
javac -nowarn -d "$WORK/classes" -cp "$KCP" "$BENCH/broker/BenchCompaction.java" || die "could not compile bench/broker/BenchCompaction.java"

prepare_strata

{
  echo "date_utc: $(date -u '+%Y-%m-%d %H:%M')"
  echo "cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores"
  echo "java: $(java -version 2>&1 | head -2 | tail -1)"
  echo "apache_kafka: $BENCH_KAFKA_VERSION (kafka_2.13; KRaft single node; -Xms1G -Xmx1G G1)"
  echo "strata_build: $STRATA_LABEL"
  echo "both: log.segment.bytes=1048576, cleaner defaults (log.cleaner.backoff.ms=15000, 1 thread, min.cleanable.dirty.ratio 0.5)"
  echo "runs_per_row: $RUNS; tombstones: delete.retention.ms=$DELETE_RETENTION_MS, background writes $FILL_BYTES_PER_SEC B/s"
  echo "tester: LogCompactionTester --messages $TESTER_MESSAGES --duplicates 10 --percent-deletes 5 --sleep 5"
} >"$RES/environment.txt"
cat "$RES/environment.txt" >&2

log "starting both brokers"
mkdir -p "$WORK/kafka" "$WORK/strata"
kafka_config "$WORK/kafka" "log.segment.bytes=1048576"
sed -i '/^log.segment.bytes=1073741824$/d' "$WORK/kafka/server.properties"
kafka_format "$WORK/kafka" || die "kafka format failed: $(tail -3 "$WORK/kafka/format.log")"
lock
kafka_launch "$WORK/kafka"
strata_launch "$WORK/strata" --override "log.segment.bytes=1048576"
wait_ready "$KAFKA_PORT" "$KAFKA_PID" || die "Kafka did not start: $(tail -5 "$WORK/kafka/broker.log")"
wait_ready "$STRATA_PORT" "$STRATA_PID" || die "Strata did not start: $(tail -5 "$WORK/strata/broker.log")"
# The lock stays held into the first row (one wait fewer on a busy machine).

printf 'row\tbroker\tstatus\tvalues\n' >"$RES/runs.tsv"
bench() { # BROKER MODE ARGS...: one BenchCompaction run, its RESULT lines into runs.tsv
  local broker=$1 mode=$2; shift 2
  local base="$RES/logs/$mode-$broker"
  timeout -k 10 "$RUN_TIMEOUT" java -Xmx512M "${JVM_PERF[@]}" "$TOOLS_LOG" -cp "$WORK/classes:$KCP" BenchCompaction "$mode" \
    "127.0.0.1:$(port_of "$broker")" "bench-$broker" "$@" >"$base.out" 2>"$base.err" 9>&-
  local rc=$? line
  while read -r line; do
    if [[ $line == *status=timeout* ]]; then printf '%s\t%s\tTIMEOUT\t%s\n' "$mode" "$broker" "$line"
    else printf '%s\t%s\tok\t%s\n' "$mode" "$broker" "$line"; fi
  done < <(sed -n 's/^RESULT //p' "$base.out") >>"$RES/runs.tsv"
  [[ $rc == 0 ]] || printf '%s\t%s\tFAIL\texit %s: %s\n' "$mode" "$broker" "$rc" "$(tail -1 "$base.err" | cut -c1-200)" >>"$RES/runs.tsv"
}
tester() { # BROKER: Kafka's LogCompactionTester
  local broker=$1 base rc line
  base="$RES/logs/tester-$broker"
  (cd "$WORK" && timeout -k 10 "$RUN_TIMEOUT" java -Xmx512M "${JVM_PERF[@]}" "$TOOLS_LOG" -Djava.io.tmpdir="$WORK" -cp "$KCP" \
      org.apache.kafka.tools.LogCompactionTester --bootstrap-server "127.0.0.1:$(port_of "$broker")" --messages "$TESTER_MESSAGES" \
      --duplicates 10 --percent-deletes 5 --sleep 5 >"$base.out" 2>"$base.err" 9>&-)
  rc=$?
  line=$(grep -m1 'reduction' "$base.out")
  if [[ $rc == 0 ]] && grep -q 'Data verification is completed' "$base.out"; then
    printf 'tester\t%s\tok\t%s; %s\n' "$broker" "$line" "$(grep -m1 'Validated' "$base.out")" >>"$RES/runs.tsv"
  else
    printf 'tester\t%s\tFAIL\texit %s: %s %s\n' "$broker" "$rc" "$line" "$(grep -m1 -i 'fail' "$base.out" "$base.err" | cut -c1-200)" >>"$RES/runs.tsv"
  fi
}

# Each row holds the build lock while it runs, Kafka first on odd rows and Strata first on even ones.
row=0
for mode in $ROWS; do
  row=$((row + 1))
  (( row > 1 )) && lock
  for b in $(order_for $row); do
    log "row $mode on $b"
    case $mode in
      cleanable) bench "$b" cleanable "$RUNS" 17 ;;
      tombstones) bench "$b" tombstones "$RUNS" "$DELETE_RETENTION_MS" "$FILL_BYTES_PER_SEC" 23 ;;
      tester) tester "$b" ;;
    esac
  done
  unlock
done

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
values_of() { # ROW BROKER KEY
  awk -F'\t' -v r="$1" -v b="$2" '$1 == r && $2 == b && $3 == "ok" { print $4 }' "$RES/runs.tsv" | tr ' ' '\n' | sed -n "s/^$3=//p"
}
list_of() { values_of "$@" | tr '\n' ' ' | sed 's/ $//'; }
{
  echo "# Compaction: Strata vs Apache Kafka $BENCH_KAFKA_VERSION"
  echo
  sed 's/^/    /' "$RES/environment.txt"
  echo
  echo "| measure (s, median of $RUNS) | Apache Kafka | Strata | runs Kafka | runs Strata |"
  echo "|---|---|---|---|---|"
  for spec in "cleanable cleanable_to_compacted_s log cleanable -> compacted" \
              "tombstones roll_to_first_clean_s roll -> first cleaning (delete.retention.ms starts)" \
              "tombstones retention_start_to_tombstones_gone_s delete.retention.ms start -> tombstones gone" \
              "tombstones beyond_delete_retention_s of which beyond delete.retention.ms"; do
    read -r r k label <<<"$spec"
    echo "| $label | $(values_of "$r" kafka "$k" | median) | $(values_of "$r" strata "$k" | median) | $(list_of "$r" kafka "$k") | $(list_of "$r" strata "$k") |"
  done
  echo
  echo "LogCompactionTester (Kafka's tool, run as is against each broker):"
  echo
  awk -F'\t' '$1 == "tester" { print "- " $2 ": " $3 ": " $4 }' "$RES/runs.tsv"
  if awk -F'\t' '$3 != "ok" && NR > 1' "$RES/runs.tsv" | grep -q .; then
    echo
    echo "Failed or timed-out runs:"
    awk -F'\t' '$3 != "ok" && NR > 1 { print "- " $1 " " $2 ": " $3 " " $4 }' "$RES/runs.tsv"
  fi
} >"$RES/results.md"
cat "$RES/results.md"
