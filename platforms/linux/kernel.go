// Package linux models the parts of Linux 5.10 (arm64) that spinlock
// behaviour emerges from: the per-CPU scheduler tick (HZ, NO_HZ_IDLE),
// cpuidle and the idle time the OS reports, interrupt dispatch, and the
// spinlock algorithms themselves (qspinlock, the arm32 ticket lock and
// arm64's pre-4.19 one, TAS/TTAS baselines) written against sim's memory,
// exclusive monitors and event registers, with pluggable wait policies
// (WFE, the faulty WFI, cpu_relax, adaptive, tiered, and WFET as a what-if).
//
// Tiered waiters that reach schedule() sleep until a lock-code write to the
// word they wait on wakes them (wait_var_event / wake_up_var). Every lock
// keeps CONFIG_DEBUG_SPINLOCK-style owner bookkeeping: a CPU taking a lock
// its interrupted context holds or queues for ends the run in a
// sim.DeadlockError. SetLoseSEV models the article's faulty SEV.
package linux

import (
	"fmt"
	"math/rand/v2"

	"synclab/sim"
)

// Interrupt lines. INTID 30 is the arm64 non-secure physical timer PPI
// (rk3399.dtsi timer node: GIC_PPI 14 = INTID 30); SGI 0 carries
// IPI_RESCHEDULE (arch/arm64/kernel/smp.c).
const (
	IRQTimer    sim.IRQ = 30
	IPIResched  sim.IRQ = 0
	IRQDevice   sim.IRQ = 40 // an SPI line for a device interrupt; the caller passes it to Kernel.Device
	levelIRQ            = 1  // every line at one level: Linux has no nested IRQ priorities
	levelMasked         = 1  // local_irq_save masks every line
)

// Config is the kernel build and boot configuration that matters here.
type Config struct {
	HZ       int      // CONFIG_HZ
	NoHZIdle bool     // CONFIG_NO_HZ_IDLE: stop the tick on idle CPUs
	TickWork sim.Time // time one tick handler runs
	// SwitchWork is the cost of a context switch (schedule() out or in).
	SwitchWork sim.Time
	// IPILatency is GIC SGI delivery from sender to target.
	IPILatency sim.Time
}

// Validate reports the first bad field, naming it and its value.
func (c Config) Validate() error {
	switch {
	case c.HZ <= 0:
		return fmt.Errorf("linux: HZ = %d must be > 0", c.HZ)
	case c.TickWork < 0 || c.SwitchWork < 0 || c.IPILatency < 0:
		return fmt.Errorf("linux: TickWork %v, SwitchWork %v, IPILatency %v must be >= 0", c.TickWork, c.SwitchWork, c.IPILatency)
	}
	return nil
}

// TickPeriod returns the tick period 1/HZ.
func (c Config) TickPeriod() sim.Time { return sim.Second / sim.Time(c.HZ) }

// CPU is one logical CPU's kernel state.
type CPU struct {
	ID   int
	Core *sim.Core
	tick *sim.Timer // the periodic scheduler tick
	wake *sim.Timer // the hrtimer that ends a timed sleep
	// tickStopped: NO_HZ_IDLE stopped the tick while the CPU idles.
	tickStopped bool
	// tickSeen is the tick timer's next firing as of the last tick run:
	// a timer interrupt finding the tick timer still there is the hrtimer
	// that ends a sleep, not a tick.
	tickSeen sim.Time
	// hardirq counts nested interrupt handlers (in_irq()).
	hardirq int
	// woken is set by the reschedule IPI that ends a schedule() wait.
	woken bool
	// qcount is this CPU's qnodes[0].mcs.count: MCS nodes in use by
	// nested contexts (task, softirq, hardirq, nmi).
	qcount int
	// Ticks counts tick handlers run.
	Ticks int
	// Idle is the time the CPU spent in the idle loop (the idle task):
	// what the OS reports as idle. Waiting for a spinlock, in any wait
	// mode, is not idle.
	Idle sim.Time
	// Schedules counts the times a task called schedule() to sleep until
	// woken (the tiered policy's last tier).
	Schedules int
	// Contentions counts spinlock acquisitions by this CPU that found the
	// lock taken and entered the slow path (what CONFIG_LOCK_STAT reports
	// as contentions), in any context.
	Contentions int
}

// Kernel is the OS state of one simulated machine.
type Kernel struct {
	Cfg  Config
	e    *sim.Engine
	mem  *sim.Memory
	CPUs []*CPU
	// handlers by line, as sim numbers them
	handlers [sim.IRQLines]func(p *sim.Proc, irq sim.IRQ)
	next     sim.Addr // bump allocator for lock words and per-CPU data
	end      sim.Addr
	line     sim.Addr
	qnodes   sim.Addr // per-CPU MCS nodes, one 64-byte line per CPU
	// spinlocks counts the locks NewSpinlock made, to name each in reports.
	spinlocks int

	// Count, when non-nil, is called for every access the lock code makes
	// (tests measure which lines each waiter touches).
	Count func(cpu int, a sim.Addr)

	// sleepers are the tasks in schedule() until a lock-code write to the
	// word they wait on (wait_var_event / wake_up_var).
	sleepers []sleeper
	// loseSEV is the probability that an SEV instruction's event is lost
	// (SetLoseSEV); sevRand draws it.
	loseSEV float64
	sevRand *rand.Rand
}

// New boots the kernel on cores, with memory [base, base+size) of mem for
// its data. Ticks start on every CPU aligned to the same jiffy boundaries
// (tick_setup_sched_timer aligns them unless skew_tick=1).
func New(e *sim.Engine, cores []*sim.Core, mem *sim.Memory, base sim.Addr, size uint64, cfg Config) (*Kernel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(cores) == 0 {
		return nil, fmt.Errorf("linux: no cores")
	}
	// A lock word outside mem would only fail at its first access, mid-run.
	if size < 8 {
		return nil, fmt.Errorf("linux: kernel memory size = %d bytes must hold a word (>= 8)", size)
	}
	for _, a := range []sim.Addr{base, base + sim.Addr(size) - 8} {
		if err := mem.Check(a); err != nil {
			return nil, fmt.Errorf("linux: kernel memory [%#x, %#x) not in mem: %w", uint64(base), uint64(base)+size, err)
		}
	}
	line := sim.Addr(mem.LineSize())
	k := &Kernel{Cfg: cfg, e: e, mem: mem, next: base, end: base + sim.Addr(size), line: line}
	var err error
	if k.qnodes, err = k.Alloc(uint64(len(cores)) * uint64(line)); err != nil {
		return nil, err
	}
	for i, c := range cores {
		mem.Name(k.qnodes+sim.Addr(i)*line, uint64(line), fmt.Sprintf("cpu%d's MCS nodes", i))
		cpu := &CPU{ID: i, Core: c, tick: c.NewTimer(IRQTimer), wake: c.NewTimer(IRQTimer)}
		k.CPUs = append(k.CPUs, cpu)
		if err := cpu.startTick(cfg.TickPeriod(), cfg.TickPeriod()); err != nil {
			return nil, err
		}
		c.SetHandler(k.dispatch)
	}
	k.handlers[IRQTimer] = k.timerInterrupt
	k.handlers[IPIResched] = func(p *sim.Proc, _ sim.IRQ) { k.cpu(p).woken = true }
	return k, nil
}

// Alloc returns size bytes of kernel memory aligned to a cache line, so
// that every lock word and per-CPU structure sits on its own line unless a
// caller deliberately packs them.
func (k *Kernel) Alloc(size uint64) (sim.Addr, error) {
	a := k.next
	n := (sim.Addr(size) + k.line - 1) / k.line * k.line
	if a+n > k.end {
		return 0, fmt.Errorf("linux: out of kernel memory allocating %d bytes (region ends at %#x)", size, uint64(k.end))
	}
	k.next += n
	return a, nil
}

// Handle registers fn for irq (request_irq); irq must be a line sim
// has (below sim.IRQLines).
func (k *Kernel) Handle(irq sim.IRQ, fn func(p *sim.Proc, irq sim.IRQ)) {
	if irq >= sim.IRQLines {
		panic(fmt.Sprintf("linux: Handle: IRQ %d out of range 0..%d", irq, sim.IRQLines-1))
	}
	k.handlers[irq] = fn
}

// Device attaches a device interrupt on cpu's line irq: periodic or Poisson
// arrivals with the given mean gap, handled by fn.
func (k *Kernel) Device(name string, cpu int, irq sim.IRQ, mean sim.Time, random bool, fn func(p *sim.Proc, irq sim.IRQ)) (*sim.Device, error) {
	if cpu < 0 || cpu >= len(k.CPUs) {
		return nil, fmt.Errorf("linux: device %q: cpu = %d out of range [0, %d)", name, cpu, len(k.CPUs))
	}
	d, err := k.CPUs[cpu].Core.NewDevice(name, irq, mean, random)
	if err != nil {
		return nil, fmt.Errorf("linux: %w", err)
	}
	k.Handle(irq, fn)
	return d, nil
}

func (k *Kernel) cpu(p *sim.Proc) *CPU { return k.CPUs[p.Core().ID] }

// CPUOf returns the kernel CPU a process runs on (smp_processor_id).
func (k *Kernel) CPUOf(p *sim.Proc) *CPU { return k.cpu(p) }

// InIRQ reports whether p runs an interrupt handler (in_irq()).
func (k *Kernel) InIRQ(p *sim.Proc) bool { return k.cpu(p).hardirq > 0 }

// IRQsDisabled reports whether p runs with interrupts masked.
func IRQsDisabled(p *sim.Proc) bool { return p.Core().Level() >= levelMasked }

// LocalIRQSave masks interrupts and returns the flags for LocalIRQRestore.
func LocalIRQSave(p *sim.Proc) int { return p.Mask(levelMasked) }

// LocalIRQRestore restores the interrupt state saved by LocalIRQSave;
// interrupts that arrived meanwhile are taken now.
func LocalIRQRestore(p *sim.Proc, flags int) { p.Restore(flags) }

// dispatch is the GIC handler: handle_domain_irq -> the line's handler.
func (k *Kernel) dispatch(p *sim.Proc, irq sim.IRQ) {
	cpu := k.cpu(p)
	cpu.hardirq++
	if h := k.handlers[irq]; h != nil {
		h(p, irq)
	}
	cpu.hardirq--
}

// startTick programs the periodic tick, first at first.
func (cpu *CPU) startTick(period, first sim.Time) error {
	if err := cpu.tick.Periodic(period, first); err != nil {
		return err
	}
	cpu.tickSeen = first
	return nil
}

// timerInterrupt is hrtimer_interrupt: it runs the tick's work when the tick
// timer fired (tick_sched_timer), and nothing more here when only the
// hrtimer that ends a sleep did, or when NO_HZ stopped the tick.
func (k *Kernel) timerInterrupt(p *sim.Proc, _ sim.IRQ) {
	cpu := k.cpu(p)
	if cpu.tickStopped {
		return
	}
	if next, _ := cpu.tick.Next(); next == cpu.tickSeen {
		return // the tick is not due: the sleep's hrtimer fired
	}
	cpu.tickSeen, _ = cpu.tick.Next()
	cpu.Ticks++
	p.Delay(k.Cfg.TickWork)
}

// Sleep blocks the task on p for d (schedule_hrtimeout): the CPU goes idle
// and wakes when the hrtimer fires.
func (k *Kernel) Sleep(p *sim.Proc, d sim.Time) {
	if d <= 0 {
		return
	}
	cpu := k.cpu(p)
	end := p.Now() + d
	cpu.wake.OneShot(end)
	p.SetWaiting("schedule_hrtimeout", true)
	k.idle(p, func() bool { return p.Now() >= end }, end)
	cpu.wake.Stop()
	p.SetWaiting("", false)
}

// idle is the idle loop (do_idle): with NO_HZ_IDLE the tick stops, cpuidle
// picks the deepest state whose target residency fits before the next known
// timer event (the menu governor without its history correction), and the
// tick restarts on the jiffy grid when the CPU has work again. done says
// when the task may run; next is the next timer event (0: none known).
func (k *Kernel) idle(p *sim.Proc, done func() bool, next sim.Time) {
	cpu := k.cpu(p)
	start := p.Now()
	defer func() { cpu.Idle += p.Now() - start }()
	period := k.Cfg.TickPeriod()
	if k.Cfg.NoHZIdle {
		cpu.tick.Stop()
		cpu.tickStopped = true
	}
	for !done() {
		horizon := next
		if !k.Cfg.NoHZIdle {
			t, _ := cpu.tick.Next()
			if horizon == 0 || t < horizon {
				horizon = t
			}
		}
		state := -1
		idle := cpu.Core.Cfg.Idle
		for i := range idle {
			if horizon == 0 || horizon-p.Now() >= idle[i].MinResidency {
				state = i
			}
		}
		if state < 0 {
			p.WFI() // cpuidle state 0: WFI
		} else {
			p.Idle(state)
		}
	}
	if cpu.tickStopped {
		cpu.tickStopped = false
		now := p.Now()
		_ = cpu.startTick(period, (now/period+1)*period)
	}
}

// blockUntilWoken is schedule() for a task that queued itself on a wait
// queue: the CPU idles until a reschedule IPI marks it woken.
func (k *Kernel) blockUntilWoken(p *sim.Proc, what string) {
	cpu := k.cpu(p)
	cpu.Schedules++
	p.Delay(k.Cfg.SwitchWork) // switch out
	p.SetWaiting(what, false)
	k.idle(p, func() bool { return cpu.woken }, 0)
	cpu.woken = false
	p.SetWaiting("", false)
	p.Delay(k.Cfg.SwitchWork) // switch back in
}

// wakeUp sends the reschedule IPI to the CPU of a blocked task
// (try_to_wake_up -> smp_send_reschedule).
func (k *Kernel) wakeUp(p *sim.Proc, target *CPU) {
	p.SendIPI(target.Core, IPIResched, k.Cfg.IPILatency)
}

// execContext is what runs on a CPU: a task, or an interrupt handler that
// interrupted it (handlers run on the interrupted task's coroutine).
type execContext struct {
	p   *sim.Proc
	irq bool
}

// context returns what p runs now.
func (k *Kernel) context(p *sim.Proc) execContext { return execContext{p, k.InIRQ(p)} }

// String names the context for a report.
func (x execContext) String() string {
	if x.irq {
		return "the interrupt handler interrupting " + x.p.Name
	}
	return x.p.Name
}
