package generic_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"synclab/platforms/generic"
	"synclab/sim"
)

// tmpl is a 1 GHz core type with two OPPs; base the rest of a part.
var (
	tmpl = generic.Cluster{Name: "c", Core: "X1", OPPs: []generic.OPP{{MHz: 500, MilliVolt: 800}, {MHz: 1000, MilliVolt: 1000}},
		MHz: 1000, DynCoeff: 200, StaticMW: 10, SpinShare: 0.5, IRQEntry: 300, IRQExit: 200, WakeCycles: 30, HitCycles: 4}
	base = generic.SoC{LineSize: 64, SameCluster: 100 * sim.Nanosecond, OtherCluster: 250 * sim.Nanosecond, DRAM: 120 * sim.Nanosecond,
		Idle: []sim.IdleState{{Name: "sleep", Entry: sim.Microsecond, Exit: sim.Microsecond, MinResidency: 10 * sim.Microsecond}}, EventStream: 100 * sim.Microsecond}
)

func nCore(t *testing.T, n, per int) generic.SoC {
	t.Helper()
	s, err := generic.NCore("test", n, per, tmpl, base)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// NCore cuts n cores into clusters of perCluster, the last taking the rest,
// named after the template; Build numbers the cores cluster by cluster, so
// core i sits in cluster i/perCluster.
// Kills: a last cluster of perCluster cores (n not kept), a cluster index
// of 0 for every core, cores numbered across clusters.
func TestNCoreTopology(t *testing.T) {
	for _, tc := range []struct {
		n, per int
		sizes  []int
	}{{1, 4, []int{1}}, {6, 4, []int{4, 2}}, {8, 4, []int{4, 4}}, {5, 2, []int{2, 2, 1}}, {3, 8, []int{3}}} {
		s := nCore(t, tc.n, tc.per)
		var sizes []int
		for i, c := range s.Clusters {
			sizes = append(sizes, c.Cores)
			if c.Name != fmt.Sprintf("c%d", i) {
				t.Errorf("n=%d per=%d: cluster %d named %q, want c%d", tc.n, tc.per, i, c.Name, i)
			}
		}
		if !slices.Equal(sizes, tc.sizes) || s.NumCores() != tc.n || s.Name != "test" {
			t.Errorf("n=%d per=%d: %q with clusters %v (%d cores), want test with %v", tc.n, tc.per, s.Name, sizes, s.NumCores(), tc.sizes)
		}
		e := sim.NewEngine(1)
		cores, _, err := s.Build(e, tc.n, 0x1000, 4096)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cores {
			if c.ID != i || c.Cfg.Cluster != i/tc.per {
				t.Errorf("n=%d per=%d: core %d has ID %d in cluster %d, want cluster %d", tc.n, tc.per, i, c.ID, c.Cfg.Cluster, i/tc.per)
			}
		}
		e.Close()
	}
}

// NCore and Clone copy what they share: changing the result's OPPs or idle
// states leaves the template and the base as they were.
// Kills: a shallow copy of OPPs or Idle.
func TestNCoreAndCloneCopy(t *testing.T) {
	s := nCore(t, 4, 2)
	c := s.Clone()
	s.Clusters[0].OPPs[0].MHz, s.Idle[0].Name = 1, "changed"
	c.Clusters[1].OPPs[1].MHz = 2
	if tmpl.OPPs[0].MHz != 500 || base.Idle[0].Name != "sleep" || s.Clusters[1].OPPs[0].MHz != 500 || c.Clusters[0].OPPs[0].MHz != 500 ||
		c.Idle[0].Name != "sleep" || s.Clusters[1].OPPs[1].MHz != 1000 {
		t.Errorf("a change to one copy showed in another: template %v, base idle %q, clone %v / %q, source %v",
			tmpl.OPPs, base.Idle[0].Name, c.Clusters[0].OPPs, c.Idle[0].Name, s.Clusters[1].OPPs)
	}
}

// A line moves in SameCluster between cores of one cluster and in
// OtherCluster across; its first touch fills from DRAM and a re-read hits
// (HitCycles). Cores 0-1 and 2-3 form the two clusters: core 0 writes, 0
// re-reads, 1 reads, 2 writes, 3 reads, 0 reads, each step run alone.
// Kills: the latencies swapped, every core in one cluster.
func TestBuildLatencies(t *testing.T) {
	e := sim.NewEngine(1)
	defer e.Close()
	cores, _, err := nCore(t, 4, 2).Build(e, 4, 0x1000, 4096)
	if err != nil {
		t.Fatal(err)
	}
	const a = sim.Addr(0x1000)
	type step struct {
		core  int
		write bool
		want  sim.Time
	}
	steps := []step{{0, true, base.DRAM}, {0, false, 4 * sim.Nanosecond}, {1, false, base.SameCluster},
		{2, true, base.OtherCluster}, {3, false, base.SameCluster}, {0, false, base.OtherCluster}}
	took := make([]sim.Time, len(steps))
	for i, st := range steps {
		e.Spawn(cores[st.core], fmt.Sprint("step", i), func(p *sim.Proc) {
			t0 := p.Now()
			if st.write {
				p.Store(a, uint64(i))
			} else {
				p.Load(a)
			}
			took[i] = p.Now() - t0
		})
		if err := e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for i, st := range steps {
		if took[i] != st.want {
			t.Errorf("step %d (core %d, write %v) took %v, want %v", i, st.core, st.write, took[i], st.want)
		}
	}
}

// A core runs at its cluster's selected OPP: Hz is the OPP's frequency and
// busy power the energy model's DynCoeff*V^2*MHz/1000 plus leakage; a
// busy-wait draws leakage plus SpinShare of the dynamic part, WFE and WFI
// leakage only. The cycle costs, the prefetch's upgrade and the event
// stream pass through.
// Kills: the voltage of another OPP, V instead of V^2, a missing /1000,
// SpinShare applied to leakage, a dropped field.
func TestCoreConfigFollowsTheOPP(t *testing.T) {
	for _, tc := range []struct {
		mhz  int64
		busy float64 // 200 * V^2 * MHz / 1000 + 10
	}{{1000, 200*1.0*1.0*1000/1000 + 10}, {500, 200*0.8*0.8*500/1000 + 10}} {
		s := nCore(t, 4, 2)
		s.Clusters[1].MHz = tc.mhz
		s.Clusters[1].PrefetchUpgrade = true
		cfg, err := s.CoreConfig(1, 3)
		if err != nil {
			t.Fatal(err)
		}
		spin := 10 + (tc.busy-10)*0.5
		if math.Abs(cfg.ExecMW-tc.busy) > 1e-9 || math.Abs(cfg.SpinMW-spin) > 1e-9 {
			t.Errorf("%d MHz: busy %v mW, spinning %v mW; want %v, %v", tc.mhz, cfg.ExecMW, cfg.SpinMW, tc.busy, spin)
		}
		cfg.ExecMW, cfg.SpinMW = 0, 0
		want := sim.CoreConfig{Name: "cpu3 (X1)", Cluster: 1, Hz: tc.mhz * 1_000_000, WFEMW: 10, WFIMW: 10, Idle: base.Idle,
			IRQEntry: 300, IRQExit: 200, WakeCycles: 30, HitCycles: 4, PrefetchUpgrade: true, EventStream: base.EventStream}
		if !reflect.DeepEqual(cfg, want) {
			t.Errorf("%d MHz: config\n%+v\nwant\n%+v", tc.mhz, cfg, want)
		}
	}
}

// Bad input is an error naming the field and its value.
func TestErrorsNameTheField(t *testing.T) {
	soc := func(change func(s *generic.SoC)) func() error {
		return func() error {
			s := nCore(t, 4, 2)
			change(&s)
			return s.Validate()
		}
	}
	build := func(n int) func() error {
		return func() error {
			e := sim.NewEngine(1)
			defer e.Close()
			_, _, err := nCore(t, 4, 2).Build(e, n, 0x1000, 4096)
			return err
		}
	}
	ncore := func(n, per int) func() error {
		return func() error { _, err := generic.NCore("big", n, per, tmpl, base); return err }
	}
	for _, tc := range []struct {
		err  func() error
		want string
	}{
		{soc(func(s *generic.SoC) { s.Clusters = nil }), "Clusters is empty"},
		{soc(func(s *generic.SoC) { s.LineSize = 48 }), "LineSize = 48"},
		{soc(func(s *generic.SoC) { s.OtherCluster = 0 }), "OtherCluster 0"},
		{soc(func(s *generic.SoC) { s.EventStream = -sim.Microsecond }), "EventStream = -1us"},
		{soc(func(s *generic.SoC) { s.Clusters[1].Cores = 0 }), `cluster "c1": Cores = 0`},
		{soc(func(s *generic.SoC) { s.Clusters[0].StaticMW = -1 }), "StaticMW = -1"},
		{soc(func(s *generic.SoC) { s.Clusters[0].SpinShare = 1.5 }), "SpinShare = 1.5"},
		{soc(func(s *generic.SoC) { s.Clusters[1].MHz = 700 }), `cluster "c1": MHz = 700 is not an OPP; choose one of 500, 1000`},
		{soc(func(s *generic.SoC) { s.Clusters[0].Cores = 63 }), "65 cores"},
		{build(0), "cores = 0 out of range [1, 4]"},
		{build(5), "cores = 5 out of range [1, 4]"},
		{ncore(0, 4), "n = 0"},
		{ncore(65, 4), "n = 65"},
		{ncore(8, 0), "perCluster = 0"},
	} {
		if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}

// Build hands MonitorLoss to the memory: another core's prefetch for store
// wakes a WFE waiter with it, and only the store 4 µs later does without.
func TestBuildMonitorLoss(t *testing.T) {
	for _, loss := range []bool{false, true} {
		s := nCore(t, 2, 2)
		s.MonitorLoss = loss
		e := sim.NewEngine(1)
		cores, _, err := s.Build(e, 2, 0x1000, 4096)
		if err != nil {
			t.Fatal(err)
		}
		var woke sim.Time
		e.Spawn(cores[0], "waiter", func(p *sim.Proc) {
			p.LoadExclusive(0x1000)
			p.WFE()
			woke = p.Now()
		})
		e.Spawn(cores[1], "other", func(p *sim.Proc) {
			p.Delay(sim.Microsecond)
			p.PrefetchStore(0x1000)
			p.Delay(4 * sim.Microsecond)
			p.Store(0x1000, 1)
		})
		if err := e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if early := woke < 2*sim.Microsecond; early != loss {
			t.Errorf("MonitorLoss %v: the waiter woke at %v", loss, woke)
		}
	}
}
