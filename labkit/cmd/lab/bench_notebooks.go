package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"synclab/labkit/nbexport"
)

// benchNotebooks executes and exports the notebooks cold, as lab report
// does (side by side, one per CPU), in a result store and an output folder
// of its own, and records the total wall time and each notebook's, and the
// CPU time of all the processes they started: the work, which a busy host
// stretches less than the wall time (on n cores the wall time is at least
// the CPU time over n).
func benchNotebooks(ctx context.Context, fig benchFigures, paths []string, note func(string, ...any)) error {
	tmp, err := os.MkdirTemp("", "lab-bench-notebooks-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// Cold: every run simulated. The kernels inherit the environment.
	if prev, ok := os.LookupEnv("SYNCLAB_RESULTS"); ok {
		defer os.Setenv("SYNCLAB_RESULTS", prev)
	} else {
		defer os.Unsetenv("SYNCLAB_RESULTS")
	}
	if err := os.Setenv("SYNCLAB_RESULTS", filepath.Join(tmp, "results")); err != nil {
		return err
	}
	var names []string
	opts := nbexport.Options{OutDir: filepath.Join(tmp, "reports"), Defaults: defaults, Progress: func(e nbexport.Event) {
		if e.Note != "" { // the wall time includes the restart
			note("notebooks_cold_wall_s: %s: %s", filepath.Base(e.Notebook), e.Note)
		}
		if e.Files != nil {
			name := strings.TrimSuffix(filepath.Base(e.Notebook), ".ipynb")
			fig["notebook_"+name+"_wall_s"] = e.Elapsed.Seconds()
			names = append(names, name)
		}
	}}
	start := time.Now()
	cpu0, cpuOK := childrenCPU()
	if err := nbexport.Export(ctx, paths, opts); err != nil {
		return err
	}
	fig["notebooks_cold_wall_s"] = time.Since(start).Seconds()
	if cpu1, ok := childrenCPU(); ok && cpuOK {
		fig["notebooks_cold_cpu_s"] = (cpu1 - cpu0).Seconds()
	}
	slices.Sort(names)
	fig["notebooks_cold"] = strings.Join(names, ", ")
	return nil
}

// notebookKeys lists the per-notebook figures benchNotebooks recorded, in
// name order.
func (fig benchFigures) notebookKeys() []string {
	var keys []string
	for k := range fig {
		if strings.HasPrefix(k, "notebook_") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// notebookPaths is the notebooks -notebooks names: at least one, each one
// that lab report could export here.
func notebookPaths(pattern string) ([]string, error) {
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		return nil, badInput("-notebooks %q: no notebook matches", pattern)
	}
	// Checked before minutes of timing, not as a note after them.
	_, err = nbexport.Preflight(paths, nbexport.Options{OutDir: os.TempDir(), Defaults: defaults})
	var bad *nbexport.BadInputError
	if errors.As(err, &bad) {
		return nil, usageError{fmt.Errorf("-notebooks: %w", err)}
	}
	if err != nil {
		return nil, fmt.Errorf("-notebooks: %w", err)
	}
	return paths, nil
}
