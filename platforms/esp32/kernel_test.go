package esp32

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"synclab/sim"
)

func newTestKernel(t *testing.T, values map[string]float64) (*sim.Engine, *Kernel) {
	t.Helper()
	cfg, err := ConfigFrom(values)
	if err != nil {
		t.Fatal(err)
	}
	e := sim.NewEngine(1)
	k, err := NewKernel(e, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, k
}

func mustTask(t *testing.T, k *Kernel, name string, prio, core int, fn func(*TCB)) *TCB {
	t.Helper()
	tcb, err := k.CreateTask(name, prio, core, fn)
	if err != nil {
		t.Fatal(err)
	}
	return tcb
}

func run(t *testing.T, e *sim.Engine, k *Kernel) {
	t.Helper()
	if err := k.Start(); err != nil {
		t.Fatal(err)
	}
	e.MaxEvents = 50_000_000
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.Close()
}

func TestCounterMatchesExpected(t *testing.T) {
	cases := []map[string]float64{
		{KeyIterations: 3000},
		{KeyIterations: 1500, KeyTasks: 3},
		{KeyIterations: 1500, KeyTasks: 4, KeyPinning: 0},
		{KeyIterations: 1500, KeyPriorities: 1, KeyTickHz: 1000},
	}
	for _, v := range CSVariants {
		for i, vals := range cases {
			for seed := uint64(1); seed <= 2; seed++ {
				r, err := RunCriticalSection(context.Background(), v, vals, seed, RunOptions{})
				if err != nil {
					t.Fatalf("%s case %d seed %d: %v", v, i, seed, err)
				}
				if r.Counter != r.Expected || r.Expected != uint64(vals[KeyIterations])*uint64(max(2, vals[KeyTasks])) {
					t.Errorf("%s case %d seed %d: counter %d, expected %d", v, i, seed, r.Counter, r.Expected)
				}
				// The handshake passes the token round the ring: every
				// increment is made by another task than the one before.
				if v == VariantNotify && uint64(r.Handoffs) != r.Counter {
					t.Errorf("notify case %d seed %d: %d hand-offs for %d increments, want one each", i, seed, r.Handoffs, r.Counter)
				}
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, v := range CSVariants {
		a, err := RunCriticalSection(context.Background(), v, map[string]float64{KeyIterations: 2000}, 7, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := RunCriticalSection(context.Background(), v, map[string]float64{KeyIterations: 2000}, 7, RunOptions{})
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs with seed 7 differ:\n%+v\n%+v", v, a, b)
		}
	}
}

func TestBadParameterNamed(t *testing.T) {
	_, err := RunCriticalSection(context.Background(), VariantMutex, map[string]float64{KeyCPUMHz: 100}, 1, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "cpu_mhz") || !strings.Contains(err.Error(), "100") {
		t.Fatalf("cpu_mhz=100: err = %v, want it to name cpu_mhz and 100", err)
	}
	_, err = RunCriticalSection(context.Background(), "spin", nil, 1, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "spin") {
		t.Fatalf("variant spin: err = %v", err)
	}
}

// Waiters of equal priority wake first come, first served; higher
// priorities first.
func TestWakeOrderPriorityThenFIFO(t *testing.T) {
	e, k := newTestKernel(t, nil)
	sem, err := k.NewSemaphore("s", Binary, 1, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	waiter := func(tcb *TCB) {
		tcb.SemaphoreTake(sem, PortMaxDelay)
		order = append(order, tcb.Name)
	}
	// All on core 1: they run (and block) in priority order, FIFO among equals.
	mustTask(t, k, "A5", 5, 1, waiter)
	mustTask(t, k, "B7", 7, 1, waiter)
	mustTask(t, k, "C7", 7, 1, waiter)
	mustTask(t, k, "D5", 5, 1, waiter)
	mustTask(t, k, "giver", 10, 0, func(tcb *TCB) {
		for range 4 {
			tcb.Delay(1)
			tcb.SemaphoreGive(sem)
		}
	})
	run(t, e, k)
	if want := []string{"B7", "C7", "A5", "D5"}; !reflect.DeepEqual(order, want) {
		t.Fatalf("wake order %v, want %v", order, want)
	}
}

// A high-priority waiter raises the mutex holder to its priority; the give
// drops it back.
func TestPriorityInheritance(t *testing.T) {
	e, k := newTestKernel(t, nil)
	m, _ := k.NewSemaphore("m", Mutex, 1, 1, 8)
	var during, after int
	var waited bool
	mustTask(t, k, "low", 3, 0, func(tcb *TCB) {
		tcb.SemaphoreTake(m, PortMaxDelay)
		tcb.Work(240_000 * 30) // 30 ms: the high task wakes on a tick and blocks meanwhile
		tcb.Now()
		during = tcb.Priority
		tcb.SemaphoreGive(m)
		after = tcb.Priority
	})
	mustTask(t, k, "high", 8, 0, func(tcb *TCB) {
		tcb.Delay(1)
		waited = tcb.SemaphoreTake(m, PortMaxDelay)
		tcb.SemaphoreGive(m)
	})
	run(t, e, k)
	if !waited || during != 8 || after != 3 {
		t.Fatalf("holder priority while high waits = %d (want 8), after give = %d (want 3), high took = %v", during, after, waited)
	}
}

// IDF v5.1's xQueueSemaphoreTake on two cores (queueUSE_LOCKS 0) runs each
// round in one xQueueLock critical section: the one that finds the mutex
// taken also checks the timeout, inherits and blocks. A waiter that blocks
// once and then takes enters it twice; one that times out after blocking,
// twice too (the round that sees the timeout returns at once). With the
// holder's take and give, the lock is taken 4 times either way.
func TestTakeBlocksInOneQueueLockSection(t *testing.T) {
	for _, tc := range []struct {
		ticks uint32
		hold  int64 // cycles the holder keeps the mutex
		want  bool
	}{{PortMaxDelay, 24_000, true}, {5, 240_000 * 100, false}} {
		e, k := newTestKernel(t, nil)
		m, _ := k.NewSemaphore("m", Mutex, 1, 1, 8)
		var got bool
		mustTask(t, k, "holder", 5, 0, func(tcb *TCB) {
			tcb.SemaphoreTake(m, PortMaxDelay)
			tcb.Work(tc.hold)
			tcb.SemaphoreGive(m)
		})
		mustTask(t, k, "waiter", 5, 1, func(tcb *TCB) {
			tcb.Work(2400) // the holder has the mutex by now
			got = tcb.SemaphoreTake(m, tc.ticks)
		})
		run(t, e, k)
		if got != tc.want || m.Lock.Acquires != 4 {
			t.Errorf("take(%d ticks) = %v with xQueueLock taken %d times; want %v and 4", tc.ticks, got, m.Lock.Acquires, tc.want)
		}
	}
}

// A take with a timeout of N ticks fails N ticks later.
func TestTakeTimeoutExactTicks(t *testing.T) {
	for _, hz := range []float64{100, 1000} {
		for _, n := range []uint32{1, 5} {
			e, k := newTestKernel(t, map[string]float64{KeyTickHz: hz})
			sem, _ := k.NewSemaphore("s", Binary, 1, 0, 8)
			var got bool
			var before, after uint32
			mustTask(t, k, "t", 5, 1, func(tcb *TCB) {
				tcb.Delay(1) // start between ticks
				tcb.Work(1000)
				before = tcb.TickCount()
				got = tcb.SemaphoreTake(sem, n)
				after = tcb.TickCount()
			})
			run(t, e, k)
			if got || after-before != n {
				t.Errorf("HZ %g: take(%d ticks) = %v after %d ticks; want false after %d", hz, n, got, after-before, n)
			}
		}
	}
}

// ulTaskNotifyTake with pdFALSE decrements, with pdTRUE clears; both return
// the value before.
func TestNotifyTakeClearVsDecrement(t *testing.T) {
	e, k := newTestKernel(t, nil)
	var r1, r2, v1, v2 uint32
	rx := mustTask(t, k, "rx", 5, 1, func(tcb *TCB) {
		tcb.Delay(2)
		r1 = tcb.NotifyTake(0, false, PortMaxDelay)
		v1 = tcb.NotifyValue(0)
		r2 = tcb.NotifyTake(0, true, PortMaxDelay)
		v2 = tcb.NotifyValue(0)
	})
	mustTask(t, k, "tx", 5, 0, func(tcb *TCB) {
		for range 3 {
			tcb.NotifyGive(rx, 0)
		}
	})
	run(t, e, k)
	if r1 != 3 || v1 != 2 || r2 != 2 || v2 != 0 {
		t.Fatalf("decrement take returned %d leaving %d (want 3, 2); clear take returned %d leaving %d (want 2, 0)", r1, v1, r2, v2)
	}
}

// xSemaphoreGiveFromISR asks for a yield only when the woken task outranks
// the interrupted one.
func TestGiveFromISRYieldsOnlyWhenOutranked(t *testing.T) {
	for _, c := range []struct {
		waiterPrio int
		want       bool
	}{{12, true}, {5, false}} {
		e, k := newTestKernel(t, nil)
		sem, _ := k.NewSemaphore("s", Binary, 1, 0, 8)
		var running *TCB
		recorded, woken := false, false
		k.startPeripheral(1000, 50)
		k.OnPeripheral = func(p *sim.Proc) {
			if recorded || k.Current(0) != running {
				return
			}
			ok, w := k.SemaphoreGiveFromISR(p, sem)
			if ok {
				recorded, woken = true, w
				k.YieldFromISR(p, w)
			}
		}
		mustTask(t, k, "waiter", c.waiterPrio, 0, func(tcb *TCB) { tcb.SemaphoreTake(sem, PortMaxDelay) })
		running = mustTask(t, k, "busy", 10, 0, func(tcb *TCB) {
			tcb.Delay(1)
			tcb.Work(240_000 * 5)
			tcb.Now()
		})
		run(t, e, k)
		if !recorded || woken != c.want {
			t.Errorf("waiter priority %d under running priority 10: gave %v, higher-priority-task-woken %v, want %v", c.waiterPrio, recorded, woken, c.want)
		}
	}
}

// vTaskGetRunTimeStats-style CPU use stays in 0..100 and agrees with the
// time the cores did not sleep in waiti.
func TestCPUUseAgreesWithStateAccounting(t *testing.T) {
	for _, v := range CSVariants {
		r, err := RunCriticalSection(context.Background(), v, map[string]float64{KeyIterations: 3000, KeyCSCycles: 500}, 3, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for c := range NumCores {
			if r.CPUPct[c] < 0 || r.CPUPct[c] > 100 {
				t.Errorf("%s core %d: CPU use %.2f%% outside 0..100", v, c, r.CPUPct[c])
			}
			// The idle task's run time covers its waiti time plus its own
			// loop, the interrupts it takes and the switches into and out
			// of it (run time is charged at vTaskSwitchContext). Without
			// blocking (critical) the two measures nearly coincide.
			d := r.BusyPct[c] - r.CPUPct[c]
			if d < 0 || (v == VariantCritical && d > 1) {
				t.Errorf("%s core %d: run-time stats %.2f%% vs not-in-waiti %.2f%%", v, c, r.CPUPct[c], r.BusyPct[c])
			}
		}
	}
}

// Longer critical sections with interrupts masked delay the peripheral
// interrupt by about their length.
func TestIRQLatencyGrowsWithMaskedTime(t *testing.T) {
	lat := func(cs float64) float64 {
		r, err := RunCriticalSection(context.Background(), VariantCritical, map[string]float64{KeyIterations: 4000, KeyCSCycles: cs}, 1, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.MaxIRQUS
	}
	short, long := lat(0), lat(2400) // 2400 cycles = 10 us at 240 MHz
	// portENTER_CRITICAL masks before it spins: a core can stay masked
	// while the other core's section runs and then during its own, 2 x 10 us.
	if long < short+15 || long > short+25 {
		t.Fatalf("max IRQ latency %.2f us with empty critical sections, %.2f us with 10 us ones: want ~20 us more", short, long)
	}
}

// On internal SRAM (no data cache) aligning the objects to 64 bytes changes
// nothing: the article's advice targets a cache the ESP32 does not have there.
func TestAlignmentChangesNothingInSRAM(t *testing.T) {
	for _, v := range CSVariants {
		a, err := RunCriticalSection(context.Background(), v, map[string]float64{KeyIterations: 2000}, 1, RunOptions{})
		if err != nil {
			t.Fatalf("%s, align 8: %v", v, err)
		}
		b, err := RunCriticalSection(context.Background(), v, map[string]float64{KeyIterations: 2000, KeyAlign: 64}, 1, RunOptions{})
		if err != nil {
			t.Fatalf("%s, align 64: %v", v, err)
		}
		if a.TotalMS <= 0 || a.TotalMS != b.TotalMS || a.MaxIRQUS != b.MaxIRQUS {
			t.Errorf("%s: align 8 gives %.6f ms (max IRQ latency %.3f us), align 64 gives %.6f ms (%.3f us); want the same, non-zero",
				v, a.TotalMS, a.MaxIRQUS, b.TotalMS, b.MaxIRQUS)
		}
	}
}

// Two tasks taking two mutexes in opposite order deadlock; the report names
// both and what they wait on.
func TestDeadlockReported(t *testing.T) {
	e, k := newTestKernel(t, nil)
	a, _ := k.NewSemaphore("A", Mutex, 1, 1, 8)
	b, _ := k.NewSemaphore("B", Mutex, 1, 1, 8)
	mustTask(t, k, "t1", 5, 0, func(tcb *TCB) {
		tcb.SemaphoreTake(a, PortMaxDelay)
		tcb.Delay(1)
		tcb.SemaphoreTake(b, PortMaxDelay)
	})
	mustTask(t, k, "t2", 5, 1, func(tcb *TCB) {
		tcb.SemaphoreTake(b, PortMaxDelay)
		tcb.Delay(1)
		tcb.SemaphoreTake(a, PortMaxDelay)
	})
	msg := runDeadlock(t, e, k).Error()
	for _, s := range []string{"t1", "t2", `take mutex "A"`, `take mutex "B"`} {
		if !strings.Contains(msg, s) {
			t.Errorf("deadlock report %q does not mention %s", msg, s)
		}
	}
}

// A device on an interrupt line the model dispatches nothing for ends the
// run naming the line and those it handles; it fired and was dropped
// without a word.
func TestUnhandledInterruptLineRefused(t *testing.T) {
	e, k := newTestKernel(t, nil)
	mustTask(t, k, "t", 5, 0, func(tcb *TCB) { tcb.Delay(5) })
	if _, err := k.SoC.Cores[0].NewDevice("mine", 14, sim.Millisecond, false); err != nil {
		t.Fatal(err)
	}
	if err := k.Start(); err != nil {
		t.Fatal(err)
	}
	err := e.Run(context.Background())
	e.Close()
	if err == nil || !strings.Contains(err.Error(), "interrupt 14 on core 0 has no handler in the model: it handles 6 (the tick), 10 (the crosscore yield) and 13") {
		t.Fatalf("err = %v, want the unhandled line named", err)
	}
}

// runDeadlock starts k's scheduler, runs e and returns the deadlock the run
// must end in.
func runDeadlock(t *testing.T, e *sim.Engine, k *Kernel) *sim.DeadlockError {
	t.Helper()
	if err := k.Start(); err != nil {
		t.Fatal(err)
	}
	err := e.Run(context.Background())
	e.Close()
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) {
		t.Fatalf("err = %v, want a *sim.DeadlockError", err)
	}
	return dl
}

// Two tasks entering two portMUXes in opposite order deadlock; the report
// names each mux a core spins on, not only its address.
func TestCrossedPortMuxesNamed(t *testing.T) {
	e, k := newTestKernel(t, nil)
	a, b := k.NewPortMux("muxA", 8), k.NewPortMux("muxB", 8)
	for i, order := range [][2]*PortMux{{a, b}, {b, a}} {
		mustTask(t, k, fmt.Sprint("t", i), 5, i, func(tcb *TCB) {
			tcb.EnterCritical(order[0])
			tcb.Work(2000)
			tcb.Now() // settles the owed cycles, so both hold their first mux
			tcb.EnterCritical(order[1])
			tcb.ExitCritical(order[1])
			tcb.ExitCritical(order[0])
		})
	}
	msg := runDeadlock(t, e, k).Error()
	for _, want := range []string{
		fmt.Sprintf("t0 (core 0) waits on spin on muxB (%#x, ", uint64(b.Addr)),
		fmt.Sprintf("t1 (core 1) waits on spin on muxA (%#x, ", uint64(a.Addr)),
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("deadlock report %q does not say %q", msg, want)
		}
	}
}

// A task that only calls Work in an endless loop once owed cycles without
// end and never let simulated time move, so the run hung in Go. Now its
// cycles run once they pass maxOwed, and the run ends at the engine's time
// limit, event budget or cancellation. The minute is only a safety net:
// without the bound Run never returns.
func TestWorkLoopEnds(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		limit func(e *sim.Engine)
		check func(e *sim.Engine, err error) bool
	}{
		{"time limit", context.Background(), func(e *sim.Engine) { e.Until = 50 * sim.Millisecond },
			func(e *sim.Engine, err error) bool { return err == nil && e.StopReason() == "time limit" }},
		{"event budget", context.Background(), func(e *sim.Engine) { e.MaxEvents = 1000 },
			func(_ *sim.Engine, err error) bool { var r *sim.RunawayError; return errors.As(err, &r) }},
		{"cancelled", cancelled, func(*sim.Engine) {},
			func(_ *sim.Engine, err error) bool {
				return errors.Is(err, sim.ErrStopped) && errors.Is(err, context.Canceled)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, k := newTestKernel(t, nil)
			tc.limit(e)
			mustTask(t, k, "hog", 9, 1, func(tcb *TCB) {
				for {
					tcb.Work(1000)
				}
			})
			if err := k.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- e.Run(tc.ctx) }()
			select {
			case err := <-done:
				e.Close() // not on the safety net's path: Close would wait for the loop
				if !tc.check(e, err) {
					t.Errorf("run ended with %v (stop %q at %v)", err, e.StopReason(), e.Now())
				}
			case <-time.After(time.Minute):
				t.Fatal("Run has not returned after a minute: the Work loop never lets simulated time move")
			}
		})
	}
}

// A run whose tasks were created but never started (no Kernel.Start) is a
// deadlock that says so, not that the task waits for its turn on core -1.
func TestSchedulerNotStarted(t *testing.T) {
	for _, start := range []bool{false, true} {
		t.Run(fmt.Sprint("start=", start), func(t *testing.T) {
			e, k := newTestKernel(t, nil)
			defer e.Close()
			mustTask(t, k, "a", 5, 0, func(tcb *TCB) { tcb.Delay(1) })
			if start {
				if err := k.Start(); err != nil {
					t.Fatal(err)
				}
			}
			err := e.Run(context.Background())
			var dl *sim.DeadlockError
			switch {
			case start && err != nil:
				t.Errorf("started: %v, want none", err)
			case !start && (!errors.As(err, &dl) || len(dl.Waiters) != 1 || !strings.Contains(dl.Waiters[0].On, "scheduler, never started (call Kernel.Start")):
				t.Errorf("not started: %v; want a deadlock saying the scheduler was never started", err)
			}
		})
	}
}

// A task's handle used by another task (a.SemaphoreTake inside B's
// function) once acted for A while B ran, and ended in a misleading
// deadlock; used outside the simulation it was a nil-pointer panic. The
// first ends B's run and the second panics, each naming the tasks.
func TestForeignTCBRefused(t *testing.T) {
	calls := []struct {
		name string
		call func(a *TCB, m *Semaphore, mux *PortMux)
	}{
		{"SemaphoreTake", func(a *TCB, m *Semaphore, _ *PortMux) { a.SemaphoreTake(m, PortMaxDelay) }},
		{"SemaphoreGive", func(a *TCB, m *Semaphore, _ *PortMux) { a.SemaphoreGive(m) }},
		{"Work", func(a *TCB, _ *Semaphore, _ *PortMux) { a.Work(1000) }},
		{"EnterCritical", func(a *TCB, _ *Semaphore, mux *PortMux) { a.EnterCritical(mux) }},
		{"ExitCritical", func(a *TCB, _ *Semaphore, mux *PortMux) { a.ExitCritical(mux) }},
		{"Delay", func(a *TCB, _ *Semaphore, _ *PortMux) { a.Delay(1) }},
		{"NotifyGive", func(a *TCB, _ *Semaphore, _ *PortMux) { a.NotifyGive(a, 0) }},
		{"Now", func(a *TCB, _ *Semaphore, _ *PortMux) { a.Now() }},
	}
	for _, tc := range calls {
		t.Run(tc.name+" in another task", func(t *testing.T) {
			e, k := newTestKernel(t, nil)
			defer e.Close()
			m, _ := k.NewSemaphore("m", Mutex, 1, 1, 8)
			mux := k.NewPortMux("mux", 8)
			a := mustTask(t, k, "A", 5, 0, func(tcb *TCB) { tcb.Delay(5) })
			mustTask(t, k, "B", 5, 1, func(*TCB) { tc.call(a, m, mux) })
			if err := k.Start(); err != nil {
				t.Fatal(err)
			}
			err := e.Run(context.Background())
			if want := "B called a method of task A's TCB"; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("run: %v; want an error saying %q", err, want)
			}
		})
		t.Run(tc.name+" outside the simulation", func(t *testing.T) {
			e, k := newTestKernel(t, nil)
			defer e.Close()
			m, _ := k.NewSemaphore("m", Mutex, 1, 1, 8)
			mux := k.NewPortMux("mux", 8)
			a := mustTask(t, k, "A", 5, 0, func(tcb *TCB) {})
			defer func() {
				if p := fmt.Sprint(recover()); !strings.Contains(p, "task A's TCB used outside the simulation") {
					t.Errorf("panic %q; want one saying A's TCB was used outside the simulation", p)
				}
			}()
			tc.call(a, m, mux)
		})
	}
}

// xTaskCheckForTimeOut takes xKernelLock even for portMAX_DELAY (IDF tests
// the timeout inside the critical section): a check made while the other
// core holds the lock waits for it.
func TestTimeoutCheckTakesKernelLock(t *testing.T) {
	for _, ticks := range []uint32{PortMaxDelay, 5} {
		e, k := newTestKernel(t, nil)
		const hold = 24_000 // 100 us at 240 MHz
		var waited sim.Time
		mustTask(t, k, "holder", 5, 0, func(tcb *TCB) {
			tcb.EnterCritical(k.KernelLock)
			tcb.Work(hold)
			tcb.ExitCritical(k.KernelLock)
		})
		mustTask(t, k, "checker", 5, 1, func(tcb *TCB) {
			tcb.Work(hold / 10) // the holder has the lock by now
			t0 := tcb.Now()
			if k.xTaskCheckForTimeOut(tcb.Proc, tcb, ticks, k.TickCount()+ticks) {
				t.Errorf("ticks %d: timed out at once", ticks)
			}
			waited = tcb.Now() - t0
		})
		run(t, e, k)
		if min := k.SoC.Cores[1].Cycles(hold * 8 / 10); waited < min {
			t.Errorf("ticks %d: check took %v, want >= %v (waiting for xKernelLock)", ticks, waited, min)
		}
		if k.KernelLock.Contended == 0 {
			t.Errorf("ticks %d: xKernelLock never contended", ticks)
		}
	}
}

// A second waiter that finds the holder already raised above it still
// counts as having inherited (tasks.c xTaskPriorityInherit returns pdTRUE
// when the holder's base priority is below the waiter's): when both time
// out, the holder is back at its base priority.
func TestInheritanceUndoneAfterSecondWaiterTimesOut(t *testing.T) {
	e, k := newTestKernel(t, nil)
	m, _ := k.NewSemaphore("m", Mutex, 1, 1, 8)
	var during, after int
	var got1, got2 bool
	mustTask(t, k, "low", 3, 0, func(tcb *TCB) {
		tcb.SemaphoreTake(m, PortMaxDelay)
		tcb.Work(240_000 * 30) // 30 ms: both waiters have blocked by now
		tcb.Now()
		during = tcb.Priority
		tcb.Work(240_000 * 120) // 120 ms: both have timed out by now
		tcb.Now()
		after = tcb.Priority
		tcb.SemaphoreGive(m)
	})
	mustTask(t, k, "h1", 8, 0, func(tcb *TCB) {
		tcb.Delay(1)
		got1 = tcb.SemaphoreTake(m, 5)
	})
	// On the other core, so that it runs (and blocks) while low is at 8.
	mustTask(t, k, "h2", 6, 1, func(tcb *TCB) {
		tcb.Delay(2)
		got2 = tcb.SemaphoreTake(m, 8)
	})
	run(t, e, k)
	if got1 || got2 {
		t.Fatalf("takes succeeded (h1 %v, h2 %v); want both to time out", got1, got2)
	}
	if during != 8 || after != 3 {
		t.Fatalf("holder priority while both wait = %d (want 8), after both timed out = %d (want 3)", during, after)
	}
}

// A yield that keeps the running task leaves the ready lists in FIFO order:
// a lower-priority task for this core queued behind one pinned to the other
// core is not moved to the head.
func TestYieldWithoutSwitchKeepsReadyOrder(t *testing.T) {
	e, k := newTestKernel(t, nil)
	names := func(l []*TCB) []string {
		var s []string
		for _, t := range l {
			s = append(s, t.Name)
		}
		return s
	}
	var before, after []string
	var switches int
	mustTask(t, k, "hog", 9, 0, func(tcb *TCB) { tcb.Work(240_000 * 5); tcb.Now() })
	mustTask(t, k, "X", 3, 0, func(tcb *TCB) {})
	mustTask(t, k, "Y", 3, 1, func(tcb *TCB) {})
	mustTask(t, k, "A", 5, 1, func(tcb *TCB) {
		tcb.Work(1000)
		before = names(k.ready[3])
		switches = k.Switches
		k.yieldWithinAPI(tcb.Proc)
		after = names(k.ready[3])
		switches = k.Switches - switches
	})
	run(t, e, k)
	if switches != 0 || !reflect.DeepEqual(before, []string{"X", "Y"}) || !reflect.DeepEqual(after, before) {
		t.Fatalf("ready list at priority 3 %v before a yield, %v after (%d switches); want [X Y] both times, no switch", before, after, switches)
	}
}
