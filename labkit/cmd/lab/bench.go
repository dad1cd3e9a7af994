package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"

	"synclab/labkit"
	"synclab/platforms"
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
	fs := newFlags("bench", stdout)
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	peer := fs.Bool("peer", true, "also time the peer simulators in bench/peers (SimGrid, SimPy; scripts/setup.sh --peers installs them)")
	peerTrials := fs.Int("peer-trials", 3, "rounds of the peer comparison, each timing the ESP32 mutex run (fast-forwarded and detailed), the peers' workload on the bare engine (sim_lock_2m_wall_s) and every peer in turn; the best of each counts")
	events := fs.Int("events", 2_000_000, "events for the engine benchmark, and round trips for the coroutine one")
	detailed := fs.Bool("detailed", true, "also time the ESP32 mutex run without fast-forward (about 5 s)")
	scaling := fs.Bool("scaling", true, "also time child runs at growing iterations and cores, for the slopes (about 10 s)")
	sweepName := fs.String("sweep", "", "experiment for the 64-run sweep (default: "+sweepDefault+" with -sweep-set "+sweepDefaultSet+" if registered, else the first in the catalog)")
	report := fs.String("o", "", "also write the figures and the slopes' charts to this HTML `file`")
	notebooks := fs.String("notebooks", "", "also execute and export the notebooks matching this `glob` cold, side by side as lab report does (e.g. 'notebooks/0[0-4]*.ipynb'; needs make setup)")
	against := fs.String("against", "", "also time "+againstDefault+" (or -against-runs) with the lab command built at this git `revision` and now, alternately: before and after in one run")
	againstRuns := &listFlag{value: againstDefault}
	fs.Var(againstRuns, "against-runs", "experiments -against times, comma-separated (or the flag repeated)")
	againstTrials := fs.Int("against-trials", 3, "timings per side and experiment for -against; the best counts")
	var sweepSets multi
	fs.Var(&sweepSets, "sweep-set", "parameter override for the sweep experiment (repeatable; replaces the default "+sweepDefaultSet+")")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return extraArgs("bench", pos, "")
	}
	// Every input is checked before the first timing: a typo found after
	// minutes of benchmarks would waste them.
	if *report != "" {
		if err := labkit.CheckOutput(*report); err != nil {
			return badInput("-o: %v", err)
		}
	}
	if *events < 1 {
		return badInput("-events %d: want at least 1", *events)
	}
	if *peerTrials < 1 {
		return badInput("-peer-trials %d: want at least 1", *peerTrials)
	}
	sweep, sweepLabel, err := sweepConfig(*sweepName, sweepSets)
	if err != nil {
		flag := "-sweep " + *sweepName
		if *sweepName == "" {
			flag = "-sweep-set " + strings.Join(sweepSets, " ")
		}
		return badInput("%s: %v", flag, err)
	}
	var nbPaths []string
	if *notebooks != "" {
		if nbPaths, err = notebookPaths(*notebooks); err != nil {
			return err
		}
	}
	var againstExps []string
	var againstRoot, againstCommit string
	if *against != "" {
		if *againstTrials < 1 {
			return badInput("-against-trials %d: want at least 1", *againstTrials)
		}
		names, err := commaList("against-runs", againstRuns.value)
		if err != nil {
			return err
		}
		for _, name := range names {
			if _, err := lookup(name); err != nil {
				return badInput("-against-runs: %v", err)
			}
			againstExps = append(againstExps, name)
		}
		if againstRoot, againstCommit, err = resolveRevision(ctx, *against); err != nil {
			return badInput("-against: %v", err)
		}
	}
	fig := benchFigures{"gomaxprocs": runtime.GOMAXPROCS(0)}
	notes := []string{} // "notes": [] rather than null in the JSON
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }

	fig["engine_events_per_s"] = sim.BenchEngine(*events)
	fig["engine_ns_per_event"] = 1e9 / fig["engine_events_per_s"].(float64)
	fig["coroutine_round_trip_ns"] = sim.BenchCoroutine(*events)

	timeDefault := func(key, name string, variants ...string) *labkit.Result {
		res, err := timeRun(ctx, name, variants, labkit.RunOptions{})
		if err != nil {
			note("%s: %v", key, err)
			return nil
		}
		fig[key] = res.WallS
		return res
	}
	mutex := timeDefault("esp32_mutex_2m_wall_s", esp32Experiment, "mutex")
	timeDefault("esp32_all_variants_1m_wall_s", esp32Experiment)
	if *detailed && mutex != nil {
		if err := esp32Detailed(ctx, fig, mutex); err != nil {
			note("esp32_mutex_2m_detailed_wall_s: %v", err)
		}
	}
	timeDefault("rk3399_default_wall_s", rk3399Experiment)

	if err := sweepSpeedup(ctx, fig, sweep, sweepLabel); err != nil {
		note("sweep_speedup_2_cores: %v", err)
	}
	if *scaling {
		for _, sc := range scalings {
			if err := sc.measure(ctx, fig); err != nil {
				note("%s slopes: %v", sc.axis, err)
			}
		}
	} else {
		note("slopes: skipped (-scaling=false)")
	}
	if *notebooks != "" {
		if err := benchNotebooks(ctx, fig, nbPaths, note); err != nil {
			note("notebooks_cold_wall_s: %v", err)
		}
	}
	if *against != "" {
		exe, err := os.Executable()
		if err == nil {
			err = benchAgainst(ctx, fig, note, againstRoot, againstCommit, againstExps, *againstTrials, exe)
		}
		if err != nil {
			note("-against %s: %v", *against, err)
		}
	}
	if *peer {
		runPeers(ctx, fig, note, stderr, *peerTrials, *detailed)
	} else {
		note("simgrid_wall_s, simpy_wall_s: skipped (-peer=false)")
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fig["notes"] = notes
	if *report != "" {
		if err := writeReport(stderr, benchReport(fig), *report); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(stdout, fig)
	}
	fig.table().WriteText(stdout)
	for _, n := range notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	return nil
}

// table lists the figures measured, in a fixed order, numbers written for
// people (-json keeps them exact).
func (fig benchFigures) table() labkit.Table {
	t := labkit.Table{Title: "lab bench", Header: []string{"figure", "value"}}
	keys := []string{"engine_events_per_s", "engine_ns_per_event", "coroutine_round_trip_ns", "esp32_mutex_2m_wall_s", "esp32_mutex_2m_skipped_pct",
		"esp32_mutex_2m_detailed_wall_s", "esp32_mutex_2m_simulated_s", "esp32_mutex_2m_detailed_real_time_factor", "esp32_mutex_2m_events", "esp32_mutex_2m_detailed_ns_per_event", "esp32_mutex_2m_events_at_engine_speed_s",
		"esp32_mutex_2m_switches", "esp32_mutex_2m_floor_s",
		"esp32_all_variants_1m_wall_s", "rk3399_default_wall_s", "sweep_runs", "sweep_experiment",
		"sweep_wall_1_worker_s", "sweep_wall_2_workers_s", "sweep_speedup_2_cores"}
	for _, sc := range scalings {
		keys = append(keys, sc.keys()...)
	}
	keys = append(keys, "peer_trials", "sim_lock_2m_wall_s", "simgrid_wall_s", "simgrid_over_synclab_esp32", "simgrid_over_synclab_esp32_detailed",
		"simgrid_over_synclab_sim_lock", "simpy_wall_s", "simpy_over_synclab_esp32", "simpy_over_synclab_esp32_detailed",
		"simpy_over_synclab_sim_lock", "notebooks_cold", "notebooks_cold_wall_s", "notebooks_cold_cpu_s")
	keys = append(keys, fig.notebookKeys()...)
	if _, ok := fig["against_revision"]; ok {
		keys = append(keys, "against_revision")
		for _, name := range strings.Split(fmt.Sprint(fig["against_runs"]), ",") {
			key := strings.ReplaceAll(name, "-", "_")
			keys = append(keys, key+"_wall_s_before", key+"_wall_s_after", key+"_speedup")
		}
	}
	keys = append(keys, "gomaxprocs")
	for _, k := range keys {
		v, ok := fig[k]
		if !ok {
			continue
		}
		s := fmt.Sprint(v)
		switch x := v.(type) {
		case float64:
			s = labkit.Num(x)
		case uint64:
			s = labkit.Num(float64(x))
		}
		t.Rows = append(t.Rows, []string{k, s})
	}
	return t
}

// benchReport is lab bench -o: the figures, then for each slope measured
// its wall time and peak RSS against the parameter, each beside its
// least-squares line (what the slope figures summarise).
func benchReport(fig benchFigures) *labkit.Report {
	r := labkit.NewReport("SyncLab speed: lab bench")
	r.Markdown(fmt.Sprintf("Measured with GOMAXPROCS=%v. Each point of a slope is one `lab run` in a child process "+
		"(its own peak RSS, GNU time), wall time without the process's start.", fig["gomaxprocs"]))
	for _, sc := range scalings {
		pts, ok := fig[sc.axis+"_points"].([]scalingPoint)
		if !ok {
			continue
		}
		x := make([]float64, len(pts))
		wall, rss := make([]float64, len(pts)), make([]float64, len(pts))
		for i, p := range pts {
			x[i], wall[i], rss[i] = p.Value, p.WallS, p.PeakRSSMB
		}
		what := sc.experiment + " " + sc.variant
		r.Chart(
			labkit.Lines(fmt.Sprintf("Wall time vs %s (%s): exponent %.2f", sc.axis, what, fig[sc.axis+"_wall_exponent"]),
				sc.axis, "s", x, labkit.Series{Name: "measured", Values: wall}, labkit.Series{Name: "linear fit", Values: linearFit(x, wall)}),
			labkit.Lines(fmt.Sprintf("Peak RSS vs %s (%s)", sc.axis, what),
				sc.axis, "MB", x, labkit.Series{Name: "measured", Values: rss}, labkit.Series{Name: "linear fit", Values: linearFit(x, rss)}))
		if sc.ops != "" && !slices.ContainsFunc(pts, func(p scalingPoint) bool { return p.Ops <= 0 }) {
			perOp := make([]float64, len(pts))
			counts := make([]string, len(pts))
			for i, p := range pts {
				perOp[i] = 1e6 * p.WallS / p.Ops
				counts[i] = fmt.Sprintf("%s at %g", labkit.Num(p.Ops), p.Value)
			}
			counts[0] += " " + sc.axis
			r.Markdown(fmt.Sprintf("Each point simulates the same time, and a contended lock serializes the work: the wall time "+
				"follows how many %ss fit in it (%s), which depends on how far the lock travels. Per %s:",
				sc.op, strings.Join(counts, ", "), sc.op))
			r.Chart(labkit.Lines(fmt.Sprintf("Wall time per %s vs %s (%s)", sc.op, sc.axis, what),
				sc.axis, "µs", x, labkit.Series{Name: "measured", Values: perOp}))
		}
	}
	return r.Table(fig.table())
}

// linearFit returns the least-squares line through (x, y) at x.
func linearFit(x, y []float64) []float64 {
	a, b := stat.LinearRegression(x, y, nil, false)
	fit := make([]float64, len(x))
	for i, v := range x {
		fit[i] = a + b*v
	}
	return fit
}

// sweepSpeedup times 64 runs of the sweep experiment (see sweepConfig) on 1
// and on 2 cores (GOMAXPROCS and workers), the best of sweepTrials timings
// each, after an untimed warm-up run.
func sweepSpeedup(ctx context.Context, fig benchFigures, e platforms.Experiment, label string) error {
	var wall [2]float64
	// "On n cores" means the whole process gets n cores: with one worker but
	// two cores the runtime's garbage collector would run free on the idle
	// one, flattering the single-core time.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	// An untimed run first: the process's first touch of fresh memory is
	// dear on a VM, and would count against whichever side went first (the
	// speed-up came out above 2 on 2 cores).
	if _, err := labkit.RunExperiment(ctx, e, labkit.RunOptions{Workers: 2, NoCache: true, Progress: labkit.NoProgress}); err != nil {
		return err
	}
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

// timeRun runs the named experiment's default point (no sweep) once per
// variant (all when none is named), without the cache, and returns the
// result with its wall time.
func timeRun(ctx context.Context, name string, variants []string, opts labkit.RunOptions) (*labkit.Result, error) {
	e, err := experimentFromFlags(name, nil, variants, "", 1)
	if err != nil {
		return nil, err
	}
	e.Sweep = nil
	opts.NoCache, opts.Progress = true, labkit.NoProgress
	return labkit.RunExperiment(ctx, e, opts)
}

// esp32Detailed times the mutex run at the article's size without
// fast-forward (every iteration simulated), checks that its metrics and
// samples equal those of the fast-forwarded run fast, bit for bit, and
// reports the share of simulated time fast-forward skipped, the run's
// simulated time (the modelled chip's own time for the run), the events the
// run dispatches, the coroutine round trips the detailed run takes and its
// wall time per event, beside the floor of any detailed run with those
// events and round trips: each at the cost of an empty event and a bare
// round trip, the model doing nothing.
func esp32Detailed(ctx context.Context, fig benchFigures, fast *labkit.Result) error {
	e, err := lookup(esp32Experiment)
	if err != nil {
		return err
	}
	run := fast.Runs[0]
	spec := platforms.RunSpec{Experiment: e.Name, Variant: run.Variant, Params: e.PointParams(0), Seed: run.Seed, Detailed: true}
	// Run directly, not through the runner, so that the run's own counts
	// (switches, which no metric records) come with its wall time.
	start := time.Now()
	slow, err := e.Run(ctx, spec)
	wall := time.Since(start).Seconds()
	if err != nil {
		return err
	}
	if err := sameRuns(fast.Runs, []labkit.Run{{Metrics: slow.Metrics, Samples: slow.Samples}}); err != nil {
		return fmt.Errorf("detailed run differs from the fast-forwarded one (a fast-forward bug): %w", err)
	}
	// The skipped share is no metric either: ask the fast-forwarded run.
	spec.Detailed = false
	rr, err := e.Run(ctx, spec)
	if err != nil {
		return err
	}
	fig["esp32_mutex_2m_skipped_pct"] = 100 * rr.Skipped
	if ms, ok := slow.Metrics["total_ms"]; ok && ms > 0 {
		fig["esp32_mutex_2m_simulated_s"] = ms / 1000
	}
	if slow.Events > 0 {
		fig["esp32_mutex_2m_events"] = slow.Events
		fig["esp32_mutex_2m_switches"] = slow.Switches
		ns, ok1 := fig["engine_ns_per_event"].(float64)
		trip, ok2 := fig["coroutine_round_trip_ns"].(float64)
		if ok1 {
			fig["esp32_mutex_2m_events_at_engine_speed_s"] = float64(slow.Events) * ns / 1e9
		}
		if ok1 && ok2 {
			fig["esp32_mutex_2m_floor_s"] = (float64(slow.Events)*ns + float64(slow.Switches)*trip) / 1e9
		}
	}
	fig.setDetailedWall(wall)
	return nil
}

// setDetailedWall records the detailed run's wall time and, when its
// events are known, the time per event; when its simulated time is known,
// the real-time factor: seconds of the modelled chip's time simulated per
// second of wall time (above 1, the model runs faster than the chip it
// models).
func (fig benchFigures) setDetailedWall(wall float64) {
	fig["esp32_mutex_2m_detailed_wall_s"] = wall
	if n, ok := fig["esp32_mutex_2m_events"].(uint64); ok && n > 0 {
		fig["esp32_mutex_2m_detailed_ns_per_event"] = wall * 1e9 / float64(n)
	}
	if s, ok := fig["esp32_mutex_2m_simulated_s"].(float64); ok && wall > 0 {
		fig["esp32_mutex_2m_detailed_real_time_factor"] = s / wall
	}
}

// sameRuns reports the first difference between two lists of runs in their
// metrics or samples, bit for bit.
func sameRuns(a, b []labkit.Run) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d runs and %d", len(a), len(b))
	}
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	for i := range a {
		if len(a[i].Metrics) != len(b[i].Metrics) || len(a[i].Samples) != len(b[i].Samples) {
			return fmt.Errorf("run %d: %d and %d metrics, %d and %d samples", i, len(a[i].Metrics), len(b[i].Metrics), len(a[i].Samples), len(b[i].Samples))
		}
		for k, x := range a[i].Metrics {
			if y, ok := b[i].Metrics[k]; !ok || !same(x, y) {
				return fmt.Errorf("run %d: metric %s = %v and %v", i, k, x, y)
			}
		}
		for k, xs := range a[i].Samples {
			ys := b[i].Samples[k]
			if len(xs) != len(ys) {
				return fmt.Errorf("run %d: %d and %d samples %s", i, len(xs), len(ys), k)
			}
			for j := range xs {
				if !same(xs[j], ys[j]) {
					return fmt.Errorf("run %d: sample %s[%d] = %v and %v", i, k, j, xs[j], ys[j])
				}
			}
		}
	}
	return nil
}

// scaling is a series of runs of one experiment variant at growing values
// of one parameter, each in a child process (lab run) so that its peak RSS
// is its own: the figures are the points and least-squares slopes of wall
// time (the run's, without the process's start) and peak RSS against the
// parameter, and the exponent of wall time (the slope in log-log: 1 is
// linear).
type scaling struct {
	axis, experiment, variant string
	values                    []float64
	sets                      []string // other settings of every point
	per                       float64  // the slopes' unit of the parameter
	unit                      string   // its name in the figures' keys
	// ops, when set, is the metric that counts the work a point did, when
	// the parameter does not fix it (a run of fixed simulated time): the
	// report also draws the wall time per op, the cost that the work hides.
	ops, op string
}

// scalings are lab bench's slopes: ESP32 iterations (the article's mutex
// run, fast-forwarded as lab run does it) and cores (lock-scaling's
// qspinlock, 200 ms of simulated time: shorter runs time mostly noise; how
// many critical sections fit in it depends on where the lock travels).
var scalings = []scaling{
	{axis: "iterations", experiment: esp32Experiment, variant: "mutex", values: []float64{1e5, 3e5, 1e6, 3e6, 1e7}, per: 1e6, unit: "1e6"},
	{axis: "cores", experiment: "lock-scaling", variant: "qspinlock", values: []float64{2, 4, 8, 16, 32, 64}, sets: []string{"duration_ms=200"}, per: 1, unit: "core",
		ops: "counter", op: "critical section"},
}

// keys lists the figures of s, for the table.
func (s scaling) keys() []string {
	p := s.axis + "_"
	return []string{p + "wall_s_per_" + s.unit, p + "wall_exponent", p + "rss_mb_per_" + s.unit, p + "rss_mb_max"}
}

// gnuTime is GNU time, which reports the peak RSS of the process it starts.
// A child started from lab bench itself would not do: Go starts children
// with vfork, so the kernel counts the parent's peak RSS into the child's.
const gnuTime = "/usr/bin/time"

// runChild runs exe with args and returns its peak RSS in KiB, measured by
// GNU time.
func runChild(ctx context.Context, exe string, args []string) (rssKB int64, err error) {
	cmd := exec.CommandContext(ctx, gnuTime, append([]string{"-f", "synclab_maxrss_kb=%M", exe}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("lab %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	out := stderr.String()
	i := strings.LastIndex(out, "synclab_maxrss_kb=")
	if i < 0 {
		return 0, fmt.Errorf("%s printed no peak RSS: %q", gnuTime, out)
	}
	return strconv.ParseInt(strings.TrimSpace(out[i+len("synclab_maxrss_kb="):]), 10, 64)
}

// scalingPoint is one child run: its parameter value, wall time and peak RSS.
type scalingPoint struct {
	Value     float64 `json:"value"`
	WallS     float64 `json:"wall_s"`
	PeakRSSMB float64 `json:"peak_rss_mb"`
	Ops       float64 `json:"ops,omitempty"` // the work done (scaling.ops), when counted
}

// measure runs the series and adds its figures.
func (s scaling) measure(ctx context.Context, fig benchFigures) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if _, err := os.Stat(gnuTime); err != nil {
		return fmt.Errorf("skipped: %s (GNU time, apt-get install time) measures the peak RSS: %v", gnuTime, err)
	}
	dir, err := os.MkdirTemp("", "lab-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var pts []scalingPoint
	var x, wall, rss, logX, logWall []float64
	for i, v := range s.values {
		file := filepath.Join(dir, fmt.Sprintf("%d.msgpack", i))
		args := []string{"run", s.experiment, "-variant", s.variant, "-repeats", "1", "-fresh",
			"-result", file, "-set", fmt.Sprintf("%s=%g", s.axis, v)}
		for _, set := range s.sets {
			args = append(args, "-set", set)
		}
		rssKB, err := runChild(ctx, exe, args)
		if err != nil {
			return err
		}
		res, err := labkit.Load(file)
		if err != nil {
			return err
		}
		pt := scalingPoint{Value: v, WallS: res.WallS, PeakRSSMB: float64(rssKB) / 1024}
		if s.ops != "" {
			pt.Ops = res.Mean(s.variant, 0, s.ops)
		}
		pts = append(pts, pt)
		x, wall, rss = append(x, v/s.per), append(wall, pt.WallS), append(rss, pt.PeakRSSMB)
		logX, logWall = append(logX, math.Log(v)), append(logWall, math.Log(pt.WallS))
	}
	p := s.axis + "_"
	fig[p+"points"] = pts
	_, fig[p+"wall_s_per_"+s.unit] = stat.LinearRegression(x, wall, nil, false)
	_, fig[p+"wall_exponent"] = stat.LinearRegression(logX, logWall, nil, false)
	_, fig[p+"rss_mb_per_"+s.unit] = stat.LinearRegression(x, rss, nil, false)
	fig[p+"rss_mb_max"] = slices.Max(rss)
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

// runPeers installs the peers (scripts/setup.sh --peers, which apt-gets
// their Debian packages as root; its log goes to log so nothing is
// installed unseen), then in each of trials rounds times SyncLab's ESP32
// mutex run (fast-forwarded, and detailed when detailed is set), the
// peers' own workload on the bare engine (sim.BenchLock) and each peer's
// process at peerSections per core, in turn: a slow spell of a shared host
// then falls on both sides alike, and the best time of each counts. It
// records NAME_wall_s and, beside SyncLab's best times for the same count,
// NAME_over_synclab_esp32 (and _detailed) and NAME_over_synclab_sim_lock.
func runPeers(ctx context.Context, fig benchFigures, note func(string, ...any), log io.Writer, trials int, detailed bool) {
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
	setup := exec.CommandContext(ctx, filepath.Join(root, "scripts", "setup.sh"), "--peers")
	setup.Stdout, setup.Stderr = log, log
	if err := setup.Run(); err != nil {
		fail("scripts/setup.sh --peers: %v (its log is above)", err)
		return
	}
	mutex := func(key string, opts labkit.RunOptions) timing {
		return timing{key, func() (float64, error) {
			res, err := timeRun(ctx, esp32Experiment, []string{"mutex"}, opts)
			if err != nil {
				return 0, err
			}
			return res.WallS, nil
		}}
	}
	timings := []timing{mutex("esp32_mutex_2m_wall_s", labkit.RunOptions{})}
	if detailed {
		timings = append(timings, mutex("esp32_mutex_2m_detailed_wall_s", labkit.RunOptions{Detailed: true}))
	}
	// The peers' own workload at the engine's level, without the ESP32's
	// kernel: the like-for-like comparison.
	timings = append(timings, timing{"sim_lock_2m_wall_s", func() (float64, error) {
		start := time.Now()
		_, err := sim.BenchLock(peerSections)
		return time.Since(start).Seconds(), err
	}})
	for _, p := range peers {
		path := filepath.Join(root, p.path)
		timings = append(timings, timing{p.name + "_wall_s", func() (float64, error) { return timePeer(ctx, path) }})
	}
	best := bestOf(trials, timings, note)
	for key, v := range fig { // the first timings of SyncLab's runs count too
		if wall, ok := v.(float64); ok && (key == "esp32_mutex_2m_wall_s" || key == "esp32_mutex_2m_detailed_wall_s") {
			if b, ok := best[key]; !ok || wall < b {
				best[key] = wall
			}
		}
	}
	fig["peer_trials"] = trials
	if wall, ok := best["esp32_mutex_2m_wall_s"]; ok {
		fig["esp32_mutex_2m_wall_s"] = wall
	}
	if wall, ok := best["esp32_mutex_2m_detailed_wall_s"]; ok {
		fig.setDetailedWall(wall)
	}
	if wall, ok := best["sim_lock_2m_wall_s"]; ok {
		fig["sim_lock_2m_wall_s"] = wall
	}
	for _, p := range peers {
		wall, ok := best[p.name+"_wall_s"]
		if !ok {
			continue
		}
		fig[p.name+"_wall_s"] = wall
		for key, ratio := range map[string]string{"esp32_mutex_2m_wall_s": "_over_synclab_esp32",
			"esp32_mutex_2m_detailed_wall_s": "_over_synclab_esp32_detailed", "sim_lock_2m_wall_s": "_over_synclab_sim_lock"} {
			if own, ok := fig[key].(float64); ok && own > 0 {
				fig[p.name+ratio] = wall / own
			}
		}
	}
}

// A timing is one side of the peer comparison: the figure it gives and
// how to measure it once.
type timing struct {
	key  string
	time func() (float64, error)
}

// bestOf measures every timing in turn, rounds times over, and returns the
// best (least) wall time of each. A timing that fails is noted and not run
// again, and gives no figure: one failure makes its other times suspect.
func bestOf(rounds int, timings []timing, note func(string, ...any)) map[string]float64 {
	best := map[string]float64{}
	failed := map[string]bool{}
	for range rounds {
		for _, t := range timings {
			if failed[t.key] {
				continue
			}
			wall, err := t.time()
			if err != nil {
				note("%s: %v", t.key, err)
				failed[t.key] = true
				delete(best, t.key)
				continue
			}
			if old, ok := best[t.key]; !ok || wall < old {
				best[t.key] = wall
			}
		}
	}
	return best
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
