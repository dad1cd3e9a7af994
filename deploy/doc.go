// Package deploy holds no code: it is the home of the deployment files that
// fan a sweep out over a cluster, and of the tests that run them.
//
//   - slurm/sweep.sh: a Slurm job array, one share of lock-scaling's runs per
//     task (make test-slurm submits it to a one-node cluster).
//   - k8s/lock-scaling-job.yaml: a Kubernetes Indexed Job doing the same, one
//     share per completion index.
//
// The tests decode the Job strictly into the Kubernetes API types, run both
// files' command lines locally for every index against a small experiment,
// merge the shares with lab merge and check the merged runs are bit-identical
// to an unsharded run; the README shows both files as they are. Other tests
// start the lab as make lab does (scripts/lab.sh) and check it listens on
// loopback only, requires its token and refuses a port that is taken.
package deploy
