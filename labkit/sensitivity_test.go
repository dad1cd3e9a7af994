package labkit

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"synclab/platforms"
)

// TestSensitivityCasesSideBySide: the cases run side by side give the same
// cases, in the same order, with the same runs, whatever the workers.
func TestSensitivityCasesSideBySide(t *testing.T) {
	runs := func(workers int) *Sensitivity {
		s, err := RunSensitivity(context.Background(), fixture(), nil, RunOptions{NoCache: true, Progress: NoProgress, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	one, four := runs(1), runs(4)
	if len(one.Cases) != 4 || len(four.Cases) != len(one.Cases) {
		t.Fatalf("%d and %d cases, want 4 (two ASSUME parameters, low and high)", len(one.Cases), len(four.Cases))
	}
	for i, c := range one.Cases {
		d := four.Cases[i]
		if c.Param != d.Param || c.Side != d.Side || !reflect.DeepEqual(c.Judged, d.Judged) || !reflect.DeepEqual(c.Result.Runs, d.Result.Runs) {
			t.Errorf("case %d: %s %s with 1 worker, %s %s with 4, or different runs", i, c.Param, c.Side, d.Param, d.Side)
		}
	}
}

// TestSensitivityStops: a failing case (not a failed run: the experiment
// cannot run) stops the others and is the error returned; a cancelled
// context ends the cases with an error wrapping it, never a case without
// a result.
func TestSensitivityStops(t *testing.T) {
	broken := fixture()
	broken.Params[2].High = 99 // slowdown's High outside [Min, Max]
	if _, err := RunSensitivity(context.Background(), broken, nil, RunOptions{NoCache: true, Progress: NoProgress, Workers: 2}); err == nil {
		t.Error("a High outside the parameter's range ran")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := withRun(fixture(), func(c context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
		if spec.Params["noise"] != 0.1 {
			cancel() // the first case's run: what Ctrl-C does
		}
		return fixtureRun(c, spec)
	})
	s, err := RunSensitivity(ctx, e, nil, RunOptions{NoCache: true, Progress: NoProgress, Workers: 2})
	if !errors.Is(err, context.Canceled) || s != nil {
		t.Errorf("cancelled sensitivity: %v, %v; want an error wrapping context.Canceled and no result", s, err)
	}
}

// twoServers is an experiment with exact means: fast takes a, slow b + 20
// (a = 40 and b = 30 by default: fast < slow), with a's plausible range
// 20-80 and b's 10-60.
func twoServers() platforms.Experiment {
	return platforms.Experiment{
		Name: "two-servers", Platform: "testbed", Repeats: 2, Seed: 1, // two seeds: no spread, so every order is resolved
		Params: platforms.Params{
			{Key: "a", Value: 40, Unit: "ns", Prov: platforms.ASSUME, Source: "guess", Min: 0, Max: 1000, Low: 20, High: 80},
			{Key: "b", Value: 30, Unit: "ns", Prov: platforms.ASSUME, Source: "guess", Min: 0, Max: 1000, Low: 10, High: 60},
			{Key: "k", Value: 1, Prov: platforms.CODE, Source: "the setup", Min: 0, Max: 2},
		},
		Variants: []platforms.Variant{{Name: "fast"}, {Name: "slow"}},
		Metrics:  []platforms.Metric{{Name: "t", Unit: "ns"}},
		Run: func(_ context.Context, s platforms.RunSpec) (platforms.RunResult, error) {
			t := s.Params["a"]
			if s.Variant == "slow" {
				t = s.Params["b"] + 20
			}
			return platforms.RunResult{Metrics: map[string]float64{"t": t}}, nil
		},
	}
}

// TestSensitivityWhichParametersMoveTheConclusion pins, on a model with
// exact means, which ASSUME parameter at which end of its range overturns
// "fast < slow" (a at its High 80 > 50, b at its Low: 40 > 30), the value
// each case ran with, the table's verdicts and the tornado bars' changes
// from the baseline at each end (fast: a -50% / +100%; slow: b -40% / +60%).
func TestSensitivityWhichParametersMoveTheConclusion(t *testing.T) {
	s, err := RunSensitivity(context.Background(), twoServers(), nil, RunOptions{NoCache: true, Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Conclusion{{Metric: "t", A: "fast", B: "slow", Less: true}}; !reflect.DeepEqual(s.Conclusions, want) {
		t.Fatalf("conclusions %v, want %v", s.Conclusions, want)
	}
	type cs struct {
		param, side string
		value       float64
		holds       bool
	}
	want := []cs{{"a", "low", 20, true}, {"a", "high", 80, false}, {"b", "low", 10, false}, {"b", "high", 60, true}}
	var got []cs
	for _, c := range s.Cases {
		got = append(got, cs{c.Param, c.Side, c.Value, len(c.Judged) == 1 && c.Judged[0] == Holds})
		if v := c.Result.Experiment.Params.Get(c.Param); v != c.Value {
			t.Errorf("case %s %s: ran with %s = %g, want %g", c.Param, c.Side, c.Param, v, c.Value)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cases %v\nwant  %v", got, want)
	}
	tab := s.Table()
	var verdicts []string
	for _, r := range tab.Rows {
		verdicts = append(verdicts, strings.Join(r, " "))
	}
	if w := []string{"(baseline)   holds", "a low 20 holds", "a high 80 FAILS", "b low 10 FAILS", "b high 60 holds"}; !reflect.DeepEqual(verdicts, w) ||
		!reflect.DeepEqual(tab.Header, []string{"parameter", "side", "value", "fast < slow on t"}) {
		t.Errorf("table %q rows %q, want rows %q", tab.Header, verdicts, w)
	}
	for _, tc := range []struct {
		variant string
		bars    []TornadoBar
	}{
		{"fast", []TornadoBar{{"a", -50, 100}, {"b", 0, 0}}},
		{"slow", []TornadoBar{{"a", 0, 0}, {"b", -40, 60}}},
	} {
		if got := s.TornadoBars(tc.variant, "t"); !reflect.DeepEqual(got, tc.bars) {
			t.Errorf("%s: tornado bars %v, want %v", tc.variant, got, tc.bars)
		}
	}
}

// TestTornadoLargestSpanOnTop: the tornado chart lists the parameters by
// the span of their bars, smallest first: the horizontal chart draws its
// first category at the bottom, so the parameter that matters most is on
// top.
func TestTornadoLargestSpanOnTop(t *testing.T) {
	bars := []TornadoBar{{"mid", -10, 10}, {"big", -50, 100}, {"none", 0, 0}, {"one-sided", 5, 40}}
	var o struct {
		YAxis []struct {
			Type string
			Data []string
		} `json:"yAxis"`
	}
	if err := json.Unmarshal([]byte(Tornado("t", "%", bars).Option), &o); err != nil {
		t.Fatal(err)
	}
	if want := []string{"none", "mid", "one-sided", "big"}; len(o.YAxis) != 1 || o.YAxis[0].Type != "category" || !reflect.DeepEqual(o.YAxis[0].Data, want) {
		t.Errorf("y axis %+v, want the categories %v", o.YAxis, want)
	}
}

// TestSensitivityTableBaselineFailures: runs that fail at the defaults only
// (the baseline) still give the table its "failed runs" column, so that
// every row has a cell per header; a conclusion whose first variant has no
// runs reads "no runs", not "FAILS".
func TestSensitivityTableBaselineFailures(t *testing.T) {
	e := twoServers()
	run := e.Run
	e.Run = func(ctx context.Context, s platforms.RunSpec) (platforms.RunResult, error) {
		if s.Variant == "fast" && s.Params["a"] == 40 && s.Params["b"] == 30 {
			return platforms.RunResult{}, errors.New("deadlock at the defaults")
		}
		return run(ctx, s)
	}
	s, err := RunSensitivity(context.Background(), e, []Conclusion{{Metric: "t", A: "fast", B: "slow", Less: true}}, RunOptions{NoCache: true, Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	tab := s.Table()
	if h := tab.Header; len(h) != 5 || h[4] != "failed runs" {
		t.Fatalf("header %q, want a failed runs column", h)
	}
	for _, r := range tab.Rows {
		if len(r) != len(tab.Header) {
			t.Errorf("row %q: %d cells for %d columns", r, len(r), len(tab.Header))
		}
	}
	if r := tab.Rows[0]; r[3] != "no runs" || r[4] != "2 of 4: deadlock at the defaults" {
		t.Errorf("baseline row %q", r)
	}
}
