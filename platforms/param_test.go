package platforms

import (
	"strconv"
	"strings"
	"testing"
)

func testParams() Params {
	return Params{
		{Key: "a", Value: 1, Min: 0, Max: 10},
		{Key: "b", Value: 2, Choices: []float64{2, 4}},
		{Key: "c", Value: 3, Min: 0, Max: 5},
		{Key: "n", Value: 4, Min: 0, Max: 100, Integer: true},
	}
}

func TestSetFrom(t *testing.T) {
	ps := testParams()
	// Missing keys keep their values; keys ps lacks are ignored.
	if err := ps.SetFrom(map[string]float64{"a": 7, "b": 4, "other": -1}, false); err != nil {
		t.Fatal(err)
	}
	if got := ps.Values(); got["a"] != 7 || got["b"] != 4 || got["c"] != 3 || got["n"] != 4 || len(got) != 4 {
		t.Errorf("values after SetFrom = %v, want a 7, b 4, c 3, n 4", got)
	}

	for _, tc := range []struct {
		values     map[string]float64
		requireAll bool
		want       string // a substring of the error; its end where it ends in "$"
	}{
		{map[string]float64{"a": 11}, false, "parameter a: value 11 out of range [0, 10]$"},
		{map[string]float64{"b": 3}, false, "parameter b: value 3 not allowed; choose one of 2, 4"},
		// The first bad parameter in ps's order is the one named.
		{map[string]float64{"c": -1, "a": 20}, false, "parameter a: value 20"},
		{map[string]float64{"a": 1, "b": 2}, true, "parameter c missing"},
		{map[string]float64{"a": 1, "b": 5}, true, "parameter b: value 5"},
		// A count takes whole numbers only, within its range too.
		{map[string]float64{"n": 2.5}, false, "parameter n: value 2.5 is not a whole number"},
		{map[string]float64{"n": 101}, false, "parameter n: value 101 out of range [0, 100]"},
	} {
		ps := testParams()
		err := ps.SetFrom(tc.values, tc.requireAll)
		if want, ok := strings.CutSuffix(tc.want, "$"); ok && (err == nil || !strings.HasSuffix(err.Error(), want)) {
			t.Errorf("SetFrom(%v, %v) = %v, want an error ending in %q", tc.values, tc.requireAll, err, want)
		} else if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SetFrom(%v, %v) = %v, want an error containing %q", tc.values, tc.requireAll, err, tc.want)
		}
	}

	ps = testParams()
	if err := ps.SetFrom(map[string]float64{"a": 0, "b": 2, "c": 5, "n": 100}, true); err != nil {
		t.Errorf("SetFrom with every key: %v", err)
	}
}

// A coded parameter's error spells out what its numbers mean.
func TestCodedChoiceNamesItsCodes(t *testing.T) {
	p := Param{Key: "wait", Unit: "code", Doc: "wait policy: 0 wfe, 1 wfi", Choices: []float64{0, 1}}
	want := "parameter wait: value 2 not allowed; choose one of 0, 1 (wait policy: 0 wfe, 1 wfi)"
	if err := p.Check(2); err == nil || err.Error() != want {
		t.Errorf("Check(2) = %v, want %q", err, want)
	}
}

// FormatValue writes values as -set takes them, exactly.
func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{1e6: "1000000", 0.25: "0.25", -3: "-3", 0: "0", 1e-9: "1e-09", 2e15: "2e+15", 1.0 / 3: "0.3333333333333333"} {
		got := FormatValue(v)
		if back, err := strconv.ParseFloat(got, 64); got != want || err != nil || back != v {
			t.Errorf("FormatValue(%g) = %q (reads back as %g), want %q", v, got, back, want)
		}
	}
}
