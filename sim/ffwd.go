package sim

import (
	"iter"
	"math/bits"
	"math/rand/v2"
	"slices"
	"unsafe"
)

// Fast-forward skips the repetitions of a periodic steady state exactly.
//
// A deterministic run whose whole state, taken at a process's loop head,
// changes by the same amount D over two consecutive periods of the same
// length P (structure equal; every number moving linearly) will keep doing
// so until something outside the period intervenes: an event whose time
// did not move with the period (a tick, a peripheral, the time limit) or a
// loop that ends. Fast-forward then adds k·D to every number at once, k
// periods that end, with the reach of every pending event, strictly before
// the first such event (at its instant a process would go on before it, where
// the detailed run yields to it) and at least one period before a loop
// ends, and the run goes on in detail from there. The result is the one the
// detailed run gives, bit for bit (tests compare the two on every
// workload that enables it); nothing is estimated.
//
// Each such step is remembered with the shape of the state it was found
// in. After the event that ended a jump (a peripheral interrupt), the run
// usually settles into a steady state it was in before: a state of a known
// step's shape that has moved by that step over one period jumps then, one
// period sooner (Recalled). Counts that only those events move
// (Snapshot.Epoch) are left out of the shape.
//
// The state must be complete: the engine records its own (clock, events,
// processes, cores, memory, timers, random streams), and each model
// component registered with EnableFastForward records its own through
// Snapshotter. Go locals of a suspended process are invisible, so processes
// follow two rules, which the engine checks where it can:
//   - A process that ran during the compared periods must have passed a loop
//     head (Proc.Loop, or the dispatch of an interrupt) in each, and
//     everything it read since its last loop head (loaded values, Peek,
//     what the loop declared it carries with Carry) is compared exactly: a
//     value that moves with the period, held across a wait, defeats the
//     match.
//   - A simulated time (Proc.Now) must not be held in a local across a wait;
//     keep it in a component's state instead. Inside sim, Compute and Relax
//     keep theirs in the process (busyFrame); waits that hold one in a local
//     (Sleep, a CondWait's pause) mark the process, and a marked process
//     that ran during the periods defeats the match.

// Snapshotter is a model component (an OS kernel, its objects) whose state
// fast-forwarding compares and advances.
type Snapshotter interface {
	// Snapshot records every field that can influence the run's future:
	// exact values with Key, Flag, String and Ident, and numbers that may
	// move with time (timestamps, counters, accumulated time) with Time,
	// Int and Uint64, which fast-forward advances.
	Snapshot(s *Snapshot)
}

type refKind uint8

const (
	refTime refKind = iota
	refInt
	refUint64
	refHist  // a *Histogram: the value is its count
	refQueue // a pending event's time or sequence (advanced by rebuilding the queue)
	refLoop  // an int: the iterations of a Proc.Loop, known by its place, not its address
	refEpoch // a count that no period moves (Snapshot.Epoch)
)

type ref struct {
	kind refKind
	p    unsafe.Pointer
}

// sameRef reports whether a and b record the same number. A nested loop
// (a retry loop in a blocking call) gets a new state at every call, so its
// counter is known by its place in the process's open loops (the keys fix
// them) rather than by its address; the process's history says how it got
// there, as for the rest of its locals.
func sameRef(a, b ref) bool {
	return a.kind == b.kind && (a.p == b.p || a.kind == refLoop)
}

// procMark locates a process's resumption and loop-head counts in a Snapshot.
type procMark struct {
	resumes, marks int
	dirty          bool
}

// loopMark locates a finite loop's iteration count and its end.
type loopMark struct {
	done, n int
}

// queued is a live queue entry recorded in a Snapshot: its event, and the
// index of its time (its sequence follows).
type queued struct {
	ev  *Event
	idx int
}

// Snapshot is a run's state for fast-forwarding: exact keys,
// and numbers with the address they live at.
type Snapshot struct {
	keys []uint64
	hash uint64
	// shape numbers the snapshots of the ring whose keys and refs are
	// equal alike (ffwd.classify), so that match compares each pair in O(1).
	shape   uint64
	refs    []ref
	vals    []int64
	procs   []procMark
	loops   []loopMark
	queue   []queued
	now     int
	events  int
	changes int
}

func (s *Snapshot) reset() {
	s.keys, s.refs, s.vals = s.keys[:0], s.refs[:0], s.vals[:0]
	s.procs, s.loops, s.queue = s.procs[:0], s.loops[:0], s.queue[:0]
	s.hash = 14695981039346656037
}

// Key records an exact value: states whose keys differ never match.
func (s *Snapshot) Key(v uint64) {
	s.keys = append(s.keys, v)
	s.hash = (s.hash ^ v) * 1099511628211
}

// Flag records an exact boolean.
func (s *Snapshot) Flag(b bool) {
	v := uint64(0)
	if b {
		v = 1
	}
	s.Key(v)
}

// String records an exact string (by its content: FNV-1a).
func (s *Snapshot) String(str string) {
	h := uint64(14695981039346656037)
	for i := 0; i < len(str); i++ {
		h = (h ^ uint64(str[i])) * 1099511628211
	}
	s.Key(h)
	s.Key(uint64(len(str)))
}

// Ident records which object p is (nil included): list membership, the
// holder of a lock, the task a core runs.
func Ident[T any](s *Snapshot, p *T) { s.Key(uint64(uintptr(unsafe.Pointer(p)))) }

func (s *Snapshot) num(kind refKind, p unsafe.Pointer, v int64) {
	s.refs = append(s.refs, ref{kind, p})
	s.vals = append(s.vals, v)
}

// Time records a timestamp or an accumulated time.
func (s *Snapshot) Time(p *Time) { s.num(refTime, unsafe.Pointer(p), int64(*p)) }

// Int records a counter.
func (s *Snapshot) Int(p *int) { s.num(refInt, unsafe.Pointer(p), int64(*p)) }

// Uint64 records a counter or a memory word.
func (s *Snapshot) Uint64(p *uint64) { s.num(refUint64, unsafe.Pointer(p), int64(*p)) }

// Epoch records a count that only what bounds the periods moves (the
// peripheral interrupts taken, the ticks so far): no skipped period may
// change it, as if it were a Key, but a state is matched with a known step
// whatever its epoch, so that each stretch between two bounds can recall
// the step found in an earlier one.
func (s *Snapshot) Epoch(v uint64) { s.num(refEpoch, nil, int64(v)) }

// Histogram records a histogram that a component fills as the run goes:
// each period must add the same values (at most half as many as the
// histogram keeps of its latest), and fast-forward adds them once per
// skipped period.
func (s *Snapshot) Histogram(h *Histogram) { s.num(refHist, unsafe.Pointer(h), int64(h.n)) }

// FastForwardStats says how much of a run fast-forward skipped.
type FastForwardStats struct {
	Snapshots int   // states taken at loop heads
	Skips     int   // jumps made
	Recalled  int   // of them, made after one period with a known step
	Periods   int64 // periods skipped in all
	Time      Time  // simulated time skipped in all
}

const (
	ffMaxPeriod = 64 // loop heads per period looked for
	ffRing      = 2*ffMaxPeriod + 1
	ffMargin    = 1 // periods left to simulate before a loop ends or the event budget runs out
)

type ffwd struct {
	staters []Snapshotter
	ring    [ffRing]Snapshot
	n       int    // snapshots in the ring since it was last cleared
	shapes  uint64 // shapes numbered so far
	d       []int64
	entries []entry
	stats   FastForwardStats
	// pacer, when not nil, is the only process whose loop heads take
	// states: the one whose head the last jump was made from, which
	// passed a head in every period of it. The states at its heads repeat
	// with the run's period as the states at every head do, found after
	// the same two periods, but a run of n processes then takes about 1/n
	// of the states. others counts the heads of the rest since its last;
	// past ffPacerWait, the pacer is dropped (finished, or blocked for
	// good) and every head takes states again.
	pacer  *Proc
	others int
	// known are the steps of the latest jumps found over two periods,
	// the latest used first: a later state of one's shape that has moved
	// by its step over one period jumps at once (recall).
	known []*knownStep
}

// ffKnown is how many known steps fast-forward keeps: a run may settle
// into one of several steady states after its bounds (the ESP32 mutex run
// recalled 2,002 of its 10,297 jumps keeping one step, 10,021 keeping 16).
const ffKnown = 16

// knownStep is a jump's step: the shape of the state it was made from
// (its keys and refs) and the amount every number moved by in one period.
type knownStep struct {
	hash uint64
	keys []uint64
	refs []ref
	d    []int64
}

// ffPacerWait is how many loop heads of other processes may pass without
// one of the pacer's before every head takes states again.
const ffPacerWait = ffMaxPeriod

// EnableFastForward turns fast-forward on for this run, with the model
// components whose state it must also compare (see Snapshotter). Enable it
// only for workloads whose processes follow the rules above. A run with a
// trace skips nothing until the trace is sealed (SealTrace).
func (e *Engine) EnableFastForward(models ...Snapshotter) {
	e.ff = &ffwd{staters: models}
}

// FastForward returns what fast-forward skipped so far.
func (e *Engine) FastForward() FastForwardStats {
	if e.ff == nil {
		return FastForwardStats{}
	}
	return e.ff.stats
}

// loopState is the progress of a Proc.Loop, kept where fast-forward can
// read and advance it.
type loopState struct {
	done, n int
}

// snapshot records the loop's bound and, advanced with the period, its
// iterations so far.
func (l *loopState) snapshot(s *Snapshot) {
	s.Key(uint64(l.n))
	s.loops = append(s.loops, loopMark{done: len(s.vals), n: l.n})
	s.num(refLoop, unsafe.Pointer(&l.done), int64(l.done))
}

// Loop returns the iterations of a process's main loop: n of them, or for
// ever when n < 0. Each loop head is where fast-forward may compare states
// and skip ahead (then the loop simply goes on from a later iteration).
// Range over it like a counted loop: for i := range p.Loop(n) { ... }.
// A body that keeps values in locals from one iteration to the next
// declares them with Carry; loops may nest (a retry loop inside a call).
func (p *Proc) Loop(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		p.loops = append(p.loops, p.newLoop(n))
		l := p.loops[len(p.loops)-1]
		defer func() { p.loops = p.loops[:len(p.loops)-1] }()
		outer := p.hist
		for l.n < 0 || l.done < l.n {
			p.loopHead(outer, len(p.loops) == 1)
			p.carry = 0 // consumed by this head
			i := l.done
			l.done++
			if !yield(i) {
				return
			}
		}
	}
}

// newLoop returns the state of a loop of n iterations about to open. It
// reuses the one that last stood at that depth, past the end of p.loops
// (a blocking call's retry loop opens at every call): a closed loop is in
// no snapshot that a jump applies, which take the open loops only.
func (p *Proc) newLoop(n int) *loopState {
	if k := len(p.loops); k < cap(p.loops) {
		if l := p.loops[:k+1][k]; l != nil {
			*l = loopState{n: n}
			return l
		}
	}
	return &loopState{n: n}
}

// loopHead is the head of a loop entered when the process had seen outer:
// from here what it has seen is outer and what the loop carries, so the
// locals of every frame are known again. Fast-forward compares states at
// the heads of outermost loops (snap): one per period is enough, and
// fewer snapshots cost less.
func (p *Proc) loopHead(outer uint64, snap bool) {
	p.hist = outer
	p.observe(p.carry)
	p.marks++
	if snap && p.e.ff != nil {
		p.e.ff.atLoopHead(p.e, p)
	}
}

// Carry declares values a loop's body carries into its next iteration
// (a deadline, a flag set once), so that fast-forward compares them at
// the loop head: call it just before going round again.
func (p *Proc) Carry(vs ...uint64) {
	for _, v := range vs {
		p.carry = mix(p.carry, v)
	}
}

// observe folds a value the process read into what it saw since its loop head.
func (p *Proc) observe(v uint64) { p.hist = mix(p.hist, v) }

// mix folds v into the running hash h (order matters; mix(0, 0) != 0).
func mix(h, v uint64) uint64 { return (bits.RotateLeft64(h, 7)^v)*0x9E3779B97F4A7C15 + 1 }

// countSrc is a random source that counts its draws: a stream drawn from
// during a period has moved on, which no linear step can reproduce.
type countSrc struct {
	pcg *rand.PCG
	n   uint64
}

func (c *countSrc) Uint64() uint64 { c.n++; return c.pcg.Uint64() }

// snapshot records how far the stream has been drawn.
func (c *countSrc) snapshot(s *Snapshot) { s.Key(c.n) }

func (f *ffwd) atLoopHead(e *Engine, p *Proc) {
	if f.pacer != nil && p != f.pacer {
		if f.others++; f.others > ffPacerWait {
			f.pacer, f.n = nil, 0 // states taken at one process's heads only: start afresh
		} else {
			return
		}
	}
	f.others = 0
	if e.Trace != nil && !e.Trace.sealed || p.dirty != 0 {
		return // a trace still recording (see SealTrace), or a time in a local: not a state to compare
	}
	s := &f.ring[f.n%ffRing]
	s.reset()
	e.snapshot(s)
	for _, m := range f.staters {
		m.Snapshot(s)
	}
	f.classify(s)
	f.n++
	f.stats.Snapshots++
	for per := 1; per <= ffMaxPeriod && 2*per < f.n; per++ {
		a, b := &f.ring[(f.n-1-2*per)%ffRing], &f.ring[(f.n-1-per)%ffRing]
		if k := f.match(e, a, b, s); k > 0 {
			f.remember(s)
			f.apply(e, b, s, k)
			f.n, f.pacer = 0, p
			return
		}
	}
	for i, ks := range f.known {
		if s.hash != ks.hash || !slices.Equal(s.keys, ks.keys) || !slices.EqualFunc(s.refs, ks.refs, sameRef) {
			continue
		}
		for per := 1; per <= ffMaxPeriod && per < f.n; per++ {
			b := &f.ring[(f.n-1-per)%ffRing]
			if k := f.matchKnown(e, ks, b, s); k > 0 {
				copy(f.known[1:i+1], f.known[:i])
				f.known[0] = ks
				f.stats.Recalled++
				f.apply(e, b, s, k)
				f.n, f.pacer = 0, p
				return
			}
		}
	}
}

// remember records the step of c, found over two periods, as the latest
// known step, in place of the least recently used when ffKnown are known.
func (f *ffwd) remember(c *Snapshot) {
	var k *knownStep
	if len(f.known) < ffKnown {
		k = new(knownStep)
		f.known = append(f.known, nil)
	} else {
		k = f.known[len(f.known)-1]
	}
	copy(f.known[1:], f.known)
	f.known[0] = k
	k.hash = c.hash
	k.keys = append(k.keys[:0], c.keys...)
	k.refs = append(k.refs[:0], c.refs...)
	k.d = append(k.d[:0], f.d...)
}

// matchKnown is match for a state c of the shape of ks, a known step:
// c must have moved from b, one period earlier, by that very step; the
// step's two periods, seen in an earlier stretch, stand for the first of
// match's two. (A histogram is replayed with the values it gained from b
// to c, as match replays them: values that drift move the numbers too, the
// times of the states the drift shifts, so no recall is made.)
func (f *ffwd) matchKnown(e *Engine, ks *knownStep, b, c *Snapshot) int64 {
	if b.shape != c.shape || !ranSeen(b, c) {
		return 0
	}
	f.d = f.d[:0]
	for i, v := range c.vals {
		d := v - b.vals[i]
		if d != ks.d[i] {
			return 0
		}
		f.d = append(f.d, d)
	}
	return f.reach(e, c)
}

// ranSeen reports whether every process that ran between b and c passed
// a loop head in between with no time held in a local.
func ranSeen(b, c *Snapshot) bool {
	for _, pm := range c.procs {
		if c.vals[pm.resumes] != b.vals[pm.resumes] && (c.vals[pm.marks] == b.vals[pm.marks] || pm.dirty) {
			return false // ran during the period with locals the state cannot see
		}
	}
	return true
}

// classify gives s, the ring's newest snapshot, the shape of an earlier one
// of the ring with the same keys and refs, or a new shape. Equality being
// transitive, snapshots of the ring have the same shape exactly when their
// keys and refs are equal, and one comparison usually settles it, where
// match compared two pairs for every period it tried.
func (f *ffwd) classify(s *Snapshot) {
	for i := 1; i <= f.n && i < ffRing; i++ {
		o := &f.ring[(f.n-i)%ffRing]
		if o.hash == s.hash && slices.Equal(o.keys, s.keys) && slices.EqualFunc(o.refs, s.refs, sameRef) {
			s.shape = o.shape
			return
		}
	}
	f.shapes++
	s.shape = f.shapes
}

// match reports how many periods can be skipped from c, given that a, b
// and c were taken one period apart (0: none).
func (f *ffwd) match(e *Engine, a, b, c *Snapshot) int64 {
	if a.shape != b.shape || b.shape != c.shape {
		return 0
	}
	// Most candidates fail here, so this runs before the numbers are
	// compared; both reject alike.
	if !ranSeen(b, c) {
		return 0
	}
	f.d = f.d[:0]
	for i, v := range c.vals {
		d := v - b.vals[i]
		if d != b.vals[i]-a.vals[i] {
			return 0
		}
		f.d = append(f.d, d)
	}
	for i, r := range c.refs {
		if r.kind == refEpoch && f.d[i] != 0 {
			return 0 // a bound passed within the periods
		}
	}
	per := Time(f.d[c.now])
	if per <= 0 || f.d[c.changes] == 0 {
		return 0 // no time passes, or nothing changes (a livelock, for Engine.stalled to see)
	}
	for i, r := range c.refs {
		if r.kind == refHist && f.d[i] > 0 &&
			!(*Histogram)(r.p).periodic(uint64(a.vals[i]), uint64(b.vals[i]), uint64(c.vals[i])) {
			return 0
		}
	}
	return f.reach(e, c)
}

// reach returns how many periods of the step f.d can be skipped from c
// (0: none): they must end before the first event that does not move with
// the period, and a period before a loop ends or the event budget runs out.
func (f *ffwd) reach(e *Engine, c *Snapshot) int64 {
	per := Time(f.d[c.now])
	now := Time(c.vals[c.now])
	ext, reach := never, Time(0)
	for _, q := range c.queue {
		switch t, d := Time(c.vals[q.idx]), Time(f.d[q.idx]); d {
		case 0:
			ext = min(ext, t) // fixed: a boundary
		case per:
			reach = max(reach, t-now) // moves with the period
		default:
			return 0
		}
	}
	if e.Until != 0 {
		ext = min(ext, e.Until)
	}
	k, bounded := int64(0), false
	bound := func(n int64) {
		if !bounded || n < k {
			k, bounded = n, true
		}
	}
	if ext != never {
		bound(int64((ext - now - reach - 1) / per)) // ends before ext, strictly (see above)
	}
	for _, l := range c.loops {
		if d := f.d[l.done]; d > 0 && l.n >= 0 {
			bound((int64(l.n)-c.vals[l.done])/d - ffMargin)
		}
	}
	if d := f.d[c.events]; e.MaxEvents != 0 && d > 0 {
		bound((int64(e.MaxEvents)-c.vals[c.events])/d - ffMargin)
	}
	if k < ffMargin {
		return 0 // unbounded (nothing ever ends the period) or not worth it
	}
	return k
}

// apply advances the run from state c by k periods of f.d.
func (f *ffwd) apply(e *Engine, b, c *Snapshot, k int64) {
	for i, r := range c.refs {
		d := f.d[i]
		if d == 0 {
			continue
		}
		switch r.kind {
		case refTime:
			*(*Time)(r.p) += Time(k * d)
		case refInt, refLoop:
			*(*int)(r.p) += int(k * d)
		case refUint64:
			*(*uint64)(r.p) += uint64(k * d)
		case refHist:
			(*Histogram)(r.p).replay(uint64(b.vals[i]), k)
		}
	}
	f.entries = f.entries[:0]
	for _, q := range c.queue {
		x := entry{t: Time(c.vals[q.idx] + k*f.d[q.idx]), seq: uint64(c.vals[q.idx+1] + k*f.d[q.idx+1]), ev: q.ev}
		q.ev.seq, q.ev.t = x.seq, x.t
		f.entries = append(f.entries, x)
	}
	e.q.rebuild(f.entries)
	f.stats.Skips++
	f.stats.Periods += k
	f.stats.Time += Time(k * f.d[c.now])
}

// snapshot records the engine's state: its clock and counters, then each
// component's own (the queue, processes, cores, memory, timers, devices
// and random streams). What is not recorded, and why, is listed in
// snapshot_test.go, which fails on a field that is neither.
func (e *Engine) snapshot(s *Snapshot) {
	s.now = len(s.vals)
	s.Time(&e.now)
	s.Uint64(&e.seq)
	s.events = len(s.vals)
	s.Uint64(&e.events)
	s.Uint64(&e.progress)
	s.changes = len(s.vals)
	s.Uint64(&e.changes)
	s.Time(&e.changedAt)
	s.Key(uint64(e.live))
	s.Key(uint64(e.active))
	s.Flag(e.err != nil)
	e.ff.entries = e.q.snapshot(s, e.ff.entries)
	for _, p := range e.procs {
		p.snapshot(s)
	}
	for _, c := range e.cores {
		c.snapshot(s)
	}
	if e.mem != nil {
		e.mem.snapshot(s)
	}
	for _, t := range e.timers {
		t.snapshot(s)
	}
	for _, d := range e.devices {
		d.snapshot(s)
	}
	for _, src := range e.streams {
		src.snapshot(s)
	}
}
