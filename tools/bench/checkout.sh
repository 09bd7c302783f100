#!/usr/bin/env bash
# Materialize the benchmark repositories listed in tools/bench/repos.json into .bench/repos/<name>
# (relative to the repository root), each at its exact pinned commit, from local git directories only.
# Never contacts the network.
#
# REPOGATE_MIRROR names the folder that holds the git directories: the one of <owner>/<repo> is looked for in
# $REPOGATE_MIRROR/<owner>+<repo>* (a glob, so a suffixed copy is found too). Under each such folder the git
# directory may be the folder itself (a bare clone), or its repo/, repo/.git or .git subfolder. A candidate counts
# only if it actually contains the pinned commit. Without REPOGATE_MIRROR only finished checkouts are used.
#
# A finished checkout has a .commit marker file holding the commit; if it matches, the repository is
# skipped. Missing mirror: prints which repository and commit is needed and where to put a clone; exit 2.
#
# Usage: tools/bench/checkout.sh [name ...]     (default: every entry of repos.json)
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$script_dir/../.." && pwd)
manifest="$script_dir/repos.json"
dest_root="$root/.bench/repos"

# Never let git reach out (no fetch here anyway) and accept mirrors owned by another user.
export GIT_TERMINAL_PROMPT=0 GIT_ALLOW_PROTOCOL=file
git_() { git -c safe.directory='*' "$@"; }

# Source files of the languages tasks are made from (TypeScript/JavaScript without .d.ts, Python, Go, Rust, Java).
source_re='\.(ts|tsx|js|jsx|mjs|cjs|py|go|rs|java)$'

# name<TAB>owner/repo<TAB>commit<TAB>sourceFiles, one line per entry.
entries=$(node -e '
  const list = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  for (const e of list) {
    if (!e.name || !e.repo || !/^[0-9a-f]{40}$/.test(e.commit || "")) {
      console.error("bad entry in repos.json: " + JSON.stringify(e));
      process.exit(1);
    }
    console.log([e.name, e.repo, e.commit, e.sourceFiles ?? ""].join("\t"));
  }' "$manifest")

wanted=("$@")
is_wanted() {
  [[ ${#wanted[@]} -eq 0 ]] && return 0
  local w
  for w in "${wanted[@]}"; do [[ "$w" == "$1" ]] && return 0; done
  return 1
}

# find_gitdir <owner/repo> <commit>: print a git dir that contains the commit, or nothing.
find_gitdir() {
  local slug=${1/\//+} commit=$2 base sub cand
  local -a bases=()
  [[ -n "${REPOGATE_MIRROR:-}" ]] || return 0
  shopt -s nullglob
  for base in "$REPOGATE_MIRROR/$slug"*; do bases+=("$base"); done
  shopt -u nullglob
  for base in "${bases[@]}"; do
    for sub in "" /repo /repo/.git /.git; do
      cand="$base$sub"
      [[ -d "$cand/objects" && -f "$cand/HEAD" ]] || continue
      if git_ --git-dir="$cand" cat-file -e "$commit^{commit}" 2>/dev/null; then
        echo "$cand"
        return 0
      fi
    done
  done
  return 0
}

mkdir -p "$dest_root"
tmp=""
trap '[[ -n "$tmp" ]] && rm -rf "$tmp"' EXIT
missing=0
while IFS=$'\t' read -r name repo commit source_files; do
  is_wanted "$name" || continue
  dest="$dest_root/$name"
  if [[ -f "$dest/.commit" && "$(cat "$dest/.commit")" == "$commit" ]]; then
    echo "$name: already at $commit"
    continue
  fi
  gitdir=$(find_gitdir "$repo" "$commit")
  if [[ -z "$gitdir" ]]; then
    slug=${repo/\//+}
    cat >&2 <<EOF
$name: no local git directory of $repo contains commit $commit.
  Needed: https://github.com/$repo at $commit
  Put a clone that contains that commit at \$REPOGATE_MIRROR/$slug (a bare clone, or a clone whose .git
  is there), e.g.
    git clone --bare https://github.com/$repo "\$REPOGATE_MIRROR/$slug"
  and run this script again (it never downloads anything itself).
EOF
    missing=1
    continue
  fi
  # Snapshots from the fetch tool can lack their largest blobs (images, source maps, big JSON). Leave those
  # files out; a missing source file would change the benchmark, so that mirror is not accepted.
  missing_paths=$(git_ --git-dir="$gitdir" ls-tree -r -z "$commit" | node -e '
    const { execFileSync } = require("child_process");
    const entries = require("fs").readFileSync(0, "utf8").split("\0").filter(Boolean)
      .map((l) => { const tab = l.indexOf("\t"); const [, type, oid] = l.slice(0, tab).split(" ");
                    return { type, oid, path: l.slice(tab + 1) }; })
      .filter((e) => e.type === "blob");
    const out = execFileSync("git", ["-c", "safe.directory=*", "--git-dir=" + process.argv[1],
      "cat-file", "--batch-check"], { input: entries.map((e) => e.oid).join("\n") + "\n",
      maxBuffer: 1 << 30 }).toString().split("\n");
    entries.forEach((e, i) => { if (out[i].endsWith(" missing")) console.log(e.path); });
  ' "$gitdir")
  if grep -E "$source_re" <<<"$missing_paths" | grep -vqE '\.d\.ts$'; then
    echo "$name: $gitdir lacks source files of $repo@$commit:" >&2
    grep -E "$source_re" <<<"$missing_paths" | head -5 >&2
    echo "  Put a complete clone at \$REPOGATE_MIRROR/${repo/\//+} (a bare clone of https://github.com/$repo) and run again." >&2
    missing=1
    continue
  fi
  echo "$name: extracting $repo@$commit from $gitdir"
  tmp="$dest_root/.$name.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp/.git-scratch/objects" "$tmp/tree"
  treeish=$commit
  if [[ -n "$missing_paths" ]]; then
    # git archive stops at the first absent blob, even one excluded by a pathspec. Write a copy of the
    # commit's tree without those files into a scratch object store (the mirror itself is not written to).
    echo "$name: leaving out $(wc -l <<<"$missing_paths") file(s) whose contents the mirror lacks (not source code)"
    export GIT_OBJECT_DIRECTORY="$tmp/.git-scratch/objects" GIT_ALTERNATE_OBJECT_DIRECTORIES="$gitdir/objects"
    export GIT_INDEX_FILE="$tmp/.git-scratch/index"
    git_ --git-dir="$gitdir" read-tree "$commit"
    tr '\n' '\0' <<<"$missing_paths" | git_ --git-dir="$gitdir" update-index --force-remove -z --stdin
    treeish=$(git_ --git-dir="$gitdir" write-tree)
  fi
  git_ --git-dir="$gitdir" archive --format=tar "$treeish" | tar -x -C "$tmp/tree"
  unset GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_INDEX_FILE
  rm -rf "$tmp/.git-scratch"
  echo "$commit" >"$tmp/tree/.commit"
  rm -rf "$dest"
  mv "$tmp/tree" "$dest"
  rm -rf "$tmp"
  tmp=""
  count=$(cd "$dest" && find . -type f ! -name '*.d.ts' ! -path '*/node_modules/*' | grep -cE "$source_re" || true)
  echo "$name: $count source files (TS/JS without .d.ts, Python, Go, Rust, Java)"
  if [[ -n "$source_files" && "$count" != "$source_files" ]]; then
    echo "$name: warning: repos.json says sourceFiles $source_files" >&2
  fi
done <<<"$entries"

[[ $missing -eq 0 ]] || exit 2
