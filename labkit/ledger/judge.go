package ledger

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"synclab/labkit"
)

// judge computes a claim's verdict, magnitude and why from its runs.
type judge func(r *runs) (v Verdict, magnitude, why string)

// judges holds the code of every claim judged by runs, by claim id
// (arm.go, esp32.go).
var judges = func() map[string]judge {
	m := maps.Clone(armJudges)
	maps.Copy(m, esp32Judges)
	return m
}()

// runs gives a judge the results of its claim's runs. A mean the judge asks
// for that no successful run has is recorded, and the claim is then not
// simulated, naming the failure; failure reads a failure on purpose.
type runs struct {
	c       Claim
	res     map[string]*labkit.Result
	missing []string
}

// value returns the article's number key (Claim.Values).
func (r *runs) value(key string) float64 {
	v, ok := r.c.Values[key]
	if !ok {
		panic(fmt.Sprintf("ledger: claim %s: judge reads values[%q], which the data file does not set", r.c.ID, key))
	}
	return v
}

// param returns the value of parameter key in run name (NaN without the
// run's result).
func (r *runs) param(name, key string) float64 {
	res := r.res[name]
	if res == nil {
		return math.NaN()
	}
	return res.Experiment.Params.Get(key)
}

// point returns the index of the sweep point of run name whose parameters
// have the given values (pairs of key and value); 0 for a run without a
// sweep. A pair that matches no point is a judge bug and panics.
func (r *runs) point(name string, kv ...any) int {
	res := r.res[name]
	if res == nil {
		return 0
	}
	e := res.Experiment
next:
	for i := range e.NumPoints() {
		pt := e.Point(i)
		for j := 0; j+1 < len(kv); j += 2 {
			if pt[kv[j].(string)] != toFloat(kv[j+1]) {
				continue next
			}
		}
		return i
	}
	panic(fmt.Sprintf("ledger: claim %s: run %s has no point %v", r.c.ID, name, kv))
}

func toFloat(x any) float64 {
	switch v := x.(type) {
	case int:
		return float64(v)
	case float64:
		return v
	}
	panic(fmt.Sprintf("ledger: sweep value %v (%T) is not a number", x, x))
}

// mean returns the mean of metric over the successful runs of variant at
// point of run name (NaN, recorded as missing, when there is none).
func (r *runs) mean(name, variant string, point int, metric string) float64 {
	return labkit.Summarize(r.values(name, variant, point, metric)).Mean
}

// values returns metric's values over the successful runs of variant at
// point of run name, one per seed (none, recorded as missing, when there
// is none).
func (r *runs) values(name, variant string, point int, metric string) []float64 {
	res := r.res[name]
	if res == nil {
		r.missing = append(r.missing, fmt.Sprintf("run %s: no result", name))
		return nil
	}
	xs := res.Values(variant, point, metric)
	if len(xs) == 0 {
		why := r.failure(name, variant, point)
		if why == "" {
			why = "no such variant, point or metric"
		}
		if m := fmt.Sprintf("%s %s %s: %s", name, variant, metric, why); !slices.Contains(r.missing, m) { // a judge may read a cell twice (mean, ratio)
			r.missing = append(r.missing, m)
		}
	}
	return xs
}

// at names one metric of one variant at one sweep point of a run.
type at struct {
	run, variant string
	point        int
	metric       string
}

// spread compares a metric that varies from seed to seed (a maximum over a
// run with Poisson interrupts) between two cells: their ratio of means with
// its 95% interval and the seeds behind it.
type spread struct {
	labkit.Ratio
	n int // seeds of the cell with fewer
}

// ratio returns a's mean over b's, with the interval their seeds give:
// Fieller's for pairs when a and b are one metric of one variant at two
// points of a run, which share their seeds (labkit.RunSeed), else for
// independent samples (labkit.RatioCI: variants have their own seeds).
func (r *runs) ratio(a, b at) spread {
	xa, xb := r.values(a.run, a.variant, a.point, a.metric), r.values(b.run, b.variant, b.point, b.metric)
	n := min(len(xa), len(xb))
	if res := r.res[a.run]; a.run == b.run && a.variant == b.variant && a.metric == b.metric && res != nil {
		return spread{res.PairedRatio(a.variant, a.point, res, b.point, a.metric), n}
	}
	return spread{labkit.RatioCI(xa, xb), n}
}

// straddles reports whether the interval holds a threshold k strictly
// inside, or the ratio rests on a single seed, so that the seeds cannot say
// on which side of k the ratio lies. A judge whose verdict turns on such a
// ratio crossing k then returns unresolved (see unresolved).
func (q spread) straddles(k ...float64) bool {
	if q.n < 2 {
		return !math.IsNaN(q.Value)
	}
	for _, x := range k {
		if q.Lo < x && x < q.Hi {
			return true
		}
	}
	return false
}

// String gives the ratio with its interval: "1.49, 95% interval 1.2 to
// 1.81 over 3 seeds".
func (q spread) String() string { return num(q.Value) + ", " + q.interval() }

// interval is the ratio's interval: "95% interval 1.2 to 1.81 over 3
// seeds".
func (q spread) interval() string {
	switch {
	case q.n < 2:
		return "from 1 seed: no interval"
	case !q.Bounded:
		return fmt.Sprintf("95%% interval unbounded over %d seeds", q.n)
	}
	return fmt.Sprintf("95%% interval %s to %s over %d seeds", num(q.Lo), num(q.Hi), q.n)
}

// widest words how far the 95% intervals of qs reach from their ratios,
// at most: "every ratio's 95% interval within ±0.4% of it over 2 seeds".
func widest(qs []spread) string {
	w, n := 0.0, math.MaxInt
	for _, q := range qs {
		n = min(n, q.n)
		w = max(w, (q.Hi-q.Value)/q.Value, (q.Value-q.Lo)/q.Value)
	}
	switch {
	case n < 2:
		return "from 1 seed: no interval"
	case math.IsInf(w, 0) || math.IsNaN(w):
		return fmt.Sprintf("a ratio's 95%% interval unbounded over %d seeds", n)
	}
	return fmt.Sprintf("every ratio's 95%% interval within ±%s%% of it over %d seeds", num(100*w), n)
}

// unresolved judges a claim whose deciding ratio q, of what, straddles its
// thresholds: the why names the ratio and the run whose repeats would
// decide.
func unresolved(q spread, what, run, mag string) (Verdict, string, string) {
	return Unresolved, mag, fmt.Sprintf("the seeds disagree: %s is %s, on both sides of what decides the verdict; more repeats of run %s (data/claims/claims.json) would settle it", what, q, run)
}

// failure returns the error of the first failed run of variant at point of
// run name, "" when none failed.
func (r *runs) failure(name, variant string, point int) string {
	res := r.res[name]
	if res == nil {
		return ""
	}
	for _, run := range res.Runs {
		if run.Variant == variant && run.Point == point && run.Failed() {
			return run.Err
		}
	}
	return ""
}

// deadlock returns the part of a failure from "deadlock at" on ("" when the
// failure is not a deadlock), for a verdict to quote, its time written as
// the ledger writes times ("deadlock at 16.49 ms", not the engine's
// "16.4855ms").
func deadlock(failure string) string {
	i := strings.Index(failure, "deadlock at ")
	if i < 0 {
		return ""
	}
	s := failure[i:]
	if m := deadlockTime.FindStringSubmatchIndex(s); m != nil {
		if v, err := strconv.ParseFloat(s[m[2]:m[3]], 64); err == nil {
			s = s[:m[2]] + labkit.Quantity(v, s[m[4]:m[5]]) + s[m[5]:]
		}
	}
	return s
}

// deadlockTime is the time in the engine's report: "deadlock at 16.4855ms".
var deadlockTime = regexp.MustCompile(`^deadlock at ([0-9.]+)(ns|us|ms)\b`)

// num formats x with 3 significant digits, thousands grouped.
func num(x float64) string {
	if math.Abs(x) >= 1000 {
		s := fmt.Sprintf("%.0f", math.Abs(x))
		var b strings.Builder
		if x < 0 {
			b.WriteByte('-')
		}
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		return b.String()
	}
	return fmt.Sprintf("%.3g", x)
}

// vs describes a against b: "36x below", "2.9x above", or a percentage
// when they are within a factor 2.
func vs(a, b float64) string {
	switch {
	case a >= 2*b:
		return num(a/b) + "x above"
	case b >= 2*a:
		return num(b/a) + "x below"
	case a >= b:
		return fmt.Sprintf("%.0f%% above", 100*(a/b-1))
	}
	return fmt.Sprintf("%.0f%% below", 100*(1-a/b))
}

// pct is the relative change from b to a in percent.
func pct(a, b float64) float64 { return 100 * (a - b) / b }

// within reports whether a is within a factor f of b (both positive).
func within(a, b, f float64) bool { return a <= b*f && b <= a*f }

func joinComma(parts []string) string { return strings.Join(parts, ", ") }
