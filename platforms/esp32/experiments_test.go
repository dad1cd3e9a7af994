package esp32

import (
	"context"
	"math"
	"testing"

	"synclab/platforms"
	"synclab/sim"
)

// csRunResult maps each field of a run to its metric: a crafted result with a
// distinct value in every field, checked against hand-written expectations.
// Kills mutants that swap the cores' CPU shares, report the maximum as the
// p99 or take the worst interrupt's split from another interrupt.
func TestCSRunResultMapsEveryField(t *testing.T) {
	r := CSResult{
		TotalMS: 1240, NSPerOp: 1240e3 / 1e6 * 1e3, CPUPct: [NumCores]float64{52, 48},
		MaxIRQUS: 15, P99IRQUS: 9, IRQLatencyUS: []float64{3, 15, 9},
		ContextSwitches: 11, IPIs: 12, Handoffs: 13, SyncRAMBytes: 80, Counter: 2000, Expected: 2001,
		KernelLockSpinUS: 21, ObjectLockSpinUS: 22, EnergyMJ: 23,
		FastForward: sim.FastForwardStats{Time: 310 * sim.Millisecond},
	}
	for _, c := range BlameCauses {
		// The worst interrupt (index 1) has 100+cause for each cause.
		r.IRQBlameUS[c] = []float64{float64(c), 100 + float64(c), 50 + float64(c)}
	}
	got := csRunResult(r)
	want := map[string]float64{
		"total_ms": 1240, "ns_per_op": r.NSPerOp, "cpu_core0_pct": 52, "cpu_core1_pct": 48,
		"max_irq_latency_us": 15, "p99_irq_latency_us": 9, "context_switches": 11, "ipis": 12, "handoffs": 13,
		"sync_ram_bytes": 80, "counter": 2000, "expected_counter": 2001, "kernel_lock_spin_us": 21,
		"object_lock_spin_us": 22, "energy_mj": 23,
	}
	for _, c := range BlameCauses {
		want["worst_irq_"+c.String()+"_us"] = 100 + float64(c)
	}
	if len(got.Metrics) != len(want) {
		t.Errorf("%d metrics, want %d", len(got.Metrics), len(want))
	}
	for k, v := range want {
		if got.Metrics[k] != v {
			t.Errorf("%s = %g, want %g", k, got.Metrics[k], v)
		}
	}
	if got.Skipped != 0.25 { // 310 of 1240 ms skipped
		t.Errorf("skipped share %g, want 0.25", got.Skipped)
	}
	if s := got.Samples["irq_latency_us"]; len(s) != 3 || s[1] != 15 {
		t.Errorf("irq_latency_us samples %v", s)
	}
	// Without interrupts the worst split is zero, not a panic.
	if m := csRunResult(CSResult{}).Metrics; m["worst_irq_critical_us"] != 0 {
		t.Errorf("no interrupts: worst_irq_critical_us = %g", m["worst_irq_critical_us"])
	}
}

// Every ESP32 experiment runs at a small size through its Run function and
// reports every metric it declares, with the invariants each must keep.
func TestExperimentsReportTheirMetrics(t *testing.T) {
	small := map[string]map[string]float64{
		"esp32-critical-section": {KeyIterations: 2000},
		"esp32-notify-unblock":   {"rounds": 20},
	}
	for _, e := range Experiments() {
		if err := e.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, v := range e.Variants {
			params := e.Params.Values()
			for k, x := range small[e.Name] {
				params[k] = x
			}
			rr, err := e.Run(context.Background(), platforms.RunSpec{Experiment: e.Name, Variant: v.Name, Params: params, Seed: 3})
			if err != nil {
				t.Fatalf("%s/%s: %v", e.Name, v.Name, err)
			}
			for _, m := range e.Metrics {
				x, ok := rr.Metrics[m.Name]
				if !ok || x != x || x < 0 {
					t.Errorf("%s/%s: metric %s = %g (reported %v), want a number >= 0", e.Name, v.Name, m.Name, x, ok)
				}
			}
			m := rr.Metrics
			switch e.Name {
			case "esp32-critical-section":
				if m["counter"] != m["expected_counter"] || m["expected_counter"] != 4000 {
					t.Errorf("%s: counter %g, expected %g, want 4000 both", v.Name, m["counter"], m["expected_counter"])
				}
				if m["cpu_core0_pct"] > 100 || m["cpu_core1_pct"] > 100 || m["p99_irq_latency_us"] > m["max_irq_latency_us"] {
					t.Errorf("%s: cpu %g/%g %%, p99 %g > max %g", v.Name, m["cpu_core0_pct"], m["cpu_core1_pct"], m["p99_irq_latency_us"], m["max_irq_latency_us"])
				}
				if got := m["ns_per_op"]; math.Abs(got-m["total_ms"]*1e6/2000) > 1e-9*got {
					t.Errorf("%s: ns_per_op %g, want total_ms per iteration of one task (%g)", v.Name, got, m["total_ms"]*1e6/2000)
				}
			case "esp32-priority-inversion":
				// The holder runs at its base priority 3 unless it inherits high's 8.
				if want := map[string]float64{GuardMutex: 8, GuardBinary: 3, GuardNotify: 3}[v.Name]; m["holder_peak_priority"] != want {
					t.Errorf("%s: holder peak priority %g, want %g", v.Name, m["holder_peak_priority"], want)
				}
			}
		}
	}
}
