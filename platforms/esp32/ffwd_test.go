package esp32

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"synclab/sim"
)

// TestFastForwardExact runs each variant with fast-forward and in full
// detail, at the defaults and at settings that change the period (fast
// ticks, long sections, three tasks, unpinned tasks, distinct priorities,
// the counter in PSRAM): every figure, latency sample and blame share must
// be the same, bit for bit, and the defaults must skip most of the run.
func TestFastForwardExact(t *testing.T) {
	settings := []map[string]float64{
		{KeyIterations: 20000},
		{KeyIterations: 3000, KeyTickHz: 1000, KeyPeriphHz: 5000},
		{KeyIterations: 3000, KeyCSCycles: 300, KeyLoopCycles: 50},
		{KeyIterations: 2000, KeyTasks: 3, KeyPriorities: 1},
		{KeyIterations: 2000, KeyPinning: 0},
		{KeyIterations: 2000, KeyPSRAM: 1, KeyAlign: 64},
	}
	for i, vals := range settings {
		for _, v := range CSVariants {
			t.Run(fmt.Sprintf("%s/%d", v, i), func(t *testing.T) {
				seed := uint64(1 + i)
				fast, err := RunCriticalSection(context.Background(), v, vals, seed, RunOptions{})
				if err != nil {
					t.Fatal(err)
				}
				slow, err := RunCriticalSection(context.Background(), v, vals, seed, RunOptions{Detailed: true})
				if err != nil {
					t.Fatal(err)
				}
				st := fast.FastForward
				fast.FastForward, slow.FastForward = sim.FastForwardStats{}, sim.FastForwardStats{}
				if !reflect.DeepEqual(fast, slow) {
					t.Fatalf("fast-forwarded run differs from the detailed run:\nfast %+v\nslow %+v", brief(fast), brief(slow))
				}
				share := float64(st.Time) / float64(sim.Time(slow.TotalMS*float64(sim.Millisecond)))
				t.Logf("skipped %.0f%% of the run in %d jumps", 100*share, st.Skips)
				if i == 0 && share < 0.5 {
					t.Errorf("skipped %.0f%% of a default run, want most of it (%+v)", 100*share, st)
				}
			})
		}
	}
}

// brief drops the per-interrupt samples from r, for a readable failure.
func brief(r CSResult) CSResult {
	r.IRQLatencyUS = nil
	r.IRQBlameUS = [numBlameCauses][]float64{}
	return r
}
