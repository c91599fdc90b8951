#!/usr/bin/env bash
# Installs what `npm run bench` needs and the machine lacks: Debian's nginx-light (the static app and
# the proxy to compare with) and wrk (the HTTP load generator). Needs root (or sudo) and apt.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
missing=()
command -v nginx >/dev/null || missing+=(nginx-light)
command -v wrk >/dev/null || missing+=(wrk)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "missing ${missing[*]}; run: sudo bash scripts/install-bench-tools.sh" >&2
  exit 1
fi
echo "installing ${missing[*]} from Debian's packages…" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
