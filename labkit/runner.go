package labkit

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
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
	if err1 != nil || err2 != nil || sh.check() != nil || sh.Count == 0 {
		return Shard{}, bad
	}
	return sh, nil
}

// String is the -shard form, K/N.
func (s Shard) String() string {
	if s.Count == 0 {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// part names s as a part of a split: "shard K/N", or "a complete result".
func (s Shard) part() string {
	if s.Count == 0 {
		return "a complete result"
	}
	return "shard " + s.String()
}

// check reports whether s is a shard: the zero Shard or 0 <= Index < Count.
func (s Shard) check() error {
	if s.Count < 0 || s.Index < 0 || s.Index >= max(s.Count, 1) {
		return fmt.Errorf("shard %d/%d: want 0 <= index < count", s.Index, s.Count)
	}
	return nil
}

func (s Shard) has(job int) bool { return s.Count <= 1 || job%s.Count == s.Index }

// size returns how many of total jobs the shard holds.
func (s Shard) size(total int) int {
	switch {
	case s.Count <= 1:
		return total
	case s.Index >= total:
		return 0
	}
	return (total-s.Index-1)/s.Count + 1
}

// job returns the job index of the shard's k-th job; pos is its inverse.
func (s Shard) job(k int) int   { return s.Index + k*max(s.Count, 1) }
func (s Shard) pos(job int) int { return job / max(s.Count, 1) }

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
	// Complete is true when every run of the shard finished (some may
	// have failed); only complete results are cached or merged. A failed
	// run is kept like any other: a run is a function of its definition,
	// seed and code, so computing it again fails the same way.
	Complete bool `msgpack:"complete" json:"complete"`
	// From is the result file RunExperiment read this result from, ""
	// when it computed it (in memory only).
	From string `msgpack:"-" json:"-"`
	// Reused counts the runs RunExperiment took from the journal of an
	// interrupted run instead of computing them (in memory only).
	Reused int `msgpack:"-" json:"-"`
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
	// traced results are never read from or written to the store.
	Trace bool
	// Detailed asks every run to simulate every step (see
	// platforms.RunSpec.Detailed): slower, the same results.
	Detailed bool
	// Fresh ignores results in the store and the runs of an interrupted run
	// (the new result is still written).
	Fresh bool
	// Dir is the result store directory; "" means ResultsDir().
	Dir string
	// File is the result file to read and write instead of the store's
	// entry under Dir (lab run -result); its journal is FILE.journal.
	File string
	// NoCache neither reads nor writes the store.
	NoCache bool
	// Progress reports progress; nil picks AutoProgress().
	Progress Progress
	// Log receives warnings (unreadable cache files) and notes (runs
	// reused from an interrupted run); nil means os.Stderr.
	Log io.Writer
}

// MaxRuns bounds the runs of one experiment, variants x sweep points x
// repeats, whatever the shard: results hold every run in memory and in one
// file, and a typo (-repeats 1000000000) must fail at once, not after
// exhausting memory.
const MaxRuns = 1_000_000

// RunCount returns the number of runs of e, variants x sweep points x
// repeats, or an error naming the three when they exceed MaxRuns.
func RunCount(e platforms.Experiment) (int, error) {
	n := float64(len(e.Variants)) * float64(max(e.Repeats, 0))
	points := 1.0
	for _, a := range e.Sweep {
		points *= float64(len(a.Values))
	}
	if n*points > MaxRuns {
		return 0, fmt.Errorf("experiment %s: %d variants x %s sweep points x %s repeats = %s runs, more than the %s an experiment may have; lower the repeats (or the variants or sweep points)",
			e.Name, len(e.Variants), Num(points), Num(float64(e.Repeats)), Num(n*points), Num(MaxRuns))
	}
	return int(n * points), nil
}

// jobIndex is the index of a run of e in job order: variant (by index),
// then sweep point, then repeat.
func jobIndex(e platforms.Experiment, variant, point, repeat int) int {
	return (variant*e.NumPoints()+point)*e.Repeats + repeat
}

// jobAt is the inverse of jobIndex.
func jobAt(e platforms.Experiment, job int) (variant, point, repeat int) {
	repeat, job = job%e.Repeats, job/e.Repeats
	return job / e.NumPoints(), job % e.NumPoints(), repeat
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
// recorded with its error in Runs (the result is still Complete), and the
// error returned with it is a *RunsFailedError counting the failures.
func Execute(ctx context.Context, e platforms.Experiment, opts RunOptions) (*Result, error) {
	b, err := newBatch(e, opts.Shard)
	if err != nil {
		return nil, err
	}
	return b.execute(ctx, opts)
}

// batch is the work of one Execute or RunExperiment: the runs of a shard,
// some of them perhaps already done (taken from a journal).
type batch struct {
	e    platforms.Experiment
	hash string
	code CodeVersion
	// known is false when the lab cannot name the run function's code.
	known bool
	shard Shard
	// done holds the shard's runs by position (Shard.pos), nil until done.
	done    []*Run
	reused  int
	journal *journal // nil: finished runs are not journaled
}

// newBatch checks e (its definition, the values at every sweep point) and
// its size and returns the batch of its runs in shard.
func newBatch(e platforms.Experiment, shard Shard) (*batch, error) {
	if e.Run == nil {
		return nil, errNoRun(e)
	}
	if err := validate(e); err != nil {
		return nil, err
	}
	total, err := RunCount(e)
	if err != nil {
		return nil, err
	}
	if err := e.CheckPoints(); err != nil { // after RunCount, which bounds its points
		return nil, err
	}
	if err := shard.check(); err != nil {
		return nil, err
	}
	code, known := codeOf(e)
	return &batch{e: e, hash: e.Hash(), code: code, known: known, shard: shard, done: make([]*Run, shard.size(total))}, nil
}

// execute runs the batch's missing runs (see Execute).
func (b *batch) execute(ctx context.Context, opts RunOptions) (*Result, error) {
	start := time.Now()
	defer relaxGC()()
	e := b.e
	todo := len(b.done) - b.reused
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, todo))
	prog := opts.Progress
	if prog == nil {
		prog = AutoProgress()
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var mu sync.Mutex
	stopped := map[int]error{} // where the runs in progress stood when interrupted
	prog.Start(e.Name, todo)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for runCtx.Err() == nil {
				k := int(next.Add(1) - 1)
				if k >= len(b.done) {
					return
				}
				if b.done[k] != nil {
					continue // reused
				}
				r, stop := b.run(runCtx, k, opts)
				mu.Lock()
				if r != nil {
					b.done[k] = r
					prog.Step()
				} else {
					stopped[k] = stop
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	prog.Finish()
	def := e.Clone()
	def.Run = nil // a result holds the definition as data, in memory as in its file
	res := &Result{Experiment: def, Hash: b.hash, Code: b.code, Shard: b.shard, Created: time.Now().UTC(), Reused: b.reused}
	n := 0
	for _, r := range b.done {
		if r != nil {
			n++
		}
	}
	res.Runs = make([]Run, 0, n) // an interrupted batch may have finished few of its runs
	for _, r := range b.done {
		if r != nil {
			res.Runs = append(res.Runs, *r)
		}
	}
	res.WallS = time.Since(start).Seconds()
	res.Complete = len(res.Runs) == len(b.done)
	var interrupted error
	if !res.Complete {
		interrupted = fmt.Errorf("experiment %s interrupted after %d of %d runs: %w%s", e.Name, len(res.Runs), len(b.done), context.Cause(ctx), b.inProgress(stopped))
	}
	return res, errors.Join(interrupted, res.failed(len(b.done)))
}

// RunsFailed returns a *RunsFailedError counting the failed runs of a
// complete result, or nil when none failed.
func (r *Result) RunsFailed() error { return r.failed(len(r.Runs)) }

// failed returns a *RunsFailedError counting r's failed runs out of total,
// or nil when none failed.
func (r *Result) failed(total int) error {
	failed := r.Failures()
	if len(failed) == 0 {
		return nil
	}
	return &RunsFailedError{Experiment: r.Experiment.Name, Failed: len(failed), Total: total,
		First: r.RunLabel(failed[0]) + ": " + failed[0].Err}
}

// run computes the shard's k-th run and journals it, failed or not; it
// returns nil when ctx was cancelled before the run finished.
// inProgress says where the interrupted runs stood (by their positions in
// the batch, first few), for a run that seemed to hang: "; in progress:
// tas (point 0, repeat 1): simulation stopped at simulated time 2.1s: ...".
func (b *batch) inProgress(stopped map[int]error) string {
	ks := slices.Sorted(maps.Keys(stopped))
	var says []string
	for _, k := range ks[:min(len(ks), 4)] {
		v, p, rep := jobAt(b.e, b.shard.job(k))
		says = append(says, fmt.Sprintf("%s (point %d, repeat %d): %v", b.e.Variants[v].Name, p, rep, stopped[k]))
	}
	if len(says) == 0 {
		return ""
	}
	return "; in progress: " + strings.Join(says, "; ")
}

// run runs the batch's run at position k. It returns nil when the run was
// interrupted, with the error that says where it stood.
func (b *batch) run(ctx context.Context, k int, opts RunOptions) (*Run, error) {
	e := b.e
	v, p, rep := jobAt(e, b.shard.job(k))
	spec := platforms.RunSpec{
		Experiment: e.Name, Variant: e.Variants[v].Name, Params: e.PointParams(p),
		Seed: RunSeed(e.Seed, e.Variants[v].Name, rep), Repeat: rep,
		Trace: opts.Trace && rep == 0, Detailed: opts.Detailed,
	}
	rr, err := e.Run(ctx, spec)
	if err == nil {
		err = checkMetrics(e, rr)
	}
	r := &Run{Variant: spec.Variant, Point: p, Repeat: rep, Seed: spec.Seed}
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, err // interrupted: the run did not finish
	case err != nil:
		r.Err = err.Error()
	default:
		r.Metrics, r.Samples, r.Trace = rr.Metrics, rr.Samples, rr.Trace
	}
	if b.journal != nil {
		b.journal.add(*r)
	}
	return r, nil
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

// RunSeed derives the seed of one run from the experiment seed, the variant
// and the repeat, so that results never depend on scheduling. Every point
// of a sweep runs with the same seeds (common random numbers): a point's
// runs do not depend on the sweep that holds them (hz=250 gives the same
// numbers in -sweep hz=100,250, in -sweep hz=250,100 and with -set
// hz=250), and two points differ by their parameters, not by their noise.
func RunSeed(seed uint64, variant string, repeat int) uint64 {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(variant))
	h.Write([]byte{0})
	// Eight zero bytes where result format 1 hashed the point's index:
	// every run at a first sweep point keeps the seed it had.
	h.Write(make([]byte, 8))
	binary.LittleEndian.PutUint64(b[:], uint64(repeat))
	h.Write(b[:])
	return binary.LittleEndian.Uint64(h.Sum(nil))
}
