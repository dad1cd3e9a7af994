package labkit

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"synclab/labkit/nbexport"
	"synclab/platforms"
)

// lineFixture is an experiment whose metric is y = a + b*x + mode*x² (+ c*0:
// c moves nothing), and z = a + b (which cannot tell a from b, and moves
// with no mode).
func lineFixture() platforms.Experiment {
	return platforms.Experiment{
		Name: "fixture-line", Platform: "testbed", Repeats: 1, Seed: 1,
		Params: platforms.Params{
			{Key: "a", Value: 40, Unit: "ns", Prov: platforms.ASSUME, Source: "guess", Min: 0, Max: 1000, Low: 20, High: 80},
			{Key: "b", Value: 30, Unit: "ns", Prov: platforms.ASSUME, Source: "guess", Min: 0, Max: 1000, Low: 10, High: 60},
			{Key: "c", Value: 5, Unit: "ns", Prov: platforms.ASSUME, Source: "guess", Min: 0, Max: 100, Low: 1, High: 10},
			{Key: "x", Value: 1, Unit: "", Prov: platforms.CODE, Source: "the setup", Min: 0, Max: 100},
			{Key: "mode", Value: 0, Unit: "", Prov: platforms.ASSUME, Source: "guess", Choices: []float64{0, 1}, Low: 0, High: 1},
		},
		Variants: []platforms.Variant{{Name: "v"}},
		Metrics:  []platforms.Metric{{Name: "y", Unit: "ns"}, {Name: "z", Unit: "ns"}},
		Run: func(_ context.Context, s platforms.RunSpec) (platforms.RunResult, error) {
			a, b := s.Params["a"], s.Params["b"]
			x := s.Params["x"]
			return platforms.RunResult{Metrics: map[string]float64{"y": a + b*x + s.Params["mode"]*x*x, "z": a + b}}, nil
		},
	}
}

// intFixture is an experiment whose metric is y = n*x with n a whole
// number of cycles; seen records every n it ran with.
func intFixture(seen *[]float64) platforms.Experiment {
	var mu sync.Mutex
	return platforms.Experiment{
		Name: "fixture-int", Platform: "testbed", Repeats: 1, Seed: 1,
		Params: platforms.Params{
			{Key: "n", Value: 30, Unit: "cycles", Prov: platforms.ASSUME, Source: "guess", Integer: true, Min: 1, Max: 1000, Low: 10, High: 60},
			{Key: "x", Value: 1, Unit: "", Prov: platforms.CODE, Source: "the setup", Min: 0, Max: 100},
		},
		Variants: []platforms.Variant{{Name: "v"}},
		Metrics:  []platforms.Metric{{Name: "y", Unit: "cycles"}},
		Run: func(_ context.Context, s platforms.RunSpec) (platforms.RunResult, error) {
			mu.Lock()
			*seen = append(*seen, s.Params["n"])
			mu.Unlock()
			return platforms.RunResult{Metrics: map[string]float64{"y": s.Params["n"] * s.Params["x"]}}, nil
		},
	}
}

func findFixture(name string) (platforms.Experiment, error) {
	if name == "fixture-line" {
		return lineFixture(), nil
	}
	return platforms.Experiment{}, fmt.Errorf("unknown experiment %q", name)
}

// synth generates measurements of y at x = 1..16 from a=55, b=22 with 2%
// relative Gaussian noise.
func synth(seed uint64) []Measurement {
	rng := rand.New(rand.NewPCG(seed, 3))
	var ms []Measurement
	for _, x := range []float64{1, 2, 3, 4, 6, 8, 12, 16} {
		y := (55 + 22*x) * (1 + 0.02*rng.NormFloat64())
		ms = append(ms, Measurement{Experiment: "fixture-line", Variant: "v", Settings: fmt.Sprintf("x=%g", x), Metric: "y", Value: y})
	}
	return ms
}

func TestCalibrateRecoversKnownParameters(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		f, err := Calibrate(context.Background(), synth(seed), findFixture, CalibrateOptions{Fit: []string{"a", "b", "c"}, MaxEvals: 400})
		if err != nil {
			t.Fatal(err)
		}
		for key, truth := range map[string]float64{"a": 55, "b": 22} {
			p := f.Params[key]
			if !p.Identifiable || truth < p.Low || truth > p.High {
				t.Errorf("seed %d: %s = %g [%g, %g] (identifiable %v), truth %g outside", seed, key, p.Value, p.Low, p.High, p.Identifiable, truth)
			}
			if w := p.High - p.Low; w <= 0 || w > 0.5*(p.PlausibleHigh-p.PlausibleLow) {
				t.Errorf("seed %d: %s interval width %g: want positive and well inside the plausible width", seed, key, w)
			}
		}
		if c := f.Params["c"]; c.Identifiable || f.Unidentifiable["c"] == "" || c.Low != c.Min || c.High != c.Max {
			t.Errorf("seed %d: c moves nothing, want it unidentifiable with the accepted range as interval: %+v", seed, c)
		}
		if f.DOF != 8-2 || len(f.Residuals) != 8 {
			t.Errorf("seed %d: dof %d, residuals %d; want 6 and 8", seed, f.DOF, len(f.Residuals))
		}
		for _, r := range f.Residuals {
			if math.Abs(r.Rel) > 0.08 || r.Rel != relResidual(r.Model, r.Value) {
				t.Errorf("seed %d: residual %+v: want |rel| < 8%% and rel = (model-measured)/measured", seed, r)
			}
		}
	}
}

// fitInt fits intFixture's n to measurements of y = slope * x at x = 1..4.
func fitInt(t *testing.T, find func(string) (platforms.Experiment, error), slope float64) *Fit {
	t.Helper()
	var ms []Measurement
	for _, x := range []float64{1, 2, 3, 4} {
		ms = append(ms, Measurement{Experiment: "fixture-int", Variant: "v", Settings: fmt.Sprintf("x=%g", x), Metric: "y", Value: slope * x})
	}
	f, err := Calibrate(context.Background(), ms, find, CalibrateOptions{Fit: []string{"n"}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// An Integer parameter is fitted on whole numbers: measurements made with
// n = 22.4 (no whole number fits exactly) give n = 22, the residuals at 22,
// and an interval of whole numbers around it.
func TestCalibrateIntegerParameter(t *testing.T) {
	var seen []float64
	find := func(name string) (platforms.Experiment, error) {
		if name == "fixture-int" {
			return intFixture(&seen), nil
		}
		return platforms.Experiment{}, fmt.Errorf("unknown experiment %q", name)
	}
	f := fitInt(t, find, 22.4)
	for _, n := range seen {
		if n != math.Trunc(n) {
			t.Fatalf("the model ran with n = %g: an Integer parameter must only be tried on whole numbers", n)
		}
	}
	p := f.Params["n"]
	if p.Value != 22 {
		t.Errorf("n = %g, want 22 (the whole number nearest the best fit 22.4)", p.Value)
	}
	for _, r := range f.Residuals {
		x, _ := strconv.ParseFloat(strings.TrimPrefix(r.Settings, "x="), 64)
		if r.Model != 22*x {
			t.Errorf("%s: model %g, want the residuals at the reported n = 22 (%g)", r.Settings, r.Model, 22*x)
		}
	}
	if p.Low != math.Trunc(p.Low) || p.High != math.Trunc(p.High) || p.Low >= 22 || p.High <= 22 || p.High-p.Low > 4 {
		t.Errorf("interval [%g, %g]: want whole numbers, around 22 and narrow", p.Low, p.High)
	}
}

func TestAccepted(t *testing.T) {
	whole := platforms.Param{Key: "n", Integer: true, Min: 0.5, Max: 9.5}
	real := platforms.Param{Key: "r", Min: 0.5, Max: 9.5}
	for _, tc := range []struct {
		p       platforms.Param
		v, want float64
	}{
		{whole, 3.4, 3}, {whole, 3.5, 4}, {whole, 0.2, 1}, {whole, 9.7, 9},
		{real, 3.4, 3.4}, {real, 0.2, 0.5}, {real, 9.7, 9.5},
	} {
		if got := accepted(tc.p, tc.v); got != tc.want || tc.p.Check(got) != nil {
			t.Errorf("accepted(%s, %g) = %g, want %g, an accepted value", tc.p.Key, tc.v, got, tc.want)
		}
	}
}

// TestCalibrateChoice: a parameter that is on or off is fitted by fitting
// the others at each value; the data pick one when the other's fit is
// worse than their noise explains, and none when nothing moves with it.
func TestCalibrateChoice(t *testing.T) {
	// y at x = 1..16 from a=55, b=22 and mode=1, with 2% noise: mode=0
	// cannot bend a line into the parabola.
	rng := rand.New(rand.NewPCG(4, 5))
	var ms []Measurement
	for _, x := range []float64{1, 2, 3, 4, 6, 8, 12, 16} {
		y := (55 + 22*x + x*x) * (1 + 0.02*rng.NormFloat64())
		ms = append(ms, Measurement{Experiment: "fixture-line", Variant: "v", Settings: fmt.Sprintf("x=%g", x), Metric: "y", Value: y})
	}
	f, err := Calibrate(context.Background(), ms, findFixture, CalibrateOptions{Fit: []string{"a", "mode", "b"}, MaxEvals: 400})
	if err != nil {
		t.Fatal(err)
	}
	m := f.Params["mode"]
	if !m.Identifiable || m.Value != 1 || m.Low != 1 || m.High != 1 || len(m.Alternatives) != 2 || !m.Alternatives[0].Rejected || m.Alternatives[1].Rejected {
		t.Errorf("mode = %+v, want 1, identified, with 0 rejected", m)
	}
	if m.Alternatives[1].SSR != f.SSR || m.Alternatives[0].SSR <= f.SSR {
		t.Errorf("alternatives %+v: the chosen value's SSR must be the fit's, %g, and the other's larger", m.Alternatives, f.SSR)
	}
	for k, want := range map[string]float64{"a": 55, "b": 22} {
		if p := f.Params[k]; !(p.Low <= want && want <= p.High) {
			t.Errorf("%s = %g, 95%% interval %g–%g misses the true %g", k, p.Value, p.Low, p.High, want)
		}
	}
	if fmt.Sprint(f.Keys) != "[a mode b]" || f.Settings != nil || len(f.Residuals) != len(ms) {
		t.Errorf("keys %v, settings %v, %d residuals: want the -fit order, no settings and every row", f.Keys, f.Settings, len(f.Residuals))
	}
	row := f.FitTable().Rows[1]
	if row[3] != "1" || row[5] != "one of 0, 1" || !strings.Contains(row[6], "(rejected)") {
		t.Errorf("table row %q: want the interval 1, the choices and the rejected fit", row)
	}
	// A profile sets the chosen value.
	if v := (&Profile{Fit: f}).Values(); v["mode"] != 1 {
		t.Errorf("profile values %v, want mode 1", v)
	}
	// z = a + b does not move with mode: nothing to choose.
	z := []Measurement{{Experiment: "fixture-line", Variant: "v", Metric: "z", Value: 70},
		{Experiment: "fixture-line", Variant: "v", Settings: "x=3", Metric: "z", Value: 71}}
	if f, err = Calibrate(context.Background(), z, findFixture, CalibrateOptions{Fit: []string{"mode"}}); err != nil {
		t.Fatal(err)
	}
	if m := f.Params["mode"]; m.Identifiable || !strings.Contains(f.Unidentifiable["mode"], "no measurement changes") || len((&Profile{Fit: f}).Values()) != 0 {
		t.Errorf("mode from z: %+v, %v: want it unidentified and left out of a profile", m, f.Unidentifiable)
	}
	// y at x=1 alone with mode and a: a can absorb mode's step, so the
	// two values fit alike.
	one := []Measurement{{Experiment: "fixture-line", Variant: "v", Metric: "y", Value: 80}, {Experiment: "fixture-line", Variant: "v", Metric: "y", Value: 81}}
	if f, err = Calibrate(context.Background(), one, findFixture, CalibrateOptions{Fit: []string{"mode", "a"}}); err != nil {
		t.Fatal(err)
	}
	if m := f.Params["mode"]; m.Identifiable || m.Low != 0 || m.High != 1 {
		t.Errorf("mode where a absorbs it: %+v, %v: want it unidentified", m, f.Unidentifiable)
	}
}

func TestCalibrateFlagsTradeOffsAndBounds(t *testing.T) {
	// z = a + b: the data fix only the sum.
	ms := []Measurement{{Experiment: "fixture-line", Variant: "v", Metric: "z", Value: 70},
		{Experiment: "fixture-line", Variant: "v", Settings: "x=3", Metric: "z", Value: 71}}
	f, err := Calibrate(context.Background(), ms, findFixture, CalibrateOptions{Fit: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Unidentifiable["a"], "trades off") || !strings.Contains(f.Unidentifiable["b"], "trades off") {
		t.Errorf("a and b trade off in z = a + b; unidentifiable = %v", f.Unidentifiable)
	}
	if s := f.Params["a"].Value + f.Params["b"].Value; math.Abs(s-70.5) > 1 {
		t.Errorf("a + b = %g, want about 70.5", s)
	}
	// One measurement cannot pin two parameters: with fewer measurements
	// than parameters every direction past the data is a trade-off.
	one := []Measurement{{Experiment: "fixture-line", Variant: "v", Settings: "x=2", Metric: "y", Value: 100}}
	f, err = Calibrate(context.Background(), one, findFixture, CalibrateOptions{Fit: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Unidentifiable) != 2 {
		t.Errorf("a and b from one measurement of a + 2b: unidentifiable = %v, want both", f.Unidentifiable)
	}
	// y = a + b at x=1 far above the accepted range: both end at Max.
	big := []Measurement{{Experiment: "fixture-line", Variant: "v", Metric: "y", Value: 5000}}
	f, err = Calibrate(context.Background(), big, findFixture, CalibrateOptions{Fit: []string{"a"}, MaxEvals: 300})
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Params["a"]; p.Outside != "accepted" || p.Value != 1000 {
		t.Errorf("a = %g outside %q: the data want more than Max 1000", p.Value, p.Outside)
	}
	f, err = Calibrate(context.Background(), []Measurement{{Experiment: "fixture-line", Variant: "v", Metric: "y", Value: 130}},
		findFixture, CalibrateOptions{Fit: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Params["a"]; p.Outside != "plausible" || math.Abs(p.Value-100) > 0.5 || f.Note == "" {
		t.Errorf("a = %g (%q), note %q: want 100, outside its plausible 20-80, and a note that no dof is left", p.Value, p.Outside, f.Note)
	}
	// Without a degree of freedom there is no interval: the table must not
	// show the accepted range in its place.
	if row := f.FitTable().Rows[0]; row[3] != "none: no degree of freedom left" {
		t.Errorf("interval cell %q with no degree of freedom", row[3])
	}
}

func TestCalibrateBadInput(t *testing.T) {
	row := Measurement{Experiment: "fixture-line", Variant: "v", Metric: "y", Value: 1}
	for _, tc := range []struct {
		name string
		ms   []Measurement
		fit  []string
		want string
		sets []string // CalibrateOptions.Settings
	}{
		{"no fit", []Measurement{row}, nil, "no parameter to fit", nil},
		{"unknown key", []Measurement{row}, []string{"nope"}, "-fit nope", nil},
		{"not assume", []Measurement{row}, []string{"x"}, "provenance CODE", nil},
		{"row sets the fitted choice", []Measurement{{Experiment: "fixture-line", Variant: "v", Settings: "mode=1", Metric: "y"}}, []string{"mode"}, "row 1: settings mode=1: mode is fitted", nil},
		{"twice", []Measurement{row}, []string{"a", "a"}, "named twice", nil},
		{"unknown experiment", []Measurement{{Experiment: "nope", Variant: "v", Metric: "y"}}, []string{"a"}, `unknown experiment "nope"`, nil},
		{"unknown variant", []Measurement{{Experiment: "fixture-line", Variant: "w", Metric: "y"}}, []string{"a"}, `no variant "w"`, nil},
		{"unknown metric", []Measurement{{Experiment: "fixture-line", Variant: "v", Metric: "q"}}, []string{"a"}, `no metric "q"`, nil},
		{"negative", []Measurement{{Experiment: "fixture-line", Variant: "v", Metric: "y", Value: -5}}, []string{"a"}, "row 1: y = -5 ns is outside the metric's physical range [0, +Inf]", nil},
		{"bad setting", []Measurement{{Experiment: "fixture-line", Variant: "v", Settings: "x=1000", Metric: "y"}}, []string{"a"}, "x: value 1000 out of range", nil},
		// A key set twice would leave one value unused; a fitted one
		// would show a value the fit replaced.
		{"row sets a key twice", []Measurement{{Experiment: "fixture-line", Variant: "v", Settings: "x=1;x=2", Metric: "y"}}, []string{"a"}, "row 1: settings x=1;x=2: x given twice", nil},
		{"row sets the fitted key", []Measurement{{Experiment: "fixture-line", Variant: "v", Settings: "a=1", Metric: "y"}}, []string{"a"}, "row 1: settings a=1: a is fitted", nil},
		{"settings twice", []Measurement{row}, []string{"a"}, "settings: x given twice", []string{"x=1", "x=2"}},
		{"settings fitted", []Measurement{row}, []string{"a"}, "settings: a is fitted", []string{"a=1"}},
	} {
		_, err := Calibrate(context.Background(), tc.ms, findFixture, CalibrateOptions{Fit: tc.fit, Settings: tc.sets})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

func TestMeasurementsCSV(t *testing.T) {
	ms := synth(1)
	var b bytes.Buffer
	if err := WriteMeasurements(&b, ms); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "experiment,variant,settings,metric,value\n") {
		t.Fatalf("header: %q", b.String()[:50])
	}
	back, err := ReadMeasurements(&b)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back) != fmt.Sprint(ms) {
		t.Errorf("round trip changed the rows:\n%v\n%v", back, ms)
	}
	if got := (Measurement{Settings: " a=1; ;b=2 "}).SettingList(); fmt.Sprint(got) != "[a=1 b=2]" {
		t.Errorf("SettingList = %q", got)
	}
	for _, tc := range []struct{ text, want string }{
		{"experiment,variant,metric,settings,value\n", "header"},
		{"experiment,variant,settings,metric,value\n", "no rows"},
		{"experiment,variant,settings,metric,value\ne,v,,m,abc\n", `line 2: value "abc"`},
		{"experiment,variant,settings,metric,value\ne,v,,m,NaN\n", "not a finite number"},
		{"experiment,variant,settings,metric,value\ne,,,m,1\n", "must not be empty"},
		{"experiment,variant,settings,metric,value\ne,v,x:1,m,1\n", `setting "x:1"`},
		{"experiment,variant,settings,metric,value\ne,v,m,1\n", "wrong number of fields"},
	} {
		_, err := ReadMeasurements(strings.NewReader(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestProfileRoundTripAndApply(t *testing.T) {
	ms := synth(2)
	f, err := Calibrate(context.Background(), ms, findFixture, CalibrateOptions{Fit: []string{"a", "b", "c"}, MaxEvals: 400})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "board.json")
	if err := NewProfile("board", ms, f).Save(path); err != nil {
		t.Fatal(err)
	}
	p, err := LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Measurements) != len(ms) || p.Code == "" || p.Name != "board" {
		t.Errorf("profile lost its record: %d measurements, code %q, name %q", len(p.Measurements), p.Code, p.Name)
	}
	e, err := p.Apply(lineFixture())
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Params.Get("a"); got != f.Params["a"].Value {
		t.Errorf("applied a = %g, want the fit's %g", got, f.Params["a"].Value)
	}
	if got := e.Params.Get("c"); got != 5 {
		t.Errorf("c is unidentifiable: Apply must keep its cited 5, got %g", got)
	}
	if got := p.Unpinned(e); !slices.Equal(got, []string{"c"}) {
		t.Errorf("Unpinned = %q, want [c]: the one fitted parameter Apply left at its cited value", got)
	}
	other := platforms.Experiment{Name: "other", Params: platforms.Params{{Key: "a", Value: 1, Min: 0, Max: 10}}}
	if _, err := p.Apply(other); err == nil || !strings.Contains(err.Error(), "parameter a") {
		t.Errorf("a fitted value out of another experiment's range must be an error naming it, got %v", err)
	}
	elsewhere := platforms.Experiment{Name: "elsewhere", Params: platforms.Params{{Key: "z", Value: 1, Min: 0, Max: 10}}}
	if _, err := p.Apply(elsewhere); err == nil || !strings.Contains(err.Error(), "profile board sets nothing of experiment elsewhere") {
		t.Errorf("a profile with no parameter of the experiment must be an error, got %v", err)
	}
	if _, err := LoadProfile(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing profile loaded")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := WriteFileAtomic(bad, []byte(`{"name":"x","fit":{"keys":["a"],"params":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProfile(bad); err == nil || !strings.Contains(err.Error(), "parameter a listed but not given") {
		t.Errorf("LoadProfile of a broken file: %v", err)
	}
}

func ExampleProfile_Unpinned() {
	p := &Profile{Name: "myboard", Fit: &Fit{Keys: []string{"slowdown", "noise"}, Params: map[string]FitParam{
		"slowdown": {Key: "slowdown", Value: 2.2, Identifiable: true},
		"noise":    {Key: "noise", Value: 0.9}, // the measurements did not pin it
	}}}
	e, err := p.Apply(fixture())
	if err != nil {
		panic(err)
	}
	fmt.Println("slowdown", e.Params.Get("slowdown"), "noise", e.Params.Get("noise"), "kept:", p.Unpinned(e))
	// Output: slowdown 2.2 noise 0.1 kept: [noise]
}

func ExampleReadMeasurements() {
	csv := "experiment,variant,settings,metric,value\n" +
		"rk3399-pingpong,llsc,cpu_a=4;cpu_b=5,one_way_ns,61.75\n"
	ms, err := ReadMeasurements(strings.NewReader(csv))
	if err != nil {
		panic(err)
	}
	fmt.Println(ms[0].Experiment, ms[0].SettingList(), ms[0].Value)
	// Output: rk3399-pingpong [cpu_a=4 cpu_b=5] 61.75
}

// TestCalibrateIntervalsFromTheLinearizedModel pins the 95% intervals to
// their formula, computed here independently for y = a + b*x (linear, so
// the central differences are exact): J_i = (1, x_i) / m_i, s² = SSR/(n-2),
// half-width t(0.975, n-2) * sqrt(s² (JᵀJ)⁻¹_jj) with t(0.975, 6) =
// 2.446912. The recovery test only asks that the truth fall inside, which a
// wrong number of degrees of freedom or a wrong s² still satisfies.
func TestCalibrateIntervalsFromTheLinearizedModel(t *testing.T) {
	ms := synth(1)
	f, err := Calibrate(context.Background(), ms, findFixture, CalibrateOptions{Fit: []string{"a", "b"}, MaxEvals: 400})
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.Params["a"].Value, f.Params["b"].Value
	var ssr, saa, sab, sbb float64
	for _, m := range ms {
		x, _ := strconv.ParseFloat(strings.TrimPrefix(m.Settings, "x="), 64)
		r := (a + b*x - m.Value) / m.Value
		ssr += r * r
		ja, jb := 1/m.Value, x/m.Value
		saa, sab, sbb = saa+ja*ja, sab+ja*jb, sbb+jb*jb
	}
	det := saa*sbb - sab*sab
	s2 := ssr / 6
	const t6 = 2.446912 // Student t, 97.5% quantile, 6 degrees of freedom
	if f.DOF != 6 || math.Abs(f.SSR-ssr) > 1e-12 {
		t.Fatalf("dof %d, SSR %g; want 6 and %g", f.DOF, f.SSR, ssr)
	}
	for key, v := range map[string]float64{"a": sbb / det, "b": saa / det} {
		p := f.Params[key]
		half := t6 * math.Sqrt(s2*v)
		if math.Abs(p.Low-(p.Value-half)) > 1e-5*half || math.Abs(p.High-(p.Value+half)) > 1e-5*half {
			t.Errorf("%s = %g: interval [%g, %g], want %g ± %g", key, p.Value, p.Low, p.High, p.Value, half)
		}
	}
}

// TestCalibrateDegreesOfFreedom: DOF is the measurements minus the
// identifiable parameters, so two parameters that trade off (z = a + b)
// use up none of them; a parameter that moves nothing is named for that,
// not as a trade-off.
func TestCalibrateDegreesOfFreedom(t *testing.T) {
	ms := []Measurement{{Experiment: "fixture-line", Variant: "v", Metric: "z", Value: 70},
		{Experiment: "fixture-line", Variant: "v", Settings: "x=3", Metric: "z", Value: 71}}
	f, err := Calibrate(context.Background(), ms, findFixture, CalibrateOptions{Fit: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if f.DOF != 2 || f.Note != "" {
		t.Errorf("a and b trade off: dof %d (note %q), want 2 measurements - 0 identifiable parameters", f.DOF, f.Note)
	}
	f, err = Calibrate(context.Background(), synth(1), findFixture, CalibrateOptions{Fit: []string{"a", "b", "c"}, MaxEvals: 400})
	if err != nil {
		t.Fatal(err)
	}
	if why := f.Unidentifiable["c"]; !strings.HasPrefix(why, "no measurement changes") {
		t.Errorf("c moves no measurement; reason %q", why)
	}
}

// TestRelResidual: the residual is relative to the measurement's
// magnitude, so its sign is the model's side of the measurement even for a
// negative measured value; a measured zero gives the model's value.
func TestRelResidual(t *testing.T) {
	for _, tc := range []struct{ model, measured, want float64 }{
		{110, 100, 0.1}, {90, 100, -0.1}, {-12, -10, -0.2}, {-8, -10, 0.2}, {5, 0, 5}, {-3, 0, -3}, {0, 0, 0},
	} {
		if got := relResidual(tc.model, tc.measured); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("relResidual(model %g, measured %g) = %g, want %g", tc.model, tc.measured, got, tc.want)
		}
	}
}

// TestCalibrateIntegerIntervalWidened: the interval of an Integer
// parameter is the continuous one widened outwards to whole numbers. With
// measurements of n = 22.2 the continuous interval is 22 ± 0.37 (all
// residuals equal: se = 0.2/√3, t(0.975, 3) = 3.182); rounding it would
// give [22, 22], an interval that excludes the best continuous fit.
func TestCalibrateIntegerIntervalWidened(t *testing.T) {
	var seen []float64
	find := func(string) (platforms.Experiment, error) { return intFixture(&seen), nil }
	f := fitInt(t, find, 22.2)
	if p := f.Params["n"]; p.Value != 22 || p.Low != 21 || p.High != 23 {
		t.Errorf("n = %g [%g, %g], want 22 [21, 23]", p.Value, p.Low, p.High)
	}
}

// TestCalibrateOutside: where the fitted value sits against its cited
// ranges: within 1% of the plausible width (0.6 for a) of the accepted
// range's ends is "accepted" (the data want it further), outside the
// plausible range on either side "plausible", inside it "".
func TestCalibrateOutside(t *testing.T) {
	for _, tc := range []struct {
		y, a    float64 // y = a + 30 at x = 1
		outside string
	}{
		{80, 50, ""}, {130, 100, "plausible"}, {40, 10, "plausible"}, {1029.7, 999.7, "accepted"}, {30.3, 0.3, "accepted"},
	} {
		f, err := Calibrate(context.Background(), []Measurement{{Experiment: "fixture-line", Variant: "v", Metric: "y", Value: tc.y}},
			findFixture, CalibrateOptions{Fit: []string{"a"}, MaxEvals: 300})
		if err != nil {
			t.Fatal(err)
		}
		if p := f.Params["a"]; math.Abs(p.Value-tc.a) > 0.05 || p.Outside != tc.outside {
			t.Errorf("y = %g: a = %g outside %q, want %g outside %q", tc.y, p.Value, p.Outside, tc.a, tc.outside)
		}
	}
}

// TestCalibrateClipsIntervalsToTheAcceptedRange: measurements that
// disagree wildly (y = 40 and y = 1000 at one x) leave one degree of
// freedom and a huge standard error: the linearized interval runs below
// a's accepted 0, and the fit bounds it there and says so.
func TestCalibrateClipsIntervalsToTheAcceptedRange(t *testing.T) {
	ms := []Measurement{{Experiment: "fixture-line", Variant: "v", Metric: "y", Value: 40}, {Experiment: "fixture-line", Variant: "v", Metric: "y", Value: 1000}}
	f, err := Calibrate(context.Background(), ms, findFixture, CalibrateOptions{Fit: []string{"a"}, MaxEvals: 300})
	if err != nil {
		t.Fatal(err)
	}
	p := f.Params["a"]
	if !p.Identifiable || !p.Clipped || p.Low != p.Min || p.High > p.Max || p.High <= p.Value {
		t.Errorf("a = %g [%g, %g] clipped %v, want the interval bounded below by the accepted %g", p.Value, p.Low, p.High, p.Clipped, p.Min)
	}
	if tab := f.FitTable(); !strings.Contains(tab.Rows[0][6], "the data hardly pin it") {
		t.Errorf("note %q does not say the interval was clipped", tab.Rows[0][6])
	}
}

// TestCalibrateNarrowIntegerParameter: the Jacobian's step for an Integer
// parameter is at least one whole unit, also when a tenth of its plausible
// width (here 20-24) rounds to 0: a zero step would divide by zero and
// leave no interval.
func TestCalibrateNarrowIntegerParameter(t *testing.T) {
	var seen []float64
	find := func(string) (platforms.Experiment, error) {
		e := intFixture(&seen)
		e.Params[0].Value, e.Params[0].Low, e.Params[0].High = 22, 20, 24
		return e, nil
	}
	f := fitInt(t, find, 22.2)
	if p := f.Params["n"]; !p.Identifiable || p.Value != 22 || p.Low != 21 || p.High != 23 {
		t.Errorf("n = %g [%g, %g] identifiable %v, want 22 [21, 23]", p.Value, p.Low, p.High, p.Identifiable)
	}
}

// TestResidualTableWorstFirst: the residual table lists the measurements
// by the size of their relative residual, largest first, with its sign.
func TestResidualTableWorstFirst(t *testing.T) {
	f := &Fit{Residuals: []Residual{
		{Measurement: Measurement{Experiment: "e", Variant: "a", Metric: "m", Value: 100}, Model: 101, Rel: 0.01},
		{Measurement: Measurement{Experiment: "e", Variant: "b", Metric: "m", Value: 100}, Model: 70, Rel: -0.3},
		{Measurement: Measurement{Experiment: "e", Variant: "c", Metric: "m", Value: 100}, Model: 110, Rel: 0.1},
		{Measurement: Measurement{Experiment: "e", Variant: "z", Metric: "m", Value: 0}, Model: -0.05, Rel: -0.05},
	}}
	var got []string
	for _, r := range f.ResidualTable().Rows {
		got = append(got, r[1]+" "+r[5]+" "+r[6])
	}
	// A measured 0 has no relative residual: the difference is shown as is.
	if want := []string{"b 70 -30.0%", "c 110 +10.0%", "z -0.05 -0.05 (measured 0)", "a 101 +1.0%"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}

// In a report, a fit notes itself for the stamp in one row: its first run
// at the fitted values, with all the runs of its evaluations (none stored).
func TestCalibrateNotesItsFits(t *testing.T) {
	log := filepath.Join(t.TempDir(), "session.jsonl")
	t.Setenv(nbexport.SessionEnv, log)
	var seen []float64
	f := fitInt(t, func(string) (platforms.Experiment, error) { return intFixture(&seen), nil }, 22)
	recs, err := nbexport.ReadSession(log)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records noted (%v), want one for the fit", len(recs), err)
	}
	r := recs[0]
	want := fmt.Sprintf("fit of n: the first of 4 settings at the fitted values; %d evaluations, not stored", f.Evaluations)
	if r.Experiment != "fixture-int" || r.Params["n"] != f.Params["n"].Value || r.Params["x"] != 1 || r.Runs != 4*f.Evaluations || r.Note != want || r.Cached {
		t.Errorf("record %+v: want fixture-int at n = %g, x = 1, %d runs, note %q", r, f.Params["n"].Value, 4*f.Evaluations, want)
	}
}
