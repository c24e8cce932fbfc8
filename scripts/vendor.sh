#!/usr/bin/env bash
# Copy the browser assets the book loads (MathJax 3, require.js, the ipywidgets HTML manager, thebe >= 0.9)
# from npm packages pinned in package-lock.json into the git-ignored _static/vendor/, so that no page needs a CDN.
# Idempotent: `npm ci` runs only when node_modules is missing or older than package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v npm >/dev/null 2>&1; then
    echo "vendor.sh: npm not found; install Node.js >= 18 (e.g. apt-get install -y nodejs npm)" >&2
    exit 1
fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    # --ignore-scripts: nothing from the registry runs at install time; we only copy files.
    npm ci --no-audit --no-fund --ignore-scripts
fi

out=_static/vendor
tmp="$(mktemp -d _static/.vendor.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

nm=node_modules
# MathJax 3: the whole es5 tree, because the combined component loads fonts and extensions relative to itself.
mkdir -p "$tmp/mathjax"
cp -R "$nm/mathjax/es5/." "$tmp/mathjax/"
cp "$nm/mathjax/LICENSE" "$tmp/mathjax/LICENSE"

# require.js: needed by the ipywidgets HTML manager (AMD) on pages that embed widget state.
mkdir -p "$tmp/requirejs"
cp "$nm/requirejs/require.js" "$tmp/requirejs/require.js"
cp "$nm/requirejs/package.json" "$tmp/requirejs/package.json"

# @jupyter-widgets/html-manager: renders the saved widget state in static pages; fonts are loaded relative to it.
mkdir -p "$tmp/html-manager"
find "$nm/@jupyter-widgets/html-manager/dist" -maxdepth 1 -type f \
    \( -name 'embed-amd.js' -o -name '*.woff' -o -name '*.woff2' -o -name '*.ttf' -o -name '*.eot' -o -name '*.svg' \) \
    -exec cp {} "$tmp/html-manager/" \;
cp "$nm/@jupyter-widgets/html-manager/LICENSE" "$tmp/html-manager/LICENSE" 2>/dev/null || true

# thebe >= 0.9: the Live Code client (webpack chunks are loaded relative to index.js).
mkdir -p "$tmp/thebe"
find "$nm/thebe/lib" -maxdepth 1 -type f \( -name '*.js' -o -name '*.css' -o -name '*.LICENSE.txt' \) \
    -exec cp {} "$tmp/thebe/" \;
cp "$nm/thebe/LICENSE" "$tmp/thebe/LICENSE" 2>/dev/null || true

# Record exactly what was vendored (versions come from the lockfile-installed packages).
node -e '
const p = (n) => require("./node_modules/" + n + "/package.json").version;
const v = {mathjax: p("mathjax"), requirejs: p("requirejs"),
           "@jupyter-widgets/html-manager": p("@jupyter-widgets/html-manager"), thebe: p("thebe")};
require("fs").writeFileSync(process.argv[1], JSON.stringify(v, null, 2) + "\n");
' "$tmp/VERSIONS.json"

rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "vendor.sh: $(cat "$out/VERSIONS.json" | tr -d '\n ') -> $out ($(du -sh "$out" | cut -f1))"
