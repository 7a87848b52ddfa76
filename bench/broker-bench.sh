#!/usr/bin/env bash
# Side-by-side benchmark: Strata vs Apache Kafka, same machine, same clients, same run.
#
# Usage: bench/broker-bench.sh [options]
#   --runs N              measured runs per row and broker (default 3; medians are reported)
#   --startup-trials N    fresh starts per broker for start-up time and idle RSS (default 3)
#   --quick               small record counts, 1 run, 1 start-up trial: checks the script works
#   --e2e-records N       round trips per EndToEndLatency/BenchE2E run (default 10,000)
#   --only REGEX          only the rows whose name matches REGEX (grep -E), e.g. 'kcat|EndToEnd'
#   --no-consumer-perf    leave out the ConsumerPerformance rows (they need consumer groups)
#   --strata-ref REF      git commit/ref of Strata to measure (default HEAD): exported with
#                         `git archive` into the temp dir and built there, so uncommitted or
#                         concurrent edits in the work tree do not leak into the measurement
#   --strata-jar PATH     measure this Strata jar instead of building --strata-ref
#   --out DIR             where results go (default bench/target/broker-bench/<UTC timestamp>)
#   -h, --help            this text
#
# What it does:
#   1. Resolves Apache Kafka (the version of the test clients, kafka.version in the root pom) from
#      Maven Central with bench/broker/pom.xml: broker (kafka_2.13) and kafka-tools.
#   2. Start-up trials, alternating brokers, each on an empty data directory: Kafka is formatted
#      (kafka-storage format --standalone) and started; Strata formats itself. Measures launch to
#      the first successful Metadata response (a raw Metadata v4 request over /dev/tcp, polled every
#      10 ms), and VmRSS 5 s after ready.
#   3. Starts both brokers (Kafka on 127.0.0.1:23092/23093, Strata on 127.0.0.1:23192; override with
#      BENCH_KAFKA_PORT, BENCH_KAFKA_CONTROLLER_PORT, BENCH_STRATA_PORT; Strata's metrics endpoint on
#      BENCH_STRATA_METRICS_PORT, default a free port), warms both
#      JVMs with one unmeasured run of each kind of load, then runs every row against each broker in
#      turn, alternating which goes first (K,S / S,K / K,S ...):
#        - kcat produce of 2,000,000 100-byte lines (acks 1/all, none/lz4, 1/8 partitions), and kcat
#          consume of the same topic (-X queued.min.messages=1000000, no group);
#        - kafka-tools ProducerPerformance (100 B x 2,000,000 and 1 KiB x 500,000 records; acks 1/all;
#          none/lz4; 1/8 partitions), and ConsumerPerformance (it joins a consumer group; its rate
#          is fetch.nMsg.sec, i.e. without the ~3.5 s group join) reading the acks=all topic back;
#        - kafka-tools EndToEndLatency (10,000 round trips; it assign()s its partitions, but calls
#          commitSync() once after printing its results, so it needs a group coordinator), and
#          bench/broker/BenchE2E.java, the same loop with microsecond percentiles (EndToEndLatency
#          truncates every sample to whole milliseconds).
#      For every run: the tool's own figures, and the CPU seconds (utime+stime from /proc/PID/stat)
#      the broker used, the client used, the idle broker used, and everything else on the machine
#      used ("foreign", to spot interference).
#   4. Writes runs.tsv, startup.tsv, results.md (medians and Strata/Kafka ratios) into --out and
#      prints results.md.
#
# JVM flags: Kafka gets what bin/kafka-server-start.sh and bin/kafka-run-class.sh set (-Xmx1G -Xms1G
# -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
# -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true); the Java tools get the same flags with
# the heap their bin/ scripts set (ProducerPerformance -Xmx512M, the others -Xmx256M). Strata runs
# through bin/strata, with the options it gives `strata server` (-Xms64m -Xmx1g, G1 with a 20 ms
# pause goal, its class-data-sharing archive).
#
# Measurements hold /tmp/strata-mvn.lock (the lock builds take) so no build runs during them: one
# row at a time (its alternating runs against both brokers, a minute or so), released between rows
# so others can build; waiting for it can make the campaign longer than its own 25-30 minutes.
# Only loopback addresses are used. Each run is bounded by a timeout. Only the processes this script
# started are stopped; its temp dir is removed on exit. Needs: java 17+, kcat, flock, timeout, od,
# base64.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
LOCK=/tmp/strata-mvn.lock
# shellcheck source=lib/common.sh
source "$BENCH/lib/common.sh"
KAFKA_PORT=${BENCH_KAFKA_PORT:-23092}
KAFKA_CONTROLLER_PORT=${BENCH_KAFKA_CONTROLLER_PORT:-23093}
STRATA_PORT=${BENCH_STRATA_PORT:-23192}
RUN_TIMEOUT=300

RUNS=3
STARTUP_TRIALS=3
QUICK=0
ONLY=""
CONSUMER_PERF=1
STRATA_REF=HEAD
STRATA_JAR_SRC=""
OUT=""

usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --startup-trials) STARTUP_TRIALS="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --only) ONLY="$2"; shift 2 ;;
    --e2e-records) E2E_RECORDS_OPT="$2"; shift 2 ;;
    --no-consumer-perf) CONSUMER_PERF=0; shift ;;
    --strata-ref) STRATA_REF="$2"; shift 2 ;;
    --strata-jar) STRATA_JAR_SRC="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
done

# Record counts. kcat rows use the issue's 2,000,000 x 100 B; the Java-tool rows are sized so that a
# run lasts several seconds on 2 cores.
KCAT_RECORDS=2000000
PP_SMALL_RECORDS=2000000   # 100 B
PP_LARGE_RECORDS=500000    # 1 KiB
E2E_RECORDS=10000
if [[ $QUICK == 1 ]]; then
  RUNS=1; STARTUP_TRIALS=1
  KCAT_RECORDS=200000; PP_SMALL_RECORDS=200000; PP_LARGE_RECORDS=50000; E2E_RECORDS=1000
fi
[[ -n "${E2E_RECORDS_OPT:-}" ]] && E2E_RECORDS=$E2E_RECORDS_OPT

bench_start broker-bench java javac kcat flock timeout od base64

# --- Apache Kafka ---------------------------------------------------------------------------------

setup_kafka
KAFKA_VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$ROOT/pom.xml" | head -1)
[[ "$KAFKA_VERSION" == "$BENCH_KAFKA_VERSION" ]] || \
  log "WARNING: bench/broker/pom.xml has Kafka $BENCH_KAFKA_VERSION, the tests use $KAFKA_VERSION"

mkdir -p "$WORK/classes"
javac -nowarn -d "$WORK/classes" -cp "$KCP" "$BENCH/broker/BenchAdmin.java" "$BENCH/broker/BenchReport.java" \
  "$BENCH/broker/BenchE2E.java" \
  || die "could not compile bench/broker helpers"

admin() { # BOOTSTRAP create PARTITIONS TOPIC... | BOOTSTRAP delete TOPIC...
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
  echo "kcat: $(kcat -V 2>&1 | sed -n 's/^Version \([^ ]*\) .*librdkafka \([^ ]*\) .*/\1 (librdkafka \2)/p')"
  echo "apache_kafka: $BENCH_KAFKA_VERSION (kafka_2.13 + kafka-tools from Maven Central)"
  echo "strata: $("$STRATA" version 2>&1 | head -1 9>&-)"
  echo "strata_build: $STRATA_LABEL"
  echo "runs_per_row: $RUNS"
  echo "records: kcat $KCAT_RECORDS x 100 B; ProducerPerformance $PP_SMALL_RECORDS x 100 B, $PP_LARGE_RECORDS x 1024 B; EndToEndLatency $E2E_RECORDS"
} >"$RES/environment.txt"
cat "$RES/environment.txt" >&2

# --- start-up trials ------------------------------------------------------------------------------

printf 'broker\ttrial\tformat_s\tready_s\tidle_rss_mb\n' >"$RES/startup.tsv"

startup_trial() { # BROKER TRIAL
  local broker=$1 trial=$2 dir="$WORK/startup-$1-$2" t0 t1 t2 fmt="" ready rss pid port
  mkdir -p "$dir"
  lock
  if [[ $broker == kafka ]]; then
    kafka_config "$dir"
    t0=$(now_ns)
    kafka_format "$dir" || { unlock; log "kafka format failed: $(tail -3 "$dir/format.log")"; return 1; }
    t1=$(now_ns)
    kafka_launch "$dir"; pid=$KAFKA_PID; port=$KAFKA_PORT
    fmt=$(secs "$t0" "$t1")
  else
    t1=$(now_ns)
    strata_launch "$dir"; pid=$STRATA_PID; port=$STRATA_PORT
  fi
  if wait_ready "$port" "$pid"; then
    t2=$(now_ns)
    ready=$(secs "$t1" "$t2")
    sleep 5
    rss=$(rss_mb "$pid")
    printf '%s\t%s\t%s\t%s\t%s\n' "$broker" "$trial" "$fmt" "$ready" "$rss" >>"$RES/startup.tsv"
    log "start-up $broker #$trial: format ${fmt:-n/a} s, ready ${ready} s, idle RSS ${rss} MB"
  else
    log "start-up $broker #$trial: not ready in 60 s; log tail: $(tail -5 "$dir/broker.log")"
  fi
  stop_pid "$pid"
  unlock
  cp "$dir/broker.log" "$RES/logs/startup-$broker-$trial.log" 2>/dev/null
  [[ $broker == kafka ]] && KAFKA_PID="" || STRATA_PID=""
  rm -rf "$dir"
}

for trial in $(seq 1 "$STARTUP_TRIALS"); do
  if (( trial % 2 == 1 )); then order=(kafka strata); else order=(strata kafka); fi
  for b in "${order[@]}"; do startup_trial "$b" "$trial"; done
done

# --- the campaign brokers -------------------------------------------------------------------------

log "starting both brokers for the throughput runs"
mkdir -p "$WORK/kafka" "$WORK/strata"
kafka_config "$WORK/kafka"
kafka_format "$WORK/kafka" || die "kafka format failed: $(tail -3 "$WORK/kafka/format.log")"
kafka_launch "$WORK/kafka"
strata_launch "$WORK/strata"
wait_ready "$KAFKA_PORT" "$KAFKA_PID" || die "Kafka did not start: $(tail -5 "$WORK/kafka/broker.log")"
wait_ready "$STRATA_PORT" "$STRATA_PID" || die "Strata did not start: $(tail -5 "$WORK/strata/broker.log")"

log "writing $KCAT_RECORDS 100-byte lines for kcat"
head -c $(( KCAT_RECORDS * 75 + 300 )) /dev/urandom | base64 -w 100 | head -n "$KCAT_RECORDS" >"$WORK/lines.txt"
printf 'compression.type=lz4\n' >"$WORK/lz4.properties"

printf 'row\ttool\tsize\tacks\tcomp\tparts\trecords\tbroker\trun\tstatus\twall_s\trec_s\tmib_s\tlat_avg\tlat_p50\tlat_p99\tlat_p999\tbroker_cpu_s\tclient_cpu_s\tother_cpu_s\tforeign_cpu_s\tnote\n' \
  >"$RES/runs.tsv"

first_error() { # FILE: the first line that looks like an error, without Java's warnings
  grep -v -E 'deprecated|WARN' "$1" 2>/dev/null | grep -m1 -E 'Exception|ERROR|Error|error|FAIL|failed' | cut -c1-300 | tr '\t' ' '
}

# measure RECORD(0|1) BROKER ROW TOOL SIZE ACKS COMP PARTS RECORDS RUN TOPIC
# One bounded run of one tool against one broker; the caller holds the build lock. Appends a line
# to runs.tsv when RECORD is 1 (0 = warm-up).
measure() {
  local record=$1 broker=$2 row=$3 tool=$4 size=$5 acks=$6 comp=$7 parts=$8 records=$9 run=${10} topic=${11}
  local port pid opid base stdin=/dev/null cmd=()
  port=$(port_of "$broker"); pid=$(pid_of "$broker"); opid=$(pid_of "$(other_of "$broker")")
  base="$RES/logs/$(echo "$row" | tr -c 'A-Za-z0-9=\n' '_')-$broker-$([[ $record == 1 ]] && echo "r$run" || echo warmup)"
  case $tool in
    ProducerPerformance)
      cmd=(java -Xmx512M "${JVM_PERF[@]}" "$TOOLS_LOG" -cp "$KCP" org.apache.kafka.tools.ProducerPerformance
           --topic "$topic" --num-records "$records" --record-size "$size" --throughput -1
           --command-property "bootstrap.servers=127.0.0.1:$port" "acks=$acks" "compression.type=$comp") ;;
    ConsumerPerformance)
      cmd=(java -Xmx512M "${JVM_PERF[@]}" "$TOOLS_LOG" -cp "$KCP" org.apache.kafka.tools.ConsumerPerformance
           --bootstrap-server "127.0.0.1:$port" --topic "$topic" --num-records "$records" --timeout 60000) ;;
    EndToEndLatency)
      cmd=(java -Xmx256M "${JVM_PERF[@]}" "$TOOLS_LOG" -cp "$KCP" org.apache.kafka.tools.EndToEndLatency
           --bootstrap-server "127.0.0.1:$port" --topic "$topic" --num-records "$records"
           --producer-acks "$acks" --record-size "$size")
      [[ $comp != none ]] && cmd+=(--command-config "$WORK/$comp.properties") ;;
    BenchE2E)
      cmd=(java -Xmx256M "${JVM_PERF[@]}" "$TOOLS_LOG" -cp "$WORK/classes:$KCP" BenchE2E
           "127.0.0.1:$port" "$topic" "$records" "$acks" "$size" "$comp") ;;
    kcat-produce)
      cmd=(kcat -P -b "127.0.0.1:$port" -t "$topic" -X "acks=$acks" -X "compression.codec=$comp")
      stdin="$WORK/lines.txt" ;;
    kcat-consume)
      # wc -l counts what arrived; the count is checked below.
      cmd=(bash -c 'kcat -C -b "$1" -t "$2" -o beginning -e -q -X queued.min.messages=1000000 | wc -l'
           _ "127.0.0.1:$port" "$topic") ;;
  esac

  local c0 c1 o0 o1 s0 s1 rc
  c0=$(cpu_ticks "$pid"); o0=$(cpu_ticks "$opid"); s0=$(sys_busy_ticks)
  local TIMEFORMAT='%3R %3U %3S'
  { time timeout -k 10 "$RUN_TIMEOUT" "${cmd[@]}" <"$stdin" >"$base.out" 2>"$base.err" 9>&- ; } 2>"$base.time"
  rc=$?
  c1=$(cpu_ticks "$pid"); o1=$(cpu_ticks "$opid"); s1=$(sys_busy_ticks)

  local wall client bcpu ocpu foreign
  read -r wall u s <"$base.time"
  client=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
  bcpu=$(awk -v a="$c0" -v b="$c1" -v t="$TCK" 'BEGIN { printf "%.2f", (b - a) / t }')
  ocpu=$(awk -v a="$o0" -v b="$o1" -v t="$TCK" 'BEGIN { printf "%.2f", (b - a) / t }')
  foreign=$(awk -v a="$s0" -v b="$s1" -v t="$TCK" -v x="$bcpu" -v y="$ocpu" -v z="$client" \
    'BEGIN { printf "%.2f", (b - a) / t - x - y - z }')

  local status=FAIL note="" rec_s="" mib_s="" avg="" p50="" p99="" p999="" line
  case $tool in
    ProducerPerformance)
      line=$(grep 'records sent' "$base.out" | grep '50th' | tail -1)
      if [[ -n "$line" ]]; then
        # N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency, P50 ms 50th, P95 ms 95th, P99 ms 99th, P999 ms 99.9th.
        read -r sent rec_s avg p50 p99 p999 < <(echo "$line" | awk -F', ' '{ split($1,a," "); split($2,b," "); split($3,c," "); split($5,d," "); split($7,e," "); split($8,f," "); split($9,g," "); print a[1], b[1], c[1], e[1], f[1], g[1] }')
        if [[ "$sent" == "$records" ]]; then status=ok; else note="only $sent of $records sent"; fi
      fi ;;
    ConsumerPerformance)
      # start.time, end.time, MB, MB.sec, nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
      line=$(grep -E '^[0-9]{4}-' "$base.out" | tail -1)
      if [[ -n "$line" ]]; then
        local n
        read -r n rec_s < <(echo "$line" | awk -F', ' '{ print $5, $10 }')
        if [[ "$n" == "$records" ]]; then status=ok; else note="consumed $n of $records"; fi
      fi ;;
    EndToEndLatency)
      avg=$(sed -n 's/^Avg latency: \([0-9.]*\) ms.*/\1/p' "$base.out")
      line=$(grep '^Percentiles:' "$base.out")
      if [[ -n "$avg" && -n "$line" ]]; then
        read -r p50 p99 p999 < <(echo "$line" | sed 's/[^0-9 ]//g; s/^ *//' | awk '{ print $2, $4, $6 }')
        status=ok
      fi ;;
    BenchE2E)
      avg=$(sed -n 's/^Avg latency ms: \([0-9.]*\).*/\1/p' "$base.out")
      line=$(grep '^Percentiles ms:' "$base.out")
      if [[ -n "$avg" && -n "$line" ]]; then
        read -r p50 p99 p999 _ < <(echo "$line" | grep -o '= [0-9.]*' | awk '{ printf "%s ", $2 }')
        status=ok
      fi ;;
    kcat-produce)
      if [[ $rc == 0 ]]; then
        # Check every record arrived: sum of the partitions' end offsets (outside the measurement).
        local q=() i n
        for ((i = 0; i < parts; i++)); do q+=(-t "$topic:$i:-1"); done
        n=$(timeout 60 kcat -Q -b "127.0.0.1:$port" "${q[@]}" 9>&- 2>&1 | awk '/ offset / { s += $4 } END { print s + 0 }')
        if [[ "$n" == "$records" ]]; then status=ok; else note="end offsets sum to $n, not $records"; fi
        rec_s=$(awk -v n="$records" -v w="$wall" 'BEGIN { printf "%.0f", n / w }')
      fi ;;
    kcat-consume)
      local n
      n=$(tr -d ' ' <"$base.out")
      if [[ $rc == 0 && "$n" == "$records" ]]; then
        status=ok
        rec_s=$(awk -v n="$records" -v w="$wall" 'BEGIN { printf "%.0f", n / w }')
      else
        note="consumed ${n:-0} of $records"
      fi ;;
  esac
  [[ -n "$rec_s" ]] && mib_s=$(awk -v r="$rec_s" -v s="$size" 'BEGIN { printf "%.2f", r * s / 1048576 }')
  if [[ $rc != 0 ]]; then
    local err
    err=$(first_error "$base.err"); [[ -z "$err" ]] && err=$(first_error "$base.out")
    [[ $rc == 124 || $rc == 137 ]] && err="timed out after ${RUN_TIMEOUT}s${err:+: $err}"
    if [[ $status == ok ]]; then
      note="${note:+$note; }exit $rc after printing its results: ${err:-no message}"
    else
      note="${note:+$note; }exit $rc: ${err:-no message}"
    fi
  fi
  [[ $status != ok && -z "$note" ]] && note="no result line in the output"

  if [[ $record == 1 ]]; then
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
      "$row" "$tool" "$size" "$acks" "$comp" "$parts" "$records" "$broker" "$run" "$status" "$wall" \
      "$rec_s" "$mib_s" "$avg" "$p50" "$p99" "$p999" "$bcpu" "$client" "$ocpu" "$foreign" "$note" >>"$RES/runs.tsv"
  fi
  log "$([[ $record == 1 ]] && echo "run $run" || echo warm-up) $broker | $row | $status rec/s=${rec_s:-–} avg=${avg:-–} p99=${p99:-–} broker_cpu=${bcpu}s client_cpu=${client}s foreign=${foreign}s${note:+ | $note}"
}

TOPIC_SEQ=0
new_topics() { # N -> TOPICS (array), fresh names
  TOPICS=()
  local i
  for ((i = 0; i < $1; i++)); do TOPICS+=("bench-$STAMP-$((TOPIC_SEQ++))"); done
}

create_topics() { # PARTITIONS TOPIC... on both brokers
  local parts=$1; shift
  local b
  for b in kafka strata; do
    admin "127.0.0.1:$(port_of $b)" create "$parts" "$@" >>"$RES/logs/admin.log" 2>&1 \
      || log "WARNING: creating topics on $b failed: $(tail -1 "$RES/logs/admin.log")"
  done
}

delete_topics() { # TOPIC... on both brokers (frees the disk between rows)
  local b
  for b in kafka strata; do
    admin "127.0.0.1:$(port_of $b)" delete "$@" >>"$RES/logs/admin.log" 2>&1 \
      || log "WARNING: deleting topics on $b failed: $(tail -1 "$RES/logs/admin.log")"
  done
}

# order_for RUN: Kafka first on odd runs, Strata first on even runs.

selected() { [[ -z "$ONLY" ]] || grep -qE "$ONLY" <<<"$1"; }

# --- warm-up --------------------------------------------------------------------------------------

log "warm-up (unmeasured): one run of each kind of load against each broker"
new_topics 4
create_topics 1 "${TOPICS[0]}" "${TOPICS[2]}" "${TOPICS[3]}"
create_topics 8 "${TOPICS[1]}"
lock
for b in kafka strata; do
  measure 0 "$b" "warm-up kcat produce" kcat-produce 100 all none 1 "$KCAT_RECORDS" 0 "${TOPICS[0]}"
  measure 0 "$b" "warm-up kcat consume" kcat-consume 100 all none 1 "$KCAT_RECORDS" 0 "${TOPICS[0]}"
  measure 0 "$b" "warm-up ProducerPerformance 1 KiB lz4 8p" ProducerPerformance 1024 all lz4 8 "$PP_LARGE_RECORDS" 0 "${TOPICS[1]}"
  measure 0 "$b" "warm-up ProducerPerformance 100 B" ProducerPerformance 100 1 none 1 "$PP_SMALL_RECORDS" 0 "${TOPICS[2]}"
  measure 0 "$b" "warm-up EndToEndLatency" EndToEndLatency 100 1 none 1 "$E2E_RECORDS" 0 "${TOPICS[3]}"
done
unlock
delete_topics "${TOPICS[@]}"

# --- kcat rows ------------------------------------------------------------------------------------

for parts in 1 8; do
  for comp in none lz4; do
    for acks in 1 all; do
      prow="kcat produce 100 B acks=$acks $comp ${parts}p"
      crow="kcat consume 100 B $comp ${parts}p"
      consume=0; [[ $acks == all ]] && selected "$crow" && consume=1
      selected "$prow" || [[ $consume == 1 ]] || continue
      new_topics "$RUNS"
      create_topics "$parts" "${TOPICS[@]}"
      lock
      for run in $(seq 1 "$RUNS"); do
        for b in $(order_for "$run"); do
          measure 1 "$b" "$prow" kcat-produce 100 "$acks" "$comp" "$parts" "$KCAT_RECORDS" "$run" "${TOPICS[$((run - 1))]}"
        done
        if [[ $consume == 1 ]]; then
          for b in $(order_for "$run"); do
            measure 1 "$b" "$crow" kcat-consume 100 "$acks" "$comp" "$parts" "$KCAT_RECORDS" "$run" "${TOPICS[$((run - 1))]}"
          done
        fi
      done
      unlock
      delete_topics "${TOPICS[@]}"
    done
  done
done

# --- ProducerPerformance (and ConsumerPerformance) rows ------------------------------------------

[[ $CONSUMER_PERF == 0 ]] && log "ConsumerPerformance rows left out (--no-consumer-perf)"
for size in 100 1024; do
  [[ $size == 100 ]] && records=$PP_SMALL_RECORDS || records=$PP_LARGE_RECORDS
  label=$([[ $size == 100 ]] && echo "100 B" || echo "1 KiB")
  for parts in 1 8; do
    for comp in none lz4; do
      for acks in 1 all; do
        prow="ProducerPerformance $label acks=$acks $comp ${parts}p"
        crow="ConsumerPerformance $label $comp ${parts}p"
        consume=0; [[ $CONSUMER_PERF == 1 && $acks == all ]] && selected "$crow" && consume=1
        selected "$prow" || [[ $consume == 1 ]] || continue
        new_topics "$RUNS"
        create_topics "$parts" "${TOPICS[@]}"
        lock
        for run in $(seq 1 "$RUNS"); do
          for b in $(order_for "$run"); do
            measure 1 "$b" "$prow" ProducerPerformance "$size" "$acks" "$comp" "$parts" "$records" "$run" "${TOPICS[$((run - 1))]}"
          done
          if [[ $consume == 1 ]]; then
            for b in $(order_for "$run"); do
              measure 1 "$b" "$crow" ConsumerPerformance "$size" "$acks" "$comp" "$parts" "$records" "$run" "${TOPICS[$((run - 1))]}"
            done
          fi
        done
        unlock
        delete_topics "${TOPICS[@]}"
      done
    done
  done
done

# --- EndToEndLatency rows -------------------------------------------------------------------------

for spec in "100 1 none 1" "100 all none 1" "1024 1 none 1" "1024 all none 1" "100 all lz4 1" "100 all none 8"; do
  read -r size acks comp parts <<<"$spec"
  label=$([[ $size == 100 ]] && echo "100 B" || echo "1 KiB")
  row="EndToEndLatency $label acks=$acks $comp ${parts}p"
  selected "$row" || continue
  new_topics "$RUNS"
  create_topics "$parts" "${TOPICS[@]}"
  lock
  for run in $(seq 1 "$RUNS"); do
    for b in $(order_for "$run"); do
      measure 1 "$b" "$row" EndToEndLatency "$size" "$acks" "$comp" "$parts" "$E2E_RECORDS" "$run" "${TOPICS[$((run - 1))]}"
    done
  done
  unlock
  delete_topics "${TOPICS[@]}"
done

# --- BenchE2E rows: the same loop as EndToEndLatency, with microsecond percentiles ---------------

for spec in "100 1 none 1" "100 all none 1" "1024 all none 1"; do
  read -r size acks comp parts <<<"$spec"
  label=$([[ $size == 100 ]] && echo "100 B" || echo "1 KiB")
  row="BenchE2E $label acks=$acks $comp ${parts}p"
  selected "$row" || continue
  new_topics "$RUNS"
  create_topics "$parts" "${TOPICS[@]}"
  lock
  for run in $(seq 1 "$RUNS"); do
    for b in $(order_for "$run"); do
      measure 1 "$b" "$row" BenchE2E "$size" "$acks" "$comp" "$parts" "$E2E_RECORDS" "$run" "${TOPICS[$((run - 1))]}"
    done
  done
  unlock
  delete_topics "${TOPICS[@]}"
done

# --- report ---------------------------------------------------------------------------------------

{
  echo "RSS after the campaign: Kafka $(rss_mb "$KAFKA_PID") MB (peak $(rss_mb "$KAFKA_PID" VmHWM) MB), Strata $(rss_mb "$STRATA_PID") MB (peak $(rss_mb "$STRATA_PID" VmHWM) MB)"
} >>"$RES/environment.txt"
cp "$WORK/kafka/broker.log" "$RES/logs/kafka-broker.log" 2>/dev/null
cp "$WORK/strata/broker.log" "$RES/logs/strata-broker.log" 2>/dev/null

{
  echo "## Broker benchmark results ($STAMP)"
  echo
  sed 's/^/    /' "$RES/environment.txt"
  echo
  java -cp "$WORK/classes" BenchReport "$RES/runs.tsv" "$RES/startup.tsv" 9>&-
} >"$RES/results.md"
cat "$RES/results.md"
log "results in $RES"
