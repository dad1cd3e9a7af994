#!/bin/sh
# Entry point of the SyncLab image (see the Dockerfile). Started as root (the default), it gives
# the user lab a mounted /reports that Docker created because the host folder was missing (owned
# by root and empty), then runs the command as lab. Started as lab (docker run --user lab, or a
# Kubernetes securityContext), it runs the command as it is.
set -eu
if [ "$(id -u)" = 0 ]; then
	if [ -d /reports ] && [ "$(stat -c %u /reports)" = 0 ] && [ -z "$(ls -A /reports)" ]; then
		chown lab:lab /reports
	fi
	export HOME=/home/lab USER=lab LOGNAME=lab
	exec setpriv --reuid=lab --regid=lab --init-groups "$@"
fi
exec "$@"
