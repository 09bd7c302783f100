#!/bin/sh
# Starts chromium ($REPOGATE_CHROMIUM, default /usr/bin/chromium) as a user's browser runs. As root, chromium raises
# its compositor, IO and GPU threads to nice -8, which an ordinary user's cannot (RLIMIT_NICE is 0): under root's
# CI those threads then took the CPU from the extension host beside them (docs/decisions-reliability.md, S6).
# Without CAP_SYS_NICE its attempt fails as a user's does, and every thread stays at the nice value it started with.
browser="${REPOGATE_CHROMIUM:-/usr/bin/chromium}"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
  exec setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice -- "$browser" "$@"
fi
exec "$browser" "$@"
