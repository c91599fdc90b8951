#!/usr/bin/env bash
# Debian's nginx-light (the peer to beat) and wrk (the load generator) for `npm run bench`.
set -euo pipefail
if command -v nginx >/dev/null && command -v wrk >/dev/null; then exit 0; fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light wrk >/dev/null
