package esp32

import (
	"math"
	"testing"

	"synclab/sim"
)

// IDF v5.1 asks for a yield to the own core (portYIELD_WITHIN_API, which
// sends the crosscore interrupt under reason_spinlock) inside the critical
// section of the call that needs it, and the interrupt is taken when the
// section ends: a take that blocks (ulTaskNotifyTake, xQueueSemaphoreTake,
// xQueueReceive) and a give that wakes a task outranking the caller
// (xTaskGenericNotify, xQueueGenericSend for a semaphore and for a queue).
// The trace shows it: the caller's reason_spinlock hold lies inside its
// hold of the section's lock.
func TestYieldAskedInsideSection(t *testing.T) {
	type objects struct {
		sem *Semaphore
		q   *Queue
	}
	take := map[string]func(*TCB, objects){
		"notify":    func(tcb *TCB, _ objects) { tcb.NotifyTake(0, true, PortMaxDelay) },
		"semaphore": func(tcb *TCB, o objects) { tcb.SemaphoreTake(o.sem, PortMaxDelay) },
		"queue":     func(tcb *TCB, o objects) { tcb.QueueReceive(o.q, PortMaxDelay) },
	}
	give := map[string]func(*TCB, *TCB, objects){
		"notify":    func(tcb, waiter *TCB, _ objects) { tcb.NotifyGive(waiter, 0) },
		"semaphore": func(tcb, _ *TCB, o objects) { tcb.SemaphoreGive(o.sem) },
		"queue":     func(tcb, _ *TCB, o objects) { tcb.QueueSend(o.q, 1, 0) },
	}
	section := map[string]string{"notify": "xKernelLock", "semaphore": "s.xQueueLock", "queue": "q.xQueueLock"}
	for _, by := range []string{"notify", "semaphore", "queue"} {
		e, k := newTestKernel(t, nil)
		e.Trace = sim.NewTrace(0, math.MaxInt64, 100_000)
		var o objects
		o.sem, _ = k.NewSemaphore("s", Binary, 1, 0, 8)
		o.q, _ = k.NewQueue("q", 1, 4)
		var takeAt, giveAt sim.Time
		waiter := mustTask(t, k, "waiter", 6, 0, func(tcb *TCB) {
			takeAt = tcb.Now()
			take[by](tcb, o)
		})
		mustTask(t, k, "giver", 5, 0, func(tcb *TCB) {
			tcb.Delay(1)
			giveAt = tcb.Now()
			give[by](tcb, waiter, o)
		})
		run(t, e, k)
		for _, c := range []struct {
			call string
			from sim.Time
		}{{"take", takeAt}, {"give", giveAt}} {
			// The first reason_spinlock hold on core 0 from the call on is
			// its yield's (the crosscore ISR's own hold comes after it).
			var yield *sim.Span
			for i, s := range e.Trace.Spans {
				if s.Core == 0 && s.Lane == "lock" && s.Label == "reason_spinlock" && s.Start >= c.from && (yield == nil || s.Start < yield.Start) {
					yield = &e.Trace.Spans[i]
				}
			}
			if yield == nil {
				t.Errorf("%s %s: no yield on core 0", by, c.call)
				continue
			}
			inside := false
			for _, s := range e.Trace.Spans {
				inside = inside || s.Core == 0 && s.Lane == "lock" && s.Label == section[by] && s.Start <= yield.Start && yield.End <= s.End
			}
			if !inside {
				t.Errorf("%s %s: the yield's reason_spinlock hold %v-%v is not inside a hold of %s", by, c.call, yield.Start, yield.End, section[by])
			}
		}
	}
}
