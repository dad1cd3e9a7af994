package sim

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

// tourConfig gives every power state of the core a different power, so
// that a state booked at another state's power changes the energy.
func tourConfig(c *CoreConfig) {
	c.ExecMW, c.SpinMW, c.WFEMW, c.WFIMW = 400, 300, 20, 7
	c.Idle = []IdleState{
		{Name: "cpu-sleep", Entry: 100 * Nanosecond, Exit: 200 * Nanosecond, PowerMW: 2},
		{Name: "cluster-off", Entry: Microsecond, Exit: 3 * Microsecond, PowerMW: 0.5},
	}
}

// tourStep is one step of stateTour and the time it adds to each state,
// worked out by hand from the rig's 1 GHz clock, its 5-cycle wake-up and
// 10-cycle interrupt entry and exit, and tourConfig's idle costs.
type tourStep struct {
	name string
	do   func(p *Proc, tm *Timer)
	adds map[State]Time
}

var stateTour = []tourStep{
	{"compute", func(p *Proc, _ *Timer) { p.Compute(1000) },
		map[State]Time{StateExec: Microsecond}},
	{"relax", func(p *Proc, _ *Timer) { p.Relax(2000) },
		map[State]Time{StateSpin: 2 * Microsecond}},
	{"wfet", func(p *Proc, _ *Timer) { p.WFET(p.Now() + 4*Microsecond) },
		map[State]Time{StateWFE: 4*Microsecond + 5*Nanosecond}},
	{"sleep", func(p *Proc, _ *Timer) { p.Sleep(8 * Microsecond) },
		map[State]Time{StateWFI: 8 * Microsecond}},
	{"wfi", func(p *Proc, tm *Timer) { tm.OneShot(p.Now() + 3*Microsecond); p.WFI() },
		map[State]Time{StateWFI: 3*Microsecond + 5*Nanosecond, StateIRQ: 20 * Nanosecond}},
	// Idle: entry, the wait, the wake-up cycles and the exit latency.
	{"idle", func(p *Proc, tm *Timer) { tm.OneShot(p.Now() + 5*Microsecond); p.Idle(0) },
		map[State]Time{StateIdle0: 5*Microsecond + 5*Nanosecond + 200*Nanosecond, StateIRQ: 20 * Nanosecond}},
	{"compute again", func(p *Proc, _ *Timer) { p.Compute(500) },
		map[State]Time{StateExec: 500 * Nanosecond}},
}

// tourPoint is what a process saw of its core's residencies after a step.
type tourPoint struct {
	now   Time
	resid []Time
}

// runStateTour runs stateTour on one core, recording after each step,
// from inside the process, the time and every state's residency.
func runStateTour(t *testing.T) (*Core, []tourPoint) {
	t.Helper()
	r := newRig(t, 1, false, tourConfig)
	c := r.e.Cores()[0]
	tm := c.NewTimer(1)
	var pts []tourPoint
	r.e.Spawn(c, "tour", func(p *Proc) {
		for _, st := range stateTour {
			st.do(p, tm)
			pt := tourPoint{now: p.Now(), resid: make([]Time, c.States())}
			for s := range pt.resid {
				pt.resid[s] = c.Residency(State(s))
			}
			pts = append(pts, pt)
		}
	})
	r.run(t)
	if len(pts) != len(stateTour) {
		t.Fatalf("%d of %d steps ran", len(pts), len(stateTour))
	}
	return c, pts
}

// Residency counts the stretch the core is in now: at any instant during a
// run, not only once Run has closed the accounts, the states' residencies
// add up to the time elapsed, and each is the analytic value. (A test that
// reads them only after Run cannot see a dropped open stretch.)
func TestResidencyMidRun(t *testing.T) {
	c, pts := runStateTour(t)
	want := make([]Time, c.States())
	for i, st := range stateTour {
		for s, d := range st.adds {
			want[s] += d
		}
		var sum Time
		for s, got := range pts[i].resid {
			sum += got
			if got != want[s] {
				t.Errorf("after %s at %v: %s residency %v, want %v", st.name, pts[i].now, c.StateName(State(s)), got, want[s])
			}
		}
		if sum != pts[i].now {
			t.Errorf("after %s: residencies sum to %v, elapsed %v", st.name, sum, pts[i].now)
		}
	}
}

// EnergyMJ charges each state at its own configured power: the energy of a
// run through every state is the sum of the config's power fields times
// the analytic residencies, computed here without PowerMW (which
// TestConservation uses, so a wrong power there goes unseen).
func TestEnergyFromConfiguredPowers(t *testing.T) {
	c, _ := runStateTour(t)
	var cfg CoreConfig
	tourConfig(&cfg)
	resid := make(map[State]Time)
	for _, st := range stateTour {
		for s, d := range st.adds {
			resid[s] += d
		}
	}
	want := cfg.ExecMW*resid[StateExec].Seconds() +
		cfg.ExecMW*resid[StateIRQ].Seconds() +
		cfg.SpinMW*resid[StateSpin].Seconds() +
		cfg.WFEMW*resid[StateWFE].Seconds() +
		cfg.WFIMW*resid[StateWFI].Seconds() +
		cfg.Idle[0].PowerMW*resid[StateIdle0].Seconds() +
		cfg.Idle[1].PowerMW*resid[StateIdle0+1].Seconds()
	if got := c.EnergyMJ(); math.Abs(got-want) > 1e-9*want {
		t.Errorf("energy %.9g mJ, want %.9g mJ", got, want)
	}
	// Each state on its own, so that a failure names the state.
	for _, tc := range []struct {
		s  State
		mw float64
	}{
		{StateExec, cfg.ExecMW}, {StateIRQ, cfg.ExecMW}, {StateSpin, cfg.SpinMW},
		{StateWFE, cfg.WFEMW}, {StateWFI, cfg.WFIMW},
		{StateIdle0, cfg.Idle[0].PowerMW}, {StateIdle0 + 1, cfg.Idle[1].PowerMW},
	} {
		if got := c.PowerMW(tc.s); got != tc.mw {
			t.Errorf("PowerMW(%s) = %g, want %g", c.StateName(tc.s), got, tc.mw)
		}
	}
}

// Mask only ever raises the interrupt level (irqsave nests inside a
// section already masked higher): at level 3, Mask(1) leaves the level at
// 3, and a pending level-2 line stays pending until the outer Restore.
func TestMaskNeverLowersLevel(t *testing.T) {
	const line = IRQ(4)
	for _, tc := range []struct{ mask, level int }{
		{1, 3}, {3, 3}, {5, 5},
	} {
		r := newRig(t, 1, false, nil)
		c := r.e.Cores()[0]
		c.SetLineLevel(line, 2)
		var handled []Time
		c.SetHandler(func(p *Proc, irq IRQ) { handled = append(handled, p.Now()) })
		var prev, level int
		r.e.Spawn(c, "task", func(p *Proc) {
			outer := p.Mask(3)
			c.Raise(line)
			prev = p.Mask(tc.mask)
			level = c.Level()
			p.Compute(100) // the line must not be taken here
			p.Restore(prev)
			p.Compute(100) // nor here
			p.Restore(outer)
		})
		r.run(t)
		if prev != 3 || level != tc.level {
			t.Errorf("Mask(%d) at level 3: returned %d, level %d; want 3, %d", tc.mask, prev, level, tc.level)
		}
		// Taken at the outer Restore, 200 cycles in, after the entry cost.
		if want := 210 * Nanosecond; len(handled) != 1 || handled[0] != want {
			t.Errorf("Mask(%d) at level 3: level-2 line handled at %v, want once at %v", tc.mask, handled, want)
		}
	}
}

// WFI counts the interrupt that ends its sleep in Wakeups[WakeInterrupt]
// (masked or not), and counts nothing when an interrupt was already
// pending and it did not sleep.
func TestWFICountsInterruptWakeup(t *testing.T) {
	const line = IRQ(2)
	for _, tc := range []struct {
		name    string
		pending bool // raised before WFI: no sleep
		masked  bool // WFI under Mask, the handler run at Restore
		wakeups int
		back    Time // when WFI returns
	}{
		// Timer at 1us, 5 cycles to wake, 10 each for entry and exit.
		{name: "timer", wakeups: 1, back: Microsecond + 25*Nanosecond},
		{name: "masked timer", masked: true, wakeups: 1, back: Microsecond + 5*Nanosecond},
		{name: "already pending", pending: true, wakeups: 0, back: 20 * Nanosecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, false, nil)
			c := r.e.Cores()[0]
			handled := 0
			c.SetHandler(func(p *Proc, irq IRQ) { handled++ })
			if !tc.pending {
				c.NewTimer(line).OneShot(Microsecond)
			}
			var back Time
			r.e.Spawn(c, "task", func(p *Proc) {
				if tc.pending {
					c.Raise(line)
				}
				prev := 0
				if tc.masked {
					prev = p.Mask(1)
				}
				p.WFI()
				back = p.Now()
				p.Restore(prev)
			})
			r.run(t)
			if got := c.Wakeups[WakeInterrupt]; got != tc.wakeups {
				t.Errorf("Wakeups[WakeInterrupt] = %d, want %d", got, tc.wakeups)
			}
			for w, n := range c.Wakeups {
				if WakeCause(w) != WakeInterrupt && n != 0 {
					t.Errorf("Wakeups[%v] = %d, want 0", WakeCause(w), n)
				}
			}
			if back != tc.back || handled != 1 {
				t.Errorf("WFI returned at %v, handler ran %d times; want %v, once", back, handled, tc.back)
			}
		})
	}
}

// A process that can never wake while only a periodic tick is left (it
// waits in WFE with the tick's line masked) is reported as a deadlock
// after about a thousand quiet ticks, not after the run's event budget or
// a million ticks. Bounded in events and simulated time, not wall time.
func TestDeadlockWithOnlyTicksLeft(t *testing.T) {
	const period = Microsecond
	r := newRig(t, 1, false, nil)
	r.e.MaxEvents = 20_000 // a limit far above 1000 ends as a runaway
	c := r.e.Cores()[0]
	if err := c.NewTimer(1).Periodic(period, period); err != nil {
		t.Fatal(err)
	}
	r.e.Spawn(c, "stuck", func(p *Proc) {
		p.Mask(1)
		p.WFE()
	})
	err := r.e.Run(context.Background())
	r.e.Close()
	var dl *DeadlockError
	if !errors.As(err, &dl) || !strings.Contains(err.Error(), "stuck (core 0) waits on an event in WFE") {
		t.Fatalf("got %v, want a deadlock naming the WFE waiter", err)
	}
	// One event starts the process; the rest are ticks.
	if n := r.e.Events(); n < 1000 || n > 1100 {
		t.Errorf("deadlock reported after %d events, want about 1000 ticks", n)
	}
	if now := r.e.Now(); now < 1000*period || now > 1100*period {
		t.Errorf("deadlock reported at simulated time %v, want about 1000 tick periods (%v)", now, 1000*period)
	}
	if dl.At != 0 {
		t.Errorf("deadlock dated %v, want 0 (when the process last ran)", dl.At)
	}
}

// Leaving an OS idle state costs its exit latency: the core runs again,
// and takes the interrupt that woke it, no earlier than the wake-up plus
// Exit (and Entry is paid even when an interrupt is already pending).
func TestIdleExitLatency(t *testing.T) {
	const line = IRQ(1)
	const wake, entry = 5 * Nanosecond, 10 * Nanosecond // WakeCycles, IRQEntry at 1 GHz
	for _, tc := range []struct {
		name    string
		st      IdleState
		pending bool // raised before Idle: no sleep
		handled Time // handler start
		resid   Time // time in the idle state
	}{
		{name: "deep", st: IdleState{Name: "deep", Entry: 100 * Nanosecond, Exit: 2 * Microsecond},
			handled: 10*Microsecond + wake + 2*Microsecond + entry, resid: 10*Microsecond + wake + 2*Microsecond},
		{name: "free", st: IdleState{Name: "free"},
			handled: 10*Microsecond + wake + entry, resid: 10*Microsecond + wake},
		{name: "deep, already pending", st: IdleState{Name: "deep", Entry: 100 * Nanosecond, Exit: 2 * Microsecond}, pending: true,
			handled: 100*Nanosecond + 2*Microsecond + entry, resid: 100*Nanosecond + 2*Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, false, func(c *CoreConfig) { c.Idle = []IdleState{tc.st} })
			c := r.e.Cores()[0]
			var handled []Time
			c.SetHandler(func(p *Proc, irq IRQ) { handled = append(handled, p.Now()) })
			if !tc.pending {
				c.NewTimer(line).OneShot(10 * Microsecond)
			}
			var back Time
			r.e.Spawn(c, "idle", func(p *Proc) {
				if tc.pending {
					c.Raise(line)
				}
				p.Idle(0)
				back = p.Now()
			})
			r.run(t)
			if len(handled) != 1 || handled[0] != tc.handled {
				t.Errorf("interrupt handled at %v, want once at %v", handled, tc.handled)
			}
			if got := c.Residency(StateIdle0); got != tc.resid {
				t.Errorf("idle residency %v, want %v", got, tc.resid)
			}
			if want := tc.handled + entry; back != want { // IRQExit = IRQEntry
				t.Errorf("Idle returned at %v, want %v", back, want)
			}
		})
	}
}
