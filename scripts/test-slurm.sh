#!/usr/bin/env bash
# Submits the README's Slurm script, deploy/slurm/sweep.sh, to a real one-node Slurm cluster
# (make test-slurm, part of make test), merges the shares with `lab merge` and checks the merged
# runs are bit-identical to an unsharded run.
#
# Installs slurm-wlm and munge from Debian when missing; starts munged, slurmctld and slurmd as
# root under a temporary folder (generated slurm.conf, free non-default ports,
# proctrack/linuxproc, task/none, no accounting) and stops each by its PID on exit. The sweep is
# shrunk to seconds by the flags the script passes on to `lab run`.
# Without root it is skipped with a warning, except on CI (CI=true), where that is a failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SMALL=(-repeats 1 -set duration_ms=5)
t0=$SECONDS

log() { printf 'test-slurm: %s\n' "$*"; }
die() {
	printf 'test-slurm: FAIL: %s\n' "$*" >&2
	for f in "${dir:-/nonexistent}"/*.log; do
		[[ -s "$f" ]] && { echo "--- $f" && tail -15 "$f"; } >&2
	done
	exit 1
}

if [[ "$(id -u)" != 0 ]]; then
	[[ "${CI:-}" == true ]] && die "needs root (slurmd, munged)"
	log "WARNING: skipped: needs root (slurmd, munged)"
	exit 0
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
	log "installing slurm-wlm and munge from Debian"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

dir="$(mktemp -d /tmp/synclab-slurm.XXXXXX)"
chmod 0755 "$dir"
pids=()
cleanup() {
	local rc=$? p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT

# lab, built from this checkout, on the PATH that sbatch passes to the tasks.
go build -C "$ROOT" -o "$dir/bin/lab" ./labkit/cmd/lab
export PATH="$dir/bin:$PATH"
export SYNCLAB_RESULTS="$dir/results"

# munge: a key and a socket of our own.
mkdir -p "$dir/munge"
chmod 0700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$dir/munge/munge.key"
munged -F --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
	--pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
	--log-file="$dir/munged.log" >>"$dir/munged.log" 2>&1 &
pids+=($!)

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ctld_port="$(free_port)"
slurmd_port="$(free_port)"
while [[ "$slurmd_port" == "$ctld_port" ]]; do slurmd_port="$(free_port)"; done
node=synclab-node
mkdir -p "$dir/state" "$dir/spool"
export SLURM_CONF="$dir/slurm.conf"
cat >"$SLURM_CONF" <<-CONF
	ClusterName=synclab-test
	SlurmctldHost=localhost(127.0.0.1)
	SlurmctldPort=$ctld_port
	SlurmdPort=$slurmd_port
	SlurmUser=root
	SlurmdUser=root
	AuthType=auth/munge
	AuthInfo=socket=$dir/munge/munge.sock
	CredType=cred/munge
	StateSaveLocation=$dir/state
	SlurmdSpoolDir=$dir/spool
	SlurmctldPidFile=$dir/slurmctld.pid
	SlurmdPidFile=$dir/slurmd.pid
	SlurmctldLogFile=$dir/slurmctld.log
	SlurmdLogFile=$dir/slurmd.log
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	JobAcctGatherType=jobacct_gather/none
	AccountingStorageType=accounting_storage/none
	SelectType=select/cons_tres
	SelectTypeParameters=CR_CPU
	SlurmdParameters=config_overrides
	ReturnToService=2
	MpiDefault=none
	MailProg=/bin/true
	NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
	PartitionName=synclab Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF

for _ in $(seq 50); do [[ -S "$dir/munge/munge.sock" ]] && break; sleep 0.1; done
[[ -S "$dir/munge/munge.sock" ]] || die "munged did not start"
slurmctld -D -f "$SLURM_CONF" >>"$dir/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -N "$node" -f "$SLURM_CONF" >>"$dir/slurmd.log" 2>&1 &
pids+=($!)

state=""
for _ in $(seq 60); do
	state="$(sinfo -h -n "$node" -o %T 2>/dev/null || true)"
	[[ "$state" == idle ]] && break
	sleep 1
done
[[ "$state" == idle ]] || die "node $node is '$state', not idle, after 60 s"
log "one-node cluster up (slurmctld :$ctld_port, slurmd :$slurmd_port, $(nproc) CPUs) at $((SECONDS - t0)) s"

# The README's script, submitted as it is; the shrinking flags go to lab run.
work="$dir/work"
mkdir -p "$work"
log "sbatch --wait deploy/slurm/sweep.sh ${SMALL[*]}"
(cd "$work" && sbatch --wait --quiet "$ROOT/deploy/slurm/sweep.sh" "${SMALL[@]}") ||
	die "the job array failed: $(cat "$work"/slurm-*.out 2>/dev/null | tail -20)"
want="$(sed -nE 's/^#SBATCH --array=0-([0-9]+)$/\1/p' "$ROOT/deploy/slurm/sweep.sh")"
parts=("$work"/parts/part-*.msgpack)
((${#parts[@]} == want + 1)) || die "${#parts[@]} part files, want $((want + 1)): $(ls "$work" "$work/parts")"
log "the array's $((want + 1)) tasks finished at $((SECONDS - t0)) s"

lab merge "${parts[@]}" -o "$work/merged.msgpack" >"$work/merge.out"
log "$(head -1 "$work/merge.out")"
lab run lock-scaling "${SMALL[@]}" -result "$work/whole.msgpack" >/dev/null
SYNCLAB_SAME_RUNS="$work/merged.msgpack $work/whole.msgpack" go test -C "$ROOT" -count=1 -run '^TestSameRunsFiles$' ./deploy/ ||
	die "the merged result differs from the unsharded run"
log "PASS in $((SECONDS - t0)) s: merged shards bit-identical to the unsharded run"
