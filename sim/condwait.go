package sim

// Waiting for a word, and taking a lock word: CondWait runs arm64's
// smp_cond_load_acquire loop (polls, then __cmpwait: LDXR arms the exclusive
// monitor, WFE sleeps until the line is written) and Acquire an LL/SC
// lock-acquire loop as a small state machine that the core's wake event
// drives. Polls, and wake-ups after which the lock is still not to be had
// (every waiter of a ticket lock wakes at each release, and all but one
// sleep again), cost no context switch. Each step is what the same loop
// written with Load, Compute, LoadExclusive, StoreExclusive and WFE does at
// that point, in the same order, with the same waits: the run is the same,
// bit for bit (TestCondWaitMatchesExplicitLoop,
// TestAcquireMatchesExplicitLoop).

// condStage is where a CondWait stands in its loop.
type condStage uint8

const (
	condLoad    condStage = iota // load the word
	condTest                     // the load is back: test the value
	condFailed                   // the test failed: poll again after a pause, or sleep
	condRelax                    // busy-wait RelaxCycles (what is left of them after an interrupt)
	condRelaxed                  // the busy-wait ended, or an interrupt cut it short
	condLdxr                     // sevl; wfe; ldxr (with a monitor), or go to sleep
	condSleep                    // sleep in WFE unless an event is latched
	condWoken                    // the sleep ended
	condWake                     // the wake-up latency after a timed wake has passed
	acqPrefetch                  // Acquire: an attempt's PRFM PSTL1STRM (with AcquireLoop.Prefetch)
	acqLdxr                      // an attempt's LDXR (again after a lost monitor)
	acqOp                        // its value is back: compute the store, or decline
	acqStored                    // the STXR's store is back
	acqFailed                    // the attempt failed: wait or pause before the next
)

// WaitPolicy says how CondWait passes the time between tests of the word.
type WaitPolicy struct {
	// Polls: the first Polls failed tests are each followed by RelaxCycles
	// of busy-waiting (cpu_relax) and a new load; after them the loop
	// sleeps in WFE.
	Polls       int
	RelaxCycles int64
	// Monitor: before each sleep, ldxr arms the exclusive monitor on the
	// word's line and the sleep is skipped if the word changed, so the next
	// write to the line is the wake-up (arm64 __cmpwait); without it the
	// sleep waits for an SEV.
	Monitor bool
	// Timeout > 0 ends each sleep after it (WFET).
	Timeout Time
	// OnAccess, when not nil, is called before each access (the caller's
	// count of its accesses).
	OnAccess func()
}

// AcquireLoop is an arm64 lock-acquire loop for Proc.Acquire: attempts by
// LL/SC, and what to do between them.
type AcquireLoop struct {
	// Op computes the value an attempt stores from the value its LDXR
	// read, or declines (false: nothing is stored).
	Op func(old uint64) (uint64, bool)
	// Taken reports whether the attempt that read old took the lock.
	Taken func(old uint64) bool
	// Test, when set, is test-and-test-and-set: between attempts the loop
	// waits for Test to hold for the word (a CondWait under Wait).
	// Without it, each failed attempt is followed by one pause: the first
	// Wait.Polls pauses busy-wait Wait.RelaxCycles, later ones sleep in WFE
	// (WFET with Wait.Timeout) with no monitor armed.
	Test func(v uint64) bool
	Wait WaitPolicy
	// OnStore, when set, runs after each store (Linux's wake_up_var).
	OnStore func()
	// Prefetch: each attempt begins with PRFM PSTL1STRM (Proc.PrefetchStore),
	// as Linux's LL/SC atomics do; a retry after a lost monitor does not.
	Prefetch bool
}

// condState is what a CondWait or an Acquire polls and where its loop
// stands.
type condState struct {
	addr Addr
	cond func(uint64) bool
	pol  WaitPolicy
	// An Acquire's attempt (op nil for a CondWait): see AcquireLoop.
	op      func(uint64) (uint64, bool)
	taken   func(uint64) bool
	onStore func()
	attempt condStage // where an attempt begins: acqPrefetch or acqLdxr
	stage   condStage
	next    condStage // where the loop goes on after a pause or a sleep
	v       uint64    // the value last loaded
	polls   int       // polls (or pauses) left before the loop sleeps
	failed  int       // Acquire's failed attempts
	left    Time      // busy-waiting left (0: none begun)
	pause   bool      // that busy-waiting is a poll's pause (spinning), not an instruction's cost
	start   Time      // when the current stretch of busy-waiting began
	waited  Time      // when the sleep's timed wait was to end (stream tick or deadline)
	stream  Time      // the event-stream tick of that sleep (never: none)
	cause   WakeCause // what ended the sleep
	done    bool      // cond held for v, or an attempt took the lock
	irq     bool      // interrupts to take on the process before going on
}

// CondWait waits until cond holds for the word at a and returns that value,
// as arm64's smp_cond_load_acquire under a wait policy: the loop loads the
// word and tests it; after a failed test it first polls (w.Polls times,
// w.RelaxCycles apart), then sleeps: sevl; wfe; then with w.Monitor ldxr,
// which arms the exclusive monitor on the line, and WFE only if the word is
// still the value tested, so the next write to the line is the wake-up;
// without a monitor WFE at once, woken by an SEV. Interrupts and the event
// stream also end a sleep, and w.Timeout bounds each (WFET). cond is called
// once per test, at the test's time, so it may count its tests (a bounded
// wait); it must read nothing else that changes.
//
// The steps run from the core's wake events: a poll, or a wake-up, that does
// not end the wait costs no context switch, and polls that no event can
// come between run at once. Each does what the same loop written with Load,
// Relax, LoadExclusive and WFE does.
func (p *Proc) CondWait(a Addr, cond func(uint64) bool, w WaitPolicy) uint64 {
	st := p.runCond(condState{addr: a, cond: cond, pol: w, stage: condLoad, next: condLoad, polls: w.Polls})
	return st.v
}

// Acquire runs the lock-acquire loop l on the word at a until an attempt
// takes the lock: each attempt is LDXR (after PRFM PSTL1STRM with
// l.Prefetch), l.Op, and STXR of its value (again from LDXR when the
// monitor was lost); between failed attempts it waits or
// pauses as l says. It returns the value the taking attempt read and how
// many attempts failed. Like CondWait, its steps run from the core's wake
// events, and each does what the same loop written with PrefetchStore,
// LoadExclusive, StoreExclusive, Load, Relax and WFE does.
func (p *Proc) Acquire(a Addr, l AcquireLoop) (uint64, int) {
	first := acqLdxr
	if l.Prefetch {
		first = acqPrefetch
	}
	st := condState{addr: a, cond: l.Test, pol: l.Wait, op: l.Op, taken: l.Taken, onStore: l.OnStore, attempt: first, stage: first, next: first}
	if l.Test == nil {
		st.polls = l.Wait.Polls
	}
	st = p.runCond(st)
	return st.v, st.failed
}

// runCond runs st's steps on p's core until its loop ends, taking
// interrupts on p between them, and returns its final state.
func (p *Proc) runCond(st condState) condState {
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
			return st
		}
		st.irq = false // interrupts cut a pause or a sleep: take them, then go on
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
			if c.condRead(st, c.load, condTest) {
				return true
			}
		case condTest:
			if st.cond(st.v) {
				if st.op != nil { // test-and-test-and-set: the word looks free, try it
					st.stage = st.attempt
					continue
				}
				st.done = true
				c.cwOn = false
				return false
			}
			st.stage = condFailed
		case condFailed:
			if st.polls > 0 && c.skipPolls(st) {
				if st.op != nil {
					st.stage = st.attempt
					continue
				}
				st.done = true
				c.cwOn = false
				return false
			}
			st.stage = condLdxr
			if st.polls > 0 {
				st.polls--
				st.stage, st.pause = condRelax, true
			}
		case condRelax:
			// Relax(RelaxCycles), or Compute(left) for an instruction's
			// cost: interrupts cut it, and it goes on after them.
			if st.left == 0 {
				st.left = c.Cycles(st.pol.RelaxCycles)
				p.dirty++ // start is a time held across the wait
			}
			if st.pause {
				c.setState(StateSpin)
			} else {
				c.setState(c.runState())
			}
			st.start = e.now
			st.stage = condRelaxed
			if c.deliverable() {
				c.cause = WakeInterrupt
				continue
			}
			if c.advance(e.now+st.left, waitTimed) {
				return true
			}
			c.cause = WakeTimer
		case condRelaxed:
			if c.cause == WakeTimer {
				st.left = 0
				p.dirty--
				st.stage = st.next
				continue
			}
			st.left -= e.now - st.start
			st.stage = condRelax
			st.irq = true
			c.cwOn = false
			return false
		case condLdxr:
			if !st.pol.Monitor {
				st.stage = condSleep
				continue
			}
			// sevl; wfe: the first wfe only consumes the local event.
			c.event = false
			if st.pol.OnAccess != nil {
				st.pol.OnAccess()
			}
			v, done := c.loadExclusive(st.addr)
			p.observe(v)
			c.Stall += done - e.now
			if v != st.v {
				st.stage = condLoad // the word moved on: test it again
			} else {
				st.stage = condSleep
			}
			if c.advance(done, waitNone) {
				return true
			}
		case condSleep:
			if c.event {
				c.event = false
				st.stage = st.next
				continue
			}
			deadline := never
			if st.pol.Timeout > 0 {
				deadline = e.now + st.pol.Timeout
			}
			st.waited, st.stream = c.sleepWFE(deadline)
			st.stage = condWoken
			if c.deliverable() {
				c.cause = WakeInterrupt
				continue
			}
			if st.waited < never {
				if c.advance(st.waited, waitWFE) {
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
				if c.advance(e.now+c.Cycles(c.Cfg.WakeCycles), waitNone) {
					return true
				}
				continue
			}
			st.stage = condWake
		case condWake:
			c.wokeWFE(st.cause)
			st.stage = st.next
			if st.cause == WakeInterrupt {
				st.irq = true
				c.cwOn = false
				return false
			}
		case acqPrefetch:
			done := c.prefetchStore(st.addr)
			c.Stall += done - e.now
			st.stage = acqLdxr
			if c.advance(done, waitNone) {
				return true
			}
		case acqLdxr:
			if c.condRead(st, c.loadExclusive, acqOp) {
				return true
			}
		case acqOp:
			nv, ok := st.op(st.v)
			if !ok {
				st.stage = acqFailed
				continue
			}
			held, done := c.storeExclusive(st.addr, nv)
			if !held {
				// A lost monitor costs a hit (StoreExclusive's Compute),
				// then the LDXR again.
				st.stage = acqLdxr
				if c.Cfg.HitCycles > 0 {
					st.left, st.next = c.Cycles(c.Cfg.HitCycles), acqLdxr
					p.dirty++
					st.stage, st.pause = condRelax, false
				}
				continue
			}
			c.Stall += done - e.now
			st.stage = acqStored
			if c.advance(done, waitNone) {
				return true
			}
		case acqStored:
			if st.onStore != nil {
				st.onStore()
			}
			if st.taken(st.v) {
				st.done = true
				c.cwOn = false
				return false
			}
			st.stage = acqFailed
		case acqFailed:
			st.failed++
			if st.cond != nil {
				// Wait until the word looks free, with the polls afresh.
				st.stage, st.next, st.polls = condLoad, condLoad, st.pol.Polls
				continue
			}
			// One pause: busy-wait while polls are left, else WFE.
			st.next = st.attempt
			st.stage = condSleep
			if st.polls > 0 {
				st.polls--
				st.stage, st.pause = condRelax, true
			}
		}
	}
}

// condRead reads the word with load (counted, seen by the process) into
// st.v, and goes on at next once the read completes: it reports true when
// the step must wait for that.
func (c *Core) condRead(st *condState, load func(Addr) (uint64, Time), next condStage) bool {
	if st.pol.OnAccess != nil {
		st.pol.OnAccess()
	}
	v, done := load(st.addr)
	st.v = v
	c.cur.observe(v)
	c.Stall += done - c.e.now
	st.stage = next
	return c.advance(done, waitNone)
}

// skipPolls runs at once the polls of st that nothing can interleave: while
// the word's line stays in c's cache and no event comes, every poll is a hit
// that reads the same value, so the polls up to the next event cost a time,
// a stall and a test each, with no step each. It reports whether a test
// held (cond may count its tests, as a bounded wait does).
func (c *Core) skipPolls(st *condState) bool {
	e := c.e
	r, w, li := e.mem.find(st.addr)
	if r.Uncached || r.lines[li].sharers&(1<<c.ID) == 0 || c.deliverable() {
		return false
	}
	hit := c.Cycles(c.Cfg.HitCycles)
	per := c.Cycles(st.pol.RelaxCycles) + hit
	// A poll may end at t only if t < the next event and t <= Until.
	end := e.peek() - 1
	if e.Until != 0 {
		end = min(end, e.Until)
	}
	k := min(Time(st.polls), (end-e.now)/per)
	if k <= 0 {
		return false
	}
	p, v := c.cur, r.words[w]
	held := false
	var n Time
	for n < k && !held {
		n++
		if st.pol.OnAccess != nil {
			st.pol.OnAccess()
		}
		p.observe(v)
		held = st.cond(v)
	}
	// Each poll is a pause and a load: the loop spins (a load sets no state).
	c.Stall += n * hit
	c.setState(StateSpin)
	e.now += n * per
	st.polls -= int(n)
	st.v = v
	return held
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
// by the process, so its history covers them; OnAccess is the caller's
// bookkeeping, which its own state records).
func (st *condState) snapshot(s *Snapshot) {
	s.Key(uint64(st.addr))
	s.Flag(st.op != nil)
	s.Key(uint64(st.next))
	s.Key(uint64(st.failed))
	s.Key(uint64(st.pol.Polls))
	s.Key(uint64(st.pol.RelaxCycles))
	s.Flag(st.pol.Monitor)
	s.Key(uint64(st.pol.Timeout))
	s.Key(uint64(st.stage))
	s.Key(uint64(st.attempt))
	s.Key(st.v)
	s.Key(uint64(st.polls))
	s.Key(uint64(st.left))
	s.Flag(st.pause)
	s.Time(&st.start)
	s.Time(&st.waited)
	s.Time(&st.stream)
	s.Key(uint64(st.cause))
	s.Flag(st.done)
	s.Flag(st.irq)
}
