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
