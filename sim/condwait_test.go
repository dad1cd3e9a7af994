package sim

import (
	"context"
	"fmt"
	"testing"
)

// condLoop is smp_cond_load_acquire as the loop Linux's arm64 code runs:
// load and test, then sevl; wfe; ldxr and a WFE (WFET with a timeout) if
// the word is unchanged, or with monitor false a plain WFE. With settle,
// the loop hands over to CondWait after the first failed test.
func condLoop(p *Proc, a Addr, cond func(uint64) bool, monitor bool, timeout Time, count func(), settle bool) uint64 {
	sleep := func() {
		if timeout > 0 {
			p.WFET(p.Now() + timeout)
			return
		}
		p.WFE()
	}
	for {
		count()
		v := p.Load(a)
		if cond(v) {
			return v
		}
		if settle {
			return p.CondWait(a, v, cond, monitor, timeout, count)
		}
		if !monitor {
			sleep()
			continue
		}
		p.SEVL()
		p.WFE()
		count()
		if p.LoadExclusive(a) == v {
			sleep()
		}
	}
}

// condRun runs a ticket lock on four cores whose waiters wait with
// condLoop (settled or not; every wait through Run with viaRun) and
// describes the run: its digest, events,
// end, every core's count of accesses, the result, and the wake-ups
// settled without a switch.
func condRun(t *testing.T, monitor bool, timeout Time, irqs, stream, settle, viaRun bool) (string, uint64) {
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
				condLoop(p, owner, func(v uint64) bool { return v == me }, monitor, timeout,
					func() { accesses[p.Core().ID]++ }, settle)
				p.Store(count, p.Load(count)+1)
				p.Compute(int64(200 + 70*c.ID))
				p.Store(owner, me+1)
				if !monitor {
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
// and without the exclusive monitor, WFET's timeout, interrupts and the
// event stream, its steps run from waiting processes (Proc.await) or Run. And it does settle wake-ups without a switch.
func TestCondWaitMatchesExplicitLoop(t *testing.T) {
	for _, tc := range []struct {
		name         string
		monitor      bool
		timeout      Time
		irqs, stream bool
		viaRun       bool
	}{
		{name: "monitor", monitor: true},
		{name: "monitor-wfet", monitor: true, timeout: 700 * Nanosecond},
		{name: "monitor-irqs-stream", monitor: true, irqs: true, stream: true},
		{name: "monitor-irqs-through-run", monitor: true, irqs: true, viaRun: true},
		{name: "sev", monitor: false},
		{name: "sev-irqs-wfet", monitor: false, timeout: 2 * Microsecond, irqs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loop, _ := condRun(t, tc.monitor, tc.timeout, tc.irqs, tc.stream, false, false)
			settled, n := condRun(t, tc.monitor, tc.timeout, tc.irqs, tc.stream, true, tc.viaRun)
			if settled != loop {
				t.Errorf("CondWait:\n%s\nexplicit loop:\n%s", settled, loop)
			}
			if n == 0 {
				t.Errorf("no wake-up settled without a switch: the test proves nothing")
			}
		})
	}
}
