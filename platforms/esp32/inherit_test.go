package esp32

import (
	"slices"
	"testing"
)

// A holder that inherited a waiter's priority keeps it while it still holds
// another mutex, and drops to its base priority with the last give
// (tasks.c xTaskPriorityDisinherit: "Only disinherit if no other mutexes are
// held"). Kills the mutant that disinherits regardless of MutexesHeld.
func TestDisinheritWaitsForTheLastMutex(t *testing.T) {
	e, k := newTestKernel(t, nil)
	a, _ := k.NewSemaphore("a", Mutex, 1, 1, 8)
	b, _ := k.NewSemaphore("b", Mutex, 1, 1, 8)
	var afterA, afterB int
	mustTask(t, k, "low", 3, 0, func(tcb *TCB) {
		tcb.SemaphoreTake(a, PortMaxDelay)
		tcb.SemaphoreTake(b, PortMaxDelay)
		tcb.Work(240_000 * 25) // 25 ms: high blocks on a meanwhile
		tcb.SemaphoreGive(a)
		afterA = tcb.Priority
		tcb.SemaphoreGive(b)
		afterB = tcb.Priority
	})
	mustTask(t, k, "high", 8, 1, func(tcb *TCB) {
		tcb.Delay(1)
		tcb.SemaphoreTake(a, PortMaxDelay)
		tcb.SemaphoreGive(a)
	})
	run(t, e, k)
	if afterA != 8 || afterB != 3 {
		t.Fatalf("low's priority after giving a: %d (want 8, it still holds b), after giving b: %d (want 3)", afterA, afterB)
	}
}

// When an inheriting waiter times out, the holder falls to the highest
// priority of the waiters that remain, not to its base priority
// (vTaskPriorityDisinheritAfterTimeout). Kills the mutant that ignores the
// remaining waiters.
func TestDisinheritAfterTimeoutKeepsRemainingWaiters(t *testing.T) {
	e, k := newTestKernel(t, nil)
	m, _ := k.NewSemaphore("m", Mutex, 1, 1, 8)
	var during, after int
	var gotHigh bool
	mustTask(t, k, "low", 3, 0, func(tcb *TCB) {
		tcb.SemaphoreTake(m, PortMaxDelay)
		tcb.Work(240_000 * 15) // 15 ms: both waiters have blocked (1 tick = 10 ms)
		tcb.Now()
		during = tcb.Priority
		tcb.Work(240_000 * 40) // 40 ms more: high's 2-tick timeout has passed
		tcb.Now()
		after = tcb.Priority
		tcb.SemaphoreGive(m)
	})
	mustTask(t, k, "high", 8, 1, func(tcb *TCB) {
		tcb.Delay(1)
		gotHigh = tcb.SemaphoreTake(m, 2)
	})
	mustTask(t, k, "mid", 6, 1, func(tcb *TCB) {
		tcb.Delay(1)
		tcb.SemaphoreTake(m, PortMaxDelay)
		tcb.SemaphoreGive(m)
	})
	run(t, e, k)
	if gotHigh {
		t.Fatal("high got the mutex although low held it past high's timeout")
	}
	if during != 8 || after != 6 {
		t.Fatalf("low's priority with high waiting: %d (want 8), after high timed out: %d (want 6, mid still waits)", during, after)
	}
}

// A holder that inherits a priority while it is itself blocked on another
// semaphore keeps its place in that semaphore's waiting list: tasks.c's
// xTaskPriorityInherit changes only the value of its event list item, and
// xTaskRemoveFromEventList wakes the list's head. The new value orders the
// waiters that come later (vListInsert walks past the items of lower or
// equal value). Here H (3) holds mutex m and waits on s behind W (5); T (8)
// then blocks on m, lifting H to 8 where it stands; X (4) then waits on s,
// and goes behind H (at 3, H would have been behind X). The gives of s wake
// W, H, X.
func TestInheritanceKeepsTheWaitListOrder(t *testing.T) {
	e, k := newTestKernel(t, nil)
	m, err := k.NewSemaphore("m", Mutex, 1, 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	s, err := k.NewSemaphore("s", Binary, 1, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	var order, waiting []string
	take := func(tcb *TCB) {
		tcb.SemaphoreTake(s, PortMaxDelay)
		order = append(order, tcb.Name)
	}
	h := mustTask(t, k, "H", 3, 0, func(tcb *TCB) {
		tcb.SemaphoreTake(m, PortMaxDelay)
		take(tcb)
		tcb.SemaphoreGive(m)
	})
	w := mustTask(t, k, "W", 5, 0, func(tcb *TCB) {
		tcb.Delay(1)
		take(tcb)
	})
	mustTask(t, k, "T", 8, 0, func(tcb *TCB) {
		tcb.Delay(2)
		tcb.SemaphoreTake(m, PortMaxDelay)
		tcb.SemaphoreGive(m)
	})
	mustTask(t, k, "X", 4, 0, func(tcb *TCB) {
		tcb.Delay(3)
		take(tcb)
	})
	mustTask(t, k, "G", 9, 0, func(tcb *TCB) {
		tcb.Delay(4)
		for _, x := range s.Waiters() {
			waiting = append(waiting, x.Name)
		}
		for range 3 {
			tcb.SemaphoreGive(s)
			tcb.Delay(1)
		}
	})
	run(t, e, k)
	if want := []string{"W", "H", "X"}; !slices.Equal(waiting, want) || !slices.Equal(order, want) {
		t.Errorf("waiting on s %v, took s in order %v; want %v in both", waiting, order, want)
	}
	if h.Priority != 3 || w.Priority != 5 {
		t.Errorf("priorities after the run: H %d, W %d; want their base 3 and 5", h.Priority, w.Priority)
	}
}
