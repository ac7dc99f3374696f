#!/usr/bin/env bash
# bench/run.sh [perf|faults|all]: builds coupond and the bench harness, runs
# the benchmark scenarios (perf, the default) or the fault suite (faults)
# against the local PostgreSQL on loopback, and writes docs/PERFORMANCE.md,
# docs/RELIABILITY.md and bench/results/<date>[-faults].json.
#
#   QUICK=1 bench/run.sh        perf with small sizes (under 2 minutes)
#   bench/run.sh                perf, full sizes
#   CI=1 bench/run.sh faults    the fault suite's short subset (about 70 s)
#   bench/run.sh faults         the whole fault suite
#   ONLY=redis bench/run.sh faults  the Redis faults alone (3 replicas)
#   ONLY=webhooks bench/run.sh faults  the webhook faults and the PostgreSQL
#                               restarts alone (about 15 minutes: the retry
#                               schedule's second wait is 5 minutes)
#   ONLY=patroni bench/run.sh faults  the failover faults alone: a Patroni
#                               cluster (2 PostgreSQL nodes, 1 etcd) the
#                               suite makes (apt-get install patroni
#                               etcd-server); about 90 s, not in CI's subset
#   CI=1 ONLY=redis bench/run.sh faults  their one short row (about 15 s), a
#                               CI job of its own: the CI subset above leaves
#                               the Redis faults out to stay within its 70 s
#   ONLY=redis bench/run.sh perf    the Redis on/off scenarios on 3 replicas
#                               alone (KNEE=N: the single server's knee)
#   ONLY=reconciliation bench/run.sh perf  the reconciliation row alone, on a
#                               seeded ledger of 1,500,000 coupons, at half KNEE=N
#   ONLY=export bench/run.sh perf  the same for the ledger export's row: the
#                               whole ledger's CSV beside redemptions at half KNEE=N
#   CONTROL=1 ONLY=export bench/run.sh perf  (or reconciliation) first a control
#                               row: the same load beside nothing but a 100 s sleep,
#                               the difference the harness makes between its sides
#   ONLY=scale bench/run.sh perf    knees in one run: 1 server direct (pgx's default and
#                               cache_describe), through pgbouncer, 3 servers behind
#                               haproxy through pgbouncer, tracing sampled at 1%;
#                               then a Patroni pair with synchronous commit on and off
#   ONLY=products bench/run.sh perf  the coupon products' rows alone: a short ramp
#                               for the start, the knee with weekday and time rules
#                               against without, and one store's rate under a
#                               per-store daily limit (QUICK=1: a smoke run)
#   ONLY=webhooks bench/run.sh perf  the webhook rows alone: a ramp for the start, the
#                               sustained knees without and with one subscribed endpoint
#                               (paired 15 s steps), the delivery lag at half the knee
#                               (KNEE=N: the knees step from N, without the first ramp)
#   ONLY=sqlite bench/run.sh perf   the embedded SQLite rows alone: the knee with
#                               synchronous=FULL (the default) against NORMAL
#   An ONLY run leaves docs/ alone: its report and record go to
#   bench/results/<date>-redis[-faults].{md,json}.
#   RATE=300 bench/run.sh probe one constant-rate run, printing latency and
#                               the server's pprof top (no report written);
#                               WEBHOOK=1 with one subscribed endpoint (and the
#                               deliveries' drain and lag); PROBE_SQL='...' runs
#                               that SQL on the probe's database before the load,
#                               for trying a schema change; PROBE_ARGS passes
#                               more of coupond-bench's probe flags, e.g.
#                               '-filler 2800000 -ledger 1000000 -jobs -sample'
#                               for a database and a server like the full run's
#
# Environment: PGHOST (127.0.0.1), PGPORT (5432), BENCH_ADMIN_DB (test), an
# existing database used to create and drop coupond_bench* databases;
# KEEP_DBS=1 keeps the scenarios' databases after the run (dropped by default);
# KEEP_TMP=1 keeps the temporary directory, with the servers' logs, after a run
# that passed too (a failed run always keeps it);
# DIRTY_BACKGROUND_BYTES: the kernel's vm.dirty_background_bytes during perf
# and probe runs (default 8 MiB, the setting docs/operations.md advises for a
# PostgreSQL host; 0 leaves the host's writeback settings alone). The perf run
# also measures its row at half the knee with the host's own settings. The
# host's settings come back when the run ends, however it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-perf}
tmp=$(mktemp -d)
# The scenarios leave their databases behind for a look after the run
# (several GB after a full one), which slows whatever runs next on this
# PostgreSQL: they are dropped on exit unless KEEP_DBS=1.
cleanup() {
  local rc=$?
  if [ "$rc" -eq 0 ] && [ -z "${KEEP_TMP:-}" ]; then
    rm -rf "$tmp"
  elif [ "$rc" -eq 0 ]; then
    echo "the servers' logs are kept in $tmp (KEEP_TMP)" >&2
  else
    # A run that fails keeps the servers' logs, which say why.
    echo "bench/run.sh failed (exit $rc): the servers' logs are kept in $tmp" >&2
  fi
  if [ -z "${KEEP_DBS:-}" ] && command -v psql >/dev/null; then
    local pg=(psql -h "${PGHOST:-127.0.0.1}" -p "${PGPORT:-5432}" -U postgres -d "${BENCH_ADMIN_DB:-test}" -qAt)
    for db in $("${pg[@]}" -c "SELECT datname FROM pg_database WHERE datname LIKE 'coupond\_bench%' OR datname LIKE 'coupond\_faults%'" 2>/dev/null); do
      "${pg[@]}" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || echo "could not drop database $db" >&2
    done
  fi
}
# The host's writeback threshold, given back on exit even when the run is
# killed before it could do so itself.
wb_bytes=$(cat /proc/sys/vm/dirty_background_bytes 2>/dev/null || true)
wb_ratio=$(cat /proc/sys/vm/dirty_background_ratio 2>/dev/null || true)
own_writeback() {
  if [ -n "$wb_bytes" ] && [ "$wb_bytes" != 0 ]; then
    echo "$wb_bytes" 2>/dev/null >/proc/sys/vm/dirty_background_bytes || true
  elif [ -n "$wb_ratio" ]; then
    echo "$wb_ratio" 2>/dev/null >/proc/sys/vm/dirty_background_ratio || true
  fi
}
trap 'rc=$?; own_writeback; (exit $rc); cleanup' EXIT
go build -o "$tmp/coupond" ./cmd/coupond
# The fault suite's server can SIGKILL itself at the protocol's crash points
# (serve --crash-at), which only a build with -tags crashpoints carries.
case "$what" in faults|all) go build -tags crashpoints -o "$tmp/coupond-faults" ./cmd/coupond ;; esac
(cd bench && go build -o "$tmp/coupond-bench" ./cmd/coupond-bench)
date=$(date -u +%Y-%m-%dT%H%M%SZ)
# BENCH_OUT, when set, receives the reports and records instead of docs/ and
# bench/results/ (the test script uses it so a check run leaves the tree clean).
docs=${BENCH_OUT:-docs}
results=${BENCH_OUT:-bench/results}
mkdir -p "$results" "$docs"
common=(-bin "$tmp/coupond" -dir "$tmp" -pg-host "${PGHOST:-127.0.0.1}" -pg-port "${PGPORT:-5432}" -admin-db "${BENCH_ADMIN_DB:-test}")
if [ -n "${DIRTY_BACKGROUND_BYTES:-}" ]; then common+=(-dirty-background-bytes "$DIRTY_BACKGROUND_BYTES"); fi
run_perf() {
  local q=() cmd="bench/run.sh perf"
  if [ -n "${QUICK:-}" ]; then q=(-quick); cmd="QUICK=1 bench/run.sh perf"; fi
  local doc="$docs/PERFORMANCE.md" rec="$results/$date.json"
  if [ -n "${ONLY:-}" ]; then
    q+=(-only "$ONLY"); cmd="ONLY=$ONLY $cmd"; doc="$results/$date-$ONLY.md"; rec="$results/$date-$ONLY.json"
  fi
  if [ -n "${KNEE:-}" ]; then q+=(-knee "$KNEE"); fi
  if [ -n "${CONTROL:-}" ]; then q+=(-control); cmd="CONTROL=1 $cmd"; fi
  "$tmp/coupond-bench" perf "${common[@]}" "${q[@]}" -command "$cmd" -doc "$doc" -json "$rec"
}
run_faults() {
  local c=() cmd="bench/run.sh faults"
  if [ -n "${CI:-}" ]; then c=(-ci); cmd="CI=1 bench/run.sh faults"; fi
  local doc="$docs/RELIABILITY.md" rec="$results/$date-faults.json"
  if [ -n "${ONLY:-}" ]; then
    c+=(-only "$ONLY"); cmd="ONLY=$ONLY $cmd"; doc="$results/$date-$ONLY-faults.md"; rec="$results/$date-$ONLY-faults.json"
  fi
  "$tmp/coupond-bench" faults "${common[@]}" -bin "$tmp/coupond-faults" "${c[@]}" -command "$cmd" -doc "$doc" -json "$rec"
}
case "$what" in
  perf) run_perf ;;
  faults) run_faults ;;
  all) run_perf; run_faults ;;
  probe)
    # The binary, its logs and the CPU profile stay in PROBE_DIR for
    # `go tool pprof PROBE_DIR/coupond PROBE_DIR/probe.cpu.pprof`.
    keep=${PROBE_DIR:-/tmp/coupond-probe}
    mkdir -p "$keep" && cp "$tmp/coupond" "$keep/coupond"
    "$tmp/coupond-bench" probe "${common[@]}" -bin "$keep/coupond" -dir "$keep" -rate "${RATE:-200}" -for "${FOR:-15s}" \
      ${WEBHOOK:+-webhook} ${PROBE_ARGS:-} ;;
  *) echo "usage: bench/run.sh [perf|faults|all|probe]" >&2; exit 2 ;;
esac
