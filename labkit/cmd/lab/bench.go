package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"synclab/labkit"
	"synclab/platforms"
	"synclab/platforms/esp32"
	"synclab/sim"
)

// Experiments lab bench times.
const (
	esp32Experiment  = "esp32-critical-section"
	rk3399Experiment = "rk3399-spinlock-wait"
)

// The default sweep for the speed-up figure: 64 short runs of the rk3399
// wait experiment (about 8 ms of wall time each), so the figure measures the
// runner's parallelism in a few seconds instead of 64 full-length runs.
const (
	sweepDefault    = rk3399Experiment
	sweepDefaultSet = "duration_ms=300"
	sweepRuns       = 64
	sweepTrials     = 3 // the best of 3 timings per worker count (shared machines)
)

// benchFigures holds lab bench's results; a figure that could not be
// measured is absent and explained in Notes.
type benchFigures map[string]any

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	peer := fs.Bool("peer", true, "also time the peer simulators in bench/peers (SimGrid, SimPy; scripts/setup.sh --peers installs them)")
	events := fs.Int("events", 2_000_000, "events for the engine benchmark")
	detailed := fs.Bool("detailed", true, "also time the ESP32 mutex run without fast-forward (about 7 s)")
	sweepName := fs.String("sweep", "", "experiment for the 64-run sweep (default: "+sweepDefault+" with -sweep-set "+sweepDefaultSet+" if registered, else the first in the catalog)")
	var sweepSets multi
	fs.Var(&sweepSets, "sweep-set", "parameter override for the sweep experiment (repeatable; replaces the default "+sweepDefaultSet+")")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("bench takes no positional arguments")
	}
	fig := benchFigures{"gomaxprocs": runtime.GOMAXPROCS(0)}
	notes := []string{} // "notes": [] rather than null in the JSON
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }

	fig["engine_events_per_s"] = sim.BenchEngine(*events)

	timeDefault := func(key, name string, variants ...string) {
		e, err := experimentFromFlags(name, nil, variants, "", 1)
		if err != nil {
			note("%s: %v", key, err)
			return
		}
		e.Sweep = nil
		res, err := labkit.RunExperiment(ctx, e, labkit.RunOptions{NoCache: true, Progress: labkit.NoProgress})
		if err != nil {
			note("%s: %v", key, err)
			return
		}
		fig[key] = res.WallS
	}
	timeDefault("esp32_mutex_2m_wall_s", esp32Experiment, "mutex")
	timeDefault("esp32_all_variants_1m_wall_s", esp32Experiment)
	if *detailed {
		if err := esp32Detailed(ctx, fig); err != nil {
			note("esp32_mutex_2m_detailed_wall_s: %v", err)
		}
	}
	timeDefault("rk3399_default_wall_s", rk3399Experiment)

	if err := sweepSpeedup(ctx, fig, *sweepName, sweepSets); err != nil {
		note("sweep_speedup_2_cores: %v", err)
	}
	if *peer {
		runPeers(ctx, fig, note)
	} else {
		note("simgrid_wall_s, simpy_wall_s: skipped (-peer=false)")
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
	for _, k := range []string{"engine_events_per_s", "esp32_mutex_2m_wall_s", "esp32_mutex_2m_skipped_pct", "esp32_mutex_2m_detailed_wall_s",
		"esp32_all_variants_1m_wall_s", "rk3399_default_wall_s", "sweep_runs", "sweep_experiment",
		"sweep_wall_1_worker_s", "sweep_wall_2_workers_s", "sweep_speedup_2_cores", "simgrid_wall_s", "simgrid_over_synclab_esp32",
		"simpy_wall_s", "simpy_over_synclab_esp32", "gomaxprocs"} {
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

// sweepSpeedup times 64 runs of the sweep experiment (see sweepConfig) on 1
// and on 2 cores (GOMAXPROCS and workers), the best of sweepTrials timings
// each.
func sweepSpeedup(ctx context.Context, fig benchFigures, name string, sets []string) error {
	e, label, err := sweepConfig(name, sets)
	if err != nil {
		return err
	}
	var wall [2]float64
	// "On n cores" means the whole process gets n cores: with one worker but
	// two cores the runtime's garbage collector would run free on the idle
	// one, flattering the single-core time.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for i, workers := range []int{1, 2} {
		runtime.GOMAXPROCS(workers)
		for range sweepTrials {
			res, err := labkit.RunExperiment(ctx, e, labkit.RunOptions{Workers: workers, NoCache: true, Progress: labkit.NoProgress})
			if err != nil {
				return err
			}
			if wall[i] == 0 || res.WallS < wall[i] {
				wall[i] = res.WallS
			}
		}
	}
	fig["sweep_experiment"] = label
	fig["sweep_runs"] = sweepRuns
	fig["sweep_wall_1_worker_s"] = wall[0]
	fig["sweep_wall_2_workers_s"] = wall[1]
	fig["sweep_speedup_2_cores"] = wall[0] / wall[1]
	return nil
}

// sweepConfig is the speed-up sweep: sweepRuns repeats of the first variant
// of the named experiment with sets applied, without its sweep axes. Without
// a name it is sweepDefault with sweepDefaultSet (unless sets are given),
// or the first experiment of the catalog when sweepDefault is not
// registered. label describes it for the figures.
func sweepConfig(name string, sets []string) (e platforms.Experiment, label string, err error) {
	if name == "" {
		if _, err := lookup(sweepDefault); err == nil {
			name = sweepDefault
			if len(sets) == 0 {
				sets = []string{sweepDefaultSet}
			}
		} else if cat := experiments(); len(cat) > 0 {
			name = cat[0].Name
		} else {
			return e, "", fmt.Errorf("no experiment registered")
		}
	}
	if e, err = experimentFromFlags(name, sets, nil, "", sweepRuns); err != nil {
		return e, "", err
	}
	e.Sweep = nil
	e.Variants = e.Variants[:1]
	return e, strings.TrimSpace(fmt.Sprintf("%s variant %s %s", name, e.Variants[0].Name, strings.Join(sets, " "))), nil
}

// esp32Detailed times the mutex run at the article's size without
// fast-forward (every iteration simulated; same results bit for bit) and
// reports how much of the fast-forwarded run was skipped.
func esp32Detailed(ctx context.Context, fig benchFigures) error {
	fast, err := esp32.RunCriticalSection(ctx, esp32.VariantMutex, nil, 1, esp32.RunOptions{})
	if err != nil {
		return err
	}
	fig["esp32_mutex_2m_skipped_pct"] = 100 * fast.FastForward.Time.Millis() / fast.TotalMS
	t0 := time.Now()
	slow, err := esp32.RunCriticalSection(ctx, esp32.VariantMutex, nil, 1, esp32.RunOptions{Detailed: true})
	if err != nil {
		return err
	}
	fig["esp32_mutex_2m_detailed_wall_s"] = time.Since(t0).Seconds()
	if slow.TotalMS != fast.TotalMS || slow.Counter != fast.Counter || slow.Events != fast.Events {
		return fmt.Errorf("detailed run differs from the fast-forwarded one (total %g vs %g ms): a fast-forward bug", slow.TotalMS, fast.TotalMS)
	}
	return nil
}

// peerSections is the peers' workload per core: the ESP32 article's
// 2,000,000 critical sections in all.
const peerSections = 1_000_000

// A peer is a simulator in bench/peers running the ESP32 mutex workload;
// path is relative to the repository root.
type peer struct{ name, path string }

var peers = []peer{
	{"simgrid", ".tools/peers/simgrid-mutex"},
	{"simpy", "bench/peers/simpy/mutex.py"},
}

// runPeers installs the peers (scripts/setup.sh --peers), times each one's
// process at peerSections per core and records NAME_wall_s and, beside
// SyncLab's time for the same count, NAME_over_synclab_esp32.
func runPeers(ctx context.Context, fig benchFigures, note func(string, ...any)) {
	fail := func(format string, a ...any) {
		for _, p := range peers {
			note("%s_wall_s: "+format, append([]any{p.name}, a...)...)
		}
	}
	root := labkit.FindRoot()
	if root == "" {
		fail("repository root not found")
		return
	}
	if out, err := exec.CommandContext(ctx, filepath.Join(root, "scripts", "setup.sh"), "--peers").CombinedOutput(); err != nil {
		fail("scripts/setup.sh --peers: %v: %s", err, strings.TrimSpace(string(out)))
		return
	}
	for _, p := range peers {
		wall, err := timePeer(ctx, filepath.Join(root, p.path))
		if err != nil {
			note("%s_wall_s: %v", p.name, err)
			continue
		}
		fig[p.name+"_wall_s"] = wall
		if esp, ok := fig["esp32_mutex_2m_wall_s"].(float64); ok && esp > 0 {
			fig[p.name+"_over_synclab_esp32"] = wall / esp
		}
	}
}

// timePeer runs one peer and returns its wall time, after checking that it
// reports every critical section done.
func timePeer(ctx context.Context, path string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	t0 := time.Now()
	out, err := exec.CommandContext(ctx, path, strconv.Itoa(peerSections)).Output()
	wall := time.Since(t0).Seconds()
	if err != nil {
		return 0, fmt.Errorf("%s: %v", path, err)
	}
	want := fmt.Sprintf("critical_sections=%d", 2*peerSections)
	if !slices.Contains(strings.Fields(string(out)), want) {
		return 0, fmt.Errorf("%s printed %q, want %s", path, strings.TrimSpace(string(out)), want)
	}
	return wall, nil
}
