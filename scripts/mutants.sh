#!/usr/bin/env bash
# usage: scripts/mutants.sh [MUTANT-REGEXP]
# Re-applies every mutant of labkit/mutation_test.go (through go test's
# -overlay: the tree is never touched) and checks that its killing test
# fails on it. About three minutes; make test does not run it.
# SYNCLAB_MUTANTS=suite runs each mutated package's whole suite instead and
# lists every test that fails.
set -euo pipefail
cd "$(dirname "$0")/.."
SYNCLAB_MUTANTS=${SYNCLAB_MUTANTS:-1} exec go test -count=1 -timeout 3h -v -run "TestMutants/${1:-}" ./labkit/
