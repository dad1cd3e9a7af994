package labkit

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"synclab/labkit/nbexport"
	"synclab/platforms"
)

func TestRunWith(t *testing.T) {
	opts := RunOptions{NoCache: true, Progress: NoProgress}
	tests := []struct {
		name    string
		spec    Spec
		runs    int
		wantErr string
	}{
		{"as defined", Spec{Options: opts}, 10, ""},
		{"variants, values, sweep, repeats", Spec{Variants: []string{"slow"}, Set: map[string]float64{"noise": 0.2, "hz": 250},
			Sweep: []platforms.Axis{{Param: "work", Values: []float64{10, 20, 30}}}, Repeats: 2, Options: opts}, 6, ""},
		{"unknown variant", Spec{Variants: []string{"medium"}}, 0, `unknown variant "medium"`},
		{"value out of range", Spec{Set: map[string]float64{"noise": 2}}, 0, "noise"},
		{"unknown parameter", Spec{Set: map[string]float64{"nois": 0.2}}, 0, "nois"},
		{"bad sweep", Spec{Sweep: []platforms.Axis{{Param: "hz", Values: []float64{300}}}}, 0, "hz"},
		{"negative repeats", Spec{Repeats: -1}, 0, "repeats -1: want at least 1 (0 keeps the experiment's 5)"},
	}
	for _, tc := range tests {
		res, err := RunWith(context.Background(), fixture(), tc.spec)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case len(res.Runs) != tc.runs:
			t.Errorf("%s: %d runs, want %d", tc.name, len(res.Runs), tc.runs)
		}
	}
}

// TestRunNotesTheSession: in a headless run, RunWith notes each experiment
// for the report's stamp, with its parameters, seed, repeats and code
// version, and whether it came from the store.
func TestRunNotesTheSession(t *testing.T) {
	log := filepath.Join(t.TempDir(), "session.jsonl")
	t.Setenv(nbexport.SessionEnv, log)
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	spec := Spec{Set: map[string]float64{"work": 150}, Repeats: 2, Options: RunOptions{Progress: NoProgress}}
	for range 2 { // computed, then cached
		if _, err := RunWith(context.Background(), fixture(), spec); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := nbexport.ReadSession(log)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d records, want the experiment once: %+v", len(recs), recs)
	}
	r := recs[0]
	if r.Experiment != fixtureName || r.Params["work"] != 150 || r.Set["work"] != 150 || r.Repeats != 2 || r.Seed != 42 ||
		r.Code != CurrentCode().String() || r.Runs != 4 || r.Cached {
		t.Errorf("record %+v", r)
	}
	raw, _ := os.ReadFile(log)
	if n := strings.Count(string(raw), "\n"); n != 2 || !strings.Contains(string(raw), `"cached":true`) {
		t.Errorf("the second, cached run is not logged as cached:\n%s", raw)
	}
}

// TestNote: results run outside RunWith are noted too, a result made
// before this program started as cached.
func TestNote(t *testing.T) {
	log := filepath.Join(t.TempDir(), "session.jsonl")
	t.Setenv(nbexport.SessionEnv, log)
	r, err := Execute(context.Background(), fixture(), RunOptions{Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	old := *r
	old.Hash, old.Created = "older", processStart.Add(-time.Hour)
	Note(r, &old, nil)
	recs, err := nbexport.ReadSession(log)
	if err != nil || len(recs) != 2 || recs[0].Cached || !recs[1].Cached || recs[0].Runs != len(r.Runs) {
		t.Errorf("records %+v (%v)", recs, err)
	}
}

func TestPointOfAndMean(t *testing.T) {
	e, err := fixture().WithSweep("work", 10, 20)
	if err != nil {
		t.Fatal(err)
	}
	e, err = e.WithSweep("hz", 100, 1000)
	if err != nil {
		t.Fatal(err)
	}
	r := handResult(e, "time_ms", map[string][][]float64{"fast": {{1}, {2}, {3}, {4, 6}}})
	if p := r.PointOf(map[string]float64{"work": 20, "hz": 1000}); p != 3 || r.Mean("fast", p, "time_ms") != 5 {
		t.Errorf("PointOf(work=20, hz=1000) = %d, mean %g", p, r.Mean("fast", p, "time_ms"))
	}
	if p := r.PointOf(map[string]float64{"work": 20}); p != -1 {
		t.Errorf("PointOf without every swept value = %d, want -1", p)
	}
	if m := r.Mean("slow", 0, "time_ms"); !math.IsNaN(m) {
		t.Errorf("mean without runs %g, want NaN", m)
	}
}

func ExampleRunWith() {
	res, err := RunWith(context.Background(), fixture(), Spec{
		Variants: []string{"slow"},
		Set:      map[string]float64{"work": 200},
		Repeats:  3,
		Options:  RunOptions{NoCache: true, Progress: NoProgress},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(res.Runs), "runs of", res.Experiment.VariantNames(), "at work =", res.Experiment.Params.Get("work"))
	_, err = RunWith(context.Background(), fixture(), Spec{Set: map[string]float64{"hz": 300}})
	fmt.Println(err)
	// Output:
	// 3 runs of [slow] at work = 200
	// experiment fixture-queue: parameter hz: value 300 not allowed; choose one of 100, 250, 1000
}

func ExampleNum() {
	fmt.Println(Num(41811.23), Num(1.8301), Num(0.0033012), Num(2.179e-8))
	// Output: 41,811 1.83 0.003301 2.179e-8
}

func ExampleQuantity() {
	fmt.Println(Quantity(0.0033, "ms"), "vs", Quantity(2.29, "ms"))
	// Output: 3.3 µs vs 2.29 ms
}

func ExampleShowUnit() {
	fmt.Println(ShowUnit("us"), "|", ShowUnit("energy / op (uJ)"), "|", ShowUnit("max_wait_us (us)"))
	// Output: µs | energy / op (µJ) | max_wait_us (µs)
}

func ExampleRelative() {
	fmt.Println("the model's WFE wait is", Relative(0.0033, 0.12), "than the article's")
	// Output: the model's WFE wait is 36x lower than the article's
}

func ExampleMD() {
	// In a notebook this displays Markdown; elsewhere it prints it.
	MD("WFE waits less than WFI: %s (%s vs %s)", YesNo(0.0033 < 2.29), Quantity(0.0033, "ms"), Quantity(2.29, "ms"))
	// Output: WFE waits less than WFI: **yes** (3.3 µs vs 2.29 ms)
}

func ExampleLines() {
	hz := []float64{100, 250, 300, 1000}
	half := make([]float64, len(hz))
	for i, f := range hz {
		half[i] = 1000 / f / 2
	}
	c := Lines("WFI wait vs the half tick", "HZ", "ms", hz,
		Series{Name: "wfi", Values: []float64{5.3, 2.29, 1.9, 0.6}}, Series{Name: "half tick", Values: half})
	fmt.Println(c.Title)
	// Output: WFI wait vs the half tick
}
