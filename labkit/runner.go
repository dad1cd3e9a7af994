package labkit

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"synclab/platforms"
	"synclab/sim"
)

// Run is the record of one finished run.
type Run struct {
	Variant string               `msgpack:"variant" json:"variant"`
	Point   int                  `msgpack:"point" json:"point"`
	Repeat  int                  `msgpack:"repeat" json:"repeat"`
	Seed    uint64               `msgpack:"seed" json:"seed"`
	Metrics map[string]float64   `msgpack:"metrics" json:"metrics"`
	Samples map[string][]float64 `msgpack:"samples,omitempty" json:"samples,omitempty"`
	// Err is the error the run failed with (a simulated deadlock, a model
	// error), "" when it succeeded. A failed run has no metrics and is left
	// out of every statistic; tables, claims and reports list it.
	Err string `msgpack:"err,omitempty" json:"err,omitempty"`
	// Trace is kept in memory only (traces are recorded on demand and
	// never cached).
	Trace *sim.Trace `msgpack:"-" json:"-"`
}

// Failed reports whether the run failed (Err is set).
func (r Run) Failed() bool { return r.Err != "" }

// Shard selects a deterministic share of an experiment's runs: the runs whose
// job index modulo Count equals Index. The zero Shard means all runs.
type Shard struct {
	Index int `msgpack:"index" json:"index"`
	Count int `msgpack:"count" json:"count"`
}

// ParseShard parses "i/n" with 0 <= i < n.
func ParseShard(s string) (Shard, error) {
	bad := fmt.Errorf("shard %q: want i/n with 0 <= i < n, e.g. 0/4", s)
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, bad
	}
	var sh Shard
	var err1, err2 error
	sh.Index, err1 = strconv.Atoi(i)
	sh.Count, err2 = strconv.Atoi(n)
	if err1 != nil || err2 != nil || sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return Shard{}, bad
	}
	return sh, nil
}

func (s Shard) String() string {
	if s.Count == 0 {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

func (s Shard) has(job int) bool { return s.Count <= 1 || job%s.Count == s.Index }

// Result is a (possibly partial) set of runs of one experiment definition with
// the stamp needed to reproduce it. It is what the result store saves.
type Result struct {
	Experiment platforms.Experiment `msgpack:"experiment" json:"experiment"`
	Hash       string               `msgpack:"hash" json:"hash"`
	Code       CodeVersion          `msgpack:"code" json:"code"`
	Shard      Shard                `msgpack:"shard" json:"shard"`
	Created    time.Time            `msgpack:"created" json:"created"`
	WallS      float64              `msgpack:"wall_s" json:"wall_s"`
	// Runs are in job order: variant, then sweep point, then repeat. They
	// include failed runs (Run.Err set).
	Runs []Run `msgpack:"runs" json:"runs"`
	// Complete is true when every run of the shard finished and none
	// failed; only complete results are cached or merged.
	Complete bool `msgpack:"complete" json:"complete"`
}

// Failures returns the failed runs in job order.
func (r *Result) Failures() []Run {
	var out []Run
	for _, run := range r.Runs {
		if run.Failed() {
			out = append(out, run)
		}
	}
	return out
}

// RunLabel names a run of r for messages: variant, swept values and repeat.
func (r *Result) RunLabel(run Run) string {
	return fmt.Sprintf("variant %s, %s, repeat %d", run.Variant, pointLabel(r.Experiment.Point(run.Point)), run.Repeat)
}

// RunsFailedError is the error Execute and RunExperiment return, together
// with the partial result, when some runs failed: the other runs are kept
// and each failure is recorded in its Run.Err.
type RunsFailedError struct {
	Experiment    string
	Failed, Total int
	// First describes the first failed run in job order and its error.
	First string
}

// Error counts the failures and names the first.
func (e *RunsFailedError) Error() string {
	kept := " (kept the others)"
	if e.Failed == e.Total {
		kept = ""
	}
	return fmt.Sprintf("experiment %s: %d of %d runs failed%s; first: %s", e.Experiment, e.Failed, e.Total, kept, e.First)
}

// RunOptions tune a run of an experiment.
type RunOptions struct {
	// Workers is the number of runs executed in parallel; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// Shard restricts the runs to a share (see Shard).
	Shard Shard
	// Trace asks repeat 0 of every variant and point to record a trace;
	// traced results are never read from or written to the cache.
	Trace bool
	// Detailed asks every run to simulate every step (see
	// platforms.RunSpec.Detailed): slower, the same results.
	Detailed bool
	// Fresh ignores cached results (they are still written).
	Fresh bool
	// Dir is the result store directory; "" means ResultsDir().
	Dir string
	// NoCache neither reads nor writes the store.
	NoCache bool
	// Progress reports progress; nil picks AutoProgress().
	Progress Progress
	// Log receives warnings (unreadable cache files); nil means os.Stderr.
	Log io.Writer
}

type job struct{ variant, point, repeat, index int }

// jobs lists the runs of e in job order, restricted to shard.
func jobs(e platforms.Experiment, shard Shard) []job {
	var out []job
	for v := range e.Variants {
		for p := range e.NumPoints() {
			for r := range e.Repeats {
				if n := jobIndex(e, v, p, r); shard.has(n) {
					out = append(out, job{v, p, r, n})
				}
			}
		}
	}
	return out
}

// jobIndex is the index of a run of e in job order: variant (by index),
// then sweep point, then repeat.
func jobIndex(e platforms.Experiment, variant, point, repeat int) int {
	return (variant*e.NumPoints()+point)*e.Repeats + repeat
}

// Simulations allocate many small, short-lived objects. With every core
// running one, the collector's background marker competes with them for the
// same cores; a larger heap target (memory is cheap next to simulation time)
// makes cycles rarer: a 64-run sweep on 2 cores went from 1.44x to 1.74x
// the speed of 1 core on the development machine.
const runGCPercent = 400

var gcState struct {
	sync.Mutex
	users, prev int
}

// relaxGC raises the GC target while at least one experiment runs and
// returns the function that restores it.
func relaxGC() (restore func()) {
	gcState.Lock()
	if gcState.users == 0 {
		gcState.prev = debug.SetGCPercent(runGCPercent)
	}
	gcState.users++
	gcState.Unlock()
	return func() {
		gcState.Lock()
		if gcState.users--; gcState.users == 0 {
			debug.SetGCPercent(gcState.prev)
		}
		gcState.Unlock()
	}
}

// Execute runs the experiment with its run function (e.Run), without the
// cache: variants x sweep points x repeats in parallel, each with its own
// seed (RunSeed), so the result does not depend on Workers or scheduling.
// When ctx is cancelled, it returns the finished runs in a result with
// Complete false, and an error wrapping ctx.Err(). A failing run (an
// error from run, or a missing metric) does not stop the others: it is
// recorded with its error in Runs, the result is not Complete, and the
// error returned with it is a *RunsFailedError counting the failures.
func Execute(ctx context.Context, e platforms.Experiment, opts RunOptions) (*Result, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if e.Run == nil {
		return nil, errNoRun(e)
	}
	return execute(ctx, e, e.Hash(), opts)
}

// execute is Execute for a validated e whose Hash is hash.
func execute(ctx context.Context, e platforms.Experiment, hash string, opts RunOptions) (*Result, error) {
	start := time.Now()
	defer relaxGC()()
	todo := jobs(e, opts.Shard)
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(todo)))
	prog := opts.Progress
	if prog == nil {
		prog = AutoProgress()
	}
	params := make([]map[string]float64, e.NumPoints())
	for i := range params {
		params[i] = e.PointParams(i)
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make([]*Run, len(todo))
	var next atomic.Int64
	var mu sync.Mutex
	prog.Start(e.Name, len(todo))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(todo) || runCtx.Err() != nil {
					return
				}
				j := todo[i]
				spec := platforms.RunSpec{
					Experiment: e.Name, Variant: e.Variants[j.variant].Name, Params: maps.Clone(params[j.point]),
					Seed: RunSeed(e.Seed, e.Variants[j.variant].Name, j.point, j.repeat), Repeat: j.repeat,
					Trace: opts.Trace && j.repeat == 0, Detailed: opts.Detailed,
				}
				rr, err := e.Run(runCtx, spec)
				if err == nil {
					err = checkMetrics(e, rr)
				}
				r := &Run{Variant: spec.Variant, Point: j.point, Repeat: j.repeat, Seed: spec.Seed}
				switch {
				case err != nil && runCtx.Err() != nil:
					return // interrupted: the run did not finish
				case err != nil:
					r.Err = err.Error()
				default:
					r.Metrics, r.Samples, r.Trace = rr.Metrics, rr.Samples, rr.Trace
				}
				done[i] = r
				mu.Lock()
				prog.Step()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	prog.Finish()
	def := e.Clone()
	def.Run = nil // a result holds the definition as data, in memory as in its file
	res := &Result{Experiment: def, Hash: hash, Code: CurrentCode(), Shard: opts.Shard, Created: time.Now().UTC()}
	interrupted := false
	for _, r := range done {
		if r == nil {
			interrupted = true
			continue
		}
		res.Runs = append(res.Runs, *r)
	}
	res.WallS = time.Since(start).Seconds()
	var errs []error
	if interrupted {
		errs = append(errs, fmt.Errorf("experiment %s interrupted after %d of %d runs: %w", e.Name, len(res.Runs), len(todo), context.Cause(ctx)))
	}
	if failed := res.Failures(); len(failed) > 0 {
		errs = append(errs, &RunsFailedError{Experiment: e.Name, Failed: len(failed), Total: len(todo),
			First: res.RunLabel(failed[0]) + ": " + failed[0].Err})
	}
	res.Complete = len(errs) == 0
	return res, errors.Join(errs...)
}

// errNoRun is the error for running a definition without its run function.
func errNoRun(e platforms.Experiment) error {
	return fmt.Errorf("experiment %s has no run function (a definition read from a result file?); take it from the catalog", e.Name)
}

func checkMetrics(e platforms.Experiment, rr platforms.RunResult) error {
	for _, m := range e.Metrics {
		if _, ok := rr.Metrics[m.Name]; !ok {
			return fmt.Errorf("run did not report metric %s", m.Name)
		}
	}
	return nil
}

// RunExperiment runs e with its run function (e.Run),
// reusing a cached result when one with the same definition hash and code
// version exists (unless opts.Fresh, opts.NoCache or opts.Trace), and saving
// complete results to the store. An unreadable cache file is reported on
// opts.Log with its path and recomputed. When runs fail it returns the
// partial result (never cached) and a *RunsFailedError, as Execute does.
func RunExperiment(ctx context.Context, e platforms.Experiment, opts RunOptions) (*Result, error) {
	if e.Run == nil {
		return nil, errNoRun(e)
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	logw := opts.Log
	if logw == nil {
		logw = os.Stderr
	}
	hash := e.Hash()
	useCache := !opts.NoCache && !opts.Trace
	var path string
	if useCache {
		dir := opts.Dir
		if dir == "" {
			dir = ResultsDir()
		}
		path = cachePath(dir, e.Name, hash, opts.Shard)
		if !opts.Fresh {
			cached, err := Load(path)
			switch {
			case err == nil && cached.matches(hash, opts.Shard):
				return cached, nil
			case err != nil && !errors.Is(err, os.ErrNotExist):
				fmt.Fprintf(logw, "labkit: %v; recomputing\n", err)
			}
		}
	}
	res, err := execute(ctx, e, hash, opts)
	if err != nil {
		return res, err
	}
	if useCache {
		if err := Save(path, res); err != nil {
			fmt.Fprintf(logw, "labkit: cannot cache result: %v\n", err)
		}
	}
	return res, nil
}

// matches reports whether a cached result can stand for running the
// experiment whose definition hash is hash now.
func (r *Result) matches(hash string, shard Shard) bool {
	return r.Complete && r.Hash == hash && r.Shard == shard && r.Code.Key() == CurrentCode().Key()
}

// RunSeed derives the seed of one run from the experiment seed, the variant,
// the sweep point index and the repeat, so that results never depend on
// scheduling.
func RunSeed(seed uint64, variant string, point, repeat int) uint64 {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(variant))
	h.Write([]byte{0})
	binary.LittleEndian.PutUint64(b[:], uint64(point))
	h.Write(b[:])
	binary.LittleEndian.PutUint64(b[:], uint64(repeat))
	h.Write(b[:])
	return binary.LittleEndian.Uint64(h.Sum(nil))
}
