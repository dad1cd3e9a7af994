package sim

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"time"
)

// BenchEngine schedules and dispatches n events through the queue with
// about 1,000 events pending (each firing reschedules itself a
// pseudo-random delay ahead) and returns the measured events per second of
// wall time. It backs BenchmarkEngine and `lab bench`.
func BenchEngine(n int) float64 {
	const pending = 1000
	e := NewEngine(1)
	r := e.Stream("bench")
	delays := make([]Time, 4096)
	for i := range delays {
		delays[i] = Time(1 + r.IntN(1000000))
	}
	k := 0
	left := n
	evs := make([]*Event, pending)
	for i := range evs {
		var ev *Event
		ev = NewEvent(func() {
			left--
			if left > 0 {
				k = (k + 1) & 4095
				e.At(e.now+delays[k], ev)
			}
		}, false)
		evs[i] = ev
		e.At(delays[i], ev)
	}
	start := time.Now()
	for left > 0 && e.Step() {
	}
	return float64(n) / time.Since(start).Seconds()
}

// BenchCoroutine resumes a coroutine built as NewProc builds a process's
// (iter.Pull) n times, into it and back out with no simulation around it,
// and returns the wall time of one such round trip in nanoseconds: what
// each of a run's Engine.Switches costs at the least. It backs
// BenchmarkCoroutineRoundTrip and `lab bench`.
func BenchCoroutine(n int) float64 {
	next, stop := iter.Pull(func(yield func(int) bool) {
		for i := 0; yield(i); i++ {
		}
	})
	defer stop()
	start := time.Now()
	for range n {
		next()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(max(n, 1))
}

// LockBench is what BenchLock measured.
type LockBench struct {
	Sections  int    // critical sections run
	Events    uint64 // events dispatched
	Simulated Time   // simulated time at the end
}

// BenchLock runs the workload of lab bench's peer simulators (bench/peers)
// at the engine's level, with no kernel: two cores at 240 MHz, each taking a
// test-and-test-and-set spinlock n times around a 10-cycle critical
// section. The peers model no caches, atomics, interrupts or kernel; this
// keeps what the engine itself models (the lock word on one uncached
// memory port, an access a cycle, the compare-and-swap, the spin's polls),
// so that lab bench can time the engine against them like for like, beside
// the ESP32 model's run with its whole kernel. A breach of mutual exclusion
// is an error.
func BenchLock(n int) (LockBench, error) {
	const hz, lock = 240_000_000, Addr(0x1000)
	e := NewEngine(1)
	defer e.Close()
	for range 2 {
		if _, err := e.AddCore(CoreConfig{Name: "cpu", Hz: hz, WakeCycles: 1, HitCycles: 1}); err != nil {
			return LockBench{}, err
		}
	}
	m, err := e.NewMemory(Coherence{LineSize: 8})
	if err != nil {
		return LockBench{}, err
	}
	cycle := Clock{hz}.Cycles(1)
	if err := m.AddRegion(Region{Name: "sram", Base: lock, Size: 4096, Uncached: true, Latency: cycle, Occupancy: cycle}); err != nil {
		return LockBench{}, err
	}
	var sections, inside int
	var breach error
	for _, c := range e.Cores() {
		me := uint64(c.ID + 1)
		e.Spawn(c, "worker", func(p *Proc) {
			for range n {
				for {
					p.SpinUntil(lock, 4, func(v uint64) bool { return v == 0 })
					if _, ok := p.CAS(lock, 0, me); ok {
						break
					}
				}
				if inside++; inside > 1 && breach == nil {
					breach = fmt.Errorf("bench lock: both cores inside the critical section at %v", p.Now())
				}
				p.Compute(10)
				inside--
				sections++
				p.Store(lock, 0)
			}
		})
	}
	err = e.Run(context.Background())
	return LockBench{Sections: sections, Events: e.Events(), Simulated: e.Now()}, cmp.Or(err, breach)
}
