package esp32

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestPeripheralOverloadRefused: a peripheral interrupt whose entry,
// handler and exit take its whole period (with the tick's share) leaves core
// 0 nothing for its tasks, so the run could never end; it is refused at
// once, naming both parameters. Just under that load core 0's task still
// finishes, slowly, with every increment counted. CheckCriticalSection
// refuses exactly what the run refuses. (At 100 kHz and 240 MHz a
// period is 2,400 cycles; entry and exit take 300 at the defaults.)
func TestPeripheralOverloadRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals map[string]float64
		want string // "" means the run finishes
	}{
		{"over", map[string]float64{KeyPeriphHz: 100_000, KeyPeriphISR: 100_000},
			"parameters periph_hz = 100000, periph_isr_cycles = 100000, irq_entry_cycles = 150, irq_exit_cycles = 150 and cpu_mhz = 240: the peripheral interrupt's entry, handler and exit (100300 cycles, 417.917us) every 10us"},
		{"whole period", map[string]float64{KeyPeriphHz: 100_000, KeyPeriphISR: 2100}, "would never run its tasks again"},
		{"slower clock", map[string]float64{KeyPeriphHz: 100_000, KeyPeriphISR: 500, KeyCPUMHz: 80}, "cpu_mhz = 80: the peripheral interrupt's entry, handler and exit (800 cycles, 10us) every 10us"},
		{"entry and exit", map[string]float64{KeyPeriphHz: 100_000, KeyPeriphISR: 1, KeyIRQEntry: 2000, KeyIRQExit: 2000}, "irq_entry_cycles = 2000, irq_exit_cycles = 2000"},
		{"96 percent", map[string]float64{KeyPeriphHz: 100_000, KeyPeriphISR: 2000}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.vals[KeyIterations] = 50
			// Not a speed check: without the refusal the run never ends.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			r, err := RunCriticalSection(ctx, VariantMutex, tc.vals, 1, RunOptions{})
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "" && r.Counter != r.Expected:
				t.Fatalf("counter %d, want %d", r.Counter, r.Expected)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			// The experiment's check refuses the same values, with the same
			// error, before any run.
			if cerr := CheckCriticalSection(tc.vals); (cerr == nil) != (err == nil) || cerr != nil && cerr.Error() != err.Error() {
				t.Fatalf("CheckCriticalSection: %v, want the run's error %v", cerr, err)
			}
		})
	}
}

// The queue variant is the notify handshake with a queue of one item per
// task as its mailbox: the token goes round the ring, so every increment is
// another task's (handoffs = counter), and every hand-off wakes a blocked
// receiver as notify's does (the same context switches per increment). On
// top it runs each send and receive in its queue's xQueueLock section, so it
// is slower than notify.
func TestQueueHandshakeWakesAsNotify(t *testing.T) {
	for _, tasks := range []float64{2, 3} {
		vals := map[string]float64{KeyIterations: 5000, KeyTasks: tasks}
		r := map[string]CSResult{}
		for _, v := range []string{VariantNotify, VariantQueue} {
			res, err := RunCriticalSection(context.Background(), v, vals, 3, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if uint64(res.Handoffs) != res.Expected || res.Counter != res.Expected {
				t.Errorf("%s, %g tasks: %d hand-offs and counter %d, want both %d (strict alternation)", v, tasks, res.Handoffs, res.Counter, res.Expected)
			}
			r[v] = res
		}
		no, qu := r[VariantNotify], r[VariantQueue]
		perInc := func(x CSResult) float64 { return float64(x.ContextSwitches) / float64(x.Expected) }
		if d := perInc(qu) - perInc(no); d > 0.02 || d < -0.02 {
			t.Errorf("%g tasks: %.3f context switches per increment with queues, %.3f with notifications: want the same wakes", tasks, perInc(qu), perInc(no))
		}
		if qu.NSPerOp <= no.NSPerOp {
			t.Errorf("%g tasks: queue %.0f ns/op, notify %.0f: want the queue's xQueueLock sections to cost time", tasks, qu.NSPerOp, no.NSPerOp)
		}
	}
}
