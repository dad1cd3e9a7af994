package esp32

import (
	"context"
	"math"
	"testing"

	"synclab/sim"
)

// Each peripheral interrupt's latency splits exactly into its causes, and
// only the interrupt's own entry is left to the "entry" cause: every other
// stretch of latency is a masked section the log names.
func TestIRQBlameAddsUpToLatency(t *testing.T) {
	entry := sim.Clock{Hz: 240_000_000}.Cycles(150).Micros() // irq_entry_cycles at 240 MHz
	for _, v := range []string{VariantNotify, VariantMutex} {
		r, err := RunCriticalSection(context.Background(), v, map[string]float64{KeyIterations: 20000}, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.IRQLatencyUS) < 10 {
			t.Fatalf("%s: %d peripheral interrupts, want >= 10", v, len(r.IRQLatencyUS))
		}
		var masked float64
		for i, l := range r.IRQLatencyUS {
			var sum float64
			for c := range r.IRQBlameUS {
				sum += r.IRQBlameUS[c][i]
			}
			if math.Abs(sum-l) > 1e-6 {
				t.Fatalf("%s: interrupt %d: causes add up to %.6f us, latency %.6f us", v, i, sum, l)
			}
			if e := r.IRQBlameUS[BlameEntry][i]; math.Abs(e-entry) > 1e-6 {
				t.Errorf("%s: interrupt %d: entry share %.4f us, want the entry cost %.4f us", v, i, e, entry)
			}
			masked += l - r.IRQBlameUS[BlameEntry][i]
		}
		if masked <= 0 {
			t.Errorf("%s: no latency blamed on a masked section", v)
		}
	}
}

// The trace covers the window asked for, not the run's start.
func TestTraceWindow(t *testing.T) {
	r, err := RunCriticalSection(context.Background(), VariantNotify,
		map[string]float64{KeyIterations: 2000, KeyTraceFrom: 5, KeyTraceSpan: 1}, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Trace.Spans) == 0 {
		t.Fatal("no spans in [5 ms, 6 ms)")
	}
	for _, s := range r.Trace.Spans {
		if s.End <= 5*sim.Millisecond || s.Start >= 6*sim.Millisecond {
			t.Fatalf("span %+v outside [5 ms, 6 ms)", s)
		}
	}
}
