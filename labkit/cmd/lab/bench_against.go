package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"synclab/labkit"
)

// againstDefault are the experiments lab bench -against times at both
// revisions: the detailed RK3399 run and the lock-scaling sweep.
const againstDefault = rk3399Experiment + ",lock-scaling"

// resolveRevision finds the repository and the commit rev names.
func resolveRevision(ctx context.Context, rev string) (root, commit string, err error) {
	if root = labkit.FindRoot(); root == "" {
		return "", "", fmt.Errorf("repository root not found")
	}
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short", rev+"^{commit}").CombinedOutput()
	if err != nil {
		return "", "", fmt.Errorf("revision %q: %v: %s", rev, err, strings.TrimSpace(string(out)))
	}
	return root, strings.TrimSpace(string(out)), nil
}

// benchAgainst times each experiment's default run (lab run NAME -fresh)
// with the lab command built at commit of the repository at root and with
// now, alternately, trials times each, and records the best time of each
// side and their ratio: before and after in one run, on one machine. It
// notes an experiment whose results differ between the two (the model or
// the result format changed since rev; a pure speed-up leaves them
// bit-identical).
func benchAgainst(ctx context.Context, fig benchFigures, note func(string, ...any), root, commit string, exps []string, trials int, now string) error {
	dir, err := os.MkdirTemp("", "lab-bench-against-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	before, err := buildRevision(ctx, root, commit, dir)
	if err != nil {
		return err
	}
	fig["against_revision"] = commit
	fig["against_runs"] = strings.Join(exps, ",")
	for _, name := range exps {
		var best [2]float64
		var results [2]map[string]any
		for range trials {
			for i, exe := range []string{before, now} {
				wall, res, err := timeChild(ctx, exe, name, dir)
				if err != nil {
					return err
				}
				if best[i] == 0 || wall < best[i] {
					best[i] = wall
				}
				results[i] = res
			}
		}
		key := strings.ReplaceAll(name, "-", "_")
		fig[key+"_wall_s_before"] = best[0]
		fig[key+"_wall_s_after"] = best[1]
		fig[key+"_speedup"] = best[0] / best[1]
		if !reflect.DeepEqual(results[0], results[1]) {
			note("%s: the results differ from %s's (the model or the result format changed since; a pure speed-up leaves them bit-identical)", name, commit)
		}
	}
	return nil
}

// buildRevision builds the lab command of the repository at root as of
// commit, exported into dir, and returns its path.
func buildRevision(ctx context.Context, root, commit, dir string) (string, error) {
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		return "", err
	}
	archive := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", commit)
	extract := exec.CommandContext(ctx, "tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	extract.Stdin = pipe
	var errs strings.Builder
	archive.Stderr, extract.Stderr = &errs, &errs
	if err := extract.Start(); err != nil {
		return "", err
	}
	if err := archive.Run(); err != nil {
		_ = extract.Wait()
		return "", fmt.Errorf("git archive %s: %v: %s", commit, err, strings.TrimSpace(errs.String()))
	}
	if err := extract.Wait(); err != nil {
		return "", fmt.Errorf("extracting %s: %v: %s", commit, err, strings.TrimSpace(errs.String()))
	}
	exe := filepath.Join(dir, "lab-"+commit)
	build := exec.CommandContext(ctx, "go", "build", "-o", exe, "./labkit/cmd/lab")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building lab at %s: %v: %s", commit, err, strings.TrimSpace(string(out)))
	}
	return exe, nil
}

// timeChild runs exe run name -fresh -json in a result store of its own in
// dir and returns its wall time (the process's, start included) and its
// result without what differs between two runs of the same code (the
// wall time) or two builds (the code stamp).
func timeChild(ctx context.Context, exe, name, dir string) (float64, map[string]any, error) {
	store, err := os.MkdirTemp(dir, "results-")
	if err != nil {
		return 0, nil, err
	}
	defer os.RemoveAll(store)
	cmd := exec.CommandContext(ctx, exe, "run", name, "-fresh", "-json")
	cmd.Env = append(os.Environ(), "SYNCLAB_RESULTS="+store)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, nil, fmt.Errorf("%s run %s: %v: %s", filepath.Base(exe), name, err, strings.TrimSpace(stderr.String()))
	}
	wall := time.Since(start).Seconds()
	var res map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		return 0, nil, fmt.Errorf("%s run %s -json: %v", filepath.Base(exe), name, err)
	}
	delete(res, "wall_s")
	delete(res, "code")
	return wall, res, nil
}
