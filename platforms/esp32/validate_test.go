package esp32

import (
	"context"
	"fmt"
	"math"
	"testing"

	"synclab/platforms"
)

func idfPerfAt(t *testing.T, sets ...string) map[string]float64 {
	t.Helper()
	e, err := idfPerf().WithSettings(sets...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background(), platforms.RunSpec{Variant: "test-apps", Params: e.Params.Values(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return r.Metrics
}

// TestIDFPerfPaths: each timed path is made of the parameters it should be,
// and moves one for one with them.
func TestIDFPerfPaths(t *testing.T) {
	base := idfPerfAt(t)
	// Interrupt entry is irq_entry_cycles and nothing else.
	if base["isr_enter_cycles"] != 150 {
		t.Errorf("isr_enter_cycles = %g, want irq_entry_cycles 150", base["isr_enter_cycles"])
	}
	// A portMUX pair is spinlock_pair_cycles plus its few SRAM accesses
	// (read, S32C1I, the assert reads, the release store: at most 20 cycles).
	if d := base["portmux_pair_cycles"] - 120; d <= 0 || d > 20 {
		t.Errorf("portmux_pair_cycles = %g, want 120 plus 1-20 cycles of SRAM accesses", base["portmux_pair_cycles"])
	}
	// The yield path holds at least the selection and the switch.
	if base["scheduling_cycles"] < 150+1000 {
		t.Errorf("scheduling_cycles = %g, below switch_select + switch_save_restore", base["scheduling_cycles"])
	}
	if base["isr_exit_cycles"] < 150+160 {
		t.Errorf("isr_exit_cycles = %g, below irq_exit + sem_take_body", base["isr_exit_cycles"])
	}
	for _, tc := range []struct {
		set, metric string
		delta       float64
	}{
		{"irq_entry_cycles=250", "isr_enter_cycles", 100},
		{"spinlock_pair_cycles=220", "portmux_pair_cycles", 100},
		{"spinlock_pair_cycles=121", "portmux_pair_cycles", 1},        // an odd pair splits between enter and exit, whole
		{"switch_save_restore_cycles=1100", "scheduling_cycles", 100}, // ± a tick landing in one of 1000 intervals
		{"irq_exit_cycles=250", "isr_exit_cycles", 100},
		{"sem_take_body_cycles=260", "isr_exit_cycles", 100},
	} {
		if got := idfPerfAt(t, tc.set)[tc.metric] - base[tc.metric]; math.Abs(got-tc.delta) > 5 || tc.metric != "scheduling_cycles" && math.Abs(got-tc.delta) > 0.01 { // pieces round to the picosecond
			t.Errorf("%s moves %s by %g cycles, want %g", tc.set, tc.metric, got, tc.delta)
		}
	}
	e := idfPerf()
	if _, err := e.Run(context.Background(), platforms.RunSpec{Variant: "x", Params: e.Params.Values()}); err == nil {
		t.Error("unknown variant accepted")
	}
}

// TestPingPongS32C1I: a hop is at least the S32C1I's hold of the SRAM port
// (twice the occupancy of a plain access) and grows with it.
func TestPingPongS32C1I(t *testing.T) {
	prev := 0.0
	for _, occ := range []float64{1, 2, 4} {
		e, err := pingPong().WithSettings(fmt.Sprintf("sram_occupancy_cycles=%g", occ), "rounds=200")
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Run(context.Background(), platforms.RunSpec{Variant: "s32c1i", Params: e.Params.Values(), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		ns := r.Metrics["one_way_ns"]
		if cycles := ns * 240 / 1000; cycles < 2*occ-0.01 || ns <= prev {
			t.Errorf("occupancy %g: one way %g ns (%g cycles), previous %g ns: want at least %g cycles and growing", occ, ns, cycles, prev, 2*occ)
		}
		prev = ns
	}
	e := pingPong()
	if _, err := e.Run(context.Background(), platforms.RunSpec{Variant: "cas", Params: e.Params.Values()}); err == nil {
		t.Error("unknown variant accepted")
	}
}
