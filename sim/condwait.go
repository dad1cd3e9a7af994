package sim

// Waiting for a word in WFE: CondWait runs arm64's smp_cond_load_acquire
// loop (__cmpwait: LDXR arms the exclusive monitor, WFE sleeps until the
// line is written) as a small state machine that the core's wake event
// drives, so the many wake-ups after which the value still does not satisfy
// the wait (every waiter of a ticket lock wakes at each release, and all but
// one sleep again) cost no context switch. Each step is what the loop written
// with Load, LoadExclusive and WFE does at that point, in the same order,
// with the same waits: the run is the same, bit for bit (TestCondWait*).

// condStage is where a CondWait stands in its loop.
type condStage uint8

const (
	condLoad  condStage = iota // load the word
	condTest                   // the load is back: test the value
	condLdxr                   // sevl; wfe; ldxr (with a monitor), or go to sleep
	condSleep                  // sleep in WFE unless an event is latched
	condWoken                  // the sleep ended
	condWake                   // the wake-up latency after a timed wake has passed
)

// condState is what a CondWait polls and where its loop stands.
type condState struct {
	addr     Addr
	cond     func(uint64) bool
	monitor  bool
	timeout  Time
	onAccess func()
	stage    condStage
	v        uint64    // the value last loaded
	waited   Time      // when the sleep's timed wait was to end (stream tick or deadline)
	stream   Time      // the event-stream tick of that sleep (never: none)
	cause    WakeCause // what ended the sleep
	done     bool      // cond held for v
	irq      bool      // interrupts to take on the process before going on
}

// CondWait waits in WFE until cond holds for the word at a and returns that
// value, as arm64's smp_cond_load_acquire: the loop loads the word and tests
// it; when the test fails it runs sevl; wfe; then, with monitor, ldxr (which
// arms the exclusive monitor on the line) and sleeps in WFE only if the word
// is still the value tested, so the next write to the line is the wake-up;
// without monitor it sleeps in WFE at once, woken by an SEV. Interrupts and
// the event stream also end a sleep; a timeout > 0 bounds each sleep (WFET).
// v is the value the caller last loaded and found failing: the loop starts
// at its sevl. onAccess, when not nil, is called before each access.
//
// Wake-ups that do not end the wait are settled from the core's wake event,
// with no context switch; each step does what the same loop written with
// Load, LoadExclusive and WFE does.
func (p *Proc) CondWait(a Addr, v uint64, cond func(uint64) bool, monitor bool, timeout Time, onAccess func()) uint64 {
	st := condState{addr: a, cond: cond, monitor: monitor, timeout: timeout, onAccess: onAccess, stage: condLdxr, v: v}
	for {
		c := p.core // a handler may have moved the task to another core
		c.cw, c.cwOn = st, true
		if c.condStep() {
			// It waits: the steps go on from the core's wake events, and
			// the process is resumed when the wait ends or interrupts are
			// due (in await, its own wake event runs the next step).
			for c.cwOn {
				p.await()
			}
		}
		st = c.cw // a handler's own CondWait may use the core's next
		if st.done {
			return st.v
		}
		st.irq = false // a sleep woke for an interrupt: take it, then go on
		p.takeInterrupts()
	}
}

// condStep runs the core's CondWait from its current stage until it must
// wait (it reports true: the wake is scheduled) or the process must go on
// (false: the value satisfies the wait, or interrupts are due).
func (c *Core) condStep() bool {
	st, p, e := &c.cw, c.cur, c.e
	for {
		switch st.stage {
		case condLoad:
			if st.onAccess != nil {
				st.onAccess()
			}
			v, done := c.load(st.addr)
			st.v = v
			p.observe(v)
			c.Stall += done - e.now
			st.stage = condTest
			if c.condWait(done, waitNone) {
				return true
			}
		case condTest:
			if st.cond(st.v) {
				st.done = true
				c.cwOn = false
				return false
			}
			st.stage = condLdxr
		case condLdxr:
			if !st.monitor {
				st.stage = condSleep
				continue
			}
			// sevl; wfe: the first wfe only consumes the local event.
			c.event = false
			if st.onAccess != nil {
				st.onAccess()
			}
			v, done := c.loadExclusive(st.addr)
			p.observe(v)
			c.Stall += done - e.now
			if v != st.v {
				st.stage = condLoad // the word moved on: test it again
			} else {
				st.stage = condSleep
			}
			if c.condWait(done, waitNone) {
				return true
			}
		case condSleep:
			if c.event {
				c.event = false
				st.stage = condLoad
				continue
			}
			deadline := never
			if st.timeout > 0 {
				deadline = e.now + st.timeout
			}
			st.waited, st.stream = c.sleepWFE(deadline)
			st.stage = condWoken
			if c.deliverable() {
				c.cause = WakeInterrupt
				continue
			}
			if st.waited < never {
				if c.condWait(st.waited, waitWFE) {
					return true
				}
				c.cause = WakeTimer // reached without a wait
				continue
			}
			c.wait = waitWFE
			return true
		case condWoken:
			st.cause = c.cause
			if st.waited < never && st.cause == WakeTimer {
				if st.waited == st.stream {
					st.cause = WakeEventStream
				}
				st.stage = condWake
				if c.condWait(e.now+c.Cycles(c.Cfg.WakeCycles), waitNone) {
					return true
				}
				continue
			}
			st.stage = condWake
		case condWake:
			c.wokeWFE(st.cause)
			st.stage = condLoad
			if st.cause == WakeInterrupt {
				st.irq = true
				c.cwOn = false
				return false
			}
		}
	}
}

// condWait is waitUntil for a step: it moves the clock to t when nothing
// else can happen first (settling spinners' polls due before it, as
// waitUntil does) and reports false; otherwise it schedules the core's wake
// at t and reports true. A wait that interrupts end (kind != waitNone)
// reports an interrupt already deliverable as a wake at once.
func (c *Core) condWait(t Time, kind waitKind) bool {
	e := c.e
	for {
		if e.canRunTo(t) {
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

// condResume runs the next step of c's CondWait from its wake event (the
// process's resumption, counted as one), and resumes the process when the
// wait ends or interrupts are due.
func (c *Core) condResume() {
	c.wait = waitNone
	c.cur.resumed()
	if c.condStep() {
		c.e.settled++
		return
	}
	c.e.run(c.cur)
}

// snapshot records where the wait stands (cond's captured values were read
// by the process, so its history covers them; onAccess is the caller's
// bookkeeping, which its own state records).
func (st *condState) snapshot(s *Snapshot) {
	s.Key(uint64(st.addr))
	s.Flag(st.monitor)
	s.Key(uint64(st.timeout))
	s.Key(uint64(st.stage))
	s.Key(st.v)
	s.Time(&st.waited)
	s.Time(&st.stream)
	s.Key(uint64(st.cause))
	s.Flag(st.done)
	s.Flag(st.irq)
}
