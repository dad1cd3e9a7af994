package labkit

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestSummarizeKnownValues(t *testing.T) {
	// Hand computation: mean 5, sd sqrt(32/7), t(0.975, 7) = 2.364624251,
	// half-width = t * sd / sqrt(8) = 1.787488.
	s := Summarize([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	checks := []struct {
		name      string
		got, want float64
	}{
		{"mean", s.Mean, 5}, {"sd", s.SD, 2.138089935}, {"half", s.Half, 1.787487918},
		{"lo", s.Lo, 5 - 1.787487918}, {"hi", s.Hi, 5 + 1.787487918},
		{"p50", s.P50, 4.5}, {"p95", s.P95, 8.3}, {"min", s.Min, 2}, {"max", s.Max, 9},
	}
	for _, c := range checks {
		if !near(c.got, c.want, 1e-6) {
			t.Errorf("%s = %.9g, want %.9g", c.name, c.got, c.want)
		}
	}
	one := Summarize([]float64{3})
	if one.Mean != 3 || !math.IsNaN(one.Half) || !math.IsNaN(one.SD) {
		t.Errorf("single value: %+v", one)
	}
	if e := Summarize(nil); e.N != 0 || !math.IsNaN(e.Mean) {
		t.Errorf("empty: %+v", e)
	}
}

func TestPercentileSorted(t *testing.T) {
	xs := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	for _, c := range []struct{ p, want float64 }{{0, 2}, {25, 4}, {50, 4.5}, {95, 8.3}, {100, 9}} {
		if got := percentileSorted(xs, c.p); !near(got, c.want, 1e-12) {
			t.Errorf("percentileSorted(%g) = %g, want %g", c.p, got, c.want)
		}
	}
	if got := percentileSorted([]float64{3}, 99); got != 3 {
		t.Errorf("percentileSorted of one value = %g, want 3", got)
	}
}

func TestRatioCI(t *testing.T) {
	tests := []struct {
		name          string
		a, b          []float64
		value, lo, hi float64
		bounded       bool
	}{
		// No spread: a zero-width interval.
		{"exact", []float64{10, 10, 10}, []float64{5, 5, 5}, 2, 2, 2, true},
		// Hand computation: va = 1, vb = 0, df = 1, t = 12.7062047;
		// |10 - 5r| <= t gives r in [(10-t)/5, (10+t)/5].
		{"fieller", []float64{9, 11}, []float64{5}, 2, (10 - 12.70620474) / 5, (10 + 12.70620474) / 5, true},
	}
	for _, tc := range tests {
		r := RatioCI(tc.a, tc.b)
		if !near(r.Value, tc.value, 1e-9) || !near(r.Lo, tc.lo, 1e-6) || !near(r.Hi, tc.hi, 1e-6) || r.Bounded != tc.bounded {
			t.Errorf("%s: %+v, want %g [%g, %g]", tc.name, r, tc.value, tc.lo, tc.hi)
		}
	}
	if r := RatioCI([]float64{1, 2, 3}, []float64{-1, 0, 1.5}); r.Bounded || !math.IsInf(r.Hi, 1) {
		t.Errorf("denominator around zero should give an unbounded interval: %+v", r)
	}
}

// TestPairedRatioCI: at each end of Fieller's paired interval the
// differences a[i] - r*b[i] have a 95% interval (Summarize's, Student's t)
// that just reaches zero; pairs that share their noise give a narrower
// interval than the same numbers taken as independent, and exact pairs none.
func TestPairedRatioCI(t *testing.T) {
	a := []float64{10.2, 11.1, 12.3, 9.8}
	b := []float64{5.0, 5.4, 6.1, 4.9}
	r := PairedRatioCI(a, b)
	if !r.Bounded || !near(r.Value, 43.4/21.4, 1e-12) || r.Lo >= r.Value || r.Hi <= r.Value {
		t.Fatalf("%+v", r)
	}
	for _, end := range []float64{r.Lo, r.Hi} {
		d := make([]float64, len(a))
		for i := range a {
			d[i] = a[i] - end*b[i]
		}
		if s := Summarize(d); !near(math.Min(math.Abs(s.Lo), math.Abs(s.Hi)), 0, 1e-9) {
			t.Errorf("at r = %g the differences' interval is [%g, %g], not touching zero", end, s.Lo, s.Hi)
		}
	}
	if ind := RatioCI(a, b); ind.Hi-ind.Lo <= r.Hi-r.Lo {
		t.Errorf("paired interval %+v not narrower than independent %+v for pairs that share their noise", r, ind)
	}
	if r := PairedRatioCI([]float64{3, 4, 5}, []float64{3, 4, 5}); r != (Ratio{1, 1, 1, true}) {
		t.Errorf("identical pairs: %+v, want exactly 1", r)
	}
	if r := PairedRatioCI([]float64{1, 2}, []float64{1}); !math.IsNaN(r.Value) || r.Bounded {
		t.Errorf("unequal lengths: %+v, want NaN", r)
	}
}

// TestPairedRatioPairsByRepeat: a repeat that failed at one point leaves
// its pair out, so the others stay paired by seed.
func TestPairedRatioPairsByRepeat(t *testing.T) {
	res := &Result{Runs: []Run{
		{Variant: "v", Point: 0, Repeat: 0, Metrics: map[string]float64{"m": 2}},
		{Variant: "v", Point: 0, Repeat: 1, Err: "deadlock"},
		{Variant: "v", Point: 0, Repeat: 2, Metrics: map[string]float64{"m": 4}},
		{Variant: "v", Point: 1, Repeat: 0, Metrics: map[string]float64{"m": 1}},
		{Variant: "v", Point: 1, Repeat: 1, Metrics: map[string]float64{"m": 100}},
		{Variant: "v", Point: 1, Repeat: 2, Metrics: map[string]float64{"m": 2}},
	}}
	want := PairedRatioCI([]float64{2, 4}, []float64{1, 2})
	if r := res.PairedRatio("v", 0, res, 1, "m"); r.Value != 2 || r != want {
		t.Errorf("%+v, want %+v (repeats 0 and 2)", r, want)
	}
}

func ExampleSummarize() {
	s := Summarize([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	fmt.Printf("mean %.2f sd %.3f 95%% CI [%.3f, %.3f]\n", s.Mean, s.SD, s.Lo, s.Hi)
	// Output: mean 5.00 sd 2.138 95% CI [3.213, 6.787]
}

func ExampleRatioCI() {
	r := RatioCI([]float64{1240, 1250, 1230}, []float64{980, 990, 970})
	fmt.Printf("ratio %.3f [%.3f, %.3f]\n", r.Value, r.Lo, r.Hi)
	// Output: ratio 1.265 [1.239, 1.293]
}

// row is one line of a result as a tidy table (what the tests compare).
type row struct {
	Experiment, Variant string
	Params              map[string]float64 // the swept parameters of the point
	Point, Repeat       int
	Metric              string
	Value               float64
}

// tidy returns r as a tidy table, one row per successful run and metric, in
// job order and the experiment's metric order.
func tidy(r *Result) []row {
	points := r.Experiment.Points()
	var rows []row
	for _, run := range r.Runs {
		if run.Failed() {
			continue
		}
		for _, m := range r.Experiment.Metrics {
			rows = append(rows, row{Experiment: r.Experiment.Name, Variant: run.Variant, Params: points[run.Point],
				Point: run.Point, Repeat: run.Repeat, Metric: m.Name, Value: run.Metrics[m.Name]})
		}
	}
	return rows
}

// TestUnknownNamesGiveNaN: a misspelled metric reads as NaN, like an
// unknown variant or point, never as 0.
func TestUnknownNamesGiveNaN(t *testing.T) {
	r := handResult(fixture(), "time_ms", map[string][][]float64{"fast": {{1, 2, 3}}})
	for _, tc := range []struct {
		name, variant string
		point         int
		metric        string
		want          int
	}{
		{"known", "fast", 0, "time_ms", 3},
		{"unknown variant", "medium", 0, "time_ms", 0},
		{"unknown point", "fast", 1, "time_ms", 0},
		{"unknown metric", "fast", 0, "tiem_ms", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if xs := r.Values(tc.variant, tc.point, tc.metric); len(xs) != tc.want {
				t.Errorf("Values = %v, want %d values", xs, tc.want)
			}
			s := r.Summary(tc.variant, tc.point, tc.metric)
			m := r.Mean(tc.variant, tc.point, tc.metric)
			if tc.want > 0 {
				if s.N != tc.want || m != 2 || s.P50 != 2 {
					t.Errorf("Summary %+v, Mean %g", s, m)
				}
				return
			}
			if s.N != 0 || !math.IsNaN(s.Mean) || !math.IsNaN(s.P50) || !math.IsNaN(s.Max) || !math.IsNaN(m) {
				t.Errorf("Summary %+v, Mean %g: want N 0 and NaN", s, m)
			}
		})
	}
}

// TestProportionCI: Clopper-Pearson intervals as tabulated (10 trials: 9
// successes give 0.555 to 0.9975, all 10 give 0.6915 to 1, none 0 to
// 0.3085), and at each inner end the binomial tail beyond the count is
// exactly the level's half: the defining property.
func TestProportionCI(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{{9, 10, 0.5550, 0.9975}, {10, 10, 0.6915, 1}, {0, 10, 0, 0.3085}, {1, 2, 0.0126, 0.9874}} {
		lo, hi := ProportionCI(c.k, c.n, 0.95)
		if math.Abs(lo-c.lo) > 5e-4 || math.Abs(hi-c.hi) > 5e-4 {
			t.Errorf("%d of %d: [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
		// P(X >= k | lo) and P(X <= k | hi) are 2.5% each.
		if c.k > 0 {
			if p := 1 - (distuv.Binomial{N: float64(c.n), P: lo}).CDF(float64(c.k-1)); math.Abs(p-0.025) > 1e-6 {
				t.Errorf("%d of %d: P(X >= k) at the lower end %.6f, want 0.025", c.k, c.n, p)
			}
		}
		if c.k < c.n {
			if p := (distuv.Binomial{N: float64(c.n), P: hi}).CDF(float64(c.k)); math.Abs(p-0.025) > 1e-6 {
				t.Errorf("%d of %d: P(X <= k) at the upper end %.6f, want 0.025", c.k, c.n, p)
			}
		}
	}
	for _, bad := range [][2]int{{-1, 10}, {11, 10}, {0, 0}} {
		if lo, hi := ProportionCI(bad[0], bad[1], 0.95); !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("%d of %d: [%g, %g], want NaN", bad[0], bad[1], lo, hi)
		}
	}
}
