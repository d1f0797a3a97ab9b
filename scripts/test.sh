#!/usr/bin/env bash
# Set up everything the tests need (Python packages, Debian's chromium and CJK fonts for the
# browser tests) and run lint plus every test, browser and real-model smoke tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=dev bash scripts/setup.sh

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
for font in fonts-noto-cjk fonts-noto-color-emoji; do
  dpkg -s "$font" >/dev/null 2>&1 || missing+=("$font")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

.venv/bin/ruff check .
.venv/bin/ruff format --check .
exec .venv/bin/pytest -ra "$@"
