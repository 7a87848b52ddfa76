#!/usr/bin/env bash
# Exactly-once produce benchmark: Strata vs Apache Kafka, same machine, same client, same run.
#
# Usage: bench/eos-bench.sh [options]
#   --runs N              measured runs per row and broker (default 3; medians are reported)
#   --quick               1 run, a tenth of the records: checks the script works
#   --small-records N     100-byte records per run (default 1,000,000; a multiple of 1,000)
#   --large-records N     1 KiB records per run (default 250,000; a multiple of 1,000)
#   --strata-ref REF      git commit/ref of Strata to measure (default HEAD), exported with
#                         `git archive` into the temp dir and built there, so uncommitted or
#                         concurrent edits in the work tree do not leak into the measurement
#   --strata-jar PATH     measure this Strata jar instead of building --strata-ref
#   --out DIR             where results go (default bench/target/eos-bench/<UTC timestamp>)
#   -h, --help            this text
#
# What it does:
#   1. Resolves Apache Kafka (bench/broker/pom.xml: kafka_2.13 + kafka-tools, the version the tests
#      use) as bench/broker-bench.sh does, and compiles bench/broker/BenchEos.java (the load and the
#      report) and BenchAdmin.java (topic set-up) against it.
#   2. Starts both brokers on loopback: Kafka as a KRaft single node (127.0.0.1:25092, controller
#      25093) with bin/kafka-server-start.sh's JVM flags; Strata through bin/strata (127.0.0.1:25192,
#      metrics on a free port). Override the ports with BENCH_EOS_KAFKA_PORT,
#      BENCH_EOS_KAFKA_CONTROLLER_PORT, BENCH_EOS_STRATA_PORT. Records both brokers' finalized feature
#      levels (Admin.describeFeatures; transaction.version 2 = KIP-890 transactions v2).
#   3. Warms both JVMs up with one unmeasured run of each producer mode, then, for 100 B and 1 KiB
#      records on a fresh topic of 1 and of 8 partitions, measures three rows with one KafkaProducer
#      (kafka-clients of the same version, acks=all, client defaults otherwise), alternating which
#      broker goes first (K,S / S,K / K,S ...):
#        - non-idempotent: enable.idempotence=false;
#        - idempotent: enable.idempotence=true (the default);
#        - transactional: beginTransaction, 1,000 sends, commitTransaction, repeated; commit latency is
#          the time commitTransaction() takes.
#      Every run: records/s, MB/s, broker CPU seconds (utime+stime from /proc/PID/stat) while
#      producing, per GB; for transactions, transactions/s and commit p50/p99, and whether the client
#      ran transactions v2. The script also records the CPU of the whole run (JVM start included) for
#      the broker, the client, the idle other broker and everything else ("foreign", to spot
#      interference).
#   4. Writes runs.tsv and results.md (medians, Strata/Kafka ratios, each broker's idempotent and
#      transactional throughput relative to its non-idempotent one) into --out and prints results.md.
#
# Measurements hold /tmp/strata-mvn.lock (the lock builds take) one row at a time, released between
# rows, so no build and no other benchmark taking the lock per row runs during a measurement. The
# campaign measures for about 10 minutes; waiting for the lock can make it longer. Only loopback
# addresses are used. Every run is bounded by a timeout. Only the processes this script started are
# stopped; its temp dir is removed on exit. Needs: java 17+, flock, timeout, od, base64.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
LOCK=/tmp/strata-mvn.lock
# shellcheck source=lib/common.sh
source "$BENCH/lib/common.sh"
KAFKA_PORT=${BENCH_EOS_KAFKA_PORT:-25092}
KAFKA_CONTROLLER_PORT=${BENCH_EOS_KAFKA_CONTROLLER_PORT:-25093}
STRATA_PORT=${BENCH_EOS_STRATA_PORT:-25192}
RUN_TIMEOUT=300
RECORDS_PER_TRANSACTION=1000

RUNS=3
QUICK=0
SMALL_RECORDS=1000000    # 100 B
LARGE_RECORDS=250000     # 1 KiB
STRATA_REF=HEAD
STRATA_JAR_SRC=""
OUT=""

usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --small-records) SMALL_RECORDS_OPT="$2"; shift 2 ;;
    --large-records) LARGE_RECORDS_OPT="$2"; shift 2 ;;
    --strata-ref) STRATA_REF="$2"; shift 2 ;;
    --strata-jar) STRATA_JAR_SRC="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [[ $QUICK == 1 ]]; then
  RUNS=1; SMALL_RECORDS=100000; LARGE_RECORDS=25000
fi
[[ -n "${SMALL_RECORDS_OPT:-}" ]] && SMALL_RECORDS=$SMALL_RECORDS_OPT
[[ -n "${LARGE_RECORDS_OPT:-}" ]] && LARGE_RECORDS=$LARGE_RECORDS_OPT

for n in "$SMALL_RECORDS" "$LARGE_RECORDS"; do
  (( n > 0 && n % RECORDS_PER_TRANSACTION == 0 )) || die "record counts must be positive multiples of $RECORDS_PER_TRANSACTION: $n"
done
bench_start eos-bench java javac flock timeout od base64

# --- Apache Kafka ---------------------------------------------------------------------------------

setup_kafka

mkdir -p "$WORK/classes"
javac -nowarn -d "$WORK/classes" -cp "$KCP" "$BENCH/broker/BenchAdmin.java" "$BENCH/broker/BenchEos.java" "$BENCH/broker/BenchRuns.java" \
  || die "could not compile bench/broker helpers"

tool() { # CLASS ARGS...: a short helper run on Kafka's client
  timeout -k 10 180 java -Xmx256M "${JVM_PERF[@]}" "$TOOLS_LOG" -cp "$WORK/classes:$KCP" "$@" 9>&-
}

# --- Strata ---------------------------------------------------------------------------------------

prepare_strata

# --- the brokers ----------------------------------------------------------------------------------

log "starting both brokers"
mkdir -p "$WORK/kafka" "$WORK/strata"
kafka_config "$WORK/kafka"
kafka_format "$WORK/kafka" || die "kafka format failed: $(tail -3 "$WORK/kafka/format.log")"
kafka_launch "$WORK/kafka"
strata_launch "$WORK/strata"
wait_ready "$KAFKA_PORT" "$KAFKA_PID" || die "Kafka did not start: $(tail -5 "$WORK/kafka/broker.log")"
wait_ready "$STRATA_PORT" "$STRATA_PID" || die "Strata did not start: $(tail -5 "$WORK/strata/broker.log")"

# --- environment ----------------------------------------------------------------------------------

{
  echo "date_utc: $(date -u '+%Y-%m-%d %H:%M')"
  echo "cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores"
  echo "memory: $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "kernel: $(uname -sr)"
  echo "java: $(java -version 2>&1 | head -2 | tail -1)"
  echo "apache_kafka: $BENCH_KAFKA_VERSION (kafka_2.13 from Maven Central; KRaft single node; -Xms1G -Xmx1G G1)"
  echo "strata: $("$STRATA" version 2>&1 | head -1 9>&-) (bin/strata server: -Xms64m -Xmx1g G1)"
  echo "strata_build: $STRATA_LABEL"
  echo "kafka_features: $(tool BenchEos features "127.0.0.1:$KAFKA_PORT" 2>"$RES/logs/features-kafka.err")"
  echo "strata_features: $(tool BenchEos features "127.0.0.1:$STRATA_PORT" 2>"$RES/logs/features-strata.err")"
  echo "client: kafka-clients $BENCH_KAFKA_VERSION, one producer in its own JVM (-Xmx512M), acks=all, defaults otherwise (batch.size 16384, linger.ms 5, no compression, no keys)"
  echo "runs_per_row: $RUNS"
  echo "records: $SMALL_RECORDS x 100 B, $LARGE_RECORDS x 1024 B per run; $RECORDS_PER_TRANSACTION records per transaction"
} >"$RES/environment.txt"
cat "$RES/environment.txt" >&2

printf 'row\tbroker\trun\tstatus\tvalues\tnote\n' >"$RES/runs.tsv"

first_error() { # FILE: the first line that looks like an error, without Java's warnings
  grep -v -E 'deprecated' "$1" 2>/dev/null | grep -m1 -E 'Exception|ERROR|Error|error|FAIL|failed|acknowledged' | cut -c1-300 | tr '\t' ' '
}

# produce_run RECORD(0|1) BROKER ROW RUN TOPIC MODE RECORD_BYTES RECORDS: one bounded BenchEos run
# against one broker; the caller holds the build lock. Appends its RESULT line, with the CPU the
# broker, the client, the idle other broker and anything else used over the whole run, to runs.tsv
# when RECORD is 1.
produce_run() {
  local record=$1 broker=$2 row=$3 run=$4 topic=$5 mode=$6 bytes=$7 records=$8
  local pid opid base c0 c1 o0 o1 s0 s1 rc txn_id
  pid=$(pid_of "$broker"); opid=$(pid_of "$(other_of "$broker")")
  base="$RES/logs/$(echo "$row" | tr -c 'A-Za-z0-9=\n' '_')-$broker-$([[ $record == 1 ]] && echo "r$run" || echo warmup)"
  txn_id="eos-bench-$STAMP-$broker-$(echo "$row" | tr -c 'A-Za-z0-9\n' '-')-$([[ $record == 1 ]] && echo "r$run" || echo warmup)"
  c0=$(cpu_ticks "$pid"); o0=$(cpu_ticks "$opid"); s0=$(sys_busy_ticks)
  local TIMEFORMAT='%3R %3U %3S'
  { time timeout -k 10 "$RUN_TIMEOUT" java -Xmx512M "${JVM_PERF[@]}" "$TOOLS_LOG" -cp "$WORK/classes:$KCP" \
      BenchEos produce "127.0.0.1:$(port_of "$broker")" "$topic" "$mode" "$bytes" "$records" "$RECORDS_PER_TRANSACTION" \
      "$txn_id" "$pid" >"$base.out" 2>"$base.err" 9>&- ; } 2>"$base.time"
  rc=$?
  c1=$(cpu_ticks "$pid"); o1=$(cpu_ticks "$opid"); s1=$(sys_busy_ticks)
  local wall u s client bcpu ocpu foreign values status note=""
  read -r wall u s <"$base.time"
  client=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
  bcpu=$(awk -v a="$c0" -v b="$c1" -v t="$TCK" 'BEGIN { printf "%.2f", (b - a) / t }')
  ocpu=$(awk -v a="$o0" -v b="$o1" -v t="$TCK" 'BEGIN { printf "%.2f", (b - a) / t }')
  foreign=$(awk -v a="$s0" -v b="$s1" -v t="$TCK" -v x="$bcpu" -v y="$ocpu" -v z="$client" \
    'BEGIN { printf "%.2f", (b - a) / t - x - y - z }')
  values=$(sed -n 's/^RESULT //p' "$base.out" | tail -1)
  if [[ $rc == 0 && -n "$values" ]]; then
    status=ok
  else
    status=FAIL
    note=$(first_error "$base.err"); [[ -z "$note" ]] && note=$(tail -1 "$base.err" | cut -c1-300 | tr '\t' ' ')
    [[ $rc == 124 || $rc == 137 ]] && note="timed out after ${RUN_TIMEOUT}s${note:+: $note}"
    note="exit $rc: ${note:-no message}"
  fi
  # The client logs a WARN for every produce it retries; CONCURRENT_TRANSACTIONS means the previous
  # transaction was still completing when this one's first batch reached the partition leader.
  values="$values concurrent_transactions_retries=$(grep -c 'Error: CONCURRENT_TRANSACTIONS' "$base.err")"
  values="$values run_wall_s=$wall run_broker_cpu_s=$bcpu run_client_cpu_s=$client run_other_broker_cpu_s=$ocpu run_foreign_cpu_s=$foreign"
  [[ $record == 1 ]] && printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$row" "$broker" "$run" "$status" "$values" "$note" >>"$RES/runs.tsv"
  log "$([[ $record == 1 ]] && echo "run $run" || echo warm-up) $broker | $row | $status | $values${note:+ | $note}"
  [[ $status == ok ]]
}

create_topic() { # PARTITIONS TOPIC: on both brokers
  local b
  for b in kafka strata; do
    tool BenchAdmin "127.0.0.1:$(port_of $b)" create "$1" "$2" >>"$RES/logs/admin.log" 2>&1 \
      || die "creating $2 on $b failed: $(tail -1 "$RES/logs/admin.log")"
  done
}

delete_topic() { # TOPIC: on both brokers, to keep the data directories small
  local b
  for b in kafka strata; do
    tool BenchAdmin "127.0.0.1:$(port_of $b)" delete "$1" >>"$RES/logs/admin.log" 2>&1 \
      || log "deleting $1 on $b failed: $(tail -1 "$RES/logs/admin.log")"
  done
}

mode_name() { case $1 in plain) echo non-idempotent ;; *) echo "$1" ;; esac; }

# --- warm-up --------------------------------------------------------------------------------------

log "warm-up (unmeasured): one run of each mode against each broker"
create_topic 1 eos-bench-warmup
lock
for b in kafka strata; do
  for mode in plain idempotent transactional; do
    produce_run 0 "$b" "warm-up, $(mode_name $mode)" 0 eos-bench-warmup "$mode" 100 "$SMALL_RECORDS"
  done
done
unlock
delete_topic eos-bench-warmup

# --- rows -----------------------------------------------------------------------------------------

for bytes in 100 1024; do
  [[ $bytes == 100 ]] && records=$SMALL_RECORDS || records=$LARGE_RECORDS
  [[ $bytes == 100 ]] && size="100 B" || size="1 KiB"
  for partitions in 1 8; do
    topic="eos-bench-${bytes}b-${partitions}p"
    create_topic "$partitions" "$topic"
    for mode in plain idempotent transactional; do
      row="$size, ${partitions}p, $(mode_name $mode)"
      lock
      for run in $(seq 1 "$RUNS"); do
        for b in $(order_for "$run"); do produce_run 1 "$b" "$row" "$run" "$topic" "$mode" "$bytes" "$records"; done
      done
      unlock
    done
    delete_topic "$topic"
  done
done

# --- report ---------------------------------------------------------------------------------------

{
  echo "RSS at the end: Kafka $(rss_mb "$KAFKA_PID") MB (peak $(rss_mb "$KAFKA_PID" VmHWM) MB), Strata $(rss_mb "$STRATA_PID") MB (peak $(rss_mb "$STRATA_PID" VmHWM) MB)"
  echo "broker log lines at WARN or above: Kafka $(grep -c -E ' (WARN|ERROR) ' "$WORK/kafka/broker.log"), Strata $(grep -c -E '(WARN|ERROR)' "$WORK/strata/broker.log")"
} >>"$RES/environment.txt"
cp "$WORK/kafka/broker.log" "$RES/logs/kafka-broker.log" 2>/dev/null
cp "$WORK/strata/broker.log" "$RES/logs/strata-broker.log" 2>/dev/null

{
  echo "## Exactly-once benchmark results ($STAMP)"
  echo
  sed 's/^/    /' "$RES/environment.txt"
  echo
  java -cp "$WORK/classes:$KCP" BenchEos report "$RES/runs.tsv" 9>&-
} >"$RES/results.md"
cat "$RES/results.md"
log "results in $RES"
