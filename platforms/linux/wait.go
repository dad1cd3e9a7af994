package linux

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"synclab/sim"
)

// Mode is how a spinning CPU passes time until the lock may be free.
type Mode int

// Wait modes.
const (
	// WFE: arm64 smp_cond_load_acquire (__cmpwait: LDXR arms the exclusive
	// monitor, WFE sleeps until the lock line is written, an interrupt or
	// the event stream); plain WFE where the algorithm has no monitor.
	WFE Mode = iota
	// WFI: the article's faulty loop: WFI sleeps until an interrupt; a
	// release never wakes it. With interrupts masked (irqsave) a pending
	// interrupt makes every later WFI fall through, so the loop then spins.
	WFI
	// Relax: busy-wait with cpu_relax (yield) between polls.
	Relax
	// Adaptive: poll SpinLimit times, then WFE (the article's 4.2).
	Adaptive
	// Tiered: poll SpinLimit times, then WFE up to WFELimit wake-ups, then
	// schedule() until a write to the lock word wakes the task (the
	// article's 6). A what-if: Linux lets no spinlock waiter schedule(),
	// since spin_lock disables preemption first ("scheduling while atomic"),
	// so the model sleeps as a sleeping lock would. With interrupts masked or
	// in a handler not even that can sleep, so there the last tier stays WFE.
	Tiered
	// WFET: as WFE, but every sleep also ends after Timeout (ARMv8.7
	// FEAT_WFxT; the article calls it ARMv8.1). The RK3399's cores
	// (ARMv8.0) do not have it, and Linux 5.10 does not use it: a what-if.
	WFET
)

var modeNames = [...]string{"wfe", "wfi", "relax", "adaptive", "tiered", "wfet"}

// String is the mode's variant name.
func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return fmt.Sprintf("mode(%d)", int(m))
	}
	return modeNames[m]
}

// ParseMode returns the mode with the given name.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if n == s {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("wait mode %q unknown; known: %s", s, names(modeNames[:]))
}

// names lists names for an error message as the other parsers do: "a, b".
func names[S ~string](ns []S) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

// Wait is a lock's waiting policy.
type Wait struct {
	Mode Mode
	// RelaxCycles is one poll iteration with cpu_relax (a load, compare,
	// branch and YIELD).
	RelaxCycles int64
	// SpinLimit (Adaptive, Tiered) is the number of polls before WFE.
	SpinLimit int
	// WFELimit (Tiered) is the number of WFE wake-ups before schedule().
	WFELimit int
	// Timeout (WFET) bounds each sleep.
	Timeout sim.Time
	// RedundantSEV adds an SEV after every release: the workaround for a
	// SoC that loses wake-up events (the article's 5).
	RedundantSEV bool
}

// Validate reports the first bad field, naming it and its value.
func (w Wait) Validate() error {
	switch {
	case w.Mode < WFE || w.Mode > WFET:
		return fmt.Errorf("wait: Mode = %d unknown", int(w.Mode))
	case w.Mode == WFET && w.Timeout <= 0:
		return fmt.Errorf("wait: Timeout = %v must be > 0 for WFET", w.Timeout)
	case w.RelaxCycles < 1:
		return fmt.Errorf("wait: RelaxCycles = %d must be >= 1", w.RelaxCycles)
	case w.SpinLimit < 0 || w.WFELimit < 0:
		return fmt.Errorf("wait: SpinLimit = %d and WFELimit = %d must be >= 0", w.SpinLimit, w.WFELimit)
	}
	return nil
}

// sleeper is a task in schedule() (the tiered policy's last tier) until a
// write to addr: wait_var_event(addr, cond), with wake_up_var(addr) after
// every lock-code write. Each woken task re-checks its own condition and
// sleeps again if it does not hold (a ticket lock's waiters that do not
// hold the next ticket), so no wake-up is lost whichever task a write
// concerns. Go state is safe: procs run one at a time.
type sleeper struct {
	cpu  *CPU
	addr sim.Addr
}

// wakeVar wakes every task sleeping on a (wake_up_var).
func (k *Kernel) wakeVar(p *sim.Proc, a sim.Addr) {
	kept := k.sleepers[:0]
	for _, s := range k.sleepers {
		if s.addr == a {
			k.wakeUp(p, s.cpu)
		} else {
			kept = append(kept, s)
		}
	}
	k.sleepers = kept
}

// unsleep takes cpu's task off the sleepers (finish_wait).
func (k *Kernel) unsleep(cpu *CPU) {
	k.sleepers = slices.DeleteFunc(k.sleepers, func(s sleeper) bool { return s.cpu == cpu })
}

// contended books one slow-path entry of the CPU p runs on.
func (k *Kernel) contended(p *sim.Proc) { k.cpu(p).Contentions++ }

// Memory accesses of the lock code, counted when Kernel.Count is set.

func (k *Kernel) count(p *sim.Proc, a sim.Addr) {
	if k.Count != nil {
		k.Count(p.Core().ID, a)
	}
}

// policy is sim's form of w for a wait on a that sleeps in WFE after its
// polls (wfeAfterPolls), counting each access when Count is set.
func (k *Kernel) policy(p *sim.Proc, w *Wait, a sim.Addr, monitor bool) sim.WaitPolicy {
	sp := sim.WaitPolicy{RelaxCycles: w.RelaxCycles, Monitor: monitor}
	switch w.Mode {
	case Adaptive, Tiered:
		sp.Polls = w.SpinLimit
	case WFET:
		sp.Timeout = w.Timeout
	}
	if k.Count != nil {
		sp.OnAccess = func() { k.count(p, a) }
	}
	return sp
}

func (k *Kernel) load(p *sim.Proc, a sim.Addr) uint64 { k.count(p, a); return p.Load(a) }

func (k *Kernel) store(p *sim.Proc, a sim.Addr, v uint64) {
	k.count(p, a)
	p.Store(a, v)
	k.wakeVar(p, a)
}

// add is a sub-word store emulated on sim's 64-bit words: the kernel writes
// one byte (lock->locked) or halfword (owner++) that no other CPU writes
// concurrently, so adding the known difference atomically has the same
// effect and the same coherence cost (the line taken exclusively) without
// clobbering the neighbouring fields other CPUs update.
func (k *Kernel) add(p *sim.Proc, a sim.Addr, d uint64) {
	k.count(p, a)
	p.FetchAdd(a, d)
	k.wakeVar(p, a)
}

// ldxr is LDXR/LDAXR: a load that arms the exclusive monitor on a's line.
func (k *Kernel) ldxr(p *sim.Proc, a sim.Addr) uint64 { k.count(p, a); return p.LoadExclusive(a) }

// llsc is an arm64 LL/SC loop without LSE atomics (the RK3399 is Armv8.0):
// prfm pstl1strm; 1: ldaxr; <op>; stlxr; cbnz 1b. op returns the new value
// and whether to store; on false the loop exits without storing (the
// cmpxchg failure path, which leaves the monitor armed as the kernel does).
// The prefetch for store, which every LL/SC atomic and cmpxchg of v5.10
// issues first (arch/arm64/include/asm/atomic_ll_sc.h, cmpxchg.h), takes
// the line owned, so an uncontended attempt costs one line transfer, not a
// read and then an upgrade; arm32's ticket lock does the same with
// prefetchw (PLDW) before its ldrex/strex loop (arch/arm/include/asm/spinlock.h).
func (k *Kernel) llsc(p *sim.Proc, a sim.Addr, op func(old uint64) (uint64, bool)) uint64 {
	p.PrefetchStore(a) // a hint, not an access: not counted
	for {
		old := k.ldxr(p, a)
		nv, ok := op(old)
		if !ok {
			return old
		}
		if p.StoreExclusive(a, nv) {
			k.wakeVar(p, a)
			return old
		}
	}
}

// cmpxchg is atomic_cmpxchg_acquire: it returns the previous value.
func (k *Kernel) cmpxchg(p *sim.Proc, a sim.Addr, old, nv uint64) uint64 {
	return k.llsc(p, a, func(v uint64) (uint64, bool) { return nv, v == old })
}

// condLoad is smp_cond_load_acquire(ptr, cond) under the lock's wait policy:
// it returns the first value of *a for which cond holds. monitor says the
// algorithm waits on the word itself (arm64 __cmpwait arms the exclusive
// monitor, so the releasing store is the wake-up); without it WFE relies
// on an SEV (arm32 wfe loops).
func (k *Kernel) condLoad(p *sim.Proc, w *Wait, a sim.Addr, monitor bool, cond func(uint64) bool) uint64 {
	switch {
	case w.Mode == Relax:
		k.count(p, a)
		return p.SpinUntil(a, w.RelaxCycles, cond)
	case k.wfeAfterPolls(p, w):
		// sim's loop, whose polls and wake-ups that do not end the wait
		// cost no context switch.
		return p.CondWait(a, cond, k.policy(p, w, a, monitor))
	}
	for iter := 0; ; iter++ {
		v := k.load(p, a)
		if cond(v) {
			return v
		}
		switch k.tier(p, w, iter, true) {
		case tierPoll:
			p.Relax(w.RelaxCycles)
		case tierSpin:
			// WFI can no longer sleep: the rest of the wait is a busy poll.
			k.count(p, a)
			return p.SpinUntil(a, w.RelaxCycles, cond)
		case tierWFE:
			if monitor {
				// __cmpwait_relaxed: sevl; wfe; ldxr; eor; cbnz 1f; wfe; 1:
				// The first wfe only consumes the local event, so a
				// stale event cannot skip the real wait.
				p.SEVL()
				p.WFE()
				if k.ldxr(p, a) == v {
					k.wfe(p, w)
				}
			} else {
				k.wfe(p, w)
			}
		case tierWFI:
			// Handled in tier: it has already slept.
		case tierSchedule:
			cpu := k.cpu(p)
			k.sleepers = append(k.sleepers, sleeper{cpu, a})
			// prepare_to_wait, then re-check before sleeping: a
			// release between the check above and the queueing would
			// otherwise be missed.
			if cond(k.load(p, a)) {
				k.unsleep(cpu)
				continue
			}
			k.blockUntilWoken(p, fmt.Sprintf("schedule() waiting for lock word %#x", uint64(a)))
		}
	}
}

type tier int

const (
	tierPoll tier = iota
	tierWFE
	tierWFI
	tierSpin
	tierSchedule
)

// tier picks what iteration iter of a wait loop does, per policy (Relax
// always polls; condLoad spins Relax waits in one SpinUntil instead); sleep
// says the loop may schedule() (it has a word to be woken on). For WFI
// it sleeps right here (deliverable interrupts that woke it are taken
// before WFI returns) and reports tierSpin when an interrupt is still
// pending afterwards: one that is masked (irqsave, or a handler's own
// level) stays pending, and WFI falls through at once while any interrupt
// is pending, so every later iteration would be a busy poll.
func (k *Kernel) tier(p *sim.Proc, w *Wait, iter int, sleep bool) tier {
	switch w.Mode {
	case Relax:
		return tierPoll
	case WFI:
		p.WFI()
		if p.Core().Pending() {
			return tierSpin
		}
		return tierWFI
	case Adaptive:
		if iter < w.SpinLimit {
			return tierPoll
		}
	case Tiered:
		switch {
		case iter < w.SpinLimit:
			return tierPoll
		case iter < w.SpinLimit+w.WFELimit, !sleep, k.InIRQ(p), IRQsDisabled(p):
			// schedule() from atomic context is a bug ("scheduling
			// while atomic"): with interrupts masked or in a handler the
			// last tier stays WFE.
			return tierWFE
		default:
			return tierSchedule
		}
	}
	return tierWFE
}

// wfeAfterPolls reports whether tier, past its polls, chooses WFE for every
// iteration of a wait that p begins: always under WFE, WFET and Adaptive,
// and under Tiered where schedule() is illegal (in a handler or with
// interrupts masked, which a wait does not change).
func (k *Kernel) wfeAfterPolls(p *sim.Proc, w *Wait) bool {
	switch w.Mode {
	case WFE, WFET, Adaptive:
		return true
	case Tiered:
		return k.InIRQ(p) || IRQsDisabled(p)
	}
	return false
}

// pausePolicy is sim's form of w for the pauses between the attempts of a
// lock that retries an atomic (pause): polls while tier polls, then WFE.
// ok is false under WFI, whose pauses sleep in WFI.
func (k *Kernel) pausePolicy(p *sim.Proc, w *Wait, a sim.Addr) (sp sim.WaitPolicy, ok bool) {
	sp = k.policy(p, w, a, false)
	switch w.Mode {
	case WFI:
		return sp, false
	case Relax:
		sp.Polls = math.MaxInt
	}
	return sp, true
}

// pause is one wait step of a lock that retries an atomic rather than
// reading first (test-and-set): the policy's pause between attempts.
func (k *Kernel) pause(p *sim.Proc, w *Wait, iter int) {
	switch k.tier(p, w, iter, false) {
	case tierPoll, tierSpin:
		p.Relax(w.RelaxCycles)
	case tierWFE:
		k.wfe(p, w)
	}
}

// wfe is the wait loop's sleeping WFE: WFET with the policy's timeout under
// WFET, plain WFE otherwise.
func (k *Kernel) wfe(p *sim.Proc, w *Wait) {
	if w.Mode == WFET {
		p.WFET(p.Now() + w.Timeout)
		return
	}
	p.WFE()
}

// release ends an unlock: the optional redundant SEV of the workaround.
func (k *Kernel) release(p *sim.Proc, w *Wait) {
	if w.RedundantSEV {
		k.sev(p)
	}
}

// SetLoseSEV makes every SEV instruction lose its event with probability
// prob (the article's 5: a SoC whose SEV lost wake-ups, drawn per SEV from
// the run's own random stream). Exclusive-monitor events are not affected:
// sim.Faults.LoseWake models a faulty event line, which loses both.
func (k *Kernel) SetLoseSEV(prob float64) error {
	if !(prob >= 0 && prob <= 1) {
		return fmt.Errorf("linux: LoseSEV = %g must be in [0, 1]", prob)
	}
	k.loseSEV = prob
	if prob > 0 && k.sevRand == nil {
		k.sevRand = k.e.Stream("linux/lose-sev")
	}
	return nil
}

// sev is the SEV instruction, lost with probability SetLoseSEV.
func (k *Kernel) sev(p *sim.Proc) {
	if k.loseSEV > 0 && k.sevRand.Float64() < k.loseSEV {
		return
	}
	p.SEV()
}
