#!/usr/bin/env bash
# Cluster benchmark: a 3-node Strata cluster vs a 3-node Apache Kafka KRaft cluster, same machine,
# same run, one cluster after the other (never both at once).
#
# Usage: flock /tmp/strata-build.lock bench/cluster-bench.sh [options]
#   --order "strata kafka"   which cluster runs first (default: strata kafka)
#   --only strata|kafka      measure one cluster only
#   --propagation-rounds N   topics created one by one for the propagation figure (default 100)
#   --partitions N           partitions of the big topic of step 4 (default 9999, the most Kafka 4.4
#                            takes in one CreateTopics: 1 TopicRecord + N PartitionRecords must fit
#                            its hard-coded MAX_RECORDS_PER_USER_OP = 10000)
#   --big-partitions N       partitions of the topic of step 7 (default 10000)
#   --failover-rounds N      controller kills (default 5)
#   --phases LIST            comma-separated subset of startup,rss,propagation,partitions,restart,
#                            failover,big (default: all); startup always runs (it launches the
#                            cluster) and restart runs whenever failover does (the rounds need
#                            directly started nodes)
#   --no-build               use tools/target/strata.jar and bench/target/benchmarks.jar as they are
#   --out DIR                where results go (default bench/target/cluster-bench/<UTC timestamp>)
#   -h, --help               this text
#
# Run it under /tmp/strata-build.lock, the lock every build and benchmark on this machine takes: it
# builds (./mvnw package -pl tools,bench -am, never install) and measures while holding it, and
# refuses to start when nobody holds the lock.
#
# For each cluster (the driver is io.strata.bench.ClusterBench in bench/, see its javadoc):
#   1. launch the 3 nodes (Strata: `bin/strata cluster --nodes 3 --heap 1g`, which starts one child
#      JVM per node; Kafka: 3 x `kafka.Kafka`, each formatted first with `kafka.tools.StorageTool
#      format` and the same cluster id, static controller.quorum.voters); start-up = launch until
#      every node, asked alone with a Metadata request, lists 3 brokers;
#   2. after 10 s idle, VmRSS of each node process (Strata: the pids in DIR/node-N/server.pid;
#      the launcher's own RSS is reported apart);
#   3. 100 x CreateTopics (1 partition, RF 1) through node 1, then until every node's Metadata shows
#      the topic with a leader: p50 / p99 / max;
#   4. one CreateTopics of a 9,999-partition topic (RF 1) through node 1: until it returns, and until
#      every node's Metadata shows 9,999 partitions with leaders, and until the nodes' log dirs
#      (DescribeLogDirs) hold all 9,999 logs (Metadata can name a leader before its log exists);
#   5. stop the cluster (SIGTERM) and start its 3 node processes directly, with the command lines
#      they ran with (for Strata: the launcher's children's; the launcher treats a node that exits as
#      fatal and stops the whole cluster, so a kill -9 must not happen under it): the time to ready
#      again, with the partitions of steps 3-4, is reported as `<name>_restart startup_s`;
#   6. 5 rounds: find the active controller (DescribeQuorum through node 1), kill -9 its process,
#      CreateTopics through the next node until one succeeds (kill -> success), restart the node and
#      wait until it is a caught-up voter that lists every broker again;
#   7. step 4 again with a 10,000-partition topic (Kafka 4.4 refuses it: PolicyViolationException),
#      last, so that steps 5-6 ran on the same number of partitions in both clusters.
# RESULT lines go to stdout and to bench/target/cluster-bench-results.txt (and OUT/results.txt).
#
# JVMs: Kafka nodes get bin/kafka-server-start.sh's flags (-Xmx1G -Xms1G -server -XX:+UseG1GC
# -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent);
# Strata nodes what `strata cluster --heap 1g` gives its children (-Xms32m -Xmx1g, the JVM's default
# G1, bin/strata's class-data-sharing archive). Ports (loopback only): Strata 24092-24094 (+100
# controllers, +200 metrics), Kafka 25092-25094 (+100 controllers); override with
# BENCH_CLUSTER_STRATA_BASE_PORT / BENCH_CLUSTER_KAFKA_BASE_PORT. Only processes this script started
# are stopped; its temp dir is removed on exit (the node logs are kept under OUT/logs).
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

STRATA_BASE=${BENCH_CLUSTER_STRATA_BASE_PORT:-24092}
KAFKA_BASE=${BENCH_CLUSTER_KAFKA_BASE_PORT:-25092}
NODES=3
ORDER="strata kafka"
PROPAGATION_ROUNDS=100
PARTITIONS=9999
BIG_PARTITIONS=10000
FAILOVER_ROUNDS=5
PHASES=startup,rss,propagation,partitions,restart,failover,big
BUILD=1
OUT=""

usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
while (( $# )); do
  case $1 in
    --order) ORDER=$2; shift ;;
    --only) ORDER=$2; shift ;;
    --propagation-rounds) PROPAGATION_ROUNDS=$2; shift ;;
    --partitions) PARTITIONS=$2; shift ;;
    --big-partitions) BIG_PARTITIONS=$2; shift ;;
    --failover-rounds) FAILOVER_ROUNDS=$2; shift ;;
    --phases) PHASES=$2; shift ;;
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

OUT=${OUT:-$BENCH/target/cluster-bench/$(date -u +%Y%m%dT%H%M%SZ)}
RES=$OUT
mkdir -p "$RES/logs"
RESULTS="$RES/results.txt"
WORK="$(mktemp -d /tmp/strata-cluster-bench.XXXXXX)"
LAUNCHER_PID=""
KAFKA_PID=""
STRATA_PID=""

# Every node process this script (or the driver, through restart-node.sh) started has its pid in
# WORK/<cluster>/node-N/server.pid; the Strata launcher's is LAUNCHER_PID.
stop_nodes() { # CLUSTER_DIR
  local f
  for f in "$1"/node-*/server.pid; do
    [[ -f $f ]] && kill -TERM "$(cat "$f")" 2>/dev/null
  done
  for f in "$1"/node-*/server.pid; do
    [[ -f $f ]] && stop_pid "$(cat "$f")" && rm -f "$f"
  done
}
cleanup() {
  trap - EXIT INT TERM
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

# BENCH_CLUSTER_DRIVER_CP (appended to the driver's classpath, e.g. an SLF4J provider jar) and
# BENCH_CLUSTER_DRIVER_OPTS (JVM options) are for looking into the clients' logs; unset by default.
driver() { # ARGS...: the Java driver (kafka-clients' SLF4J has no provider in the jar: its warning is dropped)
  # shellcheck disable=SC2086
  java -Xmx512m -Xms64m ${BENCH_CLUSTER_DRIVER_OPTS:-} -cp "$BENCH/target/benchmarks.jar${BENCH_CLUSTER_DRIVER_CP:+:$BENCH_CLUSTER_DRIVER_CP}" \
    io.strata.bench.ClusterBench --out "$RESULTS" "$@" 9>&- \
    2> >(grep -v '^SLF4J' >&2)
}
now_ms() { date +%s%3N; }
want() { [[ ",$PHASES," == *",$1,"* ]]; }
# The driver's phases of the first run: startup, then those of rss, propagation, partitions asked for.
first_phases() {
  local list=startup p
  for p in rss propagation partitions; do want $p && list+=",$p"; done
  echo "$list"
}
bootstrap_of() { # BASE_PORT
  local n list=""
  for n in $(seq 1 $NODES); do list+="${list:+,}127.0.0.1:$(( $1 + n - 1 ))"; done
  echo "$list"
}
pid_files_of() { # CLUSTER_DIR
  local n list=""
  for n in $(seq 1 $NODES); do list+="${list:+,}$1/node-$n/server.pid"; done
  echo "$list"
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

restart_all() { # NAME CLUSTER_DIR BASE_PORT: stop every node, start them again directly, time to ready
  local n launched
  stop_nodes "$2"
  launched=$(now_ms)
  for n in $(seq 1 $NODES); do "$WORK/restart-node.sh" "$2" "$n"; done
  driver --name "$1_restart" --bootstrap "$(bootstrap_of "$3")" --phases startup --launched-at-ms "$launched"
}

measure_strata() {
  local dir="$WORK/strata" n pid launched
  mkdir -p "$dir"
  for n in $(seq 0 $(( NODES - 1 ))); do
    port_in_use $(( STRATA_BASE + n )) && die "port $(( STRATA_BASE + n )) is in use"
  done
  log "strata: launching $NODES nodes (bin/strata cluster --heap 1g)"
  launched=$(now_ms)
  "$STRATA" cluster --nodes $NODES --dir "$dir" --base-port "$STRATA_BASE" --heap 1g >"$dir/launcher.log" 2>&1 9>&- &
  LAUNCHER_PID=$!
  driver --name strata --bootstrap "$(bootstrap_of "$STRATA_BASE")" --pid-files "$(pid_files_of "$dir")" \
    --launched-at-ms "$launched" --launcher-pid "$LAUNCHER_PID" --phases "$(first_phases)" \
    --propagation-rounds "$PROPAGATION_ROUNDS" --partitions "$PARTITIONS"
  for n in $(seq 1 $NODES); do
    pid=$(cat "$dir/node-$n/server.pid" 2>/dev/null) && cp "/proc/$pid/cmdline" "$dir/node-$n/cmdline" \
      || { log "strata: node $n is not running; see $RES/logs"; return 1; }
  done
  log "strata: node command line: $(tr '\0' ' ' <"$dir/node-1/cmdline" | cut -c1-400)"
  log "strata: stopping the launcher, restarting the nodes directly"
  stop_pid "$LAUNCHER_PID"
  LAUNCHER_PID=""
  if want restart || want failover; then restart_all strata "$dir" "$STRATA_BASE"; fi
  if want failover; then
    log "strata: failover"
    driver --name strata --bootstrap "$(bootstrap_of "$STRATA_BASE")" --pid-files "$(pid_files_of "$dir")" \
      --phases failover --failover-rounds "$FAILOVER_ROUNDS" --restart-command "$WORK/restart-node.sh $dir"
  fi
  if want big; then
    driver --name strata --bootstrap "$(bootstrap_of "$STRATA_BASE")" --phases partitions --partitions "$BIG_PARTITIONS"
  fi
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
  local dir="$WORK/kafka" n cid launched t0
  for n in $(seq 0 $(( NODES - 1 ))); do
    port_in_use $(( KAFKA_BASE + n )) && die "port $(( KAFKA_BASE + n )) is in use"
    port_in_use $(( KAFKA_BASE + 100 + n )) && die "port $(( KAFKA_BASE + 100 + n )) is in use"
  done
  cid=-
  while [[ $cid == -* ]]; do cid=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '='); done
  t0=$(now_ms)
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
  echo "RESULT kafka format_3_nodes_s $(secs "${t0}000000" "$(now_ms)000000")" | tee -a "$RESULTS"
  log "kafka: launching $NODES nodes (kafka.Kafka, -Xmx1G -Xms1G)"
  launched=$(now_ms)
  for n in $(seq 1 $NODES); do "$WORK/restart-node.sh" "$dir" "$n"; done
  driver --name kafka --bootstrap "$(bootstrap_of "$KAFKA_BASE")" --pid-files "$(pid_files_of "$dir")" \
    --launched-at-ms "$launched" --phases "$(first_phases)" \
    --propagation-rounds "$PROPAGATION_ROUNDS" --partitions "$PARTITIONS"
  if want restart || want failover; then
    log "kafka: restarting the nodes"
    restart_all kafka "$dir" "$KAFKA_BASE"
  fi
  if want failover; then
    log "kafka: failover"
    driver --name kafka --bootstrap "$(bootstrap_of "$KAFKA_BASE")" --pid-files "$(pid_files_of "$dir")" \
      --phases failover --failover-rounds "$FAILOVER_ROUNDS" --restart-command "$WORK/restart-node.sh $dir"
  fi
  if want big; then
    driver --name kafka --bootstrap "$(bootstrap_of "$KAFKA_BASE")" --phases partitions --partitions "$BIG_PARTITIONS"
  fi
  stop_nodes "$dir"
}

if (( BUILD )); then
  log "building tools and bench (package, offline first)"
  (cd "$ROOT" && { ./mvnw -B -ntp -o -q -DskipTests -pl tools,bench -am package 9>&- \
      || ./mvnw -B -ntp -q -DskipTests -pl tools,bench -am package 9>&-; }) >"$RES/logs/build.log" 2>&1 \
    || die "build failed (see $RES/logs/build.log)"
fi
[[ -f "$BENCH/target/benchmarks.jar" && -f "$ROOT/tools/target/strata.jar" ]] || die "no jars; run without --no-build"

setup_kafka
STRATA_JAR_SRC="$ROOT/tools/target/strata.jar"
prepare_strata

{
  echo "# cluster-bench $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# machine: $(nproc) cpu $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
  echo "# java: $(java -version 2>&1 | head -2 | tr '\n' ' ')"
  echo "# strata: $STRATA_LABEL; tree $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . || echo '+dirty')"
  echo "# kafka: Apache Kafka $BENCH_KAFKA_VERSION"
  echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# phases: $PHASES"
} | tee "$RESULTS" >&2

for cluster in $ORDER; do
  case $cluster in
    strata) measure_strata ;;
    kafka) measure_kafka ;;
    *) die "unknown cluster $cluster" ;;
  esac
done

mkdir -p "$BENCH/target"
cp "$RESULTS" "$BENCH/target/cluster-bench-results.txt"
log "results: $RESULTS and $BENCH/target/cluster-bench-results.txt"
