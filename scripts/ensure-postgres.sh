#!/usr/bin/env bash
# Make sure a PostgreSQL server answers on 127.0.0.1:5432 with a `test` database the tests
# can use, installing and starting Debian's server if needed. Prints the URL to use.
set -euo pipefail
HOST=127.0.0.1 PORT=5432
url="postgresql://postgres@${HOST}:${PORT}/test"

answers() { pg_isready -q -h "$HOST" -p "$PORT" 2>/dev/null; }

if ! command -v pg_isready >/dev/null || ! answers; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "PostgreSQL is not running and installing it needs root; set TEST_DATABASE_URL." >&2
    exit 1
  fi
  if ! command -v pg_ctlcluster >/dev/null; then
    echo "installing PostgreSQL from Debian's packages..." >&2
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  fi
  version=$(ls /etc/postgresql | sort -n | tail -1)
  conf="/etc/postgresql/$version/main/pg_hba.conf"
  # Local test server only: trust connections from this machine, as CI's server does.
  if ! grep -q "crusade-tests" "$conf"; then
    sed -i '1i host all all 127.0.0.1/32 trust # crusade-tests' "$conf"
  fi
  pg_ctlcluster --skip-systemctl-redirect "$version" main start >&2 || \
    pg_ctlcluster --skip-systemctl-redirect "$version" main reload >&2
  for _ in $(seq 1 30); do answers && break; sleep 1; done
fi
if ! psql "$url" -qtAc 'select 1' >/dev/null 2>&1; then
  psql "postgresql://postgres@${HOST}:${PORT}/postgres" -qc 'CREATE DATABASE test' >&2
fi
echo "$url"
