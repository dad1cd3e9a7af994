// portMUX spinlocks (esp_hw_support/include/spinlock.h) and the critical
// sections of the Xtensa port.c built on them (xPortEnterCriticalTimeout,
// vPortExitCritical).

package esp32

import (
	"fmt"

	"synclab/sim"
)

// spinlock.h: the lock word holds SPINLOCK_FREE or the owner's PRID value.
const spinlockFree = 0xB33FFFFF

var coreIDRegval = [NumCores]uint64{0xCDCD, 0xABAB} // CORE_ID_REGVAL_PRO, CORE_ID_REGVAL_APP

// PortMux is a portMUX_TYPE spinlock (esp_hw_support/include/spinlock.h): an
// owner word in SRAM taken with S32C1I compare-and-set in a tight retry loop,
// with no backoff and no fairness, plus a nesting count.
type PortMux struct {
	Name string
	// Addr is the owner word; the count follows it in the struct.
	Addr  sim.Addr
	owner int // core holding it, -1 when free (mirror of the word)
	count int
	since sim.Time // when the holder took it, for trace spans
	// traced is the core whose span of holding it is open, -1 if none:
	// from the acquire to the span's end, after the releasing store.
	traced int
	// spinFrom is when each core began spinning on it.
	spinFrom [NumCores]sim.Time
	// Statistics: acquisitions, those that found it held, time spun.
	Acquires, Contended int
	SpinTime            sim.Time
}

// Size of portMUX_TYPE: owner and count, two 32-bit words (spinlock.h).
const portMuxBytes = 8

// NewPortMux allocates a spinlock word in SRAM aligned to align bytes
// (portMUX_INITIALIZER_UNLOCKED).
func (k *Kernel) NewPortMux(name string, align uint64) *PortMux {
	return k.portMuxAt(name, k.SoC.Alloc(portMuxBytes, align))
}

// portMuxAt initializes the spinlock whose owner word is at addr (free,
// portMUX_INITIALIZER_UNLOCKED), for a new lock or one inside another
// object (a queue's xQueueLock).
func (k *Kernel) portMuxAt(name string, addr sim.Addr) *PortMux {
	k.SoC.Mem.Poke(addr, spinlockFree)
	k.SoC.Mem.Name(addr, portMuxBytes, name) // a deadlock report names the mux, not only its address
	m := &PortMux{Name: name, Addr: addr, owner: -1, traced: -1}
	k.muxes = append(k.muxes, m)
	return m
}

// enterCritical is taskENTER_CRITICAL(mux) (port.c xPortEnterCriticalTimeout
// with spinlock_acquire): raise the interrupt level to XCHAL_EXCM_LEVEL,
// read the owner word, take the spinlock with S32C1I (or nest it when the
// word shows this core), count the nesting.
//
// The core is read only once interrupts are masked, as port.c does
// (XTOS_SET_INTLEVEL first, then spinlock_acquire's RSR PRID and
// xPortGetCoreID for port_uxCriticalNesting[coreID]): the code before the
// RSIL runs unmasked, so an unpinned task can be preempted there and resume
// on the other core, and a core number read earlier would be stale.
func (k *Kernel) enterCritical(p *sim.Proc, m *PortMux) {
	k.boundary(p) // code before the RSIL runs unmasked (and may migrate the task)
	prev := p.Mask(excmLevel)
	c := coreID(p) // fixed from here until the outermost exit
	pc := &k.cpu[c]
	if prev == 0 {
		k.blame(p, c, BlameCritical)
	}
	// spinlock_acquire reads lock->owner first (a plain l32i of the owner
	// word, at the shared SRAM port like any access): its own core id means
	// a nested acquire, anything else leads to the S32C1I attempts, even
	// when the word shows the other core's id (CODE: esp-idf v5.1
	// components/esp_hw_support/include/spinlock.h, spinlock_acquire:
	// `if (lock->owner == core_id)` before the first esp_cpu_compare_and_set).
	// Nothing is owed here: boundary ran it, and interrupt handlers leave
	// nothing owed (k.isr).
	if p.Load(m.Addr) == coreIDRegval[c] {
		m.count++
	} else {
		m.Acquires++
		switch {
		case m.owner >= 0:
			m.Contended++
			m.spinFrom[c] = p.Now() // kept in the lock, not a local: see sim.Proc.Loop
			p.SpinCAS(m.Addr, spinlockFree, coreIDRegval[c], k.cfg.SpinLoop)
			m.SpinTime += p.Now() - m.spinFrom[c]
		case k.SoC.Mem.Peek(m.Addr) == spinlockFree:
			// The word is free at this instant, the CAS's issue, and an
			// access takes effect at its issue: the first S32C1I succeeds,
			// exactly as SpinCAS's first attempt would, without its set-up.
			p.CAS(m.Addr, spinlockFree, coreIDRegval[c])
		default:
			// Taken by a CAS whose stall has not ended (the mirror lags).
			p.SpinCAS(m.Addr, spinlockFree, coreIDRegval[c], k.cfg.SpinLoop)
		}
		m.owner, m.count, m.since, m.traced = c, 1, p.Now(), c
		if k.cfg.Asserts {
			// spinlock.h (v5.1), on success: assert(lock->owner == core_id).
			k.load(p, m.Addr)
		}
	}
	// PRID read, owner check, count and nesting updates: charged after the
	// S32C1I, inside the masked region, where most of them run.
	pc.owed += k.cfg.SpinlockPair / 2
	if pc.nesting == 0 {
		pc.savedLevel = prev
	}
	pc.nesting++
}

// exitCritical is taskEXIT_CRITICAL(mux): drop the nesting, release the
// spinlock with a plain store when its count reaches zero, and restore the
// interrupt level when the core's last critical section ends. Pending
// interrupts (a yield among them) are taken right there.
func (k *Kernel) exitCritical(p *sim.Proc, m *PortMux) {
	if k.release(p, m) {
		pc := &k.cpu[coreID(p)]
		k.flush(p)
		if pc.savedLevel == 0 {
			k.blame(p, coreID(p), BlameEntry) // unmasked: a pending interrupt is taken now
		}
		p.Restore(pc.savedLevel)
		// The rest runs unmasked: an interrupt taken in Restore may have
		// switched the task out and resumed it on the other core, so pc
		// is stale; the cycles go to the core the task runs on now.
		k.work(p, k.cfg.SpinlockPair-k.cfg.SpinlockPair/2) // nesting bookkeeping and return: the pair's other half
	}
}

// release frees m (or drops one nesting level) and reports whether the
// core left its outermost critical section.
func (k *Kernel) release(p *sim.Proc, m *PortMux) bool {
	c := coreID(p)
	if m.owner != c {
		p.Fail(fmt.Errorf("esp32: core %d exits critical section on %s held by core %d", c, m.Name, m.owner))
		return false
	}
	if k.cfg.Asserts {
		// spinlock_release: assert(core_id == lock->owner) first (v5.1).
		k.load(p, m.Addr)
	}
	m.count--
	if m.count == 0 {
		// The holder's owed cycles run before the releasing store: until it
		// issues, the lock is held (the mirror must say so, or a core that
		// arrives meanwhile spins without being counted as contended).
		k.flush(p)
		m.owner = -1
		k.store(p, m.Addr, spinlockFree)
		if tr := k.E.Trace; tr != nil {
			tr.Add(sim.Span{Core: c, Lane: "lock", Label: m.Name, Start: m.since, End: p.Now()})
			m.traced = -1
		}
	}
	pc := &k.cpu[c]
	pc.nesting--
	return pc.nesting == 0
}
