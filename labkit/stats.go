package labkit

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"synclab/sim"
)

// Summary describes a sample: size, mean, standard deviation (n-1), the 95%
// Student-t confidence interval of the mean and a few percentiles. With
// fewer than two values SD and the interval are NaN.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	// Half is the half-width of the 95% interval; Lo and Hi its bounds.
	Half float64 `json:"ci95"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// tQuantile returns the two-sided Student-t critical value for level (0.95)
// with df degrees of freedom.
func tQuantile(level, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-level)/2)
}

// Summarize computes the Summary of xs.
func Summarize(xs []float64) Summary {
	s := Summary{N: len(xs), Mean: math.NaN(), SD: math.NaN(), Half: math.NaN(), Lo: math.NaN(), Hi: math.NaN(),
		Min: math.NaN(), P50: math.NaN(), P95: math.NaN(), P99: math.NaN(), Max: math.NaN()}
	if len(xs) == 0 {
		return s
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	s.Mean = stat.Mean(sorted, nil)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	s.P50, s.P95, s.P99 = percentileSorted(sorted, 50), percentileSorted(sorted, 95), percentileSorted(sorted, 99)
	if len(xs) > 1 {
		s.SD = stat.StdDev(sorted, nil)
		s.Half = tQuantile(0.95, float64(len(xs)-1)) * s.SD / math.Sqrt(float64(len(xs)))
		s.Lo, s.Hi = s.Mean-s.Half, s.Mean+s.Half
	}
	return s
}

// Scale returns s in another unit: every value multiplied by f > 0 (the
// size N stays). MeanCI's run range needs Min and Max scaled with the mean.
func (s Summary) Scale(f float64) Summary {
	for _, v := range []*float64{&s.Mean, &s.SD, &s.Half, &s.Lo, &s.Hi, &s.Min, &s.P50, &s.P95, &s.P99, &s.Max} {
		*v *= f
	}
	return s
}

// percentileSorted returns the p-th percentile (0..100) of a sorted,
// non-empty sample: sim.Percentile, the one definition SyncLab uses
// (NumPy's default, R's type 7).
func percentileSorted(sorted []float64, p float64) float64 { return sim.Percentile(sorted, p) }

// Ratio is the ratio of two means with its 95% interval.
type Ratio struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	// Bounded is false when the denominator's mean is not significantly
	// different from zero: Fieller's interval is then unbounded (Lo, Hi are
	// -Inf, +Inf).
	Bounded bool `json:"bounded"`
}

// RatioCI returns mean(a)/mean(b) with Fieller's 95% interval for independent
// samples: the set of r with (ma - r*mb)^2 <= t^2 (va + r^2 vb), where va, vb
// are the squared standard errors and t the Student-t quantile with
// Welch-Satterthwaite degrees of freedom evaluated at the point estimate.
// Samples of size one or without spread give a zero-width interval.
func RatioCI(a, b []float64) Ratio {
	ma, mb := stat.Mean(a, nil), stat.Mean(b, nil)
	va, vb := sqErr(a), sqErr(b)
	// Welch-Satterthwaite df of va + r^2 vb (unused without spread).
	wa, wb := va, ma*ma/(mb*mb)*vb
	df := (wa + wb) * (wa + wb) / (wa*wa/float64(max(len(a)-1, 1)) + wb*wb/float64(max(len(b)-1, 1)))
	return fieller(ma, mb, va, vb, 0, df)
}

// PairedRatioCI returns mean(a)/mean(b) with Fieller's 95% interval for
// paired samples, a[i] and b[i] measured under the same conditions (the
// same seed at two sweep points, which share their seeds: RunSeed): the set
// of r whose differences a[i] - r*b[i] have a mean within Student's t
// (n-1 degrees of freedom) of zero. Noise common to a pair cancels, so a
// change that the same seeds reproduce exactly has a zero-width interval.
// a and b must have the same length, at least one; otherwise every field
// is NaN and Bounded false.
func PairedRatioCI(a, b []float64) Ratio {
	n := len(a)
	if n == 0 || len(b) != n {
		return Ratio{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	ma, mb := stat.Mean(a, nil), stat.Mean(b, nil)
	if n < 2 {
		return fieller(ma, mb, 0, 0, 0, 1)
	}
	f := float64(n)
	return fieller(ma, mb, stat.Variance(a, nil)/f, stat.Variance(b, nil)/f, stat.Covariance(a, b, nil)/f, f-1)
}

// fieller is ma/mb with the 95% interval of the r that satisfy
// (ma - r*mb)^2 <= t^2 (va - 2r*cab + r^2 vb), the squared standard errors of
// the means va, vb and their covariance cab, t Student's with df degrees of
// freedom. Without spread (va, vb, cab all 0) the interval has zero width.
func fieller(ma, mb, va, vb, cab, df float64) Ratio {
	r := Ratio{Value: ma / mb, Lo: ma / mb, Hi: ma / mb, Bounded: true}
	if va == 0 && vb == 0 && cab == 0 {
		return r
	}
	t2 := math.Pow(tQuantile(0.95, df), 2)
	qa := mb*mb - t2*vb
	qb := -2*ma*mb + 2*t2*cab
	qc := ma*ma - t2*va
	disc := qb*qb - 4*qa*qc
	if qa <= 0 || disc < 0 {
		r.Lo, r.Hi, r.Bounded = math.Inf(-1), math.Inf(1), false
		return r
	}
	sq := math.Sqrt(disc)
	r.Lo, r.Hi = (-qb-sq)/(2*qa), (-qb+sq)/(2*qa)
	return r
}

// PairedRatio is the ratio of a metric's mean at point p of r to its mean
// at point q of base, for one variant, with PairedRatioCI's interval over
// the repeats that succeeded at both. A repeat runs with the same seed at
// every point of a sweep and in every experiment with the same seed (RunSeed),
// so base may be r itself (two points of a sweep) or the baseline an
// experiment's variation is measured against.
func (r *Result) PairedRatio(variant string, p int, base *Result, q int, metric string) Ratio {
	at := map[int]float64{}
	for _, run := range base.runsAt(variant, q, false) {
		if x, ok := run.Metrics[metric]; ok {
			at[run.Repeat] = x
		}
	}
	var a, b []float64
	for _, run := range r.runsAt(variant, p, false) {
		if y, ok := at[run.Repeat]; ok {
			a, b = append(a, run.Metrics[metric]), append(b, y)
		}
	}
	return PairedRatioCI(a, b)
}

// sqErr is the squared standard error of the mean (0 for fewer than two values).
func sqErr(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	return stat.Variance(xs, nil) / float64(len(xs))
}

// Values returns the metric's values over the successful repeats of a
// variant at a sweep point, in repeat order. An unknown variant, point or
// metric (a misspelled name) gives none, so Summary and Mean are NaN and a
// typo cannot read as 0.
func (r *Result) Values(variant string, point int, metric string) []float64 {
	var xs []float64
	for _, run := range r.runsAt(variant, point, false) {
		if x, ok := run.Metrics[metric]; ok {
			xs = append(xs, x)
		}
	}
	return xs
}

// Samples pools the named samples of a variant's successful runs at a sweep
// point; an unknown name gives none, as in Values.
func (r *Result) Samples(variant string, point int, name string) []float64 {
	var xs []float64
	for _, run := range r.runsAt(variant, point, false) {
		xs = append(xs, run.Samples[name]...)
	}
	return xs
}

// runsAt returns a variant's runs at a sweep point that failed (failed
// true) or succeeded (failed false).
func (r *Result) runsAt(variant string, point int, failed bool) []Run {
	var out []Run
	for _, run := range r.Runs {
		if run.Variant == variant && run.Point == point && run.Failed() == failed {
			out = append(out, run)
		}
	}
	return out
}

// failureNote describes the failed runs of a variant at a sweep point, e.g.
// "1 of 3 runs failed: deadlock at ...", or "" when none failed.
func (r *Result) failureNote(variant string, point int) string {
	failed := r.runsAt(variant, point, true)
	if len(failed) == 0 {
		return ""
	}
	total := len(failed) + len(r.runsAt(variant, point, false))
	return fmt.Sprintf("%d of %d runs failed: %s", len(failed), total, failed[0].Err)
}

// Summary summarises a metric of a variant at a sweep point: N is 0 and
// every statistic NaN for an unknown variant, point or metric (see Values).
func (r *Result) Summary(variant string, point int, metric string) Summary {
	return Summarize(r.Values(variant, point, metric))
}

// DefaultPoint is the sweep point whose swept values equal the parameter
// defaults, or point 0 when none does.
func (r *Result) DefaultPoint() int {
	i, _ := r.defaultPoint()
	return i
}

// defaultPoint is DefaultPoint, and whether a point matched.
func (r *Result) defaultPoint() (int, bool) {
	defaults := r.Experiment.Params.Values()
	for i, p := range r.Experiment.Points() {
		match := true
		for k, v := range p {
			match = match && defaults[k] == v
		}
		if match {
			return i, true
		}
	}
	return 0, false
}

// ProportionCI returns the exact (Clopper-Pearson) interval at level (0.95
// for 95%) for a proportion seen k times in n trials: it holds the true
// proportion with at least that probability, whatever the proportion. A
// count outside 0..n, or no trials, gives NaN for both ends.
func ProportionCI(k, n int, level float64) (lo, hi float64) {
	if n < 1 || k < 0 || k > n || !(level > 0 && level < 1) {
		return math.NaN(), math.NaN()
	}
	tail := (1 - level) / 2
	lo, hi = 0, 1
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(tail)
	}
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - tail)
	}
	return lo, hi
}
