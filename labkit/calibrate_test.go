package labkit

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"synclab/platforms"
)

// lineFixture is an experiment whose metric is y = a + b*x (+ c*0: c moves
// nothing), and z = a + b (which cannot tell a from b).
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
			return platforms.RunResult{Metrics: map[string]float64{"y": a + b*s.Params["x"], "z": a + b}}, nil
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
}

func TestCalibrateBadInput(t *testing.T) {
	row := Measurement{Experiment: "fixture-line", Variant: "v", Metric: "y", Value: 1}
	for _, tc := range []struct {
		name string
		ms   []Measurement
		fit  []string
		want string
	}{
		{"no fit", []Measurement{row}, nil, "no parameter to fit"},
		{"unknown key", []Measurement{row}, []string{"nope"}, "-fit nope"},
		{"not assume", []Measurement{row}, []string{"x"}, "provenance CODE"},
		{"choices", []Measurement{row}, []string{"mode"}, "takes only the values"},
		{"twice", []Measurement{row}, []string{"a", "a"}, "named twice"},
		{"unknown experiment", []Measurement{{Experiment: "nope", Variant: "v", Metric: "y"}}, []string{"a"}, `unknown experiment "nope"`},
		{"unknown variant", []Measurement{{Experiment: "fixture-line", Variant: "w", Metric: "y"}}, []string{"a"}, `no variant "w"`},
		{"unknown metric", []Measurement{{Experiment: "fixture-line", Variant: "v", Metric: "q"}}, []string{"a"}, `no metric "q"`},
		{"bad setting", []Measurement{{Experiment: "fixture-line", Variant: "v", Settings: "x=1000", Metric: "y"}}, []string{"a"}, "x: value 1000 out of range"},
	} {
		_, err := Calibrate(context.Background(), tc.ms, findFixture, CalibrateOptions{Fit: tc.fit})
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
	other := platforms.Experiment{Name: "other", Params: platforms.Params{{Key: "a", Value: 1, Min: 0, Max: 10}}}
	if _, err := p.Apply(other); err == nil || !strings.Contains(err.Error(), "parameter a") {
		t.Errorf("a fitted value out of another experiment's range must be an error naming it, got %v", err)
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
