package platforms

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// fixture is a small experiment definition (no run function: these tests
// exercise the definition only).
func fixture() Experiment {
	return Experiment{
		Name:        "fixture-queue",
		Description: "test fixture: a noisy queue served by a fast or a slow server",
		Platform:    "testbed",
		Params: Params{
			{Key: "work", Value: 100, Unit: "cycles", Prov: CODE, Source: "fixture", Min: 1, Max: 1e6},
			{Key: "noise", Value: 0.1, Unit: "", Prov: ASSUME, Source: "guess", Min: 0, Max: 1, Low: 0.05, High: 0.3},
			{Key: "slowdown", Value: 1.5, Unit: "x", Prov: ASSUME, Source: "guess", Min: 0.5, Max: 4, Low: 0.8, High: 3},
			{Key: "hz", Value: 100, Unit: "Hz", Prov: CODE, Source: "fixture", Choices: []float64{100, 250, 1000}},
		},
		Variants: []Variant{{Name: "fast", Doc: "fast server"}, {Name: "slow", Doc: "slow server"}},
		Repeats:  5,
		Seed:     42,
		Metrics: []Metric{
			{Name: "time_ms", Unit: "ms", Better: Lower, Doc: "total time"},
			{Name: "ops_s", Unit: "ops/s", Better: Higher, Doc: "throughput"},
		},
		Reference: []Reference{
			{Article: "fixture-article", Variant: "fast", Metric: "time_ms", Value: 0.02, Unit: "ms", Quote: "fast 0.02 ms"},
			{Article: "fixture-article", Variant: "slow", Metric: "time_ms", Value: 0.03, Unit: "ms", Quote: "slow 0.03 ms"},
			{Article: "fixture-article", Variant: "fast", Metric: "ops_s", Value: 5000, Unit: "ops/s", Quote: "fast 5000"},
			{Article: "fixture-article", Variant: "slow", Metric: "ops_s", Value: 9000, Unit: "ops/s", Quote: "slow 9000"},
		},
	}
}

// sweptFixture is fixture with a sweep over work.
func sweptFixture(t *testing.T) Experiment {
	t.Helper()
	e, err := fixture().WithSweep("work", 50, 100, 200)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestWithValidation(t *testing.T) {
	tests := []struct {
		key     string
		value   float64
		wantErr []string // substrings; nil means success
	}{
		{"work", 500, nil},
		{"hz", 1000, nil},
		{"work", 0, []string{"work", "out of range", "[1, 1000000]"}},
		{"work", 2.5e7, []string{"value 25000000 out of range"}},
		{"hz", 300, []string{"hz", "choose one of", "100, 250, 1000"}},
		{"nosuch", 1, []string{"nosuch", "known:", "hz, noise, slowdown, work"}},
	}
	for _, tc := range tests {
		e, err := fixture().With(tc.key, tc.value)
		if tc.wantErr == nil {
			if err != nil || e.Params.Get(tc.key) != tc.value {
				t.Errorf("With(%s, %g): err %v", tc.key, tc.value, err)
			}
			continue
		}
		if err == nil || !containsAll(err.Error(), tc.wantErr...) {
			t.Errorf("With(%s, %g): err %v, want it to mention %q", tc.key, tc.value, err, tc.wantErr)
		}
	}
}

func TestWithSettingsAndVariants(t *testing.T) {
	e, err := fixture().WithSettings("work=250", " noise = 0.2")
	if err != nil || e.Params.Get("work") != 250 || e.Params.Get("noise") != 0.2 {
		t.Fatalf("WithSettings: %v", err)
	}
	for bad, want := range map[string]string{"work": "want key=value", "work=abc": "is not a number", "zzz=1": "zzz", "=5": "no parameter name",
		"work=1e400": "beyond what a float64 holds"} {
		if _, err := fixture().WithSettings(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("WithSettings(%q): %v, want an error saying %q", bad, err, want)
		}
	}
	// A number followed by anything else is not a number (fmt.Sscan read
	// "5abc" as 5 and "0,2" as 0).
	for _, bad := range []struct{ setting, key, text string }{
		{"work=5abc", "work", "5abc"}, {"noise=0,2", "noise", "0,2"}, {"work=5 6", "work", "5 6"}} {
		if _, err := fixture().WithSettings(bad.setting); err == nil || !containsAll(err.Error(), bad.key, bad.text) {
			t.Errorf("WithSettings(%q): err %v, want it to name %s and %q", bad.setting, err, bad.key, bad.text)
		}
	}
	if _, err := fixture().WithVariants("medium"); err == nil || !containsAll(err.Error(), "medium", "fast, slow") {
		t.Errorf("WithVariants: %v", err)
	}
	v, _ := fixture().WithVariants("slow")
	if !reflect.DeepEqual(v.VariantNames(), []string{"slow"}) {
		t.Errorf("WithVariants(slow) = %v", v.VariantNames())
	}
	s, _ := fixture().WithSweep("work", 10, 20)
	w, _ := s.With("work", 30)
	if len(w.Sweep) != 0 || len(w.Points()) != 1 {
		t.Errorf("setting a swept parameter should drop its axis: %+v", w.Sweep)
	}
	if _, err := fixture().WithSweep("hz", 100, 333); err == nil {
		t.Error("WithSweep accepted a value outside the choices")
	}
}

func TestPointsGrid(t *testing.T) {
	e, _ := fixture().WithSweep("work", 1, 2)
	e, _ = e.WithSweep("hz", 100, 250, 1000)
	pts := e.Points()
	if len(pts) != 6 || pts[0]["work"] != 1 || pts[0]["hz"] != 100 || pts[1]["hz"] != 250 || pts[5]["work"] != 2 {
		t.Fatalf("Points = %v", pts)
	}
	if p := e.PointParams(5); p["work"] != 2 || p["hz"] != 1000 || p["noise"] != 0.1 {
		t.Fatalf("PointParams(5) = %v", p)
	}
	e, _ = e.WithSweep("noise", 0, 0.1)
	want := []map[string]float64{}
	for _, w := range []float64{1, 2} {
		for _, hz := range []float64{100, 250, 1000} {
			for _, n := range []float64{0, 0.1} {
				want = append(want, map[string]float64{"work": w, "hz": hz, "noise": n})
			}
		}
	}
	if pts := e.Points(); !reflect.DeepEqual(pts, want) || e.NumPoints() != len(want) {
		t.Fatalf("three axes: Points = %v", pts)
	}
	if pts := fixture().Points(); len(pts) != 1 || pts[0] == nil || len(pts[0]) != 0 {
		t.Fatalf("no sweep: Points = %#v, want one empty point", pts)
	}
}

// TestCheckPoints: Check sees every parameter's value at each sweep point,
// and the first point it refuses is named in the error, in axis order; a
// definition without Check, or read back from JSON (which drops it),
// passes.
func TestCheckPoints(t *testing.T) {
	e, _ := fixture().WithSweep("work", 50, 100, 200)
	e, _ = e.WithSweep("hz", 100, 250)
	var seen []map[string]float64
	e.Check = func(v map[string]float64) error {
		seen = append(seen, v)
		if v["work"]*v["hz"] > 20000 {
			return fmt.Errorf("work = %g and hz = %g: too much", v["work"], v["hz"])
		}
		return nil
	}
	err := e.CheckPoints()
	want := "experiment fixture-queue: sweep point work=100 hz=250: work = 100 and hz = 250: too much"
	if err == nil || err.Error() != want {
		t.Fatalf("CheckPoints: %v, want %q", err, want)
	}
	if len(seen) != 4 || seen[0]["noise"] != 0.1 || seen[0]["work"] != 50 || seen[3]["hz"] != 250 {
		t.Fatalf("Check saw %v, want the first four points with every parameter", seen)
	}
	if e, _ = e.WithSweep("work", 50, 80); e.CheckPoints() != nil {
		t.Fatalf("CheckPoints refuses values Check accepts: %v", e.CheckPoints())
	}
	one, _ := fixture().With("work", 300)
	one.Check = e.Check
	if err := one.CheckPoints(); err == nil || err.Error() != "experiment fixture-queue: work = 300 and hz = 100: too much" {
		t.Fatalf("no sweep: CheckPoints = %v", err)
	}
	b, _ := json.Marshal(one)
	var back Experiment
	if err := json.Unmarshal(b, &back); err != nil || back.Check != nil || back.CheckPoints() != nil {
		t.Fatalf("read back: Check %v, CheckPoints %v (err %v), want none", back.Check != nil, back.CheckPoints(), err)
	}
}

func TestExperimentRoundTripAndHash(t *testing.T) {
	e := sweptFixture(t)
	b, err := msgpack.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m Experiment
	if err := msgpack.Unmarshal(b, &m); err != nil || !reflect.DeepEqual(m, e) {
		t.Fatalf("msgpack round trip: %v\n%+v\n%+v", err, m, e)
	}
	j, _ := json.Marshal(e)
	var js Experiment
	if err := json.Unmarshal(j, &js); err != nil || !reflect.DeepEqual(js, e) {
		t.Fatalf("JSON round trip: %v", err)
	}
	if m.Hash() != e.Hash() {
		t.Fatal("hash changed by a round trip")
	}
	e2, _ := e.With("noise", 0.2)
	e3 := e.Clone()
	e3.Description = "other prose"
	e3.Reference = nil
	if e2.Hash() == e.Hash() || e3.Hash() != e.Hash() {
		t.Fatal("hash must cover parameter values and ignore prose and references")
	}
}

func TestCloneIsDeep(t *testing.T) {
	e := sweptFixture(t)
	c := e.Clone()
	c.Sweep[0].Values[0] = -1
	c.Variants[0].Name = "changed"
	if e.Sweep[0].Values[0] != 50 || e.Variants[0].Name == "changed" {
		t.Fatal("Clone shares the sweep or the variants")
	}
	if f := fixture(); f.Sweep != nil || f.Clone().Sweep != nil {
		t.Fatalf("Clone of no sweep: %#v, want nil", f.Clone().Sweep)
	}
}

// Validate rejects each inconsistent definition with an error naming what
// is wrong, and accepts the fixture: every rule of its contract, one broken
// at a time. A definition with zero repeats would run nothing and report
// empty results; a sweep value given twice would show two points under one
// label in every table.
func TestValidateRejectsEachInconsistency(t *testing.T) {
	if err := fixture().Validate(); err != nil {
		t.Fatalf("the fixture: %v", err)
	}
	if err := sweptFixture(t).Validate(); err != nil {
		t.Fatalf("the swept fixture: %v", err)
	}
	for _, tc := range []struct {
		name  string
		spoil func(e *Experiment)
		want  []string
	}{
		{"no name", func(e *Experiment) { e.Name = "" }, []string{"without a name"}},
		{"no variant", func(e *Experiment) { e.Variants = nil }, []string{"fixture-queue", "at least one variant"}},
		{"no metric", func(e *Experiment) { e.Metrics = nil }, []string{"fixture-queue", "one metric"}},
		{"zero repeats", func(e *Experiment) { e.Repeats = 0 }, []string{"fixture-queue", "repeats 0", "at least 1"}},
		{"variant twice", func(e *Experiment) { e.Variants[1].Name = "fast" }, []string{"variant name \"fast\""}},
		{"metric twice", func(e *Experiment) { e.Metrics[1].Name = "time_ms" }, []string{"metric name \"time_ms\""}},
		{"parameter twice", func(e *Experiment) { e.Params[1].Key = "work" }, []string{"parameter name \"work\""}},
		{"default out of range", func(e *Experiment) { e.Params[0].Value = 0 }, []string{"default", "work", "out of range"}},
		{"sweep unknown", func(e *Experiment) { e.Sweep = []Axis{{Param: "nosuch", Values: []float64{1}}} }, []string{"nosuch", "known: hz, noise, slowdown, work"}},
		{"sweep empty", func(e *Experiment) { e.Sweep = []Axis{{Param: "work"}} }, []string{"sweep axis work", "empty"}},
		{"sweep twice", func(e *Experiment) {
			e.Sweep = []Axis{{Param: "work", Values: []float64{1}}, {Param: "work", Values: []float64{2}}}
		}, []string{"sweep axis work", "repeated"}},
		{"sweep value refused", func(e *Experiment) { e.Sweep = []Axis{{Param: "hz", Values: []float64{100, 333}}} }, []string{"sweep", "hz", "333"}},
		{"sweep value twice", func(e *Experiment) { e.Sweep = []Axis{{Param: "work", Values: []float64{50, 100, 50}}} }, []string{"sweep of work", "value 50 given twice"}},
		{"no platform", func(e *Experiment) { e.Platform = "" }, []string{"fixture-queue", "no platform"}},
		// Every number says where it comes from, and -set can name it.
		{"no provenance", func(e *Experiment) { e.Params[0].Prov = "" }, []string{"parameter work", `provenance ""`}},
		{"unknown provenance", func(e *Experiment) { e.Params[0].Prov = "GUESS" }, []string{"parameter work", `provenance "GUESS"`}},
		{"no source", func(e *Experiment) { e.Params[1].Source = " " }, []string{"parameter noise", "no source"}},
		{"key with a space", func(e *Experiment) { e.Params[0].Key = "work load" }, []string{`parameter "work load"`, "letters, digits and _"}},
		{"key with =", func(e *Experiment) { e.Params[0].Key = "a=b" }, []string{`parameter "a=b"`}},
		{"empty accepted range", func(e *Experiment) { e.Params[0].Min, e.Params[0].Max = 10, 1 }, []string{"parameter work", "accepted range [10, 1] is empty"}},
		{"plausible above accepted", func(e *Experiment) { e.Params[2].High = 5 }, []string{"parameter slowdown", "plausible range 0.8..5", "accepted 0.5..4"}},
		{"plausible range reversed", func(e *Experiment) { e.Params[1].Low, e.Params[1].High = 0.3, 0.05 }, []string{"parameter noise", "plausible range"}},
		{"ASSUME without plausible range", func(e *Experiment) { e.Params[1].Low, e.Params[1].High = 0, 0 }, []string{"parameter noise", "plausible range 0..0"}},
	} {
		e := fixture()
		tc.spoil(&e)
		err := e.Validate()
		if err == nil || !containsAll(err.Error(), tc.want...) {
			t.Errorf("%s: Validate() = %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
}

// WithVariants keeps the experiment's order and refuses a variant named
// twice (it would run the variant twice under one name), naming it.
func TestWithVariantsOrderAndRepeat(t *testing.T) {
	e, err := fixture().WithVariants("slow", "fast")
	if err != nil || len(e.Variants) != 2 || e.Variants[0].Name != "fast" || e.Variants[1].Name != "slow" {
		t.Fatalf("WithVariants(slow, fast) = %v, %v; want fast, slow in the experiment's order", e.VariantNames(), err)
	}
	if _, err := fixture().WithVariants("fast", "slow", "fast"); err == nil || !containsAll(err.Error(), "fixture-queue", "variant fast named twice") {
		t.Errorf("WithVariants(fast, slow, fast): err %v, want one naming fast twice", err)
	}
}

// -0 and 0 are one setting, set or swept: one hash, so one store entry and
// shards that merge.
func TestNegativeZeroIsZero(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, c := range []struct {
		name string
		set  func(Experiment, float64) (Experiment, error)
	}{
		{"With", func(e Experiment, v float64) (Experiment, error) { return e.With("noise", v) }},
		{"WithSweep", func(e Experiment, v float64) (Experiment, error) { return e.WithSweep("noise", v, 0.5) }},
		{"WithSettings", func(e Experiment, v float64) (Experiment, error) {
			return e.WithSettings("noise=" + strconv.FormatFloat(v, 'g', -1, 64))
		}},
	} {
		a, errA := c.set(fixture(), negZero)
		b, errB := c.set(fixture(), 0)
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v, %v", c.name, errA, errB)
		}
		if a.Hash() != b.Hash() || len(a.Diff(b)) > 0 {
			t.Errorf("%s: -0 and 0 differ: hashes %s and %s, diff %v", c.name, a.Hash(), b.Hash(), a.Diff(b))
		}
	}
}
