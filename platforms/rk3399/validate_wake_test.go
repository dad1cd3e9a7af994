package rk3399

import (
	"context"
	"math"
	"strings"
	"testing"

	"synclab/platforms"
)

// TestWakeMechanisms: a WFE waiter holds the lock a line transfer or so
// after the release; a WFI waiter half a tick later on average (never more
// than one tick plus the handler); with every event lost, WFE waits for the
// event stream instead.
func TestWakeMechanisms(t *testing.T) {
	if m := runExp(t, wake(), "wfe", "handoffs=100"); m["max_release_to_acquire_us"] > 1 {
		t.Errorf("WFE waiter: up to %g us after the release, want under 1 us", m["max_release_to_acquire_us"])
	}
	for _, hz := range []string{"100", "1000"} {
		m := runExp(t, wake(), "wfi", "hz="+hz)
		period := 1e6 / map[string]float64{"100": 100, "1000": 1000}[hz]
		if mean := m["release_to_acquire_us"]; math.Abs(mean-period/2) > 0.1*period/2 {
			t.Errorf("HZ=%s: WFI waiter wakes %g us after the release on average, want about %g", hz, mean, period/2)
		}
		if worst := m["max_release_to_acquire_us"]; worst > period+20 {
			t.Errorf("HZ=%s: worst %g us exceeds one tick period %g", hz, worst, period)
		}
	}
	m := runExp(t, wake(), "wfe", "lose_wake=1", "handoffs=200")
	if worst := m["max_release_to_acquire_us"]; worst > EventStreamPeriod.Micros()+1 {
		t.Errorf("lost wake-ups: worst %g us, want at most one event-stream period %g", worst, EventStreamPeriod.Micros())
	}
	e, _ := wake().WithSettings("holder_cpu=2", "waiter_cpu=2")
	if _, err := e.Run(context.Background(), platforms.RunSpec{Variant: "wfe", Params: e.Params.Values(), Seed: 1}); err == nil || !strings.Contains(err.Error(), "holder_cpu = waiter_cpu") {
		t.Errorf("one CPU for both: %v", err)
	}
}
