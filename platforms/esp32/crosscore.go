// The crosscore interrupt of esp_system/crosscore_int.c: how a core asks
// another core, or itself, to yield.

package esp32

import "synclab/sim"

// crosscore reasons (esp_system/crosscore_int.c REASON_YIELD).
const reasonYield = 1 << 0

// crosscoreSendYield is esp_crosscore_int_send_yield(target): set the yield
// reason under reason_spinlock and trigger the FROM_CPU interrupt. On the
// sender's own core this is portYIELD_WITHIN_API: the interrupt stays pending
// until the interrupt level drops (esp-idf xtensa portmacro.h, comment above
// portYIELD_WITHIN_API).
func (k *Kernel) crosscoreSendYield(p *sim.Proc, target int) {
	k.enterCritical(p, k.reasonLock)
	a := k.cpu[target].reasonAddr
	r := k.guardedLoad(p, a)
	k.guardedStore(p, a, r|reasonYield)
	k.exitCritical(p, k.reasonLock)
	k.work(p, k.cfg.CrosscoreTrigger)
	k.flush(p)
	k.SoC.crosscoreRaise(p, target)
	if target == coreID(p) {
		// The own-core interrupt is taken at the next instruction if the
		// level allows; inside a critical section it waits for the exit.
		p.Restore(p.Core().Level())
	}
}

// yieldWithinAPI is portYIELD_WITHIN_API: a crosscore interrupt to the own
// core, taken as soon as interrupts are enabled. It returns when the calling
// task runs again.
func (k *Kernel) yieldWithinAPI(p *sim.Proc) {
	k.crosscoreSendYield(p, coreID(p))
}

// crosscoreISR is esp_crosscore_isr: read and clear the reasons under
// reason_spinlock, then portYIELD_FROM_ISR when a yield was asked for.
func (k *Kernel) crosscoreISR(p *sim.Proc, c int) {
	k.work(p, k.cfg.CrossISR)
	k.enterCritical(p, k.reasonLock)
	a := k.cpu[c].reasonAddr
	r := k.guardedLoad(p, a)
	k.guardedStore(p, a, 0)
	k.exitCritical(p, k.reasonLock)
	if r&reasonYield != 0 {
		k.switchContext(p, c)
	}
	k.flush(p)
}
