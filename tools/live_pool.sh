#!/usr/bin/env bash
# Start or stop the real HTCondor pool the live tests (tests/live_pool/) and `cedar conformance`
# run against: ../shared/htcondor/minicondor.sh with SciTokens, plus the one package it needs.
#   tools/live_pool.sh start DIR   prints `export ...` lines (eval them); exit 3 when no HTCondor
#   tools/live_pool.sh stop DIR    stops the pool started in DIR (keeps DIR)
# CEDAR_HTCONDOR overrides the release directory (default ../shared/htcondor next to the repo);
# MINICONDOR_PORT the pool's port (default 9618). Needs root, as minicondor.sh does.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
htcondor=${CEDAR_HTCONDOR:-$repo/../shared/htcondor}
cmd=${1:?usage: live_pool.sh start|stop DIR}
dir=${2:?usage: live_pool.sh start|stop DIR}

if [ ! -x "$htcondor/minicondor.sh" ]; then
  echo "live_pool.sh: no HTCondor release at $htcondor (set CEDAR_HTCONDOR)" >&2
  exit 3
fi
case $cmd in
start)
  sci=1
  if ! ldconfig -p | grep -q libSciTokens; then  # the daemons' SCITOKENS method needs it
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y libscitokens0 || { apt-get update && apt-get install -y libscitokens0; }; } >&2 ||
      { sci=0; echo "live_pool.sh: libscitokens0 could not be installed; pool WITHOUT SciTokens" \
          "(the SciTokens live tests will skip)" >&2; }
  fi
  MINICONDOR_SCITOKENS=$sci "$htcondor/minicondor.sh" start "$dir" </dev/null
  ;;
stop) "$htcondor/minicondor.sh" stop "$dir" </dev/null ;;
*) echo "usage: live_pool.sh start|stop DIR" >&2; exit 2 ;;
esac
