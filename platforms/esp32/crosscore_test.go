package esp32

import (
	"testing"

	"synclab/sim"
)

// unblockAcrossCores is the time from a NotifyGive on core 0 to the notified
// task running on core 1, which waits in NotifyTake on an idle core: the
// give's kernel path, the crosscore interrupt's trigger, its delivery
// (crosscore_latency_cycles) and entry, the yield ISR and the context switch.
func unblockAcrossCores(t *testing.T, latencyCycles float64) sim.Time {
	t.Helper()
	e, k := newTestKernel(t, map[string]float64{KeyCrosscoreLatency: latencyCycles})
	var waiter *TCB
	var gave, resumed sim.Time
	waiter = mustTask(t, k, "waiter", 5, 1, func(tcb *TCB) {
		tcb.NotifyTake(0, true, PortMaxDelay)
		resumed = tcb.Now()
	})
	mustTask(t, k, "giver", 5, 0, func(tcb *TCB) {
		tcb.Delay(1)
		gave = tcb.Now()
		tcb.NotifyGive(waiter, 0)
	})
	run(t, e, k)
	if resumed <= gave || gave == 0 {
		t.Fatalf("gave at %v, resumed at %v", gave, resumed)
	}
	return resumed - gave
}

// The crosscore interrupt's delivery latency adds exactly its cycles to a
// wake-up on the other core. Kills the mutant that delivers it at once.
func TestCrosscoreLatencyDelaysTheWake(t *testing.T) {
	fast, slow := unblockAcrossCores(t, 0), unblockAcrossCores(t, 300)
	if want := 300 * sim.Second / 240e6; slow-fast != want {
		t.Fatalf("300 more cycles of crosscore latency moved the wake-up by %v, want %v (300 cycles at 240 MHz)", slow-fast, want)
	}
}
