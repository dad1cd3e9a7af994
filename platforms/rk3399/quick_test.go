package rk3399

import (
	"context"
	"testing"
	"time"

	"synclab/platforms/linux"
)

func TestQuick(t *testing.T) {
	for _, m := range []linux.Mode{linux.WFE, linux.WFI, linux.Relax, linux.Adaptive, linux.Tiered} {
		v := AllParams().Values()
		w, err := SpinlockWait(v, m)
		if err != nil {
			t.Fatal(err)
		}
		st := time.Now()
		r, err := w.Run(context.Background(), 1)
		if err != nil {
			t.Fatal(m, err)
		}
		t.Logf("%v: wall %v ops %d thr %.0f mean %.3fms p99 %.3f max %.3f power %.0f stall %.1f%% cnt %d/%d ticks %d wake %v", m, time.Since(st), r.Ops, float64(r.Ops)/r.Elapsed.Seconds(),
			Mean(r.Waits).Millis(), Percentile(r.Waits, .99).Millis(), Percentile(r.Waits, 1).Millis(), r.PowerMW, r.StallPct(w.Cores), r.Counter, r.Expected, r.Ticks, r.Wakeups)
	}
}
