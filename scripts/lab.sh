#!/usr/bin/env bash
# Starts Jupyter Notebook on notebooks/ with token authentication (never disabled) and prints the URL.
# Used by `make lab` and the Docker image; run scripts/setup.sh first.
#
# Environment: LAB_HOST (default 127.0.0.1; the Docker image uses 0.0.0.0), LAB_PORT (default: the
# first free port from 8888; a given port that is busy is an error), LAB_TOKEN (generated when empty).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$ROOT/bin:$ROOT/.tools/bin:$PATH"
export JUPYTER_PATH="$ROOT/.tools/jupyter${JUPYTER_PATH:+:$JUPYTER_PATH}"
host="${LAB_HOST:-127.0.0.1}"
token="${LAB_TOKEN:-}"
if [[ -z "$token" ]]; then
	token="$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
fi

[[ -f "$ROOT/.tools/jupyter/kernels/gonb/kernel.json" ]] || {
	echo "lab: the GoNB kernel is not installed: run scripts/setup.sh (or make lab)" >&2
	exit 1
}

# free HOST PORT: whether PORT can be bound on HOST now (Jupyter brings python3); any other failure
# (a host that is no address of this machine, a port that is no number) ends the script, named.
free() {
	local rc=0
	python3 -c 'import errno, socket, sys
host, port = sys.argv[1], sys.argv[2]
try:
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, int(port)))
    sys.exit(0)
except OSError as e:
    if e.errno == errno.EADDRINUSE:
        sys.exit(1)
    print(f"lab: cannot listen on LAB_HOST={host} LAB_PORT={port}: {e}", file=sys.stderr)
except (ValueError, OverflowError) as e:
    print(f"lab: LAB_PORT={port} is not a port number: {e}", file=sys.stderr)
sys.exit(2)' "$1" "$2" || rc=$?
	((rc <= 1)) || exit 1
	return "$rc"
}

# The port is checked before the URL is printed, so that a busy port never shows a URL that leads to
# another server. LAB_PORT is taken as given; without it the first free port from 8888 is used, as a
# second `make lab` beside a running one would want.
if [[ -n "${LAB_PORT:-}" ]]; then
	port="$LAB_PORT"
	free "$host" "$port" || {
		echo "lab: port $port on $host is in use (LAB_PORT=$port): stop what listens there or choose another LAB_PORT" >&2
		exit 1
	}
else
	port=8888
	until free "$host" "$port"; do
		((++port <= 8938)) || {
			echo "lab: ports 8888-8938 on $host are all in use: set LAB_PORT to a free port" >&2
			exit 1
		}
	done
fi

args=(notebook --no-browser --ip="$host" --port="$port" --port-retries=0
	--notebook-dir="$ROOT/notebooks")
# The token goes through the environment, not the command line (visible in ps).
export JUPYTER_TOKEN="$token"
if [[ "$(id -u)" == 0 ]]; then
	args+=(--allow-root)
fi

# The address to browse to: loopback for "every interface", in brackets for IPv6.
case "$host" in
0.0.0.0) shown=127.0.0.1 ;;
::) shown="[::1]" ;;
*:*) shown="[$host]" ;;
*) shown="$host" ;;
esac
cat <<MSG

  SyncLab is starting. Open this URL in your browser:

      http://$shown:$port/?token=$token

  (Ctrl-C to stop.)

MSG

# GoNB v0.11.5 panics when Jupyter shuts its kernel down at the end ("close of closed channel" in
# kernel.(*Kernel).Stop), before it stops its gopls (which runs in a process group of its own, out of
# reach of Ctrl-C) and removes its gonb_* folder in TMPDIR: a stopped lab left gopls processes and
# folders in /tmp behind. So this server's kernels get a TMPDIR of their own (a short path: gopls's
# unix socket goes in it), and a watcher, which Ctrl-C and SIGTERM leave alone, waits for Jupyter
# (this script's PID after exec) to end, then stops what still runs from that folder and removes it.
session="$(mktemp -d "${TMPDIR:-/tmp}/synclab-lab.XXXXXX")"
export TMPDIR="$session"
(
	trap '' INT HUP TERM
	tail --pid=$$ -f /dev/null || exit
	pattern="$(sed 's/[][\\.*^$+?(){}|]/\\&/g' <<<"$session/")" # pkill takes a regular expression
	pkill -TERM -f -- "$pattern" || true
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		pgrep -f -- "$pattern" >/dev/null || break
		sleep 0.2
	done
	pkill -KILL -f -- "$pattern" || true
	rm -rf -- "$session"
) </dev/null >/dev/null 2>&1 &
exec jupyter "${args[@]}"
