package sim

import (
	"fmt"
	"math/bits"
)

// State is what a core is doing, for time, energy and counters.
type State uint8

// Core states. OS idle states (cpuidle, light sleep) follow as
// StateIdle0+k, one per IdleState of the core's configuration.
const (
	StateExec  State = iota // executing instructions (including memory stalls)
	StateSpin               // busy-waiting on a lock word
	StateWFE                // clock-gated in WFE until an event
	StateWFI                // clock-gated in WFI (or Xtensa waiti) until an interrupt
	StateIRQ                // running an interrupt handler
	StateIdle0              // first OS idle state; more follow
)

var stateNames = [...]string{"exec", "spin", "wfe", "wfi", "irq"}

// WakeCause says what ended a wait.
type WakeCause uint8

// Wake-up causes, counted per core like perf's counters.
const (
	WakeTimer       WakeCause = iota // the end of a timed wait (counted only for WFET's timeout)
	WakeEvent                        // an event: SEV or a cleared exclusive monitor
	WakeInterrupt                    // an interrupt
	WakeEventStream                  // the architected timer's periodic event
	WakeLine                         // a write to a line a spinner watches (not counted)
	WakeSpinDone                     // a spinner's poll succeeded (not counted)
	numWakeCauses
)

var wakeNames = [...]string{"timer", "event", "interrupt", "event-stream", "line", "spin-done"}

// String is the cause's name in traces and metrics.
func (w WakeCause) String() string { return wakeNames[w] }

// IdleState is an OS-selectable low-power state (device-tree idle state,
// ESP32 light sleep): entered and left at a cost, worth it only past a
// minimum residency.
type IdleState struct {
	Name         string
	Entry, Exit  Time
	MinResidency Time
	PowerMW      float64
	// StopsTimer: the local timer stops in this state, so the OS must
	// arm a broadcast timer (counted, not modelled further).
	StopsTimer bool
}

// CoreConfig describes one core. Costs in cycles are of this core's clock.
type CoreConfig struct {
	Name    string
	Cluster int
	Hz      int64
	// Power in mW by state: executing, spinning, WFE, WFI, interrupt.
	ExecMW, SpinMW, WFEMW, WFIMW float64
	Idle                         []IdleState
	// IRQEntry and IRQExit: cycles from interrupt to handler start, and
	// from handler end back to the interrupted code.
	IRQEntry, IRQExit int64
	// WakeCycles: cycles from a wake-up event to the next instruction
	// (WFE and WFI exit).
	WakeCycles int64
	// HitCycles: cost of an access that hits in the core's own cache.
	HitCycles int64
	// PrefetchUpgrade makes a prefetch for store (Proc.PrefetchStore) that
	// finds the line shared take it owned, as a miss does. Without it such
	// a hit does nothing: the core's preloads start a linefill only on a
	// miss.
	PrefetchUpgrade bool
	// HighLineFirst dispatches, among pending lines of one level, the
	// highest-numbered first (Xtensa as ESP-IDF dispatches: find_ms_setbit);
	// otherwise the lowest-numbered first (like an ARM GIC among equal
	// priorities).
	HighLineFirst bool
	// EventStream is the period of the architected timer's event stream,
	// which wakes WFE (0: off); EventPhase offsets it per core.
	EventStream, EventPhase Time
}

// Validate reports the first bad field, naming it and its value.
func (cc CoreConfig) Validate() error {
	switch {
	case cc.Hz <= 0:
		return fmt.Errorf("core %q: frequency Hz = %d must be > 0", cc.Name, cc.Hz)
	case cc.IRQEntry < 0 || cc.IRQExit < 0 || cc.WakeCycles < 0 || cc.HitCycles < 0:
		return fmt.Errorf("core %q: cycle costs must be >= 0 (IRQEntry %d, IRQExit %d, WakeCycles %d, HitCycles %d)",
			cc.Name, cc.IRQEntry, cc.IRQExit, cc.WakeCycles, cc.HitCycles)
	case cc.EventStream < 0:
		return fmt.Errorf("core %q: EventStream = %v must be >= 0", cc.Name, cc.EventStream)
	}
	for _, mw := range []float64{cc.ExecMW, cc.SpinMW, cc.WFEMW, cc.WFIMW} {
		if mw < 0 {
			return fmt.Errorf("core %q: power %g mW must be >= 0", cc.Name, mw)
		}
	}
	return nil
}

// IRQ is an interrupt line number, local to each core: 0 to IRQLines-1.
type IRQ uint8

// IRQLines is the number of interrupt lines of each core.
const IRQLines = 64

// Handler runs an interrupt on the core's current process: it is called
// with the interrupt level raised to the line's level.
type Handler func(p *Proc, irq IRQ)

type waitKind uint8

const (
	waitNone  waitKind = iota // not waiting (running, or stalled on memory)
	waitTimed                 // compute or timed sleep: interrupts preempt it
	waitSpin                  // spinning on a line: interrupts preempt it
	waitWFE                   // events and deliverable interrupts wake it
	waitWFI                   // any pending interrupt wakes it, even masked
)

// Core is one processor core: clock, power states, interrupt controller,
// event register and exclusive monitor.
type Core struct {
	ID    int
	Cfg   CoreConfig
	Clock Clock
	e     *Engine

	cur       *Proc // process the core runs
	resumeEv  *Event
	wait      waitKind
	cause     WakeCause
	pendingAt Time

	// State accounting.
	state State
	since Time
	resid []Time

	// Interrupts.
	level    int            // current interrupt level: lines at or below it are masked
	pending  uint64         // pending lines
	raised   uint64         // lines raised at least once (their raisedAt and latency are in use)
	raisedAt [IRQLines]Time // assertion time of each pending line
	lineLvl  [IRQLines]int  // level of each line (>= 1)
	handler  Handler
	latency  [IRQLines]Histogram

	// lastAddr is the address of the core's last memory access (0: none;
	// no region starts at 0), for the report on a process that polls in a
	// loop of its own without saying what it waits on.
	lastAddr Addr

	// ARM event register and exclusive monitor.
	event   bool
	monLine int64 // line index monitored, -1 when clear
	monReg  *region

	// Spinning: what a spinner polls and how (see Proc.spin), its poll
	// phase and period, and the port occupancy of one poll. spinDelayed is
	// the start of the poll that other accesses last pushed back, spinDue
	// when that poll was due (both spinPhase when none was); spinReserved
	// the start of a poll that a later request made way for, where that
	// poll starts when it runs (Memory.grant).
	spinPhase, spinPeriod, spinOcc     Time
	spinDelayed, spinDue, spinReserved Time
	sp                                 spinState
	// cw is the CondWait whose steps the core's wake events run while
	// cwOn.
	cw   condState
	cwOn bool

	// Counters.
	Stall     Time               // time stalled on memory
	Wakeups   [numWakeCauses]int // by cause
	IRQsTaken int
}

// AddCore adds a core to the engine. Cores are numbered from 0.
func (e *Engine) AddCore(cfg CoreConfig) (*Core, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Core{ID: len(e.cores), Cfg: cfg, Clock: Clock{cfg.Hz}, e: e, monLine: -1,
		resid: make([]Time, int(StateIdle0)+len(cfg.Idle))}
	c.resumeEv = NewEvent(c.resume, false)
	c.resumeEv.core = c
	for i := range c.lineLvl {
		c.lineLvl[i] = 1
	}
	c.since = e.now
	e.cores = append(e.cores, c)
	return c, nil
}

// Cores returns the engine's cores.
func (e *Engine) Cores() []*Core { return e.cores }

// Cycles returns the duration of n cycles of this core.
func (c *Core) Cycles(n int64) Time { return c.Clock.Cycles(n) }

// Current returns the process the core runs.
func (c *Core) Current() *Proc { return c.cur }

// SetHandler sets the function that runs interrupts on this core.
func (c *Core) SetHandler(h Handler) { c.handler = h }

// SetLineLevel sets the priority level of an interrupt line (>= 1): the
// line is masked while the core's level is at or above it.
func (c *Core) SetLineLevel(irq IRQ, level int) { c.lineLvl[irq] = level }

// StateName returns the name of state s on this core.
func (c *Core) StateName(s State) string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return c.Cfg.Idle[s-StateIdle0].Name
}

// States returns the number of states of this core (built-in plus idle).
func (c *Core) States() int { return len(c.resid) }

// runState is the state of running code: in a handler or not.
func (c *Core) runState() State {
	if c.cur != nil && c.cur.inIRQ > 0 {
		return StateIRQ
	}
	return StateExec
}

func (c *Core) setState(s State) {
	if s == c.state {
		return
	}
	c.account()
	c.state = s
}

// account adds the time since the last change to the current state.
func (c *Core) account() {
	now := c.e.now
	c.resid[c.state] += now - c.since
	c.traceState(now)
	c.since = now
}

// traceState adds the span of the current state, from its start to now, to
// the engine's trace.
func (c *Core) traceState(now Time) {
	if c.e.Trace != nil && now > c.since {
		c.e.Trace.Add(Span{Core: c.ID, Lane: "state", Label: c.StateName(c.state), Start: c.since, End: now})
	}
}

// Residency returns the time spent in state s so far.
func (c *Core) Residency(s State) Time {
	r := c.resid[s]
	if s == c.state {
		r += c.e.now - c.since
	}
	return r
}

// PowerMW returns the power drawn in state s.
func (c *Core) PowerMW(s State) float64 {
	switch s {
	case StateExec, StateIRQ:
		return c.Cfg.ExecMW
	case StateSpin:
		return c.Cfg.SpinMW
	case StateWFE:
		return c.Cfg.WFEMW
	case StateWFI:
		return c.Cfg.WFIMW
	}
	return c.Cfg.Idle[s-StateIdle0].PowerMW
}

// EnergyMJ returns the energy used so far in millijoules: the sum over
// states of power times residency.
func (c *Core) EnergyMJ() float64 {
	var mj float64
	for s := range c.resid {
		mj += c.PowerMW(State(s)) * c.Residency(State(s)).Seconds()
	}
	return mj
}

// IRQLatency returns the distribution of a line's latencies (assertion to
// handler start); its Last is the latency of the interrupt being handled.
func (c *Core) IRQLatency(irq IRQ) *Histogram { return &c.latency[irq] }

// Pending reports whether any interrupt is pending on the core, masked or
// not (what wakes WFI).
func (c *Core) Pending() bool { return c.pending != 0 }

// LinePending reports whether line irq is pending on the core.
func (c *Core) LinePending(irq IRQ) bool { return c.pending&(1<<irq) != 0 }

// Level returns the current interrupt level.
func (c *Core) Level() int { return c.level }

// deliverable reports whether an interrupt is pending above the level.
func (c *Core) deliverable() bool {
	if c.pending == 0 {
		return false
	}
	for p := c.pending; p != 0; p &= p - 1 {
		if c.lineLvl[trailing(p)] > c.level {
			return true
		}
	}
	return false
}

// trailing returns the lowest line set in x (x != 0).
func trailing(x uint64) IRQ { return IRQ(bits.TrailingZeros64(x)) }

// Raise asserts interrupt line irq on this core now. An interrupt already
// pending stays pending once (its first assertion time counts).
func (c *Core) Raise(irq IRQ) {
	if irq >= IRQLines {
		panic(fmt.Sprintf("sim: IRQ %d out of range 0..%d", irq, IRQLines-1))
	}
	bit := uint64(1) << irq
	if c.pending&bit == 0 {
		c.pending |= bit
		c.raised |= bit
		c.raisedAt[irq] = c.e.now
	}
	switch c.wait {
	case waitTimed, waitSpin, waitWFE:
		if c.lineLvl[irq] > c.level {
			c.wakeAt(c.e.now, WakeInterrupt)
		}
	case waitWFI:
		c.wakeAt(c.e.now+c.Cycles(c.Cfg.WakeCycles), WakeInterrupt)
	}
}

// wakeAt ends the core's current wait at time t with cause, unless it is
// already due to end earlier.
func (c *Core) wakeAt(t Time, cause WakeCause) {
	if c.resumeEv.Pending() && c.pendingAt <= t {
		return
	}
	c.cause = cause
	c.pendingAt = t
	c.e.At(t, c.resumeEv)
}

// pollDue reports whether the core's pending wake is a spinner's poll
// (run from the event, without resuming the spinner).
func (c *Core) pollDue() bool { return c.wait == waitSpin && c.cause == WakeLine }

func (c *Core) resume() {
	if c.pollDue() {
		c.poll()
		return
	}
	if c.cwOn {
		c.condResume()
		return
	}
	c.wait = waitNone
	c.e.resume(c.cur)
}

// signalEvent sets the event register and wakes the core from WFE, at t.
func (c *Core) signalEvent(t Time, cause WakeCause) {
	c.event = true
	if c.wait == waitWFE {
		c.wakeAt(t+c.Cycles(c.Cfg.WakeCycles), cause)
	}
}

// sev sets the event register of every core (ARM SEV); fault injection
// may lose it on some cores.
func (e *Engine) sev(t Time) {
	for _, c := range e.cores {
		if !c.dropMonitorEvent() {
			c.signalEvent(t, WakeEvent)
		}
	}
}

// snapshot records the core's state for fast-forward: its process and
// wait, power state and residencies, interrupt controller, event register,
// exclusive monitor, spin and counters.
func (c *Core) snapshot(s *Snapshot) {
	Ident(s, c.cur)
	s.Key(uint64(c.wait))
	// The cause and time of a wake, and the spin state, are read only
	// while a wake is pending or the core spins: stale values of an earlier
	// wait are left out, so that a state after an interrupt can match.
	if c.resumeEv.Pending() {
		s.Key(uint64(c.cause))
		s.Time(&c.pendingAt)
	}
	s.Flag(c.cwOn)
	if c.cwOn {
		c.cw.snapshot(s)
	}
	if c.wait == waitSpin {
		s.Time(&c.spinPhase)
		s.Time(&c.spinDelayed)
		s.Time(&c.spinDue)
		s.Time(&c.spinReserved)
		s.Key(uint64(c.spinPeriod))
		s.Key(uint64(c.spinOcc))
		c.sp.snapshot(s)
	}
	s.Key(uint64(c.state))
	s.Key(uint64(c.level))
	s.Key(c.pending)
	s.Flag(c.event)
	s.Key(uint64(c.monLine))
	Ident(s, c.monReg)
	s.Time(&c.since)
	for i := range c.resid {
		s.Time(&c.resid[i])
	}
	for q := c.raised; q != 0; q &= q - 1 {
		if i := trailing(q); c.raisedAt[i] != 0 { // read until the handler starts, after the line stops pending
			s.Time(&c.raisedAt[i])
		}
	}
	for q := c.raised; q != 0; q &= q - 1 {
		if i := trailing(q); c.latency[i].n > 0 {
			s.Key(uint64(i))
			s.Histogram(&c.latency[i])
		}
	}
	s.Time(&c.Stall)
	for i := range c.Wakeups {
		s.Int(&c.Wakeups[i])
	}
	s.Int(&c.IRQsTaken)
}
