#!/usr/bin/env bash
# CI for the web console, from a clean clone (no node_modules):
#   1. install exactly the locked packages;
#   2. regenerate the typed GraphQL documents from ../graph/*.graphqls, typecheck, unit tests;
#   3. rebuild web/dist (Vite + the offline playground) and fail if the committed
#      dist or generated types differ from what the sources produce;
#   4. run the end-to-end test against `coupond serve --demo` in headless Chromium.
# Usage, from the repository root: bash web/scripts/ci.sh
set -euo pipefail

web="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo="$(cd "$web/.." && pwd)"
cd "$web"
step() { printf '\n=== web: %s (%ss)\n' "$*" "$SECONDS"; }

step "system packages"
# Debian's Chromium (never a browser download), sqlite3 (the e2e test plants a
# discrepancy for reconciliation to find) and a CJK font for legible screenshots.
missing=()
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
command -v sqlite3 >/dev/null || missing+=(sqlite3)
fc-list 2>/dev/null | grep -qiE 'wqy|noto sans cjk' || missing+=(fonts-wqy-microhei)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

step "npm ci"
npm ci --no-audit --no-fund --loglevel=error

step "codegen"
npm run --silent codegen

step "typecheck"
npm run --silent typecheck

step "unit tests"
npx vitest run

step "build"
npm run --silent build

step "committed output is current"
stale="$(git -C "$repo" status --porcelain -- web/dist web/src/gql)"
if [ -n "$stale" ]; then
  echo "web/dist or web/src/gql differ from what the sources produce; run 'npm run codegen && npm run build' in web/ and commit:" >&2
  echo "$stale" >&2
  git -C "$repo" --no-pager diff --stat -- web/dist web/src/gql >&2 || true
  exit 1
fi
echo "web/dist and web/src/gql are up to date"

step "end-to-end"
node e2e/e2e.mjs

step "done"
