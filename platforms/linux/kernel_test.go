package linux_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"synclab/platforms/generic"
	"synclab/platforms/linux"
	"synclab/sim"
)

// Bad configuration is an error naming the field (or the thing) and the
// value at fault.
func TestErrorsNameTheField(t *testing.T) {
	r := newRig(t, 2, 1, nil)
	good := wait(linux.WFE)
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"HZ", func() error { c := testConfig(); c.HZ = 0; return c.Validate() }, "HZ = 0"},
		{"costs", func() error { c := testConfig(); c.SwitchWork = -sim.Microsecond; return c.Validate() }, "SwitchWork -1us"},
		{"mode", func() error { w := good; w.Mode = 9; return w.Validate() }, "Mode = 9"},
		{"relax", func() error { w := good; w.RelaxCycles = 0; return w.Validate() }, "RelaxCycles = 0"},
		{"limits", func() error { w := good; w.WFELimit = -2; return w.Validate() }, "WFELimit = -2"},
		{"flavour", func() error { _, err := r.k.NewSpinlock("mcs", good); return err }, `flavour "mcs" unknown`},
		{"lock's wait", func() error { w := good; w.SpinLimit = -1; _, err := r.k.NewSpinlock(linux.QSpinlock, w); return err }, "SpinLimit = -1"},
		{"memory", func() error { _, err := r.k.Alloc(size); return err }, "out of kernel memory"},
		{"device cpu", func() error { _, err := r.k.Device("d", 2, linux.IRQDevice, sim.Millisecond, false, nil); return err }, "cpu = 2 out of range"},
		{"device line", func() error { _, err := r.k.Device("d", 0, sim.IRQLines, sim.Millisecond, false, nil); return err }, `linux: device "d": irq = 64 out of range`},
		{"no cores", func() error { _, err := linux.New(r.e, nil, r.e.Memory(), base, size, testConfig()); return err }, "no cores"},
		{"memory outside", func() error {
			_, err := linux.New(r.e, r.e.Cores(), r.e.Memory(), base+sim.Addr(size), size, testConfig())
			return err
		}, "not in mem: address"},
		{"memory size", func() error { _, err := linux.New(r.e, r.e.Cores(), r.e.Memory(), base, 0, testConfig()); return err }, "size = 0 bytes"},
		{"mode name", func() error { _, err := linux.ParseMode("yield"); return err }, `wait mode "yield" unknown; known: wfe, wfi, relax, adaptive, tiered, wfet`},
		{"flavour name", func() error { _, err := linux.ParseFlavour("mcs"); return err }, `spinlock flavour "mcs" unknown; known: qspinlock, ticket, tas, ttas, ticket-arm64`},
		{"WFET timeout", func() error { w := wait(linux.WFET); w.Timeout = 0; return w.Validate() }, "Timeout = 0ns must be > 0"},
		{"lost SEV", func() error { return r.k.SetLoseSEV(1.5) }, "LoseSEV = 1.5"},
	} {
		if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	for _, m := range modes {
		if got, err := linux.ParseMode(m.String()); got != m || err != nil {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", m.String(), got, err, m)
		}
	}
	for _, f := range linux.Flavours {
		if got, err := linux.ParseFlavour(string(f)); got != f || err != nil {
			t.Errorf("ParseFlavour(%q) = %v, %v; want it back", f, got, err)
		}
	}
}

// The tick and cpuidle on one CPU that sleeps (schedule_hrtimeout) or
// computes for d, with a CPU_SLEEP-like state (entry 120 us, exit 250 us,
// target residency 900 us). At HZ=250 a CPU that runs 102 ms takes the 25
// ticks at 4, 8, ..., 100 ms; with NO_HZ_IDLE a sleeping one takes none.
// The menu governor enters the deep state only when the sleep is longer
// than its target residency. A sleep ends at its hrtimer, plus the deep
// state's exit if it was entered, the wake-up and the interrupt.
// Kills: NO_HZ_IDLE not stopping the tick, a tick period other than 1/HZ,
// a governor that ignores target residency (always WFI, always deep),
// a sleep not ended by its hrtimer.
func TestTickAndIdle(t *testing.T) {
	const exit = 250 * sim.Microsecond
	irq := (wakeCycles + irqEntry + irqExit) * cycle
	for _, tc := range []struct {
		name      string
		d         sim.Time
		busy      bool // compute for d instead of sleeping
		noHZ      bool
		ticks     int
		deep      bool     // the sleep enters the deep state
		endAtMost sim.Time // after d
	}{
		{name: "busy", d: 102 * sim.Millisecond, busy: true, noHZ: true, ticks: 25, endAtMost: 25 * (tickWork + irq)},
		{name: "long sleep, NO_HZ_IDLE", d: 102 * sim.Millisecond, noHZ: true, ticks: 0, deep: true, endAtMost: exit + irq},
		{name: "long sleep, periodic tick", d: 102 * sim.Millisecond, ticks: 25, deep: true, endAtMost: exit + irq},
		{name: "short sleep, NO_HZ_IDLE", d: 500 * sim.Microsecond, noHZ: true, ticks: 0, endAtMost: irq},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, 1, func(s *generic.SoC, c *linux.Config) {
				c.NoHZIdle = tc.noHZ
				s.Idle = []sim.IdleState{{Name: "cpu-sleep", Entry: 120 * sim.Microsecond, Exit: exit, MinResidency: 900 * sim.Microsecond, StopsTimer: true}}
			})
			var end sim.Time
			r.e.Spawn(r.cores[0], "t", func(p *sim.Proc) {
				if tc.busy {
					p.Delay(tc.d)
				} else {
					r.k.Sleep(p, tc.d)
				}
				end = p.Now()
			})
			r.run(t)
			c := r.cores[0]
			deep := c.Residency(sim.StateIdle0) > 0
			if got := r.k.CPUs[0].Ticks; got != tc.ticks || deep != tc.deep || end < tc.d || end > tc.d+tc.endAtMost {
				t.Errorf("ticks %d, deep state %v, ended at %v; want %d, %v, in [%v, %v]",
					got, deep, end, tc.ticks, tc.deep, tc.d, tc.d+tc.endAtMost)
			}
			// The OS sees the sleep as idle time, and the computing CPU as
			// never idle.
			if idle := r.k.CPUs[0].Idle; tc.busy && idle != 0 || !tc.busy && (idle < tc.d || idle > end) {
				t.Errorf("idle for %v of a run ending at %v (busy %v)", idle, end, tc.busy)
			}
			if !tc.busy && !tc.deep && c.Residency(sim.StateWFI) < tc.d {
				t.Errorf("WFI for %v of a %v sleep without the deep state", c.Residency(sim.StateWFI), tc.d)
			}
		})
	}
}

// A device interrupt runs its handler on the CPU it is routed to, in
// hardirq context with interrupts masked; task context is neither.
// Kills: Kernel.Device attaching to another CPU; dispatch not counting
// hardirq nesting (a tiered waiter in a handler would then schedule()).
func TestDeviceRunsItsHandlerOnItsCPU(t *testing.T) {
	r := newRig(t, 2, 1, nil)
	var on []int
	var inIRQ []bool
	if _, err := r.k.Device("dev", 1, linux.IRQDevice, sim.Millisecond, false, func(p *sim.Proc, irq sim.IRQ) {
		on = append(on, p.Core().ID)
		inIRQ = append(inIRQ, r.k.InIRQ(p) && linux.IRQsDisabled(p) && irq == linux.IRQDevice)
	}); err != nil {
		t.Fatal(err)
	}
	for i, c := range r.cores {
		r.e.Spawn(c, "t", func(p *sim.Proc) {
			p.Delay(5*sim.Millisecond + 500*sim.Microsecond)
			if r.k.InIRQ(p) || linux.IRQsDisabled(p) {
				t.Errorf("cpu%d: task context reports in_irq %v, irqs disabled %v", i, r.k.InIRQ(p), linux.IRQsDisabled(p))
			}
		})
	}
	if err := r.e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A periodic device: its first interrupt one period after it starts.
	if len(on) != 5 {
		t.Fatalf("handler ran %d times, want 5 (at 1..5 ms)", len(on))
	}
	for i := range on {
		if on[i] != 1 || !inIRQ[i] {
			t.Errorf("run %d: on cpu%d, in hardirq with interrupts masked %v; want cpu1, true", i, on[i], inIRQ[i])
		}
	}
}

// cpuidle enters the deepest state whose target residency fits before the
// next timer event, not merely one that fits. With two states, a shallow
// one (target residency 20 us) and a deep one (900 us), a NO_HZ_IDLE sleep
// of d starting at 0 stays in one state from 0 to its hrtimer at d plus
// the wake-up and that state's exit: 102 ms and 2 ms sleeps fit both states and take the
// deep one, 500 us fits only the shallow one, 10 us neither (WFI).
// Kills: the governor picking the shallowest fitting state, or the first
// state regardless of its target residency.
func TestCpuidlePicksDeepestFittingState(t *testing.T) {
	shallow := sim.IdleState{Name: "retention", Entry: 2 * sim.Microsecond, Exit: 3 * sim.Microsecond, MinResidency: 20 * sim.Microsecond}
	deep := sim.IdleState{Name: "cpu-sleep", Entry: 120 * sim.Microsecond, Exit: 250 * sim.Microsecond, MinResidency: 900 * sim.Microsecond, StopsTimer: true}
	for _, tc := range []struct {
		d     sim.Time
		state int // -1: WFI
	}{
		{102 * sim.Millisecond, 1},
		{2 * sim.Millisecond, 1},
		{500 * sim.Microsecond, 0},
		{10 * sim.Microsecond, -1},
	} {
		t.Run(tc.d.String(), func(t *testing.T) {
			r := newRig(t, 1, 1, func(s *generic.SoC, _ *linux.Config) {
				s.Idle = []sim.IdleState{shallow, deep}
			})
			r.e.Spawn(r.cores[0], "t", func(p *sim.Proc) { r.k.Sleep(p, tc.d) })
			r.run(t)
			c := r.cores[0]
			got := []sim.Time{c.Residency(sim.StateWFI), c.Residency(sim.StateIdle0), c.Residency(sim.StateIdle0 + 1)}
			want := make([]sim.Time, 3)
			// The hrtimer's interrupt wakes the core (WakeCycles), then
			// the state's exit runs.
			switch end := tc.d + wakeCycles*cycle; tc.state {
			case -1:
				want[0] = end
			default:
				want[1+tc.state] = end + []sim.IdleState{shallow, deep}[tc.state].Exit
			}
			if !slices.Equal(got, want) {
				t.Errorf("residency in WFI, %s, %s: %v; want %v", shallow.Name, deep.Name, got, want)
			}
		})
	}
}
