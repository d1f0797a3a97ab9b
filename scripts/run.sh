#!/usr/bin/env bash
# Set up (if needed) and start ReqStudio at http://127.0.0.1:${PORT:-8000}.
# Extra arguments go to `chainlit run` (for example --headless).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"  # MCP stdio servers (mcp-server-time) live here
exec .venv/bin/chainlit run app.py --host "${HOST:-127.0.0.1}" --port "${PORT:-8000}" "$@"
