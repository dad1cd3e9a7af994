package rk3399

import (
	"context"
	"fmt"
	"math/rand/v2"

	"synclab/platforms/generic"
	"synclab/platforms/linux"
	"synclab/sim"
)

// Workload is the article's setup as its text allows: one thread per CPU
// contending a spinlock from process context with spin_lock_irqsave (or,
// with NoIRQSave, plain spin_lock) at an offered load, plus a device
// interrupt whose handler takes the same lock. Split gives every CPU its own
// lock instead (the article's per-CPU design): threads then never contend,
// and the handler takes the lock of its CPU; with PerCluster as well, each
// cluster has one lock (the article's per-NUMA-node lock pools).
type Workload struct {
	SoC     generic.SoC
	Kernel  linux.Config
	Cores   int
	Flavour linux.Flavour
	Wait    linux.Wait
	// Load is the share of time a thread would be busy (outside work plus
	// critical section) if it never waited; the rest it sleeps.
	Load float64
	// CS is the critical-section length; Outside the mean of the
	// exponentially distributed work between sections.
	CS, Outside sim.Time
	// IRQMean is the mean gap of the Poisson device interrupt on IRQCPU
	// (0: none); IRQCS its critical section.
	IRQMean sim.Time
	IRQCPU  int
	IRQCS   sim.Time
	// Duration: threads start no new operation after it.
	Duration sim.Time
	// LoseWake is the probability that a wake-up event (monitor clear or
	// SEV) is lost; LoseSEV that an SEV instruction's event is.
	LoseWake, LoseSEV float64
	// NoIRQSave: threads take the lock with plain spin_lock, interrupts
	// enabled, instead of spin_lock_irqsave.
	NoIRQSave  bool
	Split      bool
	PerCluster bool
	Trace      *sim.Trace
}

// Validate reports the first bad field, naming it and its value.
func (w Workload) Validate() error {
	switch {
	case w.Cores < 1 || w.Cores > w.SoC.NumCores():
		return fmt.Errorf("workload: cores = %d out of range [1, %d]", w.Cores, w.SoC.NumCores())
	case !(w.Load > 0 && w.Load <= 1):
		return fmt.Errorf("workload: load = %g must be in (0, 1]", w.Load)
	case w.CS < 0 || w.Outside < 0 || w.IRQCS < 0 || w.IRQMean < 0:
		return fmt.Errorf("workload: lengths must be >= 0 (cs %v, outside %v, irq cs %v, irq mean %v)", w.CS, w.Outside, w.IRQCS, w.IRQMean)
	case w.CS+w.Outside <= 0:
		return fmt.Errorf("workload: cs_us = %g and outside_us = %g: a thread's cycle must take some time", w.CS.Micros(), w.Outside.Micros())
	case w.Duration <= 0:
		return fmt.Errorf("workload: duration = %v must be > 0", w.Duration)
	case w.IRQMean > 0 && w.IRQMean < sim.Microsecond:
		// The CPU coalesces such a storm's arrivals, but each costs an event:
		// a simulated millisecond would take a billion at 1 ps.
		return fmt.Errorf("workload: irq_mean_us = %g: want 0 (no device) or a mean gap of at least 1 µs between device interrupts", w.IRQMean.Micros())
	case w.IRQMean > 0 && (w.IRQCPU < 0 || w.IRQCPU >= w.Cores):
		return fmt.Errorf("workload: irq_cpu = %d out of range [0, %d): the device interrupts one of the cores = %d CPUs in use (irq_mean_us = 0 removes the device)", w.IRQCPU, w.Cores, w.Cores)
	}
	return nil
}

// Result is what one run measured.
type Result struct {
	// Waits are the lock-wait times of every acquisition (process and
	// interrupt context), from the first attempt to holding the lock;
	// IRQWaits those of the interrupt handler alone.
	Waits    sim.Histogram
	IRQWaits sim.Histogram
	// Handoffs are, for acquisitions that were waiting when the lock was
	// released, the time from that release to holding the lock.
	Handoffs sim.Histogram
	// Ops counts acquisitions, that is critical sections run: the
	// increments the code performed, which Counter equals unless mutual
	// exclusion broke.
	Ops int
	// Contended counts acquisitions that found the lock taken and entered
	// the lock's slow path (linux.CPU.Contentions).
	Contended  int
	Counter    uint64 // the shared counter in sim memory
	MaxHolders int    // most CPUs inside the critical section at once
	Elapsed    sim.Time
	EnergyMJ   float64 // all used cores
	PowerMW    float64 // EnergyMJ over Elapsed
	// WaitTime is the used CPUs' time waiting for a lock: a handler that
	// interrupts a waiting thread pauses its wait, so no time counts twice.
	WaitTime sim.Time
	Wakeups  map[string]int
	Ticks    int
	// Idle is the used CPUs' time in the idle loop (what the OS counts as
	// idle); Schedules the schedule() calls of the tiered policy.
	Idle      sim.Time
	Schedules int
	// Events is how many events the engine dispatched (for lab bench);
	// Switches how many times a thread's coroutine was resumed
	// (sim.Engine.Switches, for the benchmarks).
	Events, Switches uint64
}

// StallPct is the share of the used cores' time spent waiting for a lock.
func (r Result) StallPct(cores int) float64 {
	return 100 * float64(r.WaitTime) / (float64(r.Elapsed) * float64(cores))
}

// Run simulates the workload with seed.
func (w Workload) Run(ctx context.Context, seed uint64) (Result, error) {
	if err := w.Validate(); err != nil {
		return Result{}, err
	}
	e := sim.NewEngine(seed)
	defer e.Close()
	e.Trace = w.Trace
	r, err := w.boot(e)
	if err != nil {
		return Result{}, err
	}
	if w.IRQMean > 0 {
		if _, err := r.k.Device("dev", w.IRQCPU, linux.IRQDevice, w.IRQMean, true, r.handler); err != nil {
			return Result{}, err
		}
	}
	for i, c := range r.cores {
		rng := e.Stream(fmt.Sprintf("thread/%d", i))
		e.Spawn(c, fmt.Sprintf("worker/%d", i), func(p *sim.Proc) { r.thread(p, rng) })
	}
	// A safety net: threads stop on their own within about one cycle (a
	// critical section, outside work and think time, each drawn around
	// its mean) after Duration. Twenty of each leaves a healthy run a
	// chance of e^-20 to reach it, however long the cycle is against
	// Duration.
	cycle := w.CS + w.Outside + sim.Time(r.think)
	e.Until = 20 * (w.Duration + cycle)
	if err := e.Run(ctx); err != nil {
		return Result{}, err
	}
	if r.fail != nil {
		return Result{}, r.fail
	}
	if e.StopReason() != "done" {
		return Result{}, fmt.Errorf("run did not finish by %v (20 x its duration %v and its mean cycle %v): %s",
			e.Until, w.Duration, cycle, e.Waiters())
	}
	return r.result(), nil
}

// run is one simulation of a Workload: the machine, the kernel, the locks
// with their counters, and what is measured. Its methods are the code the
// workload models (thread, handler) and the bookkeeping around each
// acquisition.
type run struct {
	w        Workload
	e        *sim.Engine
	cores    []*sim.Core
	mem      *sim.Memory
	k        *linux.Kernel
	locks    []linux.Spinlock
	counters []sim.Addr // one shared counter per lock
	holders  []int      // CPUs inside each lock's critical section
	released []sim.Time // each lock's last release
	// waitFrom is, per CPU, when the running context's lock wait began (or
	// resumed after a handler), -1 when it is not waiting: a handler that
	// interrupts a waiting thread pauses the thread's wait, so the stall
	// time counts each CPU's time once.
	waitFrom []sim.Time
	nested   []int   // slow-path entries of handlers, per CPU (take)
	think    float64 // mean sleep after an operation, for the offered load
	res      Result
	fail     error // the first breach of mutual exclusion
}

// boot builds the SoC and the kernel on e and allocates the locks: one, or
// one per CPU when split.
func (w Workload) boot(e *sim.Engine) (*run, error) {
	if err := e.SetFaults(sim.Faults{LoseWake: w.LoseWake}); err != nil {
		return nil, err
	}
	const base, size = sim.Addr(0x10000), 1 << 16
	r := &run{w: w, e: e, think: float64(w.CS+w.Outside) * (1 - w.Load) / w.Load}
	var err error
	if r.cores, r.mem, err = w.SoC.Build(e, w.Cores, base, size); err != nil {
		return nil, err
	}
	if r.k, err = linux.New(e, r.cores, r.mem, base, size, w.Kernel); err != nil {
		return nil, err
	}
	if err := r.k.SetLoseSEV(w.LoseSEV); err != nil {
		return nil, err
	}
	nlocks := 1
	switch {
	case w.Split && w.PerCluster:
		nlocks = r.cores[w.Cores-1].Cfg.Cluster + 1
	case w.Split:
		nlocks = w.Cores
	}
	r.locks = make([]linux.Spinlock, nlocks)
	r.counters = make([]sim.Addr, nlocks)
	r.holders = make([]int, nlocks)
	r.released = make([]sim.Time, nlocks)
	r.nested = make([]int, w.Cores)
	r.waitFrom = make([]sim.Time, w.Cores)
	for i := range r.waitFrom {
		r.waitFrom[i] = -1
	}
	for i := range r.locks {
		if r.locks[i], err = r.k.NewSpinlock(w.Flavour, w.Wait); err != nil {
			return nil, err
		}
		// The counter shares no line with the lock word, so lock traffic
		// and data traffic stay apart as in a padded kernel structure.
		if r.counters[i], err = r.k.Alloc(8); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// thread is the kernel thread of one CPU: work, spin_lock_irqsave, the
// critical section, spin_unlock_irqrestore, sleep; until the run's end.
func (r *run) thread(p *sim.Proc, rng *rand.Rand) {
	li := r.lockOf(p)
	// Threads start at random points of their cycle, not in step.
	r.k.Sleep(p, sim.Time(rng.Float64()*float64(r.w.CS+r.w.Outside)+r.think))
	for p.Now() < r.w.Duration && r.fail == nil {
		p.Delay(expTime(rng, float64(r.w.Outside)))
		a := r.spinLockIRQSave(p, li)
		r.critical(p, li, r.w.CS)
		r.spinUnlockIRQRestore(p, a)
		r.k.Sleep(p, expTime(rng, r.think))
	}
}

// handler is the device's interrupt handler. It takes the lock with
// spin_lock_irqsave, as the article writes it (interrupts are already
// masked in a hardirq handler).
func (r *run) handler(p *sim.Proc, _ sim.IRQ) {
	if p.Now() >= r.w.Duration {
		return
	}
	cpu := p.Core().ID
	interrupted := r.waitFrom[cpu] // a thread's wait, which pauses here
	if interrupted >= 0 {
		r.res.WaitTime += p.Now() - interrupted
	}
	li := r.lockOf(p)
	a := r.spinLockIRQSave(p, li)
	r.res.IRQWaits.Add(a.wait())
	r.critical(p, li, r.w.IRQCS)
	r.spinUnlockIRQRestore(p, a)
	if interrupted >= 0 {
		r.waitFrom[cpu] = p.Now()
	}
}

// lockOf returns the index of the lock taken on p's CPU: its cluster's
// with PerCluster.
func (r *run) lockOf(p *sim.Proc) int {
	if r.w.PerCluster {
		return p.Core().Cfg.Cluster % len(r.locks)
	}
	return p.Core().ID % len(r.locks)
}

// expTime draws an exponentially distributed time of the given mean.
func expTime(rng *rand.Rand, mean float64) sim.Time { return sim.Time(rng.ExpFloat64() * mean) }

// acquisition is one holding of a lock: which, the saved interrupt flags,
// when it started trying and when it got the lock.
type acquisition struct {
	li, flags   int
	start, held sim.Time
}

// wait is the time the acquisition waited for the lock.
func (a acquisition) wait() sim.Time { return a.held - a.start }

// spinLockIRQSave takes lock li (r.take: spin_lock_irqsave, or spin_lock
// for a thread with NoIRQSave) and books the acquisition. With interrupts
// masked from before the attempt no other acquisition on this CPU can fall
// between its start and its booking; with spin_lock a handler's can (take
// tells the two slow-path entries apart).
func (r *run) spinLockIRQSave(p *sim.Proc, li int) acquisition {
	a := acquisition{li: li, start: p.Now()}
	cpu := p.Core().ID
	r.waitFrom[cpu] = a.start
	var contended bool
	a.flags, contended = r.take(p, li)
	a.held = p.Now()
	if contended {
		r.res.Contended++
	}
	r.res.Waits.Add(a.wait())
	r.res.WaitTime += a.held - r.waitFrom[cpu]
	r.waitFrom[cpu] = -1
	if a.wait() > 0 && a.start < r.released[li] {
		r.res.Handoffs.Add(a.held - r.released[li])
	}
	return a
}

// critical is the protected section: a holder count catches any breach of
// mutual exclusion, the counter (load, work, store) any lost update.
func (r *run) critical(p *sim.Proc, li int, cs sim.Time) {
	r.holders[li]++
	r.res.MaxHolders = max(r.res.MaxHolders, r.holders[li])
	if r.holders[li] > 1 && r.fail == nil {
		r.fail = fmt.Errorf("mutual exclusion broken: %d holders of lock %d at %v", r.holders[li], li, p.Now())
	}
	v := p.Load(r.counters[li])
	p.Delay(cs)
	p.Store(r.counters[li], v+1)
	r.res.Ops++
	r.holders[li]--
}

// spinUnlockIRQRestore releases the lock of a with
// linux.SpinUnlockIRQRestore and records the acquisition's wait and hold
// spans on the trace's "lock" lane.
func (r *run) spinUnlockIRQRestore(p *sim.Proc, a acquisition) {
	r.released[a.li] = p.Now()
	r.give(p, a)
	if r.e.Trace != nil {
		id := p.Core().ID
		r.e.Trace.Add(sim.Span{Core: id, Lane: "lock", Label: "wait", Start: a.start, End: a.held})
		r.e.Trace.Add(sim.Span{Core: id, Lane: "lock", Label: fmt.Sprintf("hold lock %d", a.li), Start: a.held, End: p.Now()})
	}
}

// result gathers what the run measured once it has ended.
func (r *run) result() Result {
	res := r.res
	res.Elapsed = r.e.Now()
	res.Events, res.Switches = r.e.Events(), r.e.Switches()
	for _, c := range r.counters {
		res.Counter += r.mem.Peek(c)
	}
	res.Wakeups = map[string]int{}
	for _, c := range r.cores {
		res.EnergyMJ += c.EnergyMJ()
		for wc, n := range c.Wakeups {
			res.Wakeups[sim.WakeCause(wc).String()] += n
		}
	}
	for _, cpu := range r.k.CPUs {
		res.Ticks += cpu.Ticks
		res.Idle += cpu.Idle
		res.Schedules += cpu.Schedules
	}
	res.PowerMW = res.EnergyMJ / res.Elapsed.Seconds()
	return res
}
