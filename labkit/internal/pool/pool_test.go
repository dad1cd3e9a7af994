package pool

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

func TestRunEveryJobInOrder(t *testing.T) {
	var mu sync.Mutex
	var started []int
	var busy, most atomic.Int32
	err := Run(context.Background(), 2, 5, []int{4, 3, 2, 1, 0}, func(_ context.Context, i int) error {
		if n := busy.Add(1); n > most.Load() {
			most.Store(n)
		}
		mu.Lock()
		started = append(started, i)
		mu.Unlock()
		busy.Add(-1)
		return nil
	})
	if err != nil || len(started) != 5 || started[0] != 4 && started[0] != 3 || most.Load() > 2 {
		t.Errorf("err %v, started %v (want all five, 4 or 3 first), %d at once (want at most 2)", err, started, most.Load())
	}
	slices.Sort(started)
	if !slices.Equal(started, []int{0, 1, 2, 3, 4}) {
		t.Errorf("jobs run %v, want each once", started)
	}
}

func TestRunStopsAtFirstFailure(t *testing.T) {
	boom := errors.New("boom")
	// Job 0 waits until stopped; job 1 fails: the error is job 1's, not job 0's cancellation, and
	// the jobs after them never start.
	var late atomic.Int32
	err := Run(context.Background(), 2, 4, nil, func(ctx context.Context, i int) error {
		switch i {
		case 0:
			<-ctx.Done()
			return ctx.Err()
		case 1:
			return boom
		}
		late.Add(1)
		return nil
	})
	if !errors.Is(err, boom) || late.Load() != 0 {
		t.Errorf("err %v (want boom), %d later jobs started (want 0)", err, late.Load())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, 2, 3, nil, func(context.Context, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before any job: %v, want an error wrapping context.Canceled", err)
	}
}
