package sim

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// handOffRun builds a run with setup on an engine that hands off directly
// between waiting processes or not, runs it, and describes the outcome:
// the digest of what it measured, the events, where and why it stopped.
func handOffRun(t *testing.T, direct bool, setup func(r rig)) (string, uint64) {
	t.Helper()
	r := newRig(t, 3, true, func(c *CoreConfig) { c.EventStream = 20 * Microsecond })
	r.e.direct = direct
	defer r.e.Close()
	setup(r)
	err := r.e.Run(context.Background())
	return fmt.Sprintf("digest %x events %d now %v stop %q err %v", digest(r.e), r.e.Events(), r.e.Now(), r.e.StopReason(), err), r.e.handOffs
}

// A waiting process that dispatches the events due before its own wake and
// runs the processes they wake (Proc.await) gives the run that going
// through Run gives, event for event: with locks, interrupts, WFE, sleeps,
// context switches from handlers, a failure, a deadlock, a time limit and
// an event budget. And it does hand off.
func TestDirectHandOffSameRun(t *testing.T) {
	// worker takes and releases the lock rounds times (and fails at round
	// fail, if it is in range).
	worker := func(r rig, c *Core, name string, rounds int, fail ...int) *Proc {
		me := uint64(c.ID + 1)
		return r.e.NewProc(name, false, func(p *Proc) {
			for i := range rounds {
				if len(fail) > 0 && i == fail[0] {
					p.Fail(errors.New("failed on purpose"))
				}
				spinLock(p, ramBase, 12, me)
				p.FetchAdd(ramBase+128, 1)
				p.Compute(int64(50 + 37*i%200))
				p.Store(ramBase, 0)
				p.Compute(int64(100 + 53*i%700))
				if i%7 == 0 {
					p.Sleep(3 * Microsecond)
				}
			}
		})
	}
	for _, tc := range []struct {
		name  string
		setup func(r rig)
	}{
		{"locks", func(r rig) {
			for _, c := range r.e.Cores() {
				c.Start(worker(r, c, fmt.Sprintf("w%d", c.ID), 300))
			}
		}},
		{"switches", func(r rig) {
			// Core 0 runs two tasks; its tick switches between them, until
			// one ends: the other is left switched out, a deadlock that
			// only Run's count of quiet ticks finds.
			c := r.e.Cores()[0]
			tasks := []*Proc{worker(r, c, "a", 200), worker(r, c, "b", 200)}
			c.SetHandler(func(p *Proc, irq IRQ) {
				p.Compute(30)
				for _, q := range tasks {
					if q != p && !q.done {
						p.SwitchTo(q)
						return
					}
				}
			})
			if err := c.NewTimer(1).Periodic(7*Microsecond, 3*Microsecond); err != nil {
				t.Fatal(err)
			}
			c.Start(tasks[0])
			for _, o := range r.e.Cores()[1:] {
				o.Start(worker(r, o, fmt.Sprintf("w%d", o.ID), 300))
				if _, err := o.NewDevice(fmt.Sprintf("dev%d", o.ID), 2, 5*Microsecond, true); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"fail", func(r rig) {
			for _, c := range r.e.Cores() {
				c.Start(worker(r, c, fmt.Sprintf("w%d", c.ID), 300, 100*c.ID+50))
			}
		}},
		{"deadlock", func(r rig) {
			r.m.Poke(ramBase+64, 9)
			for _, c := range r.e.Cores() {
				r.e.Spawn(c, fmt.Sprintf("d%d", c.ID), func(p *Proc) {
					p.Compute(int64(100 * c.ID))
					p.SpinUntil(ramBase+64, 10, func(v uint64) bool { return v == 0 })
				})
			}
		}},
		{"until", func(r rig) {
			r.e.Until = 150 * Microsecond
			for _, c := range r.e.Cores() {
				c.Start(worker(r, c, fmt.Sprintf("w%d", c.ID), 300))
			}
		}},
		{"budget", func(r rig) {
			r.e.MaxEvents = 3000
			for _, c := range r.e.Cores() {
				c.Start(worker(r, c, fmt.Sprintf("w%d", c.ID), 300))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slow, _ := handOffRun(t, false, tc.setup)
			fast, n := handOffRun(t, true, tc.setup)
			if fast != slow {
				t.Errorf("direct hand-off:\n%s\nthrough Run:\n%s", fast, slow)
			}
			if n == 0 {
				t.Errorf("no direct hand-off: the test proves nothing")
			}
		})
	}
}

// Switches counts every resumption of a coroutine, worked out by hand for
// processes that compute n times: alone, a process settles its own waits
// on its coroutine (moving its clock, or taking its wake in await), unless
// every wait goes through Run; two in step switch once per wait through
// Run, and half as often with direct hand-offs, where one of them
// dispatches the events and never leaves its coroutine.
func TestSwitchesCountResumptions(t *testing.T) {
	const n = 100
	for _, tc := range []struct {
		cores         int
		direct, ahead bool
		want          uint64
	}{
		{1, true, true, 1},       // its clock moves: the start only
		{1, true, false, 1},      // every wait an event, each taken in await
		{1, false, true, 1},      // its clock moves
		{1, false, false, 1 + n}, // every wait through Run
		{2, false, true, 2 + 2*n},
		{2, true, true, 2 + n}, // the first to start resumes the other at each of its waits
	} {
		t.Run(fmt.Sprintf("cores=%d,direct=%v,ahead=%v", tc.cores, tc.direct, tc.ahead), func(t *testing.T) {
			r := newRig(t, tc.cores, true, nil)
			defer r.e.Close()
			r.e.direct, r.e.ahead = tc.direct, tc.ahead
			for _, c := range r.e.Cores() {
				r.e.Spawn(c, fmt.Sprintf("w%d", c.ID), func(p *Proc) {
					for range n {
						p.Compute(10)
					}
				})
			}
			r.run(t)
			if got := r.e.Switches(); got != tc.want {
				t.Errorf("Switches() = %d, want %d", got, tc.want)
			}
			if r.e.Now() != 10*n*Nanosecond {
				t.Errorf("ended at %v, want %v", r.e.Now(), 10*n*Nanosecond)
			}
		})
	}
}
