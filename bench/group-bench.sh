#!/usr/bin/env bash
# Consumer-group benchmark: Strata vs Apache Kafka, same machine, same clients, same run.
#
# Usage: bench/group-bench.sh [options]
#   --runs N              measured runs per row and broker (default 3; medians are reported)
#   --quick               1 run, 1,000 groups, 10 consumers on 20 partitions: checks the script works
#   --consumers N         consumers joining the group in the rebalance rows (default 50)
#   --partitions N        partitions of the rebalance topic (default 100; a multiple of --consumers)
#   --groups N            groups committing in the offset-commit row (default 10,000)
#   --commit-partitions N partitions per commit (default 4)
#   --rounds N            commit rounds per run (default 3: the first creates the groups)
#   --connections N       connections of the commit client (default 32)
#   --in-flight N         requests pipelined per connection (default 32)
#   --latency-connections N  connections of the second commit row, one request in flight on each
#                         (default 4; 0 leaves the row out)
#   --no-kip848           leave out the rebalance row with group.protocol=consumer (KIP-848)
#   --strata-ref REF      git commit/ref of Strata to measure (default HEAD), exported with
#                         `git archive` into the temp dir and built there
#   --strata-jar PATH     measure this Strata jar instead of building --strata-ref
#   --out DIR             where results go (default bench/target/group-bench/<UTC timestamp>)
#   -h, --help            this text
#
# What it does:
#   1. Resolves Apache Kafka (bench/broker/pom.xml: kafka_2.13 + kafka-tools, the version the tests
#      use) as bench/broker-bench.sh does, and compiles bench/broker/BenchGroups.java (the load) and
#      BenchAdmin.java (topic set-up) against it.
#   2. Starts both brokers on loopback: Kafka 4.4 as a KRaft single node (127.0.0.1:24092, controller
#      24093) with bin/kafka-server-start.sh's JVM flags; Strata through bin/strata (127.0.0.1:24192,
#      metrics on a free port). Override the ports with BENCH_GROUP_KAFKA_PORT,
#      BENCH_GROUP_KAFKA_CONTROLLER_PORT, BENCH_GROUP_STRATA_PORT. group.initial.rebalance.delay.ms is
#      3000 ms (Kafka's default) on both, and said so in the environment of the results.
#   3. Warms both JVMs up with one unmeasured run of each load, then measures, alternating which broker
#      goes first (K,S / S,K / K,S ...):
#        - rebalance: --consumers KafkaConsumers in one JVM (group.protocol=classic with the default
#          assignors; then group.protocol=consumer) join a fresh group on a --partitions topic at
#          once; time from the release of all threads to every consumer holding exactly its share
#          (ConsumerRebalanceListener), and from the last consumer's first poll() to that moment;
#        - offset commits: --groups groups without members commit --commit-partitions offsets each,
#          one OffsetCommit request per group, --connections x --in-flight requests outstanding, for
#          --rounds rounds (the first creates the groups, the others update them): commits/s and
#          latency percentiles per round; then the same with little concurrency (--latency-connections
#          connections, one request in flight on each: latency without queueing) on the groups the
#          row before created;
#        - memory per idle group: live heap of the broker (jcmd PID GC.class_histogram, which runs a
#          full GC first, whatever -XX:+ExplicitGCInvokesConcurrent says) and RSS before and after
#          each commit run; (after - before) / --groups.
#      The broker CPU seconds (utime+stime from /proc/PID/stat) are recorded for every run, and the CPU
#      that anything else on the machine used during it ("foreign", to spot interference).
#   4. Writes runs.tsv, memory.tsv, results.md (medians and ratios) into --out and prints results.md.
#
# Measurements hold /tmp/strata-mvn.lock (the lock builds take) one row at a time, released between
# rows, so no build runs during a measurement; bench/broker-bench.sh takes the same lock per row, so
# the two interleave. Only loopback addresses are used. Every run is bounded by a timeout. Only the
# processes this script started are stopped; its temp dir is removed on exit. Needs: java 17+ with
# jcmd, flock, timeout, od, base64.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
LOCK=/tmp/strata-mvn.lock
# shellcheck source=lib/common.sh
source "$BENCH/lib/common.sh"
KAFKA_PORT=${BENCH_GROUP_KAFKA_PORT:-24092}
KAFKA_CONTROLLER_PORT=${BENCH_GROUP_KAFKA_CONTROLLER_PORT:-24093}
STRATA_PORT=${BENCH_GROUP_STRATA_PORT:-24192}
RUN_TIMEOUT=300
REBALANCE_TIMEOUT_S=120
INITIAL_REBALANCE_DELAY_MS=3000

RUNS=3
QUICK=0
CONSUMERS=50
PARTITIONS=100
NUM_GROUPS=10000
COMMIT_PARTITIONS=4
ROUNDS=3
CONNECTIONS=32
IN_FLIGHT=32
LATENCY_CONNECTIONS=4
KIP848=1
STRATA_REF=HEAD
STRATA_JAR_SRC=""
OUT=""

usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --consumers) CONSUMERS_OPT="$2"; shift 2 ;;
    --partitions) PARTITIONS_OPT="$2"; shift 2 ;;
    --groups) NUM_GROUPS_OPT="$2"; shift 2 ;;
    --commit-partitions) COMMIT_PARTITIONS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --connections) CONNECTIONS="$2"; shift 2 ;;
    --in-flight) IN_FLIGHT="$2"; shift 2 ;;
    --latency-connections) LATENCY_CONNECTIONS="$2"; shift 2 ;;
    --no-kip848) KIP848=0; shift ;;
    --strata-ref) STRATA_REF="$2"; shift 2 ;;
    --strata-jar) STRATA_JAR_SRC="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [[ $QUICK == 1 ]]; then
  RUNS=1; CONSUMERS=10; PARTITIONS=20; NUM_GROUPS=1000
fi
[[ -n "${CONSUMERS_OPT:-}" ]] && CONSUMERS=$CONSUMERS_OPT
[[ -n "${PARTITIONS_OPT:-}" ]] && PARTITIONS=$PARTITIONS_OPT
[[ -n "${NUM_GROUPS_OPT:-}" ]] && NUM_GROUPS=$NUM_GROUPS_OPT

(( PARTITIONS % CONSUMERS == 0 )) || die "--partitions ($PARTITIONS) must be a multiple of --consumers ($CONSUMERS)"
bench_start group-bench java javac jcmd flock timeout od base64

# Live heap in bytes: GC.class_histogram runs a full stop-the-world GC first (a heap inspection,
# not System.gc(), so -XX:+ExplicitGCInvokesConcurrent does not turn it into a concurrent cycle)
# and its "Total" line sums the bytes of every live object.
live_heap_bytes() { # PID
  timeout -k 5 120 jcmd "$1" GC.class_histogram 9>&- 2>/dev/null | awk '$1 == "Total" { print $3 }'
}
# Heap in use right after that GC, as the collector reports it (KB -> bytes).
used_heap_bytes() { # PID
  timeout -k 5 60 jcmd "$1" GC.heap_info 9>&- 2>/dev/null \
    | awk '/garbage-first heap/ { for (i = 1; i <= NF; i++) if ($i == "used") { v = $(i + 1); sub(/K,?$/, "", v); print v * 1024; exit } }'
}

# --- Apache Kafka ---------------------------------------------------------------------------------

setup_kafka
GROUPS_LOG="-Dlog4j2.configurationFile=$BENCH/broker/log4j2-groups.properties"

mkdir -p "$WORK/classes"
javac -nowarn -d "$WORK/classes" -cp "$KCP" "$BENCH/broker/BenchAdmin.java" "$BENCH/broker/BenchGroups.java" "$BENCH/broker/BenchRuns.java" \
  || die "could not compile bench/broker helpers"

admin() { # BOOTSTRAP create PARTITIONS TOPIC...
  timeout -k 10 180 java -Xmx256M "${JVM_PERF[@]}" "$TOOLS_LOG" -cp "$WORK/classes:$KCP" BenchAdmin "$@" 9>&-
}

# --- Strata ---------------------------------------------------------------------------------------

prepare_strata

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
  echo "group.initial.rebalance.delay.ms: $INITIAL_REBALANCE_DELAY_MS on both brokers"
  echo "runs_per_row: $RUNS"
  echo "rebalance: $CONSUMERS consumers, $PARTITIONS partitions, kafka-clients $BENCH_KAFKA_VERSION, one JVM (-Xmx512M)"
  echo "commits: $NUM_GROUPS groups x $COMMIT_PARTITIONS partitions, $ROUNDS rounds, $CONNECTIONS connections x $IN_FLIGHT in flight"
} >"$RES/environment.txt"
cat "$RES/environment.txt" >&2

# --- the brokers ----------------------------------------------------------------------------------

log "starting both brokers"
mkdir -p "$WORK/kafka" "$WORK/strata"
kafka_config "$WORK/kafka" "group.initial.rebalance.delay.ms=$INITIAL_REBALANCE_DELAY_MS"
kafka_format "$WORK/kafka" || die "kafka format failed: $(tail -3 "$WORK/kafka/format.log")"
kafka_launch "$WORK/kafka"
strata_launch "$WORK/strata" --override "group.initial.rebalance.delay.ms=$INITIAL_REBALANCE_DELAY_MS"
wait_ready "$KAFKA_PORT" "$KAFKA_PID" || die "Kafka did not start: $(tail -5 "$WORK/kafka/broker.log")"
wait_ready "$STRATA_PORT" "$STRATA_PID" || die "Strata did not start: $(tail -5 "$WORK/strata/broker.log")"

REBALANCE_TOPIC="group-bench-rebalance-${PARTITIONS}p"
COMMIT_TOPIC="group-bench-commits"
for b in kafka strata; do
  admin "127.0.0.1:$(port_of $b)" create "$PARTITIONS" "$REBALANCE_TOPIC" >>"$RES/logs/admin.log" 2>&1 \
    || die "creating $REBALANCE_TOPIC on $b failed: $(tail -1 "$RES/logs/admin.log")"
  admin "127.0.0.1:$(port_of $b)" create "$COMMIT_PARTITIONS" "$COMMIT_TOPIC" >>"$RES/logs/admin.log" 2>&1 \
    || die "creating $COMMIT_TOPIC on $b failed: $(tail -1 "$RES/logs/admin.log")"
done

printf 'row\tbroker\trun\tstatus\tvalues\tnote\n' >"$RES/runs.tsv"
printf 'row\tbroker\trun\tstatus\tvalues\tnote\n' >"$RES/memory.tsv"

first_error() { # FILE: the first line that looks like an error, without Java's warnings
  grep -v -E 'deprecated' "$1" 2>/dev/null | grep -m1 -E 'Exception|ERROR|Error|error|FAIL|failed|not fully|only' | cut -c1-300 | tr '\t' ' '
}

# harness RECORD(0|1) BROKER ROW RUN ARGS... : one bounded BenchGroups run against one broker; the
# caller holds the build lock. Appends its RESULT line, with the CPU the broker, the client, the
# idle other broker and anything else used over the whole run, to runs.tsv when RECORD is 1.
harness() {
  local record=$1 broker=$2 row=$3 run=$4; shift 4
  local pid opid base c0 c1 o0 o1 s0 s1 rc
  pid=$(pid_of "$broker"); opid=$(pid_of "$(other_of "$broker")")
  base="$RES/logs/$(echo "$row" | tr -c 'A-Za-z0-9=\n' '_')-$broker-$([[ $record == 1 ]] && echo "r$run" || echo warmup)"
  c0=$(cpu_ticks "$pid"); o0=$(cpu_ticks "$opid"); s0=$(sys_busy_ticks)
  local TIMEFORMAT='%3R %3U %3S'
  { time timeout -k 10 "$RUN_TIMEOUT" java -Xmx512M "${JVM_PERF[@]}" "$GROUPS_LOG" -Dbench.groups.log="$base.coordinator.log" \
      -cp "$WORK/classes:$KCP" BenchGroups "$@" >"$base.out" 2>"$base.err" 9>&- ; } 2>"$base.time"
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
    [[ "$values" == *failed_commits=* && "$values" =~ failed_commits=[1-9] ]] && { status=FAIL; note="some commits failed"; }
  else
    status=FAIL
    note=$(first_error "$base.err"); [[ -z "$note" ]] && note=$(tail -1 "$base.err" | cut -c1-300 | tr '\t' ' ')
    [[ $rc == 124 || $rc == 137 ]] && note="timed out after ${RUN_TIMEOUT}s${note:+: $note}"
    note="exit $rc: ${note:-no message}"
  fi
  values="$values run_wall_s=$wall run_broker_cpu_s=$bcpu run_client_cpu_s=$client run_other_broker_cpu_s=$ocpu run_foreign_cpu_s=$foreign"
  [[ $record == 1 ]] && printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$row" "$broker" "$run" "$status" "$values" "$note" >>"$RES/runs.tsv"
  log "$([[ $record == 1 ]] && echo "run $run" || echo warm-up) $broker | $row | $status | $values${note:+ | $note}"
  [[ $status == ok ]]
}

GROUP_SEQ=0
rebalance_run() { # RECORD BROKER ROW RUN PROTOCOL
  local group="group-bench-$5-$STAMP-$((GROUP_SEQ++))"
  harness "$1" "$2" "$3" "$4" rebalance "127.0.0.1:$(port_of "$2")" "$REBALANCE_TOPIC" "$PARTITIONS" "$CONSUMERS" "$5" \
    "$group" "$REBALANCE_TIMEOUT_S" "$(pid_of "$2")"
}

commit_prefix() { # RECORD BROKER RUN
  echo "g$STAMP-$2-$([[ $1 == 1 ]] && echo "r$3" || echo warmup)"
}

commit_run() { # RECORD BROKER ROW RUN GROUPS ROUNDS: memory before and after, around the commit load
  local record=$1 broker=$2 row=$3 run=$4 groups=$5 rounds=$6 pid prefix lb la ub ua rb ra status=ok note=""
  pid=$(pid_of "$broker")
  prefix=$(commit_prefix "$record" "$broker" "$run")
  lb=$(live_heap_bytes "$pid"); ub=$(used_heap_bytes "$pid"); rb=$(rss_mb "$pid" VmRSS 1)
  harness "$record" "$broker" "$row" "$run" commit "127.0.0.1:$(port_of "$broker")" "$COMMIT_TOPIC" "$COMMIT_PARTITIONS" \
    "$groups" "$prefix" "$rounds" "$CONNECTIONS" "$IN_FLIGHT" "$pid" || { status=FAIL; note="the commit run failed"; }
  la=$(live_heap_bytes "$pid"); ua=$(used_heap_bytes "$pid"); ra=$(rss_mb "$pid" VmRSS 1)
  [[ -n "$lb" && -n "$la" ]] || { status=FAIL; note="${note:+$note; }jcmd GC.class_histogram gave no total"; }
  local values
  values=$(awk -v lb="${lb:-0}" -v la="${la:-0}" -v ub="${ub:-0}" -v ua="${ua:-0}" -v rb="${rb:-0}" -v ra="${ra:-0}" -v n="$groups" \
    'BEGIN { printf "groups=%d bytes_per_group=%.0f used_bytes_per_group=%.0f live_before_mb=%.1f live_after_mb=%.1f used_before_mb=%.1f used_after_mb=%.1f rss_before_mb=%s rss_after_mb=%s rss_bytes_per_group=%.0f",
             n, (la - lb) / n, (ua - ub) / n, lb / 1048576, la / 1048576, ub / 1048576, ua / 1048576, rb, ra, (ra - rb) * 1048576 / n }')
  [[ $record == 1 ]] && printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$MEMORY_ROW" "$broker" "$run" "$status" "$values" "$note" >>"$RES/memory.tsv"
  log "$([[ $record == 1 ]] && echo "run $run" || echo warm-up) $broker | memory | $status | $values"
}

REBALANCE_CLASSIC_ROW="rebalance classic $CONSUMERS consumers ${PARTITIONS}p"
REBALANCE_CONSUMER_ROW="rebalance consumer (KIP-848) $CONSUMERS consumers ${PARTITIONS}p"
COMMIT_ROW="commit $NUM_GROUPS groups x ${COMMIT_PARTITIONS}p"
LATENCY_ROW="commit $NUM_GROUPS groups x ${COMMIT_PARTITIONS}p, $LATENCY_CONNECTIONS connections x 1 in flight"
MEMORY_ROW="$NUM_GROUPS idle groups, $COMMIT_PARTITIONS committed offsets each, no members"

# --- warm-up --------------------------------------------------------------------------------------

log "warm-up (unmeasured): one run of each load against each broker"
lock
for b in kafka strata; do
  rebalance_run 0 "$b" "warm-up rebalance classic" 0 classic
  [[ $KIP848 == 1 ]] && rebalance_run 0 "$b" "warm-up rebalance consumer" 0 consumer
  commit_run 0 "$b" "warm-up commit" 0 "$NUM_GROUPS" 1
done
unlock

# --- rows -----------------------------------------------------------------------------------------

protocols=(classic); [[ $KIP848 == 1 ]] && protocols+=(consumer)
for protocol in "${protocols[@]}"; do
  [[ $protocol == classic ]] && row=$REBALANCE_CLASSIC_ROW || row=$REBALANCE_CONSUMER_ROW
  lock
  for run in $(seq 1 "$RUNS"); do
    for b in $(order_for "$run"); do rebalance_run 1 "$b" "$row" "$run" "$protocol"; done
  done
  unlock
done

lock
for run in $(seq 1 "$RUNS"); do
  for b in $(order_for "$run"); do commit_run 1 "$b" "$COMMIT_ROW" "$run" "$NUM_GROUPS" "$ROUNDS"; done
done
unlock

# Little concurrency: the groups of the row above (so every round updates), one request in flight per
# connection, so the latency is the broker's service time rather than queueing behind 1,000 others.
if (( LATENCY_CONNECTIONS > 0 )); then
  lock
  for run in $(seq 1 "$RUNS"); do
    for b in $(order_for "$run"); do
      harness 1 "$b" "$LATENCY_ROW" "$run" commit "127.0.0.1:$(port_of "$b")" "$COMMIT_TOPIC" "$COMMIT_PARTITIONS" \
        "$NUM_GROUPS" "$(commit_prefix 1 "$b" "$run")" 2 "$LATENCY_CONNECTIONS" 1 "$(pid_of "$b")"
    done
  done
  unlock
fi

# --- report ---------------------------------------------------------------------------------------

{
  echo "RSS at the end: Kafka $(rss_mb "$KAFKA_PID") MB (peak $(rss_mb "$KAFKA_PID" VmHWM) MB), Strata $(rss_mb "$STRATA_PID") MB (peak $(rss_mb "$STRATA_PID" VmHWM) MB)"
} >>"$RES/environment.txt"
cp "$WORK/kafka/broker.log" "$RES/logs/kafka-broker.log" 2>/dev/null
cp "$WORK/strata/broker.log" "$RES/logs/strata-broker.log" 2>/dev/null

{
  echo "## Consumer-group benchmark results ($STAMP)"
  echo
  sed 's/^/    /' "$RES/environment.txt"
  echo
  java -cp "$WORK/classes:$KCP" BenchGroups report "$RES/runs.tsv" "$RES/memory.tsv" 9>&-
} >"$RES/results.md"
cat "$RES/results.md"
log "results in $RES"
