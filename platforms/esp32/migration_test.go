package esp32

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"synclab/sim"
)

// An unpinned task preempted in the unmasked code just before
// taskENTER_CRITICAL resumes on the other core and must take the portMUX as
// that core: port.c reads the core ID only after the RSIL. Three tasks
// time-sliced on two cores run 15 ms of work (longer than a 10 ms tick)
// before each critical section, so the preemption lands in the work that
// enterCritical runs before masking.
func TestEnterCriticalAfterMigration(t *testing.T) {
	e, k := newTestKernel(t, nil)
	mux := k.NewPortMux("mux", 8)
	counter := k.SoC.Alloc(4, 8)
	const rounds = 20
	migrated := 0
	for i := range 3 {
		mustTask(t, k, fmt.Sprintf("t%d", i), 10, NoAffinity, func(tcb *TCB) {
			for range rounds {
				tcb.Work(240 * (15000 + 1300*int64(i))) // 15 to 17.6 ms at 240 MHz, charged lazily
				before := tcb.Proc.Core().ID
				tcb.EnterCritical(mux)
				in := tcb.Proc.Core().ID
				if in != before {
					migrated++
				}
				if mux.owner != in {
					tcb.Proc.Fail(fmt.Errorf("%s runs on core %d but %s is recorded as held by core %d", tcb.Name, in, mux.Name, mux.owner))
				}
				tcb.Store(counter, tcb.Load(counter)+1)
				tcb.Work(100)
				if now := tcb.Proc.Core().ID; now != in {
					tcb.Proc.Fail(fmt.Errorf("%s moved from core %d to core %d inside a critical section", tcb.Name, in, now))
				}
				tcb.ExitCritical(mux)
			}
		})
	}
	run(t, e, k)
	if got := k.SoC.Mem.Peek(counter); got != 3*rounds {
		t.Errorf("counter %d, want %d", got, 3*rounds)
	}
	if migrated == 0 {
		t.Errorf("no task migrated while entering a critical section: the test no longer exercises the path")
	}
	t.Logf("%d of %d critical sections were entered on another core than the preceding work's", migrated, 3*rounds)
}

// Unpinned tasks migrate between cores, but never inside a critical section:
// every variant keeps mutual exclusion (each portMUX is released by the core
// that took it, the counter is exact) over many seeds. Pinned runs with three
// and four tasks share cores and time-slice without migrating.
func TestMutualExclusionSeeds(t *testing.T) {
	cases := []map[string]float64{
		{KeyIterations: 1500, KeyTasks: 4, KeyPinning: 0},
		{KeyIterations: 1500, KeyTasks: 3, KeyPinning: 1},
		{KeyIterations: 1500, KeyTasks: 4, KeyPinning: 1},
	}
	seeds := uint64(30)
	if testing.Short() {
		seeds = 5
	}
	for _, v := range CSVariants {
		for _, vals := range cases {
			for seed := uint64(1); seed <= seeds; seed++ {
				r, err := RunCriticalSection(context.Background(), v, vals, seed, RunOptions{})
				if err != nil {
					t.Errorf("%s %v seed %d: %v", v, vals, seed, err)
					continue
				}
				if r.Counter != r.Expected {
					t.Errorf("%s %v seed %d: counter %d, expected %d", v, vals, seed, r.Counter, r.Expected)
				}
			}
		}
	}
}

// Three equal-priority unpinned tasks on two cores share them round-robin:
// both ticks time-slice, even when the only peer to rotate to is still being
// switched out by the other core's tick at the same instant (its frame is
// saved at interrupt entry in IDF, so the second core's vTaskSwitchContext
// can select it). They finish within a tick of each other.
func TestTimeSliceUnpinnedFair(t *testing.T) {
	e, k := newTestKernel(t, nil)
	var done []sim.Time
	for i := range 3 {
		mustTask(t, k, fmt.Sprintf("t%d", i), 10, NoAffinity, func(tcb *TCB) {
			tcb.Work(240 * 60000) // 60 ms at 240 MHz
			done = append(done, tcb.Now())
		})
	}
	run(t, e, k)
	spread := slices.Max(done) - slices.Min(done)
	tick := sim.Second / sim.Time(k.Config().TickHz)
	if len(done) != 3 || spread > tick {
		t.Errorf("finish times %v: spread %v, want all three within one tick (%v)", done, spread, tick)
	}
}

// A holder preempted on one core is in transit until the incoming task
// runs; if a higher-priority waiter blocks on its mutex meanwhile,
// inheritance must not file it on a ready list (finishSwitch does, at its
// new priority): filed twice, both cores picked it and a ready task was
// lost. Four unpinned tasks of distinct priorities with long critical
// sections and a 1 kHz tick reach that moment (found by
// TestFastForwardExactRandom; it deadlocked at 67.6 ms).
func TestInheritanceInTransit(t *testing.T) {
	vals := map[string]float64{KeyIterations: 1500, KeyTasks: 4, KeyPinning: 0, KeyPriorities: 1, KeyCSCycles: 2400,
		KeyTickHz: 1000, KeyPeriphHz: 100, KeySpinLoop: 28, KeySpinlockPair: 211, KeySRAMLatency: 4,
		KeySwitchSave: 1430, KeySwitchSelect: 185, KeyIRQEntry: 166, KeyIRQExit: 165, KeyTakeBody: 134, KeyGiveBody: 276, KeyNotifyBody: 156}
	for _, v := range []string{VariantMutex, VariantBinary} {
		r, err := RunCriticalSection(context.Background(), v, vals, 244, RunOptions{})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if r.Counter != r.Expected {
			t.Fatalf("%s: counter %d, want %d", v, r.Counter, r.Expected)
		}
	}
}

// An unpinned task preempted as its critical section ends (the yield taken
// in exitCritical's restore of the interrupt level) may resume on the other
// core: the bookkeeping after the restore is charged to the core it resumes
// on, not left owed on the core it left. Here B preempts A on core 1 at
// tick 1, and core 0, idle since 5 ms, selects A at its own tick 2 (no core
// is told to run a preempted task in IDF).
func TestExitCriticalChargesCoreAfterMigration(t *testing.T) {
	e, k := newTestKernel(t, nil)
	m := k.NewPortMux("m", 8)
	half := k.cfg.SpinlockPair / 2
	migrated, short := 0, 0
	mustTask(t, k, "H0", 9, 0, func(tcb *TCB) {
		tcb.Work(240_000 * 5) // 5 ms, then core 0 idles
		tcb.Now()
		tcb.Delay(100)
	})
	mustTask(t, k, "B", 9, 1, func(tcb *TCB) {
		tcb.Delay(1) // core 1 runs A; B preempts it at tick 1
		tcb.Work(240_000 * 15)
		tcb.Now()
	})
	mustTask(t, k, "A", 5, NoAffinity, func(tcb *TCB) {
		for tcb.TickCount() < 3 {
			tcb.EnterCritical(m)
			tcb.Work(24_000)
			from := coreID(tcb.Proc)
			tcb.ExitCritical(m)
			to := coreID(tcb.Proc)
			if from != to {
				migrated++
			}
			if k.cpu[to].owed < half {
				short++
			}
		}
	})
	run(t, e, k)
	if migrated == 0 {
		t.Fatal("A never resumed on the other core from its critical section's exit: the test proves nothing")
	}
	if short != 0 {
		t.Fatalf("%d of A's critical-section exits left less than %d owed cycles on its core (%d migrated)", short, half, migrated)
	}
}
