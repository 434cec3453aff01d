#!/usr/bin/env bash
# Builds the one-folder application dist/dgxstudio from a clean virtual environment, then checks it
# with --self-test (no display needed). Usage: bash packaging/build.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$root" "pyinstaller>=6"
cd "$here"
"$work/venv/bin/pyinstaller" --noconfirm --clean --distpath "$root/dist" --workpath "$work/build" dgxstudio.spec
"$root/dist/dgxstudio/dgxstudio" --self-test
echo "built $root/dist/dgxstudio"
