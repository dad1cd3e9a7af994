package sim

import (
	"context"
	"testing"
)

// rig builds an engine with n identical 1 GHz cores (1 cycle = 1 ns), cores
// 0-1 in cluster 0 and 2-3 in cluster 1, and one 4 KiB region at 0x1000.
type rig struct {
	e *Engine
	m *Memory
}

const (
	ramBase  Addr = 0x1000
	sameLat       = 50 * Nanosecond
	otherLat      = 200 * Nanosecond
	dramLat       = 100 * Nanosecond
)

func newRig(t testing.TB, n int, uncached bool, tweak func(*CoreConfig)) rig {
	t.Helper()
	return newRigCoherence(t, n, uncached, tweak, Coherence{LineSize: 64, SameCluster: sameLat, OtherCluster: otherLat})
}

// newRigCoherence is newRig with the coherence configuration coh.
func newRigCoherence(t testing.TB, n int, uncached bool, tweak func(*CoreConfig), coh Coherence) rig {
	t.Helper()
	e := NewEngine(7)
	for i := 0; i < n; i++ {
		cfg := CoreConfig{Name: "cpu", Cluster: i / 2, Hz: 1_000_000_000, ExecMW: 100, SpinMW: 90, WFEMW: 10, WFIMW: 5,
			IRQEntry: 10, IRQExit: 10, WakeCycles: 5, HitCycles: 1}
		if tweak != nil {
			tweak(&cfg)
		}
		if _, err := e.AddCore(cfg); err != nil {
			t.Fatal(err)
		}
	}
	m, err := e.NewMemory(coh)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddRegion(Region{Name: "ram", Base: ramBase, Size: 4096, Uncached: uncached, Latency: dramLat, Occupancy: 20 * Nanosecond}); err != nil {
		t.Fatal(err)
	}
	return rig{e, m}
}

func (r rig) run(t testing.TB) {
	t.Helper()
	if err := r.e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// spinLock takes the test-and-test-and-set spinlock at a (0 free, else
// the holder's me): spin until it looks free, then try to take it.
func spinLock(p *Proc, a Addr, loop int64, me uint64) {
	for {
		p.SpinUntil(a, loop, func(v uint64) bool { return v == 0 })
		if _, ok := p.CAS(a, 0, me); ok {
			return
		}
	}
}
