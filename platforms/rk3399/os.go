package rk3399

import (
	"synclab/platforms"
	"synclab/platforms/linux"
	"synclab/sim"
)

// take is the lock call of the workload: spin_lock_irqsave, as the article
// prescribes for a lock an interrupt handler also takes (and as a handler,
// already masked, takes it), or plain spin_lock for a thread with
// NoIRQSave. It returns the flags give needs (-1: spin_lock) and whether
// the acquisition entered the lock's slow path: the CPU's contention count
// grew, by more than the handlers that ran inside the wait (spin_lock lets
// them in) account for.
func (r *run) take(p *sim.Proc, li int) (flags int, contended bool) {
	cpu := r.k.CPUOf(p)
	c0, n0 := cpu.Contentions, r.nested[cpu.ID]
	if !r.w.NoIRQSave || r.k.InIRQ(p) {
		flags = linux.SpinLockIRQSave(p, r.locks[li])
	} else {
		r.locks[li].Lock(p)
		flags = -1
	}
	own := cpu.Contentions - c0 - (r.nested[cpu.ID] - n0)
	if r.k.InIRQ(p) {
		r.nested[cpu.ID] += own
	}
	return flags, own > 0
}

// give releases what take took.
func (r *run) give(p *sim.Proc, a acquisition) {
	if a.flags < 0 {
		r.locks[a.li].Unlock(p)
		return
	}
	linux.SpinUnlockIRQRestore(p, r.locks[a.li], a.flags)
}

// osMetrics are what the OS and the wait modes beyond WFE/WFI show: the
// CPU use top reports, the tiered policy's schedule() calls and WFET's
// timeouts.
var osMetrics = []platforms.Metric{
	{Name: "cpu_busy_pct", Unit: "%", Better: platforms.Lower, Doc: "OS-visible CPU use of the used cores: time not in the idle loop, as top or /proc/stat show it. A thread waiting for a spinlock, in WFE, WFI or polling, is not idle: only sleeping between operations is (the article's incident: 'CPU use rises while throughput falls')"},
	{Name: "schedules", Unit: "", Better: platforms.Neither, Doc: "schedule() calls of the tiered policy's last tier (only with interrupts enabled while waiting: irqsave=0, outside handlers)"},
	{Name: "wakeups_timeout", Unit: "", Better: platforms.Neither, Doc: "WFET sleeps ended by their timeout (wfet only)"},
}

// withOS adds osMetrics to m, the metrics of run r of workload w.
func withOS(m map[string]float64, w Workload, r Result) map[string]float64 {
	m["cpu_busy_pct"] = 100 * (1 - float64(r.Idle)/(float64(r.Elapsed)*float64(w.Cores)))
	m["schedules"] = float64(r.Schedules)
	m["wakeups_timeout"] = float64(r.Wakeups[sim.WakeTimer.String()])
	return m
}

// runMetrics are every metric of the RK3399 spinlock experiments.
func runMetrics() []platforms.Metric {
	return append(append([]platforms.Metric(nil), waitMetrics...), osMetrics...)
}
