# SyncLab: `make lab` to explore, `make test` for the whole suite. See scripts/setup.sh.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

ROOT  := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
TOOLS := $(ROOT)/.tools
# Tools built by the setup and the repo-local GoNB kernel come first.
export PATH := $(TOOLS)/bin:$(PATH)
export JUPYTER_PATH := $(TOOLS)/jupyter$(if $(JUPYTER_PATH),:$(JUPYTER_PATH))

# Overrides: make lab LAB_HOST=0.0.0.0 LAB_PORT=9999 (LAB_TOKEN is generated when empty; without
# LAB_PORT, scripts/lab.sh takes the first free port from 8888).
LAB_HOST ?= 127.0.0.1
LAB_PORT ?=
export LAB_HOST LAB_PORT LAB_TOKEN

NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))
REPORTS   ?= reports

.PHONY: help setup setup-test lab lab-cli pgo test test-race test-fuzz test-board test-image test-slurm report clean-tools

help:
	@echo "make lab     install what is missing (once), then start Jupyter on notebooks/ ($(LAB_HOST):$(or $(LAB_PORT),8888 or the next free port), token auth)"
	@echo "make test    go vet, every Go test, every notebook executed headless and its HTML checked (Chromium),"
	@echo "             then make test-race, test-fuzz, test-board, test-slurm and test-image"
	@echo "make setup   install what the lab needs: Jupyter, the GoNB kernel, the chart library (make lab runs it)"
	@echo "make test-race   the engine, the runner and its worker pool under the race detector"
	@echo "make test-fuzz   each fuzz target for $(FUZZTIME) (result files, merge, journal, references, -set, -shard, notebooks, experiments at random settings, random programs on the engine)"
	@echo "make test-board  the board benchmarks cross-compiled for arm64 and smoke-run under qemu-user"
	@echo "make test-slurm  the README's Slurm script on a one-node Slurm cluster (root)"
	@echo "make test-image  the Dockerfile built with buildah and run: a report and Jupyter (root)"
	@echo "make report  export every notebook to $(REPORTS)/ as self-contained HTML"
	@echo "make pgo     regenerate the CLI's profile for profile-guided optimization (labkit/cmd/lab/default.pgo)"

setup:
	@scripts/setup.sh

setup-test:
	@scripts/setup.sh --test

# bin/lab, the CLI (`lab run`, `lab report`), on PATH inside the lab.
lab-cli:
	@go build -o bin/lab ./labkit/cmd/lab

# labkit/cmd/lab/default.pgo is the CPU profile go build optimizes the CLI with (profile-guided
# optimization: the compiler inlines the engine's hot calls; results are unchanged, bit for bit). It is
# the detailed-engine benchmarks' profile; make pgo regenerates it after large changes to the engine.
pgo:
	d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
		go test -run '^$$' -bench MutexDetailed -benchtime 10x -cpuprofile $$d/esp32.out -o $$d/esp32.test ./platforms/esp32/ && \
		go test -run '^$$' -bench 'SpinlockWait|LockScaling' -benchtime 4x -cpuprofile $$d/rk3399.out -o $$d/rk3399.test ./platforms/rk3399/ && \
		go tool pprof -proto $$d/esp32.out $$d/rk3399.out > labkit/cmd/lab/default.pgo

lab: setup lab-cli
	@scripts/lab.sh

# -count=1: never the test cache, which cannot see that a notebook's inputs changed. The tests keep
# their results in a fresh store, never the user's data/results, so they always simulate.
test: setup-test
	go vet ./...
	results=$$(mktemp -d) && trap 'rm -rf "$$results"' EXIT && \
		SYNCLAB_RESULTS=$$results SYNCLAB_E2E=1 go test -count=1 -timeout 30m ./...
	@$(MAKE) --no-print-directory test-race test-fuzz test-board
	@scripts/test-slurm.sh
	@scripts/test-image.sh

# The engine's coroutines and the runner's workers under the race detector: runs go side by side, and
# a data race between them would break bit-identical results (the tests compare GOMAXPROCS settings).
test-race:
	go test -race -count=1 ./sim/... ./labkit ./labkit/internal/pool

# A short fuzzing run of each target, from its seed corpus (-fuzzminimizetime keeps the workers fuzzing).
# Budgets count executions, not seconds: with go1.26 a -fuzztime in seconds can end a clean run with
# "context deadline exceeded" (the coordinator's shutdown race, golang/go#75804, fixed in go1.27).
FUZZTIME ?= 20000x
# FuzzSettings runs a simulation per execution (milliseconds, not microseconds): a budget of its own.
FUZZTIME_SIM ?= 1500x
FUZZ_LABKIT := FuzzDecode FuzzMerge FuzzReadJournal FuzzParseReferences FuzzWithSettings FuzzParseShard
test-fuzz:
	for f in $(FUZZ_LABKIT); do \
		go test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 100x ./labkit/ ; done
	go test -run '^$$' -fuzz '^FuzzParseNotebook$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x ./labkit/nbexport/
	go test -run '^$$' -fuzz '^FuzzSettings$$' -fuzztime $(FUZZTIME_SIM) -fuzzminimizetime 10x ./labkit/catalog/
	go test -run '^$$' -fuzz '^FuzzPrograms$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x ./sim/

test-board:
	@bench/board/test.sh

test-slurm:
	@scripts/test-slurm.sh

test-image: setup-test
	@scripts/test-image.sh

report: setup lab-cli
	bin/lab report $(NOTEBOOKS) -o $(REPORTS)
	@echo "reports written to $(REPORTS)/"

clean-tools:
	rm -rf .tools bin
