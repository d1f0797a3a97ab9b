#!/usr/bin/env bash
# Build the container image and run compose.yaml with podman (tests/container/, marker
# `container`): the Debian base image (built once with debootstrap, then kept), PostgreSQL's
# stand-in, the app's image from the Containerfile, then the compose stack. Installs podman,
# runc and debootstrap with apt-get when missing, and podman-compose (the dev extra).
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=dev,postgres bash scripts/setup.sh

missing=()
for program in podman runc debootstrap; do
  command -v "$program" >/dev/null 2>&1 || missing+=("$program")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

export REQSTUDIO_NO_SKIPS="${REQSTUDIO_NO_SKIPS:-1}"
exec .venv/bin/pytest -ra -m container tests/container "$@"
