package sim

import (
	"context"
	"testing"
)

func newTestEngine(t testing.TB, cores int, uncached bool) (*Engine, *Memory) {
	t.Helper()
	e := NewEngine(1)
	for i := 0; i < cores; i++ {
		if _, err := e.AddCore(CoreConfig{Name: "c", Cluster: i / 4, Hz: 1_000_000_000, ExecMW: 100, SpinMW: 100, WFEMW: 10, WFIMW: 10,
			IRQEntry: 10, IRQExit: 10, WakeCycles: 5, HitCycles: 1}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := e.NewMemory(Coherence{LineSize: 64, SameCluster: 50 * Nanosecond, OtherCluster: 200 * Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddRegion(Region{Name: "ram", Base: 0x1000, Size: 4096, Uncached: uncached, Latency: 10 * Nanosecond, Occupancy: 5 * Nanosecond}); err != nil {
		t.Fatal(err)
	}
	return e, m
}

func TestSmokeCounter(t *testing.T) {
	for _, uncached := range []bool{false, true} {
		e, m := newTestEngine(t, 4, uncached)
		os := &SpinLocks{Addr: map[string]Addr{"l": 0x1000}, Loop: 10}
		prog := Program{Name: "inc", Ops: []Op{Loop(1000, Lock("l"), Read(0x1040), Atomic(0x1040, 1), Compute(20), Unlock("l"), Compute(50))}}
		for _, c := range e.Cores() {
			e.Spawn(c, "w", func(p *Proc) {
				if err := p.Exec(prog, os); err != nil {
					p.Fail(err)
				}
			})
		}
		if err := e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := m.Peek(0x1040); got != 4000 {
			t.Fatalf("uncached=%v counter = %d, want 4000", uncached, got)
		}
		t.Logf("uncached=%v: %v, %d events", uncached, e.Now(), e.Events())
	}
}
