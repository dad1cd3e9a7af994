package sim_test

import (
	"context"
	"errors"
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

// A core rings a doorbell interrupt on its neighbour 200,000 times. The
// loop repeats itself between the neighbour's ticks, so fast-forward jumps
// over the repetitions; the run ends where the detailed run ends.
func ExampleEngine_EnableFastForward() {
	run := func(fast bool) (sim.Time, uint64, sim.FastForwardStats) {
		e := sim.NewEngine(1)
		for i := 0; i < 2; i++ {
			e.AddCore(sim.CoreConfig{Name: "lx6", Hz: 240_000_000, ExecMW: 100, WFIMW: 5, IRQEntry: 40, IRQExit: 30})
		}
		m, _ := e.NewMemory(sim.Coherence{LineSize: 8})
		m.AddRegion(sim.Region{Name: "sram", Base: 0x1000, Size: 64, Uncached: true, Latency: 25 * sim.Nanosecond, Occupancy: 10 * sim.Nanosecond})
		const mailbox = sim.Addr(0x1000)
		cores := e.Cores()
		cores[1].SetHandler(func(p *sim.Proc, irq sim.IRQ) { p.Compute(20) })
		cores[1].NewTimer(1).Periodic(sim.Millisecond, sim.Millisecond) // a tick: a boundary fast-forward stops at
		bell := sim.NewEvent(func() { cores[1].Raise(2) }, false)
		cores[1].Start(e.NewProc("idle", true, func(p *sim.Proc) {
			for range p.Loop(-1) {
				p.WFI() // sleep until the doorbell (or the tick), take it, sleep again
			}
		}))
		e.Spawn(cores[0], "sender", func(p *sim.Proc) {
			for i := range p.Loop(200_000) {
				p.Store(mailbox, uint64(i%2)) // a value that repeats every two iterations
				e.After(100*sim.Nanosecond, bell)
				p.Compute(200)
			}
		})
		if fast {
			e.EnableFastForward()
		}
		if err := e.Run(context.Background()); err != nil {
			fmt.Println(err)
		}
		return e.Now(), e.Events(), e.FastForward()
	}
	t1, ev1, _ := run(false)
	t2, ev2, st := run(true)
	fmt.Println("same end:", t1 == t2, ev1 == ev2)
	fmt.Println("simulated time:", t2)
	fmt.Printf("skipped: %.1f%%\n", 100*float64(st.Time)/float64(t2))
	fmt.Printf("jumps: %d, %d of them recalled (one period after a tick, with a step found before)\n", st.Skips, st.Recalled)
	// Output:
	// same end: true true
	// simulated time: 171.667ms
	// skipped: 99.6%
	// jumps: 172, 170 of them recalled (one period after a tick, with a step found before)
}

// Eight cores share a ticket lock and wait for their turn as arm64 Linux
// does (smp_cond_load_acquire on the owner field): each release wakes every
// waiter, and all but the next one go back to WFE, from the core's wake
// event, without their processes running.
func ExampleProc_CondWait() {
	e := sim.NewEngine(1)
	for i := 0; i < 8; i++ {
		e.AddCore(sim.CoreConfig{Name: "a72", Cluster: i / 4, Hz: 1_800_000_000, ExecMW: 1130, WFEMW: 60, WakeCycles: 30, HitCycles: 4})
	}
	m, _ := e.NewMemory(sim.Coherence{LineSize: 64, SameCluster: 80 * sim.Nanosecond, OtherCluster: 200 * sim.Nanosecond})
	m.AddRegion(sim.Region{Name: "dram", Base: 0x1000, Size: 4096, Latency: 120 * sim.Nanosecond})
	const next, owner, counter = sim.Addr(0x1000), sim.Addr(0x1040), sim.Addr(0x1080)
	for _, c := range e.Cores() {
		e.Spawn(c, fmt.Sprint("cpu", c.ID), func(p *sim.Proc) {
			for i := 0; i < 100; i++ {
				me := p.FetchAdd(next, 1)
				p.CondWait(owner, func(v uint64) bool { return v == me }, sim.WaitPolicy{Monitor: true})
				p.Store(counter, p.Load(counter)+1)
				p.Store(owner, me+1) // the release store wakes every waiter
				p.Compute(500)
			}
		})
	}
	if err := e.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	var woken int
	for _, c := range e.Cores() {
		woken += c.Wakeups[sim.WakeEvent]
	}
	fmt.Println("counter:", m.Peek(counter))
	fmt.Println("wake-ups per acquisition above 2:", woken > 2*800)
	// Output:
	// counter: 800
	// wake-ups per acquisition above 2: true
}

// A lock released by nobody: cpu0 takes it and returns without the release,
// and cpu1 polls it in a loop written by hand, which says nothing of what
// it waits on. Nothing is written for 100 ms of simulated time while cpu1
// keeps reading, so the run ends in a livelock naming the word it polls,
// instead of running until it is cancelled.
func ExampleDeadlockError_livelock() {
	e := sim.NewEngine(1)
	for i := 0; i < 2; i++ {
		e.AddCore(sim.CoreConfig{Name: "a72", Hz: 1_800_000_000, ExecMW: 1130, HitCycles: 4})
	}
	m, _ := e.NewMemory(sim.Coherence{LineSize: 64, SameCluster: 80 * sim.Nanosecond})
	m.AddRegion(sim.Region{Name: "dram", Base: 0x1000, Size: 4096, Latency: 120 * sim.Nanosecond})
	const lock = sim.Addr(0x1000)
	m.Name(lock, 8, "lock")
	e.Spawn(e.Cores()[0], "cpu0", func(p *sim.Proc) { p.Swap(lock, 1) })
	e.Spawn(e.Cores()[1], "cpu1", func(p *sim.Proc) {
		p.Compute(1000)
		for p.Load(lock) != 0 || p.Swap(lock, 2) != 0 {
			p.Compute(50)
		}
	})
	err := e.Run(context.Background())
	var dl *sim.DeadlockError
	if errors.As(err, &dl) && dl.Polling {
		fmt.Println(dl.Waiters[0])
	}
	// Output:
	// cpu1 (core 1) waits on nothing it declared, running: last access lock (0x1000, value 1)
}
