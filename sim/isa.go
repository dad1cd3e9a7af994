package sim

// The instructions a process executes on memory and the event register:
// loads, stores, atomics and the ARM exclusive pair, each an access of the
// memory model (memory.go), and WFE and SEV, which a cleared exclusive
// monitor ties to them.

// Load reads the word at a.
func (p *Proc) Load(a Addr) uint64 {
	v, done := p.core.load(a)
	p.observe(v)
	p.stall(done)
	return v
}

// load issues a load of a by c now: the value, and when the access
// completes.
func (c *Core) load(a Addr) (uint64, Time) {
	r, w, _, _, done := c.e.mem.access(c, a, false, false)
	return r.words[w], done
}

// Store writes v to the word at a.
func (p *Proc) Store(a Addr, v uint64) {
	m := p.e.mem
	r, w, ln, lands, done := m.access(p.core, a, true, false)
	same := r.words[w] == v
	r.words[w] = v
	m.wrote(p.core, ln, r, lands, !same)
	p.stall(done)
}

// CAS atomically replaces the word at a with new if it equals old; it
// returns the previous value and whether it swapped. Like S32C1I or an
// LSE CAS it always needs the line (or the memory port) exclusively; one
// that fails writes nothing, so it clears other cores' exclusive monitors
// only with Coherence.MonitorLoss.
func (p *Proc) CAS(a Addr, old, new uint64) (uint64, bool) {
	m := p.e.mem
	r, w, ln, lands, done := m.access(p.core, a, true, true)
	prev := r.words[w]
	if prev == old {
		r.words[w] = new
		m.wrote(p.core, ln, r, lands, new != prev)
	}
	p.observe(prev)
	p.stall(done)
	return prev, prev == old
}

// Swap atomically writes v to a and returns the previous value.
func (p *Proc) Swap(a Addr, v uint64) uint64 {
	return p.rmw(a, func(uint64) uint64 { return v })
}

// FetchAdd atomically adds d to the word at a and returns the previous value.
func (p *Proc) FetchAdd(a Addr, d uint64) uint64 {
	return p.rmw(a, func(prev uint64) uint64 { return prev + d })
}

func (p *Proc) rmw(a Addr, f func(uint64) uint64) uint64 {
	m := p.e.mem
	r, w, ln, lands, done := m.access(p.core, a, true, true)
	prev := r.words[w]
	r.words[w] = f(prev)
	m.wrote(p.core, ln, r, lands, r.words[w] != prev)
	p.observe(prev)
	p.stall(done)
	return prev
}

// PrefetchStore requests a's line for writing (ARM PRFM PSTL1STRM, ARMv7
// PLDW) and waits for it, so the load-exclusive and store-exclusive that
// follow, as in Linux's LL/SC atomics, find the line owned: one transfer,
// where a load-exclusive alone takes the line shared and its
// store-exclusive then takes it again to own it. It changes no value, so,
// like a failed CAS, it takes other cores' copies without clearing their
// exclusive monitors (the store that follows does), unless
// Coherence.MonitorLoss says a monitor goes with the line. A core that
// shares the line already leaves it shared unless its
// CoreConfig.PrefetchUpgrade says otherwise.
func (p *Proc) PrefetchStore(a Addr) {
	p.stall(p.core.prefetchStore(a))
}

// prefetchStore issues PRFM PSTL1STRM of a by c now: when the line is c's.
// A line c already owns, or uncached memory, has nothing to fetch: the hint
// costs no wait. Nor does a line c shares, unless CoreConfig.PrefetchUpgrade
// says such a hit takes the line owned.
func (c *Core) prefetchStore(a Addr) Time {
	m := c.e.mem
	if r, _, li := m.find(a); r.Uncached || r.lines[li].sharers == 1<<c.ID ||
		r.lines[li].sharers&(1<<c.ID) != 0 && !c.Cfg.PrefetchUpgrade {
		return c.e.now
	}
	_, _, _, _, done := m.access(c, a, true, false)
	return done
}

// LoadExclusive reads a and arms the core's exclusive monitor on its line
// (ARM LDXR/LDAXR).
func (p *Proc) LoadExclusive(a Addr) uint64 {
	v, done := p.core.loadExclusive(a)
	p.observe(v)
	p.stall(done)
	return v
}

// loadExclusive issues LDXR of a by c now: the value, and when the access
// completes.
func (c *Core) loadExclusive(a Addr) (uint64, Time) {
	m := c.e.mem
	r, w, ln, _, done := m.access(c, a, false, false)
	c.clearMonitor()
	c.monLine, c.monReg = int64(uint64(a-r.Base)>>m.lineBits), r
	ln.monitors |= 1 << c.ID
	return r.words[w], done
}

// StoreExclusive writes v to a if the core's monitor still covers a's line
// (ARM STXR/STLXR); it reports success. The monitor is cleared either way.
func (p *Proc) StoreExclusive(a Addr, v uint64) bool {
	c := p.core
	held, done := c.storeExclusive(a, v)
	if !held {
		p.Compute(c.Cfg.HitCycles)
		return false
	}
	p.stall(done)
	return true
}

// storeExclusive issues STXR of v to a by c now: whether the monitor still
// covered a's line (the process sees which), and when the store completes
// if it did.
func (c *Core) storeExclusive(a Addr, v uint64) (held bool, done Time) {
	m := c.e.mem
	r, _, li := m.find(a)
	held = c.monReg == r && c.monLine == int64(li)
	c.clearMonitor()
	if !held {
		c.cur.observe(0)
		return false, 0
	}
	c.cur.observe(1)
	r, w, ln, lands, done := m.access(c, a, true, false)
	same := r.words[w] == v
	r.words[w] = v
	m.wrote(c, ln, r, lands, !same)
	return true, done
}

// ClearExclusive clears the core's exclusive monitor (ARM CLREX).
func (p *Proc) ClearExclusive() { p.core.clearMonitor() }

func (c *Core) clearMonitor() {
	if c.monReg != nil {
		c.monReg.lines[c.monLine].monitors &^= 1 << c.ID
	}
	c.monLine, c.monReg = -1, nil
}

// dropMonitorEvent reports whether fault injection loses this wake-up.
func (c *Core) dropMonitorEvent() bool {
	return c.e.faults.LoseWake > 0 && c.e.faultRand().Float64() < c.e.faults.LoseWake
}

// WFE waits for an event (ARM WFE): it returns at once, clearing the event
// register, when an event is latched; otherwise the core sleeps until an
// event (SEV, a cleared exclusive monitor), a deliverable interrupt (taken
// before WFE returns) or the event stream. It returns what woke it.
func (p *Proc) WFE() WakeCause { return p.wfe(never) }

// WFET is WFE with a timeout (ARMv8.7 FEAT_WFxT): it also wakes, with
// WakeTimer (counted in Core.Wakeups), when the time reaches deadline,
// whether or not the event stream is on. A deadline already passed makes
// it return at once.
func (p *Proc) WFET(deadline Time) WakeCause { return p.wfe(deadline) }

// wfe is WFE with a deadline (never: none).
func (p *Proc) wfe(deadline Time) WakeCause {
	c := p.core
	if c.event {
		c.event = false
		return WakeEvent
	}
	if deadline <= p.e.now {
		return WakeTimer
	}
	var cause WakeCause
	if t, stream := c.sleepWFE(deadline); t < never {
		cause = p.waitUntil(t, waitWFE)
		if cause == WakeTimer {
			if t == stream {
				cause = WakeEventStream
			}
			p.waitUntil(p.e.now+c.Cycles(c.Cfg.WakeCycles), waitNone)
		}
	} else {
		cause = p.waitFor(waitWFE)
	}
	c.wokeWFE(cause)
	if cause == WakeInterrupt {
		p.takeInterrupts()
	}
	return cause
}

// sleepWFE puts c in WFE until deadline (never: none) and returns when the
// sleep's timed wait ends, if ever: at the deadline or the next tick of
// the event stream, which it also returns (never when it is off).
func (c *Core) sleepWFE(deadline Time) (t, stream Time) {
	c.setState(StateWFE)
	if c.monReg != nil && c.cur != nil {
		c.cur.wfeAt = c.e.now // watching a line: a wait another core must end (Proc.stuck)
	}
	stream = never
	if c.Cfg.EventStream > 0 {
		stream = c.nextStreamTick()
	}
	return min(stream, deadline), stream
}

// wokeWFE books the end of c's WFE sleep by cause: the event register is
// consumed and the core runs again.
func (c *Core) wokeWFE(cause WakeCause) {
	c.event = false
	c.Wakeups[cause]++
	c.cur.observe(uint64(cause))
	c.setState(c.runState())
}

// nextStreamTick returns the next event-stream time strictly after now.
func (c *Core) nextStreamTick() Time {
	per, ph := c.Cfg.EventStream, c.Cfg.EventPhase%c.Cfg.EventStream
	now := c.e.now
	k := (now - ph) / per
	t := ph + k*per
	for t <= now {
		t += per
	}
	return t
}

// SEV sends an event to every core (ARM SEV).
func (p *Proc) SEV() { p.e.sev(p.e.now) }

// SEVL sets the local event register (ARM SEVL), so the next WFE falls
// through: the first iteration of a wait loop re-checks before sleeping.
func (p *Proc) SEVL() { p.core.event = true }
