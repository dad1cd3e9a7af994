package esp32

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"synclab/sim"
)

// Semantic tests of the FreeRTOS API the model offers beyond what the
// experiments call: recursive mutexes, xTaskNotify with its actions,
// xTaskNotifyWait, indexed notifications and the FromISR variants.

// runErr starts the scheduler and runs to the end, returning the run's error.
func runErr(t *testing.T, e *sim.Engine, k *Kernel) error {
	t.Helper()
	if err := k.Start(); err != nil {
		t.Fatal(err)
	}
	e.MaxEvents = 50_000_000
	err := e.Run(context.Background())
	e.Close()
	return err
}

// A recursive mutex counts its holder's takes: another task gets it only
// after as many gives; a task that does not hold it cannot give it.
func TestRecursiveMutexCounts(t *testing.T) {
	e, k := newTestKernel(t, nil)
	m, err := k.NewSemaphore("rm", RecursiveMutex, 0, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	var (
		r, w                                   *TCB
		took1, took2, gave1, gave2, gaveExtra  bool
		holderAfter1, countAfter1, waitersOK   bool
		nonHolderGive, wGot, secondGiveDone    bool
		wGotAfterSecondGive, holderAfterGiveOK bool
	)
	r = mustTask(t, k, "R", 5, 0, func(tcb *TCB) {
		took1 = tcb.SemaphoreTakeRecursive(m, PortMaxDelay)
		took2 = tcb.SemaphoreTakeRecursive(m, 0)
		tcb.Work(240_000 * 30) // 30 ms: W has blocked on the mutex by now
		tcb.Now()
		waitersOK = reflect.DeepEqual(m.Waiters(), []*TCB{w})
		gave1 = tcb.SemaphoreGiveRecursive(m)
		holderAfter1, countAfter1 = m.Holder() == r, m.Count() == 0
		tcb.Work(240_000 * 10) // W must still wait
		tcb.Now()
		secondGiveDone = true
		gave2 = tcb.SemaphoreGiveRecursive(m)
		gaveExtra = tcb.SemaphoreGiveRecursive(m) // no longer the holder
	})
	w = mustTask(t, k, "W", 5, 1, func(tcb *TCB) {
		tcb.Delay(1)
		nonHolderGive = tcb.SemaphoreGiveRecursive(m)
		wGot = tcb.SemaphoreTakeRecursive(m, PortMaxDelay)
		wGotAfterSecondGive = secondGiveDone
		holderAfterGiveOK = m.Holder() == w
		tcb.SemaphoreGiveRecursive(m)
	})
	run(t, e, k)
	if !took1 || !took2 {
		t.Errorf("holder's takes: %v, %v; want both true", took1, took2)
	}
	if nonHolderGive {
		t.Error("a task not holding the recursive mutex gave it")
	}
	if !waitersOK {
		t.Errorf("waiters while R holds it: %v, want [W]", m.Waiters())
	}
	if !gave1 || !holderAfter1 || !countAfter1 {
		t.Errorf("first give: ok %v, R still holder %v, count still 0 %v; want all true", gave1, holderAfter1, countAfter1)
	}
	if !gave2 || !wGot || !wGotAfterSecondGive || !holderAfterGiveOK {
		t.Errorf("second give %v; W got it %v, only after the second give %v, as holder %v; want all true", gave2, wGot, wGotAfterSecondGive, holderAfterGiveOK)
	}
	if gaveExtra {
		t.Error("a third give after two takes succeeded")
	}
	if m.Holder() != nil || m.Count() != 1 || len(m.Waiters()) != 0 {
		t.Errorf("at the end: holder %v, count %d, waiters %v; want nil, 1, none", m.Holder(), m.Count(), m.Waiters())
	}
}

// xSemaphoreTake on a recursive mutex is refused: the run fails naming the
// right call (SemaphoreTake).
func TestTakeOnRecursiveMutexFails(t *testing.T) {
	e, k := newTestKernel(t, nil)
	m, _ := k.NewSemaphore("rm", RecursiveMutex, 0, 0, 8)
	mustTask(t, k, "t", 5, 0, func(tcb *TCB) { tcb.SemaphoreTake(m, PortMaxDelay) })
	err := runErr(t, e, k)
	if err == nil || !strings.Contains(err.Error(), "xSemaphoreTakeRecursive") || !strings.Contains(err.Error(), `"rm"`) {
		t.Fatalf("err = %v, want a failure naming xSemaphoreTakeRecursive and the mutex", err)
	}
}

// A mutex given by a task that does not hold it: pdFAIL, the holder keeps it.
func TestMutexGiveByNonHolderFails(t *testing.T) {
	e, k := newTestKernel(t, nil)
	m, _ := k.NewSemaphore("m", Mutex, 1, 1, 8)
	var h *TCB
	var gave bool
	h = mustTask(t, k, "holder", 5, 0, func(tcb *TCB) {
		tcb.SemaphoreTake(m, PortMaxDelay)
		tcb.Delay(3)
		tcb.SemaphoreGive(m)
	})
	mustTask(t, k, "other", 5, 1, func(tcb *TCB) {
		tcb.Delay(1)
		gave = tcb.SemaphoreGive(m)
		if m.Holder() != h || m.Count() != 0 {
			t.Errorf("after a non-holder's give: holder %v, count %d; want holder, 0", m.Holder(), m.Count())
		}
	})
	run(t, e, k)
	if gave {
		t.Error("non-holder's give succeeded")
	}
}

// xTaskNotify applies each eNotifyAction to the target's value and leaves
// the notification pending; eSetValueWithoutOverwrite fails on a pending one.
func TestNotifyActions(t *testing.T) {
	cases := []struct {
		name           string
		action         NotifyAction
		pending        bool
		initial, value uint32
		wantOK         bool
		want           uint32
	}{
		{"eNoAction", NoAction, false, 0x5, 0xF0, true, 0x5},
		{"eSetBits", SetBits, false, 0x5, 0xF0, true, 0xF5},
		{"eSetBits pending", SetBits, true, 0x5, 0xF0, true, 0xF5},
		{"eIncrement", Increment, false, 7, 100, true, 8},
		{"eIncrement wraps", Increment, false, 0xFFFFFFFF, 0, true, 0},
		{"eSetValueWithOverwrite", SetValueWithOverwrite, false, 1, 42, true, 42},
		{"eSetValueWithOverwrite pending", SetValueWithOverwrite, true, 1, 42, true, 42},
		{"eSetValueWithoutOverwrite", SetValueWithoutOverwrite, false, 1, 42, true, 42},
		{"eSetValueWithoutOverwrite pending", SetValueWithoutOverwrite, true, 1, 42, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, k := newTestKernel(t, nil)
			target := mustTask(t, k, "target", 5, 1, func(tcb *TCB) { tcb.Delay(3) })
			k.SoC.Mem.Poke(target.valueAddr(0), uint64(c.initial))
			if c.pending {
				k.SoC.Mem.Poke(target.stateAddr(0), notificationReceived)
			}
			var ok bool
			mustTask(t, k, "notifier", 5, 0, func(tcb *TCB) {
				tcb.Delay(1)
				ok = tcb.Notify(target, 0, c.value, c.action)
			})
			run(t, e, k)
			if ok != c.wantOK || target.NotifyValue(0) != c.want {
				t.Errorf("returned %v, value %#x; want %v, %#x", ok, target.NotifyValue(0), c.wantOK, c.want)
			}
			if st := k.SoC.Mem.Peek(target.stateAddr(0)); st != notificationReceived {
				t.Errorf("notify state %d, want pending (%d)", st, notificationReceived)
			}
		})
	}
}

// xTaskNotifyWait clears the entry bits only when nothing is pending, returns
// the value before the exit clear, and clears the exit bits only when a
// notification arrived.
func TestNotifyWaitClearBits(t *testing.T) {
	cases := []struct {
		name              string
		pending, notify   bool
		ticks             uint32
		wantGot           bool
		wantRet, wantLeft uint32
	}{
		// 0xFF, entry clears 0x0F, a notification sets 0x100, exit clears 0xF0.
		{"blocks, notified", false, true, PortMaxDelay, true, 0x1F0, 0x100},
		// Pending: no entry clear, no wait.
		{"pending", true, false, PortMaxDelay, true, 0xFF, 0x0F},
		// Nothing comes: entry bits cleared, exit bits not.
		{"times out", false, false, 2, false, 0xF0, 0xF0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, k := newTestKernel(t, nil)
			var got bool
			var ret uint32
			rx := mustTask(t, k, "rx", 5, 1, func(tcb *TCB) {
				got, ret = tcb.NotifyWait(0, 0x0F, 0xF0, c.ticks)
			})
			k.SoC.Mem.Poke(rx.valueAddr(0), 0xFF)
			if c.pending {
				k.SoC.Mem.Poke(rx.stateAddr(0), notificationReceived)
			}
			mustTask(t, k, "tx", 5, 0, func(tcb *TCB) {
				tcb.Delay(1)
				if c.notify {
					tcb.Notify(rx, 0, 0x100, SetBits)
				}
			})
			run(t, e, k)
			if got != c.wantGot || ret != c.wantRet || rx.NotifyValue(0) != c.wantLeft {
				t.Errorf("got %v, returned %#x, left %#x; want %v, %#x, %#x", got, ret, rx.NotifyValue(0), c.wantGot, c.wantRet, c.wantLeft)
			}
			if st := k.SoC.Mem.Peek(rx.stateAddr(0)); st != notWaitingNotification {
				t.Errorf("notify state %d after the wait, want not waiting (%d)", st, notWaitingNotification)
			}
		})
	}
}

// xTaskNotifyWait with a timeout of N ticks returns pdFALSE N ticks later.
func TestNotifyWaitTimeoutExactTicks(t *testing.T) {
	for _, hz := range []float64{100, 1000} {
		for _, n := range []uint32{1, 5} {
			e, k := newTestKernel(t, map[string]float64{KeyTickHz: hz})
			var got bool
			var before, after uint32
			mustTask(t, k, "t", 5, 1, func(tcb *TCB) {
				tcb.Delay(1) // start between ticks
				tcb.Work(1000)
				before = tcb.TickCount()
				got, _ = tcb.NotifyWait(0, 0, 0, n)
				after = tcb.TickCount()
			})
			run(t, e, k)
			if got || after-before != n {
				t.Errorf("HZ %g: wait(%d ticks) = %v after %d ticks; want false after %d", hz, n, got, after-before, n)
			}
		}
	}
}

// A notification to one index does not wake a task waiting on another
// (configTASK_NOTIFICATION_ARRAY_ENTRIES > 1); one to its index does.
func TestIndexedNotifyWakesOnlyItsIndex(t *testing.T) {
	for _, c := range []struct {
		idx      int
		wantGot  bool
		wantWait uint32 // ticks the wait took
	}{{0, false, 10}, {1, true, 1}} {
		e, k := newTestKernel(t, map[string]float64{KeyNotifyEntries: 2})
		var got bool
		var ret, waited uint32
		rx := mustTask(t, k, "rx", 5, 1, func(tcb *TCB) {
			before := tcb.TickCount()
			got, ret = tcb.NotifyWait(1, 0, 0, 10)
			waited = tcb.TickCount() - before
		})
		mustTask(t, k, "tx", 5, 0, func(tcb *TCB) {
			tcb.Delay(1)
			tcb.Notify(rx, c.idx, 7, SetValueWithOverwrite)
		})
		run(t, e, k)
		if got != c.wantGot || waited != c.wantWait {
			t.Errorf("notify index %d, wait on 1: got %v after %d ticks; want %v after %d", c.idx, got, waited, c.wantGot, c.wantWait)
		}
		if rx.NotifyValue(c.idx) != 7 || rx.NotifyValue(1-c.idx) != 0 || (c.wantGot && ret != 7) {
			t.Errorf("notify index %d: values [%d %d], returned %d; want 7 only at index %d", c.idx, rx.NotifyValue(0), rx.NotifyValue(1), ret, c.idx)
		}
	}
}

// vTaskNotifyGiveFromISR and xTaskNotifyFromISR set
// higher-priority-task-woken only when they wake a task that outranks the
// interrupted one; a target not waiting for a notification is not woken.
func TestNotifyFromISRWokenOnlyWhenOutranked(t *testing.T) {
	for _, c := range []struct {
		name       string
		give       bool // vTaskNotifyGiveFromISR, else xTaskNotifyFromISR(eSetBits 0x4)
		waiterPrio int
		waits      bool
		want       bool
	}{
		{"give, outranks", true, 12, true, true},
		{"give, outranked", true, 5, true, false},
		{"give, not waiting", true, 12, false, false},
		{"notify, outranks", false, 12, true, true},
		{"notify, outranked", false, 5, true, false},
		{"notify, not waiting", false, 12, false, false},
	} {
		e, k := newTestKernel(t, nil)
		var running, waiter *TCB
		recorded, woken, ok := false, false, false
		k.startPeripheral(1000, 50)
		k.OnPeripheral = func(p *sim.Proc) {
			if recorded || k.Current(0) != running {
				return
			}
			recorded = true
			if c.give {
				ok, woken = true, k.NotifyGiveFromISR(p, waiter, 0)
			} else {
				ok, woken = k.NotifyFromISR(p, waiter, 0, 0x4, SetBits)
			}
			k.YieldFromISR(p, woken)
		}
		var got uint32
		waiter = mustTask(t, k, "waiter", c.waiterPrio, 0, func(tcb *TCB) {
			if !c.waits {
				tcb.Delay(3) // blocked, but not on a notification
				return
			}
			if c.give {
				got = tcb.NotifyTake(0, true, PortMaxDelay)
			} else {
				_, got = tcb.NotifyWait(0, 0, 0, PortMaxDelay)
			}
		})
		running = mustTask(t, k, "busy", 10, 0, func(tcb *TCB) {
			tcb.Delay(1)
			tcb.Work(240_000 * 5)
			tcb.Now()
		})
		run(t, e, k)
		if !recorded || !ok || woken != c.want {
			t.Errorf("%s: waiter priority %d under running priority 10: notified %v (ok %v), higher-priority-task-woken %v, want %v", c.name, c.waiterPrio, recorded, ok, woken, c.want)
		}
		wantGot := map[bool]uint32{true: 1, false: 4}[c.give]
		if c.waits && got != wantGot {
			t.Errorf("%s: the waiter received %d, want %d", c.name, got, wantGot)
		}
	}
}

// Kernel.Idle is each core's idle task: priority 0, pinned to its core, the
// current task while its core has nothing else to run.
func TestIdleTasks(t *testing.T) {
	e, k := newTestKernel(t, nil)
	var cur0 *TCB
	mustTask(t, k, "t", 5, 1, func(tcb *TCB) {
		tcb.Work(24_000)
		tcb.Now()
		cur0 = k.Current(0)
	})
	run(t, e, k)
	for c := range NumCores {
		idle := k.Idle(c)
		if idle == nil || idle.Priority != idlePriority || idle.BasePriority != idlePriority || idle.Affinity != c {
			t.Fatalf("core %d idle task %+v: want priority 0, affinity %d", c, idle, c)
		}
	}
	if cur0 != k.Idle(0) {
		t.Errorf("core 0 ran %v with nothing to do, want its idle task", cur0)
	}
}

// The model's notification slots hold a TCB's per-index state (NotifyStateBytes)
// without overlapping; the PSRAM window is whole cache lines (PSRAMLine).
func TestLayoutConstants(t *testing.T) {
	e, k := newTestKernel(t, map[string]float64{KeyNotifyEntries: 3})
	a := mustTask(t, k, "a", 5, 0, func(*TCB) {})
	b := mustTask(t, k, "b", 5, 0, func(*TCB) {})
	var ranges [][2]sim.Addr
	for _, tcb := range []*TCB{a, b} {
		for i := range 3 {
			// value word then state byte: NotifyStateBytes from the value's start
			if tcb.stateAddr(i)-tcb.valueAddr(i) < 4 || tcb.stateAddr(i)+1-tcb.valueAddr(i) > 16 || NotifyStateBytes > 16 {
				t.Fatalf("%s index %d: value at %#x, state at %#x do not fit a %d-byte slot", tcb.Name, i, tcb.valueAddr(i), tcb.stateAddr(i), NotifyStateBytes)
			}
			ranges = append(ranges, [2]sim.Addr{tcb.valueAddr(i), tcb.valueAddr(i) + 16})
		}
	}
	for i := range ranges {
		for j := range i {
			if ranges[i][0] < ranges[j][1] && ranges[j][0] < ranges[i][1] {
				t.Fatalf("notification slots %v and %v overlap", ranges[j], ranges[i])
			}
		}
	}
	if PSRAMBase%PSRAMLine != 0 || PSRAMSize%PSRAMLine != 0 {
		t.Errorf("PSRAM window %#x+%#x is not whole %d-byte lines", PSRAMBase, PSRAMSize, PSRAMLine)
	}
	run(t, e, k)
}
