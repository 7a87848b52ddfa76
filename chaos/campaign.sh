#!/usr/bin/env bash
# The long fault campaign (docs/chaos-plan.md, "Running a campaign"): RUNS runs of SECONDS_PER_RUN seconds each,
# alternating 3 and 5 nodes, one seed per run, cycling through mixed nemesis sets, every run's result one row of
# a markdown table. Root only (network namespaces, nftables, tc).
#
#   sudo chaos/campaign.sh [OUT_DIR]          # default OUT_DIR: chaos/target/campaign-<UTC time>
#
# Environment (defaults): RUNS=10 SECONDS_PER_RUN=300 FIRST_SEED=1 RUN_BASE=240 (run numbers RUN_BASE..RUN_BASE+RUNS-1,
# the third octet of the nodes' addresses), WORKLOADS=idempotent,txn,group-classic,group-consumer,kcat,
# KEEP_DATA=0 (1 keeps the node data dirs of clean runs too; runs with anomalies always keep them),
# LOCK=/tmp/strata-build.lock (each run holds it, as every cluster on a shared machine must), MAVEN_FLAGS= (e.g. -o).
# Output: OUT_DIR/results.md (the table), OUT_DIR/run-N-seed-S/ (history.jsonl, nemesis.log, anomalies.txt,
# summary.json, node-*/server.log). Exit 0 when every run found no anomaly, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-10}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-300}
FIRST_SEED=${FIRST_SEED:-1}
RUN_BASE=${RUN_BASE:-240}
WORKLOADS=${WORKLOADS:-idempotent,txn,group-classic,group-consumer,kcat}
KEEP_DATA=${KEEP_DATA:-0}
LOCK=${LOCK:-/tmp/strata-build.lock}
MAVEN_FLAGS=${MAVEN_FLAGS:-}
OUT=${1:-chaos/target/campaign-$(date -u +%Y%m%dT%H%M%SZ)}
NEMESIS_SETS=(
  "kill,pause,partition"
  "kill-leader,partition-leader,loss"
  "kill-controller,pause-leader,partition-bridge"
  "partition-halves,partition-oneway,bandwidth"
  "kill,pause,partition,loss,bandwidth"
)

if [[ $(id -u) != 0 ]]; then
  echo "campaign.sh needs root (network namespaces, nftables, tc)" >&2
  exit 2
fi
for tool in ip nft tc python3 java; do
  command -v "$tool" >/dev/null || { echo "campaign.sh needs $tool (apt-get install iproute2 nftables python3)" >&2; exit 2; }
done

echo "== build: tools/target/strata.jar and chaos/target/chaos-campaign.jar (MAVEN_FLAGS='$MAVEN_FLAGS')"
# shellcheck disable=SC2086
flock "$LOCK" ./mvnw -B -ntp -q $MAVEN_FLAGS package -pl chaos -am -DskipTests -Pcampaign-jar

mkdir -p "$OUT"
RESULTS="$OUT/results.md"
{
  echo "# Fault campaign $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD)"
  echo
  echo "| run | seed | nodes | nemeses | workloads | s | ops ok | ops info | ops fail | nemesis starts | anomalies | exit |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
} > "$RESULTS"

failed=0
for ((i = 0; i < RUNS; i++)); do
  seed=$((FIRST_SEED + i))
  run=$((RUN_BASE + i))
  nodes=$(( i % 2 == 0 ? 3 : 5 ))
  nemeses=${NEMESIS_SETS[$((i % ${#NEMESIS_SETS[@]}))]}
  dir="$OUT/run-$run-seed-$seed"
  echo "== run $run: seed $seed, $nodes nodes, nemeses $nemeses, $SECONDS_PER_RUN s -> $dir"
  status=0
  flock "$LOCK" java -jar chaos/target/chaos-campaign.jar --run "$run" --nodes "$nodes" --seconds "$SECONDS_PER_RUN" \
    --seed "$seed" --nemeses "$nemeses" --workloads "$WORKLOADS" --out "$dir" --jar tools/target/strata.jar \
    > "$dir.out" 2>&1 || status=$?
  tail -1 "$dir.out"
  if [[ -f "$dir/summary.json" ]]; then
    python3 - "$dir/summary.json" "$run" "$SECONDS_PER_RUN" >> "$RESULTS" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ops = lambda outcome: sum(by.get(outcome, 0) for by in s["ops"].values())
kinds = ", ".join(f"{k} {v}" for k, v in s["anomaliesByKind"].items())
anomalies = f"{s['anomalies']} ({kinds})" if s["anomalies"] else "0"
print(f"| {sys.argv[2]} | {s['seed']} | {s['nodes']} | {','.join(s['nemeses'])} | {','.join(s['workloads'])} | {sys.argv[3]} "
      f"| {ops('ok')} | {ops('info')} | {ops('fail')} | {s['nemesisEvents'].get('start', 0)} | {anomalies} | {s['exitCode']} |")
PY
  else
    echo "| $run | $seed | $nodes | $nemeses | $WORKLOADS | $SECONDS_PER_RUN | - | - | - | - | no summary (see $dir.out) | $status |" >> "$RESULTS"
  fi
  if [[ $status == 0 && $KEEP_DATA != 1 ]]; then
    rm -rf "$dir"/node-*/data
  fi
  [[ $status == 0 ]] || failed=1
done

echo "== results: $RESULTS"
cat "$RESULTS"
exit $failed
