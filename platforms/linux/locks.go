package linux

import (
	"fmt"
	"slices"

	"synclab/sim"
)

// Spinlock is a raw spinlock: Lock spins until the caller holds it.
type Spinlock interface {
	Lock(p *sim.Proc)
	Unlock(p *sim.Proc)
	// Word returns the address of the lock word.
	Word() sim.Addr
}

// Flavour names a spinlock algorithm.
type Flavour string

// Spinlock algorithms.
const (
	QSpinlock   Flavour = "qspinlock"    // arm64 since v4.19 (commit c11090474d70)
	Ticket      Flavour = "ticket"       // arm32: plain WFE, SEV on unlock
	TAS         Flavour = "tas"          // test-and-set baseline
	TTAS        Flavour = "ttas"         // test-and-test-and-set baseline
	TicketArm64 Flavour = "ticket-arm64" // arm64 before v4.19: LDAXRH arms the monitor, unlock sends no SEV
)

// Flavours lists every algorithm.
var Flavours = []Flavour{QSpinlock, Ticket, TAS, TTAS, TicketArm64}

// ParseFlavour returns the algorithm called s (an experiment's variant).
func ParseFlavour(s string) (Flavour, error) {
	if f := Flavour(s); slices.Contains(Flavours, f) {
		return f, nil
	}
	return "", fmt.Errorf("spinlock flavour %q unknown; known: %s", s, names(Flavours))
}

// NewSpinlock allocates a lock of flavour f on its own cache line with the
// wait policy w. Reports name it by flavour and order ("qspinlock #2");
// mem.Name(l.Word(), 8, "mine") gives it your name instead.
func (k *Kernel) NewSpinlock(f Flavour, w Wait) (Spinlock, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if _, err := ParseFlavour(string(f)); err != nil {
		return nil, err
	}
	a, err := k.Alloc(8)
	if err != nil {
		return nil, err
	}
	k.spinlocks++
	k.mem.Name(a, 8, fmt.Sprintf("%s #%d", f, k.spinlocks))
	base := lockBase{k: k, word: a, w: w}
	var l Spinlock
	switch f {
	case QSpinlock:
		l = &qspinlock{base}
	case Ticket:
		l = &ticketLock{lockBase: base}
	case TicketArm64:
		l = &ticketLock{lockBase: base, arm64: true}
	case TAS:
		l = &tasLock{base}
	case TTAS:
		l = &ttasLock{tasLock{base}}
	}
	fair := f == QSpinlock || f == Ticket || f == TicketArm64
	return &ownedLock{Spinlock: l, k: k, fair: fair, queued: make([]execContext, len(k.CPUs))}, nil
}

type lockBase struct {
	k    *Kernel
	word sim.Addr
	w    Wait
}

func (l *lockBase) Word() sim.Addr { return l.word }

// ownedLock keeps CONFIG_DEBUG_SPINLOCK's owner bookkeeping around a lock,
// and which CPUs' contexts queue on a fair lock (in Go, outside the modelled
// memory, so it costs no simulated time; kept per CPU and named only in a
// report, since it runs on every acquisition). A CPU that tries to take a
// lock it already holds can never get it, nor can an interrupt handler that
// queues on a fair lock (qspinlock, ticket) behind the context it
// interrupted: the lock is served to that context first, which cannot run
// on until the handler returns. The kernel reports the first as "BUG: spinlock
// recursion" with the debug option (the interrupted holder is still current;
// lockdep flags both); without it the CPU spins, which arm64 5.10, with no
// hard-lockup detector, shows as an RCU CPU stall. It is why a lock an
// interrupt handler takes must be taken with spin_lock_irqsave. The run
// ends there with a sim.DeadlockError naming the waiter and the context
// ahead of it.
type ownedLock struct {
	Spinlock
	k      *Kernel
	fair   bool
	owner  *CPU
	holder execContext
	queued []execContext // fair locks: the context of each CPU waiting, by CPU ID
}

// Lock takes the lock, or ends the run if this CPU's interrupted context
// holds it or, on a fair lock, waits for it.
func (l *ownedLock) Lock(p *sim.Proc) {
	cpu := l.k.cpu(p)
	ahead := ""
	switch {
	case l.owner == cpu:
		ahead = "held by " + l.holder.String()
	case l.queued[cpu.ID].p != nil:
		ahead = "queued for by " + l.queued[cpu.ID].String() + " (a fair lock serves it first)"
	}
	if ahead != "" {
		p.Fail(&sim.DeadlockError{At: p.Now(), Waiters: []sim.Waiter{{Proc: l.k.context(p).String(), Core: cpu.ID,
			On: fmt.Sprintf("%s (%#x), %s on the same CPU, which cannot run on until the waiter returns (a lock an interrupt handler takes needs spin_lock_irqsave)", l.k.mem.NameOf(l.Word()), uint64(l.Word()), ahead)}}})
	}
	if l.fair {
		l.queued[cpu.ID] = l.k.context(p)
	}
	l.Spinlock.Lock(p)
	l.queued[cpu.ID] = execContext{}
	l.owner, l.holder = cpu, l.k.context(p)
}

// Unlock releases the lock.
func (l *ownedLock) Unlock(p *sim.Proc) {
	l.owner = nil
	l.Spinlock.Unlock(p)
}

// SpinLockIRQSave is spin_lock_irqsave: interrupts are masked before the
// lock is taken (so a handler on this CPU cannot deadlock on it) and stay
// masked while it is held. It returns the flags for SpinUnlockIRQRestore.
func SpinLockIRQSave(p *sim.Proc, l Spinlock) int {
	flags := LocalIRQSave(p)
	l.Lock(p)
	return flags
}

// SpinUnlockIRQRestore is spin_unlock_irqrestore.
func SpinUnlockIRQRestore(p *sim.Proc, l Spinlock, flags int) {
	l.Unlock(p)
	LocalIRQRestore(p, flags)
}

// ---- qspinlock (kernel/locking/qspinlock.c, v5.10) ----

// Lock word layout for NR_CPUS < 16K (include/asm-generic/qspinlock_types.h):
// bits 0-7 locked, bit 8 pending, bits 16-17 tail index, 18-31 tail cpu+1.
const (
	qLocked       = 1
	qPending      = 1 << 8
	qLockedMask   = 0xff
	qPendingMask  = 0xff << 8 // locked_pending halfword: pending byte
	qLPMask       = qLockedMask | qPendingMask
	qTailIdxOff   = 16
	qTailCPUOff   = 18
	qTailMask     = 0xffff << 16
	qPendingLoops = 1  // _Q_PENDING_LOOPS: arm64 does not override it
	mcsNodeSize   = 16 // struct mcs_spinlock {next; locked; count} (count kept in Go)
	maxNodes      = 4  // task, softirq, hardirq, nmi
)

type qspinlock struct{ lockBase }

func encodeTail(cpu, idx int) uint64 {
	return uint64(cpu+1)<<qTailCPUOff | uint64(idx)<<qTailIdxOff
}

// node returns the address of MCS node idx of cpu (per-CPU qnodes[]).
func (l *qspinlock) node(cpu, idx int) sim.Addr {
	return l.k.qnodes + sim.Addr(cpu)*l.k.line + sim.Addr(idx*mcsNodeSize)
}

func (l *qspinlock) decodeTail(tail uint64) sim.Addr {
	cpu := int(tail>>qTailCPUOff) - 1
	idx := int(tail>>qTailIdxOff) & 3
	return l.node(cpu, idx)
}

// Lock is queued_spin_lock: the uncontended fast path is one cmpxchg.
func (l *qspinlock) Lock(p *sim.Proc) {
	val := l.k.cmpxchg(p, l.word, 0, qLocked)
	if val == 0 {
		return
	}
	l.k.contended(p)
	l.slowpath(p, val)
}

// Unlock is queued_spin_unlock: smp_store_release(&lock->locked, 0). No
// SEV: the store clears the waiters' exclusive monitors, which wakes them.
func (l *qspinlock) Unlock(p *sim.Proc) {
	l.k.add(p, l.word, ^uint64(0)) // locked byte 1 -> 0
	l.k.release(p, &l.w)
}

func (l *qspinlock) cond(p *sim.Proc, a sim.Addr, c func(uint64) bool) uint64 {
	return l.k.condLoad(p, &l.w, a, true, c)
}

// slowpath is queued_spin_lock_slowpath.
func (l *qspinlock) slowpath(p *sim.Proc, val uint64) {
	k := l.k
	// Wait for an in-progress pending->locked hand-over (bounded).
	if val == qPending {
		cnt := qPendingLoops
		val = l.cond(p, l.word, func(v uint64) bool {
			if v != qPending {
				return true
			}
			cnt--
			return cnt < 0
		})
	}
	// Any contention beyond the owner: queue.
	if val&^qLockedMask != 0 {
		l.queue(p)
		return
	}
	// Become the pending waiter: fetch_or_acquire(pending).
	val = k.llsc(p, l.word, func(v uint64) (uint64, bool) { return v | qPending, true })
	if val&^qLockedMask != 0 {
		// Someone queued or became pending meanwhile: undo our pending
		// bit if we set it, and queue.
		if val&qPendingMask == 0 {
			k.add(p, l.word, ^uint64(qPending-1)) // clear_pending: -_Q_PENDING_VAL
		}
		l.queue(p)
		return
	}
	// We are pending: wait for the owner to go, spinning on the lock word.
	if val&qLockedMask != 0 {
		l.cond(p, l.word, func(v uint64) bool { return v&qLockedMask == 0 })
	}
	// clear_pending_set_locked: locked_pending halfword 0x0100 -> 0x0001.
	k.add(p, l.word, qLocked+(^uint64(qPending)+1)) // +1 - 0x100
}

// queue is the MCS part of the slow path: each waiter spins on its own
// per-CPU node; only the queue head watches the lock word.
func (l *qspinlock) queue(p *sim.Proc) {
	k := l.k
	cpu := k.cpu(p)
	idx := cpu.qcount
	cpu.qcount++
	defer func() { cpu.qcount-- }()
	if idx >= maxNodes {
		// More nesting than nodes (never in practice): spin on trylock.
		for l.k.cmpxchg(p, l.word, 0, qLocked) != 0 {
			p.Relax(l.w.RelaxCycles)
		}
		return
	}
	node := l.node(cpu.ID, idx)
	tail := encodeTail(cpu.ID, idx)
	k.store(p, node+8, 0) // node->locked = 0
	k.store(p, node, 0)   // node->next = NULL
	// queued_spin_trylock: the lock may have been freed while we set up.
	if v := k.load(p, l.word); v == 0 && k.cmpxchg(p, l.word, 0, qLocked) == 0 {
		return
	}
	// xchg_tail: publish ourselves as the tail (a halfword xchg, an LL/SC
	// loop on arm64 without LSE).
	old := k.llsc(p, l.word, func(v uint64) (uint64, bool) { return v&^qTailMask | tail, true })
	var next uint64
	if old&qTailMask != 0 {
		prev := l.decodeTail(old & qTailMask)
		k.store(p, prev, uint64(node)) // WRITE_ONCE(prev->next, node)
		// arch_mcs_spin_lock_contended: smp_cond_load_acquire(&node->locked, VAL)
		l.cond(p, node+8, func(v uint64) bool { return v != 0 })
		next = k.load(p, node)
	}
	// We are the head: wait for owner and pending to go.
	val := l.cond(p, l.word, func(v uint64) bool { return v&qLPMask == 0 })
	// If we are also the tail, claim the lock and clear the tail at once.
	if val&qTailMask == tail {
		if k.cmpxchg(p, l.word, val, qLocked) == val {
			return
		}
	}
	k.add(p, l.word, qLocked) // set_locked: locked byte 0 -> 1
	if next == 0 {
		next = l.cond(p, node, func(v uint64) bool { return v != 0 })
	}
	// arch_mcs_spin_unlock_contended: smp_store_release(&next->locked, 1)
	k.store(p, sim.Addr(next)+8, 1)
}

// ---- ticket lock: arm32 (arch/arm/include/asm/spinlock.h) and arm64
// before v4.19 (arch/arm64/include/asm/spinlock.h, v4.18) ----

// Lock word: owner in bits 0-31, next in bits 32-63 (the kernel uses 16-bit
// halves; 32 keeps the sim free of wrap-around for any run length).
const ticketNext = 1 << 32

// ticketLock is the ticket lock. arm32 waits in a plain WFE, which only an
// SEV (or an interrupt, or the event stream) ends, so its unlock sends one;
// arm64's waited with LDAXRH + WFE (sevl; 2: wfe; ldaxrh; eor; cbnz 2b),
// so the unlock's store (STLRH) clears the waiters' monitors and no SEV is
// needed.
type ticketLock struct {
	lockBase
	arm64 bool
}

// Lock takes a ticket (ldrex/add/strex) and waits with wfe until the owner
// field reaches it.
func (l *ticketLock) Lock(p *sim.Proc) {
	k := l.k
	old := k.llsc(p, l.word, func(v uint64) (uint64, bool) { return v + ticketNext, true })
	mine := old >> 32
	if uint32(old) == uint32(mine) {
		return
	}
	k.contended(p)
	// while (lockval.tickets.next != lockval.tickets.owner) { wfe(); owner = READ_ONCE(...) }
	k.condLoad(p, &l.w, l.word, l.arm64, func(v uint64) bool { return uint32(v) == uint32(mine) })
}

// Unlock is owner++ then, on arm32, dsb_sev(); arm64's is the store alone.
func (l *ticketLock) Unlock(p *sim.Proc) {
	l.k.add(p, l.word, 1)
	if l.arm64 {
		l.k.release(p, &l.w)
		return
	}
	l.sevRelease(p)
}

// sevRelease ends an unlock whose waiters sleep in a plain WFE: dsb(ishst);
// sev(), then the policy's release work.
func (l *lockBase) sevRelease(p *sim.Proc) {
	l.k.sev(p)
	l.k.release(p, &l.w)
}

// ---- test-and-set and test-and-test-and-set baselines ----

type tasLock struct{ lockBase }

// Lock retries an atomic swap, pausing between attempts: the article's
// "while (test_and_set(lock)) wfe()/wfi();".
func (l *tasLock) Lock(p *sim.Proc) {
	swap := func(uint64) (uint64, bool) { return 1, true }
	if w, ok := l.k.pausePolicy(p, &l.w, l.word); ok {
		l.acquire(p, sim.AcquireLoop{Op: swap, Wait: w})
		return
	}
	l.retry(p, func() bool { return l.k.llsc(p, l.word, swap) == 0 },
		func(iter int) { l.k.pause(p, &l.w, iter) })
}

// acquire runs loop in sim (Proc.Acquire: its attempts and waits cost no
// context switch) until an attempt reads the word free (0), each attempt
// with llsc's prefetch and wake_up_var after each store; a failed first
// attempt is the slow-path entry, as in retry.
func (l *lockBase) acquire(p *sim.Proc, loop sim.AcquireLoop) {
	loop.Prefetch = true
	loop.Taken = func(old uint64) bool { return old == 0 }
	loop.OnStore = func() { l.k.wakeVar(p, l.word) }
	if _, failed := p.Acquire(l.word, loop); failed > 0 {
		l.k.contended(p)
	}
}

// retry runs attempt until it takes the lock, with wait(iter) between
// attempts; a failed first attempt is the slow-path entry (a contention).
func (l *lockBase) retry(p *sim.Proc, attempt func() bool, wait func(iter int)) {
	for iter := 0; !attempt(); iter++ {
		if iter == 0 {
			l.k.contended(p)
		}
		wait(iter)
	}
}

// Unlock is the article's release: smp_store_release(0); dsb(ishst); sev().
// The test-and-test-and-set lock shares it.
func (l *tasLock) Unlock(p *sim.Proc) {
	l.k.store(p, l.word, 0)
	l.sevRelease(p)
}

type ttasLock struct{ tasLock }

// Lock reads until the lock looks free, then tries the atomic.
func (l *ttasLock) Lock(p *sim.Proc) {
	claim := func(v uint64) (uint64, bool) { return 1, v == 0 }
	free := func(v uint64) bool { return v == 0 }
	if l.k.wfeAfterPolls(p, &l.w) {
		l.acquire(p, sim.AcquireLoop{Op: claim, Test: free, Wait: l.k.policy(p, &l.w, l.word, true)})
		return
	}
	l.retry(p, func() bool { return l.k.llsc(p, l.word, claim) == 0 },
		func(int) { l.k.condLoad(p, &l.w, l.word, true, free) })
}
