#!/usr/bin/env bash
# Make sure Debian's Chromium is at /usr/bin/chromium for the browser tests (Playwright cannot
# download its own browser here). Installs it with apt-get when missing and we are root.
# Prints nothing on success; exits non-zero with a message when it cannot.
set -euo pipefail
CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-chromium: $CHROMIUM is missing and installing it needs root;" \
       "run 'apt-get install chromium' as root (the browser tests need it)." >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "ensure-chromium: $CHROMIUM is missing and apt-get is not available." >&2
  exit 1
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
         --no-install-recommends chromium; } >"$log" 2>&1; then
  echo "ensure-chromium: installing chromium with apt-get failed:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-chromium: apt-get installed chromium but $CHROMIUM is still missing." >&2
  exit 1
fi
