#!/usr/bin/env bash
# Replication benchmark (issue 13): a 3-node Strata cluster vs a 3-node Apache Kafka KRaft cluster,
# RF 3, acks=all, same machine, same run, one cluster after the other (never both at once).
#
# Usage: flock /tmp/strata-build.lock bench/replication-bench.sh [options]
#   --order "strata kafka"   which cluster runs first (default: strata kafka)
#   --only strata|kafka      measure one cluster only
#   --phases LIST            comma-separated subset of throughput,latency,failover,catchup (default: all)
#   --pp-small-records N     ProducerPerformance records of 100 B (default 1000000)
#   --pp-large-records N     ProducerPerformance records of 1 KiB (default 500000)
#   --warmup-records N       unmeasured ProducerPerformance 100 B records before the throughput rows
#                            (default 6000000: with fewer, C2 compilation still took half of the
#                            brokers' CPU during the measured rows)
#   --kcat-records N         kcat records of 100 B (default 1000000, the issue's baseline)
#   --kcat-large-records N   kcat records of 1 KiB (default 200000)
#   --latency-rate N         end-to-end latency: records/s of 1 KiB (default 1000: Kafka's acks=all RF 3
#                            saturates near 5,000/s of 1 KiB with the Java client's defaults on 2 cores)
#   --latency-seconds S      end-to-end latency: measured seconds (default 30, after 5 s of warm-up)
#   --failover-rounds N      kill -9 rounds of a partition leader that is not the controller (default 3)
#   --pause-s S              the SIGSTOP round's pause (default 12, past the 9 s session timeout; 0 = none)
#   --catchup-mb MB          what the stopped follower falls behind (default 1024)
#   --no-build               use tools/target/strata.jar and bench/target/benchmarks.jar as they are
#   --out DIR                where results go (default bench/target/replication-bench/<UTC timestamp>)
#   -h, --help               this text
#
# Run it under /tmp/strata-build.lock, the lock every build and benchmark on this machine takes: it
# builds (./mvnw package -pl tools,bench -am, never install) and measures while holding it, and
# refuses to start when nobody holds the lock.
#
# Each cluster is started as bench/cluster-bench.sh starts it (Strata: `bin/strata cluster --nodes 3
# --heap 1g`, whose node command lines are then reused to run the nodes directly, so that a node can
# be killed and started again; Kafka: 3 x kafka.Kafka, formatted with the same cluster id, static
# voters, Kafka's config/server.properties otherwise), then, per phase:
#   throughput  three fresh topics (6 partitions, RF 3, min.insync.replicas=2, made with Kafka's
#               kafka-topics, org.apache.kafka.tools.TopicCommand); after an unmeasured warm-up,
#               Kafka's kafka-producer-perf-test (org.apache.kafka.tools.ProducerPerformance,
#               acks=all, enable.idempotence=true, --throughput -1) with N x 100 B and N x 1 KiB, and
#               `kcat -P -X acks=all` of N pre-generated 100-byte lines (the issue's baseline) and of
#               N 1024-byte lines (every record is checked to have arrived from the end offsets). Reported: records/s, MB/s
#               (10^6 B of values) and the broker CPU (utime+stime from /proc/PID/stat of the three
#               node processes, summed) per GB (10^9 B of values) produced. A fencing watch runs
#               alongside (throughput_live_fenced: brokers reported fenced while all were up).
#               Then throughput_replicated: whether every node's log dir holds every partition's
#               bytes (a cluster that reports a full ISR without copying the data fails it).
#   latency     io.strata.bench.ReplicationBench: a fixed-rate acks=all producer through node 1, a
#               consumer through node 2, receive - scheduled send, p50/p99/p99.9/max (LatencyPhase).
#   failover    kill -9 of the leader of a 1-partition RF 3 topic while an idempotent acks=all
#               producer with Kafka's default timeouts writes 1000 records/s: kill -> the first
#               ack of a record sent after the kill; N rounds whose leader is not the active
#               controller, 1 round whose leader is, 1 SIGSTOP round (FailoverPhase).
#   catchup     a follower stopped (SIGTERM), 1 GB produced, started again: restart -> back in the
#               ISR of every partition, MB/s (CatchUpPhase).
# RESULT lines (RESULT <cluster> <measure> <value>) go to stdout and to OUT/results.txt and
# bench/target/replication-bench-results.txt; when both clusters ran, `RESULT ratio <measure>
# <strata/kafka>` lines follow for every measure both reported as a number.
#
# Ports (loopback only): Strata 26092-26094 (+100 controllers, +200 metrics), Kafka 27092-27094
# (+100 controllers); override with BENCH_REPL_STRATA_BASE_PORT / BENCH_REPL_KAFKA_BASE_PORT.
# Only processes this script started are signalled; its temp dir is removed on exit (the node logs
# are kept under OUT/logs). Needs java 17+, kcat, flock, timeout.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
LOCK=/tmp/strata-build.lock
# shellcheck source=lib/common.sh
source "$BENCH/lib/common.sh"
# The caller holds the lock for the whole run (see the header); common.sh's own taking of it would
# wait for ourselves.
lock() { :; }
unlock() { :; }

STRATA_BASE=${BENCH_REPL_STRATA_BASE_PORT:-26092}
KAFKA_BASE=${BENCH_REPL_KAFKA_BASE_PORT:-27092}
NODES=3
PARTITIONS=6
ORDER="strata kafka"
PHASES=throughput,latency,failover,catchup
PP_SMALL_RECORDS=1000000
PP_LARGE_RECORDS=500000
WARMUP_RECORDS=6000000
KCAT_RECORDS=1000000
KCAT_LARGE_RECORDS=200000
LATENCY_RATE=1000
LATENCY_SECONDS=30
FAILOVER_ROUNDS=3
PAUSE_S=12
CATCHUP_MB=1024
RUN_TIMEOUT=300
BUILD=1
OUT=""

usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
while (( $# )); do
  case $1 in
    --order|--only) ORDER=$2; shift ;;
    --phases) PHASES=$2; shift ;;
    --pp-small-records) PP_SMALL_RECORDS=$2; shift ;;
    --pp-large-records) PP_LARGE_RECORDS=$2; shift ;;
    --warmup-records) WARMUP_RECORDS=$2; shift ;;
    --kcat-records) KCAT_RECORDS=$2; shift ;;
    --kcat-large-records) KCAT_LARGE_RECORDS=$2; shift ;;
    --latency-rate) LATENCY_RATE=$2; shift ;;
    --latency-seconds) LATENCY_SECONDS=$2; shift ;;
    --failover-rounds) FAILOVER_ROUNDS=$2; shift ;;
    --pause-s) PAUSE_S=$2; shift ;;
    --catchup-mb) CATCHUP_MB=$2; shift ;;
    --no-build) BUILD=0 ;;
    --out) OUT=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done

if flock -n "$LOCK" true; then
  die "nobody holds $LOCK: run this as flock $LOCK $0"
fi
for tool in java kcat timeout; do command -v $tool >/dev/null || die "$tool is not installed"; done

OUT=${OUT:-$BENCH/target/replication-bench/$(date -u +%Y%m%dT%H%M%SZ)}
RES=$OUT
mkdir -p "$RES/logs"
RES="$(cd "$RES" && pwd)"
RESULTS="$RES/results.txt"
WORK="$(mktemp -d /tmp/strata-replication-bench.XXXXXX)"
LAUNCHER_PID=""
KAFKA_PID=""
STRATA_PID=""
WATCH_PID=""
DRIVER_PID=""

# Every node process this script (or the driver, through restart-node.sh) started has its pid in
# WORK/<cluster>/node-N/server.pid; the Strata launcher's is LAUNCHER_PID.
stop_nodes() { # CLUSTER_DIR
  local f
  for f in "$1"/node-*/server.pid; do
    # CONT first: a node the failover phase paused would not act on the TERM.
    [[ -f $f ]] && kill -CONT "$(cat "$f")" 2>/dev/null && kill -TERM "$(cat "$f")" 2>/dev/null
  done
  for f in "$1"/node-*/server.pid; do
    [[ -f $f ]] && stop_pid "$(cat "$f")" && rm -f "$f"
  done
}
cleanup() {
  trap - EXIT INT TERM
  stop_pid "$DRIVER_PID"
  stop_pid "$WATCH_PID"
  stop_pid "$LAUNCHER_PID"
  local dir
  for dir in "$WORK/strata" "$WORK/kafka"; do
    [[ -d $dir ]] || continue
    stop_nodes "$dir"
    find "$dir" -maxdepth 2 -name '*.log' -print0 | while IFS= read -r -d '' f; do
      cp "$f" "$RES/logs/$(basename "$dir")-$(basename "$(dirname "$f")")-$(basename "$f")"
    done
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ms() { date +%s%3N; }
want() { [[ ",$PHASES," == *",$1,"* ]]; }
bootstrap_of() { # BASE_PORT
  local n list=""
  for n in $(seq 1 $NODES); do list+="${list:+,}127.0.0.1:$(( $1 + n - 1 ))"; done
  echo "$list"
}
data_dirs_of() { # CLUSTER_DIR (both clusters keep node N's log dir in CLUSTER_DIR/node-N/data)
  local n list=""
  for n in $(seq 1 $NODES); do list+="${list:+,}$1/node-$n/data"; done
  echo "$list"
}
pid_files_of() { # CLUSTER_DIR
  local n list=""
  for n in $(seq 1 $NODES); do list+="${list:+,}$1/node-$n/server.pid"; done
  echo "$list"
}
result() { echo "RESULT $1 $2 $3" | tee -a "$RESULTS"; } # CLUSTER MEASURE VALUE

# The Java drivers (kafka-clients' SLF4J has no provider in the jar: its warning is dropped).
# Run in the background and waited for, so that an INT or TERM reaches the trap at once (bash runs a
# trap only after the foreground command ends) and cleanup stops the driver (DRIVER_PID).
java_driver() { # CLASS ARGS...
  local rc
  java -Xmx1g -Xms64m -cp "$BENCH/target/benchmarks.jar" "$@" 9>&- 2> >(grep -v '^SLF4J' >&2) &
  DRIVER_PID=$!
  wait "$DRIVER_PID"
  rc=$?
  DRIVER_PID=""
  return $rc
}
rdriver() { java_driver io.strata.bench.ReplicationBench --out "$RESULTS" "$@"; }
kafka_tool() { # CLASS ARGS...: one of Kafka's command-line tools, with its bin/ script's heap
  java -Xmx512M "${JVM_PERF[@]}" "$TOOLS_LOG" -cp "$KCP" "$@" 9>&-
}

# WORK/restart-node.sh CLUSTER_DIR NODE: starts node NODE with the command line saved (NUL-separated)
# in CLUSTER_DIR/node-NODE/cmdline, output appended to its server.log, pid into its server.pid.
cat >"$WORK/restart-node.sh" <<'SH'
#!/usr/bin/env bash
set -u
dir=$1/node-$2
mapfile -d '' -t argv <"$dir/cmdline"
nohup "${argv[@]}" >>"$dir/server.log" 2>&1 </dev/null 9>&- &
echo $! >"$dir/server.pid"
SH
chmod +x "$WORK/restart-node.sh"

# Waits until every node's Metadata lists every broker (ClusterBench's startup phase); 1 if not in 180 s.
await_ready() { # NAME BASE_PORT
  local out="$WORK/ready-$1.txt"
  rm -f "$out"
  java_driver io.strata.bench.ClusterBench --name "$1" --bootstrap "$(bootstrap_of "$2")" --phases startup \
    --launched-at-ms "$(now_ms)" --out "$out" >/dev/null
  grep -q "startup_s [0-9]" "$out" 2>/dev/null || { log "$1: not ready: $(grep NOT_MEASURED "$out" 2>/dev/null)"; return 1; }
}

# Starts every node of CLUSTER_DIR that is not running (a phase may have left one down) and waits.
ensure_up() { # NAME CLUSTER_DIR BASE_PORT
  local n pid restarted=0
  for n in $(seq 1 $NODES); do
    pid=$(cat "$2/node-$n/server.pid" 2>/dev/null)
    if [[ -z "$pid" ]] || ! kill -0 "$pid" 2>/dev/null; then
      log "$1: node $n is not running (see its server.log); starting it again"
      result "$1" "node${n}_restarted_before_next_phase" 1
      "$WORK/restart-node.sh" "$2" "$n"
      restarted=1
    fi
  done
  (( restarted == 0 )) || await_ready "$1" "$3"
}

node_cpu_ticks() { # CLUSTER_DIR: utime+stime of the node processes, summed
  local n sum=0
  for n in $(seq 1 $NODES); do sum=$(( sum + $(cpu_ticks "$(cat "$1/node-$n/server.pid")") )); done
  echo $sum
}

# ---- throughput -----------------------------------------------------------------------------------

create_topic() { # BOOTSTRAP TOPIC
  kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$1" --create --topic "$2" \
    --partitions $PARTITIONS --replication-factor $NODES --config min.insync.replicas=2 \
    >>"$RES/logs/topics.log" 2>&1
}

# produce_row NAME CLUSTER_DIR BOOTSTRAP ROW TOOL SIZE RECORDS TOPIC RECORD(0|1): one measured run.
produce_row() {
  local name=$1 dir=$2 bootstrap=$3 row=$4 tool=$5 size=$6 records=$7 topic=$8 record=$9
  local base="$RES/logs/$name-$row" stdin=/dev/null cmd=() c0 c1 rc wall sent rec_s="" q=() i n
  case $tool in
    ProducerPerformance)
      cmd=(java -Xmx512M "${JVM_PERF[@]}" "$TOOLS_LOG" -cp "$KCP" org.apache.kafka.tools.ProducerPerformance
           --topic "$topic" --num-records "$records" --record-size "$size" --throughput -1
           --command-property "bootstrap.servers=$bootstrap" acks=all enable.idempotence=true) ;;
    kcat)
      cmd=(kcat -P -b "$bootstrap" -t "$topic" -X acks=all)
      stdin="$WORK/lines-$size.txt" ;;
  esac
  c0=$(node_cpu_ticks "$dir")
  local TIMEFORMAT='%3R'
  { time timeout -k 10 "$RUN_TIMEOUT" "${cmd[@]}" <"$stdin" >"$base.out" 2>"$base.err" 9>&- ; } 2>"$base.time"
  rc=$?
  c1=$(node_cpu_ticks "$dir")
  wall=$(tail -1 "$base.time")
  (( record )) || { log "$name: warm-up $row done (exit $rc)"; return 0; }
  if [[ $rc != 0 ]]; then
    result "$name" "tp_${row}_rec_s" "NOT_MEASURED exit_${rc}:_$(grep -m1 -E 'Exception|ERROR|rror' "$base.err" "$base.out" | cut -c1-200 | tr ' ' '_')"
    return 1
  fi
  case $tool in
    ProducerPerformance)
      # "N records sent, R records/sec (M MB/sec), ..." (the final line, with the percentiles)
      read -r sent rec_s < <(grep 'records sent' "$base.out" | grep '50th' | tail -1 | awk -F', ' '{ split($1,a," "); split($2,b," "); print a[1], b[1] }')
      [[ "$sent" == "$records" ]] || { result "$name" "tp_${row}_rec_s" "NOT_MEASURED only_${sent:-0}_of_${records}_sent"; return 1; } ;;
    kcat)
      for ((i = 0; i < PARTITIONS; i++)); do q+=(-t "$topic:$i:-1"); done
      n=$(timeout 60 kcat -Q -b "$bootstrap" "${q[@]}" 9>&- 2>&1 | awk '/ offset / { s += $4 } END { print s + 0 }')
      [[ "$n" == "$records" ]] || { result "$name" "tp_${row}_rec_s" "NOT_MEASURED end_offsets_sum_to_${n}_not_${records}"; return 1; }
      rec_s=$(awk -v n="$records" -v w="$wall" 'BEGIN { printf "%.1f", n / w }') ;;
  esac
  result "$name" "tp_${row}_rec_s" "$rec_s"
  result "$name" "tp_${row}_mb_s" "$(awk -v r="$rec_s" -v s="$size" 'BEGIN { printf "%.2f", r * s / 1e6 }')"
  result "$name" "tp_${row}_wall_s" "$wall"
  result "$name" "tp_${row}_broker_cpu_s" "$(awk -v a="$c0" -v b="$c1" -v t="$TCK" 'BEGIN { printf "%.2f", (b - a) / t }')"
  result "$name" "tp_${row}_cpu_s_per_gb" \
    "$(awk -v a="$c0" -v b="$c1" -v t="$TCK" -v n="$records" -v s="$size" 'BEGIN { printf "%.1f", (b - a) / t / (n * s / 1e9) }')"
}

throughput() { # NAME CLUSTER_DIR BASE_PORT
  local name=$1 dir=$2 bootstrap t prefix="tp-$(date +%s)"
  bootstrap=$(bootstrap_of "$3")
  log "$name: throughput (RF $NODES, $PARTITIONS partitions, acks=all)"
  for t in warmup pp100 pp1k kcat100 kcat1k; do
    create_topic "$bootstrap" "$prefix-$t" || { result "$name" tp_create_topics "NOT_MEASURED see_logs/topics.log"; return 1; }
  done
  rdriver --name "$name" --bootstrap "$bootstrap" --phases await-replicated \
    --topics "$prefix-warmup,$prefix-pp100,$prefix-pp1k,$prefix-kcat100,$prefix-kcat1k" \
    || { result "$name" tp_topics_replicated "NOT_MEASURED the_topics_never_had_a_full_ISR"; return 1; }
  rm -f "$WORK/stop-watch"
  # Started as java itself (not through rdriver in a subshell), so that WATCH_PID is the JVM's pid.
  java -Xmx256m -Xms32m -cp "$BENCH/target/benchmarks.jar" io.strata.bench.ReplicationBench --out "$RESULTS" \
    --name "$name" --bootstrap "$bootstrap" --phases watch --stop-file "$WORK/stop-watch" --label throughput \
    9>&- 2>"$RES/logs/$name-watch.err" &
  WATCH_PID=$!
  # Unmeasured warm-up, to a topic of its own: the JIT of freshly started brokers costs CPU-seconds
  # of its own. Measured with perf on Strata's nodes: after 0.5 M records C2 compiler threads still
  # took ~50% of the brokers' CPU during the 1 M-record row (and halved its rate); after 6 M, ~12%.
  # Both clusters get the same warm-up, so the rows compare steady states.
  produce_row "$name" "$dir" "$bootstrap" warmup ProducerPerformance 100 "$WARMUP_RECORDS" "$prefix-warmup" 0
  produce_row "$name" "$dir" "$bootstrap" warmup-kcat kcat 100 "$KCAT_RECORDS" "$prefix-warmup" 0
  produce_row "$name" "$dir" "$bootstrap" pp_100B ProducerPerformance 100 "$PP_SMALL_RECORDS" "$prefix-pp100" 1
  produce_row "$name" "$dir" "$bootstrap" pp_1KiB ProducerPerformance 1024 "$PP_LARGE_RECORDS" "$prefix-pp1k" 1
  produce_row "$name" "$dir" "$bootstrap" kcat_100B kcat 100 "$KCAT_RECORDS" "$prefix-kcat100" 1
  produce_row "$name" "$dir" "$bootstrap" kcat_1KiB kcat 1024 "$KCAT_LARGE_RECORDS" "$prefix-kcat1k" 1
  touch "$WORK/stop-watch"
  wait "$WATCH_PID"
  WATCH_PID=""
  # Whether the followers really hold what the leaders acknowledged (a full ISR alone does not say).
  rdriver --name "$name" --bootstrap "$bootstrap" --phases verify-replicas --label throughput --partitions $PARTITIONS \
    --data-dirs "$(data_dirs_of "$dir")" --topics "$prefix-warmup,$prefix-pp100,$prefix-pp1k,$prefix-kcat100,$prefix-kcat1k"
}

# ---- one cluster ----------------------------------------------------------------------------------

phases_on() { # NAME CLUSTER_DIR BASE_PORT: every phase asked for, on a running cluster
  local name=$1 dir=$2 base=$3 common
  common=(--name "$name" --bootstrap "$(bootstrap_of "$base")" --pid-files "$(pid_files_of "$dir")"
          --restart-command "$WORK/restart-node.sh $dir" --data-dirs "$(data_dirs_of "$dir")")
  if want throughput; then throughput "$name" "$dir" "$base"; ensure_up "$name" "$dir" "$base"; fi
  if want latency; then
    log "$name: latency ($LATENCY_RATE records/s x 1 KiB, ${LATENCY_SECONDS} s)"
    rdriver "${common[@]}" --phases latency --latency-rate "$LATENCY_RATE" --latency-seconds "$LATENCY_SECONDS"
    ensure_up "$name" "$dir" "$base"
  fi
  if want failover; then
    log "$name: failover ($FAILOVER_ROUNDS kill rounds, 1 controller kill round, pause ${PAUSE_S} s)"
    rdriver "${common[@]}" --phases failover --failover-rounds "$FAILOVER_ROUNDS" --pause-s "$PAUSE_S"
    ensure_up "$name" "$dir" "$base"
  fi
  if want catchup; then
    log "$name: catch-up (${CATCHUP_MB} MB behind)"
    rdriver "${common[@]}" --phases catchup --catchup-mb "$CATCHUP_MB"
    ensure_up "$name" "$dir" "$base"
  fi
}

measure_strata() {
  local dir="$WORK/strata" n pid
  mkdir -p "$dir"
  for n in $(seq 0 $(( NODES - 1 ))); do
    port_in_use $(( STRATA_BASE + n )) && die "port $(( STRATA_BASE + n )) is in use"
  done
  log "strata: launching $NODES nodes (bin/strata cluster --heap 1g)"
  "$STRATA" cluster --nodes $NODES --dir "$dir" --base-port "$STRATA_BASE" --heap 1g >"$dir/launcher.log" 2>&1 9>&- &
  LAUNCHER_PID=$!
  await_ready strata "$STRATA_BASE" || { result strata cluster NOT_MEASURED_not_ready; return 1; }
  for n in $(seq 1 $NODES); do
    pid=$(cat "$dir/node-$n/server.pid" 2>/dev/null) && cp "/proc/$pid/cmdline" "$dir/node-$n/cmdline" \
      || { log "strata: node $n is not running; see $RES/logs"; return 1; }
  done
  log "strata: stopping the launcher, starting the nodes directly"
  stop_pid "$LAUNCHER_PID"
  LAUNCHER_PID=""
  stop_nodes "$dir"
  for n in $(seq 1 $NODES); do "$WORK/restart-node.sh" "$dir" "$n"; done
  await_ready strata "$STRATA_BASE" || { result strata cluster NOT_MEASURED_not_ready_after_restart; return 1; }
  phases_on strata "$dir" "$STRATA_BASE"
  stop_nodes "$dir"
}

kafka_node_config() { # DIR NODE_ID: server.properties of a combined node of the 3-node cluster
  local id=$2 voters="" n
  for n in $(seq 1 $NODES); do voters+="${voters:+,}$n@127.0.0.1:$(( KAFKA_BASE + 100 + n - 1 ))"; done
  cat >"$1/server.properties" <<PROPS
# KRaft 3-node cluster, combined broker+controller nodes with a static voter set: Kafka's
# config/server.properties with loopback addresses, this node's ports and log.dirs.
process.roles=broker,controller
node.id=$id
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$(( KAFKA_BASE + id - 1 )),CONTROLLER://127.0.0.1:$(( KAFKA_BASE + 100 + id - 1 ))
inter.broker.listener.name=PLAINTEXT
advertised.listeners=PLAINTEXT://127.0.0.1:$(( KAFKA_BASE + id - 1 ))
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
PROPS
  kafka_shared_properties "$1" >>"$1/server.properties"
}

measure_kafka() {
  local dir="$WORK/kafka" n cid
  for n in $(seq 0 $(( NODES - 1 ))); do
    port_in_use $(( KAFKA_BASE + n )) && die "port $(( KAFKA_BASE + n )) is in use"
    port_in_use $(( KAFKA_BASE + 100 + n )) && die "port $(( KAFKA_BASE + 100 + n )) is in use"
  done
  cid=-
  while [[ $cid == -* ]]; do cid=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '='); done
  for n in $(seq 1 $NODES); do
    mkdir -p "$dir/node-$n"
    kafka_node_config "$dir/node-$n" "$n"
    # Static voters (controller.quorum.voters): Kafka 4 formats them without --standalone.
    java -Xmx256M "${JVM_PERF[@]}" "$TOOLS_LOG" -cp "$KCP" kafka.tools.StorageTool format -t "$cid" \
      -c "$dir/node-$n/server.properties" >"$dir/node-$n/format.log" 2>&1 9>&- \
      || die "kafka format of node $n failed: $(tail -3 "$dir/node-$n/format.log")"
    printf '%s\0' java -Xmx1G -Xms1G "${JVM_PERF[@]}" "$BROKER_LOG" -Dkafka.logs.dir="$dir/node-$n/logs" -cp "$KCP" \
      kafka.Kafka "$dir/node-$n/server.properties" >"$dir/node-$n/cmdline"
  done
  log "kafka: launching $NODES nodes (kafka.Kafka, -Xmx1G -Xms1G)"
  for n in $(seq 1 $NODES); do "$WORK/restart-node.sh" "$dir" "$n"; done
  await_ready kafka "$KAFKA_BASE" || { result kafka cluster NOT_MEASURED_not_ready; return 1; }
  phases_on kafka "$dir" "$KAFKA_BASE"
  stop_nodes "$dir"
}

# ---- main -----------------------------------------------------------------------------------------

if (( BUILD )); then
  log "building tools and bench (package, offline first)"
  (cd "$ROOT" && { ./mvnw -B -ntp -o -q -DskipTests -pl tools,bench -am package 9>&- \
      || ./mvnw -B -ntp -q -DskipTests -pl tools,bench -am package 9>&-; }) >"$RES/logs/build.log" 2>&1 \
    || die "build failed (see $RES/logs/build.log)"
fi
[[ -f "$BENCH/target/benchmarks.jar" ]] || die "no bench/target/benchmarks.jar; run without --no-build"

setup_kafka
STRATA_LABEL="not measured"
if [[ " $ORDER " == *" strata "* ]]; then
  [[ -f "$ROOT/tools/target/strata.jar" ]] || die "no tools/target/strata.jar; run without --no-build"
  STRATA_JAR_SRC="$ROOT/tools/target/strata.jar"
  prepare_strata
fi
if want throughput; then
  log "writing $KCAT_RECORDS 100-byte and $KCAT_LARGE_RECORDS 1024-byte lines for kcat"
  head -c $(( KCAT_RECORDS * 75 + 300 )) /dev/urandom | base64 -w 100 | head -n "$KCAT_RECORDS" >"$WORK/lines-100.txt"
  head -c $(( KCAT_LARGE_RECORDS * 768 + 3000 )) /dev/urandom | base64 -w 1024 | head -n "$KCAT_LARGE_RECORDS" >"$WORK/lines-1024.txt"
fi

{
  echo "# replication-bench $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# machine: $(nproc) cpu $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
  echo "# java: $(java -version 2>&1 | head -2 | tr '\n' ' ')"
  echo "# strata: $STRATA_LABEL; tree $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . || echo '+dirty')"
  echo "# kafka: Apache Kafka $BENCH_KAFKA_VERSION; kcat $(kcat -V 2>&1 | sed -n 's/^Version \([^ ]*\) .*librdkafka \([^ ]*\) .*/\1 (librdkafka \2)/p')"
  echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# phases: $PHASES; records: warm-up $WARMUP_RECORDS x 100 B; ProducerPerformance $PP_SMALL_RECORDS x 100 B, $PP_LARGE_RECORDS x 1 KiB; kcat $KCAT_RECORDS x 100 B, $KCAT_LARGE_RECORDS x 1 KiB;" \
    "latency $LATENCY_RATE/s x 1 KiB x ${LATENCY_SECONDS} s; failover $FAILOVER_ROUNDS+1 kills, pause ${PAUSE_S} s; catch-up $CATCHUP_MB MB"
} | tee "$RESULTS" >&2

for cluster in $ORDER; do
  case $cluster in
    strata) measure_strata ;;
    kafka) measure_kafka ;;
    *) die "unknown cluster $cluster" ;;
  esac
done

# Strata / Kafka for every measure both clusters reported as a plain number; none for a phase whose
# data a cluster did not replicate (its figures are not replication figures).
awk '$1 == "RESULT" && ($2 == "strata" || $2 == "kafka") && $4 ~ /^[0-9.]+$/ && NF == 4 { v[$2, $3] = $4; m[$3] = 1 }
     $1 == "RESULT" && $3 == "throughput_replicated" && $4 == "no" { bad["tp_"] = bad["tp_"] "_" $2 }
     $1 == "RESULT" && $3 == "latency_replicated" && $4 == "no" { bad["latency_"] = bad["latency_"] "_" $2 }
     END {
       for (p in bad) printf "RESULT ratio %s* NOT_MEASURED not_replicated_by%s\n", p, bad[p]
       for (k in m) {
         skip = 0
         for (p in bad) if (index(k, p) == 1) skip = 1
         if (!skip && (("strata", k) in v) && (("kafka", k) in v) && v["kafka", k] + 0 > 0)
           printf "RESULT ratio %s %.2f\n", k, v["strata", k] / v["kafka", k]
       }
     }' "$RESULTS" | sort | tee -a "$RESULTS"

mkdir -p "$BENCH/target"
cp "$RESULTS" "$BENCH/target/replication-bench-results.txt"
log "results: $RESULTS and $BENCH/target/replication-bench-results.txt"
