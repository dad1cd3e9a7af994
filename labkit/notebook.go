package labkit

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/janpfeifer/gonb/gonbui"

	"synclab/labkit/nbexport"
	"synclab/platforms"
)

// Spec says how to run an experiment: which variants, which parameter
// values, which sweep, how many repeats. The zero Spec runs the experiment
// as defined.
type Spec struct {
	// Variants restricts the run to these variants (nil: all).
	Variants []string
	// Set gives parameters other values (applied in key order).
	Set map[string]float64
	// Sweep adds sweep axes (replacing any over the same parameter); the
	// last varies fastest.
	Sweep []platforms.Axis
	// Repeats overrides the experiment's repeats when > 0 (negative is an
	// error).
	Repeats int
	// Trace records a trace of repeat 0 of every variant and point (never
	// cached).
	Trace bool
	// Options tunes the runner (workers, cache, progress).
	Options RunOptions
}

// Apply returns e changed as s says; an unknown variant or parameter, a
// value a parameter does not accept, or negative repeats is an error naming
// it.
func (s Spec) Apply(e platforms.Experiment) (platforms.Experiment, error) {
	var err error
	if s.Repeats < 0 {
		return e, fmt.Errorf("experiment %s: repeats %d: want at least 1 (0 keeps the experiment's %d)", e.Name, s.Repeats, e.Repeats)
	}
	if len(s.Variants) > 0 {
		if e, err = e.WithVariants(s.Variants...); err != nil {
			return e, err
		}
	}
	keys := make([]string, 0, len(s.Set))
	for k := range s.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if e, err = e.With(k, s.Set[k]); err != nil {
			return e, err
		}
	}
	for _, a := range s.Sweep {
		if e, err = e.WithSweep(a.Param, a.Values...); err != nil {
			return e, err
		}
	}
	if s.Repeats > 0 {
		e = e.Clone()
		e.Repeats = s.Repeats
	}
	return e, nil
}

// RunWith runs an experiment as spec says in one call: the variants, parameter
// values, sweep and repeats are applied and checked, and the result comes
// from the store when the same definition already ran with the same code
// (see RunExperiment, whose errors it returns, partial result included).
// In a report (lab report) the run is noted for the reproducibility stamp.
func RunWith(ctx context.Context, e platforms.Experiment, spec Spec) (*Result, error) {
	e, err := spec.Apply(e)
	if err != nil {
		return nil, err
	}
	registerVariants(e)
	opts := spec.Options
	opts.Trace = opts.Trace || spec.Trace
	start := time.Now()
	res, err := RunExperiment(ctx, e, opts)
	if res != nil {
		noteRun(res, spec.Set, res.Created.Before(start), opts.Trace, len(res.Runs), "")
	}
	return res, err
}

// processStart is when this program started: in a notebook, when the cell
// started, so a result created before it came from the store.
var processStart = time.Now()

// Note records results a notebook obtained without RunWith (from a package
// that runs experiments itself, such as the claims ledger) for the
// reproducibility stamp of its report; outside a report it does nothing.
func Note(results ...*Result) {
	for _, r := range results {
		if r != nil {
			noteRun(r, nil, r.Created.Before(processStart), false, len(r.Runs), "")
		}
	}
}

// noteRun adds a result to the session log of a headless run (the report's
// stamp), counting runs (a sensitivity run notes its baseline with the runs
// of all its cases); outside one it does nothing.
func noteRun(res *Result, set map[string]float64, cached, traced bool, runs int, note string) {
	if !Headless() {
		return
	}
	e := res.Experiment
	desc, _, _ := strings.Cut(e.Description, "\n")
	rec := nbexport.RunRecord{Experiment: e.Name, Platform: e.Platform, Description: desc, Variants: e.VariantNames(),
		Repeats: e.Repeats, Seed: e.Seed, Params: e.Params.Values(), Set: set, Hash: res.Hash, Code: res.Code.String(),
		Go: res.Code.Go, GoNB: gonbVersion(), Runs: runs, Failed: len(res.Failures()), Cached: cached,
		Traced: traced, When: res.Created, Note: note}
	for _, a := range e.Sweep {
		rec.Sweep = append(rec.Sweep, nbexport.SweepAxis{Param: a.Param, Values: a.Values})
	}
	if err := nbexport.AppendSession(rec); err != nil {
		fmt.Fprintln(os.Stderr, "labkit:", err)
	}
}

// gonbVersion is the version of GoNB's module this program was built with.
func gonbVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/janpfeifer/gonb" {
				return d.Version
			}
		}
	}
	return ""
}

// Headless reports whether the notebook runs without a browser (lab
// report, make test): widgets, which wait for a browser to answer, must
// not be shown then.
func Headless() bool { return os.Getenv(nbexport.SessionEnv) != "" }

// Must returns v, or stops the cell (panics) on an error: for notebooks,
// where an error has nowhere else to go.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// MD shows text computed in a notebook as Markdown (fmt.Sprintf of format
// and args); outside a notebook it prints it.
func MD(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	if !inNotebook() {
		fmt.Println(text)
		return
	}
	displayMarkdown(text)
	syncNotebook()
}

// displayMarkdown is gonbui's (a hook for the tests).
var displayMarkdown = gonbui.DisplayMarkdown

// YesNo is "**yes**" or "**no**", for conclusions in Markdown.
func YesNo(b bool) string {
	if b {
		return "**yes**"
	}
	return "**no**"
}

// Mean is the mean of a metric over the successful repeats of a variant at
// a sweep point (NaN when there is none, or the variant, point or metric is
// unknown).
func (r *Result) Mean(variant string, point int, metric string) float64 {
	return r.Summary(variant, point, metric).Mean
}

// PointOf returns the index of the sweep point with the given swept values
// (every swept parameter must be given); -1 when there is none.
func (r *Result) PointOf(values map[string]float64) int {
	for i, pt := range r.Experiment.Points() {
		match := len(pt) == len(values)
		for k, v := range pt {
			match = match && values[k] == v
		}
		if match {
			return i
		}
	}
	return -1
}
