package labkit

import (
	"encoding/json"
	"reflect"
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

func TestWithValidation(t *testing.T) {
	tests := []struct {
		key     string
		value   float64
		wantErr []string // substrings; nil means success
	}{
		{"work", 500, nil},
		{"hz", 1000, nil},
		{"work", 0, []string{"work", "out of range", "[1, 1e+06]"}},
		{"hz", 300, []string{"hz", "choose one of", "100 250 1000"}},
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
	for _, bad := range []string{"work", "work=abc", "zzz=1"} {
		if _, err := fixture().WithSettings(bad); err == nil {
			t.Errorf("WithSettings(%q) accepted", bad)
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
	if pts := e.Points(); !reflect.DeepEqual(pts, want) || e.numPoints() != len(want) {
		t.Fatalf("three axes: Points = %v", pts)
	}
	if pts := fixture().Points(); len(pts) != 1 || pts[0] == nil || len(pts[0]) != 0 {
		t.Fatalf("no sweep: Points = %#v, want one empty point", pts)
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

func TestCatalog(t *testing.T) {
	e, run, err := Lookup(fixtureName)
	if err != nil || run == nil || e.Name != fixtureName {
		t.Fatalf("Lookup: %v", err)
	}
	e.Params[0].Value = -5 // a copy: must not change the catalog
	again, _, _ := Lookup(fixtureName)
	if again.Params[0].Value != 100 {
		t.Fatal("Lookup returned a shared copy")
	}
	if _, _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), fixtureName) {
		t.Fatalf("Lookup(nope) error should list known names: %v", err)
	}
	found := false
	for _, c := range Catalog() {
		found = found || c.Name == fixtureName
	}
	if !found {
		t.Fatal("fixture missing from Catalog")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate Register did not panic")
		}
	}()
	Register(fixture(), fixtureRun)
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
