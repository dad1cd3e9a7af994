#!/bin/bash
#SBATCH --job-name=lock-scaling
#SBATCH --array=0-7
# lock-scaling as a Slurm job array: task i of n computes share i/n of the runs into parts/.
#   sbatch deploy/slurm/sweep.sh [lab run flags, e.g. -set wait=2]
# lab must be on the nodes' PATH and the submit directory shared with them.
set -euo pipefail
mkdir -p parts
lab run lock-scaling -repeats 20 "$@" -shard "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" \
	-result "parts/part-$SLURM_ARRAY_TASK_ID.msgpack"
