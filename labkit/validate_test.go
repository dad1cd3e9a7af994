package labkit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"synclab/labkit/nbexport"
	"synclab/platforms"
)

func TestJudge(t *testing.T) {
	meas := Check{Kind: Measured, Published: 100, Tolerance: Tolerance{Rel: 0.25, Abs: 1}}
	bound := Check{Kind: Bound, Published: 215}
	for _, tc := range []struct {
		c     Check
		model float64
		pass  bool
		dev   float64
	}{
		{meas, 100, true, 0},
		{meas, 126, true, 0.26}, // within 25 + 1
		{meas, 74, true, -0.26}, // within 25 + 1, below
		{meas, 126.5, false, 0.265},
		{meas, 73.5, false, -0.265},
		{bound, 215, false, 0}, // the vendor's tests assert value < limit
		{bound, 214.99, true, -0.01 / 215},
		{bound, 10, true, -205.0 / 215},
		{bound, 215.01, false, 0.01 / 215},
	} {
		v := tc.c.Judge(tc.model)
		if v.Pass != tc.pass || math.Abs(v.Deviation-tc.dev) > 1e-12 || v.Model != tc.model {
			t.Errorf("%s published %g model %g: pass %v deviation %g, want %v %g", tc.c.Kind, tc.c.Published, tc.model, v.Pass, v.Deviation, tc.pass, tc.dev)
		}
		if want := map[bool]string{true: "pass", false: "FAIL"}[tc.pass]; v.Verdict != want {
			t.Errorf("verdict %q, want %q", v.Verdict, want)
		}
	}
}

// TestChecksAreComplete: every check carries what the issue asks for, so
// that a reader can judge it without the code.
func TestChecksAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Checks() {
		if c.ID == "" || seen[c.ID] {
			t.Errorf("check id %q empty or repeated", c.ID)
		}
		seen[c.ID] = true
		for field, v := range map[string]string{"quantity": c.Quantity, "unit": c.Unit, "source title": c.Source.Title,
			"source where": c.Source.Where, "source date": c.Source.Date, "tolerance reason": c.Tolerance.Reason,
			"if_fails": c.IfFails, "experiment": c.Experiment, "variant": c.Variant, "metric": c.Metric} {
			if strings.TrimSpace(v) == "" {
				t.Errorf("check %s: %s is empty", c.ID, field)
			}
		}
		if c.Independent == (len(c.SetFrom) > 0) {
			t.Errorf("check %s: independent %v with parameters set from its source %v", c.ID, c.Independent, c.SetFrom)
		}
		switch c.Kind {
		case Bound:
			if c.Tolerance.Width(c.Published) != 0 {
				t.Errorf("check %s: a bound takes no tolerance", c.ID)
			}
		case Measured, Derived:
			if c.Tolerance.Width(c.Published) <= 0 {
				t.Errorf("check %s: a two-sided check needs a tolerance", c.ID)
			}
		default:
			t.Errorf("check %s: kind %q", c.ID, c.Kind)
		}
		if !(c.Published > 0) {
			t.Errorf("check %s: published %g", c.ID, c.Published)
		}
	}
	if len(seen) < 10 {
		t.Errorf("%d checks", len(seen))
	}
}

func TestValidateRunsEachCheck(t *testing.T) {
	failing := lineFixture()
	failing.Name = "fixture-broken"
	failing.Run = func(context.Context, platforms.RunSpec) (platforms.RunResult, error) {
		return platforms.RunResult{}, errors.New("model broke")
	}
	find := func(name string) (platforms.Experiment, error) {
		if name == failing.Name {
			return failing, nil
		}
		return findFixture(name)
	}
	y := Check{ID: "y", Kind: Measured, Published: 100, Tolerance: Tolerance{Rel: 0.1}, Independent: true,
		Experiment: "fixture-line", Variant: "v", Metric: "y", Settings: []string{"x=2"}} // 40 + 30*2
	rel := y
	rel.ID, rel.Metric, rel.Published = "rel", "y", 50
	twoVariants := lineFixture()
	twoVariants.Name = "fixture-two"
	twoVariants.Variants = []platforms.Variant{{Name: "v"}, {Name: "w"}}
	twoVariants.Run = func(_ context.Context, s platforms.RunSpec) (platforms.RunResult, error) {
		y := 100.0
		if s.Variant == "w" {
			y = 40
		}
		return platforms.RunResult{Metrics: map[string]float64{"y": y, "z": 0}}, nil
	}
	find2 := func(name string) (platforms.Experiment, error) {
		if name == twoVariants.Name {
			return twoVariants, nil
		}
		return find(name)
	}
	rel.Experiment, rel.Variant, rel.Baseline, rel.Settings = "fixture-two", "w", "v", nil // 100*(100-40)/100
	broken := y
	broken.ID, broken.Experiment = "broken", failing.Name
	log := filepath.Join(t.TempDir(), "session.jsonl")
	t.Setenv(nbexport.SessionEnv, log) // as in a report: the runs are noted for its stamp
	vs, err := Validate(context.Background(), []Check{y, rel, broken}, find2, RunOptions{NoCache: true, Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := nbexport.ReadSession(log)
	var noted []string
	for _, r := range recs {
		noted = append(noted, r.Experiment)
	}
	if err != nil || !slices.Contains(noted, "fixture-line") || !slices.Contains(noted, "fixture-two") {
		t.Errorf("the checks' runs noted for the report's stamp: %v (%v); want fixture-line and fixture-two", noted, err)
	}
	got := fmt.Sprintf("%s %g %s | %s %g %s | %s %s", vs[0].ID, vs[0].Model, vs[0].Verdict, vs[1].ID, vs[1].Model, vs[1].Verdict, vs[2].ID, vs[2].Verdict)
	if want := "y 100 pass | rel 60 FAIL | broken ERROR"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if vs[2].Pass || !strings.Contains(vs[2].Err, "model broke") {
		t.Errorf("a check whose run fails must fail with the error: %+v", vs[2])
	}
	tab := ValidationTable(vs)
	if len(tab.Rows) != 3 || tab.Rows[1][5] != "± 5" || tab.Rows[1][3] != "50" || tab.Rows[0][6] != "yes" || tab.Rows[0][7] != "pass" {
		t.Errorf("table rows: %q", tab.Rows)
	}
	bad := y
	bad.Variant = "nope"
	if _, err := Validate(context.Background(), []Check{bad}, find, RunOptions{NoCache: true, Progress: NoProgress}); err == nil || !strings.Contains(err.Error(), "check y") {
		t.Errorf("a check naming an unknown variant is a defect to report, got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Validate(ctx, []Check{y}, find, RunOptions{NoCache: true, Progress: NoProgress}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func ExampleCheck_Judge() {
	c := Check{ID: "c2c", Kind: Measured, Published: 89.6, Unit: "ns", Tolerance: Tolerance{Rel: 0.25}}
	v := c.Judge(100)
	fmt.Printf("%s: model %g vs %g %s within ±%g: %s\n", v.ID, v.Model, v.Published, v.Unit, v.Tolerance.Width(v.Published), v.Verdict)
	// Output: c2c: model 100 vs 89.6 ns within ±22.4: pass
}

// TestJudgeNegativePublished: a tolerance is a width, positive for a
// negative published value too (-100 ± 10% is -110..-90).
func TestJudgeNegativePublished(t *testing.T) {
	c := Check{Kind: Measured, Published: -100, Tolerance: Tolerance{Rel: 0.1, Abs: 1}}
	if w := c.Tolerance.Width(c.Published); w != 11 {
		t.Errorf("width %g, want 11", w)
	}
	for model, pass := range map[float64]bool{-100: true, -90: true, -111: true, -88.9: false, -111.1: false} {
		if v := c.Judge(model); v.Pass != pass {
			t.Errorf("published -100 ± 11, model %g: pass %v, want %v", model, v.Pass, pass)
		}
	}
}

// TestValidationTableColumns: a bound's tolerance column says it is a
// bound (not "± 0"), and a check that is not independent names the
// parameters set from its source.
func TestValidationTableColumns(t *testing.T) {
	bound := Check{ID: "b", Kind: Bound, Published: 215, Unit: "cycles", SetFrom: []string{"pair_cycles", "isr_cycles"}}
	meas := Check{ID: "m", Kind: Measured, Published: 80, Unit: "ns", Tolerance: Tolerance{Rel: 0.25}, Independent: true}
	pct := Check{ID: "p", Kind: Measured, Published: 35, Unit: "%", Tolerance: Tolerance{Abs: 10}, Independent: true}
	derived := Check{ID: "d", Kind: Derived, Published: 5000, Unit: "us", Tolerance: Tolerance{Rel: 0.1}, Independent: true}
	vs := []Verdict{bound.Judge(200), meas.Judge(120), pct.Judge(11), derived.Judge(5048)}
	tab := ValidationTable(vs)
	// The tolerance has the figure's unit; on a percentage it is in points.
	want := [][]string{
		{"b", "bound", "", "215 cycles", "200 cycles", "< bound", "no (set from it: pair_cycles, isr_cycles)", "pass", " (, )"},
		{"m", "measurement", "", "80 ns", "120 ns", "± 20 ns", "yes", "FAIL", " (, )"},
		{"p", "measurement", "", "35%", "11%", "± 10 points", "yes", "FAIL", " (, )"},
		{"d", "derived", "", "5,000 µs", "5,048 µs", "± 500 µs", "yes", "pass", " (, )"},
	}
	if fmt.Sprint(tab.Rows) != fmt.Sprint(want) {
		t.Errorf("rows\n%q\nwant\n%q", tab.Rows, want)
	}
	// "2 of 4 pass" alone would hide that no measurement is matched.
	if got, want := ValidationSummary(vs), "2 of 4 checks pass: 0 of 2 published measurements, 1 of 1 vendor limits, 1 of 1 values derived from code."; got != want {
		t.Errorf("ValidationSummary = %q, want %q", got, want)
	}
}

// HandOffText gives the range of the three core-to-core factors and names
// the one of the RK3399's A72 pair, from the verdicts it is given.
func TestHandOffText(t *testing.T) {
	var vs []Verdict
	for _, c := range Checks() {
		model := map[string]float64{"c2c-a72-cluster-rpi4": 200, "c2c-a72-pair-lx2160a": 200, "c2c-cross-cluster-lx2160a": 500}[c.ID]
		if model > 0 {
			vs = append(vs, c.Judge(model))
		}
	}
	got := HandOffText(vs)
	for _, want := range []string{"1.94-3.24x the published", "3.24x for the LX2160A's A72 pair, which maps to the RK3399's cpu4-5", "2.23x within the RPi 4", "1.94x across"} {
		if !strings.Contains(got, want) {
			t.Errorf("HandOffText = %q, want it to contain %q", got, want)
		}
	}
	if got := HandOffText(vs[:2]); got != "" {
		t.Errorf("HandOffText of two verdicts = %q, want \"\"", got)
	}
	if got := Quantity(35, "%"); got != "35%" {
		t.Errorf("Quantity(35, %%) = %q, want 35%%", got)
	}
}
