package sim

import (
	"fmt"
	"math/bits"
)

// Addr is a byte address in simulated memory. Words are 8 bytes.
type Addr uint64

// Region is a range of simulated memory with its access behaviour.
type Region struct {
	Name string
	Base Addr
	Size uint64
	// Uncached: no data cache in front of it; every access, atomics
	// included, goes through one shared memory port in turn (ESP32
	// internal SRAM; S32C1I executes at memory).
	Uncached bool
	// Latency is the access time of an uncached access, or the time to
	// fill a line from memory for a cached region.
	Latency Time
	// Occupancy is how long one uncached access holds the memory port; a
	// read-modify-write holds it twice. Unused for cached regions.
	Occupancy Time
}

// Coherence gives the line size and the line-transfer latencies of the
// cached regions, by the topology distance between requester and holder.
type Coherence struct {
	LineSize     int
	SameCluster  Time // from another core of the requester's cluster
	OtherCluster Time // across the cluster interconnect
}

type line struct {
	owner    int    // core holding the line modified, -1 if none
	sharers  uint64 // cores holding a copy (owner included)
	busy     Time   // when the last transfer of this line completes
	monitors uint64 // cores whose exclusive monitor covers this line
	spinners uint64 // cores spinning on this line, woken by a write
	writes   uint64 // writes so far (a spinner detects one it raced with)
	misses   uint64 // accesses that moved the line (coherence traffic)
}

type region struct {
	Region
	words []uint64
	lines []line
	// seen marks the words and lines in Memory.touched (fast-forward only).
	seenW, seenL []uint64
}

// Memory is the simulated memory system of an engine: regions, coherence
// state per line, exclusive monitors and the shared port of uncached
// regions.
type Memory struct {
	e        *Engine
	coh      Coherence
	lineBits uint
	regions  []*region
	busy     Time    // when the uncached memory port is next free
	pollers  uint64  // cores whose spinning polls occupy the port periodically
	touched  []touch // words and lines used since fast-forward began
}

// touch is a word or a line fast-forward records.
type touch struct {
	r    int
	word bool
	i    int
}

// NewMemory creates the engine's memory. The line size must be a power of
// two and at least a word.
func (e *Engine) NewMemory(coh Coherence) (*Memory, error) {
	if coh.LineSize < 8 || coh.LineSize&(coh.LineSize-1) != 0 {
		return nil, fmt.Errorf("memory: LineSize = %d must be a power of two >= 8", coh.LineSize)
	}
	if coh.SameCluster < 0 || coh.OtherCluster < 0 {
		return nil, fmt.Errorf("memory: latencies must be >= 0 (SameCluster %v, OtherCluster %v)", coh.SameCluster, coh.OtherCluster)
	}
	m := &Memory{e: e, coh: coh, lineBits: uint(bits.TrailingZeros(uint(coh.LineSize)))}
	e.mem = m
	return m, nil
}

// Memory returns the engine's memory (nil before NewMemory).
func (e *Engine) Memory() *Memory { return e.mem }

// LineSize returns the coherence granule in bytes.
func (m *Memory) LineSize() int { return m.coh.LineSize }

// AddRegion adds a region; regions must not overlap and need a non-zero,
// word-aligned base and size.
func (m *Memory) AddRegion(r Region) error {
	switch {
	case r.Size == 0 || r.Size%8 != 0:
		return fmt.Errorf("region %q: Size = %d must be a non-zero multiple of 8", r.Name, r.Size)
	case r.Base%Addr(m.coh.LineSize) != 0:
		return fmt.Errorf("region %q: Base = %#x must be aligned to the %d-byte line", r.Name, r.Base, m.coh.LineSize)
	case r.Latency < 0 || r.Occupancy < 0:
		return fmt.Errorf("region %q: Latency %v and Occupancy %v must be >= 0", r.Name, r.Latency, r.Occupancy)
	case r.Size > 1<<30:
		return fmt.Errorf("region %q: Size = %d exceeds the 1 GiB the simulator backs", r.Name, r.Size)
	}
	for _, o := range m.regions {
		if r.Base < o.Base+Addr(o.Size) && o.Base < r.Base+Addr(r.Size) {
			return fmt.Errorf("region %q [%#x, %#x) overlaps region %q", r.Name, r.Base, r.Base+Addr(r.Size), o.Name)
		}
	}
	nl := (r.Size + uint64(m.coh.LineSize) - 1) >> m.lineBits
	rg := &region{Region: r, words: make([]uint64, r.Size/8), lines: make([]line, nl)}
	for i := range rg.lines {
		rg.lines[i].owner = -1
	}
	m.regions = append(m.regions, rg)
	return nil
}

// AddrError reports an access outside every region or not word-aligned.
type AddrError struct {
	Addr Addr
	Why  string
}

func (a *AddrError) Error() string { return fmt.Sprintf("address %#x: %s", uint64(a.Addr), a.Why) }

// find returns the region, word index and line index of a.
func (m *Memory) find(a Addr) (*region, int, int) {
	if a%8 != 0 {
		panic(&AddrError{a, "not aligned to an 8-byte word"})
	}
	for ri, r := range m.regions {
		if a >= r.Base && a < r.Base+Addr(r.Size) {
			off := uint64(a - r.Base)
			w, li := int(off>>3), int(off>>m.lineBits)
			if m.e.ff != nil {
				m.note(ri, r, w, li)
			}
			return r, w, li
		}
	}
	panic(&AddrError{a, "in no memory region"})
}

// note adds word w and line li of region r to the state fast-forward
// records, the first time they are used.
func (m *Memory) note(ri int, r *region, w, li int) {
	if r.seenW == nil {
		r.seenW = make([]uint64, (len(r.words)+63)/64)
		r.seenL = make([]uint64, (len(r.lines)+63)/64)
	}
	if r.seenW[w/64]&(1<<(w%64)) == 0 {
		r.seenW[w/64] |= 1 << (w % 64)
		m.touched = append(m.touched, touch{ri, true, w})
	}
	if r.seenL[li/64]&(1<<(li%64)) == 0 {
		r.seenL[li/64] |= 1 << (li % 64)
		m.touched = append(m.touched, touch{ri, false, li})
	}
}

// Check reports whether a is a valid word address, as an error.
func (m *Memory) Check(a Addr) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = r.(*AddrError)
		}
	}()
	m.find(a)
	return nil
}

// Misses returns how many accesses to a's line had to move the line
// (coherence transfers and fills): the traffic a lock's waiters cause.
func (m *Memory) Misses(a Addr) uint64 {
	r, _, li := m.find(a)
	return r.lines[li].misses
}

// Peek returns the value at a without simulating an access (for checks
// and reports).
func (m *Memory) Peek(a Addr) uint64 {
	r, w, _ := m.find(a)
	v := r.words[w]
	if p := m.e.running; p != nil {
		p.observe(v) // a model's read is part of what its process saw
	}
	return v
}

// Poke sets the value at a without simulating an access (initial state).
func (m *Memory) Poke(a Addr, v uint64) {
	r, w, _ := m.find(a)
	r.words[w] = v
}

// distance returns the transfer latency from the nearest holder in mask to
// core c, or from memory when nobody else holds the line.
func (m *Memory) distance(c *Core, mask uint64, r *region, far bool) Time {
	mask &^= 1 << c.ID
	if mask == 0 {
		return r.Latency
	}
	var best Time = -1
	for q := mask; q != 0; q &= q - 1 {
		o := m.e.cores[bits.TrailingZeros64(q)]
		d := m.coh.SameCluster
		if o.Cfg.Cluster != c.Cfg.Cluster {
			d = m.coh.OtherCluster
		}
		if best < 0 || (far && d > best) || (!far && d < best) {
			best = d
		}
	}
	return best
}

// grant returns when an uncached access of length occ by core c, requested
// at t, starts: first come, first served, like the explicit loop of the
// spinning cores would be. A poll of a spinning core in flight at t is
// waited for; a poll that would start while this access holds the port is
// delayed behind it, and with it every later poll of that spinner.
func (m *Memory) grant(c *Core, t, occ Time) Time {
	s := max(t, m.busy)
	for q := m.pollers &^ (1 << c.ID); q != 0; q &= q - 1 {
		o := m.e.cores[bits.TrailingZeros64(q)]
		next := o.spinPhase
		if s >= o.spinPhase {
			w := o.spinPhase + (s-o.spinPhase)/o.spinPeriod*o.spinPeriod
			if s < w+o.spinOcc {
				s = w + o.spinOcc
			}
			next = w + o.spinPeriod
		}
		if d := s + occ - next; d > 0 {
			o.delayPolls(next, d)
		}
	}
	m.busy = s + occ
	return s
}

// delayPolls moves c's polls from the one due at next on by d.
func (c *Core) delayPolls(next, d Time) {
	c.spinPhase += d
	if c.resumeEv.Pending() && c.cause == WakeLine && c.pendingAt >= next {
		c.pendingAt += d
		c.e.At(c.pendingAt, c.resumeEv)
	}
}

// access performs the coherence side of one access by core c now and
// returns the word's region, index and line, when a write would land for
// the other cores, and when the access completes. The caller reads or
// writes the value at once — every access takes effect at its issue, in
// time order, which makes the memory linearizable — and reports a write
// with wrote. write asks for exclusive ownership; rmw marks an atomic
// read-modify-write. It never yields, so spin polls run it from events.
func (m *Memory) access(c *Core, a Addr, write, rmw bool) (r *region, w int, ln *line, lands, done Time) {
	r, w, li := m.find(a)
	ln = &r.lines[li]
	now := m.e.now
	if r.Uncached {
		occ := r.Occupancy
		if rmw {
			occ *= 2
		}
		start := m.grant(c, now, occ)
		return r, w, ln, start + occ, start + r.Latency + occ - r.Occupancy
	}
	bit := uint64(1) << c.ID
	if (!write && ln.sharers&bit != 0) || (write && ln.sharers == bit) {
		// A hit; a sole copy is upgraded to modified silently.
		done := now + c.Cycles(c.Cfg.HitCycles)
		if write {
			ln.owner = c.ID
		}
		return r, w, ln, done, done
	}
	start := max(now, ln.busy)
	done = start + m.distance(c, ln.sharers, r, write)
	ln.misses++
	ln.busy = done // the interconnect carries this line until done: transfers queue
	if write {
		ln.owner = c.ID
		ln.sharers = bit
	} else {
		ln.owner = -1
		ln.sharers |= bit
	}
	return r, w, ln, done, done
}

// wrote tells the other cores that c's write to word w of ln lands at t:
// their exclusive monitors on the line are cleared (which sets their
// event registers) and cores spinning on it poll again at their next
// iteration. On uncached memory a poll only re-reads the word, so a
// spinner is woken only by a value that would end its spin; on cached
// memory every write invalidates its copy, and the re-read is traffic.
func (m *Memory) wrote(c *Core, ln *line, r *region, t Time) {
	ln.writes++
	others := ^(uint64(1) << c.ID)
	for q := ln.monitors & others; q != 0; q &= q - 1 {
		o := m.e.cores[bits.TrailingZeros64(q)]
		o.monLine, o.monReg = -1, nil
		if !o.dropMonitorEvent() {
			o.signalEvent(t, WakeEvent)
		}
	}
	ln.monitors &^= others
	for q := ln.spinners & others; q != 0; q &= q - 1 {
		o := m.e.cores[bits.TrailingZeros64(q)]
		if r.Uncached && !o.sp.ends(o.sp.reg.words[o.sp.w]) {
			continue
		}
		ln.spinners &^= 1 << o.ID
		o.wakeAt(o.nextPoll(t), WakeLine)
	}
}

// Load reads the word at a.
func (p *Proc) Load(a Addr) uint64 {
	r, w, _, _, done := p.e.mem.access(p.core, a, false, false)
	v := r.words[w]
	p.observe(v)
	p.stall(done)
	return v
}

// Store writes v to the word at a.
func (p *Proc) Store(a Addr, v uint64) {
	m := p.e.mem
	r, w, ln, lands, done := m.access(p.core, a, true, false)
	r.words[w] = v
	m.wrote(p.core, ln, r, lands)
	p.stall(done)
}

// CAS atomically replaces the word at a with new if it equals old; it
// returns the previous value and whether it swapped. Like S32C1I or an
// LSE CAS it always needs the line (or the memory port) exclusively.
func (p *Proc) CAS(a Addr, old, new uint64) (uint64, bool) {
	m := p.e.mem
	r, w, ln, lands, done := m.access(p.core, a, true, true)
	prev := r.words[w]
	if prev == old {
		r.words[w] = new
		m.wrote(p.core, ln, r, lands)
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
	m.wrote(p.core, ln, r, lands)
	p.observe(prev)
	p.stall(done)
	return prev
}

// LoadExclusive reads a and arms the core's exclusive monitor on its line
// (ARM LDXR/LDAXR).
func (p *Proc) LoadExclusive(a Addr) uint64 {
	m := p.e.mem
	r, w, ln, _, done := m.access(p.core, a, false, false)
	c := p.core
	c.clearMonitor()
	li := int(uint64(a-r.Base) >> m.lineBits)
	c.monLine, c.monReg = int64(li), r
	ln.monitors |= 1 << c.ID
	v := r.words[w]
	p.observe(v)
	p.stall(done)
	return v
}

// StoreExclusive writes v to a if the core's monitor still covers a's line
// (ARM STXR/STLXR); it reports success. The monitor is cleared either way.
func (p *Proc) StoreExclusive(a Addr, v uint64) bool {
	c := p.core
	m := p.e.mem
	r, _, li := m.find(a)
	held := c.monReg == r && c.monLine == int64(li)
	c.clearMonitor()
	if held {
		p.observe(1)
	} else {
		p.observe(0)
	}
	if !held {
		p.Compute(c.Cfg.HitCycles)
		return false
	}
	r, w, ln, lands, done := m.access(c, a, true, false)
	r.words[w] = v
	m.wrote(c, ln, r, lands)
	p.stall(done)
	return true
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

// nextPoll returns the first poll of c's spin loop at or after t.
func (c *Core) nextPoll(t Time) Time {
	if t <= c.spinPhase {
		return c.spinPhase
	}
	k := (t - c.spinPhase + c.spinPeriod - 1) / c.spinPeriod
	return c.spinPhase + k*c.spinPeriod
}

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

// arm registers c as a spinner whose failed poll was issued at issued and
// completed at done: polls repeat every (poll duration + loop body).
func (c *Core) arm(ln *line, r *region, issued, done Time) {
	c.spinPhase, c.spinPeriod = issued, max(done-issued+c.sp.loop, 1)
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
		m.wrote(c, ln, r, lands)
	}
	st.val = v
	c.Stall += done - issued
	c.wait = waitNone
	c.cause, c.pendingAt = WakeSpinDone, done
	c.e.At(done, c.resumeEv)
}

func (p *Proc) spin(st spinState, loop int64, try func() (uint64, bool)) uint64 {
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
