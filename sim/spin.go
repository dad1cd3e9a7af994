package sim

import "strconv"

// Spinning: SpinUntil and SpinCAS cost what the polling loop costs without
// an event per iteration (see the package documentation). A suspended
// spinner's failed polls are settled from its core's wake event (poll),
// and on uncached memory its periodic port occupancy enters the port's
// arbitration (Memory.grant, delayPolls).

// spinState is what a spinner polls and how. A handler taken while
// spinning may spin itself, so each spin keeps its own and re-installs it
// on the core before it waits.
type spinState struct {
	addr     Addr
	reg      *region
	w        int
	loop     Time
	rmw      bool // a CAS loop (else a load loop)
	old, new uint64
	cond     func(uint64) bool
	val      uint64 // the value the successful poll saw
}

// ends reports whether value v of the watched word ends the spin.
func (st *spinState) ends(v uint64) bool {
	if st.rmw {
		return v == st.old
	}
	return st.cond(v)
}

// snapshot records what the spin polls and how (its region and word
// follow from addr; cond's captured values were read by the process, so
// its history covers them).
func (st *spinState) snapshot(s *Snapshot) {
	s.Key(uint64(st.addr))
	s.Key(uint64(st.loop))
	s.Flag(st.rmw)
	s.Key(st.old)
	s.Key(st.new)
	s.Key(st.val)
}

// SpinUntil polls the word at a every loop cycles until cond holds for
// its value, and returns that value (a busy-wait: test-and-test-and-set,
// a ticket or MCS spin on a plain load). It costs what the loop costs —
// the first read, the port occupancy of every poll on uncached memory,
// the re-read after each write — without simulating each iteration:
// between writes to the line every poll returns the same value. cond must
// be a pure function of the value. Interrupts are taken while spinning.
func (p *Proc) SpinUntil(a Addr, loop int64, cond func(uint64) bool) uint64 {
	return p.spin(spinState{addr: a, cond: cond}, loop, func() (uint64, bool) {
		v := p.Load(a)
		return v, cond(v)
	})
}

// SpinCAS retries CAS(a, old, new) every loop cycles until it succeeds
// (the ESP32 spinlock: S32C1I in a tight loop, no backoff). On uncached
// memory every attempt holds the port like the atomic it is; on cached
// memory each attempt takes the line exclusively, as the hardware does.
func (p *Proc) SpinCAS(a Addr, old, new uint64, loop int64) {
	p.spin(spinState{addr: a, rmw: true, old: old, new: new}, loop, func() (uint64, bool) { return p.CAS(a, old, new) })
}

func (p *Proc) spin(st spinState, loop int64, try func() (uint64, bool)) uint64 {
	if loop < 0 {
		p.negative("spin loop", strconv.FormatInt(loop, 10)+" cycles")
	}
	c := p.core
	m := p.e.mem
	c.setState(StateSpin)
	defer func() { c.setState(c.runState()) }() // c may change: a handler may move this task to another core
	r, w, li := m.find(st.addr)
	ln := &r.lines[li]
	st.reg, st.w, st.loop = r, w, c.Cycles(loop)
	for {
		issued, writes := p.e.now, ln.writes
		v, ok := try()
		if ok {
			return v
		}
		if ln.writes != writes || (!r.Uncached && st.rmw) {
			// A write landed while this poll was in flight (it read the
			// old value at issue), or each failed attempt moved the line
			// here and other spinners steal it back: poll again for real.
			p.Compute(loop)
			c.setState(StateSpin)
			continue
		}
		c.sp = st
		c.arm(ln, r, issued, p.e.now)
		p.spinning = true
		cause := p.waitFor(waitSpin)
		p.spinning = false
		ln.spinners &^= 1 << c.ID
		m.pollers &^= 1 << c.ID
		switch cause {
		case WakeSpinDone:
			p.observe(c.sp.val)
			return c.sp.val
		case WakeInterrupt:
			p.takeInterrupts()
			c = p.core // a handler may have switched tasks; we resume on the core we now run on
			c.setState(StateSpin)
		default:
			panic("sim: spinner resumed by " + cause.String())
		}
	}
}

// arm registers c as a spinner whose failed poll was issued at issued and
// completed at done: polls repeat every (poll duration + loop body).
func (c *Core) arm(ln *line, r *region, issued, done Time) {
	c.spinPhase, c.spinPeriod = issued, max(done-issued+c.sp.loop, 1)
	c.spinDelayed, c.spinDue, c.spinReserved = issued, issued, issued
	ln.spinners |= 1 << c.ID
	if r.Uncached {
		c.spinOcc = r.Occupancy
		if c.sp.rmw {
			c.spinOcc *= 2
		}
		c.e.mem.pollers |= 1 << c.ID
	}
}

// poll runs one poll of a suspended spinner from the event that its wake
// is, so a poll that fails costs no context switch: it re-arms the
// spinner. A poll that succeeds resumes the spinner when it completes.
func (c *Core) poll() {
	m := c.e.mem
	st := &c.sp
	m.pollers &^= 1 << c.ID
	issued := c.e.now
	r, w, ln, lands, done := m.access(c, st.addr, st.rmw, st.rmw)
	v := r.words[w]
	if !st.ends(v) {
		c.arm(ln, r, issued, done)
		return
	}
	if st.rmw {
		r.words[w] = st.new
		m.wrote(c, ln, r, lands, st.new != v)
	}
	st.val = v
	c.Stall += done - issued
	c.wait = waitNone
	c.cause, c.pendingAt = WakeSpinDone, done
	c.e.At(done, c.resumeEv)
}

// nextPoll returns the first poll of c's spin loop at or after t.
func (c *Core) nextPoll(t Time) Time {
	if t <= c.spinPhase {
		return c.spinPhase
	}
	k := (t - c.spinPhase + c.spinPeriod - 1) / c.spinPeriod
	return c.spinPhase + k*c.spinPeriod
}

// delayPolls moves c's polls from the one starting at next on by d; that
// poll keeps the time it was due, which decides its place among later
// requests for the port (Memory.grant).
func (c *Core) delayPolls(next, d Time) {
	due := next
	if next == c.spinDelayed {
		due = c.spinDue
	}
	c.spinPhase += d
	c.spinDelayed, c.spinDue = next+d, due
	if c.resumeEv.Pending() && c.cause == WakeLine && c.pendingAt >= next {
		c.pendingAt += d
		c.e.At(c.pendingAt, c.resumeEv)
	}
}
