#!/usr/bin/env bash
# Debian's Chromium for the dashboard's browser tests (playwright-core drives it; no browser is ever
# downloaded). Idempotent; needs root (or sudo) and apt.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "chromium missing; run: sudo bash scripts/install-browser.sh" >&2
  exit 1
fi
echo "installing chromium from Debian's packages…" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
