#!/usr/bin/env bash
# Runs coupond's whole test suite: generated code is fresh, vet is clean, and
# every Go test passes with the race detector on SQLite and on PostgreSQL;
# then the console's checks (unit tests, build freshness, end-to-end in
# headless Chromium). PostgreSQL comes from TEST_DATABASE_URL, default the
# local server; it is started here when it is installed but down.
set -euo pipefail
cd "$(dirname "$0")/.."

export TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}"

step() { printf '\n== %s\n' "$*"; }

step "PostgreSQL"
if command -v pg_isready >/dev/null && ! pg_isready -h 127.0.0.1 -p 5432 -q; then
  if command -v pg_ctlcluster >/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start
    for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
  fi
fi
if command -v psql >/dev/null && pg_isready -h 127.0.0.1 -p 5432 -q; then
  psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 \
    || psql -h 127.0.0.1 -U postgres -d postgres -c "CREATE DATABASE test" >/dev/null
  echo "using $TEST_DATABASE_URL"
fi

step "generated GraphQL code is fresh"
go tool gqlgen generate --config gqlgen.yml
if [ -n "$(git status --porcelain -- graph gqlgen.yml)" ]; then
  git status --porcelain -- graph
  git --no-pager diff --stat -- graph
  echo "graph/ is stale: run 'go generate ./graph' and commit the result" >&2
  exit 1
fi

step "gofmt and go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' | grep -v '^web/node_modules/'))
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted" >&2; exit 1; fi
go vet ./...

step "benchmark harness builds and vets (its own module)"
(cd bench && go vet ./... && go build ./... && go test -count=1 ./...)

step "go test -race (SQLite and PostgreSQL)"
go test -race -count=1 -timeout 13m ./...
# serve --crash-at exists only in builds tagged crashpoints (the fault suite's).
go test -race -count=1 -tags crashpoints -run 'Crash' ./cmd/coupond

step "long single-threaded tests without the race detector (SQLite and PostgreSQL)"
# These skip themselves under -race (services.SkipUnderRace): the lifecycle
# model's random plans, the eligibility table, the 100,000-code imports (call and upload) and
# issuance past one chunk run one request at a time, take ten times as long
# with the detector, and find nothing the concurrent tests above do not.
# They run here in full. TestWebhookBurstManyDispatchers runs in both: a
# smaller burst under the detector, the full 2,000 events here.
raceFreeTests='^(TestLifecycleModel|TestEligibilityExplained|TestImportReportsExactlyTheDuplicates|TestIssueCouponsPastOneChunk|TestWebhookBurstManyDispatchers)$'
go test -count=1 -run "$raceFreeTests" ./services
go test -count=1 -run '^TestImportUploadReportsExactlyTheDuplicates$' ./httpapi

step "GraphQL over HTTP: the graphql-http audit suite (MUSTs and SHOULDs)"
(cd graph/testdata/audit && npm ci --no-audit --no-fund --silent && node audit.mjs)

step "fault suite, short subset (SIGKILL, terminated backends, a PostgreSQL crash restart, crash points, a failing order system)"
BENCH_OUT="$(mktemp -d)" CI=1 bench/run.sh faults

# About 50 s: a Patroni cluster of the suite's own, one kill -9 of the primary
# with a synchronous standby (the other failover rows run in the full suite).
step "fault suite, Patroni failover (one short row)"
if command -v patroni >/dev/null && command -v etcd >/dev/null || [ "${CI:-}" = true ]; then
  BENCH_OUT="$(mktemp -d)" CI=1 ONLY=patroni bench/run.sh faults
else
  echo "patroni or etcd not installed (apt-get install patroni etcd-server): skipped outside CI"
fi

if [ -x web/scripts/ci.sh ]; then
  step "web console"
  web/scripts/ci.sh
fi
