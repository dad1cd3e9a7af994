package sim

import (
	"errors"
	"fmt"
	"iter"
)

// Proc is a thread of execution: a bare-metal loop, an OS task or thread, an
// idle task. It is written as ordinary Go code that calls the primitives
// below, like the firmware it models; each call advances the core's time.
// Procs are coroutines: only one runs at a time, chosen by the engine in
// time order, so a run is deterministic whatever GOMAXPROCS is.
type Proc struct {
	Name     string
	e        *Engine
	core     *Core
	fn       func(p *Proc)
	next     func() (*Proc, bool)
	stop     func()
	yield    func(*Proc) bool
	level    int // interrupt level saved while switched out
	done     bool
	daemon   bool
	timed    bool   // waits with a timeout (not a deadlock while waiting)
	waitOn   string // what it waits on, for deadlock reports
	spinning bool   // on its core's spin address: formatted only when a report asks
	running  bool   // its coroutine runs, or waits in await for one it resumed
	inIRQ    int    // interrupt handlers this context is inside (nested)
	wfeAt    Time   // when it last went to sleep in WFE watching a line (stuck)

	// For fast-forward: what it read since its last loop head, loop heads
	// passed, times resumed, waits holding a time in a local, open loops.
	hist    uint64
	carry   uint64
	marks   uint64
	resumes uint64
	dirty   int
	loops   []*loopState
	busies  []busyFrame // open Compute and Relax waits, outermost first

	// Data is free for OS models (a task control block).
	Data any
}

// errUnwind unwinds a coroutine that is stopped before it finished.
type errUnwind struct{}

// NewProc creates a process that runs fn once a core starts it (Start or
// SwitchTo). A daemon process (an idle task) does not keep a run alive.
func (e *Engine) NewProc(name string, daemon bool, fn func(p *Proc)) *Proc {
	p := &Proc{Name: name, e: e, fn: fn, daemon: daemon}
	seq := func(yield func(*Proc) bool) {
		p.yield = yield
		defer func() {
			switch r := recover().(type) {
			case nil, errUnwind:
			case *AddrError: // a workload's bad address fails its run, not the program
				p.fail(r)
			default:
				panic(r)
			}
		}()
		p.fn(p)
	}
	p.next, p.stop = iter.Pull(seq)
	e.procs = append(e.procs, p)
	if !daemon {
		e.active++
	}
	return p
}

// Spawn creates a process and starts it on core c now.
func (e *Engine) Spawn(c *Core, name string, fn func(p *Proc)) *Proc {
	p := e.NewProc(name, false, fn)
	c.Start(p)
	return p
}

// Start makes p the core's current process and runs it now. Use it to boot
// a core; switch between processes with SwitchTo.
func (c *Core) Start(p *Proc) {
	if c.cur != nil && !c.cur.done {
		panic(fmt.Sprintf("sim: core %d already runs %s", c.ID, c.cur.Name))
	}
	p.core = c
	c.cur = p
	c.level = p.level // the interrupt level is part of the process's context
	c.wakeAt(c.e.now, WakeTimer)
}

// resume runs p until it waits; a SwitchTo hands the core straight to
// another process. It is called by the engine's Run, or by a waiting
// process that hands off to p directly (await).
func (e *Engine) resume(p *Proc) {
	p.resumed()
	e.run(p)
}

// run is resume for a process whose resumption is already counted.
func (e *Engine) run(p *Proc) {
	for {
		e.running = p
		p.running = true
		e.switches++
		q, ok := p.next()
		p.running = false
		if !ok {
			p.finish()
			break
		}
		if q == nil {
			break
		}
		p = q
		p.resumed()
	}
	e.running = nil
}

// resumed counts a resumption of p (for fast-forward) and, unless p runs
// in the background, the engine's progress (for deadlock detection).
func (p *Proc) resumed() {
	p.resumes++
	if !p.daemon {
		p.e.progress++
	}
}

// changed counts a change p made, for the livelock watch (Engine.changes).
func (p *Proc) changed() {
	if !p.daemon || p.inIRQ > 0 {
		p.e.change()
	}
}

// stuck reports whether p waits for something only another process can
// change: what it said it waits on (SetWaiting), a word it spins on, or a
// line it watches, having gone to sleep in WFE with its exclusive monitor
// armed since the last change (between two such sleeps it runs the few
// instructions of its wait loop). A process that is switched out, runs,
// or waits in a plain WFE or WFI (a delay, an idle loop) may go on by
// itself, counting in its locals.
func (p *Proc) stuck() bool {
	c := p.core
	if c == nil || c.cur != p {
		return false
	}
	return p.waitOn != "" || p.spinning || c.monReg != nil && p.wfeAt >= p.e.changedAt
}

func (p *Proc) finish() {
	p.changed()
	p.done = true
	p.waitOn = "finished"
	if !p.daemon {
		p.e.active--
	}
}

// await waits, on p's coroutine, until p's core wakes (its wake event is
// due, or a waker fires it). Meanwhile it dispatches the earlier events in
// time order itself, as Run would, and runs a process they wake right here
// (a direct hand-off: one coroutine switch there and one back, where going
// through Run takes two each way). It suspends p instead when the next
// event wakes a process that is itself waiting in await further up (it
// runs p, directly or not), or when Run must see the state: the run is
// over or must stop, or only background events are left.
func (p *Proc) await() {
	e, c := p.e, p.core
	for e.direct && e.err == nil && e.active > 0 && e.live > 0 && e.q.n > 0 && !e.stopDue() {
		x := e.q.min()
		if e.Until != 0 && x.t > e.Until {
			break
		}
		if x.ev == c.resumeEv && !c.pollDue() {
			// p's own wake: what Core.resume and resume do for it (the
			// next step of its CondWait, which may go on waiting).
			e.q.pop()
			e.dispatch(x)
			c.wait = waitNone
			p.resumed()
			if c.cwOn && c.condStep() {
				e.settled++
				continue
			}
			return
		}
		o := x.ev.core
		if o != nil && !o.pollDue() && o.cur != nil {
			if o.cur.running {
				break
			}
			e.handOffs++
		}
		e.q.pop()
		e.dispatch(x)
		e.running = nil // an event runs outside every process, as under Run
		x.ev.fn()
		e.running = p
	}
	p.suspend()
}

// suspend gives control back to the engine until something resumes the
// core's current process.
func (p *Proc) suspend() {
	if !p.yield(nil) {
		panic(errUnwind{})
	}
}

// Core returns the core p runs on.
func (p *Proc) Core() *Core { return p.core }

// Now returns the current simulated time.
func (p *Proc) Now() Time { return p.e.now }

// Current reports whether p is the process running now (Engine.Running).
func (p *Proc) Current() bool { return p.e.running == p }

// SetWaiting records what p waits on, for deadlock and runaway reports;
// timed says the wait has a timeout (so it is no deadlock). An OS model calls
// it before blocking a task and with "" after.
func (p *Proc) SetWaiting(on string, timed bool) {
	if on != p.waitOn {
		p.changed()
	}
	p.waitOn = on
	p.timed = timed
}

// Fail ends the run with err (a model detected an illegal operation, such
// as an unlock of a lock the process does not hold): Run returns it.
func (p *Proc) Fail(err error) {
	p.fail(err)
	panic(errUnwind{})
}

// fail records err as the run's error, naming p, its core and the time,
// unless the run has failed already.
func (p *Proc) fail(err error) {
	if p.e.err == nil {
		at := fmt.Sprintf(" at %v", p.e.now)
		if d := (*DeadlockError)(nil); errors.As(err, &d) && d.At == p.e.now {
			at = "" // the report says when
		}
		p.e.err = fmt.Errorf("%s on core %d%s: %w", p.Name, p.core.ID, at, err)
	}
}

// SwitchTo hands p's core to q (a context switch): p stops here and goes on
// from here when a core switches back to it. The interrupt level is part of
// each process's context.
func (p *Proc) SwitchTo(q *Proc) {
	if q == p {
		return
	}
	if q.done {
		panic(fmt.Sprintf("sim: switch to finished process %s", q.Name))
	}
	c := p.core
	p.level = c.level
	c.level = q.level
	q.core = c
	c.cur = q
	c.setState(StateExec)
	if !p.yield(q) {
		panic(errUnwind{})
	}
}

// advance lets time pass on c to t: it moves the clock there when nothing
// else can happen first (settling spinners' polls due before it) and
// reports false; otherwise it sets the core waiting in kind, schedules its
// wake at t and reports true. Proc.waitUntil and the steps of a CondWait
// both wait with it; for a wait that interrupts end (kind != waitNone) they
// check for a deliverable interrupt before calling it.
func (c *Core) advance(t Time, kind waitKind) bool {
	e := c.e
	for {
		if e.canRunTo(t) && !e.aloneStop(t) {
			e.now = t
			return false
		}
		if !e.inlinePoll(t) {
			break
		}
	}
	c.wait = kind
	c.wakeAt(t, WakeTimer)
	return true
}

// waitUntil lets time pass on p's core to t in the given wait kind. It
// returns early when something wakes the core (an interrupt, an event),
// reporting the cause; WakeTimer means t was reached.
func (p *Proc) waitUntil(t Time, kind waitKind) WakeCause {
	c := p.core
	if kind != waitNone && c.deliverable() {
		return WakeInterrupt
	}
	if !c.advance(t, kind) {
		return WakeTimer
	}
	p.await()
	return c.cause
}

// waitFor suspends p until a waker ends the wait (no timeout of its own).
// A WFE or a spin does not begin while an interrupt it would take is
// pending (one raised during a spinner's poll stall, say).
func (p *Proc) waitFor(kind waitKind) WakeCause {
	c := p.core
	if (kind == waitWFE || kind == waitSpin) && c.deliverable() {
		return WakeInterrupt
	}
	c.wait = kind
	p.await()
	return c.cause
}

// Compute runs n cycles of private work: straight-line code that touches no
// shared line. Interrupts that arrive meanwhile are taken and the work goes
// on after them. A negative n ends the run with an error (Delay says why).
func (p *Proc) Compute(n int64) { p.busy("Compute", n, false) }

// Relax busy-waits n cycles: a polling loop's pause between two tests of a
// word (cpu_relax, a delay loop). It is Compute drawing spin power, as the
// polls of SpinUntil and CondWait do.
func (p *Proc) Relax(n int64) { p.busy("Relax", n, true) }

// busyFrame is an open Compute or Relax: its cycles left when it last
// began to wait, and when that was. Kept in the process, not in locals, so
// that fast-forward sees it (and moves start with the period): a process
// in the middle of private work does not defeat a match.
type busyFrame struct {
	start, left Time
}

// busy runs n cycles executing, or spinning with spin.
func (p *Proc) busy(op string, n int64, spin bool) {
	if n <= 0 {
		if n < 0 {
			p.negative(op, fmt.Sprint(n, " cycles"))
		}
		return
	}
	c := p.core
	state := func() State {
		if spin {
			return StateSpin
		}
		return c.runState()
	}
	c.setState(state())
	i := len(p.busies)
	p.busies = append(p.busies, busyFrame{left: c.Cycles(n)})
	for p.busies[i].left > 0 {
		f := &p.busies[i]
		f.start = p.e.now
		if p.waitUntil(f.start+f.left, waitTimed) == WakeTimer {
			break
		}
		f.left -= p.e.now - f.start
		p.takeInterrupts() // a handler's own Compute stacks its frame above this one
		c = p.core         // a handler may have switched tasks; we resume on the core we now run on
		c.setState(state())
	}
	p.busies = p.busies[:i]
}

// Delay lets d pass with the core executing (a calibrated busy loop). A
// negative d ends the run with an error, as SimPy's negative timeout
// raises: it is a deadline already passed (Delay(deadline - Now())), which
// a silent no-op would hide.
func (p *Proc) Delay(d Time) {
	if d < 0 {
		p.negative("Delay", d.String())
	}
	p.Compute(p.core.Clock.ToCycles(d))
}

// negative ends the run for a call given a negative duration or cycle
// count: a model bug (a deadline already passed, a cost computed as a
// difference), which passing silently would hide.
func (p *Proc) negative(op, what string) {
	p.Fail(fmt.Errorf("%s(%s): negative duration (a deadline already passed?)", op, what))
}

// stall waits for a memory access to complete at t; it cannot be
// interrupted (interrupts are taken at the next instruction boundary).
func (p *Proc) stall(t Time) {
	c := p.core
	c.Stall += t - p.e.now
	p.waitUntil(t, waitNone)
}

// Mask raises the core's interrupt level to at least level and returns the
// previous level for Restore (ARM irqsave, Xtensa RSIL).
func (p *Proc) Mask(level int) int {
	c := p.core
	prev := c.level
	c.level = max(c.level, level)
	return prev
}

// Restore sets the interrupt level back; interrupts that became
// deliverable are taken at once.
func (p *Proc) Restore(level int) {
	p.core.level = level
	p.takeInterrupts()
}

// takeInterrupts runs every deliverable pending interrupt, highest line
// level first (within a level, in the core's dispatch order), each with the
// core's entry and exit costs.
func (p *Proc) takeInterrupts() {
	c := p.core
	outer := p.hist
	for c.deliverable() {
		// A loop head: an idle task may never leave this loop, switched
		// out by one handler and back in to take the next interrupt.
		p.loopHead(outer, false)
		best, bestLvl := IRQ(0), 0
		for q := c.pending; q != 0; q &= q - 1 {
			irq := trailing(q)
			if l := c.lineLvl[irq]; l > c.level && (l > bestLvl || l == bestLvl && c.Cfg.HighLineFirst) {
				best, bestLvl = irq, l
			}
		}
		c.pending &^= 1 << best
		prevState, prevLevel := c.state, c.level
		p.inIRQ++
		c.setState(StateIRQ)
		c.level = bestLvl
		c.IRQsTaken++
		p.waitUntil(p.e.now+c.Cycles(c.Cfg.IRQEntry), waitNone)
		c.latency[best].Add(p.e.now - c.raisedAt[best])
		if c.handler != nil {
			c.handler(p, best)
		}
		c = p.core // a handler may have switched tasks: the rest of it runs where this task resumes
		c.setState(StateIRQ)
		p.waitUntil(p.e.now+c.Cycles(c.Cfg.IRQExit), waitNone)
		p.inIRQ--
		c.level = prevLevel
		c.setState(prevState)
	}
}

// WFI sleeps until an interrupt is pending, even a masked one (ARM WFI,
// Xtensa waiti). Deliverable interrupts are taken before it returns.
func (p *Proc) WFI() {
	c := p.core
	if c.pending == 0 {
		c.setState(StateWFI)
		p.waitFor(waitWFI)
		c.Wakeups[WakeInterrupt]++
		c.setState(c.runState())
	}
	p.takeInterrupts()
}

// Idle enters OS idle state k until an interrupt is pending: entry cost,
// residency, exit cost, then deliverable interrupts are taken.
func (p *Proc) Idle(k int) {
	c := p.core
	if k < 0 || k >= len(c.Cfg.Idle) {
		panic(fmt.Sprintf("sim: core %d has no idle state %d (it has %d)", c.ID, k, len(c.Cfg.Idle)))
	}
	st := c.Cfg.Idle[k]
	c.setState(StateIdle0 + State(k))
	p.waitUntil(p.e.now+st.Entry, waitNone)
	if c.pending == 0 {
		p.waitFor(waitWFI)
		c.Wakeups[WakeInterrupt]++
	}
	p.waitUntil(p.e.now+st.Exit, waitNone)
	c.setState(c.runState())
	p.takeInterrupts()
}

// Sleep waits d with the core in WFI, woken by a one-shot timer; interrupts
// that arrive meanwhile are taken and the sleep goes on to its end.
func (p *Proc) Sleep(d Time) {
	if d < 0 {
		p.negative("Sleep", d.String())
	}
	c := p.core
	end := p.e.now + d
	p.dirty++ // end is a time held across the waits
	defer func() { p.dirty-- }()
	p.SetWaiting("sleep until "+end.String(), true)
	for p.e.now < end {
		c.setState(StateWFI)
		if p.waitUntil(end, waitTimed) != WakeTimer {
			p.takeInterrupts()
			c = p.core // a handler may have switched tasks; we resume on the core we now run on
		}
	}
	c.setState(c.runState())
	p.SetWaiting("", false)
}

// snapshot records the process's state for fast-forward: how it waits,
// what it saw since its loop head, and its open loops.
func (p *Proc) snapshot(s *Snapshot) {
	s.Flag(p.done)
	s.Flag(p.timed)
	s.Flag(p.spinning)
	s.String(p.waitOn)
	Ident(s, p.core)
	s.Key(uint64(p.level))
	s.Key(uint64(p.inIRQ))
	s.Time(&p.wfeAt)
	s.Key(p.hist)
	s.Key(p.carry)
	s.Key(uint64(p.dirty))
	s.procs = append(s.procs, procMark{resumes: len(s.vals), marks: len(s.vals) + 1, dirty: p.dirty != 0})
	s.Uint64(&p.resumes)
	s.Uint64(&p.marks)
	s.Key(uint64(len(p.loops)))
	for _, l := range p.loops {
		l.snapshot(s)
	}
	s.Key(uint64(len(p.busies)))
	for i := range p.busies {
		s.Time(&p.busies[i].start)
		s.Key(uint64(p.busies[i].left))
	}
}
