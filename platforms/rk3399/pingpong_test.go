package rk3399

import (
	"context"
	"math"
	"strings"
	"testing"

	"synclab/platforms"
)

func runExp(t *testing.T, e platforms.Experiment, variant string, sets ...string) map[string]float64 {
	t.Helper()
	e, err := e.WithSettings(sets...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background(), platforms.RunSpec{Experiment: e.Name, Variant: variant, Params: e.Params.Values(), Seed: e.Seed})
	if err != nil {
		t.Fatal(err)
	}
	return r.Metrics
}

// TestPingPongHops: one hop of the word costs one line transfer with an LSE
// CAS and two with LL/SC (the LDXR's re-read, then the STXR's upgrade of the
// shared line) or a plain load and store, at the distance of the pinned pair.
func TestPingPongHops(t *testing.T) {
	for _, tc := range []struct {
		exp      platforms.Experiment
		variant  string
		sets     []string
		hops     float64
		transfer float64 // ns
	}{
		{pingPong(), PingCAS, []string{"cpu_a=4", "cpu_b=5"}, 1, 100},
		{pingPong(), PingLLSC, []string{"cpu_a=4", "cpu_b=5"}, 2, 100},
		{pingPong(), PingCAS, []string{"cpu_a=0", "cpu_b=3", "same_cluster_ns=70"}, 1, 70},
		{pingPong(), PingLLSC, []string{"cpu_a=1", "cpu_b=5"}, 2, 250},
		{pingPong(), PingLdSt, []string{"cpu_a=4", "cpu_b=5"}, 2, 100},
		{pingPong(), PingLdSt, []string{"cpu_a=1", "cpu_b=5"}, 2, 250},
		{genericPingPong(), PingCAS, []string{"soc_cores=8", "cpu_a=0", "cpu_b=6", "cross_cluster_ns=300"}, 1, 300},
		{genericPingPong(), PingLLSC, []string{"soc_cores=8", "cpu_a=4", "cpu_b=7"}, 2, 100},
	} {
		m := runExp(t, tc.exp, tc.variant, tc.sets...)
		if math.Abs(m["transfers_per_hop"]-tc.hops) > 0.01 {
			t.Errorf("%s %s %v: %g transfers per hop, want %g", tc.exp.Name, tc.variant, tc.sets, m["transfers_per_hop"], tc.hops)
		}
		// The rest of a hop is a few L1 hits and loop iterations: under 10 ns.
		if d := m["one_way_ns"] - tc.hops*tc.transfer; d < 0 || d > 10 {
			t.Errorf("%s %s %v: one way %g ns, want %g transfers of %g ns plus < 10 ns", tc.exp.Name, tc.variant, tc.sets, m["one_way_ns"], tc.hops, tc.transfer)
		}
		if m["round_trip_ns"] != 2*m["one_way_ns"] {
			t.Errorf("round trip %g is not twice one way %g", m["round_trip_ns"], m["one_way_ns"])
		}
	}
}

func TestPingPongBadPair(t *testing.T) {
	for _, tc := range []struct {
		exp  platforms.Experiment
		sets []string
	}{
		{pingPong(), []string{"cpu_a=3", "cpu_b=3"}},
		{genericPingPong(), []string{"soc_cores=4", "cpu_a=0", "cpu_b=9"}},
	} {
		e, err := tc.exp.WithSettings(tc.sets...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Run(context.Background(), platforms.RunSpec{Variant: PingCAS, Params: e.Params.Values(), Seed: 1})
		if err == nil || !strings.Contains(err.Error(), "two different CPUs") {
			t.Errorf("%s %v: error %v, want one naming the pair", e.Name, tc.sets, err)
		}
	}
	// The RK3399 has six CPUs: a seventh is refused before any run.
	if _, err := pingPong().WithSettings("cpu_b=6"); err == nil || !strings.Contains(err.Error(), "parameter cpu_b: value 6 out of range [0, 5]") {
		t.Errorf("cpu_b=6: error %v, want it out of range", err)
	}
	e := pingPong()
	if _, err := e.Run(context.Background(), platforms.RunSpec{Variant: "swap", Params: e.Params.Values(), Seed: 1}); err == nil || !strings.Contains(err.Error(), `variant "swap"`) {
		t.Errorf("unknown variant: %v", err)
	}
}
