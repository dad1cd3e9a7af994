#!/usr/bin/env bash
# Starts Jupyter Notebook on notebooks/ with token authentication (never disabled) and prints the URL.
# Used by `make lab` and the Docker image; run scripts/setup.sh first.
#
# Environment: LAB_HOST (default 127.0.0.1; the Docker image uses 0.0.0.0), LAB_PORT (8888),
# LAB_TOKEN (generated when empty).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$ROOT/bin:$ROOT/.tools/bin:$PATH"
export JUPYTER_PATH="$ROOT/.tools/jupyter${JUPYTER_PATH:+:$JUPYTER_PATH}"
host="${LAB_HOST:-127.0.0.1}"
port="${LAB_PORT:-8888}"
token="${LAB_TOKEN:-}"
if [[ -z "$token" ]]; then
	token="$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
fi

[[ -f "$ROOT/.tools/jupyter/kernels/gonb/kernel.json" ]] || {
	echo "lab: the GoNB kernel is not installed: run scripts/setup.sh (or make lab)" >&2
	exit 1
}

args=(notebook --no-browser --ip="$host" --port="$port" --port-retries=0
	--notebook-dir="$ROOT/notebooks")
# The token goes through the environment, not the command line (visible in ps).
export JUPYTER_TOKEN="$token"
if [[ "$(id -u)" == 0 ]]; then
	args+=(--allow-root)
fi

shown="$host"
if [[ "$host" == 0.0.0.0 ]]; then shown=127.0.0.1; fi
cat <<MSG

  SyncLab is starting. Open this URL in your browser:

      http://$shown:$port/?token=$token

  (Ctrl-C to stop.)

MSG
exec jupyter "${args[@]}"
