package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// condLoop is smp_cond_load_acquire as the loop Linux's arm64 code runs it
// under policy w (w.OnAccess counts the accesses): load and test, poll
// w.Polls times with w.RelaxCycles between, then sevl; wfe; ldxr and a WFE
// (WFET with a timeout) if the word is unchanged, or without a monitor a
// plain WFE. With settle, CondWait runs it.
func condLoop(p *Proc, a Addr, cond func(uint64) bool, w WaitPolicy, settle bool) uint64 {
	if settle {
		return p.CondWait(a, cond, w)
	}
	sleep := func() {
		if w.Timeout > 0 {
			p.WFET(p.Now() + w.Timeout)
			return
		}
		p.WFE()
	}
	for iter := 0; ; iter++ {
		w.OnAccess()
		v := p.Load(a)
		if cond(v) {
			return v
		}
		switch {
		case iter < w.Polls:
			p.Relax(w.RelaxCycles)
		case !w.Monitor:
			sleep()
		default:
			p.SEVL()
			p.WFE()
			w.OnAccess()
			if p.LoadExclusive(a) == v {
				sleep()
			}
		}
	}
}

// condRun runs a ticket lock on four cores whose waiters wait with
// condLoop (settled or not; every wait through Run with viaRun) and
// describes the run: its digest, events,
// end, every core's count of accesses, the result, and the wake-ups
// settled without a switch.
func condRun(t *testing.T, w WaitPolicy, irqs, stream, settle, viaRun bool) (string, uint64) {
	t.Helper()
	r := newRig(t, 4, false, func(c *CoreConfig) {
		if stream {
			c.EventStream, c.EventPhase = 10*Microsecond, Time(c.Cluster)*3*Microsecond
		}
	})
	r.e.direct = !viaRun
	defer r.e.Close()
	const (
		next  = ramBase       // next ticket
		owner = ramBase + 64  // ticket served, on its own line
		count = ramBase + 128 // the protected counter
	)
	accesses := make([]int, 4)
	for _, c := range r.e.Cores() {
		r.e.Spawn(c, fmt.Sprintf("w%d", c.ID), func(p *Proc) {
			for i := range 40 {
				me := p.FetchAdd(next, 1)
				w := w
				w.OnAccess = func() { accesses[p.Core().ID]++ }
				condLoop(p, owner, func(v uint64) bool { return v == me }, w, settle)
				p.Store(count, p.Load(count)+1)
				p.Compute(int64(200 + 70*c.ID))
				p.Store(owner, me+1)
				if !w.Monitor {
					p.SEV()
				}
				p.Compute(int64(100 + 31*(i%5)))
			}
		})
		if irqs {
			c.SetHandler(func(p *Proc, irq IRQ) { p.Compute(40) })
			if _, err := c.NewDevice(fmt.Sprintf("dev%d", c.ID), 1, 3*Microsecond, true); err != nil {
				t.Fatal(err)
			}
		}
	}
	err := r.e.Run(context.Background())
	return fmt.Sprintf("digest %x events %d now %v err %v accesses %v counter %d",
		digest(r.e), r.e.Events(), r.e.Now(), err, accesses, r.m.Peek(count)), r.e.settled
}

// CondWait gives the run the loop it stands for gives, bit for bit: with
// and without the exclusive monitor, polls first, WFET's timeout,
// interrupts and the event stream, its steps run from waiting processes
// (Proc.await) or Run. And it does settle wake-ups without a switch.
func TestCondWaitMatchesExplicitLoop(t *testing.T) {
	for _, tc := range []struct {
		name         string
		w            WaitPolicy
		irqs, stream bool
		viaRun       bool
	}{
		{name: "monitor", w: WaitPolicy{Monitor: true}},
		{name: "monitor-wfet", w: WaitPolicy{Monitor: true, Timeout: 700 * Nanosecond}},
		{name: "monitor-irqs-stream", w: WaitPolicy{Monitor: true}, irqs: true, stream: true},
		{name: "monitor-irqs-through-run", w: WaitPolicy{Monitor: true}, irqs: true, viaRun: true},
		{name: "polls-monitor-irqs", w: WaitPolicy{Polls: 6, RelaxCycles: 45, Monitor: true}, irqs: true},
		{name: "polls-irqs-through-run", w: WaitPolicy{Polls: 3, RelaxCycles: 150, Monitor: true}, irqs: true, viaRun: true},
		{name: "sev", w: WaitPolicy{}},
		{name: "sev-irqs-wfet", w: WaitPolicy{Timeout: 2 * Microsecond}, irqs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loop, _ := condRun(t, tc.w, tc.irqs, tc.stream, false, false)
			settled, n := condRun(t, tc.w, tc.irqs, tc.stream, true, tc.viaRun)
			if settled != loop {
				t.Errorf("CondWait:\n%s\nexplicit loop:\n%s", settled, loop)
			}
			if n == 0 {
				t.Errorf("no wake-up settled without a switch: the test proves nothing")
			}
		})
	}
}

// A test that counts its calls (a bounded wait, as qspinlock's wait for a
// pending hand-over gives up after so many) is called once per poll: the
// polls CondWait runs at once (no event can come between them) end where
// the loop's would, and the run is the loop's.
func TestCondWaitBoundedTest(t *testing.T) {
	run := func(settle bool) string {
		r := newRig(t, 3, false, nil)
		defer r.e.Close()
		const flag = ramBase
		var gaveUp, saw []Time
		for _, c := range r.e.Cores()[1:] {
			r.e.Spawn(c, fmt.Sprintf("w%d", c.ID), func(p *Proc) {
				for i := range 30 {
					tests := 0
					v := condLoop(p, flag, func(v uint64) bool {
						tests++
						return v == uint64(i+1) || tests > 25+c.ID
					}, WaitPolicy{Polls: 40, RelaxCycles: 12, Monitor: true, OnAccess: func() {}}, settle)
					if v == uint64(i+1) {
						saw = append(saw, p.Now())
					} else {
						gaveUp = append(gaveUp, p.Now())
					}
					p.Compute(50)
				}
			})
		}
		r.e.Spawn(r.e.Cores()[0], "setter", func(p *Proc) {
			for i := range 30 {
				p.Compute(int64(300 + 400*(i%3)))
				p.Store(flag, uint64(i+1))
			}
		})
		err := r.e.Run(context.Background())
		return fmt.Sprintf("digest %x events %d now %v err %v saw %v gave up %v", digest(r.e), r.e.Events(), r.e.Now(), err, saw, gaveUp)
	}
	loop, settled := run(false), run(true)
	if settled != loop {
		t.Errorf("CondWait:\n%s\nexplicit loop:\n%s", settled, loop)
	}
	if !strings.Contains(loop, "gave up [") || strings.Contains(loop, "gave up []") || strings.Contains(loop, "saw []") {
		t.Errorf("the waits should both give up and see the flag: %s", loop)
	}
}

// lockLoop takes the lock word at a (0 free, 1 taken) as Linux's
// test-and-set baselines do: LL/SC attempts (a swap, or with ttas a claim
// only of a free word) and between them a pause (w.Polls busy-waits, then
// WFE or WFET) or, with ttas, a wait for the word to look free. With
// prefetch each attempt begins with PrefetchStore. onStore runs after each
// store. With settle, Acquire runs the loop. It returns the failed attempts.
func lockLoop(p *Proc, a Addr, ttas, prefetch bool, w WaitPolicy, onStore func(), settle bool) int {
	op := func(uint64) (uint64, bool) { return 1, true }
	free := func(v uint64) bool { return v == 0 }
	if ttas {
		op = func(v uint64) (uint64, bool) { return 1, v == 0 }
	}
	if settle {
		l := AcquireLoop{Op: op, Taken: free, Wait: w, OnStore: onStore, Prefetch: prefetch}
		if ttas {
			l.Test = free
		}
		_, failed := p.Acquire(a, l)
		return failed
	}
	for iter := 0; ; iter++ {
		var old uint64
		if prefetch {
			p.PrefetchStore(a)
		}
		for {
			w.OnAccess()
			old = p.LoadExclusive(a)
			nv, ok := op(old)
			if !ok {
				break
			}
			if p.StoreExclusive(a, nv) {
				onStore()
				break
			}
		}
		switch {
		case old == 0:
			return iter
		case ttas:
			condLoop(p, a, free, w, false)
		case iter < w.Polls:
			p.Relax(w.RelaxCycles)
		case w.Timeout > 0:
			p.WFET(p.Now() + w.Timeout)
		default:
			p.WFE()
		}
	}
}

// Acquire gives the run the loop it stands for gives, bit for bit, for
// test-and-set and test-and-test-and-set on four cores: pauses that poll,
// sleep in WFE or WFET, with interrupts and the event stream, its steps run
// from waiting processes or Run. Mutual exclusion holds, and wake-ups are
// settled without a switch.
func TestAcquireMatchesExplicitLoop(t *testing.T) {
	for _, tc := range []struct {
		name           string
		ttas, prefetch bool
		w              WaitPolicy
		irqs, stream   bool
		viaRun         bool
		loss           bool // Coherence.MonitorLoss
	}{
		{name: "tas-wfe", w: WaitPolicy{}},
		{name: "tas-polls-irqs-stream", w: WaitPolicy{Polls: 5, RelaxCycles: 30}, irqs: true, stream: true},
		{name: "tas-wfet-through-run", w: WaitPolicy{Timeout: 900 * Nanosecond}, irqs: true, viaRun: true},
		{name: "ttas-wfe", ttas: true, w: WaitPolicy{Monitor: true}},
		{name: "ttas-polls-irqs", ttas: true, w: WaitPolicy{Polls: 8, RelaxCycles: 20, Monitor: true}, irqs: true},
		{name: "ttas-wfet-stream-through-run", ttas: true, w: WaitPolicy{Monitor: true, Timeout: 1500 * Nanosecond}, stream: true, viaRun: true},
		{name: "tas-prefetch-polls-irqs-stream", prefetch: true, w: WaitPolicy{Polls: 5, RelaxCycles: 30}, irqs: true, stream: true},
		{name: "tas-prefetch-wfet-through-run", prefetch: true, w: WaitPolicy{Timeout: 900 * Nanosecond}, irqs: true, viaRun: true},
		{name: "ttas-prefetch-polls-irqs", ttas: true, prefetch: true, w: WaitPolicy{Polls: 8, RelaxCycles: 20, Monitor: true}, irqs: true},
		{name: "ttas-prefetch-wfe-loss", ttas: true, prefetch: true, w: WaitPolicy{Monitor: true}, loss: true},
		{name: "ttas-prefetch-polls-irqs-stream-loss", ttas: true, prefetch: true, w: WaitPolicy{Polls: 8, RelaxCycles: 20, Monitor: true}, irqs: true, stream: true, loss: true},
		{name: "tas-prefetch-wfet-through-run-loss", prefetch: true, w: WaitPolicy{Timeout: 900 * Nanosecond}, irqs: true, viaRun: true, loss: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(settle, viaRun bool) (string, uint64) {
				r := newRigCoherence(t, 4, false, func(c *CoreConfig) {
					if tc.stream {
						c.EventStream, c.EventPhase = 10*Microsecond, Time(c.Cluster)*3*Microsecond
					}
				}, Coherence{LineSize: 64, SameCluster: sameLat, OtherCluster: otherLat, MonitorLoss: tc.loss})
				r.e.direct = !viaRun
				defer r.e.Close()
				const lock, count = ramBase, ramBase + 128
				accesses, stores, failed := make([]int, 4), make([]int, 4), make([]int, 4)
				holders, most := 0, 0
				for _, c := range r.e.Cores() {
					r.e.Spawn(c, fmt.Sprintf("w%d", c.ID), func(p *Proc) {
						for i := range 30 {
							w := tc.w
							w.OnAccess = func() { accesses[p.Core().ID]++ }
							failed[c.ID] += lockLoop(p, lock, tc.ttas, tc.prefetch, w, func() { stores[p.Core().ID]++ }, settle)
							holders++
							most = max(most, holders)
							p.Store(count, p.Load(count)+1)
							p.Compute(int64(150 + 60*c.ID))
							holders--
							p.Store(lock, 0)
							p.SEV()
							p.Compute(int64(80 + 29*(i%4)))
						}
					})
					if tc.irqs {
						c.SetHandler(func(p *Proc, irq IRQ) { p.Compute(40) })
						if _, err := c.NewDevice(fmt.Sprintf("dev%d", c.ID), 1, 2*Microsecond, true); err != nil {
							t.Fatal(err)
						}
					}
				}
				err := r.e.Run(context.Background())
				return fmt.Sprintf("digest %x events %d now %v err %v accesses %v stores %v failed %v counter %d most holders %d",
					digest(r.e), r.e.Events(), r.e.Now(), err, accesses, stores, failed, r.m.Peek(count), most), r.e.settled
			}
			loop, _ := run(false, false)
			settled, n := run(true, tc.viaRun)
			if settled != loop {
				t.Errorf("Acquire:\n%s\nexplicit loop:\n%s", settled, loop)
			}
			if !strings.Contains(loop, "counter 120 most holders 1") {
				t.Errorf("mutual exclusion: %s", loop)
			}
			if n == 0 {
				t.Errorf("no wake-up settled without a switch: the test proves nothing")
			}
		})
	}
}

// A poll's pause is a busy-wait, drawn at spin power like SpinUntil's
// polls: a waiter that polls until a store 5 us later spends that time
// spinning, with CondWait, Acquire's pauses and an explicit Relax loop
// alike; Compute stays executing. (CondWait's pauses once drew executing
// power, so adaptive waiting cost more than the busy-wait it replaces.)
func TestPollPausesSpin(t *testing.T) {
	for _, settle := range []bool{false, true} {
		r := newRig(t, 2, false, nil)
		const flag = ramBase
		r.e.Spawn(r.e.Cores()[1], "waiter", func(p *Proc) {
			condLoop(p, flag, func(v uint64) bool { return v == 1 }, WaitPolicy{Polls: 1_000_000, RelaxCycles: 10, OnAccess: func() {}}, settle)
			p.Compute(1000)
		})
		r.e.Spawn(r.e.Cores()[0], "setter", func(p *Proc) {
			p.Compute(5000)
			p.Store(flag, 1)
		})
		if err := r.e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		c := r.e.Cores()[1]
		spin, exec := c.Residency(StateSpin), c.Residency(StateExec)
		if spin < 4900*Nanosecond || spin > 5200*Nanosecond || exec < 1000*Nanosecond || exec > 1200*Nanosecond {
			t.Errorf("settle %v: spin %v, exec %v; want about 5 us of polling spinning and the 1 us of Compute executing", settle, spin, exec)
		}
		r.e.Close()
	}
}
