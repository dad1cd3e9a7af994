package rk3399

import (
	"context"
	"math"
	"strings"
	"testing"

	"synclab/platforms"
)

// TestMonitorProbe: a waiter whose monitor nothing clears wakes at the
// event stream's rate and its ticks'; one whose monitor every poke clears
// wakes at the poke rate on top. A load never clears it, a store always,
// a prefetch for store only with monitor_loss.
func TestMonitorProbe(t *testing.T) {
	const pokes = 100.0                                  // per ms at poke_us=10
	idle := 1000/EventStreamPeriod.Micros() + 250.0/1000 // the stream and HZ=250's ticks, per ms
	for _, tc := range []struct {
		variant, loss string
		want          float64
	}{
		{PokeLoad, "0", idle}, {PokeLoad, "1", idle},
		{PokeStore, "0", idle + pokes}, {PokeStore, "1", idle + pokes},
		{PokePrfm, "0", idle}, {PokePrfm, "1", idle + pokes},
	} {
		m := runExp(t, monitorProbe(), tc.variant, "monitor_loss="+tc.loss)
		if got := m["wakes_per_ms"]; math.Abs(got-tc.want) > 0.03*tc.want {
			t.Errorf("%s, monitor_loss=%s: %.2f wakes per ms, want %.2f within 3%%", tc.variant, tc.loss, got, tc.want)
		}
		if math.Abs(m["pokes_per_ms"]-pokes) > 0.01 {
			t.Errorf("%s, monitor_loss=%s: %g pokes per ms, want %g on the fixed schedule", tc.variant, tc.loss, m["pokes_per_ms"], pokes)
		}
		// Every wake has a cause: the pokes', the stream's or a tick's.
		if sum := m["event_wakes_per_ms"] + m["stream_wakes_per_ms"]; sum > m["wakes_per_ms"] || m["wakes_per_ms"]-sum > 0.5 {
			t.Errorf("%s, monitor_loss=%s: event %g + stream %g wakes against %g in all: the rest must be the ticks' 0.25",
				tc.variant, tc.loss, m["event_wakes_per_ms"], m["stream_wakes_per_ms"], m["wakes_per_ms"])
		}
	}
	e, _ := monitorProbe().WithSettings("poker_cpu=3", "waiter_cpu=3")
	if _, err := e.Run(context.Background(), platforms.RunSpec{Variant: PokePrfm, Params: e.Params.Values(), Seed: 1}); err == nil || !strings.Contains(err.Error(), "poker_cpu = waiter_cpu = 3") {
		t.Errorf("one CPU for both: %v", err)
	}
	if _, err := monitorProbe().Run(context.Background(), platforms.RunSpec{Variant: "dmb", Params: monitorProbe().Params.Values(), Seed: 1}); err == nil || !strings.Contains(err.Error(), `unknown variant "dmb"`) {
		t.Errorf("unknown variant: %v", err)
	}
}
