package rk3399

import (
	"context"
	"fmt"
	"slices"

	"synclab/platforms/generic"
	"synclab/platforms/linux"
	"synclab/sim"
)

// Workload is the article's setup as its text allows: one thread per CPU
// contending a spinlock from process context with spin_lock_irqsave at an
// offered load, plus a device interrupt whose handler takes the same lock.
// Split gives every CPU its own lock instead (the article's per-CPU design):
// threads then never contend, and the handler takes the lock of its CPU.
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
	// LoseWake is the probability that a wake-up event is lost.
	LoseWake float64
	Split    bool
	Trace    *sim.Trace
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
		return fmt.Errorf("workload: cs + outside = %v must be > 0", w.CS+w.Outside)
	case w.Duration <= 0:
		return fmt.Errorf("workload: duration = %v must be > 0", w.Duration)
	case w.IRQMean > 0 && (w.IRQCPU < 0 || w.IRQCPU >= w.Cores):
		return fmt.Errorf("workload: irq cpu = %d out of range [0, %d)", w.IRQCPU, w.Cores)
	}
	return nil
}

// Result is what one run measured.
type Result struct {
	// Waits are the lock-wait times of every acquisition (process and
	// interrupt context), from the first attempt to holding the lock.
	Waits    []sim.Time
	IRQWaits []sim.Time
	// Handoffs are, for acquisitions that were waiting when the lock was
	// released, the time from that release to holding the lock.
	Handoffs []sim.Time
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
	WaitTime   sim.Time
	Wakeups    map[string]int
	Ticks      int
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
	if err := e.SetFaults(sim.Faults{LoseWake: w.LoseWake}); err != nil {
		return Result{}, err
	}
	const base, size = sim.Addr(0x10000), 1 << 16
	cores, mem, err := w.SoC.Build(e, w.Cores, base, size)
	if err != nil {
		return Result{}, err
	}
	k, err := linux.New(e, cores, mem, base, size, w.Kernel)
	if err != nil {
		return Result{}, err
	}
	nlocks := 1
	if w.Split {
		nlocks = w.Cores
	}
	locks := make([]linux.Spinlock, nlocks)
	counters := make([]sim.Addr, nlocks)
	for i := range locks {
		if locks[i], err = k.NewSpinlock(w.Flavour, w.Wait); err != nil {
			return Result{}, err
		}
		// The counter shares no line with the lock word, so lock traffic
		// and data traffic stay apart as in a padded kernel structure.
		if counters[i], err = k.Alloc(8); err != nil {
			return Result{}, err
		}
	}
	lockOf := func(cpu int) int { return cpu % nlocks }

	var res Result
	holders := make([]int, nlocks)
	lastRelease := make([]sim.Time, nlocks)
	// acquired books one acquisition that started trying at t0 when its
	// CPU had entered a slow path c0 times. Interrupts are masked from
	// before the attempt (irqsave; a handler runs masked), so no other
	// acquisition on this CPU can fall between.
	acquired := func(p *sim.Proc, li int, t0 sim.Time, c0 int) sim.Time {
		if k.CPUOf(p).Contentions > c0 {
			res.Contended++
		}
		wait := p.Now() - t0
		res.Waits = append(res.Waits, wait)
		res.WaitTime += wait
		if wait > 0 && t0 < lastRelease[li] {
			res.Handoffs = append(res.Handoffs, p.Now()-lastRelease[li])
		}
		return wait
	}
	unlock := func(p *sim.Proc, li int, flags int) {
		lastRelease[li] = p.Now()
		linux.SpinUnlockIRQRestore(p, locks[li], flags)
	}
	var fail error
	// critical is the protected section: a holder count catches any
	// breach of mutual exclusion, the counter any lost update.
	critical := func(p *sim.Proc, li int, cs sim.Time) {
		holders[li]++
		res.MaxHolders = max(res.MaxHolders, holders[li])
		if holders[li] > 1 && fail == nil {
			fail = fmt.Errorf("mutual exclusion broken: %d holders of lock %d at %v", holders[li], li, p.Now())
		}
		v := p.Load(counters[li])
		p.Delay(cs)
		p.Store(counters[li], v+1)
		res.Ops++
		holders[li]--
	}
	// hold records a waiter's wait and hold spans on the "lock" lane.
	hold := func(p *sim.Proc, li int, t0, start sim.Time) {
		if e.Trace != nil {
			e.Trace.Add(sim.Span{Core: p.Core().ID, Lane: "lock", Label: "wait", Start: t0, End: start})
			e.Trace.Add(sim.Span{Core: p.Core().ID, Lane: "lock", Label: fmt.Sprintf("hold lock %d", li), Start: start, End: p.Now()})
		}
	}

	if w.IRQMean > 0 {
		_, err := k.Device("dev", w.IRQCPU, linux.IRQDevice, w.IRQMean, true, func(p *sim.Proc, _ sim.IRQ) {
			if p.Now() >= w.Duration {
				return
			}
			li := lockOf(p.Core().ID)
			t0, c0 := p.Now(), k.CPUOf(p).Contentions
			// spin_lock_irqsave in the handler, as the article writes it
			// (interrupts are already masked in a hardirq handler).
			flags := linux.SpinLockIRQSave(p, locks[li])
			res.IRQWaits = append(res.IRQWaits, acquired(p, li, t0, c0))
			h := p.Now()
			critical(p, li, w.IRQCS)
			unlock(p, li, flags)
			hold(p, li, t0, h)
		})
		if err != nil {
			return Result{}, err
		}
	}

	think := float64(w.CS+w.Outside) * (1 - w.Load) / w.Load
	for i, c := range cores {
		rng := e.Stream(fmt.Sprintf("thread/%d", i))
		exp := func(mean float64) sim.Time { return sim.Time(rng.ExpFloat64() * mean) }
		e.Spawn(c, fmt.Sprintf("worker/%d", i), func(p *sim.Proc) {
			li := lockOf(i)
			// Threads start at random points of their cycle, not in step.
			k.Sleep(p, sim.Time(rng.Float64()*float64(w.CS+w.Outside)+think))
			for p.Now() < w.Duration && fail == nil {
				p.Delay(exp(float64(w.Outside)))
				t0, c0 := p.Now(), k.CPUOf(p).Contentions
				flags := linux.SpinLockIRQSave(p, locks[li])
				acquired(p, li, t0, c0)
				h := p.Now()
				critical(p, li, w.CS)
				unlock(p, li, flags)
				hold(p, li, t0, h)
				k.Sleep(p, exp(think))
			}
		})
	}
	e.Until = w.Duration * 20 // a safety net: threads stop on their own
	if err := e.Run(ctx); err != nil {
		return Result{}, err
	}
	if fail != nil {
		return Result{}, fail
	}
	if e.StopReason() != "done" {
		return Result{}, fmt.Errorf("run did not finish by %v (a waiter never woke?)", e.Until)
	}
	res.Elapsed = e.Now()
	for li := range counters {
		res.Counter += mem.Peek(counters[li])
	}
	res.Wakeups = map[string]int{}
	for _, c := range cores {
		res.EnergyMJ += c.EnergyMJ()
		for wc, n := range c.Wakeups {
			res.Wakeups[sim.WakeCause(wc).String()] += n
		}
	}
	for _, cpu := range k.CPUs {
		res.Ticks += cpu.Ticks
	}
	res.PowerMW = res.EnergyMJ / res.Elapsed.Seconds()
	return res, nil
}

// Handoff returns the mean hand-off time (0 when no hand-off happened).
func (r Result) Handoff() sim.Time { return Mean(r.Handoffs) }

// Percentiles returns the q-quantiles (each 0..1) of ts, sorting one copy
// of ts for all of them; every one is 0 when ts is empty. The q-quantile is
// the element of rank q*n rounded to the nearest integer (int(q*n+0.5),
// clamped to 1..n), so q = 1 is the maximum. This is not the textbook
// nearest-rank method, which rounds q*n up; the two differ when the
// fraction of q*n is below one half (n=160, q=0.99: rank 158 here, 159 by
// nearest rank). Published numbers use this formula.
func Percentiles(ts []sim.Time, qs ...float64) []sim.Time {
	out := make([]sim.Time, len(qs))
	if len(ts) == 0 {
		return out
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	for j, q := range qs {
		i := int(q*float64(len(s))+0.5) - 1
		out[j] = s[min(max(i, 0), len(s)-1)]
	}
	return out
}

// Mean returns the mean of ts.
func Mean(ts []sim.Time) sim.Time {
	if len(ts) == 0 {
		return 0
	}
	var sum sim.Time
	for _, t := range ts {
		sum += t
	}
	return sum / sim.Time(len(ts))
}
