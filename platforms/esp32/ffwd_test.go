package esp32

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"synclab/platforms"
	"synclab/sim"
)

// TestFastForwardExact runs each variant with fast-forward and in full
// detail, at the defaults and at settings that change the period (fast
// ticks, long sections, three tasks, unpinned tasks, distinct priorities,
// the counter in PSRAM, a short interrupt exit): every figure, latency
// sample and blame share must be the same, bit for bit, and the defaults
// must skip most of the run, as must the short exit, at which one task is
// in the middle of its loop's Compute whenever the other is at its loop
// head (sim's busyFrame).
func TestFastForwardExact(t *testing.T) {
	settings := []map[string]float64{
		{KeyIterations: 20000},
		{KeyIterations: 20000, KeyIRQExit: 70},
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
				computedAlike(&fast, &slow)
				if !reflect.DeepEqual(fast, slow) {
					t.Fatalf("fast-forwarded run differs from the detailed run:\nfast %+v\nslow %+v", brief(fast), brief(slow))
				}
				share := float64(st.Time) / float64(sim.Time(slow.TotalMS*float64(sim.Millisecond)))
				t.Logf("skipped %.0f%% of the run in %d jumps", 100*share, st.Skips)
				if i <= 1 && share < 0.5 {
					t.Errorf("skipped %.0f%% of the run at %v, want most of it (%+v)", 100*share, vals, st)
				}
			})
		}
	}
}

// TestFastForwardTraced: a traced run skips once its trace window has ended
// and every span that began inside it has closed, and its trace, like every
// figure, is the detailed run's, span for span: for each variant, with the
// window at the start and later in the run.
func TestFastForwardTraced(t *testing.T) {
	windows := []map[string]float64{
		{KeyIterations: 20000},
		{KeyIterations: 20000, KeyTraceFrom: 1, KeyTraceSpan: 0.25},
	}
	for i, vals := range windows {
		for _, v := range CSVariants {
			t.Run(fmt.Sprintf("%s/%d", v, i), func(t *testing.T) {
				fast, err := RunCriticalSection(context.Background(), v, vals, 3, RunOptions{Trace: true})
				if err != nil {
					t.Fatal(err)
				}
				slow, err := RunCriticalSection(context.Background(), v, vals, 3, RunOptions{Trace: true, Detailed: true})
				if err != nil {
					t.Fatal(err)
				}
				st := fast.FastForward
				computedAlike(&fast, &slow)
				if len(slow.Trace.Spans) == 0 {
					t.Fatal("the detailed run traced nothing: the test would prove nothing")
				}
				if !reflect.DeepEqual(fast.Trace, slow.Trace) {
					t.Fatalf("traces differ: %d spans fast-forwarded, %d in detail", len(fast.Trace.Spans), len(slow.Trace.Spans))
				}
				if !reflect.DeepEqual(fast, slow) {
					t.Fatalf("fast-forwarded run differs from the detailed run:\nfast %+v\nslow %+v", brief(fast), brief(slow))
				}
				share := float64(st.Time) / float64(sim.Time(slow.TotalMS*float64(sim.Millisecond)))
				t.Logf("%d spans; skipped %.0f%% of the run in %d jumps", len(slow.Trace.Spans), 100*share, st.Skips)
			})
		}
	}
}

// TestFastForwardStopsBeforeBoundary: a jump must end strictly before the
// next event that does not move with the period. Here, skipping as far as
// the boundary allows lands a task on its loop head at the very instant of
// a tick (81 ms, seed 775): it would go on before the tick, where the
// detailed run makes it yield to the tick first (found by a wide run of
// TestFastForwardExactRandom: 36 kernel-lock contentions instead of 33).
func TestFastForwardStopsBeforeBoundary(t *testing.T) {
	vals := map[string]float64{KeyIterations: 4000, KeyTasks: 3, KeyPinning: 0, KeyPriorities: 1, KeyCSCycles: 300,
		KeyLoopCycles: 0, KeyTickHz: 1000, KeyCPUMHz: 160, KeyCrosscoreISR: 139, KeyIRQEntry: 224,
		KeySpinlockPair: 212, KeySRAMLatency: 2, KeySwitchSelect: 312, KeyTickBody: 374}
	fast, err := RunCriticalSection(context.Background(), VariantBinary, vals, 775, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := RunCriticalSection(context.Background(), VariantBinary, vals, 775, RunOptions{Detailed: true})
	if err != nil {
		t.Fatal(err)
	}
	if fast.FastForward.Skips == 0 {
		t.Fatal("nothing skipped: the test would prove nothing")
	}
	computedAlike(&fast, &slow)
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fast-forwarded run differs from the detailed run:\nfast %+v\nslow %+v", brief(fast), brief(slow))
	}
}

// brief drops the per-interrupt samples from r, for a readable failure.
func brief(r CSResult) CSResult {
	r.IRQLatencyUS = nil
	r.IRQBlameUS = [numBlameCauses][]float64{}
	return r
}

// ffDraws and ffSeed widen TestFastForwardExactRandom after a change to
// fast-forward or to what the kernel model records:
// go test -run FastForwardExactRandom ./platforms/esp32/ -args -ffwd.draws=800 -ffwd.seed=77
var (
	ffDraws = flag.Int("ffwd.draws", 48, "TestFastForwardExactRandom: settings drawn")
	ffSeed  = flag.Uint64("ffwd.seed", 5, "TestFastForwardExactRandom: seed of the draws")
)

// TestFastForwardExactRandom draws platform and workload settings at
// random (every ASSUME cost within its plausible range, the workload's
// knobs within theirs) and checks that fast-forward changes nothing. (A
// wider run of it, 2,800 draws, found the bug TestInheritanceInTransit
// keeps fixed.)
func TestFastForwardExactRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(*ffSeed, 11))
	pick := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	skipped := 0
	defer func() {
		if skipped == 0 {
			t.Error("no run skipped anything: the test would prove nothing")
		}
	}()
	for i := range *ffDraws {
		vals := map[string]float64{
			KeyIterations: pick(1500, 4000), KeyTickHz: pick(100, 1000), KeyCPUMHz: pick(160, 240),
			KeyCSCycles: pick(0, 0, 40, 300, 2400), KeyLoopCycles: pick(0, 4, 40), KeyTasks: pick(2, 2, 3, 4, 8),
			KeyPinning: pick(1, 1, 0), KeyPriorities: pick(0, 1), KeyPeriphHz: pick(100, 1000, 3000, 20000, 50000),
			KeyPSRAM: pick(0, 0, 1),
		}
		for _, p := range Params() {
			if p.Prov == platforms.ASSUME && p.High > p.Low && rng.IntN(2) == 0 {
				vals[p.Key] = math.Round(p.Low + rng.Float64()*(p.High-p.Low))
			}
		}
		v := CSVariants[rng.IntN(len(CSVariants))]
		t.Run(fmt.Sprintf("%d-%s", i, v), func(t *testing.T) {
			fast, err := RunCriticalSection(context.Background(), v, vals, uint64(i), RunOptions{})
			if err != nil {
				t.Fatalf("settings %v seed %d: %v", vals, i, err)
			}
			slow, err := RunCriticalSection(context.Background(), v, vals, uint64(i), RunOptions{Detailed: true})
			if err != nil {
				t.Fatalf("settings %v seed %d: %v", vals, i, err)
			}
			skipped += fast.FastForward.Skips
			t.Logf("%d jumps", fast.FastForward.Skips)
			computedAlike(&fast, &slow)
			if fast.Counter != fast.Expected || (v == VariantNotify && uint64(fast.Handoffs) != fast.Counter) {
				t.Errorf("settings %v seed %d: counter %d, expected %d, hand-offs %d", vals, i, fast.Counter, fast.Expected, fast.Handoffs)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("settings %v: fast-forwarded run differs:\nfast %+v\nslow %+v", vals, brief(fast), brief(slow))
			}
		})
	}
}

// computedAlike clears what says how a run was computed rather than what it
// found (fast-forward's jumps, the coroutine round trips of the part
// simulated in detail), so that a fast-forwarded run and a detailed one
// compare field by field.
func computedAlike(rs ...*CSResult) {
	for _, r := range rs {
		r.FastForward, r.Switches = sim.FastForwardStats{}, 0
	}
}
