package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"synclab/labkit"
	"synclab/sim"
)

// Experiments lab bench times.
const (
	esp32Experiment  = "esp32-critical-section"
	rk3399Experiment = "rk3399-spinlock-wait"
)

// benchFigures holds lab bench's results; a figure that could not be
// measured is absent and explained in Notes.
type benchFigures map[string]any

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	peer := fs.Bool("peer", true, "also time the SimGrid peer (../shared/peers/simgrid/run.sh)")
	events := fs.Int("events", 2_000_000, "events for the engine benchmark")
	sweepName := fs.String("sweep", "", "experiment for the 64-run sweep (default: "+esp32Experiment+" if registered, else the first in the catalog)")
	var sweepSets multi
	fs.Var(&sweepSets, "sweep-set", "parameter override for the sweep experiment (repeatable)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("bench takes no positional arguments")
	}
	fig := benchFigures{"gomaxprocs": runtime.GOMAXPROCS(0)}
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }

	fig["engine_events_per_s"] = sim.BenchEngine(*events)

	timeDefault := func(key, name string, variants ...string) {
		e, _, err := labkit.Lookup(name)
		if err != nil {
			note("%s: experiment %s not registered", key, name)
			return
		}
		if len(variants) > 0 {
			if e, err = e.WithVariants(variants...); err != nil {
				note("%s: %v", key, err)
				return
			}
		}
		e.Repeats, e.Sweep = 1, nil
		res, err := labkit.RunExperiment(ctx, e, labkit.RunOptions{NoCache: true, Progress: labkit.NoProgress})
		if err != nil {
			note("%s: %v", key, err)
			return
		}
		fig[key] = res.WallS
	}
	timeDefault("esp32_mutex_2m_wall_s", esp32Experiment, "mutex")
	timeDefault("rk3399_default_wall_s", rk3399Experiment)

	if err := sweepSpeedup(ctx, fig, *sweepName, sweepSets); err != nil {
		note("sweep_speedup_2_cores: %v", err)
	}
	if *peer {
		if err := simgrid(ctx, fig); err != nil {
			note("simgrid_wall_s: %v", err)
		}
	} else {
		note("simgrid_wall_s: skipped (-peer=false)")
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fig["notes"] = notes
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(fig)
	}
	t := labkit.Table{Title: "lab bench", Header: []string{"figure", "value"}}
	for _, k := range []string{"engine_events_per_s", "esp32_mutex_2m_wall_s", "rk3399_default_wall_s", "sweep_runs", "sweep_experiment",
		"sweep_wall_1_worker_s", "sweep_wall_2_workers_s", "sweep_speedup_2_cores", "simgrid_wall_s", "simgrid_over_synclab_esp32", "gomaxprocs"} {
		if v, ok := fig[k]; ok {
			t.Rows = append(t.Rows, []string{k, fmt.Sprint(v)})
		}
	}
	t.WriteText(stdout)
	for _, n := range notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	return nil
}

// sweepSpeedup times 64 runs of an experiment with 1 and with 2 workers.
func sweepSpeedup(ctx context.Context, fig benchFigures, name string, sets []string) error {
	if name == "" {
		if _, _, err := labkit.Lookup(esp32Experiment); err == nil {
			name = esp32Experiment
		} else if cat := labkit.Catalog(); len(cat) > 0 {
			name = cat[0].Name
		} else {
			return fmt.Errorf("no experiment registered")
		}
	}
	e, _, err := labkit.Lookup(name)
	if err != nil {
		return err
	}
	if e, err = e.WithSettings(sets...); err != nil {
		return err
	}
	e.Sweep = nil
	e.Variants = e.Variants[:1]
	e.Repeats = 64
	var wall [2]float64
	for i, workers := range []int{1, 2} {
		res, err := labkit.RunExperiment(ctx, e, labkit.RunOptions{Workers: workers, NoCache: true, Progress: labkit.NoProgress})
		if err != nil {
			return err
		}
		wall[i] = res.WallS
	}
	fig["sweep_experiment"] = name + " variant " + e.Variants[0].Name
	fig["sweep_runs"] = 64
	fig["sweep_wall_1_worker_s"] = wall[0]
	fig["sweep_wall_2_workers_s"] = wall[1]
	fig["sweep_speedup_2_cores"] = wall[0] / wall[1]
	return nil
}

// simgrid runs the SimGrid peer benchmark (N = 1,000,000 per actor, the
// ESP32 article's 2,000,000 critical sections) found in shared/peers next
// to the repository.
func simgrid(ctx context.Context, fig benchFigures) error {
	root := labkit.FindRoot()
	if root == "" {
		return fmt.Errorf("repository root not found")
	}
	script := filepath.Join(filepath.Dir(root), "shared", "peers", "simgrid", "run.sh")
	if _, err := os.Stat(script); err != nil {
		return fmt.Errorf("skipped: %s not present", script)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", script, "1000000").Output()
	if err != nil {
		return fmt.Errorf("%s: %v", script, err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		for _, f := range strings.Fields(sc.Text()) {
			if v, ok := strings.CutPrefix(f, "simgrid_wall_s="); ok {
				s, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return fmt.Errorf("unparsable output %q", f)
				}
				fig["simgrid_wall_s"] = s
				if esp, ok := fig["esp32_mutex_2m_wall_s"].(float64); ok && esp > 0 {
					fig["simgrid_over_synclab_esp32"] = s / esp
				}
				return nil
			}
		}
	}
	return fmt.Errorf("no simgrid_wall_s in the output of %s", script)
}
