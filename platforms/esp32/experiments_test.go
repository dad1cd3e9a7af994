package esp32

import (
	"context"
	"math"
	"strings"
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

// runExp runs variant of the experiment named name with its defaults
// changed by set.
func runExp(t *testing.T, name, variant string, set map[string]float64) map[string]float64 {
	t.Helper()
	for _, e := range Experiments() {
		if e.Name != name {
			continue
		}
		params := e.Params.Values()
		for k, v := range set {
			params[k] = v
		}
		rr, err := e.Run(context.Background(), platforms.RunSpec{Experiment: name, Variant: variant, Params: params, Seed: 1})
		if err != nil {
			t.Fatalf("%s/%s: %v", name, variant, err)
		}
		return rr.Metrics
	}
	t.Fatalf("no experiment %s", name)
	return nil
}

// Priority inversion in microseconds, worked out by hand: high and medium
// wake one tick (10 ms at 100 Hz) after low took the resource. With the
// mutex low inherits high's priority and finishes its hold first, so high
// waits the rest of the hold; without inheritance medium's whole work comes
// before it too. Kills the metric reading cycles as microseconds (or the
// reverse), and the variants' guards swapped.
func TestPriorityInversionWaitsByHand(t *testing.T) {
	const hold, medium, tick = 30000, 5000, 10000 // us
	set := map[string]float64{"hold_us": hold, "medium_us": medium}
	mutex := runExp(t, "esp32-priority-inversion", GuardMutex, set)["high_blocked_us"]
	for _, v := range []string{GuardBinary, GuardNotify} {
		got := runExp(t, "esp32-priority-inversion", v, set)["high_blocked_us"]
		if d := got - mutex; math.Abs(d-medium) > 0.01*medium {
			t.Errorf("%s: high waits %g us, %g us more than with the mutex; want medium's %d us more", v, got, d, medium)
		}
	}
	if math.Abs(mutex-(hold-tick)) > 0.01*hold {
		t.Errorf("mutex: high waits %g us, want the rest of the hold, about %d us", mutex, hold-tick)
	}
}

// The API-paths metrics are the raw run's numbers: each spinlock section
// costs an uncontended portMUX pair, of which its S32C1I is a part, and the
// path holds more than its sections. Kills metrics swapped or multiplied by
// another count.
func TestAPIPathsMetricsFromTheRun(t *testing.T) {
	set := map[string]float64{"rounds": 50, "timeout_ticks": 3}
	for _, v := range []string{GuardNotify, GuardBinary} {
		m := runExp(t, "esp32-api-paths", v, set)
		r, err := RunAPIPaths(context.Background(), v, nil, 50, 3)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{"give_take_cycles": r.GiveTakeCycles, "lock_sections": r.LockSections,
			"spinlock_cycles": r.LockSections * r.PairCycles, "s32c1i_cycles": r.LockSections * r.S32C1ICycles,
			"timeout_returned": 0, "timeout_ticks_waited": 3}
		for k, x := range want {
			if m[k] != x {
				t.Errorf("%s: %s = %g, want %g", v, k, m[k], x)
			}
		}
		if !(m["s32c1i_cycles"] < m["spinlock_cycles"] && m["spinlock_cycles"] < m["give_take_cycles"]) {
			t.Errorf("%s: S32C1I %g, spinlock %g, path %g cycles: want S32C1I < spinlock < path", v, m["s32c1i_cycles"], m["spinlock_cycles"], m["give_take_cycles"])
		}
	}
}

// An unknown variant is an error naming it, from every experiment.
func TestExperimentsRejectUnknownVariants(t *testing.T) {
	for _, e := range Experiments() {
		_, err := e.Run(context.Background(), platforms.RunSpec{Experiment: e.Name, Variant: "no-such", Params: e.Params.Values(), Seed: 1})
		if err == nil || !strings.Contains(err.Error(), `"no-such"`) {
			t.Errorf("%s: variant no-such: error %v, want one naming it", e.Name, err)
		}
	}
}

// Of interrupts tied for the worst latency, the first one's blame split is
// reported: one interrupt's split, the earliest (a periodic run repeats its
// worst latency, and another tied interrupt may split it otherwise).
func TestWorstIRQSplitIsTheFirstOfTies(t *testing.T) {
	r := CSResult{IRQLatencyUS: []float64{4, 9, 2, 9}}
	for _, c := range BlameCauses {
		r.IRQBlameUS[c] = []float64{1, 100 + float64(c), 2, 200 + float64(c)}
	}
	m := csRunResult(r).Metrics
	for _, c := range BlameCauses {
		if k := "worst_irq_" + c.String() + "_us"; m[k] != 100+float64(c) {
			t.Errorf("%s = %g, want %g (interrupt 1, the first of the two at 9 us)", k, m[k], 100+float64(c))
		}
	}
}
