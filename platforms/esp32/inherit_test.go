package esp32

import (
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
