package sim

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strings"
)

// Event is a schedulable action. An Event value is reusable: scheduling it
// again moves it, and cancelling it removes it. Components keep one Event per
// recurring action so the hot path allocates nothing.
type Event struct {
	fn   func()
	core *Core  // set on a core's resume event
	seq  uint64 // sequence of its queue entry; 0 when not pending
	t    Time   // time of its queue entry, while pending
	bg   bool   // background (periodic) events do not keep a run alive
}

// NewEvent returns an event that calls fn when it fires. Background events
// (periodic ticks) do not count as pending work for deadlock detection.
func NewEvent(fn func(), background bool) *Event { return &Event{fn: fn, bg: background} }

// Pending reports whether ev is scheduled.
func (ev *Event) Pending() bool { return ev.seq != 0 }

type entry struct {
	t   Time
	seq uint64
	ev  *Event
}

func (a entry) less(b entry) bool { return a.t < b.t || (a.t == b.t && a.seq < b.seq) }

// Engine is a discrete-event simulator: a queue of events ordered by
// (time, insertion sequence), so that ties resolve the same way every run.
// Cancelling or moving an event removes its entry at once: stale entries
// left for later made the queue's buckets long (most of an insertion's
// shifts were over them on the RK3399 workloads).
type Engine struct {
	now    Time
	seq    uint64
	q      *calQueue
	live   int    // pending non-background events
	events uint64 // events dispatched
	// Run checks its context when events reach checkAt, and so does a
	// process settling polls inline (which may never yield otherwise).
	checkAt uint64
	ctx     context.Context // Run's, while it runs

	seed    uint64
	procs   []*Proc
	active  int // unfinished non-daemon procs
	cores   []*Core
	mem     *Memory
	running *Proc
	// direct is false to make every wait go through Run, for tests that
	// compare direct hand-offs (Proc.await) with it; handOffs counts them,
	// and settled the CondWait wake-ups that needed no switch (for tests).
	direct bool
	// ahead is false to make every wait an event, for tests that compare
	// a process moving its clock itself (conservative lookahead) with it.
	ahead bool
	// horizon is how far a process may move its own clock: Until (never
	// without one), or before time 0 when ahead is off. Run sets it.
	horizon  Time
	handOffs uint64
	settled  uint64
	// switches counts the resumptions of a process's coroutine (Switches).
	switches uint64

	// Limits.
	Until Time // stop when simulated time would pass Until (0: no limit)
	// MaxEvents reports a runaway after this many events (0: no limit). A
	// process looping alone on its core takes none: cancel Run's context
	// to stop it.
	MaxEvents uint64

	// Trace, when set, records core-state spans (and OS lanes) in its window.
	Trace *Trace
	// sealAt is when SealTrace seals the trace: its window's end, never
	// without one; spanners report the models' open spans then.
	sealAt   Time
	spanners []TraceSpanner

	stopReason string
	progress   uint64 // resumptions of non-daemon processes
	// changes counts what processes change: memory writes (a daemon's
	// only from an interrupt handler), waits begun or ended
	// (Proc.SetWaiting), processes ended; changedAt is when the last was.
	// A long stretch without one while every process is stuck is a
	// deadlock, or a livelock if events keep waking them (stalled).
	changes   uint64
	changedAt Time
	// pollMark is the changedAt at which stalled last noted what each
	// process had read (pollHist, its Proc.hist by place in procs), to
	// tell a loop that polls memory from long work.
	pollMark Time
	pollHist []uint64
	err      error // set by Proc.Fail
	faults   Faults
	frand    *rand.Rand

	// Fast-forward and the components it reads.
	ff      *ffwd
	timers  []*Timer
	devices []*Device
	streams []*countSrc
}

// Faults injects hardware faults into a run.
type Faults struct {
	// LoseWake is the probability that a wake-up event (an SEV, or the
	// event of a cleared exclusive monitor) is lost on its way to a core,
	// as on SoCs with a faulty event line.
	LoseWake float64
}

// SetFaults enables fault injection; probabilities must be in [0, 1].
func (e *Engine) SetFaults(f Faults) error {
	if !(f.LoseWake >= 0 && f.LoseWake <= 1) {
		return fmt.Errorf("faults: LoseWake = %g must be in [0, 1]", f.LoseWake)
	}
	e.faults = f
	return nil
}

func (e *Engine) faultRand() *rand.Rand {
	if e.frand == nil {
		e.frand = e.Stream("sim/faults")
	}
	return e.frand
}

// NewEngine returns an engine whose random streams derive from seed.
func NewEngine(seed uint64) *Engine {
	return &Engine{seed: seed, q: newCalQueue(), direct: true, ahead: true, horizon: never, sealAt: never, pollMark: -1}
}

// change counts a change to the simulated state (see Engine.changes).
func (e *Engine) change() {
	e.changes++
	e.changedAt = e.now
}

// Running returns the process whose function runs now, nil outside Run
// (and while an event runs): an OS model uses it to refuse a task's handle
// used from another task's function or from outside the simulation.
func (e *Engine) Running() *Proc { return e.running }

// Now returns the current simulated time.
func (e *Engine) Now() Time { return e.now }

// Events returns the number of events dispatched so far.
func (e *Engine) Events() uint64 { return e.events }

// Switches returns how many times a process's coroutine has been resumed:
// each is a round trip of two coroutine switches (in and back out), the
// cost a wait adds to its event when the process cannot settle it on its
// own coroutine (Proc.await handles its own wake, and moves its clock when
// nothing can happen first, with none). BenchmarkCoroutineRoundTrip times
// one round trip, so that events and switches together give the floor of a
// run's wall time before any model work.
func (e *Engine) Switches() uint64 { return e.switches }

// Stream returns a random stream for the named component. Streams depend
// only on the run seed and the name, so adding a component never shifts
// another component's numbers.
func (e *Engine) Stream(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	src := &countSrc{pcg: rand.NewPCG(e.seed, h.Sum64())}
	e.streams = append(e.streams, src)
	return rand.New(src)
}

// At schedules ev to fire at time t, moving it if already pending.
// Scheduling in the past is a model bug and panics.
func (e *Engine) At(t Time, ev *Event) {
	if t < e.now {
		panic(fmt.Sprintf("sim: event scheduled at %v, before now %v", t, e.now))
	}
	if ev.seq != 0 {
		e.q.remove(entry{ev.t, ev.seq, ev})
	} else if !ev.bg {
		e.live++
	}
	e.seq++
	ev.seq, ev.t = e.seq, t
	e.q.push(entry{t, e.seq, ev})
}

// After schedules ev to fire d after now.
func (e *Engine) After(d Time, ev *Event) { e.At(e.now+d, ev) }

// Cancel removes ev from the queue if it is pending.
func (e *Engine) Cancel(ev *Event) {
	if ev.seq != 0 {
		if !ev.bg {
			e.live--
		}
		e.q.remove(entry{ev.t, ev.seq, ev})
		ev.seq = 0
	}
}

// peek returns the time of the earliest event, or a time after every
// possible event when the queue is empty.
func (e *Engine) peek() Time {
	if e.q.n > 0 {
		return e.q.min().t
	}
	return never
}

// never is a time after every event.
const never Time = 1<<63 - 1

// canRunTo reports whether the running process may move its clock to t
// without yielding: no other event can happen before t, so nothing it does
// up to t can be affected by another component (conservative lookahead).
func (e *Engine) canRunTo(t Time) bool {
	return t < e.peek() && t <= e.horizon
}

// inlinePoll runs, from the running process, the next event if it comes
// no later than t and is a spinner's poll, which never switches
// processes: the running process then need not yield for it. This keeps a
// lock holder running while a spinner's failed polls are settled beside it.
func (e *Engine) inlinePoll(t Time) bool {
	if e.q.n == 0 {
		return false
	}
	top := e.q.min()
	c := top.ev.core
	if top.t > t || c == nil || !c.pollDue() ||
		(e.Until != 0 && top.t > e.Until) {
		return false
	}
	if e.stopDue() {
		return false // yield, so that Run stops the run
	}
	e.q.pop()
	e.dispatch(top) // the running process waits to t >= top.t, so time stays ordered
	c.poll()
	return true
}

// stopDue reports, for a process settling polls inline, whether Run must
// regain control: the event budget is spent, or the context was cancelled
// (checked, as Run checks it, once every few thousand events). Only a run
// that is ending yields here, so the events of a run do not depend on when
// its context is checked (fast-forward skips move the event count).
func (e *Engine) stopDue() bool {
	if e.MaxEvents != 0 && e.events >= e.MaxEvents {
		return true
	}
	if e.events >= e.checkAt {
		if e.ctx != nil && e.ctx.Err() != nil {
			return true // Run returns ErrStopped when it regains control
		}
		e.checkAt = e.events + checkEvery
		if e.Until == 0 && e.MaxEvents == 0 && e.stalled() {
			return true // a run without limits would never end: Run returns e.err
		}
	}
	return false
}

// stallAfter is how long nothing may change while every process is stuck
// before stalled calls it a deadlock.
const stallAfter = 10 * Millisecond

// pollAfter is how long nothing may change while a process reads memory in
// a loop it did not declare, every other one stuck or doing the same,
// before stalled calls it a livelock. It is long because a bounded loop of
// reads looks the same while it lasts.
const pollAfter = 100 * Millisecond

// stalled reports, and records as the run's error (a DeadlockError), that
// nothing has changed for stallAfter while every process is stuck
// (Proc.stuck), none with a timeout: only another process could free
// one, and none will. Wake-ups in between (a WFE loop that the event
// stream wakes every period) do not count: that is a livelock. So is a
// process polling memory in a loop written by hand (it read since the
// last check, and wrote nothing), when this has lasted pollAfter and no
// timer or device event is pending that could write. Work that reads
// nothing (Compute), a switched-out process or a timeout vetoes both.
// Run asks at the time limit, the event budget and cancellation, so that
// such a run ends in this error, not in results; without limits, every
// few thousand events, or every aloneQuantum of a process running alone.
func (e *Engine) stalled() bool {
	quiet := e.now - e.changedAt
	if e.err != nil || quiet < stallAfter {
		return false
	}
	marked := e.pollMark == e.changedAt
	e.pollMark = e.changedAt
	e.pollHist = append(e.pollHist, make([]uint64, len(e.procs)-len(e.pollHist))...)
	n, polling, veto := 0, 0, false
	for i, p := range e.procs {
		if p.done || p.daemon {
			continue
		}
		read := marked && p.hist != e.pollHist[i]
		e.pollHist[i] = p.hist
		switch {
		case p.timed:
			veto = true
		case p.stuck():
		case read && p.core != nil && p.core.cur == p:
			polling++
		default:
			veto = true
		}
		n++
	}
	if veto || n == 0 || polling > 0 && (quiet < pollAfter || e.timerPending()) {
		return false
	}
	e.err = &DeadlockError{At: e.changedAt, Waiters: e.Waiters(), Stalled: quiet, Polling: polling > 0}
	return true
}

// timerPending reports whether an event other than a core's wake is
// pending: a timer or a device, whose handler may write what a loop polls.
func (e *Engine) timerPending() bool {
	for _, x := range e.q.live(nil) {
		if x.ev.core == nil {
			return true
		}
	}
	return false
}

// aloneStop is stopDue for a process moving its clock to t with no event
// due first, which takes no event at all: a loop that never waits, on a
// core with nothing else to do, would otherwise never let Run see a
// cancelled context. Each time the clock crosses a multiple of
// aloneQuantum it checks the context; when it is cancelled, the step waits
// for an event like any other, and Run, checking before that event,
// returns ErrStopped. Runs that are not cancelled take the same steps
// either way. The test is on two times at hand, so that the hot path pays
// no count.
func (e *Engine) aloneStop(t Time) bool {
	return t^e.now >= aloneQuantum && e.aloneCheck()
}

// aloneCheck is aloneStop's check, kept out of line so that aloneStop
// inlines: the context, and without limits the livelock watch (a loop
// polling memory alone on its core takes no event to be seen by).
//
//go:noinline
func (e *Engine) aloneCheck() bool {
	return e.cancelled() || e.Until == 0 && e.MaxEvents == 0 && e.stalled()
}

// aloneQuantum is how much simulated time passes between aloneStop's
// checks of Run's context: 2^24 ps, about 17 us, a few milliseconds of
// wall time for a loop of one-nanosecond steps.
const aloneQuantum Time = 1 << 24

// cancelled reports whether Run's context is cancelled, and if so makes
// Run check it before its next event.
func (e *Engine) cancelled() bool {
	if e.ctx == nil || e.ctx.Err() == nil {
		return false
	}
	e.checkAt = e.events
	return true
}

// checkEvery is how many events pass between checks of Run's context.
const checkEvery = 4096

// Step dispatches the next event. It returns false when none is left.
func (e *Engine) Step() bool {
	if e.q.n == 0 {
		return false
	}
	x := e.q.pop()
	e.dispatch(x)
	x.ev.fn()
	return true
}

// dispatch does the bookkeeping of firing the entry x, just popped:
// its event is no longer pending, and the clock moves to its time.
func (e *Engine) dispatch(x entry) {
	x.ev.seq = 0
	if !x.ev.bg {
		e.live--
	}
	e.now = x.t
	e.events++
	if x.t >= e.sealAt {
		e.seal()
	}
}

// Waiter describes a process that has not finished and what it waits on.
type Waiter struct {
	Proc string
	Core int
	On   string
}

// String says who waits on what, for deadlock and runaway reports.
func (w Waiter) String() string { return fmt.Sprintf("%s (core %d) waits on %s", w.Proc, w.Core, w.On) }

// DeadlockError reports that nothing can happen any more while processes
// still wait: each waiter and what it waits on. Stalled is not 0 when the
// run went on that long after At with every process stuck and nothing
// changed (Engine.stalled), perhaps woken again and again (a livelock);
// Polling when some of them polled memory in loops they did not declare.
type DeadlockError struct {
	At      Time
	Waiters []Waiter
	Stalled Time
	Polling bool
}

// Error says the run deadlocked, when, and who waits on what.
func (d *DeadlockError) Error() string {
	if d.Polling {
		return fmt.Sprintf("livelock at %v (for %v after it nothing was written and no wait began or ended, while loops polled memory without saying what they wait on: declare it with SpinUntil or SetWaiting, or give a read-only loop that does end a time limit): %s", d.At, d.Stalled, Waiters(d.Waiters))
	}
	if d.Stalled > 0 {
		return fmt.Sprintf("deadlock at %v (for %v after it every process was stuck and nothing changed, however often they were woken): %s", d.At, d.Stalled, Waiters(d.Waiters))
	}
	return fmt.Sprintf("deadlock at %v: %s", d.At, Waiters(d.Waiters))
}

// RunawayError reports that the event budget ran out before the run ended.
type RunawayError struct {
	At      Time
	Events  uint64
	Waiters []Waiter
}

// Error says the event budget ran out, when, and who waits on what.
func (r *RunawayError) Error() string {
	return fmt.Sprintf("runaway: event budget of %d exhausted at simulated time %v; %s", r.Events, r.At, Waiters(r.Waiters))
}

// Waiters is a list of waiting processes, as Engine.Waiters returns it.
type Waiters []Waiter

// String joins the waiters for a message: "no process waiting" when empty.
func (ws Waiters) String() string {
	if len(ws) == 0 {
		return "no process waiting"
	}
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = w.String()
	}
	return strings.Join(s, "; ")
}

// Waiters lists the unfinished processes and what each waits on.
func (e *Engine) Waiters() Waiters {
	var ws Waiters
	for _, p := range e.procs {
		if p.done || p.daemon {
			continue
		}
		on := p.waitOn
		if p.spinning && e.mem != nil {
			a := p.core.sp.addr
			on = "spin on " + e.mem.describe(a, fmt.Sprintf("value %d", e.mem.Peek(a)))
		}
		if on == "" {
			on = p.hardwareWait()
		}
		core := -1
		if p.core != nil {
			core = p.core.ID
		}
		ws = append(ws, Waiter{p.Name, core, on})
	}
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Core < ws[j].Core })
	return ws
}

// hardwareWait describes a wait the process did not describe itself.
func (p *Proc) hardwareWait() string {
	c := p.core
	if c == nil || c.cur != p {
		return "its turn on a core (switched out)"
	}
	watching := c.monReg != nil && p.wfeAt >= p.e.changedAt // in its WFE loop, between two sleeps
	switch {
	case c.wait == waitWFE || watching:
		if c.monReg != nil {
			m := p.e.mem
			a := c.monReg.Base + Addr(c.monLine)<<m.lineBits
			on := fmt.Sprintf("an event in WFE (exclusive monitor on line %#x", uint64(a))
			if n := m.nameOf(a, uint64(m.LineSize())); n != "" {
				on += " of " + n
			}
			return on + ")"
		}
		return "an event in WFE (SEV or interrupt)"
	case c.wait == waitWFI:
		if c.state >= StateIdle0 {
			return fmt.Sprintf("an interrupt in idle state %s", c.StateName(c.state))
		}
		return "an interrupt in WFI"
	case c.wait == waitTimed && c.state == StateSpin && c.lastAddr != 0:
		m := p.e.mem
		return "its own timer, pausing in a polling loop (Relax) after its access to " + m.describe(c.lastAddr, fmt.Sprintf("value %d", m.Peek(c.lastAddr)))
	case c.wait == waitTimed:
		return "its own timer"
	}
	if c.lastAddr != 0 {
		m := p.e.mem
		return "nothing it declared, running: last access " + m.describe(c.lastAddr, fmt.Sprintf("value %d", m.Peek(c.lastAddr)))
	}
	return "nothing (runnable)"
}

// ErrStopped is returned by Run when its context is cancelled.
var ErrStopped = errors.New("simulation stopped")

// StopReason says why the last Run returned: "done", "time limit", or ""
// when it returned an error.
func (e *Engine) StopReason() string { return e.stopReason }

// Run dispatches events until every non-daemon process has finished, the
// time limit is reached, the event budget runs out (RunawayError), nothing
// can happen while processes wait (DeadlockError), or ctx is cancelled
// (checked every few thousand events: well under a millisecond of wall time).
func (e *Engine) Run(ctx context.Context) error {
	if len(e.cores) == 0 {
		return errors.New("engine: cores: 0; add at least one core")
	}
	e.ctx, e.stopReason = ctx, ""
	switch {
	case !e.ahead:
		e.horizon = -1
	case e.Until == 0:
		e.horizon = never
	default:
		e.horizon = e.Until
	}
	defer func() { e.ctx = nil }()
	defer e.finish()
	lastProgress, quiet, quietSince, quietUntil := ^uint64(0), 0, e.now, Time(0)
	for {
		if e.err != nil {
			return e.err
		}
		if e.active == 0 && len(e.procs) > 0 {
			e.stopReason = "done"
			return nil
		}
		if e.events >= e.checkAt {
			// Events advance by more than one at a time (inline polls,
			// fast-forward), so a count is compared, not a multiple.
			if ctx.Err() != nil {
				if e.stalled() {
					return e.err
				}
				return fmt.Errorf("%w at simulated time %v: %w", ErrStopped, e.now, ctx.Err())
			}
			e.checkAt = e.events + checkEvery
		}
		if e.MaxEvents != 0 && e.events >= e.MaxEvents {
			if e.stalled() {
				return e.err
			}
			return &RunawayError{At: e.now, Events: e.events, Waiters: e.Waiters()}
		}
		if e.live == 0 && e.active > 0 && !e.anyTimedWait() {
			// Only background events (ticks, device interrupts) remain.
			// They may still wake a waiter (a WFI loop, at its core's next
			// tick); if a thousand of them wake nobody, and every one
			// pending when they began has fired (a frequent device must not
			// stand for a core's rare tick), or none is left, nothing ever
			// will.
			if e.peek() == never {
				return &DeadlockError{At: e.now, Waiters: e.Waiters()}
			}
			switch {
			case e.progress != lastProgress:
				lastProgress, quiet, quietSince = e.progress, 0, e.now
			case quiet == 0:
				quiet, quietUntil = 1, e.q.last()
			default:
				if quiet++; quiet > 1000 && e.now > quietUntil {
					return &DeadlockError{At: quietSince, Waiters: e.Waiters()}
				}
			}
		}
		t := e.peek()
		if t == never {
			e.stopReason = "done"
			return nil
		}
		if e.Until != 0 && t > e.Until {
			e.now = e.Until
			if e.stalled() {
				return e.err
			}
			e.stopReason = "time limit"
			return nil
		}
		e.Step()
	}
}

func (e *Engine) anyTimedWait() bool {
	for _, p := range e.procs {
		if !p.done && p.timed {
			return true
		}
	}
	return false
}

// finish closes every core's state accounting at the current time.
func (e *Engine) finish() {
	for _, c := range e.cores {
		c.account()
	}
}

// Close stops every suspended process, releasing its coroutine. Call it
// when a run is over (Run does not, so a caller may inspect state first).
func (e *Engine) Close() {
	for _, p := range e.procs {
		if !p.done && p.stop != nil {
			p.stop()
		}
	}
}
