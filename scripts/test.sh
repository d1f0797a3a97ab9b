#!/usr/bin/env bash
# Set up everything the tests need (Python packages, Debian's chromium and CJK fonts for the
# browser tests, Debian's PostgreSQL server for the PostgreSQL and two-instance tests) and run
# lint plus every test, browser and real-model smoke tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=dev,postgres bash scripts/setup.sh

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
for font in fonts-noto-cjk fonts-noto-color-emoji; do
  dpkg -s "$font" >/dev/null 2>&1 || missing+=("$font")
done
# the tests start their own server (initdb in a temporary directory), not the system's
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# A skipped test fails the run unless tests/allowed_skips.toml lists it with the reason
# (tests/skip_policy.py): what the tests need is installed above, so a skip means less was tested.
export REQSTUDIO_NO_SKIPS="${REQSTUDIO_NO_SKIPS:-1}"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# Two workers (pytest-xdist), a test file to each at a time: the browser and CLI tests wait on
# processes they start, so two files share this 2-core machine's time well; REQSTUDIO_TEST_WORKERS=0
# runs everything in one process.
workers="${REQSTUDIO_TEST_WORKERS:-2}"
parallel=()
[ "$workers" = "0" ] || parallel=(-n "$workers" --dist loadfile)
exec .venv/bin/pytest -ra "${parallel[@]}" "$@"
