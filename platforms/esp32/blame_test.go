package esp32

import (
	"context"
	"fmt"
	"math"
	"testing"

	"synclab/sim"
)

// Each peripheral interrupt's latency splits exactly into its causes, and
// only the interrupt's own entry is left to the "entry" cause: every other
// stretch of latency is a masked section or an access in flight that the
// log names. An access in flight delays an interrupt by at most its own
// stall (behind at most one access of the other core), and the interrupt is
// taken at the boundary right after it: never also held by a masked section
// that follows (the RSIL of a critical section after a store).
func TestIRQBlameAddsUpToLatency(t *testing.T) {
	clk := sim.Clock{Hz: 240_000_000}
	entry := clk.Cycles(150).Micros() // irq_entry_cycles at 240 MHz
	for _, tc := range []struct {
		name    string
		variant string
		sramLat float64 // sram_latency_cycles
		// longest in-flight share: an SRAM access (sram_latency_cycles, a
		// port occupancy of 1, 2 for S32C1I) queued behind one of the
		// other core.
		maxInFlight float64
		// wantInFlight: accesses long enough that some interrupt must
		// arrive during one (the in-flight path is exercised).
		wantInFlight bool
	}{
		{"notify", VariantNotify, 1, clk.Cycles(6).Micros(), false},
		{"mutex", VariantMutex, 1, clk.Cycles(6).Micros(), false},
		// The mutex's tasks run unmasked between their sections, where a
		// slow access is long enough to be caught in flight (the notify
		// handshake's few unmasked accesses escape every interrupt here).
		{"mutex/slow-sram", VariantMutex, 20, clk.Cycles(2 * (20 + 2)).Micros(), true},
	} {
		// Three seeds: whether an interrupt lands in one of the few
		// unmasked accesses depends on the phase of the hand-offs.
		inFlight := 0
		for seed := uint64(1); seed <= 3; seed++ {
			inFlight += checkIRQBlame(t, fmt.Sprintf("%s/seed %d", tc.name, seed), tc.variant, tc.sramLat, tc.maxInFlight, entry, seed)
		}
		if tc.wantInFlight && inFlight == 0 {
			t.Errorf("%s: no interrupt arrived during an SRAM access (%g cycles each) in 3 seeds: the in-flight path is untested", tc.name, tc.sramLat)
		}
	}
}

// checkIRQBlame runs the variant and checks each interrupt's causes (see
// TestIRQBlameAddsUpToLatency); it returns how many were held by an access
// in flight.
func checkIRQBlame(t *testing.T, name, variant string, sramLat, maxInFlight, entry float64, seed uint64) (inFlight int) {
	t.Helper()
	r, err := RunCriticalSection(context.Background(), variant,
		map[string]float64{KeyIterations: 20000, KeySRAMLatency: sramLat}, seed, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.IRQLatencyUS) < 10 {
		t.Fatalf("%s: %d peripheral interrupts, want >= 10", name, len(r.IRQLatencyUS))
	}
	var masked float64
	for i, l := range r.IRQLatencyUS {
		var sum float64
		for c := range r.IRQBlameUS {
			sum += r.IRQBlameUS[c][i]
		}
		if math.Abs(sum-l) > 1e-6 {
			t.Fatalf("%s: interrupt %d: causes add up to %.6f us, latency %.6f us", name, i, sum, l)
		}
		e := r.IRQBlameUS[BlameEntry][i]
		if math.Abs(e-entry) > 1e-6 {
			t.Errorf("%s: interrupt %d: entry share %.4f us, want the entry cost %.4f us", name, i, e, entry)
		}
		if f := r.IRQBlameUS[BlameInFlight][i]; f > 0 {
			inFlight++
			if f > maxInFlight+1e-6 {
				t.Errorf("%s: interrupt %d: in-flight share %.4f us, longer than one access (%.4f us)", name, i, f, maxInFlight)
			}
			if rest := l - f - e; rest > 1e-6 {
				t.Errorf("%s: interrupt %d: %.4f us of other causes after an access in flight: not taken at the next instruction boundary", name, i, rest)
			}
		}
		masked += l - e - r.IRQBlameUS[BlameInFlight][i]
	}
	if masked <= 0 {
		t.Errorf("%s: no latency blamed on a masked section", name)
	}
	return inFlight
}

// The trace covers the window asked for, not the run's start.
func TestTraceWindow(t *testing.T) {
	r, err := RunCriticalSection(context.Background(), VariantNotify,
		map[string]float64{KeyIterations: 2000, KeyTraceFrom: 5, KeyTraceSpan: 1}, 1, RunOptions{Trace: true})
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
