package esp32

import "synclab/sim"

// BlameCause is what kept core 0 from taking the peripheral interrupt
// (level 1) during part of its latency: a stretch that masks level-1
// interrupts, or an access in flight that the core cannot interrupt.
type BlameCause uint8

// Causes of peripheral-interrupt latency, in report order.
const (
	// BlameCritical: a task's taskENTER_CRITICAL section (interrupts masked
	// to XCHAL_EXCM_LEVEL), counted from its RSIL to the restoring one.
	BlameCritical BlameCause = iota
	// BlameCrosscore: the crosscore (yield) ISR, entry and exit included,
	// up to a context switch it makes.
	BlameCrosscore
	// BlameTick: the FreeRTOS tick ISR, up to a context switch it makes.
	BlameTick
	// BlameSwitch: a context switch from an ISR (register save and restore,
	// the rest of the handler and its exit in the incoming task).
	BlameSwitch
	// BlameInFlight: a memory access of unmasked code that was in flight
	// when the interrupt was asserted (a load or store to SRAM or PSRAM
	// stalls the core until it completes; the interrupt is taken at the
	// next instruction boundary).
	BlameInFlight
	// BlameEntry: the peripheral interrupt's own entry (irq_entry_cycles),
	// and any time it waited while nothing was masking it (none expected).
	BlameEntry
	// BlamePeripheral: the peripheral's own handler (marks its span in the
	// log; it cannot delay itself).
	BlamePeripheral
	numBlameCauses
)

var blameNames = [...]string{"critical", "crosscore_isr", "tick_isr", "switch", "in_flight", "entry", "peripheral_isr"}

// String is the cause's name in metrics and charts.
func (b BlameCause) String() string { return blameNames[b] }

// BlameCauses lists the causes a latency is split into (BlamePeripheral
// never delays its own interrupt and is left out).
var BlameCauses = []BlameCause{BlameCritical, BlameCrosscore, BlameTick, BlameSwitch, BlameInFlight, BlameEntry}

// blameLog records, for the core that takes the peripheral interrupt, when
// it began each stretch that keeps level-1 interrupts out (a masked section,
// an ISR, an unmasked access in flight) and what the stretch was: while the
// interrupt is pending, every stretch since the one in force at its
// assertion; otherwise only those a future assertion can fall in. At the
// peripheral handler's start the stretches since the interrupt's assertion
// are summed by cause.
type blameLog struct {
	core  *sim.Core
	marks []stretch
	// irqs holds every peripheral interrupt taken: a few thousand per run
	// at 1 kHz, kept whole for the experiment's per-interrupt samples.
	irqs []BlamedIRQ
}

// BlamedIRQ is one peripheral interrupt taken: its latency, from assertion
// to handler start, and that latency split by cause (index with a
// BlameCause; the causes add up to the latency).
type BlamedIRQ struct {
	Latency sim.Time
	By      [numBlameCauses]sim.Time
}

// stretch is a stretch of cause c beginning at t.
type stretch struct {
	t sim.Time
	c BlameCause
}

// mark starts a stretch of cause at t (t never precedes the last mark).
// With the interrupt not pending, an assertion can only come at now or
// later, so the stretches that ended by now are dropped.
func (b *blameLog) mark(now, t sim.Time, cause BlameCause) {
	if !b.core.LinePending(IRQPeripheral) {
		i := 0
		for i+1 < len(b.marks) && b.marks[i+1].t <= now {
			i++
		}
		b.marks = append(b.marks[:0], b.marks[i:]...)
	}
	b.marks = append(b.marks, stretch{t, cause})
}

// attribute splits the latency of the peripheral interrupt whose handler
// starts now, asserted at asserted and entered at entered, by the causes
// of the stretches that overlap [asserted, entered), and appends it.
func (b *blameLog) attribute(asserted, entered, now sim.Time) {
	var s [numBlameCauses]sim.Time // by cause
	end := entered
	for j := len(b.marks) - 1; j >= 0 && end > asserted; j-- {
		m := b.marks[j]
		if start := max(m.t, asserted); start < end {
			s[m.c] += end - start
		}
		end = min(end, m.t)
	}
	if end > asserted { // before the oldest stretch logged: unattributed
		s[BlameEntry] += end - asserted
	}
	s[BlameEntry] += now - entered
	b.irqs = append(b.irqs, BlamedIRQ{Latency: now - asserted, By: s})
}

// snapshot records the log for fast-forward.
func (b *blameLog) snapshot(s *sim.Snapshot) {
	s.Key(uint64(len(b.marks)))
	for i := range b.marks {
		s.Time(&b.marks[i].t)
		s.Key(uint64(b.marks[i].c))
	}
	// The peripheral's interrupts are no period's: they bound every skip.
	s.Epoch(uint64(len(b.irqs)))
}

// blame marks a stretch of cause starting on p's core c where its code now
// is (after its owed cycles), if c is the logged core.
func (k *Kernel) blame(p *sim.Proc, c int, cause BlameCause) {
	if b := k.blameLog; b != nil && b.core == p.Core() {
		b.mark(p.Now(), p.Now()+p.Core().Cycles(k.cpu[c].owed), cause)
	}
}

// IRQBlame returns every peripheral interrupt taken on core 0 with its
// latency split by cause, or nil when the peripheral is not running.
func (k *Kernel) IRQBlame() []BlamedIRQ {
	if k.blameLog == nil {
		return nil
	}
	return k.blameLog.irqs
}
