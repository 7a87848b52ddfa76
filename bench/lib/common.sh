# Shared by the side-by-side benchmark scripts (broker-bench.sh, group-bench.sh, eos-bench.sh):
# logging, the build lock, process control, readiness probes, /proc accounting, and starting
# Apache Kafka. Sourced, not run. Expects from the script: LOCK (the lock file, opened on fd 9 by
# the script), KAFKA_PID / STRATA_PID / WORK (for cleanup), KAFKA_PORT / KAFKA_CONTROLLER_PORT /
# STRATA_PORT, and ROOT, BENCH, RES, STRATA_REF / STRATA_JAR_SRC (for prepare_strata).
# setup_kafka sets KCP, JVM_PERF, TOOLS_LOG and BROKER_LOG, which the Kafka functions use.

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

stop_pid() { # PID: TERM, up to 30 s, then KILL. Only ever called with a PID this script started.
  local pid=$1 i
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    sleep 0.1
  done
  log "pid $pid did not stop in 30 s; killing it"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

# Apache Kafka's jars (bench/broker/pom.xml) and the JVM settings of Kafka's own scripts: sets
# BENCH_KAFKA_VERSION, KCP (the jars' classpath, resolved once into bench/broker/target, offline
# first since they are usually cached), JVM_PERF, TOOLS_LOG and BROKER_LOG.
setup_kafka() {
  JVM_PERF=(-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
            -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true)
  TOOLS_LOG="-Dlog4j2.configurationFile=$BENCH/broker/log4j2-tools.properties"
  BROKER_LOG="-Dlog4j2.configurationFile=$BENCH/broker/log4j2-broker.properties"
  BENCH_KAFKA_VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$BENCH/broker/pom.xml" | head -1)
  local cp_file="$BENCH/broker/target/classpath.txt" rc
  if [[ ! -s "$cp_file" || "$BENCH/broker/pom.xml" -nt "$cp_file" ]]; then
    log "resolving Apache Kafka $BENCH_KAFKA_VERSION"
    mkdir -p "$BENCH/broker/target"
    lock
    (cd "$ROOT" && { ./mvnw -q -o -B -f bench/broker/pom.xml dependency:build-classpath -Dmdep.outputFile="$cp_file" 9>&- \
        || ./mvnw -q -B -f bench/broker/pom.xml dependency:build-classpath -Dmdep.outputFile="$cp_file" 9>&-; }) \
        >"$RES/logs/resolve-kafka.log" 2>&1
    rc=$?
    unlock
    [[ $rc == 0 ]] || die "could not resolve Kafka (see $RES/logs/resolve-kafka.log)"
  fi
  KCP="$(cat "$cp_file")"
}

cleanup() {
  trap - EXIT INT TERM
  stop_pid "$KAFKA_PID"
  stop_pid "$STRATA_PID"
  rm -rf "$WORK"
}

lock() { flock -w 3600 9 || die "could not take $LOCK in an hour"; }
unlock() { flock -u 9; }

port_in_use() { ( { exec 8<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null ) ; }

# A Metadata v4 request (all topics) on a fresh connection; success = a response with our
# correlation id that lists at least one broker.
probe_metadata() {
  local port=$1 resp
  resp=$( { exec 8<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || exit 1
          printf '\x00\x00\x00\x14\x00\x03\x00\x04\x00\x00\x00\x01\x00\x05probe\xff\xff\xff\xff\x00' >&8
          timeout 2 head -c 16 <&8 | od -An -v -tx1 | tr -d ' \n' ) || return 1
  [[ ${#resp} -eq 32 && ${resp:8:8} == 00000001 && $((16#${resp:24:8})) -ge 1 ]]
}

now_ns() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }

wait_ready() { # PORT PID -> 0 when Metadata answers; 1 if the process died or 60 s passed
  local port=$1 pid=$2 deadline=$(( $(date +%s) + 60 ))
  while (( $(date +%s) < deadline )); do
    probe_metadata "$port" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.01
  done
  return 1
}

TCK=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# user + nice + system of the whole machine. irq/softirq time is left out: the kernel does not charge
# it to a process, and loopback traffic of the run itself makes a lot of it.
sys_busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 }' /proc/stat; }
rss_mb() { # PID [FIELD (VmRSS)] [DECIMALS (0)]
  awk -v k="${2:-VmRSS}:" -v d="${3:-0}" '$1 == k { printf "%." d "f", $2 / 1024 }' "/proc/$1/status"
}

kafka_format() { # DIR
  local cid
  # A random base64url id; one that starts with '-' would read as an option, so draw again.
  cid=-
  while [[ $cid == -* ]]; do cid=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '='); done
  java -Xmx256M "${JVM_PERF[@]}" "$TOOLS_LOG" -cp "$KCP" kafka.tools.StorageTool format \
    -t "$cid" -c "$1/server.properties" --standalone >"$1/format.log" 2>&1 9>&-
}

kafka_launch() { # DIR -> KAFKA_PID
  java -Xmx1G -Xms1G "${JVM_PERF[@]}" "$BROKER_LOG" -Dkafka.logs.dir="$1/logs" -cp "$KCP" \
    kafka.Kafka "$1/server.properties" >"$1/broker.log" 2>&1 9>&- &
  KAFKA_PID=$!
}

port_of() { [[ $1 == kafka ]] && echo $KAFKA_PORT || echo $STRATA_PORT; }
pid_of() { [[ $1 == kafka ]] && echo "$KAFKA_PID" || echo "$STRATA_PID"; }
other_of() { [[ $1 == kafka ]] && echo strata || echo kafka; }
order_for() { if (( $1 % 2 == 1 )); then echo kafka strata; else echo strata kafka; fi; }

# bench_start NAME TOOL...: the preamble every side-by-side benchmark shares: the tools it needs,
# its result directory RES (OUT, or target/NAME/<UTC stamp>), a scratch directory WORK, no broker
# started yet, the cleanup and interrupt traps, the build lock on fd 9 (children get fd 9 closed,
# 9>&-, so none of them can keep it), and free Kafka and Strata ports.
bench_start() {
  local name=$1 tool p
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || die "$tool is not installed"
  done
  STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
  RES="${OUT:-$BENCH/target/$name/$STAMP}"
  mkdir -p "$RES/logs" || die "cannot create $RES"
  RES="$(cd "$RES" && pwd)"
  WORK="$(mktemp -d "/tmp/strata-$name.XXXXXX")"
  KAFKA_PID=""
  STRATA_PID=""
  trap cleanup EXIT
  trap 'log "interrupted"; exit 130' INT TERM
  exec 9>>"$LOCK"
  for p in $KAFKA_PORT $KAFKA_CONTROLLER_PORT $STRATA_PORT; do
    port_in_use "$p" && die "127.0.0.1:$p is already in use"
  done
}

kafka_shared_properties() { # DIR: the lines of Kafka's config/server.properties every benchmark node shares (log.dirs under DIR)
  cat <<PROPS
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=$1/data
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
PROPS
}

kafka_config() { # DIR [EXTRA_PROPERTY_LINE...]: server.properties for a KRaft single node
  cat >"$1/server.properties" <<PROPS
# KRaft single node, combined broker+controller: Kafka's config/server.properties with loopback
# addresses and this run's log.dirs.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
inter.broker.listener.name=PLAINTEXT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
PROPS
  kafka_shared_properties "$1" >>"$1/server.properties"
  local line
  for line in "${@:2}"; do echo "$line" >>"$1/server.properties"; done
}

# Builds the Strata to measure (commit STRATA_REF from a `git archive`, or the jar STRATA_JAR_SRC)
# and sets STRATA (its private bin/strata) and STRATA_LABEL.
prepare_strata() {
  local sha rc
  if [[ -n "$STRATA_JAR_SRC" ]]; then
    [[ -f "$STRATA_JAR_SRC" ]] || die "no such jar: $STRATA_JAR_SRC"
    STRATA_LABEL="jar $STRATA_JAR_SRC ($(date -u -r "$STRATA_JAR_SRC" '+%Y-%m-%d %H:%M UTC'))"
  else
    sha=$(git -C "$ROOT" rev-parse --short "$STRATA_REF^{commit}") || die "unknown git ref $STRATA_REF"
    STRATA_LABEL="commit $sha ($(git -C "$ROOT" log -1 --format=%s "$sha" | cut -c1-80))"
    log "building Strata $sha from a git archive"
    mkdir -p "$WORK/strata-src"
    git -C "$ROOT" archive "$sha" | tar -x -C "$WORK/strata-src" || die "git archive $sha failed"
    lock
    (cd "$WORK/strata-src" && { ./mvnw -q -o -B -DskipTests package -pl tools -am 9>&- \
        || ./mvnw -q -B -DskipTests package -pl tools -am 9>&-; }) >"$RES/logs/build-strata.log" 2>&1
    rc=$?
    unlock
    STRATA_JAR_SRC="$WORK/strata-src/tools/target/strata.jar"
    STRATA_SCRIPT_SRC="$WORK/strata-src/bin/strata"
    [[ $rc == 0 && -f "$STRATA_JAR_SRC" ]] || die "Strata build failed (see $RES/logs/build-strata.log)"
  fi
  # A private copy of bin/strata and its jar, so a concurrent rebuild cannot change what is measured
  # mid-run; Strata runs as a user runs it, through bin/strata (with its JVM options and its
  # class-data-sharing archive, which the unmeasured `version` run below trains).
  STRATA_HOME="$WORK/strata-home"
  mkdir -p "$STRATA_HOME/bin" "$STRATA_HOME/tools/target"
  cp "${STRATA_SCRIPT_SRC:-$ROOT/bin/strata}" "$STRATA_HOME/bin/strata"
  cp "$STRATA_JAR_SRC" "$STRATA_HOME/tools/target/strata.jar"
  STRATA="$STRATA_HOME/bin/strata"
  rm -rf "$WORK/strata-src"
  "$STRATA" version >/dev/null 2>&1 9>&- || die "$STRATA version failed"
}

strata_launch() { # DIR [--override K=V...] -> STRATA_PID (bin/strata execs java, so this is the broker's PID)
  # Metrics stay on (the default) on a free port, so another Strata on 9644 cannot stop the start.
  "$STRATA" server --override "listeners=PLAINTEXT://127.0.0.1:$STRATA_PORT" \
    --override "log.dirs=$1/data" --override "metrics.listener=http://127.0.0.1:${BENCH_STRATA_METRICS_PORT:-0}" "${@:2}" \
    >"$1/broker.log" 2>&1 9>&- &
  STRATA_PID=$!
}
