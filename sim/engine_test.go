package sim

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// workload runs a random mix of locks, atomics, interrupts, WFE waits and
// sleeps on four cores, cached or not, and returns the engine after the run.
func workload(t testing.TB, seed uint64, uncached bool) *Engine {
	t.Helper()
	r := newRig(t, 4, uncached, func(c *CoreConfig) { c.EventStream = 20 * Microsecond })
	r.e.seed = seed
	locks := [2]Addr{ramBase, ramBase + 64}
	rnd := r.e.Stream("test/workload")
	type step struct {
		lock       Addr
		hold, rest int64
		read       Addr
	}
	for _, c := range r.e.Cores() {
		c.SetHandler(func(p *Proc, irq IRQ) {
			prev := p.Mask(9)
			p.FetchAdd(ramBase+256, 1)
			p.Compute(200)
			p.Restore(prev)
		})
		c.NewTimer(1).Periodic(100*Microsecond, Time(c.ID)*7*Microsecond)
		if _, err := c.NewDevice(fmt.Sprintf("dev%d", c.ID), 2, 37*Microsecond, true); err != nil {
			t.Fatal(err)
		}
		var steps []step
		for i := 0; i < 6; i++ {
			st := step{lock: locks[rnd.IntN(2)]}
			st.hold, st.rest = int64(rnd.IntN(300)), int64(rnd.IntN(2000))
			st.read = ramBase + 512 + Addr(8*rnd.IntN(16))
			steps = append(steps, st)
		}
		me := uint64(c.ID + 1)
		r.e.Spawn(c, fmt.Sprintf("t%d", c.ID), func(p *Proc) {
			for range 40 {
				for _, st := range steps {
					spinLock(p, st.lock, 12, me)
					p.FetchAdd(ramBase+128, 1)
					p.Compute(st.hold)
					p.Store(st.lock, 0)
					p.Compute(st.rest)
					p.Load(st.read)
				}
			}
			p.Sleep(5 * Microsecond)
			p.SEVL()
			p.WFE()
			p.WFE()
		})
	}
	if err := r.e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.m.Peek(ramBase + 128); got != 4*40*6 {
		t.Fatalf("counter %d, want %d: mutual exclusion broken", got, 4*40*6)
	}
	return r.e
}

// Per core, the time in all states adds up to the elapsed time, and the
// energy is the sum of power times residency.
func TestConservation(t *testing.T) {
	for _, uncached := range []bool{false, true} {
		e := workload(t, 3, uncached)
		for _, c := range e.Cores() {
			var sum Time
			var mj float64
			for s := 0; s < c.States(); s++ {
				sum += c.Residency(State(s))
				mj += c.PowerMW(State(s)) * c.Residency(State(s)).Seconds()
			}
			if sum != e.Now() {
				t.Errorf("core %d: states sum to %v, elapsed %v", c.ID, sum, e.Now())
			}
			if got := c.EnergyMJ(); got != mj || got <= 0 {
				t.Errorf("core %d: energy %g mJ, sum of power x residency %g", c.ID, got, mj)
			}
			if c.IRQsTaken == 0 || c.Residency(StateSpin) == 0 && c.Residency(StateWFE) == 0 {
				t.Errorf("core %d: workload too tame: %d irqs, spin %v", c.ID, c.IRQsTaken, c.Residency(StateSpin))
			}
		}
	}
}

// Simulated time never goes back: every event fires at or after the
// previous one, and scheduling in the past panics.
func TestTimeMonotonic(t *testing.T) {
	e := NewEngine(1)
	var last Time
	r := e.Stream("x")
	var evs []*Event
	for i := 0; i < 100; i++ {
		var ev *Event
		n := 0
		ev = NewEvent(func() {
			if e.Now() < last {
				t.Fatalf("time went back from %v to %v", last, e.Now())
			}
			last = e.Now()
			if n++; n < 100 {
				e.After(Time(r.IntN(1000)), ev)
			}
		}, false)
		evs = append(evs, ev)
		e.At(Time(r.IntN(1000)), ev)
	}
	for e.Step() {
	}
	if e.Events() != 100*100 {
		t.Fatalf("dispatched %d events, want 10000", e.Events())
	}
	defer func() {
		if recover() == nil {
			t.Fatal("scheduling in the past did not panic")
		}
	}()
	e.At(e.Now()-1, evs[0])
}

// digest summarizes everything a run measured.
func digest(e *Engine) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, e.Now(), e.Events())
	for _, c := range e.Cores() {
		for s := 0; s < c.States(); s++ {
			fmt.Fprint(h, c.Residency(State(s)))
		}
		fmt.Fprint(h, c.Stall, c.Wakeups, c.IRQsTaken, *c.IRQLatency(1), *c.IRQLatency(2))
	}
	return h.Sum64()
}

// Same seed, same result, bit for bit, whatever GOMAXPROCS; another seed
// gives another run.
func TestDeterminism(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var got []uint64
	for _, procs := range []int{1, 2, 1, 2} {
		runtime.GOMAXPROCS(procs)
		got = append(got, digest(workload(t, 11, false)))
	}
	for i := range got {
		if got[i] != got[0] {
			t.Fatalf("digests differ across runs/GOMAXPROCS: %x", got)
		}
	}
	if digest(workload(t, 12, false)) == got[0] {
		t.Fatal("a different seed gave the same run")
	}
}

// Random streams depend on the seed and the component's name only.
func TestStreamsIndependent(t *testing.T) {
	a := NewEngine(5)
	b := NewEngine(5)
	b.Stream("another component").Uint64()
	if a.Stream("dev").Uint64() != b.Stream("dev").Uint64() {
		t.Fatal("creating another stream shifted a component's numbers")
	}
}

func TestBadInput(t *testing.T) {
	e := NewEngine(1)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"zero frequency", second(e.AddCore(CoreConfig{Name: "c0", Hz: 0})), "Hz = 0"},
		{"negative frequency", second(e.AddCore(CoreConfig{Name: "c0", Hz: -5})), "Hz = -5"},
		{"negative power", second(e.AddCore(CoreConfig{Name: "c0", Hz: 1, WFIMW: -1})), "power -1"},
		{"line size", second(e.NewMemory(Coherence{LineSize: 48})), "LineSize = 48"},
		{"event stream", second(e.AddCore(CoreConfig{Name: "c0", Hz: 1, EventStream: -1})), "EventStream"},
		{"faults", e.SetFaults(Faults{LoseWake: 2}), "LoseWake = 2"},
		{"no cores", e.Run(context.Background()), "cores: 0"},
		{"timer period", newRig(t, 1, false, nil).e.Cores()[0].NewTimer(1).Periodic(0, 0), "period = 0"},
		{"device", second(newRig(t, 1, false, nil).e.Cores()[0].NewDevice("uart", 1, -1, false)), `device "uart": mean period = -0.001ns`},
		{"device line", second(newRig(t, 1, false, nil).e.Cores()[0].NewDevice("uart", IRQLines, Microsecond, false)), `device "uart": irq = 64 out of range 0..63`},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.name, tc.err, tc.want)
		}
	}
	r := newRig(t, 1, false, nil)
	if err := r.m.AddRegion(Region{Name: "overlap", Base: ramBase + 64, Size: 64}); err == nil || !strings.Contains(err.Error(), `overlaps region "ram"`) {
		t.Errorf("overlapping region: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// Fail ends the run at once with the error, naming the process, its core
// and the time; the process runs no further.
func TestFail(t *testing.T) {
	r := newRig(t, 1, false, nil)
	bad := errors.New("unlock of a lock it does not hold")
	after := false
	r.e.Spawn(r.e.Cores()[0], "t", func(p *Proc) {
		p.Delay(Microsecond)
		p.Fail(bad)
		after = true
	})
	err := r.e.Run(context.Background())
	if !errors.Is(err, bad) || !strings.Contains(err.Error(), "t on core 0 at 1us: ") || after {
		t.Fatalf("got %v (ran on after Fail: %v), want %q wrapped with the process, core and time", err, after, bad)
	}
	r.e.Close()
}

// A workload's access outside memory, or not word-aligned, fails its run
// with an *AddrError naming the process, its core and the time, while
// another process goes on; it used to panic the program, and every other
// run in it with it.
func TestBadAddressFailsTheRun(t *testing.T) {
	for _, tc := range []struct {
		addr Addr
		want string
	}{{0x9000, "address 0x9000: in no memory region"}, {ramBase + 4, "address 0x1004: not aligned to an 8-byte word"}} {
		r := newRig(t, 2, false, nil)
		after := false
		r.e.Spawn(r.e.Cores()[0], "w", func(p *Proc) {
			p.Delay(Microsecond)
			p.Store(tc.addr, 1)
			after = true
		})
		r.e.Spawn(r.e.Cores()[1], "other", func(p *Proc) { p.Delay(Millisecond) })
		err := r.e.Run(context.Background())
		var ae *AddrError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), "w on core 0 at 1us: "+tc.want) || after {
			t.Errorf("store to %#x: got %v (ran on: %v), want an *AddrError containing %q", uint64(tc.addr), err, after, tc.want)
		}
		r.e.Close()
	}
}

// A negative duration or cycle count (a deadline already passed, a cost
// computed as a difference) ends the run with an error naming the call and
// the value, where it used to pass silently (Delay, Sleep and Compute did
// nothing) or panic (SendIPI scheduled in the past).
func TestNegativeDurations(t *testing.T) {
	deadline := Microsecond
	for _, tc := range []struct {
		want string
		call func(p *Proc)
	}{
		{"Delay(-2us)", func(p *Proc) { p.Delay(deadline - p.Now()) }},
		{"Sleep(-2us)", func(p *Proc) { p.Sleep(deadline - p.Now()) }},
		{"Compute(-5 cycles)", func(p *Proc) { p.Compute(-5) }},
		{"Relax(-5 cycles)", func(p *Proc) { p.Relax(-5) }},
		{"SendIPI(-1ns)", func(p *Proc) { p.SendIPI(p.Core(), 1, -Nanosecond) }},
		{"spin loop(-3 cycles)", func(p *Proc) { p.SpinUntil(ramBase, -3, func(v uint64) bool { return v == 1 }) }},
	} {
		t.Run(tc.want, func(t *testing.T) {
			r := newRig(t, 1, true, nil)
			after := false
			r.e.Spawn(r.e.Cores()[0], "t", func(p *Proc) {
				p.Delay(3 * Microsecond)
				tc.call(p)
				after = true
			})
			err := r.e.Run(context.Background())
			if want := "t on core 0 at 3us: " + tc.want + ": negative duration"; err == nil || !strings.Contains(err.Error(), want) || after {
				t.Fatalf("got %v (ran on: %v), want an error containing %q", err, after, want)
			}
			r.e.Close()
		})
	}
}

// Two processes taking two locks in opposite order deadlock; the report
// names both and what each waits on: the word's address, and its name when
// the platform gave it one.
func TestDeadlockReported(t *testing.T) {
	for _, tc := range []struct {
		name  string
		named bool
		want  []string
	}{
		{"unnamed", false, []string{"task0 (core 0) waits on spin on 0x1040 (value 2)", "task1 (core 1) waits on spin on 0x1000 (value 1)"}},
		{"named", true, []string{"task0 (core 0) waits on spin on lockB (0x1040, value 2)", "task1 (core 1) waits on spin on lockA (0x1000, value 1)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 2, false, nil)
			if tc.named {
				r.m.Name(ramBase+64, 8, "lockB")
				r.m.Name(ramBase, 8, "lockA")
			}
			for i, order := range [][2]Addr{{ramBase, ramBase + 64}, {ramBase + 64, ramBase}} {
				r.e.Spawn(r.e.Cores()[i], fmt.Sprintf("task%d", i), func(p *Proc) {
					me := uint64(i + 1)
					spinLock(p, order[0], 10, me)
					p.Compute(1000)
					spinLock(p, order[1], 10, me)
				})
			}
			err := r.e.Run(context.Background())
			var dl *DeadlockError
			if !errors.As(err, &dl) || len(dl.Waiters) != 2 {
				t.Fatalf("got %v, want a deadlock with two waiters", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%v\nwant it to say %q", err, want)
				}
			}
		})
	}
}

// Crossed locks taken with LDXR/WFE under the architected timer's event
// stream: the stream wakes both waiters every period, and each goes back
// to WFE, changing nothing. That livelock is reported as a deadlock from
// the time of the last change, with both waiters: at the time limit
// instead of results, and without limits soon after, instead of running
// until the context gives up. A waiter that the stream wakes while the
// holder computes is no livelock.
func TestLivelockReported(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cross bool
		until Time
	}{{"crossed, time limit", true, Second}, {"crossed, no limit", true, 0}, {"one lock", false, Second}} {
		r := newRig(t, 2, false, func(c *CoreConfig) { c.EventStream = 10 * Microsecond })
		r.e.Until = tc.until
		take := func(p *Proc, a Addr, me uint64) {
			for p.LoadExclusive(a) != 0 || !p.StoreExclusive(a, me) {
				p.WFE()
			}
		}
		for i, order := range [][2]Addr{{ramBase, ramBase + 64}, {ramBase + 64, ramBase}} {
			r.e.Spawn(r.e.Cores()[i], fmt.Sprintf("task%d", i), func(p *Proc) {
				me := uint64(i + 1)
				if !tc.cross {
					order = [2]Addr{ramBase, ramBase + 128}
				}
				take(p, order[0], me)
				p.Compute(1000)
				take(p, order[1], me)
				p.Compute(100_000) // 100 us held: the other waits, woken by the stream
				p.Store(order[1], 0)
				p.Store(order[0], 0)
			})
		}
		// A safety net, not a speed check: without the report the
		// unlimited run would go on until the context gives up.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := r.e.Run(ctx)
		cancel()
		var dl *DeadlockError
		if !tc.cross {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.As(err, &dl) || len(dl.Waiters) != 2 || dl.At > 2*Microsecond || dl.Stalled < stallAfter {
			t.Fatalf("%s: got %v at %v, want a deadlock from the second takes (about 1 us) with two waiters", tc.name, err, r.e.Now())
		}
		if !strings.Contains(err.Error(), "task0 (core 0) waits on an event in WFE") || !strings.Contains(err.Error(), "however often they were woken") {
			t.Errorf("%s: %v\nwant it to say who waits and that waking them changed nothing", tc.name, err)
		}
	}
}

// Crossed test-and-set locks taken with Swap in a hand-written loop that
// says what it waits on: every failed Swap stores the 1 that was there, so
// nothing changes, and the run ends in a deadlock naming both waits
// instead of going on for ever (each Swap used to count as a change).
func TestSameValueWritesChangeNothing(t *testing.T) {
	for _, budget := range []uint64{200_000, 0} { // at the event budget, and without limits
		r := newRig(t, 2, false, nil)
		r.e.MaxEvents = budget
		for i, order := range [][2]Addr{{ramBase, ramBase + 64}, {ramBase + 64, ramBase}} {
			r.e.Spawn(r.e.Cores()[i], fmt.Sprintf("task%d", i), func(p *Proc) {
				for _, a := range order {
					p.SetWaiting(fmt.Sprintf("lock %#x", uint64(a)), false)
					for p.Swap(a, 1) != 0 {
						p.Relax(1000)
					}
					p.SetWaiting("", false)
					p.Compute(1000)
				}
			})
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a safety net, not a speed check
		err := r.e.Run(ctx)
		cancel()
		var dl *DeadlockError
		if !errors.As(err, &dl) || dl.At > 2*Microsecond || !strings.Contains(err.Error(), "task0 (core 0) waits on lock 0x") ||
			!strings.Contains(err.Error(), "task1 (core 1) waits on lock 0x") {
			t.Fatalf("event budget %d: got %v at %v, want a deadlock from the second takes (about 1 us) naming both locks", budget, err, r.e.Now())
		}
		r.e.Close()
	}
}

// The same crossed locks taken in a loop that does not say what it waits
// on run to the event budget (nothing marks them as waiting), and the
// runaway report names, for each, the word its polling loop last read and
// its value: the lock the other one holds.
func TestRunawayNamesWhatALoopPolls(t *testing.T) {
	r := newRig(t, 2, false, nil)
	r.e.MaxEvents = 20_000
	locks := [2]Addr{ramBase, ramBase + 64}
	for i, order := range [][2]Addr{{locks[0], locks[1]}, {locks[1], locks[0]}} {
		r.e.Spawn(r.e.Cores()[i], fmt.Sprintf("task%d", i), func(p *Proc) {
			for _, a := range order {
				for p.Swap(a, 1) != 0 {
					p.Relax(1000)
				}
				p.Compute(1000)
			}
		})
	}
	err := r.e.Run(context.Background())
	var ra *RunawayError
	if !errors.As(err, &ra) {
		t.Fatalf("got %v, want a runaway", err)
	}
	for i, a := range []Addr{locks[1], locks[0]} {
		want := fmt.Sprintf("task%d (core %d) waits on its own timer, pausing in a polling loop (Relax) after its access to %#x (value 1)", i, i, uint64(a))
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant it to say %q", err, want)
		}
	}
	r.e.Close()
}

// Loops written by hand that poll memory nobody will write end, without
// limits, in a livelock pollAfter (100 ms of simulated time) after the last change,
// naming each process and the word it last accessed, where they ran until
// the context was cancelled: a forgotten unlock under a hand-written
// test-and-test-and-set (cached: every poll a hit), the crossed locks
// above, and a poll of uncached memory.
func TestLivelockOfHandWrittenLoops(t *testing.T) {
	for _, c := range []struct {
		name     string
		uncached bool
		procs    []func(p *Proc)
		at       Time
		want     []string
	}{
		{"forgotten unlock", false, []func(p *Proc){
			func(p *Proc) { p.Swap(ramBase, 1); p.Compute(100) }, // returns holding the lock
			func(p *Proc) {
				p.Compute(50)
				for p.Load(ramBase) != 0 || p.Swap(ramBase, 2) != 0 {
					p.Compute(9)
				}
			},
		}, 300 * Nanosecond, []string{"task1 (core 1) waits on nothing it declared, running: last access 0x1000 (value 1)"}},
		{"crossed locks", false, []func(p *Proc){
			func(p *Proc) { crossed(p, ramBase, ramBase+64) },
			func(p *Proc) { crossed(p, ramBase+64, ramBase) },
		}, 2 * Microsecond, []string{
			"task0 (core 0) waits on its own timer, pausing in a polling loop (Relax) after its access to 0x1040 (value 1)",
			"task1 (core 1) waits on its own timer, pausing in a polling loop (Relax) after its access to 0x1000 (value 1)"}},
		{"uncached poll", true, []func(p *Proc){
			func(p *Proc) {
				for p.Load(ramBase) == 0 {
					p.Compute(3)
				}
			},
		}, 0, []string{"task0 (core 0) waits on nothing it declared, running: last access 0x1000 (value 0)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, 2, c.uncached, nil)
			defer r.e.Close()
			for i, fn := range c.procs {
				r.e.Spawn(r.e.Cores()[i], fmt.Sprintf("task%d", i), fn)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a safety net, not a speed check
			defer cancel()
			err := r.e.Run(ctx)
			var dl *DeadlockError
			if !errors.As(err, &dl) || !dl.Polling || dl.At > c.at || dl.Stalled < pollAfter || r.e.Now() > dl.At+pollAfter+Millisecond ||
				!strings.HasPrefix(err.Error(), "livelock at ") {
				t.Fatalf("got %v at %v, want a livelock from %v on, reported %v later", err, r.e.Now(), c.at, pollAfter)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nwant it to say %q", err, w)
				}
			}
		})
	}
}

// crossed takes two test-and-set locks in turn, polling by hand.
func crossed(p *Proc, a, b Addr) {
	for _, l := range []Addr{a, b} {
		for p.Swap(l, 1) != 0 {
			p.Relax(1000)
		}
		p.Compute(1000)
	}
}

// What looks like a polling loop but ends is no livelock: the flag is set
// by a process computing for a second, or by a timer's handler a second
// on, and a read-only loop of a second ends inside a time limit (the
// watch looks only at the limit then). Each poller reads nothing new for
// ten times as long as the livelock watch waits.
func TestPollingThatEndsIsNoLivelock(t *testing.T) {
	flag := ramBase
	poll := func(p *Proc) {
		for p.Load(flag) == 0 {
			p.Compute(10)
		}
	}
	for _, c := range []struct {
		name  string
		until Time
		setup func(r rig)
	}{
		{"a writer computing", 0, func(r rig) {
			r.e.Spawn(r.e.Cores()[0], "poller", poll)
			r.e.Spawn(r.e.Cores()[1], "writer", func(p *Proc) { p.Compute(1_000_000_000); p.Store(flag, 1) })
		}},
		{"a timer", 0, func(r rig) {
			r.e.Spawn(r.e.Cores()[0], "poller", poll)
			r.e.At(Second, NewEvent(func() { r.m.Poke(flag, 1) }, false))
		}},
		{"a bounded loop under a limit", 2 * Second, func(r rig) {
			r.e.Spawn(r.e.Cores()[0], "reader", func(p *Proc) {
				for p.Now() < Second {
					p.Load(flag)
					p.Compute(10)
				}
			})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, 2, true, nil)
			defer r.e.Close()
			r.e.Until = c.until
			c.setup(r)
			if err := r.e.Run(context.Background()); err != nil || r.e.StopReason() != "done" {
				t.Fatalf("got %v (%q) at %v, want the run done", err, r.e.StopReason(), r.e.Now())
			}
		})
	}
}

// A waiter in WFI whose only wake-up is its core's tick, 4 ms away, while
// the other core, masked, spins on the word the waiter will write and a
// device interrupts it every 2 us: two thousand device events wake nobody
// before the tick comes, yet this is no deadlock. The run ends when the
// waiter, woken by its tick, writes the word (it used to stop at 2 ms as a
// deadlock, a thousand background events having woken nobody).
func TestRareTickIsNotOutnumbered(t *testing.T) {
	r := newRig(t, 2, false, nil)
	cores := r.e.Cores()
	for _, c := range cores {
		c.SetHandler(func(p *Proc, irq IRQ) { p.Compute(10) })
	}
	if err := cores[0].NewTimer(2).Periodic(2*Microsecond, 2*Microsecond); err != nil {
		t.Fatal(err)
	}
	if err := cores[1].NewTimer(1).Periodic(4*Millisecond, 4*Millisecond); err != nil {
		t.Fatal(err)
	}
	r.e.Spawn(cores[0], "spinner", func(p *Proc) {
		p.Mask(9)
		p.SpinUntil(ramBase, 10, func(v uint64) bool { return v == 1 })
	})
	r.e.Spawn(cores[1], "sleeper", func(p *Proc) {
		p.WFI()
		p.Store(ramBase, 1)
	})
	if err := r.e.Run(context.Background()); err != nil {
		t.Fatalf("%v, want the run to end after the sleeper's tick at 4 ms", err)
	}
	if now := r.e.Now(); now < 4*Millisecond || now > 4*Millisecond+10*Microsecond {
		t.Errorf("the run ended at %v, want just after the tick at 4 ms", now)
	}
	r.e.Close()
}

// A core left in an OS idle state with no interrupt to come is a deadlock
// that names the state.
func TestDeadlockInIdleState(t *testing.T) {
	r := newRig(t, 1, false, func(c *CoreConfig) {
		c.Idle = []IdleState{{Name: "cpu-sleep", Entry: 100 * Nanosecond, Exit: 200 * Nanosecond}}
	})
	r.e.Spawn(r.e.Cores()[0], "idle", func(p *Proc) { p.Idle(0) })
	err := r.e.Run(context.Background())
	var dl *DeadlockError
	if want := "idle (core 0) waits on an interrupt in idle state cpu-sleep"; !errors.As(err, &dl) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want a deadlock saying %q", err, want)
	}
	r.e.Close()
}

// An endless loop hits the event budget and is reported as a runaway with
// the simulated time reached.
func TestRunaway(t *testing.T) {
	r := newRig(t, 2, false, nil)
	r.e.MaxEvents = 5000
	for _, c := range r.e.Cores() {
		r.e.Spawn(c, "pingpong", func(p *Proc) {
			for {
				p.FetchAdd(ramBase, 1)
			}
		})
	}
	err := r.e.Run(context.Background())
	var ra *RunawayError
	if !errors.As(err, &ra) || ra.At <= 0 || !strings.Contains(err.Error(), "event budget of 5000") {
		t.Fatalf("got %v, want a runaway", err)
	}
	r.e.Close()
}

// Cancelling the context stops a long run promptly: within a few thousand
// events of the cancel (events counted, not wall time timed, so a loaded
// machine cannot fail it; BenchmarkCancel times the same run).
func TestCancelPrompt(t *testing.T) {
	r := newRig(t, 2, false, nil)
	at := cancelAfter(t, r, 20_000)
	if at == 0 {
		t.Fatal("the run ended before the cancel")
	}
	// Run checks its context every few thousand events: well under a
	// millisecond of wall time.
	if n := r.e.Events() - at; n > 5000 {
		t.Fatalf("stopped %d events after the cancel, want at most 5000", n)
	}
}

// A process looping alone on its core, with nothing else to wait for,
// takes no events at all (its clock just moves); cancelling the context
// still stops the run within a few tens of microseconds of simulated time.
func TestCancelLoneLoop(t *testing.T) {
	for _, op := range []struct {
		name string
		step func(p *Proc)
	}{
		{"compute", func(p *Proc) { p.Compute(1) }},
		{"atomic on its own line", func(p *Proc) { p.FetchAdd(ramBase, 1) }},
	} {
		t.Run(op.name, func(t *testing.T) {
			r := newRig(t, 1, false, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			const n = 20_000
			k, at := 0, Time(0)
			r.e.Spawn(r.e.Cores()[0], "alone", func(p *Proc) {
				for ; ; k++ {
					op.step(p)
					if k == n {
						cancel()
						at = p.Now()
					}
				}
			})
			done := make(chan error, 1)
			go func() { done <- r.e.Run(ctx) }()
			select {
			case err := <-done:
				r.e.Close() // not while the run goes on: Close would wait for it
				if !errors.Is(err, ErrStopped) || !errors.Is(err, context.Canceled) {
					t.Fatalf("got %v, want ErrStopped wrapping context.Canceled", err)
				}
				if late := r.e.Now() - at; late > 2*aloneQuantum {
					t.Fatalf("stopped %v of simulated time after the cancel, want at most %v", late, 2*aloneQuantum)
				}
			case <-time.After(time.Minute):
				t.Fatal("the run ignored its cancelled context for a minute")
			}
		})
	}
}

// cancelAfter runs two processes that add to one word forever, the first
// cancelling the run's context after n additions, and returns the event
// count at the cancel (0 if it never came). The run must stop with
// ErrStopped wrapping context.Canceled.
func cancelAfter(tb testing.TB, r rig, n int) uint64 {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var at uint64
	for i, c := range r.e.Cores() {
		r.e.Spawn(c, "forever", func(p *Proc) {
			for k := 0; ; k++ {
				p.FetchAdd(ramBase, 1)
				if i == 0 && k == n {
					at = r.e.Events()
					cancel()
				}
			}
		})
	}
	err := r.e.Run(ctx)
	r.e.Close()
	if !errors.Is(err, ErrStopped) || !errors.Is(err, context.Canceled) {
		tb.Fatalf("got %v, want ErrStopped wrapping context.Canceled", err)
	}
	return at
}

// BenchmarkCancel is the wall-time side of TestCancelPrompt: a run of
// 20,000 contended additions per core, cancelled from inside.
func BenchmarkCancel(b *testing.B) {
	for b.Loop() {
		cancelAfter(b, newRig(b, 2, false, nil), 20_000)
	}
}

// The time limit stops a run at Until, with the reason; a run that goes on
// from there and fails has no reason left over from the first.
func TestTimeLimit(t *testing.T) {
	r := newRig(t, 1, false, nil)
	r.e.Until = 3 * Millisecond
	r.e.Spawn(r.e.Cores()[0], "long", func(p *Proc) {
		p.Compute(10_000_000)
		for {
			p.Compute(1)
		}
	})
	r.run(t)
	if r.e.Now() != 3*Millisecond || r.e.StopReason() != "time limit" {
		t.Fatalf("stopped at %v (%s), want 3ms (time limit)", r.e.Now(), r.e.StopReason())
	}
	r.e.Until = 0
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.e.Run(ctx); !errors.Is(err, ErrStopped) || r.e.StopReason() != "" {
		t.Fatalf("second run: %v, stop reason %q; want ErrStopped and no reason", err, r.e.StopReason())
	}
	r.e.Close()
}

// A writer whose stores keep failing a spinner's polls settles them
// inline and never yields; the run must still stop at its event budget or
// when its context is cancelled, not only when the writer ends.
func TestInlinePollsYieldToRunChecks(t *testing.T) {
	const n = 200_000
	run := func(maxEvents uint64, cancelAt int) (int, error) {
		r := newRig(t, 2, false, nil)
		defer r.e.Close()
		r.e.MaxEvents = maxEvents
		r.m.Poke(ramBase, 1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r.e.Spawn(r.e.Cores()[1], "spinner", func(p *Proc) {
			p.SpinUntil(ramBase, 10, func(v uint64) bool { return v == 0 })
		})
		wrote := 0
		r.e.Spawn(r.e.Cores()[0], "writer", func(p *Proc) {
			for ; wrote < n; wrote++ {
				if wrote == cancelAt {
					cancel()
				}
				p.Store(ramBase, uint64(wrote)+1)
				p.Compute(500) // long enough for the spinner's re-read to complete
			}
		})
		err := r.e.Run(ctx)
		return wrote, err
	}
	wrote, err := run(10_000, -1)
	var ra *RunawayError
	if !errors.As(err, &ra) || wrote >= n/2 || ra.Events > 10_000+4096 {
		t.Errorf("event budget 10000: got %v after %d of %d writes, want a runaway soon after the budget", err, wrote, n)
	}
	wrote, err = run(0, 1000)
	if !errors.Is(err, ErrStopped) || !errors.Is(err, context.Canceled) || wrote >= n/2 {
		t.Errorf("cancelled at write 1000: got %v after %d of %d writes, want ErrStopped soon after", err, wrote, n)
	}
}

// Events due at the same time fire in the order they were scheduled (a
// moved event counts from its move), whatever else is queued: ties
// resolve the same way every run. Kills the queue ordering ties any other
// way.
func TestEventTiesFireInScheduleOrder(t *testing.T) {
	e := NewEngine(1)
	var got []int
	evs := make([]*Event, 60)
	for i := range evs {
		evs[i] = NewEvent(func() { got = append(got, i) }, false)
	}
	// Event i at 10 us for even i, 20 us for odd ones (enough of them for
	// the calendar form of the queue), scheduled in shuffled order; then
	// event 0 is moved, so it comes last of its time.
	order := []int{}
	for i := range evs {
		order = append(order, (i*37)%len(evs))
	}
	for _, i := range order {
		e.At(Time(10+10*(i%2))*Microsecond, evs[i])
	}
	e.At(10*Microsecond, evs[0])
	for e.Step() {
	}
	var want []int
	for _, tm := range []int{0, 1} {
		for _, i := range order {
			if i%2 == tm && i != 0 {
				want = append(want, i)
			}
		}
		if tm == 0 {
			want = append(want, 0)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
}
