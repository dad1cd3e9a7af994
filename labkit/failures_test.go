package labkit

import (
	"context"
	"errors"
	"math"
	"strings"
	"synclab/platforms"
	"testing"
)

// failingFixture runs the swept fixture with run failing where fail says.
func failingFixture(t *testing.T, fail func(spec platforms.RunSpec) bool) *Result {
	t.Helper()
	res, err := Execute(context.Background(), withRun(sweptFixture(t), func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
		if fail(spec) {
			return platforms.RunResult{}, errors.New("deadlock at 1ms: worker/1 (core 1) waits on lock")
		}
		return fixtureRun(ctx, spec)
	}), RunOptions{Progress: NoProgress})
	var rf *RunsFailedError
	if !errors.As(err, &rf) {
		t.Fatalf("err = %v, want a RunsFailedError", err)
	}
	return res
}

func TestClaimsWithFailedRuns(t *testing.T) {
	tests := []struct {
		name      string
		fail      func(spec platforms.RunSpec) bool
		direction string   // of the time_ms claim
		verdict   []string // in its verdict
		simCell   string   // in the claims table
	}{
		{"a side without runs", func(s platforms.RunSpec) bool { return s.Variant == "slow" && s.Params["work"] == 100 },
			"failed", []string{"not simulated", "slow: 5 of 5 runs failed: deadlock at 1ms"}, "slow failed"},
		{"one repeat failed", func(s platforms.RunSpec) bool { return s.Variant == "slow" && s.Params["work"] == 100 && s.Repeat == 0 },
			"agrees", []string{"reproduced", "(slow: 1 of 5 runs failed: deadlock at 1ms"}, "slow 0.0"},
		{"failure at another point", func(s platforms.RunSpec) bool { return s.Variant == "slow" && s.Params["work"] == 200 },
			"agrees", []string{"reproduced"}, "slow 0.0"},
	}
	for _, tc := range tests {
		res := failingFixture(t, tc.fail)
		claims := res.Claims()
		if len(claims) != 2 {
			t.Fatalf("%s: %d claims, want 2", tc.name, len(claims))
		}
		c := claims[0]
		if c.Metric != "time_ms" || c.Direction != tc.direction || !containsAll(c.Verdict, tc.verdict...) {
			t.Errorf("%s: claim %s %q %q, want %q with %v", tc.name, c.Metric, c.Direction, c.Verdict, tc.direction, tc.verdict)
		}
		if tc.direction == "agrees" && len(tc.verdict) == 1 && strings.Contains(c.Verdict, "failed") {
			t.Errorf("%s: verdict mentions failures of another point: %q", tc.name, c.Verdict)
		}
		var b strings.Builder
		ClaimsTable(claims).WriteText(&b)
		if !strings.Contains(b.String(), tc.simCell) || strings.Contains(b.String(), "NaN") {
			t.Errorf("%s: claims table lacks %q or shows NaN:\n%s", tc.name, tc.simCell, b.String())
		}
	}
}

func TestFailedRunsRoundTripThroughTheStore(t *testing.T) {
	res := failingFixture(t, func(s platforms.RunSpec) bool { return s.Repeat == 3 })
	b, err := Encode(res)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(back.Failures()), 6; got != want || !back.Complete || !strings.Contains(back.Failures()[0].Err, "deadlock") {
		t.Fatalf("decoded %d failures (want %d), complete=%v", got, want, back.Complete)
	}
}

func TestConclusionJudge(t *testing.T) {
	res := failingFixture(t, func(s platforms.RunSpec) bool { return s.Variant == "slow" && s.Params["work"] == 50 })
	// Point 0 (work=50): slow failed entirely; fast's time_ms is ~0.01 ms.
	ok := fixtureResult(t) // slow is 1.5x slower than fast everywhere
	// Means a seed could swap: 2 against 2.15 from two seeds each, and 1
	// against 2 from one seed each.
	noisy := &Result{Runs: []Run{
		{Variant: "a", Repeat: 0, Metrics: map[string]float64{"m": 1}}, {Variant: "a", Repeat: 1, Metrics: map[string]float64{"m": 3}},
		{Variant: "b", Repeat: 0, Metrics: map[string]float64{"m": 2.1}}, {Variant: "b", Repeat: 1, Metrics: map[string]float64{"m": 2.2}},
		{Variant: "c", Metrics: map[string]float64{"m": 1}}, {Variant: "d", Metrics: map[string]float64{"m": 2}},
	}}
	tests := []struct {
		c    Conclusion
		r    *Result
		want Judgement
	}{
		{Conclusion{Metric: "time_ms", A: "fast", B: "slow", Less: true}, ok, Holds},
		{Conclusion{Metric: "time_ms", A: "fast", B: "slow", Less: false}, ok, Fails},
		{Conclusion{Metric: "ops_s", A: "fast", B: "slow", Less: false}, ok, Holds},
		{Conclusion{Metric: "time_ms", A: "fast", B: "fast", Less: true}, ok, Unresolved}, // equal means
		{Conclusion{Metric: "time_ms", A: "fast", B: "fast", Less: false}, ok, Unresolved},
		{Conclusion{Metric: "time_ms", A: "fast", B: "slow", Less: false}, res, NoRuns}, // slow has no runs
		{Conclusion{Metric: "time_ms", A: "fast", B: "slow", Less: true}, res, NoRuns},
		{Conclusion{Metric: "m", A: "b", B: "a", Less: true}, noisy, Unresolved}, // 2.15 > 2, within the seeds' noise
		{Conclusion{Metric: "m", A: "d", B: "c", Less: true}, noisy, Unresolved}, // one seed each
	}
	for _, tc := range tests {
		if got := tc.c.Judge(tc.r); got != tc.want {
			t.Errorf("%v: Judge = %v, want %v", tc.c, got, tc.want)
		}
	}
}

func TestDefaultConclusionsFirstVariantVersusEachOther(t *testing.T) {
	e := platforms.Experiment{Name: "three", Variants: []platforms.Variant{{Name: "ref"}, {Name: "lo"}, {Name: "hi"}, {Name: "dead"}},
		Metrics: []platforms.Metric{{Name: "m"}, {Name: "flat"}}, Repeats: 1}
	run := func(v string, m, flat float64) Run {
		return Run{Variant: v, Metrics: map[string]float64{"m": m, "flat": flat}}
	}
	// Two seeds each, alike: no spread, so each order holds beyond noise.
	res := &Result{Experiment: e, Runs: []Run{run("ref", 5, 1), run("ref", 5, 1), run("lo", 2, 1), run("lo", 2, 1), run("hi", 9, 1), run("hi", 9, 1), {Variant: "dead", Err: "deadlock"}}}
	got := DefaultConclusions(res)
	want := []Conclusion{
		{Metric: "m", A: "ref", B: "lo", Less: false},
		{Metric: "m", A: "ref", B: "hi", Less: true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] || got[i].Judge(res) != Holds {
			t.Errorf("conclusion %d: got %v, want %v holding on its baseline", i, got[i], want[i])
		}
	}
	if c := DefaultConclusions(&Result{Experiment: platforms.Experiment{Variants: e.Variants[:1], Metrics: e.Metrics}}); c != nil {
		t.Errorf("one variant: %v, want none", c)
	}
}

func TestSensitivityTableShowsFailedCases(t *testing.T) {
	// noise at its High (0.3) makes slow deadlock in this stand-in model.
	e := withRun(fixture(), func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
		if spec.Variant == "slow" && spec.Params["noise"] == 0.3 {
			return platforms.RunResult{}, errors.New("deadlock at 2ms: slow (core 0) waits on queue")
		}
		return fixtureRun(ctx, spec)
	})
	s, err := RunSensitivity(context.Background(), e, nil, RunOptions{NoCache: true, Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, c := range s.Cases {
		failing := c.Param == "noise" && c.Side == "high"
		if failing != (c.Failed == 5) {
			t.Errorf("case %s %s: %d failed runs", c.Param, c.Side, c.Failed)
		}
		if failing {
			found = true
			for i, j := range c.Judged {
				if j != NoRuns {
					t.Errorf("conclusion %v is %v without runs of slow", s.Conclusions[i], j)
				}
			}
		}
	}
	var b strings.Builder
	s.Table().WriteText(&b)
	if !found || !containsAll(b.String(), "failed runs", "no runs", "5 of 10: deadlock at 2ms") {
		t.Errorf("sensitivity table does not show the failed case:\n%s", b.String())
	}
	if bars := s.TornadoBars("fast", "time_ms"); len(bars) != 2 || math.IsNaN(bars[0].High) {
		t.Errorf("tornado bars of the unaffected variant: %+v", bars)
	}
}

// A report of a result whose every run failed shows the failed runs, the
// parameters and the stamp: no chart, claims or summary table, all of which
// would be empty.
func TestReportOfFailedRunsOnly(t *testing.T) {
	r := ResultReport(failingFixture(t, func(platforms.RunSpec) bool { return true }))
	page := r.HTML()
	if len(r.charts) != 0 || strings.Contains(page, "mean ± 95% CI") || strings.Contains(page, "Claims:") ||
		!containsAll(page, "runs failed (left out of the statistics)", "deadlock at 1ms", "Parameters of ", "Reproducibility:") {
		t.Errorf("%d charts; page:\n%s", len(r.charts), page[strings.Index(page, "<body>"):])
	}
	if some := ResultReport(failingFixture(t, func(s platforms.RunSpec) bool { return s.Repeat == 0 })); len(some.charts) == 0 {
		t.Error("a result with some runs left has no chart")
	}
}
