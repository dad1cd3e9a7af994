package linux_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"synclab/platforms/generic"
	"synclab/platforms/linux"
	"synclab/sim"
)

var modes = []linux.Mode{linux.WFE, linux.WFI, linux.Relax, linux.Adaptive, linux.Tiered, linux.WFET}

// Every flavour under every wait policy keeps mutual exclusion on six CPUs
// in two clusters at full load, with a device interrupt on cpu0 whose
// handler takes the same lock: never two holders, and no increment of the
// (non-atomic) counter lost. cpu0's thread masks interrupts
// (spin_lock_irqsave, or its handler would deadlock on it); the others
// take the plain spin_lock, so tiered waiters schedule().
// Kills: any lock that lets a second CPU in, e.g. ticketLock.Lock not
// waiting for its ticket, qspinlock's pending waiter not waiting for the
// owner, the MCS head not waiting for owner and pending, a TTAS that takes
// the lock on seeing it free without the atomic.
func TestMutualExclusion(t *testing.T) {
	for _, f := range linux.Flavours {
		for _, m := range modes {
			t.Run(fmt.Sprintf("%s/%s", f, m), func(t *testing.T) {
				for seed := uint64(1); seed <= 2; seed++ {
					if most, ops, got, contended := contend(t, f, m, seed); most != 1 || got != uint64(ops) || contended == 0 {
						t.Errorf("seed %d: max holders %d, counter %d of %d increments, %d contended; want 1, all, > 0",
							seed, most, got, ops, contended)
					}
				}
			})
		}
	}
}

// contend runs TestMutualExclusion's workload for 20 ms: it returns the
// most CPUs seen inside the critical section at once, the increments made,
// the counter's final value and the slow-path entries.
func contend(t *testing.T, f linux.Flavour, m linux.Mode, seed uint64) (most, ops int, counter uint64, contended int) {
	const duration = 20 * sim.Millisecond
	r := newRig(t, 6, seed, nil)
	l := r.lock(t, f, m)
	a, err := r.k.Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	holders := 0
	critical := func(p *sim.Proc, cs sim.Time) {
		holders++
		most = max(most, holders)
		v := p.Load(a)
		p.Delay(cs)
		p.Store(a, v+1)
		ops++
		holders--
	}
	_, err = r.k.Device("dev", 0, linux.IRQDevice, 50*sim.Microsecond, true, func(p *sim.Proc, _ sim.IRQ) {
		if p.Now() < duration {
			flags := linux.SpinLockIRQSave(p, l)
			critical(p, sim.Microsecond)
			linux.SpinUnlockIRQRestore(p, l, flags)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range r.cores {
		rng := r.e.Stream(fmt.Sprint("test/", i))
		r.e.Spawn(c, fmt.Sprint("t", i), func(p *sim.Proc) {
			for p.Now() < duration {
				p.Delay(sim.Time(rng.ExpFloat64() * float64(2*sim.Microsecond)))
				flags := lockIRQ(p, l, i == 0)
				critical(p, 2*sim.Microsecond)
				unlockIRQ(p, l, flags)
			}
		})
	}
	r.run(t)
	for _, cpu := range r.k.CPUs {
		contended += cpu.Contentions
	}
	return most, ops, r.e.Memory().Peek(a), contended
}

// CPU.Contentions counts slow-path entries: none for acquisitions of a free
// lock, exactly one per acquisition that found it taken, however long that
// one waits. cpu0 takes the lock ten times alone, then holds it 1 ms while
// cpu1 and cpu2 arrive (for the qspinlock: the pending waiter, then the
// MCS queue; the test-and-set waiter retries on every event-stream tick).
// Kills: counting in the fast path; counting each retry of a wait loop.
func TestContentionsCountSlowPathEntries(t *testing.T) {
	for _, f := range linux.Flavours {
		r := newRig(t, 3, 1, nil)
		l := r.lock(t, f, linux.WFE)
		r.e.Spawn(r.cores[0], "owner", func(p *sim.Proc) {
			for range 10 {
				l.Lock(p)
				p.Delay(sim.Microsecond)
				l.Unlock(p)
			}
			l.Lock(p)
			p.Delay(sim.Millisecond)
			l.Unlock(p)
		})
		for i, c := range r.cores[1:] {
			r.e.Spawn(c, fmt.Sprint("waiter", i), func(p *sim.Proc) {
				p.Delay(sim.Time(i+2) * 100 * sim.Microsecond)
				flags := linux.SpinLockIRQSave(p, l)
				linux.SpinUnlockIRQRestore(p, l, flags)
			})
		}
		r.run(t)
		var got []int
		for _, cpu := range r.k.CPUs {
			got = append(got, cpu.Contentions)
		}
		if want := []int{0, 1, 1}; !slices.Equal(got, want) {
			t.Errorf("%s: contentions by cpu %v, want %v", f, got, want)
		}
	}
}

// arrivals runs one acquisition per CPU of a six-CPU rig (cpu0-3 in one
// cluster, cpu4-5 in the other) with flavour f, CPU order[i] arriving
// 5 us after order[i-1] (plus up to 1 us drawn from seed), each holding the
// lock 100 us with interrupts masked. It returns the CPUs in grant order.
func arrivals(t *testing.T, f linux.Flavour, seed uint64, order []int) []int {
	r := newRig(t, 6, seed, nil)
	l := r.lock(t, f, linux.WFE)
	var granted []int
	rng := r.e.Stream("test/arrivals")
	for rank, cpu := range order {
		at := sim.Time(rank)*5*sim.Microsecond + sim.Time(rng.IntN(1000))*sim.Nanosecond
		r.e.Spawn(r.cores[cpu], fmt.Sprint("t", cpu), func(p *sim.Proc) {
			p.Delay(at)
			flags := linux.SpinLockIRQSave(p, l)
			granted = append(granted, cpu)
			p.Delay(100 * sim.Microsecond)
			linux.SpinUnlockIRQRestore(p, l, flags)
		})
	}
	r.run(t)
	return granted
}

// The ticket lock grants in arrival (ticket) order, even to a CPU of the
// other cluster that sees each release a cross-cluster transfer later than
// the waiters beside the owner. The same arrivals under
// test-and-test-and-set are not granted in order for some seed: the setup
// can tell a fair lock from an unfair one.
// Kills: a ticket lock that lets whoever sees the release first in.
func TestTicketFIFO(t *testing.T) {
	order := []int{0, 4, 1, 5, 2, 3}
	unfair := false
	for seed := uint64(1); seed <= 5; seed++ {
		if got := arrivals(t, linux.Ticket, seed, order); !slices.Equal(got, order) {
			t.Errorf("seed %d: ticket grant order %v, want arrival order %v", seed, got, order)
		}
		unfair = unfair || !slices.Equal(arrivals(t, linux.TTAS, seed, order), order)
	}
	if !unfair {
		t.Errorf("test-and-test-and-set granted in arrival order for every seed: the test cannot tell FIFO")
	}
}

// The qspinlock lock word (include/asm-generic/qspinlock_types.h, NR_CPUS
// < 16K): locked byte, pending bit 8, tail index bits 16-17 and tail CPU+1
// bits 18-31.
const (
	qLocked  = 1
	qPending = 1 << 8
)

func qTail(cpu int) uint64 { return uint64(cpu+1) << 18 } // node index 0: task context

// qspinlock: the first waiter sets the pending bit and spins on the lock
// word; later ones queue in the MCS queue, whose head watches the lock word
// and the rest only their own node's line; the lock is granted owner,
// pending, then queue order. cpu0 takes the lock at 0 and holds it 2 ms;
// cpu1-4 arrive 20 us apart (cpu4 in the other cluster). The lock word is
// read after each arrival and the lines each CPU touches are counted from
// 150 us (everyone waiting) to the release.
// Kills: a slow path that always queues (no pending bit at 30 us, cpu1
// touching its node), one that never queues (no tail), queued waiters
// polling the lock word, a wrong tail encoding.
func TestQSpinlockPendingThenMCSQueue(t *testing.T) {
	const hold = 2 * sim.Millisecond
	from := 150 * sim.Microsecond
	checks := []struct {
		at   sim.Time
		word uint64
	}{
		{10 * sim.Microsecond, qLocked},
		{30 * sim.Microsecond, qLocked | qPending},
		{50 * sim.Microsecond, qLocked | qPending | qTail(2)},
		{from, qLocked | qPending | qTail(4)},
	}
	for _, m := range []linux.Mode{linux.WFE, linux.Relax} {
		r := newRig(t, 5, 1, nil)
		l := r.lock(t, linux.QSpinlock, m)
		lockLine := l.Word() / 64
		touched := make([]map[sim.Addr]int, 5)
		for i := range touched {
			touched[i] = map[sim.Addr]int{}
		}
		r.k.Count = func(cpu int, a sim.Addr) {
			if now := r.e.Now(); now >= from && now < hold {
				touched[cpu][a/64]++
			}
		}
		words := make([]uint64, len(checks))
		var granted []int
		for i, c := range r.cores {
			r.e.Spawn(c, fmt.Sprint("t", i), func(p *sim.Proc) {
				p.Delay(sim.Time(i) * 20 * sim.Microsecond)
				flags := linux.SpinLockIRQSave(p, l)
				granted = append(granted, i)
				if i == 0 {
					for j, c := range checks {
						p.Delay(c.at - p.Now())
						words[j] = r.e.Memory().Peek(l.Word())
					}
					p.Delay(hold - p.Now())
				}
				linux.SpinUnlockIRQRestore(p, l, flags)
			})
		}
		r.run(t)
		for j, c := range checks {
			if words[j] != c.word {
				t.Errorf("%v: lock word %#x at %v, want %#x", m, words[j], c.at, c.word)
			}
		}
		if want := []int{0, 1, 2, 3, 4}; !slices.Equal(granted, want) {
			t.Errorf("%v: grant order %v, want %v", m, granted, want)
		}
		// cpu1 (pending) and cpu2 (queue head) watch the lock word; cpu3
		// and cpu4 only their own node.
		for cpu := 1; cpu < len(touched); cpu++ {
			lines := touched[cpu]
			others := len(lines)
			if lines[lockLine] > 0 {
				others--
			}
			if cpu <= 2 && others > 0 || cpu > 2 && (lines[lockLine] > 0 || others > 1) {
				t.Errorf("%v: cpu%d touched lines %v while waiting; lock line %#x", m, cpu, lines, uint64(lockLine))
			}
		}
		// Under WFE the event stream makes the pending waiter re-read the
		// word every 100 us; under Relax one SpinUntil covers the wait.
		if m == linux.WFE && touched[1][lockLine] == 0 {
			t.Errorf("%v: the pending waiter never re-read the lock word", m)
		}
	}
}

// qspinlock: queued MCS waiters cause no coherence traffic on the lock
// word's line. While one CPU holds the lock and the others are queued, the
// lock line's miss count (sim.Memory.Misses) stays where it was however long
// they wait and however many wait: the pending waiter and the queue head
// keep a shared copy and re-read it as L1 hits; the rest watch their own
// node. Hand-offs then cost a bounded number of lock-line transfers per
// acquisition whatever the waiter count, where the ticket lock's grow with
// it: each release makes every waiter re-read the owner field.
// Kills: queued waiters polling the lock word; ticket waiters that do not
// re-read the owner after each release.
func TestMCSQueuedWaitersCauseNoLockLineTraffic(t *testing.T) {
	for _, m := range []linux.Mode{linux.WFE, linux.Relax} {
		for _, n := range []int{4, 6} {
			for _, hold := range []sim.Time{sim.Millisecond, 4 * sim.Millisecond} {
				r := newRig(t, n, 1, nil)
				l := r.lock(t, linux.QSpinlock, m)
				// Every waiter has queued by then (arrivals 20 us apart).
				from := sim.Time(n)*20*sim.Microsecond + 100*sim.Microsecond
				var before, after uint64
				var released sim.Time
				late := 0
				for i, c := range r.cores {
					r.e.Spawn(c, fmt.Sprint("t", i), func(p *sim.Proc) {
						p.Delay(sim.Time(i) * 20 * sim.Microsecond)
						f := linux.LocalIRQSave(p)
						l.Lock(p)
						if i == 0 {
							p.Delay(from)
							before = r.e.Memory().Misses(l.Word())
							p.Delay(hold - from)
							after = r.e.Memory().Misses(l.Word())
							released = p.Now()
						} else if p.Now() > released && released > 0 {
							late++
						}
						l.Unlock(p)
						linux.LocalIRQRestore(p, f)
					})
				}
				r.run(t)
				if late != n-1 {
					t.Fatalf("%v n=%d: %d of %d waiters acquired after the release; all should have waited", m, n, late, n-1)
				}
				if after != before || before == 0 {
					t.Errorf("%v n=%d hold %v: lock-line misses %d at %v, %d at release; want no growth while queued", m, n, hold, before, from, after)
				}
			}
		}
	}
	perAcq := func(f linux.Flavour, n int) float64 {
		r := newRig(t, n, 2, nil)
		l := r.lock(t, f, linux.WFE)
		const iters = 200
		for i, c := range r.cores {
			r.e.Spawn(c, fmt.Sprint("t", i), func(p *sim.Proc) {
				for range iters {
					fl := linux.LocalIRQSave(p)
					l.Lock(p)
					p.Delay(2 * sim.Microsecond)
					l.Unlock(p)
					linux.LocalIRQRestore(p, fl)
					p.Delay(500 * sim.Nanosecond)
				}
			})
		}
		r.run(t)
		return float64(r.e.Memory().Misses(l.Word())) / float64(n*iters)
	}
	// From 3 CPUs on the qspinlock queues (one owner, one pending, the
	// rest in the MCS queue); the ticket lock has 1 and 4 waiters.
	q3, q6 := perAcq(linux.QSpinlock, 3), perAcq(linux.QSpinlock, 6)
	t3, t6 := perAcq(linux.Ticket, 3), perAcq(linux.Ticket, 6)
	t.Logf("lock-line misses per acquisition: qspinlock %.2f (3 cpus) %.2f (6 cpus); ticket %.2f / %.2f", q3, q6, t3, t6)
	if q6 > q3*1.05 {
		t.Errorf("qspinlock lock-line misses per acquisition grew from %.2f (3 cpus) to %.2f (6 cpus); want flat", q3, q6)
	}
	// Ticket: 3 more waiters each re-read the line after every release.
	if t6 < t3+2.5 {
		t.Errorf("ticket lock-line misses per acquisition %.2f (3 cpus) -> %.2f (6 cpus); want about 3 more (waiters re-read per release)", t3, t6)
	}
}

// A lock an interrupt handler takes must be taken with spin_lock_irqsave
// (the article's 4.1). With plain spin_lock the handler interrupts the
// holder on its own CPU and waits for a lock that CPU can never release:
// the run ends in a sim.DeadlockError naming the handler, the lock and the
// holder. With spin_lock_irqsave the interrupt waits until the unlock, and
// the run completes. cpu0 holds the lock 150 us of every 200 us; a periodic
// device on cpu0 fires every 100 us and takes the same lock.
// Kills: ownedLock not recording the owner, or checking another CPU's.
func TestIRQSaveRequiredInInterruptContext(t *testing.T) {
	for _, irqsave := range []bool{true, false} {
		t.Run(fmt.Sprint("irqsave=", irqsave), func(t *testing.T) {
			r := newRig(t, 2, 1, nil)
			l := r.lock(t, linux.QSpinlock, linux.WFE)
			handled := 0
			if _, err := r.k.Device("dev", 0, linux.IRQDevice, 100*sim.Microsecond, false, func(p *sim.Proc, _ sim.IRQ) {
				flags := linux.SpinLockIRQSave(p, l)
				handled++
				linux.SpinUnlockIRQRestore(p, l, flags)
			}); err != nil {
				t.Fatal(err)
			}
			r.e.Spawn(r.cores[0], "holder", func(p *sim.Proc) {
				for range 10 {
					flags := lockIRQ(p, l, irqsave)
					p.Delay(150 * sim.Microsecond)
					unlockIRQ(p, l, flags)
					p.Delay(50 * sim.Microsecond)
				}
			})
			err := r.e.Run(context.Background())
			var dl *sim.DeadlockError
			if irqsave {
				if err != nil || handled == 0 {
					t.Fatalf("with irqsave: error %v, %d interrupts handled; want none, > 0", err, handled)
				}
				return
			}
			if !errors.As(err, &dl) || len(dl.Waiters) != 1 || dl.Waiters[0].Core != 0 ||
				dl.Waiters[0].Proc != "the interrupt handler interrupting holder" || !strings.Contains(dl.Waiters[0].On, "held by holder on the same CPU") {
				t.Fatalf("without irqsave: error %v; want a deadlock of cpu0's handler on the lock held by holder", err)
			}
			if handled != 0 || dl.At < 100*sim.Microsecond || dl.At > 110*sim.Microsecond {
				t.Errorf("deadlock at %v after %d interrupts handled; want at the first interrupt (100 us), none handled", dl.At, handled)
			}
			// The time is said once: the report gives it.
			if want := "holder on core 0: deadlock at "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q, want it to start %q", err, want)
			}
		})
	}
}

// A handler that interrupts a task waiting for a fair lock (qspinlock,
// ticket) and takes the same lock queues behind it: the lock is served to
// the task first, which cannot run until the handler returns. An unfair
// test-and-set lock has no queue: the handler may take it first, and the
// run completes. cpu1 holds the lock from 0 to 300 us; cpu0's task asks at
// 50 us with plain spin_lock; cpu0's device fires at 100 us.
// Kills: ownedLock not tracking queued contexts, or tracking them on
// unfair locks.
func TestHandlerQueuedBehindItsTaskDeadlocks(t *testing.T) {
	for _, f := range linux.Flavours {
		t.Run(string(f), func(t *testing.T) {
			r := newRig(t, 2, 1, nil)
			l := r.lock(t, f, linux.WFE)
			if _, err := r.k.Device("dev", 0, linux.IRQDevice, 100*sim.Microsecond, false, func(p *sim.Proc, _ sim.IRQ) {
				if p.Now() < 200*sim.Microsecond {
					linux.SpinUnlockIRQRestore(p, l, linux.SpinLockIRQSave(p, l))
				}
			}); err != nil {
				t.Fatal(err)
			}
			r.e.Spawn(r.cores[1], "holder", func(p *sim.Proc) {
				flags := linux.SpinLockIRQSave(p, l)
				p.Delay(300 * sim.Microsecond)
				linux.SpinUnlockIRQRestore(p, l, flags)
			})
			r.e.Spawn(r.cores[0], "task", func(p *sim.Proc) {
				p.Delay(50 * sim.Microsecond)
				l.Lock(p)
				l.Unlock(p)
			})
			err := r.e.Run(context.Background())
			var dl *sim.DeadlockError
			fair := f != linux.TAS && f != linux.TTAS
			switch {
			case fair && (!errors.As(err, &dl) || !strings.Contains(dl.Waiters[0].On, "queued for by task")):
				t.Errorf("error %v; want a deadlock of cpu0's handler queued behind task", err)
			case !fair && err != nil:
				t.Errorf("error %v; want none (an unfair lock lets the handler in first)", err)
			}
		})
	}
}

// Two threads taking two spinlocks in opposite order never get the second;
// what the engine reports them waiting on (a deadlock's or a runaway's
// waiters) names the lock by flavour and order, spinning (cpu_relax) or
// in WFE watching the lock's line. The tick keeps the run going, so it ends
// at the time limit.
func TestCrossedSpinlocksNamed(t *testing.T) {
	for _, tc := range []struct {
		mode linux.Mode
		want [2]string
	}{
		{linux.Relax, [2]string{"thread0 (core 0) waits on spin on qspinlock #2 (0x", "thread1 (core 1) waits on spin on qspinlock #1 (0x"}},
		{linux.WFE, [2]string{"of qspinlock #2)", "of qspinlock #1)"}},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			r := newRig(t, 2, 1, func(s *generic.SoC, _ *linux.Config) { s.EventStream = 0 })
			r.e.Until = sim.Millisecond
			a, b := r.lock(t, linux.QSpinlock, tc.mode), r.lock(t, linux.QSpinlock, tc.mode)
			for i, order := range [][2]linux.Spinlock{{a, b}, {b, a}} {
				r.e.Spawn(r.cores[i], fmt.Sprint("thread", i), func(p *sim.Proc) {
					f := linux.SpinLockIRQSave(p, order[0])
					p.Delay(5 * sim.Microsecond)
					linux.SpinUnlockIRQRestore(p, order[1], linux.SpinLockIRQSave(p, order[1]))
					linux.SpinUnlockIRQRestore(p, order[0], f)
				})
			}
			if err := r.e.Run(context.Background()); err != nil || r.e.StopReason() != "time limit" {
				t.Fatalf("error %v, stop %q; want the time limit", err, r.e.StopReason())
			}
			report := r.e.Waiters().String()
			for _, want := range tc.want {
				if !strings.Contains(report, want) {
					t.Errorf("waiters %q do not say %q", report, want)
				}
			}
		})
	}
}

// An uncontended acquisition of a lock whose line another CPU last wrote
// costs one line transfer: every flavour's atomic is an LL/SC loop that
// first prefetches the line for writing (prfm pstl1strm; arm32's ticket
// lock, prefetchw), so its LDXR and STXR then hit. Without the prefetch the
// LDXR would take the line shared and the STXR take it again: two.
func TestUncontendedAcquireIsOneTransfer(t *testing.T) {
	for _, f := range linux.Flavours {
		t.Run(string(f), func(t *testing.T) {
			r := newRig(t, 2, 1, nil)
			l := r.lock(t, f, linux.WFE)
			var took sim.Time
			r.e.Spawn(r.cores[0], "first", func(p *sim.Proc) {
				l.Lock(p)
				l.Unlock(p)
			})
			r.e.Spawn(r.cores[1], "second", func(p *sim.Proc) {
				p.Delay(10 * sim.Microsecond)
				start := p.Now()
				l.Lock(p)
				took = p.Now() - start
				l.Unlock(p)
			})
			r.run(t)
			if want := sameCluster + 2*hitCycles*cycle; took != want {
				t.Errorf("the acquisition took %v, want %v: one line transfer, then the LDXR and STXR hits", took, want)
			}
		})
	}
}
