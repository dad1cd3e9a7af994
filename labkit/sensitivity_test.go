package labkit

import (
	"context"
	"errors"
	"reflect"
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
		if c.Param != d.Param || c.Side != d.Side || !reflect.DeepEqual(c.Holds, d.Holds) || !reflect.DeepEqual(c.Result.Runs, d.Result.Runs) {
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
