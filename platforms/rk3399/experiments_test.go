package rk3399

import (
	"context"
	"maps"
	"math"
	"testing"

	"synclab/platforms"
	"synclab/platforms/generic"
	"synclab/platforms/linux"
	"synclab/sim"
)

// metrics maps a run's books to the experiment's metrics: a crafted result
// checked against hand-computed values. Kills mutants that report the
// maximum as the p99, swap counters or divide by the wrong total.
func TestMetricsFromACraftedRun(t *testing.T) {
	r := Result{
		Ops: 4000, Contended: 1000, Counter: 3999, Elapsed: 2 * sim.Second,
		EnergyMJ: 3000, PowerMW: 1500, WaitTime: 3 * sim.Second / 10,
		Wakeups: map[string]int{sim.WakeEvent.String(): 11, sim.WakeEventStream.String(): 12}, Ticks: 13,
	}
	for i := 100; i >= 1; i-- { // 1..100 us, largest first
		r.Waits.Add(sim.Time(i) * sim.Microsecond)
	}
	r.IRQWaits.Add(30 * sim.Microsecond)
	r.IRQWaits.Add(7 * sim.Microsecond)
	m := metrics(Workload{Cores: 3}, r)
	want := map[string]float64{
		"avg_lock_wait_ms": 0.0505, "max_lock_wait_ms": 0.1, "throughput_ops_s": 2000,
		"power_mw": 1500, "energy_mj": 3000, "stall_pct": 5, // 0.3 s of 3 cores x 2 s
		"contended_pct": 25, "irq_max_wait_us": 30, "counter": 3999, "expected_counter": 4000,
		"wakeups_event": 11, "wakeups_event_stream": 12, "ticks": 13,
	}
	for k, v := range want {
		if math.Abs(m[k]-v) > 1e-12*math.Abs(v) {
			t.Errorf("%s = %g, want %g", k, m[k], v)
		}
	}
	// The 99th percentile of 1..100 us is 99.01 us (type 7), not the
	// maximum, within the histogram's error.
	if p := m["p99_lock_wait_ms"]; math.Abs(p-0.09901) > sim.HistogramError*0.09901 {
		t.Errorf("p99_lock_wait_ms = %g, want 0.09901 within %.2g%%", p, 100*sim.HistogramError)
	}
	if len(m) != len(want)+1 {
		t.Errorf("%d metrics, want %d", len(m), len(want)+1)
	}
}

// Each experiment runs briefly through its Run function and reports every
// metric it declares; lock-scaling builds as many cores as asked (one core
// never contends, four do).
func TestExperimentsReportTheirMetrics(t *testing.T) {
	for _, e := range Experiments() {
		if err := e.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, v := range e.Variants {
			params := e.PointParams(0)
			params["duration_ms"] = 20
			rr, err := e.Run(context.Background(), platforms.RunSpec{Experiment: e.Name, Variant: v.Name, Params: params, Seed: 2})
			if err != nil {
				t.Fatalf("%s/%s: %v", e.Name, v.Name, err)
			}
			for _, m := range e.Metrics {
				if x, ok := rr.Metrics[m.Name]; !ok || x != x && m.None == "" || x < 0 {
					t.Errorf("%s/%s: metric %s = %g (reported %v), want a number >= 0", e.Name, v.Name, m.Name, x, ok)
				}
			}
			if m := rr.Metrics; m["counter"] != m["expected_counter"] || m["p99_lock_wait_ms"] > m["max_lock_wait_ms"] {
				t.Errorf("%s/%s: counter %g of %g, p99 %g > max %g", e.Name, v.Name, m["counter"], m["expected_counter"], m["p99_lock_wait_ms"], m["max_lock_wait_ms"])
			}
		}
	}
	scaling := lockScaling()
	contended := func(cores float64) (pct, handoff float64) {
		params := scaling.PointParams(0)
		params["duration_ms"], params["cores"] = 5, cores
		rr, err := scaling.Run(context.Background(), platforms.RunSpec{Experiment: scaling.Name, Variant: "ticket", Params: params, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return rr.Metrics["contended_pct"], rr.Metrics["handoff_ns"]
	}
	// One core has no hand-off to time: handoff_ns is none (NaN), not 0 ns.
	if one, ho1 := contended(1); one != 0 || !math.IsNaN(ho1) {
		t.Errorf("lock-scaling on 1 core: contended_pct %g%% (want 0), handoff_ns %g (want NaN: none)", one, ho1)
	}
	if four, ho4 := contended(4); four <= 0 || !(ho4 > 0) {
		t.Errorf("lock-scaling on 4 cores: contended_pct %g%%, handoff_ns %g (want both > 0)", four, ho4)
	}
}

// lock-scaling's handoff_ns is the mean of the run's hand-offs, in ns: the
// same run built by hand (the RK3399's A72 cluster replicated by
// generic.NCore, the workload from the same values) gives the histogram
// it must be the mean of. Its hand-offs vary (a ticket lock's next holder
// sits anywhere in the queue of re-reads), so the mean is neither the
// minimum nor the maximum.
func TestLockScalingHandoffIsTheMean(t *testing.T) {
	e := lockScaling()
	v := e.PointParams(0)
	v["cores"], v["duration_ms"] = 8, 5
	rr, err := e.Run(context.Background(), platforms.RunSpec{Experiment: e.Name, Variant: string(linux.Ticket), Params: v, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	pv := Defaults()
	maps.Copy(pv, v)
	rk, err := SoC(pv)
	if err != nil {
		t.Fatal(err)
	}
	soc, err := generic.NCore("generic-8", 8, 4, rk.Clusters[1], rk)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Build(v, soc, linux.Ticket, linux.Mode(int(v["wait"])))
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.Run(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	h := &r.Handoffs
	if h.Count() < 100 || h.Min() == h.Max() {
		t.Fatalf("%d hand-offs from %v to %v: the test needs many, of varying length", h.Count(), h.Min(), h.Max())
	}
	if got, want := rr.Metrics["handoff_ns"], h.Mean().Nanos(); got != want || r.Ops != int(rr.Metrics["expected_counter"]) {
		t.Errorf("handoff_ns = %g, want the mean %g ns (min %v, max %v); ops %d vs %g: not the same run?",
			got, want, h.Min(), h.Max(), r.Ops, rr.Metrics["expected_counter"])
	}
	if want := float64(h.Sum()) / float64(h.Count()) / float64(sim.Nanosecond); rr.Metrics["handoff_ns"] < want-1e-3 || rr.Metrics["handoff_ns"] > want+1e-3 {
		t.Errorf("handoff_ns = %g, want sum/count = %g", rr.Metrics["handoff_ns"], want)
	}
}
