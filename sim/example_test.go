package sim_test

import (
	"context"
	"fmt"

	"synclab/sim"
)

// Two cores take turns on a spinlock whose release wakes the waiter's WFE
// through its exclusive monitor, the way an arm64 wait loop does.
func Example() {
	e := sim.NewEngine(1)
	for i := 0; i < 2; i++ {
		e.AddCore(sim.CoreConfig{Name: "a72", Hz: 1_800_000_000, ExecMW: 1130, WFEMW: 60, WakeCycles: 30, HitCycles: 4})
	}
	m, _ := e.NewMemory(sim.Coherence{LineSize: 64, SameCluster: 80 * sim.Nanosecond})
	m.AddRegion(sim.Region{Name: "dram", Base: 0x1000, Size: 4096, Latency: 120 * sim.Nanosecond})
	const lock, counter = sim.Addr(0x1000), sim.Addr(0x1040)
	for _, c := range e.Cores() {
		e.Spawn(c, fmt.Sprint("cpu", c.ID), func(p *sim.Proc) {
			for i := 0; i < 1000; i++ {
				// arch_spin_lock: LDAXR; if held, WFE and retry; STXR to take it.
				for {
					if p.LoadExclusive(lock) == 0 && p.StoreExclusive(lock, 1) {
						break
					}
					p.WFE()
				}
				p.Store(counter, p.Load(counter)+1)
				p.Store(lock, 0) // the release store wakes the waiter
				p.Compute(200)
			}
		})
	}
	if err := e.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	fmt.Println("counter:", m.Peek(counter))
	fmt.Println("woken by events:", e.Cores()[0].Wakeups[sim.WakeEvent]+e.Cores()[1].Wakeups[sim.WakeEvent] > 0)
	// Output:
	// counter: 2000
	// woken by events: true
}
