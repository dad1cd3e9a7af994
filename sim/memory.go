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
	// MonitorLoss clears a core's exclusive monitor (which sets its event
	// register) when another core takes the line for writing, as when the
	// monitor lives in the core's cache and goes with its copy: a prefetch
	// for store or a failed compare-and-swap then wakes a WFE waiter too.
	// Without it only a store to the line does, the one clearing the
	// architecture requires; whether anything else does is the
	// implementation's choice.
	MonitorLoss bool
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
	// cluster[i] is the mask of the cores in core i's cluster (built when
	// first needed, rebuilt if cores were added).
	cluster []uint64
	// names label words for reports (Name); not simulated state.
	names []memName
}

// memName is a label on size bytes from base.
type memName struct {
	base Addr
	size uint64
	name string
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

// Name labels the size bytes from a (a lock, a queue node) so that a
// deadlock or runaway report names what a core spins or waits on, e.g. "spin
// on muxA (0x3ffb0030, value 43947)", not only its address. It changes
// nothing simulated; where names overlap, the latest wins.
func (m *Memory) Name(a Addr, size uint64, name string) {
	m.names = append(m.names, memName{a, max(size, 1), name})
}

// NameOf returns the name Name gave the byte at a, "" if none.
func (m *Memory) NameOf(a Addr) string { return m.nameOf(a, 1) }

// nameOf returns the latest name on any of the size bytes from a, "" if
// none.
func (m *Memory) nameOf(a Addr, size uint64) string {
	for i := len(m.names) - 1; i >= 0; i-- {
		n := m.names[i]
		if a < n.base+Addr(n.size) && n.base < a+Addr(size) {
			return n.name
		}
	}
	return ""
}

// describe is a word in a report, with its name if it has one: "muxA
// (0x3ffb0030, value 43947)", else "0x3ffb0030 (value 43947)".
func (m *Memory) describe(a Addr, detail string) string {
	if n := m.NameOf(a); n != "" {
		return fmt.Sprintf("%s (%#x, %s)", n, uint64(a), detail)
	}
	return fmt.Sprintf("%#x (%s)", uint64(a), detail)
}

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

// Error names the address and what is wrong with it.
func (a *AddrError) Error() string { return fmt.Sprintf("address %#x: %s", uint64(a.Addr), a.Why) }

// find returns the region, word index and line index of a.
func (m *Memory) find(a Addr) (*region, int, int) {
	if a%8 != 0 {
		panic(&AddrError{a, "not aligned to an 8-byte word"})
	}
	for ri, r := range m.regions {
		if off := uint64(a - r.Base); off < r.Size { // unsigned: below Base wraps past Size
			w, li := uint(off>>3), uint(off>>m.lineBits)
			if m.e.ff != nil && !r.seen(w, li) {
				m.note(ri, r, w, li)
			}
			return r, int(w), int(li)
		}
	}
	panic(&AddrError{a, "in no memory region"})
}

// seen reports whether fast-forward records word w and line li of r
// already (the common case, kept inline).
func (r *region) seen(w, li uint) bool {
	return r.seenW != nil && r.seenW[w/64]&(1<<(w%64)) != 0 && r.seenL[li/64]&(1<<(li%64)) != 0
}

// note adds word w and line li of region r to the state fast-forward
// records, the first time they are used.
func (m *Memory) note(ri int, r *region, w, li uint) {
	if r.seenW == nil {
		r.seenW = make([]uint64, (len(r.words)+63)/64)
		r.seenL = make([]uint64, (len(r.lines)+63)/64)
	}
	if r.seenW[w/64]&(1<<(w%64)) == 0 {
		r.seenW[w/64] |= 1 << (w % 64)
		m.touched = append(m.touched, touch{ri, true, int(w)})
	}
	if r.seenL[li/64]&(1<<(li%64)) == 0 {
		r.seenL[li/64] |= 1 << (li % 64)
		m.touched = append(m.touched, touch{ri, false, int(li)})
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
	m.e.change() // a model's write (a device's, an OS's bookkeeping)
}

// distance returns the transfer latency from the nearest holder in mask to
// core c (from the farthest when far), or from memory when nobody else
// holds the line.
func (m *Memory) distance(c *Core, mask uint64, r *region, far bool) Time {
	mask &^= 1 << c.ID
	if mask == 0 {
		return r.Latency
	}
	if len(m.cluster) != len(m.e.cores) {
		m.cluster = make([]uint64, len(m.e.cores))
		for _, a := range m.e.cores {
			for _, b := range m.e.cores {
				if a.Cfg.Cluster == b.Cfg.Cluster {
					m.cluster[a.ID] |= 1 << b.ID
				}
			}
		}
	}
	same, other := mask&m.cluster[c.ID] != 0, mask&^m.cluster[c.ID] != 0
	switch {
	case !other:
		return m.coh.SameCluster
	case !same:
		return m.coh.OtherCluster
	case far:
		return max(m.coh.SameCluster, m.coh.OtherCluster)
	}
	return min(m.coh.SameCluster, m.coh.OtherCluster)
}

// grant returns when an uncached access of length occ by core c, requested
// at t, starts: first come, first served, like the explicit loop of the
// spinning cores would be. A poll of a spinning core due by t is served
// first (waited for if in flight); a poll due after t waits, even when the
// port is busy past its time, and so does one that would start while this
// access holds the port: it is delayed behind it, and with it every later
// poll of that spinner. A poll an access went after keeps its place when it
// runs (the spin's last poll runs for real). A poll due at the very
// picosecond of a request goes first, an arbitration choice: the explicit
// loop would order the two by event order.
func (m *Memory) grant(c *Core, t, occ Time) Time {
	s := max(t, m.busy)
	if c.wait == waitSpin && c.spinReserved == t {
		s = t // a suspended spinner's poll that earlier grants went after
	}
	for q := m.pollers &^ (1 << c.ID); q != 0; q &= q - 1 {
		o := m.e.cores[bits.TrailingZeros64(q)]
		next := o.spinPhase
		if s >= o.spinPhase {
			w := o.spinPhase // the latest poll at or before s: usually this one, which spares a division
			if d := s - o.spinPhase; d >= o.spinPeriod {
				w += d / o.spinPeriod * o.spinPeriod
			}
			due := w
			if w == o.spinDelayed {
				due = o.spinDue
			}
			if due > t {
				next = w // asked for after this access: it goes second
			} else {
				if s < w+o.spinOcc {
					s = w + o.spinOcc
				}
				if w >= t {
					o.spinReserved = w // if that poll runs, it starts at w
				}
				next = w + o.spinPeriod
			}
		}
		if d := s + occ - next; d > 0 {
			o.delayPolls(next, d)
		}
	}
	m.busy = max(m.busy, s+occ)
	return s
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
	c.lastAddr = a
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
		if m.coh.MonitorLoss {
			m.clearMonitors(c, ln, done)
		}
		ln.owner = c.ID
		ln.sharers = bit
	} else {
		ln.owner = -1
		ln.sharers |= bit
	}
	return r, w, ln, done, done
}

// clearMonitors clears the exclusive monitors other cores than c hold on
// ln, at t, which sets their event registers.
func (m *Memory) clearMonitors(c *Core, ln *line, t Time) {
	others := ^(uint64(1) << c.ID)
	for q := ln.monitors & others; q != 0; q &= q - 1 {
		o := m.e.cores[bits.TrailingZeros64(q)]
		o.monLine, o.monReg = -1, nil
		if !o.dropMonitorEvent() {
			o.signalEvent(t, WakeEvent)
		}
	}
	ln.monitors &^= others
}

// wrote tells the other cores that c's write to word w of ln lands at t:
// their exclusive monitors on the line are cleared (which sets their
// event registers) and cores spinning on it poll again at their next
// iteration. On uncached memory a poll only re-reads the word, so a
// spinner is woken only by a value that would end its spin; on cached
// memory every write invalidates its copy, and the re-read is traffic.
// Only a write that changed the value (changed) counts for the livelock
// watch: a failed test-and-set stores what was there, and a loop of them
// changes nothing.
func (m *Memory) wrote(c *Core, ln *line, r *region, t Time, changed bool) {
	ln.writes++
	if changed && c.cur != nil {
		c.cur.changed() // the writer: the process on c, or the handler it runs
	}
	m.clearMonitors(c, ln, t)
	others := ^(uint64(1) << c.ID)
	for q := ln.spinners & others; q != 0; q &= q - 1 {
		o := m.e.cores[bits.TrailingZeros64(q)]
		if r.Uncached && !o.sp.ends(o.sp.reg.words[o.sp.w]) {
			continue
		}
		ln.spinners &^= 1 << o.ID
		o.wakeAt(o.nextPoll(t), WakeLine)
	}
}

// snapshot records the port and the words and lines used since
// fast-forward began: the rest has not changed, and never will before it
// is used.
func (m *Memory) snapshot(s *Snapshot) {
	s.Time(&m.busy)
	s.Key(m.pollers)
	for _, t := range m.touched {
		r := m.regions[t.r]
		if t.word {
			s.Uint64(&r.words[t.i])
			continue
		}
		r.lines[t.i].snapshot(s)
	}
}

// snapshot records the line's coherence state and counters.
func (ln *line) snapshot(s *Snapshot) {
	s.Key(uint64(ln.owner))
	s.Key(ln.sharers)
	s.Time(&ln.busy)
	s.Key(ln.monitors)
	s.Key(ln.spinners)
	s.Uint64(&ln.writes)
	s.Uint64(&ln.misses)
}
