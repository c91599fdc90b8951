#!/usr/bin/env bash
# Makes sure a PostgreSQL server answers at 127.0.0.1:5432 (the default DATABASE_URL); starts the
# machine's cluster when it is installed but stopped, installs Debian's when it is missing.
set -euo pipefail
if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then exit 0; fi
if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then echo "PostgreSQL is not running on 127.0.0.1:5432 and is not installed; install PostgreSQL 15+ or set DATABASE_URL" >&2; exit 1; fi
  echo "installing PostgreSQL from Debian's packages…"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  ver=$(ls /etc/postgresql | sort -V | tail -1)
  # Local trust auth over TCP, as the default DATABASE_URL expects (development and CI only).
  sed -i 's/^\(host.*127.0.0.1\/32\s*\)\S*$/\1trust/; s/^\(host.*::1\/128\s*\)\S*$/\1trust/' "/etc/postgresql/$ver/main/pg_hba.conf"
fi
ver=$(ls /etc/postgresql | sort -V | tail -1)
pg_ctlcluster --skip-systemctl-redirect "$ver" main start 2>/dev/null || pg_ctlcluster "$ver" main start
for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && exit 0; sleep 1; done
echo "PostgreSQL did not come up on 127.0.0.1:5432" >&2
exit 1
