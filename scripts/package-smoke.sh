#!/usr/bin/env bash
# The package as a user gets it: `npm pack`, install the tarball into an empty folder without dev
# dependencies, then run the installed `mainline serve` on a loopback port and `mainline upload` of a
# JUnit report against it. Then the same for the uploader alone: `npm pack` of packages/uploader (the
# committed single-file mainline-upload.mjs), installed into another empty folder, where it must bring no
# dependency, answer --help and upload a report to that server. Prints each install's time and size.
# Used by .ci/run; runs on its own too:
#   bash scripts/package-smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/mainline-pack.XXXXXX")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

tarball=$(npm pack --silent --pack-destination "$work" | tail -n1)
echo "packed $tarball ($(du -k "$work/$tarball" | cut -f1) KiB)"

mkdir -p "$work/app"
cd "$work/app"
echo '{ "name": "mainline-smoke", "private": true }' > package.json
start=$EPOCHREALTIME
npm install --omit=dev --no-audit --no-fund --loglevel=error "$work/$tarball" > "$work/install.log" 2>&1 \
  || { cat "$work/install.log"; exit 1; }
elapsed=$(node -p "($EPOCHREALTIME - $start).toFixed(1)")
if grep -q EBADENGINE "$work/install.log"; then cat "$work/install.log"; echo "EBADENGINE during install"; exit 1; fi
packages=$(npm ls --omit=dev --all --parseable 2>/dev/null | tail -n +2 | wc -l)
echo "installed with --omit=dev in $elapsed s: $(du -sh node_modules | cut -f1) in node_modules, $packages packages"
test -e node_modules/tsx && { echo "tsx was installed: it must be a dev dependency"; exit 1; }
test -e node_modules/typescript && { echo "typescript was installed: it must be a dev dependency"; exit 1; }

bin=$work/app/node_modules/.bin/mainline
export MAINLINE_DATA_DIR=$work/data LOG_LEVEL=warn
unset DATABASE_URL
"$bin" --help > /dev/null
token=$("$bin" token create --org smoke --name package-smoke --json | node -e \
  'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).token))')
port=$(node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
HOST=127.0.0.1 PORT=$port "$bin" serve > "$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/healthz" > /dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log"; echo "mainline serve exited"; exit 1; }
  sleep 0.2
done
curl -fsS "http://127.0.0.1:$port/healthz"; echo
"$bin" upload --url "http://127.0.0.1:$port" --org smoke --token "$token" \
  --junit "$root/test/fixtures/junit/01-trunk-analytics-cli-googletest-fail.xml" \
  --repo github.com/example/smoke --branch main --sha 0123456789abcdef0123456789abcdef01234567

# The uploader package: one file, no dependencies.
uploader_tarball=$(cd "$root/packages/uploader" && npm pack --silent --pack-destination "$work" | tail -n1)
echo "packed $uploader_tarball ($(du -k "$work/$uploader_tarball" | cut -f1) KiB)"
mkdir -p "$work/ci"
cd "$work/ci"
echo '{ "name": "mainline-upload-smoke", "private": true }' > package.json
start=$EPOCHREALTIME
npm install --no-audit --no-fund --loglevel=error "$work/$uploader_tarball" > "$work/install-uploader.log" 2>&1 \
  || { cat "$work/install-uploader.log"; exit 1; }
elapsed=$(node -p "($EPOCHREALTIME - $start).toFixed(1)")
packages=$(npm ls --all --parseable 2>/dev/null | tail -n +2 | wc -l)
echo "installed mainline-upload in $elapsed s: $(du -sk node_modules | cut -f1) KiB in node_modules, $packages package(s)"
[ "$packages" -eq 1 ] || { npm ls --all; echo "mainline-upload must have no dependencies"; exit 1; }
upload_bin=$work/ci/node_modules/.bin/mainline-upload
"$upload_bin" --help > /dev/null
"$upload_bin" upload --url "http://127.0.0.1:$port" --org smoke --token "$token" \
  --junit "$root/test/fixtures/junit/09-pytest-single-line.xml" \
  --repo github.com/example/smoke --branch main --sha 89abcdef0123456789abcdef0123456789abcdef
echo "package smoke test passed"
