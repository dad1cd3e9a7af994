package esp32

import (
	"slices"
	"strings"
	"testing"

	"synclab/sim"
)

// A holder of two mutexes keeps the priority it inherited through one of
// them when a waiter on the other times out: vTaskPriorityDisinheritAfterTimeout
// lowers the holder only while it holds exactly one mutex
// (uxMutexesHeld == 1), since the priority it has may come from a waiter on
// another mutex it still holds. Lowering it anyway would let middle
// priorities preempt the holder while w1 (priority 5) waits on it.
func TestDisinheritAfterTimeoutKeepsPriorityWithOtherMutexHeld(t *testing.T) {
	e, k := newTestKernel(t, nil)
	a, _ := k.NewSemaphore("a", Mutex, 1, 1, 8)
	b, _ := k.NewSemaphore("b", Mutex, 1, 1, 8)
	var during, after, held int
	var gotB bool
	mustTask(t, k, "holder", 1, 0, func(tcb *TCB) {
		tcb.SemaphoreTake(a, PortMaxDelay)
		tcb.SemaphoreTake(b, PortMaxDelay)
		tcb.Work(240_000 * 15) // 15 ms: both waiters have blocked (1 tick = 10 ms)
		tcb.Now()
		during = tcb.Priority
		tcb.Work(240_000 * 40) // 40 ms more: w2's 2-tick timeout has passed
		tcb.Now()
		after, held = tcb.Priority, tcb.MutexesHeld
		tcb.SemaphoreGive(b)
		tcb.SemaphoreGive(a)
	})
	mustTask(t, k, "w1", 5, 1, func(tcb *TCB) {
		tcb.Delay(1)
		tcb.SemaphoreTake(a, PortMaxDelay)
		tcb.SemaphoreGive(a)
	})
	mustTask(t, k, "w2", 3, 1, func(tcb *TCB) {
		tcb.Delay(1)
		gotB = tcb.SemaphoreTake(b, 2)
	})
	run(t, e, k)
	if gotB {
		t.Fatal("w2 got b although the holder kept it past w2's timeout")
	}
	if during != 5 || after != 5 || held != 2 {
		t.Fatalf("holder's priority with w1 and w2 waiting: %d (want 5), after w2 timed out: %d holding %d mutexes (want 5 holding 2: w1 still waits on a)",
			during, after, held)
	}
}

// Waking a task of the same priority as the running one does not preempt
// it: xTaskRemoveFromEventList asks for a yield only when the unblocked task
// is strictly higher (CODE: espressif/esp-idf
// components/freertos/FreeRTOS-Kernel/tasks.c, xTaskRemoveFromEventList
// calls prvCheckForYield( pxUnblockedTCB, xCurCoreID, pdFALSE ), and
// prvCheckForYieldUsingPrioritySMP yields the current core only if
// `uxTaskPriority > pxCurrentTCB[ xCurCoreID ]->uxPriority` when
// xYieldEqualPriority is pdFALSE). The giver sends itself no yield
// interrupt and keeps its core until the next tick or its own block; the
// woken task waits in the ready list. (A yield would not switch either: the
// giver is ahead of the woken task on the list, and the selection would
// keep it.)
func TestEqualPriorityWakeDoesNotPreempt(t *testing.T) {
	e, k := newTestKernel(t, nil)
	sem, _ := k.NewSemaphore("s", Binary, 1, 0, 8)
	var giver, curAfter *TCB
	var switches, ipis int
	var tickBefore, tickAfter uint32
	var order []string
	// The waiter is first in the ready list: it runs first and blocks.
	mustTask(t, k, "waiter", 5, 0, func(tcb *TCB) {
		tcb.SemaphoreTake(sem, PortMaxDelay)
		order = append(order, tcb.Name)
	})
	giver = mustTask(t, k, "giver", 5, 0, func(tcb *TCB) {
		tickBefore, switches, ipis = tcb.TickCount(), k.Switches, k.SoC.IPIs
		tcb.SemaphoreGive(sem)
		tcb.Now()
		tickAfter, switches, ipis, curAfter = tcb.TickCount(), k.Switches-switches, k.SoC.IPIs-ipis, k.Current(0)
		order = append(order, tcb.Name)
	})
	run(t, e, k)
	if tickAfter != tickBefore {
		t.Fatalf("a tick (%d to %d) came between the give and the check: the test does not isolate the give", tickBefore, tickAfter)
	}
	if switches != 0 || ipis != 0 || curAfter != giver {
		t.Fatalf("giving to an equal-priority waiter on the same core: %d context switches, %d crosscore interrupts, core 0 runs %s; want 0, 0, giver", switches, ipis, curAfter.Name)
	}
	if want := []string{"giver", "waiter"}; !slices.Equal(order, want) {
		t.Fatalf("finished in order %v, want %v", order, want)
	}
}

// A core that arrives at a spinlock while the other core holds it is
// counted as contended, with the time it spun, whether or not IDF's asserts
// re-read the owner word before the release. The holder's pending cycles
// (its critical section's body) run before the releasing store, so the
// model's owner mirror must say "held" throughout them.
func TestSpinOnHeldLockCountsAsContended(t *testing.T) {
	for _, asserts := range []float64{0, 1} {
		e, k := newTestKernel(t, map[string]float64{KeyAsserts: asserts})
		m := k.NewPortMux("m", 8)
		const hold = 24_000 // 100 us at 240 MHz
		mustTask(t, k, "holder", 5, 0, func(tcb *TCB) {
			tcb.EnterCritical(m)
			tcb.Work(hold)
			tcb.ExitCritical(m)
		})
		mustTask(t, k, "spinner", 5, 1, func(tcb *TCB) {
			tcb.Work(hold / 10) // the holder has the lock by now
			tcb.EnterCritical(m)
			tcb.ExitCritical(m)
		})
		run(t, e, k)
		minSpin := k.SoC.Cores[1].Cycles(hold * 8 / 10)
		if m.Acquires != 2 || m.Contended != 1 || m.SpinTime < minSpin {
			t.Errorf("asserts %g: %d acquisitions, %d contended, %v spun; want 2, 1, >= %v",
				asserts, m.Acquires, m.Contended, m.SpinTime, minSpin)
		}
	}
}

// esp_crosscore_isr clears the reason word once it has read it (crosscore_int.c:
// `my_reason_val = *my_reason; *my_reason = 0;` under reason_spinlock), so a
// yield request is handled once. When the woken task runs on core 1, the
// crosscore interrupt that switched to it has left core 1's reason word at 0.
func TestCrosscoreISRClearsReason(t *testing.T) {
	e, k := newTestKernel(t, nil)
	reason := func(c int) uint64 { return k.SoC.Mem.Peek(k.cpu[c].reasonAddr) }
	var atWake uint64
	var woke bool
	waiter := mustTask(t, k, "waiter", 5, 1, func(tcb *TCB) {
		tcb.NotifyTake(0, true, PortMaxDelay)
		woke, atWake = true, reason(1)
	})
	mustTask(t, k, "giver", 5, 0, func(tcb *TCB) {
		tcb.Delay(1)
		tcb.NotifyGive(waiter, 0)
	})
	run(t, e, k)
	if !woke {
		t.Fatal("the waiter never woke")
	}
	if atWake != 0 {
		t.Fatalf("core 1's crosscore reason word is %#x when the woken task runs, want 0 (cleared by the ISR)", atWake)
	}
	for c := range NumCores {
		if r := reason(c); r != 0 {
			t.Errorf("core %d's crosscore reason word is %#x at the end, want 0", c, r)
		}
	}
}

// Only core 0's tick handler runs xTaskIncrementTick; core 1's runs
// xTaskIncrementTickOtherCores, which time-slices but leaves xTickCount
// alone (CODE: espressif/esp-idf components/freertos/port_systick.c,
// xPortSysTickHandler: "Multi-core IDF FreeRTOS requires that core 0 calls
// xTaskIncrementTick(), core 1 calls xTaskIncrementTickOtherCores()"). So
// the tick count goes on while core 1 has interrupts masked for 55 ms, one
// per 10 ms tick.
func TestTickCountAdvancesWhileCore1Masked(t *testing.T) {
	e, k := newTestKernel(t, nil)
	m := k.NewPortMux("m", 8)
	var before, after uint32
	mustTask(t, k, "masked", 5, 1, func(tcb *TCB) {
		tcb.EnterCritical(m)
		before = tcb.TickCount()
		tcb.Work(240_000 * 55) // 55 ms at 240 MHz: ticks at 10, 20, 30, 40 and 50 ms
		tcb.Now()
		after = tcb.TickCount()
		tcb.ExitCritical(m)
	})
	run(t, e, k)
	if after-before != 5 {
		t.Fatalf("tick count went from %d to %d during core 1's 55 ms critical section, want 5 ticks (core 0 counts them)", before, after)
	}
}

// ulNotifiedValue is a uint32_t: eIncrement on 0xFFFFFFFF wraps it to 0
// (tasks.c: ( pxTCB->ulNotifiedValue[ uxIndexToNotify ] )++), so a
// ulTaskNotifyTake after the wrap finds no count: it blocks its full
// timeout and returns 0, and the value stays 0. (The value read back
// through NotifyValue is truncated to 32 bits either way; the take is what
// shows a count carried into bit 32.)
func TestNotifyIncrementWrapsToAnEmptyCount(t *testing.T) {
	e, k := newTestKernel(t, nil)
	var got, before, after uint32
	target := mustTask(t, k, "target", 5, 1, func(tcb *TCB) {
		tcb.Delay(3)
		before = tcb.TickCount()
		got = tcb.NotifyTake(0, false, 3)
		after = tcb.TickCount()
	})
	k.SoC.Mem.Poke(target.valueAddr(0), 0xFFFFFFFF)
	mustTask(t, k, "giver", 5, 0, func(tcb *TCB) {
		tcb.Delay(1)
		tcb.NotifyGive(target, 0)
	})
	run(t, e, k)
	if got != 0 || after-before != 3 || target.NotifyValue(0) != 0 {
		t.Errorf("take after the wrap returned %d after %d ticks, value %#x; want 0 after its 3-tick timeout, value 0",
			got, after-before, target.NotifyValue(0))
	}
}

// A give to a full semaphore fails and leaves the count at its maximum
// (queue.c: uxMessagesWaiting < uxLength, else errQUEUE_FULL), from a task
// (xSemaphoreGive) and from an ISR (xSemaphoreGiveFromISR): a binary
// semaphore given twice holds one, a counting semaphore of 3 starting at 2
// takes one more give, not two.
func TestGiveToAFullSemaphoreFails(t *testing.T) {
	for _, c := range []struct {
		name         string
		kind         SemKind
		max, initial uint64
		fromISR      bool
		want         []bool // each give's result
		wantCount    uint64
	}{
		{"binary", Binary, 1, 0, false, []bool{true, false}, 1},
		{"counting", Counting, 3, 2, false, []bool{true, false}, 3},
		{"binary from ISR", Binary, 1, 0, true, []bool{true, false}, 1},
		{"counting from ISR", Counting, 3, 2, true, []bool{true, false}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, k := newTestKernel(t, nil)
			s, err := k.NewSemaphore("s", c.kind, c.max, c.initial, 8)
			if err != nil {
				t.Fatal(err)
			}
			var got []bool
			if c.fromISR {
				k.startPeripheral(1000, 50)
				k.OnPeripheral = func(p *sim.Proc) {
					if len(got) < len(c.want) {
						ok, _ := k.SemaphoreGiveFromISR(p, s)
						got = append(got, ok)
					}
				}
				mustTask(t, k, "busy", 5, 0, func(tcb *TCB) { tcb.Delay(5) })
			} else {
				mustTask(t, k, "giver", 5, 0, func(tcb *TCB) {
					for range c.want {
						got = append(got, tcb.SemaphoreGive(s))
					}
				})
			}
			run(t, e, k)
			if !slices.Equal(got, c.want) || s.Count() != c.wantCount {
				t.Errorf("gives returned %v, count %d; want %v, count %d", got, s.Count(), c.want, c.wantCount)
			}
		})
	}
}

// xSemaphoreCreateCounting(max, initial) accepts initial == max (a full
// semaphore: max takes succeed, the next fails) and refuses initial > max
// and max 0, naming the semaphore (semphr.h: configASSERT( uxInitialCount
// <= uxMaxCount ), configASSERT( uxMaxCount != 0 )).
func TestCountingSemaphoreCreatedFull(t *testing.T) {
	e, k := newTestKernel(t, nil)
	s, err := k.NewSemaphore("pool", Counting, 3, 3, 8)
	if err != nil {
		t.Fatalf("counting(3, 3): %v", err)
	}
	var got []bool
	mustTask(t, k, "taker", 5, 0, func(tcb *TCB) {
		for range 4 {
			got = append(got, tcb.SemaphoreTake(s, 0))
		}
	})
	run(t, e, k)
	if want := []bool{true, true, true, false}; !slices.Equal(got, want) || s.Count() != 0 {
		t.Errorf("takes of a full counting(3) returned %v, count %d; want %v, 0", got, s.Count(), want)
	}
	for _, c := range []struct{ max, initial uint64 }{{3, 4}, {0, 0}} {
		if _, err := k.NewSemaphore("bad", Counting, c.max, c.initial, 8); err == nil || !strings.Contains(err.Error(), `"bad"`) {
			t.Errorf("counting(%d, %d): err %v, want one naming the semaphore", c.max, c.initial, err)
		}
	}
}

// IDF's scheduler searches a ready list from its head and moves the task it
// selects to the tail, and the running task stays on the list
// (taskSelectHighestPriorityTaskSMP: "We always start searching from the
// head of the list", then uxListRemove and vListInsertEnd of the selected
// task; DOC: ESP-IDF v5.1 Programming Guide, "FreeRTOS (IDF)", Time
// Slicing: "Best Effort Round Robin"). So a task readied behind the running
// one waits a slice longer than vanilla FreeRTOS's round robin would make
// it: A, B and C share core 0 at one priority, C sleeps until tick 1, and
// the slices go A, B, A, C, B, A, C (vanilla: A, B, C, A, B, C, A).
func TestBestEffortRoundRobin(t *testing.T) {
	e, k := newTestKernel(t, nil)
	busy := busyUntilTick(8)
	mustTask(t, k, "C", 5, 0, func(tcb *TCB) {
		tcb.Delay(1)
		busy(tcb)
	})
	mustTask(t, k, "A", 5, 0, busy)
	mustTask(t, k, "B", 5, 0, busy)
	got := sampleCore0(e, k, 7)
	run(t, e, k)
	if want := []string{"A", "B", "A", "C", "B", "A", "C"}; !slices.Equal(*got, want) {
		t.Fatalf("core 0 ran %v in tick periods 0-6, want %v", *got, want)
	}
}

// Core 0's tick readies a task whose timeout expired without a crosscore
// yield to core 1 (xTaskIncrementTick checks only core 0); core 1's own tick
// finds it, since xTaskIncrementTickOtherCores switches when
// uxTopReadyPriority exceeds its task's priority. B, pinned to core 1,
// preempts A there at tick 1 with no crosscore interrupt sent.
func TestTickWakeWaitsForOwnCoreTick(t *testing.T) {
	e, k := newTestKernel(t, nil)
	var woke sim.Time
	var ipis int
	mustTask(t, k, "B", 9, 1, func(tcb *TCB) {
		ipis = k.SoC.IPIs
		tcb.Delay(1)
		// One crosscore interrupt: vTaskDelay's own portYIELD_WITHIN_API.
		woke, ipis = tcb.Now(), k.SoC.IPIs-ipis-1
	})
	mustTask(t, k, "A", 5, 1, busyUntilTick(3))
	run(t, e, k)
	tick := tickPeriod(k)
	if ipis != 0 || woke < tick || woke > tick+20*sim.Microsecond {
		t.Fatalf("B woke at %v, with %d crosscore interrupts besides its own yield; want within 20 us of tick 1 (%v), by core 1's own tick, with none", woke, ipis, tick)
	}
}

// vTaskDelay(0) yields: "A delay time of zero just forces a reschedule"
// (tasks.c, vTaskDelay calls portYIELD_WITHIN_API whatever the delay). Two
// tasks of one priority on core 0 that each add to a shared log and call
// vTaskDelay(0) alternate at every call, well within one tick.
func TestDelayZeroYields(t *testing.T) {
	e, k := newTestKernel(t, nil)
	var log []string
	for _, name := range []string{"A", "B"} {
		mustTask(t, k, name, 5, 0, func(tcb *TCB) {
			for range 3 {
				log = append(log, name)
				tcb.Delay(0)
			}
		})
	}
	run(t, e, k)
	if want := []string{"A", "B", "A", "B", "A", "B"}; !slices.Equal(log, want) || k.TickCount() != 0 {
		t.Fatalf("ran %v by tick %d, want %v before the first tick", log, k.TickCount(), want)
	}
}

// A give from an interrupt that wakes a task outranking the interrupted one
// marks a yield pending (xTaskRemoveFromEventList: "Mark that a yield is
// pending in case the user is not using the xHigherPriorityTaskWoken
// parameter"), and the next tick switches for it (xTaskIncrementTick
// checks xYieldPending). A handler that ignores xHigherPriorityTaskWoken
// (no portYIELD_FROM_ISR) delays H to core 0's next tick, not for ever.
func TestYieldPendingTakenAtTick(t *testing.T) {
	e, k := newTestKernel(t, nil)
	s, _ := k.NewSemaphore("s", Binary, 1, 0, 8)
	var gave, woke sim.Time
	k.startPeripheral(1000, 50)
	k.OnPeripheral = func(p *sim.Proc) {
		if gave == 0 {
			k.SemaphoreGiveFromISR(p, s) // and no YieldFromISR
			gave = p.Now()
		}
	}
	mustTask(t, k, "H", 9, 0, func(tcb *TCB) {
		tcb.SemaphoreTake(s, PortMaxDelay)
		woke = tcb.Now()
	})
	mustTask(t, k, "L", 5, 0, busyUntilTick(3))
	run(t, e, k)
	tick := tickPeriod(k)
	if gave == 0 || gave >= tick || woke < tick || woke > tick+20*sim.Microsecond {
		t.Fatalf("given at %v, H ran at %v; want a give before tick 1 and H within 20 us of it (%v)", gave, woke, tick)
	}
}

// The scheduler walks a ready list with its pxIndex; when core 1 finds no
// task it may run on a list (all pinned to core 0), the walk leaves pxIndex
// on the list's first task, and a task readied before core 0's next
// selection goes in front of it (list.c vListInsertEnd inserts before
// pxIndex), so it runs next. A and B share core 0 at one priority, core 1
// idles and walks their list at each of its ticks; C, of their priority,
// is readied by an interrupt just after tick 1 and runs in period 2, ahead
// of A (with C at the tail: A, B, A, B, C).
func TestReadiedAheadOfAWalkedList(t *testing.T) {
	e, k := newTestKernel(t, nil)
	s, _ := k.NewSemaphore("s", Binary, 1, 0, 8)
	given := false
	k.startPeripheral(1000, 50)
	k.OnPeripheral = func(p *sim.Proc) {
		if !given && k.TickCount() == 1 {
			given = true
			k.SemaphoreGiveFromISR(p, s) // C does not outrank B: no yield
		}
	}
	busy := busyUntilTick(6)
	mustTask(t, k, "C", 5, 0, func(tcb *TCB) {
		tcb.SemaphoreTake(s, PortMaxDelay)
		busy(tcb)
	})
	mustTask(t, k, "A", 5, 0, busy)
	mustTask(t, k, "B", 5, 0, busy)
	got := sampleCore0(e, k, 5)
	run(t, e, k)
	if want := []string{"A", "B", "C", "A", "B"}; !given || !slices.Equal(*got, want) {
		t.Fatalf("given %v; core 0 ran %v in tick periods 0-4, want %v", given, *got, want)
	}
}

// busyUntilTick is a task that works in 10 us steps until the tick count
// reaches n.
func busyUntilTick(n uint32) func(*TCB) {
	return func(tcb *TCB) {
		for tcb.TickCount() < n {
			tcb.Work(2_400)
			tcb.Now()
		}
	}
}

// tickPeriod is the kernel's tick period.
func tickPeriod(k *Kernel) sim.Time { return sim.Second / sim.Time(k.Config().TickHz) }

// sampleCore0 records the task core 0 runs in the middle of each of the
// first n tick periods.
func sampleCore0(e *sim.Engine, k *Kernel, n int) *[]string {
	var got []string
	tick := tickPeriod(k)
	for i := range n {
		e.At(sim.Time(i)*tick+tick/2, sim.NewEvent(func() { got = append(got, k.Current(0).Name) }, false))
	}
	return &got
}
