package platforms

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"synclab/sim"
)

// Better says which direction of a metric is an improvement.
type Better string

// Directions of improvement.
const (
	Lower   Better = "lower"
	Higher  Better = "higher"
	Neither Better = ""
)

// Metric is one number a run reports.
type Metric struct {
	Name   string `msgpack:"name" json:"name"`
	Unit   string `msgpack:"unit" json:"unit"`
	Better Better `msgpack:"better" json:"better"`
	Doc    string `msgpack:"doc" json:"doc"`
	// Min and Max bound the metric's physical range (charts clip
	// confidence intervals to it). Min defaults to 0: counts, times and
	// power are not negative (a signed metric sets -math.MaxFloat64). Max
	// 0 means none, except for a unit of "%", whose default is 100.
	Min float64 `msgpack:"min,omitempty" json:"min,omitempty"`
	Max float64 `msgpack:"max,omitempty" json:"max,omitempty"`
	// None, when set, says when the metric has no value, which a run
	// reports as NaN (a hand-off time when no acquisition waited); a
	// metric without it is always finite. Tables show "-", charts a gap.
	None string `msgpack:"none,omitempty" json:"none,omitempty"`
}

// Range returns the bounds of the metric's physical range (see Min, Max).
func (m Metric) Range() (lo, hi float64) {
	switch {
	case m.Max != 0:
		return m.Min, m.Max
	case m.Unit == "%":
		return m.Min, 100
	}
	return m.Min, math.Inf(1)
}

// Variant is one alternative an experiment compares (a lock primitive, a wait
// instruction).
type Variant struct {
	Name string `msgpack:"name" json:"name"`
	Doc  string `msgpack:"doc" json:"doc"`
}

// Axis is a sweep axis: the values a numeric parameter takes. Several axes
// form a grid (their Cartesian product).
type Axis struct {
	Param  string    `msgpack:"param" json:"param"`
	Values []float64 `msgpack:"values" json:"values"`
}

// Reference is a number an article publishes for a variant and metric.
type Reference struct {
	Article string  `msgpack:"article" json:"article"`
	Variant string  `msgpack:"variant" json:"variant"`
	Metric  string  `msgpack:"metric" json:"metric"`
	Value   float64 `msgpack:"value" json:"value"`
	Unit    string  `msgpack:"unit" json:"unit"`
	Quote   string  `msgpack:"quote" json:"quote"`
	// Scope, when set, says what the article's figure measures that the
	// model's metric does not (a board's power against the cores', an
	// end-to-end latency against a lock wait): then only the direction of
	// a difference is compared, not the sizes.
	Scope string `msgpack:"scope,omitempty" json:"scope,omitempty"`
}

// Experiment is the definition of an experiment: plain data that round-trips
// through msgpack and JSON (so a result file records exactly what ran) and
// whose Hash identifies its results, plus the function that runs it.
type Experiment struct {
	Name        string    `msgpack:"name" json:"name"`
	Description string    `msgpack:"description" json:"description"`
	Platform    string    `msgpack:"platform" json:"platform"`
	Params      Params    `msgpack:"params" json:"params"`
	Variants    []Variant `msgpack:"variants" json:"variants"`
	Sweep       []Axis    `msgpack:"sweep" json:"sweep"`
	Repeats     int       `msgpack:"repeats" json:"repeats"`
	Seed        uint64    `msgpack:"seed" json:"seed"`
	Metrics     []Metric  `msgpack:"metrics" json:"metrics"`
	// Reference holds the articles' numbers (the catalog fills it from
	// data/reference).
	Reference []Reference `msgpack:"reference" json:"reference"`
	// Run runs one simulation of the experiment. It is code, not data: it
	// is not serialised (a definition read from a result file has none)
	// and not hashed (the code version stamps results instead).
	Run RunFunc `msgpack:"-" json:"-"`
	// Traces says that Run records a trace when its RunSpec asks for one
	// (the per-core timelines); the other experiments' runs ignore the
	// request. It describes Run, so it is neither serialised nor hashed.
	Traces bool `msgpack:"-" json:"-"`
	// Check, when set, refuses values that each parameter accepts but that
	// cannot run together; CheckPoints calls it at every sweep point
	// before any run. Code like Run: neither serialised nor hashed.
	Check CheckFunc `msgpack:"-" json:"-"`
}

// RunSpec is what one run of an experiment gets: the variant, every parameter
// value (defaults, overrides and the sweep point), its own seed and whether to
// record a trace.
type RunSpec struct {
	Experiment string             `msgpack:"experiment" json:"experiment"`
	Variant    string             `msgpack:"variant" json:"variant"`
	Params     map[string]float64 `msgpack:"params" json:"params"`
	Seed       uint64             `msgpack:"seed" json:"seed"`
	Repeat     int                `msgpack:"repeat" json:"repeat"`
	Trace      bool               `msgpack:"trace" json:"trace"`
	// Detailed asks a run that fast-forwards periodic steady states
	// (sim.Engine.EnableFastForward) to simulate every period instead:
	// slower, with the same results bit for bit. It exists to measure and
	// check fast-forward.
	Detailed bool `msgpack:"detailed" json:"detailed"`
}

// MaxTraceSpans bounds the spans a run's trace keeps, so that a long window
// cannot exhaust memory.
const MaxTraceSpans = 200_000

// NewTrace returns the trace a run records over [from, to) of simulated
// time when the spec asks for one (Trace), nil otherwise: a nil trace
// records nothing, so a run sets it on its engine either way.
func (s RunSpec) NewTrace(from, to sim.Time) *sim.Trace {
	if !s.Trace {
		return nil
	}
	return sim.NewTrace(from, to, MaxTraceSpans)
}

// RunResult is what one run reports: one value per metric, optional samples
// (latency distributions) and, when asked for, a trace.
type RunResult struct {
	Metrics map[string]float64   `msgpack:"metrics" json:"metrics"`
	Samples map[string][]float64 `msgpack:"samples,omitempty" json:"samples,omitempty"`
	Trace   *sim.Trace           `msgpack:"-" json:"-"`
	// Skipped is the share (0..1) of the run's simulated time that
	// fast-forward skipped. It says how the run was computed, not what it
	// found: never recorded, for lab bench.
	Skipped float64 `msgpack:"-" json:"-"`
	// Events is how many events the engine dispatched (those of skipped
	// periods included: what the detailed run dispatches), when the run
	// reports it; with the wall time it gives the cost of one event. Never
	// recorded, like Skipped.
	Events uint64 `msgpack:"-" json:"-"`
	// Switches is how many times a process's coroutine was resumed in the
	// part of the run simulated in detail (sim.Engine.Switches; skipped
	// periods add none), when the run reports it. Never recorded.
	Switches uint64 `msgpack:"-" json:"-"`
}

// RunFunc runs one simulation. It must depend only on spec (deterministic
// for a given seed) and should return promptly when ctx is cancelled.
type RunFunc func(ctx context.Context, spec RunSpec) (RunResult, error)

// CheckFunc refuses a combination of parameter values (two CPUs that must
// differ, interrupts that would leave a core no time) with an error naming
// the parameters and their values. It gets every parameter's value at one
// sweep point, as a run would.
type CheckFunc func(values map[string]float64) error

// Clone returns a deep copy of e.
func (e Experiment) Clone() Experiment {
	e.Params = e.Params.Clone()
	e.Variants = slices.Clone(e.Variants)
	e.Sweep = slices.Clone(e.Sweep)
	for i := range e.Sweep {
		e.Sweep[i].Values = slices.Clone(e.Sweep[i].Values)
	}
	e.Metrics = slices.Clone(e.Metrics)
	e.Reference = slices.Clone(e.Reference)
	return e
}

// Validate checks that the definition is consistent: a name and a
// platform, at least one variant and metric with unique names, parameters
// that each cite a provenance and a source, with sound ranges and defaults
// inside them, and sweep axes over known parameters with accepted values.
func (e Experiment) Validate() error {
	if e.Name == "" {
		return fmt.Errorf("experiment without a name")
	}
	if e.Platform == "" {
		return fmt.Errorf("experiment %s: no platform", e.Name)
	}
	if len(e.Variants) == 0 || len(e.Metrics) == 0 {
		return fmt.Errorf("experiment %s: needs at least one variant and one metric", e.Name)
	}
	if e.Repeats < 1 {
		return fmt.Errorf("experiment %s: repeats %d, need at least 1", e.Name, e.Repeats)
	}
	if err := uniqueNames("variant", e.Variants, func(v Variant) string { return v.Name }); err != nil {
		return fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	if err := uniqueNames("metric", e.Metrics, func(m Metric) string { return m.Name }); err != nil {
		return fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	if err := uniqueNames("parameter", e.Params, func(p Param) string { return p.Key }); err != nil {
		return fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	for _, p := range e.Params {
		if err := p.define(); err != nil {
			return fmt.Errorf("experiment %s: %w", e.Name, err)
		}
		if err := p.Check(p.Value); err != nil {
			return fmt.Errorf("experiment %s: default: %w", e.Name, err)
		}
	}
	seen := map[string]bool{}
	for _, a := range e.Sweep {
		p, ok := e.Params.Lookup(a.Param)
		if !ok {
			return fmt.Errorf("experiment %s: sweep over unknown parameter %q; known: %s", e.Name, a.Param, strings.Join(e.Params.Keys(), ", "))
		}
		if seen[a.Param] || len(a.Values) == 0 {
			return fmt.Errorf("experiment %s: sweep axis %s repeated or empty", e.Name, a.Param)
		}
		seen[a.Param] = true
		for i, v := range a.Values {
			if err := p.Check(v); err != nil {
				return fmt.Errorf("experiment %s: sweep: %w", e.Name, err)
			}
			// Two points with one label would read as one in every table.
			if slices.Contains(a.Values[:i], v) {
				return fmt.Errorf("experiment %s: sweep of %s: value %g given twice", e.Name, a.Param, v)
			}
		}
	}
	return nil
}

func uniqueNames[T any](kind string, xs []T, name func(T) string) error {
	seen := map[string]bool{}
	for _, x := range xs {
		n := name(x)
		if n == "" || seen[n] {
			return fmt.Errorf("%s name %q empty or repeated", kind, n)
		}
		seen[n] = true
	}
	return nil
}

// With returns a copy of e with parameter key set to v. An unknown key or a
// value the parameter does not accept is an error naming the key and what is
// allowed. Setting a swept parameter replaces its sweep axis by the one value.
func (e Experiment) With(key string, v float64) (Experiment, error) {
	out := e.Clone()
	if err := out.Params.Set(key, v); err != nil {
		return e, fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	out.Sweep = slices.DeleteFunc(out.Sweep, func(a Axis) bool { return a.Param == key })
	return out, nil
}

// WithSweep returns a copy of e that sweeps parameter key over values,
// replacing any axis over key; values are checked like With's.
func (e Experiment) WithSweep(key string, values ...float64) (Experiment, error) {
	out := e.Clone()
	out.Sweep = slices.DeleteFunc(out.Sweep, func(a Axis) bool { return a.Param == key })
	vs := make([]float64, len(values))
	for i, v := range values {
		vs[i] = unsignedZero(v)
	}
	out.Sweep = append(out.Sweep, Axis{Param: key, Values: vs})
	if err := out.Validate(); err != nil {
		return e, err
	}
	return out, nil
}

// WithVariants returns a copy of e restricted to the named variants (in the
// experiment's order); an unknown name is an error listing the variants.
func (e Experiment) WithVariants(names ...string) (Experiment, error) {
	out := e.Clone()
	for i, n := range names {
		if !slices.ContainsFunc(e.Variants, func(v Variant) bool { return v.Name == n }) {
			return e, fmt.Errorf("experiment %s: unknown variant %q; known: %s", e.Name, n, strings.Join(e.VariantNames(), ", "))
		}
		if slices.Contains(names[:i], n) {
			return e, fmt.Errorf("experiment %s: variant %s named twice", e.Name, n)
		}
	}
	out.Variants = slices.DeleteFunc(out.Variants, func(v Variant) bool { return !slices.Contains(names, v.Name) })
	return out, nil
}

// WithSettings applies "key=value" settings (the CLI's -set flags) in order.
func (e Experiment) WithSettings(settings ...string) (Experiment, error) {
	for _, s := range settings {
		key, val, ok := strings.Cut(s, "=")
		if !ok {
			return e, fmt.Errorf("setting %q: want key=value; keys: %s", s, strings.Join(e.Params.Keys(), ", "))
		}
		key = strings.TrimSpace(key)
		if key == "" {
			return e, fmt.Errorf("setting %q: no parameter name before '='; keys: %s", s, strings.Join(e.Params.Keys(), ", "))
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if errors.Is(err, strconv.ErrRange) {
			return e, fmt.Errorf("setting %q: value %q of %s is beyond what a float64 holds", s, val, key)
		}
		if err != nil {
			return e, fmt.Errorf("setting %q: value %q of %s is not a number", s, val, key)
		}
		if e, err = e.With(key, v); err != nil {
			return e, err
		}
	}
	return e, nil
}

// VariantNames returns the variants' names in order.
func (e Experiment) VariantNames() []string {
	names := make([]string, len(e.Variants))
	for i, v := range e.Variants {
		names[i] = v.Name
	}
	return names
}

// Metric returns the metric with the given name.
func (e Experiment) Metric(name string) (Metric, bool) {
	i := slices.IndexFunc(e.Metrics, func(m Metric) bool { return m.Name == name })
	if i < 0 {
		return Metric{}, false
	}
	return e.Metrics[i], true
}

// CheckPoints runs e.Check, when set, with the values of every sweep point,
// so that settings that do not go together fail before any run rather than
// as failed runs; the error names the first such point.
func (e Experiment) CheckPoints() error {
	if e.Check == nil {
		return nil
	}
	for i := range e.NumPoints() {
		values := e.PointParams(i)
		if err := e.Check(values); err != nil {
			if len(e.Sweep) == 0 {
				return fmt.Errorf("experiment %s: %w", e.Name, err)
			}
			where := make([]string, len(e.Sweep))
			for j, a := range e.Sweep {
				where[j] = a.Param + "=" + FormatValue(values[a.Param])
			}
			return fmt.Errorf("experiment %s: sweep point %s: %w", e.Name, strings.Join(where, " "), err)
		}
	}
	return nil
}

// Points returns the sweep grid: one map of swept parameter values per point,
// the last axis varying fastest. An experiment without sweep has one empty
// point.
func (e Experiment) Points() []map[string]float64 {
	points := make([]map[string]float64, e.NumPoints())
	for i := range points {
		points[i] = e.Point(i)
	}
	return points
}

// NumPoints is the number of sweep points, len(e.Points()).
func (e Experiment) NumPoints() int {
	n := 1
	for _, a := range e.Sweep {
		n *= len(a.Values)
	}
	return n
}

// Point returns the swept values of sweep point i, e.Points()[i], without
// building the grid: i in mixed radix, the last axis the lowest digit.
func (e Experiment) Point(i int) map[string]float64 {
	p := make(map[string]float64, len(e.Sweep))
	for k := len(e.Sweep) - 1; k >= 0; k-- {
		a := e.Sweep[k]
		p[a.Param] = a.Values[i%len(a.Values)]
		i /= len(a.Values)
	}
	return p
}

// hashed is the part of an experiment that determines its results.
type hashed struct {
	Name     string
	Platform string
	Params   map[string]float64
	Variants []string
	Sweep    []Axis
	Repeats  int
	Seed     uint64
	Metrics  []string
}

// hashed returns the part of e that Hash covers.
func (e Experiment) hashed() hashed {
	h := hashed{Name: e.Name, Platform: e.Platform, Params: e.Params.Values(), Variants: e.VariantNames(), Sweep: e.Sweep, Repeats: e.Repeats, Seed: e.Seed}
	for _, m := range e.Metrics {
		h.Metrics = append(h.Metrics, m.Name)
	}
	return h
}

// Diff names what makes the hashes of e and o differ, one entry per field
// or parameter ("repeats 10 vs 20", "parameter CSCycles 100 vs 200"); it is
// empty when they have the same hash. It tells a user why two result files
// cannot be merged.
func (e Experiment) Diff(o Experiment) []string {
	a, b := e.hashed(), o.hashed()
	var d []string
	differ := func(field string, x, y any) {
		d = append(d, fmt.Sprintf("%s %v vs %v", field, x, y))
	}
	if a.Name != b.Name {
		differ("name", a.Name, b.Name)
	}
	if a.Platform != b.Platform {
		differ("platform", a.Platform, b.Platform)
	}
	keys := slices.Concat(slices.Collect(maps.Keys(a.Params)), slices.Collect(maps.Keys(b.Params)))
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		x, inA := a.Params[k]
		y, inB := b.Params[k]
		switch {
		case !inA:
			differ("parameter "+k, "(none)", y)
		case !inB:
			differ("parameter "+k, x, "(none)")
		case math.Float64bits(x) != math.Float64bits(y):
			differ("parameter "+k, x, y)
		}
	}
	if !slices.Equal(a.Variants, b.Variants) {
		differ("variants", a.Variants, b.Variants)
	}
	if !slices.EqualFunc(a.Sweep, b.Sweep, func(x, y Axis) bool { return x.Param == y.Param && slices.Equal(x.Values, y.Values) }) {
		differ("sweep", a.Sweep, b.Sweep)
	}
	if a.Repeats != b.Repeats {
		differ("repeats", a.Repeats, b.Repeats)
	}
	if a.Seed != b.Seed {
		differ("seed", a.Seed, b.Seed)
	}
	if !slices.Equal(a.Metrics, b.Metrics) {
		differ("metrics", a.Metrics, b.Metrics)
	}
	return d
}

// Hash identifies the results of e: it covers the name, platform, parameter
// values, variants, sweep, repeats, seed and metric names, not the prose or the
// reference numbers.
func (e Experiment) Hash() string {
	b, err := json.Marshal(e.hashed()) // map keys are sorted: canonical
	if err != nil {
		panic(err) // plain data always marshals
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// PointParams returns every parameter value of sweep point i: the defaults (with
// overrides) and the point's swept values.
func (e Experiment) PointParams(i int) map[string]float64 {
	m := e.Params.Values()
	maps.Copy(m, e.Point(i))
	return m
}
