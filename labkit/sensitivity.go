package labkit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"synclab/labkit/internal/pool"
	"synclab/platforms"
)

// Conclusion is a statement a sensitivity run checks: variant A's mean of
// Metric is below (Less) or above variant B's.
type Conclusion struct {
	Metric string `json:"metric"`
	A      string `json:"a"`
	B      string `json:"b"`
	Less   bool   `json:"less"`
}

// String renders the conclusion as "A < B on metric".
func (c Conclusion) String() string {
	op := ">"
	if c.Less {
		op = "<"
	}
	return fmt.Sprintf("%s %s %s on %s", c.A, op, c.B, c.Metric)
}

// Judgement is how a conclusion fares in a result.
type Judgement int

// The judgements, from Conclusion.Judge.
const (
	// Fails: the two means are in the other order, beyond the seeds' noise.
	Fails Judgement = iota
	// Holds: the means are in the conclusion's order, beyond the seeds' noise.
	Holds
	// Unresolved: the seeds cannot tell the order (the ratio's 95%
	// interval holds 1, or a variant has one successful run, no spread to
	// test against).
	Unresolved
	// NoRuns: a variant has no successful run to judge.
	NoRuns
)

// String is the judgement as a table shows it.
func (j Judgement) String() string {
	return [...]string{Fails: "FAILS", Holds: "holds", Unresolved: "unresolved", NoRuns: "no runs"}[j]
}

// Judge judges the conclusion in r at sweep point 0 (a sensitivity run
// has no sweep): A's mean of Metric against B's, with Fieller's interval
// of their ratio (RatioCI: the variants run with their own seeds). A flip
// that rests on two means a seed could swap is Unresolved, not Fails.
func (c Conclusion) Judge(r *Result) Judgement {
	a, b := r.Values(c.A, 0, c.Metric), r.Values(c.B, 0, c.Metric)
	if len(a) == 0 || len(b) == 0 {
		return NoRuns
	}
	ratio, ma, mb := RatioCI(a, b), Summarize(a).Mean, Summarize(b).Mean
	switch {
	case min(len(a), len(b)) < 2, ma == mb, ratio.Lo <= 1 && 1 <= ratio.Hi:
		return Unresolved
	case (ma < mb) == c.Less:
		return Holds
	}
	return Fails
}

// SensitivityCase is the experiment run with one ASSUME parameter at its Low
// or High value.
type SensitivityCase struct {
	Param  string  `json:"param"`
	Value  float64 `json:"value"`
	Side   string  `json:"side"` // "low" or "high"
	Result *Result `json:"-"`
	// Judged is, per conclusion, how it fares in the case.
	Judged []Judgement `json:"judged"`
	// Failed counts the case's failed runs (left out of Judged's means).
	Failed int `json:"failed,omitempty"`
}

// Sensitivity is the outcome of varying each ASSUME parameter.
type Sensitivity struct {
	Experiment  string            `json:"experiment"`
	Baseline    *Result           `json:"-"`
	Conclusions []Conclusion      `json:"conclusions"`
	Cases       []SensitivityCase `json:"cases"`
}

// DefaultConclusions derives the orderings the baseline result shows between
// the first variant (the reference, e.g. wfe) and each other variant, for
// every metric: with variants v0, v1, v2 it returns the v0-vs-v1
// conclusions of all metrics, then the v0-vs-v2 ones. Pairs of two other
// variants (v1 vs v2) are not compared; pass your own conclusions for them.
// Metrics where the two means are equal, or where a variant has no
// successful run, give no conclusion.
func DefaultConclusions(base *Result) []Conclusion {
	e := base.Experiment
	if len(e.Variants) < 2 {
		return nil
	}
	var out []Conclusion
	a := e.Variants[0].Name
	for _, v := range e.Variants[1:] {
		for _, m := range e.Metrics {
			ma, mb := base.Summary(a, 0, m.Name).Mean, base.Summary(v.Name, 0, m.Name).Mean
			if ma != mb && !math.IsNaN(ma) && !math.IsNaN(mb) {
				out = append(out, Conclusion{Metric: m.Name, A: a, B: v.Name, Less: ma < mb})
			}
		}
	}
	return out
}

// RunSensitivity runs e (without its sweep) at the defaults, then with each
// ASSUME parameter at its Low and at its High value (the others at their
// defaults), and checks each conclusion in every case; nil conclusions
// means DefaultConclusions of the baseline. Runs go through RunExperiment
// (cache included) with opts: the baseline with opts.Workers, then the
// cases side by side, opts.Workers of them at once with one worker each. A case whose runs partly fail (e.g. a
// deadlock at one end of a range) is kept: its conclusions are judged on
// the successful runs, and the table shows the failures.
func RunSensitivity(ctx context.Context, e platforms.Experiment, conclusions []Conclusion, opts RunOptions) (*Sensitivity, error) {
	e = e.Clone()
	e.Sweep = nil
	base, err := runKeepingFailures(ctx, e, opts)
	if err != nil {
		return nil, err
	}
	if conclusions == nil {
		conclusions = DefaultConclusions(base)
	}
	s := &Sensitivity{Experiment: e.Name, Baseline: base, Conclusions: conclusions}
	var varied []string
	for _, p := range e.Params {
		if p.Prov != platforms.ASSUME {
			continue
		}
		for _, side := range []struct {
			name string
			v    float64
		}{{"low", p.Low}, {"high", p.High}} {
			s.Cases = append(s.Cases, SensitivityCase{Param: p.Key, Value: side.v, Side: side.name})
		}
		varied = append(varied, p.Key)
	}
	if err := runCases(ctx, e, s.Cases, opts); err != nil {
		return nil, err
	}
	for i := range s.Cases {
		c := &s.Cases[i]
		c.Failed = len(c.Result.Failures())
		for _, con := range conclusions {
			c.Judged = append(c.Judged, con.Judge(c.Result))
		}
	}
	runs := len(base.Runs)
	for _, c := range s.Cases {
		runs += len(c.Result.Runs)
	}
	noteRun(base, nil, false, false, runs, fmt.Sprintf("sensitivity: this baseline and %d cases, each with one of %s at the Low or High end of its plausible range",
		len(s.Cases), strings.Join(varied, ", ")))
	return s, nil
}

// runCases runs e with each case's parameter at its value and stores the
// result in the case. Cases run side by side, each with one worker: a case
// is a few runs (variants x repeats), too few to keep every worker busy,
// and one slow variant would leave the others idle. The first failure stops
// the rest; the error returned is that of the first case, in order, that
// failed on its own.
func runCases(ctx context.Context, e platforms.Experiment, cases []SensitivityCase, opts RunOptions) error {
	exps := make([]platforms.Experiment, len(cases))
	for i, c := range cases {
		ev, err := e.With(c.Param, c.Value)
		if err != nil {
			return fmt.Errorf("sensitivity: plausible range of %s: %w", c.Param, err)
		}
		exps[i] = ev
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	prog := opts.Progress
	if prog == nil {
		prog = AutoProgress()
	}
	prog.Start(fmt.Sprintf("%s: %d sensitivity cases", e.Name, len(cases)), len(cases))
	defer prog.Finish()
	one := opts
	one.Workers, one.Progress = 1, NoProgress
	var mu sync.Mutex
	return pool.Run(ctx, workers, len(cases), nil, func(ctx context.Context, i int) error {
		res, err := runKeepingFailures(ctx, exps[i], one)
		cases[i].Result = res
		mu.Lock()
		prog.Step()
		mu.Unlock()
		return err
	})
}

// runKeepingFailures is RunExperiment that accepts a result with failed runs
// (a *RunsFailedError) but not an interrupted or invalid one.
func runKeepingFailures(ctx context.Context, e platforms.Experiment, opts RunOptions) (*Result, error) {
	res, err := RunExperiment(ctx, e, opts)
	var failed *RunsFailedError
	if err != nil && errors.As(err, &failed) && res != nil && ctx.Err() == nil {
		return res, nil
	}
	return res, err
}

// TornadoBars returns, per ASSUME parameter, the change (in %) of a variant's
// mean metric from the baseline at the parameter's Low and High.
func (s *Sensitivity) TornadoBars(variant, metric string) []TornadoBar {
	base := s.Baseline.Summary(variant, 0, metric).Mean
	var bars []TornadoBar
	index := map[string]int{}
	for _, c := range s.Cases {
		i, ok := index[c.Param]
		if !ok {
			i = len(bars)
			index[c.Param] = i
			bars = append(bars, TornadoBar{Param: c.Param, Low: math.NaN(), High: math.NaN()})
		}
		d := 100 * (c.Result.Summary(variant, 0, metric).Mean - base) / base
		if c.Side == "low" {
			bars[i].Low = d
		} else {
			bars[i].High = d
		}
	}
	return bars
}

// Tornado is the tornado chart of a variant's metric. It panics on a metric
// the experiment does not report, as BarsCI does.
func (s *Sensitivity) Tornado(variant, metric string) *Chart {
	mustMetric(s.Baseline.Experiment, metric)
	return Tornado(fmt.Sprintf("%s: sensitivity of %s (%s)", s.Experiment, metric, variant), "% change", s.TornadoBars(variant, metric))
}

// Table lists every case (the baseline first) and how each conclusion
// fares (Judgement); when runs failed, a "failed runs" column says how many
// and why.
func (s *Sensitivity) Table() Table {
	t := Table{Title: s.Experiment + ": which conclusions hold across the ASSUME ranges", Header: []string{"parameter", "side", "value"}}
	for _, c := range s.Conclusions {
		t.Header = append(t.Header, c.String())
	}
	anyFailed := len(s.Baseline.Failures()) > 0
	for _, c := range s.Cases {
		anyFailed = anyFailed || c.Failed > 0
	}
	if anyFailed {
		t.Header = append(t.Header, "failed runs")
	}
	addRow := func(row []string, r *Result, judged []Judgement) {
		for _, j := range judged {
			row = append(row, j.String())
		}
		if f := r.Failures(); len(f) > 0 {
			row = append(row, fmt.Sprintf("%d of %d: %s", len(f), len(r.Runs), f[0].Err))
		} else if anyFailed {
			row = append(row, "")
		}
		t.Rows = append(t.Rows, row)
	}
	var base []Judgement
	for _, c := range s.Conclusions {
		base = append(base, c.Judge(s.Baseline))
	}
	addRow([]string{"(baseline)", "", ""}, s.Baseline, base)
	for _, c := range s.Cases {
		addRow([]string{c.Param, c.Side, Num(c.Value)}, c.Result, c.Judged) // judged by RunSensitivity
	}
	return t
}
