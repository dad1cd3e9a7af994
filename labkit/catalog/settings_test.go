package catalog

import (
	"context"
	"errors"
	"flag"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"synclab/platforms"
	"synclab/sim"
)

// runLength caps the parameters that set how long a run is: its length,
// and the lengths of each cycle that multiply it (a critical section, the
// work outside it), so that a run at drawn settings mostly takes well under
// a second; every other parameter ranges over all the values it accepts.
var runLength = map[string]float64{
	"iterations": 50, "rounds": 50, "handoffs": 40, "duration_ms": 3,
	"hold_us": 2000, "medium_us": 2000, "hold_max_us": 50_000,
	"cs_cycles": 100_000, "loop_cycles": 100_000, "cs_us": 1000,
}

// drawSettings picks an experiment, a variant and settings from seed: each
// parameter keeps its default or takes its minimum, its maximum or a value
// between them (log-uniform over a wide range, from 1e-6 when the minimum is
// 0), capped by runLength.
func drawSettings(exps []platforms.Experiment, seed uint64) (platforms.Experiment, platforms.RunSpec) {
	r := rand.New(rand.NewPCG(seed, 3))
	e := exps[r.IntN(len(exps))]
	return e, drawSpec(e, r, seed)
}

// drawSpec draws settings for e from r (see drawSettings), then a variant.
func drawSpec(e platforms.Experiment, r *rand.Rand, seed uint64) platforms.RunSpec {
	vals := map[string]float64{}
	for _, p := range e.Params {
		lo, hi := p.Min, p.Max
		if c, ok := runLength[p.Key]; ok {
			hi = min(hi, c)
		}
		v := min(p.Value, hi)
		switch r.IntN(8) {
		case 0:
			v = lo
		case 1:
			v = hi
		case 2, 3:
			logUniform := func(lo, hi float64) float64 {
				return math.Exp(math.Log(lo) + r.Float64()*(math.Log(hi)-math.Log(lo)))
			}
			switch {
			case lo > 0 && hi/lo > 100:
				v = logUniform(lo, hi)
			case lo == 0 && hi > 100:
				// Tiny values too: a zero Min can hide a range of its own
				// (irq_mean_us = 1e-6 was an interrupt storm).
				v = logUniform(1e-6, hi)
			default:
				v = lo + r.Float64()*(hi-lo)
			}
		}
		if len(p.Choices) > 0 {
			v = p.Choices[r.IntN(len(p.Choices))]
		} else if p.Integer {
			v = math.Round(v)
		}
		vals[p.Key] = v
	}
	v := e.Variants[r.IntN(len(e.Variants))].Name
	return platforms.RunSpec{Experiment: e.Name, Variant: v, Params: vals, Seed: seed}
}

// TestSettingsEveryVariant runs every variant of every experiment in the
// catalog once at settings drawn as FuzzSettings draws them, and checks
// what FuzzSettings checks: its 40 seeds pick experiments at random, and
// would leave a newly listed one untried.
func TestSettingsEveryVariant(t *testing.T) {
	seed := uint64(0)
	for _, e := range All() {
		for _, v := range e.Variants {
			seed++
			t.Run(e.Name+"/"+v.Name, func(t *testing.T) {
				spec := drawSpec(e, rand.New(rand.NewPCG(seed, 5)), seed)
				spec.Variant = v.Name
				checkSettings(t, e, spec)
			})
		}
	}
}

// checkSettings runs e at spec and checks what any run must satisfy,
// whatever its settings: it fails with an error that names a parameter (bad
// input, which e.Check, when set, refuses too) or says who waits on what (a simulated deadlock or runaway), or it
// reports every metric finite and inside its physical range, a counter
// equal to the increments done, and the same numbers, bit for bit, when
// simulated in full detail (fast-forward off).
func checkSettings(t *testing.T, e platforms.Experiment, spec platforms.RunSpec) {
	t.Helper()
	// Not a speed check: a run that never ends fails here, naming its
	// settings, instead of hanging the test binary until it times out. A
	// fuzzing worker skips a slow input instead: go test -fuzz stops a
	// worker that spends 10 s on one input (golang/go#56238).
	limit, slow := 2*time.Minute, t.Fatalf
	if fuzzWorker() {
		limit, slow = 5*time.Second, t.Skipf
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	res, err := e.Run(ctx, spec)
	if errors.Is(err, context.DeadlineExceeded) {
		slow("%s/%s at %v: no end after %v of wall time: %v", e.Name, spec.Variant, spec.Params, limit, err)
	}
	// An experiment's Check refuses what its runs refuse as bad input, and
	// only that: lab run may refuse a sweep before any run on its word.
	if e.Check != nil {
		if cerr, bad := e.Check(spec.Params), err != nil && namesParam(e, err); (cerr != nil) != bad {
			t.Fatalf("%s/%s at %v: Check says %v, the run %v", e.Name, spec.Variant, spec.Params, cerr, err)
		}
	}
	if err != nil {
		if !namesParam(e, err) && !strings.Contains(err.Error(), " waits on ") {
			t.Fatalf("%s/%s at %v: error names no parameter and no waiter: %v", e.Name, spec.Variant, spec.Params, err)
		}
		return
	}
	for _, m := range e.Metrics {
		x, ok := res.Metrics[m.Name]
		lo, hi := m.Range()
		if !ok || math.IsNaN(x) && m.None == "" || x < lo || x > hi || math.IsInf(x, 0) {
			t.Errorf("%s/%s at %v: metric %s = %v (reported %t), want finite in [%g, %g]", e.Name, spec.Variant, spec.Params, m.Name, x, ok, lo, hi)
		}
	}
	if c, ok := res.Metrics["counter"]; ok && c != res.Metrics["expected_counter"] {
		t.Errorf("%s/%s at %v: counter %v, expected %v: mutual exclusion broke", e.Name, spec.Variant, spec.Params, c, res.Metrics["expected_counter"])
	}
	spec.Detailed = true
	full, err := e.Run(ctx, spec)
	if errors.Is(err, context.DeadlineExceeded) {
		slow("%s/%s at %v: in full detail, no end after %v of wall time: %v", e.Name, spec.Variant, spec.Params, limit, err)
	}
	if err != nil {
		t.Fatalf("%s/%s at %v: in full detail: %v", e.Name, spec.Variant, spec.Params, err)
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) } // a metric's "none"
	if !maps.EqualFunc(res.Metrics, full.Metrics, same) || !reflect.DeepEqual(res.Samples, full.Samples) {
		t.Errorf("%s/%s at %v: fast-forwarded run differs from the detailed one:\n%v\n%v", e.Name, spec.Variant, spec.Params, res.Metrics, full.Metrics)
	}
}

// fuzzWorker reports whether this process fuzzes for go test -fuzz (its
// -test.fuzzworker flag, set by the go command).
func fuzzWorker() bool {
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

// namesParam reports whether err is bad input that names one of e's
// parameters, rather than a simulated deadlock or runaway.
func namesParam(e platforms.Experiment, err error) bool {
	var d *sim.DeadlockError
	var r *sim.RunawayError
	if errors.As(err, &d) || errors.As(err, &r) {
		return false
	}
	for _, p := range e.Params {
		// A whole word: lock-scaling's key wait is in every "waits on".
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(p.Key) + `\b`).MatchString(err.Error()) {
			return true
		}
	}
	return false
}

// FuzzSettings runs the experiments at settings drawn from the seed across
// every parameter's accepted range, not only its plausible one (see
// checkSettings). Its corpus of seeds runs with every go test; -fuzz
// searches further. Drawing settings this way found a peripheral interrupt
// that could take all of core 0 (a run that never ended) and a CPU number
// that took a fraction (holder_cpu = 0.51 ran CPU 0).
func FuzzSettings(f *testing.F) {
	for seed := range uint64(40) {
		f.Add(seed)
	}
	exps := All()
	f.Fuzz(func(t *testing.T, seed uint64) {
		e, spec := drawSettings(exps, seed)
		checkSettings(t, e, spec)
	})
}
