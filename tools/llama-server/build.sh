#!/usr/bin/env bash
# Builds llama-server from the llama.cpp source that node-llama-cpp ships (its git bundle), once per bundled
# commit, into a cache folder outside the clone; a finished build is reused. Prints the binary's path last.
# Needs cmake and a C++ compiler (Debian: apt-get install -y cmake g++). Offline: no curl, no OpenSSL.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bundle="$root/node_modules/node-llama-cpp/llama/gitRelease.bundle"
[ -f "$bundle" ] || { echo "build.sh: $bundle is missing (run npm ci first)" >&2; exit 1; }
for tool in git cmake g++; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool is missing (Debian: apt-get install -y cmake g++)" >&2; exit 1; }
done
commit=$(git bundle list-heads "$bundle" | awk '$2 == "HEAD" { print $1 }')
[ -n "$commit" ] || { echo "build.sh: no HEAD in $bundle" >&2; exit 1; }
cache="${REPOGATE_CACHE:-$HOME/.cache/repogate}/llama-server/$commit"
binary="$cache/build/bin/llama-server"
if [ -x "$binary" ] && [ -f "$cache/done" ]; then
  echo "$binary"
  exit 0
fi
mkdir -p "$cache"
# One build at a time per cache folder: a second caller waits for the first and then reuses its binary.
exec 9>"$cache/lock"
flock 9
if [ -x "$binary" ] && [ -f "$cache/done" ]; then
  echo "$binary"
  exit 0
fi
jobs="${REPOGATE_BUILD_JOBS:-2}"
if [ ! -d "$cache/src/.git" ]; then
  rm -rf "$cache/src"
  git clone --quiet "$bundle" "$cache/src" >&2
  git -c advice.detachedHead=false -C "$cache/src" checkout --quiet "$commit" >&2
fi
nice -n 19 cmake -S "$cache/src" -B "$cache/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=OFF >&2
nice -n 19 cmake --build "$cache/build" --target llama-server -j"$jobs" >&2
[ -x "$binary" ] || { echo "build.sh: the build finished without $binary" >&2; exit 1; }
touch "$cache/done"
echo "$binary"
