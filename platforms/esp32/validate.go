// ESP-IDF's own FreeRTOS performance tests run on the model: the paths they
// time, with their pass limits in components/idf_test/include/
// idf_performance.h, simulated as the tests drive them, so that labkit's
// validation can check the model's composed cost of each path against them.

package esp32

import (
	"context"
	"fmt"
	"math"

	"synclab/platforms"
	"synclab/sim"
)

// idfPerfRounds is how many times each timed path runs (the spinlock test
// does 10,000 pairs; the others average fewer, which a deterministic model
// does not need).
const idfPerfRounds = 1000

func idfPerf() platforms.Experiment {
	return platforms.Experiment{
		Name: "esp32-perf-tests",
		Description: "ESP-IDF's FreeRTOS performance tests on the ESP32 model, each timed path as the test drives it: " +
			"portENTER/EXIT_CRITICAL_ISR on a free portMUX (test_spinlocks.c), a task yielding to an equal-priority task on one " +
			"core (test_freertos_scheduling_time.c), a level-1 interrupt triggered by a task, its entry, and its exit back to the " +
			"task's xSemaphoreTake (test_isr_latency.c). The model's yield is portYIELD_WITHIN_API's crosscore interrupt to the " +
			"own core (it has no solicited vPortYield path).",
		Platform: "esp32",
		Params:   Params(),
		Variants: []platforms.Variant{{Name: "test-apps", Doc: "components/freertos/test_apps/freertos, dual-core build, no PSRAM"}},
		Repeats:  1, Seed: 1,
		Metrics: []platforms.Metric{
			{Name: "portmux_pair_cycles", Unit: "cycles", Better: platforms.Lower, Doc: "one uncontended portENTER_CRITICAL_ISR + portEXIT_CRITICAL_ISR (limit 215)"},
			{Name: "scheduling_cycles", Unit: "cycles", Better: platforms.Lower, Doc: "from just before a task's yield to the other task of equal priority running (limit 2000)"},
			{Name: "isr_enter_cycles", Unit: "cycles", Better: platforms.Lower, Doc: "from the task's trigger of a level-1 interrupt to its handler's first statement (limit 290)"},
			{Name: "isr_exit_cycles", Unit: "cycles", Better: platforms.Lower, Doc: "from the handler's last statement to the task's return from an uncontended xSemaphoreTake (limit 565)"},
		},
		Run: runIDFPerf,
	}
}

func runIDFPerf(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
	if spec.Variant != "test-apps" {
		return platforms.RunResult{}, fmt.Errorf("esp32-perf-tests: variant %q unknown; known: test-apps", spec.Variant)
	}
	cfg, err := ConfigFrom(spec.Params)
	if err != nil {
		return platforms.RunResult{}, err
	}
	// mean is the mean of ts in CPU cycles, to a thousandth: each path's
	// pieces are whole cycles, rounded to the picosecond one by one.
	mean := func(ts []sim.Time) float64 {
		var sum sim.Time
		for _, t := range ts {
			sum += t
		}
		c := float64(sum) * float64(cfg.CPUMHz) * 1e6 / float64(sim.Second) / float64(max(len(ts), 1))
		return math.Round(c*1000) / 1000
	}
	pair, err := perfPortMux(ctx, cfg)
	if err != nil {
		return platforms.RunResult{}, fmt.Errorf("esp32-perf-tests portmux: %w", err)
	}
	sched, err := perfScheduling(ctx, cfg)
	if err != nil {
		return platforms.RunResult{}, fmt.Errorf("esp32-perf-tests scheduling: %w", err)
	}
	enter, exit, err := isrRun(ctx, cfg)
	if err != nil {
		return platforms.RunResult{}, fmt.Errorf("esp32-perf-tests isr latency: %w", err)
	}
	m := map[string]float64{"portmux_pair_cycles": mean(pair), "scheduling_cycles": mean(sched),
		"isr_enter_cycles": mean(enter), "isr_exit_cycles": mean(exit)}
	return platforms.RunResult{Metrics: m}, nil
}

// perfKernel builds a kernel from cfg, lets tasks create the test's tasks
// and runs the scheduler until they have ended.
func perfKernel(ctx context.Context, cfg Config, tasks func(k *Kernel) error) error {
	e := sim.NewEngine(1)
	defer e.Close()
	k, err := NewKernel(e, cfg)
	if err != nil {
		return err
	}
	if err := tasks(k); err != nil {
		return err
	}
	if err := k.Start(); err != nil {
		return err
	}
	return e.Run(ctx)
}

// perfPortMux is test_spinlocks.c "portMUX spinlocks (no contention)": one
// time over idfPerfRounds pairs on a free portMUX.
func perfPortMux(ctx context.Context, cfg Config) ([]sim.Time, error) {
	var d sim.Time
	err := perfKernel(ctx, cfg, func(k *Kernel) error {
		mux := k.NewPortMux("mux", 8)
		_, err := k.CreateTask("unity", 5, 0, func(t *TCB) {
			t0 := t.Now()
			for range idfPerfRounds {
				t.EnterCritical(mux)
				t.ExitCritical(mux)
			}
			d = t.Now() - t0
		})
		return err
	})
	return []sim.Time{d / idfPerfRounds}, err
}

// perfScheduling is test_freertos_scheduling_time.c: two tasks of equal
// priority pinned to core 1 yield to each other; each measured interval
// runs from just before task 1's yield to task 2 running.
func perfScheduling(ctx context.Context, cfg Config) ([]sim.Time, error) {
	var before sim.Time
	var ds []sim.Time
	err := perfKernel(ctx, cfg, func(k *Kernel) error {
		done := false
		if _, err := k.CreateTask("test1", 2, 1, func(t *TCB) {
			for !done {
				before = t.Now()
				k.yieldWithinAPI(t.Proc)
			}
		}); err != nil {
			return err
		}
		_, err := k.CreateTask("test2", 2, 1, func(t *TCB) {
			k.yieldWithinAPI(t.Proc) // let test1 take its first timestamp
			for range idfPerfRounds {
				ds = append(ds, t.Now()-before)
				k.yieldWithinAPI(t.Proc)
			}
			done = true
		})
		return err
	})
	return ds, err
}

// isrRun is test_isr_latency.c: a task at the highest priority on core 0
// triggers a level-1 interrupt, whose handler gives a binary semaphore
// (waking nobody) and ends with portYIELD_FROM_ISR; the task then takes the
// semaphore. It returns the entry times (trigger to handler) and the exit
// times (handler end to the take's return).
func isrRun(ctx context.Context, cfg Config) (enter, exit []sim.Time, err error) {
	var trigger, handlerEnd sim.Time
	err = perfKernel(ctx, cfg, func(k *Kernel) error {
		sem, err := k.NewSemaphore("sync", Binary, 1, 0, 8)
		if err != nil {
			return err
		}
		k.OnPeripheral = func(p *sim.Proc) {
			enter = append(enter, p.Now()-trigger)
			_, woken := k.SemaphoreGiveFromISR(p, sem)
			k.YieldFromISR(p, woken)
			k.flush(p)
			handlerEnd = p.Now()
		}
		_, err = k.CreateTask("tst", MaxPriorities-1, 0, func(t *TCB) {
			for range idfPerfRounds {
				trigger = t.Now()
				t.Proc.Core().Raise(IRQPeripheral) // TEST_SET_INT_MASK: the software interrupt is pending
				k.boundary(t.Proc)                 // and taken at the next instruction
				t.SemaphoreTake(sem, PortMaxDelay)
				exit = append(exit, t.Now()-handlerEnd)
			}
		})
		return err
	})
	return enter, exit, err
}

// The core-to-core ping-pong on the ESP32 (bench/board/esp32 measures it):
// the two cores flip one word of internal SRAM between PING and PONG with
// S32C1I compare-and-set, each retrying in a tight loop, as the portMUX
// acquire loop does. Internal SRAM has no cache: each attempt is an atomic
// at the shared SRAM port.
func pingPong() platforms.Experiment {
	return platforms.Experiment{
		Name: "esp32-pingpong",
		Description: "ESP32 core-to-core ping-pong: core 0 and core 1 flip one internal-SRAM word between PING and PONG with " +
			"S32C1I compare-and-set (esp_cpu_compare_and_set), retrying every spin_loop_cycles; one_way_ns is the round trip " +
			"over two: the retry loop's phase plus the S32C1I at the SRAM port. No kernel: the tasks run undisturbed.",
		Platform: "esp32",
		Params: append(Params(), platforms.Param{Key: "rounds", Value: 2000, Unit: "round trips", Prov: platforms.CODE, Integer: true, Min: 1, Max: 1e6,
			Source: "scenario (bench/board/esp32 runs 100,000)", Doc: "timed round trips"}),
		Variants: []platforms.Variant{{Name: "s32c1i", Doc: "esp_cpu_compare_and_set: WSR SCOMPARE1, S32C1I"}},
		Repeats:  1, Seed: 1,
		Metrics: []platforms.Metric{{Name: "one_way_ns", Unit: "ns", Better: platforms.Lower, Doc: "round-trip time over two"}},
		Run:     runPingPong,
		Traces:  true,
	}
}

func runPingPong(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
	if spec.Variant != "s32c1i" {
		return platforms.RunResult{}, fmt.Errorf("esp32-pingpong: variant %q unknown; known: s32c1i", spec.Variant)
	}
	cfg, err := ConfigFrom(spec.Params)
	if err != nil {
		return platforms.RunResult{}, err
	}
	n := int(spec.Params["rounds"])
	if n < 1 {
		return platforms.RunResult{}, fmt.Errorf("esp32-pingpong: rounds %d must be >= 1", n)
	}
	e := sim.NewEngine(spec.Seed)
	defer e.Close()
	e.Trace = runTrace(spec.Trace)
	soc, err := NewSoC(e, cfg)
	if err != nil {
		return platforms.RunResult{}, err
	}
	const ping, pong = 0, 1
	word := soc.Alloc(4, 8)
	var start, end sim.Time
	e.Spawn(soc.Cores[1], "pong", func(p *sim.Proc) {
		for range n + 1 {
			p.SpinCAS(word, ping, pong, cfg.SpinLoop)
		}
	})
	e.Spawn(soc.Cores[0], "ping", func(p *sim.Proc) {
		// The first flip settles who goes first; the timing starts after it.
		p.SpinCAS(word, pong, ping, cfg.SpinLoop)
		start = p.Now()
		for range n {
			p.SpinCAS(word, pong, ping, cfg.SpinLoop)
		}
		end = p.Now()
	})
	if err := e.Run(ctx); err != nil {
		return platforms.RunResult{}, err
	}
	return platforms.RunResult{Metrics: map[string]float64{"one_way_ns": (end - start).Nanos() / float64(2*n)}, Trace: endTrace(e)}, nil
}
