package esp32

import (
	"context"
	"testing"
	"time"
)

func TestCriticalSectionQuick(t *testing.T) {
	for _, v := range CSVariants {
		st := time.Now()
		r, err := RunCriticalSection(context.Background(), v, map[string]float64{KeyIterations: 20000}, 1, false)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		t.Logf("%s: events %d wall %v total %.3f ms ns/op %.0f cpu %.1f/%.1f busy %.1f/%.1f irq max %.2f p99 %.2f sw %d ipi %d counter %d/%d klspin %.1fus olspin %.1fus",
			v, r.Events, time.Since(st), r.TotalMS, r.NSPerOp, r.CPUPct[0], r.CPUPct[1], r.BusyPct[0], r.BusyPct[1], r.MaxIRQUS, r.P99IRQUS, r.ContextSwitches, r.IPIs, r.Counter, r.Expected, r.KernelLockSpinUS, r.ObjectLockSpinUS)
		if r.Counter != r.Expected {
			t.Errorf("%s: counter %d, want %d", v, r.Counter, r.Expected)
		}
	}
}
