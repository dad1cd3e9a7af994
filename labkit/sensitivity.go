package labkit

import (
	"context"
	"fmt"
	"math"

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

func (c Conclusion) String() string {
	op := ">"
	if c.Less {
		op = "<"
	}
	return fmt.Sprintf("%s %s %s on %s", c.A, op, c.B, c.Metric)
}

func (c Conclusion) holds(r *Result) bool {
	a := r.Summary(c.A, 0, c.Metric).Mean
	b := r.Summary(c.B, 0, c.Metric).Mean
	return (a < b) == c.Less && a != b
}

// SensitivityCase is the experiment run with one ASSUME parameter at its Low
// or High value.
type SensitivityCase struct {
	Param  string  `json:"param"`
	Value  float64 `json:"value"`
	Side   string  `json:"side"` // "low" or "high"
	Result *Result `json:"-"`
	// Holds says, per conclusion, whether it still holds.
	Holds []bool `json:"holds"`
}

// Sensitivity is the outcome of varying each ASSUME parameter.
type Sensitivity struct {
	Experiment  string            `json:"experiment"`
	Baseline    *Result           `json:"-"`
	Conclusions []Conclusion      `json:"conclusions"`
	Cases       []SensitivityCase `json:"cases"`
}

// DefaultConclusions derives, for every metric, the ordering of the first two
// variants that the baseline result shows.
func DefaultConclusions(base *Result) []Conclusion {
	e := base.Experiment
	if len(e.Variants) < 2 {
		return nil
	}
	var out []Conclusion
	a, b := e.Variants[0].Name, e.Variants[1].Name
	for _, m := range e.Metrics {
		ma, mb := base.Summary(a, 0, m.Name).Mean, base.Summary(b, 0, m.Name).Mean
		if ma != mb {
			out = append(out, Conclusion{Metric: m.Name, A: a, B: b, Less: ma < mb})
		}
	}
	return out
}

// RunSensitivity runs e (without its sweep) at the defaults, then with each
// ASSUME parameter at its Low and at its High value (the others at their
// defaults), and checks each conclusion in every case; nil conclusions
// means DefaultConclusions of the baseline. Runs go through RunExperiment
// (cache included) with opts.
func RunSensitivity(ctx context.Context, e Experiment, conclusions []Conclusion, opts RunOptions) (*Sensitivity, error) {
	e = e.Clone()
	e.Sweep = nil
	base, err := RunExperiment(ctx, e, opts)
	if err != nil {
		return nil, err
	}
	if conclusions == nil {
		conclusions = DefaultConclusions(base)
	}
	s := &Sensitivity{Experiment: e.Name, Baseline: base, Conclusions: conclusions}
	for _, p := range e.Params {
		if p.Prov != platforms.ASSUME {
			continue
		}
		for _, side := range []struct {
			name string
			v    float64
		}{{"low", p.Low}, {"high", p.High}} {
			ev, err := e.With(p.Key, side.v)
			if err != nil {
				return nil, fmt.Errorf("sensitivity: plausible range of %s: %w", p.Key, err)
			}
			res, err := RunExperiment(ctx, ev, opts)
			if err != nil {
				return nil, err
			}
			c := SensitivityCase{Param: p.Key, Value: side.v, Side: side.name, Result: res}
			for _, con := range conclusions {
				c.Holds = append(c.Holds, con.holds(res))
			}
			s.Cases = append(s.Cases, c)
		}
	}
	return s, nil
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

// Tornado is the tornado chart of a variant's metric.
func (s *Sensitivity) Tornado(variant, metric string) *Chart {
	return Tornado(fmt.Sprintf("%s: sensitivity of %s (%s)", s.Experiment, metric, variant), "% change", s.TornadoBars(variant, metric))
}

// Table lists every case with the metric values of the conclusions and
// whether each conclusion holds.
func (s *Sensitivity) Table() Table {
	t := Table{Title: s.Experiment + ": which conclusions hold across the ASSUME ranges", Header: []string{"parameter", "side", "value"}}
	for _, c := range s.Conclusions {
		t.Header = append(t.Header, c.String())
	}
	row := []string{"(baseline)", "", ""}
	for _, c := range s.Conclusions {
		row = append(row, holdsText(c.holds(s.Baseline)))
	}
	t.Rows = append(t.Rows, row)
	for _, c := range s.Cases {
		row := []string{c.Param, c.Side, Num(c.Value)}
		for _, h := range c.Holds {
			row = append(row, holdsText(h))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func holdsText(h bool) string {
	if h {
		return "holds"
	}
	return "FAILS"
}
