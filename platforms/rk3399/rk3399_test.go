package rk3399

import (
	"math"
	"strings"
	"testing"

	"synclab/sim"
)

// The default RK3399: cpu0-3 are A53s at 1416 MHz, cpu4-5 A72s at 1800 MHz
// (Linux numbers the little cluster first), each drawing the energy
// model's C*V^2*f at its OPP's voltage plus leakage: 100*1.125^2*1416/1000
// = 179.2 mW + 15 for an A53, 436*1.2^2*1800/1000 = 1130.1 mW + 80 for an
// A72 (the figures the static-power parameters' sources quote). The event
// stream is 2048 ticks of the 24 MHz counter; event_stream=0 turns it off,
// and monitor_loss=1 turns MonitorLoss on. An A53's prefetch for store
// never upgrades a shared line (its TRM); an A72's does unless
// a72_prfm_upgrade=0.
// The kernel takes HZ and its costs from the values, IPI latency in ns.
// Kills: clusters in the other order, the wrong OPP voltage, a lost
// /1000 in the energy model, event_stream, monitor_loss or
// a72_prfm_upgrade ignored, the A53s upgrading, ipi_ns read as us.
func TestSoCAndKernelFromParams(t *testing.T) {
	v := Defaults()
	soc, err := SoC(v)
	if err != nil {
		t.Fatal(err)
	}
	for ci, want := range []struct {
		cores int
		mhz   int64
		mw    float64
	}{{4, 1416, 179.2125 + 15}, {2, 1800, 1130.112 + 80}} {
		c := soc.Clusters[ci]
		mw, err := c.BusyMW()
		if err != nil || c.Cores != want.cores || c.MHz != want.mhz || math.Abs(mw-want.mw) > 1e-9 {
			t.Errorf("cluster %d: %d cores at %d MHz, %v mW (%v); want %d, %d, %v", ci, c.Cores, c.MHz, mw, err, want.cores, want.mhz, want.mw)
		}
	}
	if soc.EventStream != 2048*sim.Second/24_000_000 {
		t.Errorf("event stream %v, want 85.33us", soc.EventStream)
	}
	v["event_stream"] = 0
	if soc, err := SoC(v); err != nil || soc.EventStream != 0 {
		t.Errorf("event_stream=0: stream %v (%v), want off", soc.EventStream, err)
	}
	if soc.MonitorLoss {
		t.Errorf("monitor_loss=0: MonitorLoss on")
	}
	v["monitor_loss"] = 1
	if soc, err := SoC(v); err != nil || !soc.MonitorLoss {
		t.Errorf("monitor_loss=1: MonitorLoss %v (%v), want on", soc.MonitorLoss, err)
	}
	if soc.Clusters[0].PrefetchUpgrade || !soc.Clusters[1].PrefetchUpgrade {
		t.Errorf("prefetch upgrades: A53 %v, A72 %v; want off, on", soc.Clusters[0].PrefetchUpgrade, soc.Clusters[1].PrefetchUpgrade)
	}
	v["a72_prfm_upgrade"] = 0
	if soc, err := SoC(v); err != nil || soc.Clusters[0].PrefetchUpgrade || soc.Clusters[1].PrefetchUpgrade {
		t.Errorf("a72_prfm_upgrade=0: A53 %v, A72 %v (%v); want both off", soc.Clusters[0].PrefetchUpgrade, soc.Clusters[1].PrefetchUpgrade, err)
	}
	k := Kernel(v)
	if k.HZ != 250 || !k.NoHZIdle || k.TickWork != 5*sim.Microsecond || k.SwitchWork != 3*sim.Microsecond || k.IPILatency != sim.Microsecond {
		t.Errorf("kernel %+v; want HZ 250, NO_HZ_IDLE, tick 5us, switch 3us, IPI 1us", k)
	}
}

// A value outside its parameter's range or choices is an error naming the
// key.
func TestSoCRejectsBadValues(t *testing.T) {
	for key, bad := range map[string]float64{"a53_mhz": 1500, "spin_share": 2, "hz": 123} {
		v := Defaults()
		v[key] = bad
		if _, err := SoC(v); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s = %v: error %v, want one naming %s", key, bad, err, key)
		}
	}
}
