package labkit

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"synclab/platforms"
)

// Source says where a published figure comes from: a title, where it is
// (a site and page, or a repository and file) and its date.
type Source struct {
	Title string `json:"title"`
	Where string `json:"where"`
	Date  string `json:"date"`
}

// String cites the source: title (where, date).
func (s Source) String() string { return fmt.Sprintf("%s (%s, %s)", s.Title, s.Where, s.Date) }

// CheckKind says how a check compares the model with the published figure.
type CheckKind string

// Kinds of check.
const (
	// Measured: a published measurement; the model must lie within the
	// tolerance on either side.
	Measured CheckKind = "measurement"
	// Bound: the pass limit of a vendor's own test; the model's value of
	// the path the test measures must stay below it, as the test asserts
	// (ESP-IDF's TEST_PERFORMANCE_LESS_THAN: value < limit).
	Bound CheckKind = "bound"
	// Derived: a value that follows from sourced code (a tick period, a
	// timer period) rather than from a measurement; two-sided like a
	// measurement. It checks a mechanism, not a magnitude.
	Derived CheckKind = "derived"
)

// Tolerance is how far the model may be from the published value:
// Abs + Rel*|published|, in the check's unit. Reason says why, and was
// written before the model's value was known.
type Tolerance struct {
	Rel    float64 `json:"rel"`
	Abs    float64 `json:"abs"`
	Reason string  `json:"reason"`
}

// Width returns the allowed distance from published.
func (t Tolerance) Width(published float64) float64 { return t.Abs + t.Rel*math.Abs(published) }

// Check compares one quantity of the model with a published figure. It is
// plain data: the figure, its source, the tolerance and its reason, and the
// experiment run (with settings) whose metric is the model's value.
type Check struct {
	ID        string    `json:"id"`
	Quantity  string    `json:"quantity"`
	Unit      string    `json:"unit"`
	Source    Source    `json:"source"`
	Kind      CheckKind `json:"kind"`
	Published float64   `json:"published"`
	Tolerance Tolerance `json:"tolerance"`
	// Independent is true when no model parameter was set from Source;
	// otherwise SetFrom names those parameters and the check only shows
	// that the model, composed of its mechanisms, stays consistent with
	// the source its inputs came from.
	Independent bool     `json:"independent"`
	SetFrom     []string `json:"parameters_set_from_source,omitempty"`
	// UpperEstimate marks a model path that holds steps the source's path
	// skips: a pass shows consistency, but the check cannot bound the
	// plausible ranges of the parameters on that path.
	UpperEstimate bool `json:"upper_estimate,omitempty"`
	// Note gives the conditions of the comparison; IfFails what a failure
	// means (both written with the check).
	Note    string `json:"note,omitempty"`
	IfFails string `json:"if_fails"`

	// The model side: Metric of Variant of Experiment with Settings
	// (key=value, the keys of lab run -set). With Baseline set, the
	// model's value is 100*(baseline - variant)/baseline: how much lower
	// the variant is than the baseline variant, in percent.
	Experiment string   `json:"experiment"`
	Variant    string   `json:"variant"`
	Baseline   string   `json:"baseline,omitempty"`
	Settings   []string `json:"settings,omitempty"`
	Metric     string   `json:"metric"`
	Repeats    int      `json:"repeats,omitempty"`
}

// Verdict is a check with the model's value and whether it passed.
type Verdict struct {
	Check
	Model float64 `json:"model"`
	// Deviation is (model - published) / published.
	Deviation float64 `json:"deviation"`
	Pass      bool    `json:"pass"`
	Verdict   string  `json:"verdict"`
	Err       string  `json:"error,omitempty"`
}

// Judge compares the model's value with the check's published figure.
func (c Check) Judge(model float64) Verdict {
	v := Verdict{Check: c, Model: model, Deviation: (model - c.Published) / c.Published}
	switch c.Kind {
	case Bound:
		v.Pass = model < c.Published+c.Tolerance.Width(c.Published)
	default:
		v.Pass = math.Abs(model-c.Published) <= c.Tolerance.Width(c.Published)
	}
	v.Verdict = map[bool]string{true: "pass", false: "FAIL"}[v.Pass]
	return v
}

// Experiment returns the experiment the check runs, found with find and
// restricted to its variants and settings.
func (c Check) experiment(find func(string) (platforms.Experiment, error)) (platforms.Experiment, error) {
	e, err := find(c.Experiment)
	if err != nil {
		return e, fmt.Errorf("check %s: %w", c.ID, err)
	}
	vs := []string{c.Variant}
	if c.Baseline != "" {
		vs = append(vs, c.Baseline)
	}
	if e, err = e.WithVariants(vs...); err != nil {
		return e, fmt.Errorf("check %s: %w", c.ID, err)
	}
	if e, err = e.WithSettings(c.Settings...); err != nil {
		return e, fmt.Errorf("check %s: %w", c.ID, err)
	}
	if c.Repeats > 0 {
		e.Repeats = c.Repeats
	}
	return e, nil
}

// ModelValue computes the check's model side from a result of its
// experiment.
func (c Check) ModelValue(r *Result) float64 {
	p := r.DefaultPoint()
	v := r.Summary(c.Variant, p, c.Metric).Mean
	if c.Baseline == "" {
		return v
	}
	b := r.Summary(c.Baseline, p, c.Metric).Mean
	return 100 * (b - v) / b
}

// Validate runs every check's experiment (through the result store, as
// RunExperiment does) and judges it. find looks experiments up by name (the
// catalog's Lookup). A check whose experiment fails to run is an
// ERROR verdict carrying the error (Pass false); only a cancelled ctx or a
// check naming an unknown experiment, variant or setting stops Validate.
// In a report (lab report) each check's result is noted for the stamp.
func Validate(ctx context.Context, checks []Check, find func(string) (platforms.Experiment, error), opts RunOptions) ([]Verdict, error) {
	out := make([]Verdict, 0, len(checks))
	for _, c := range checks {
		e, err := c.experiment(find)
		if err != nil {
			return nil, err // a check naming what does not exist is a defect, not a verdict
		}
		r, err := RunExperiment(ctx, e, opts)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		Note(r) // a report's stamp lists the checks' runs with the notebook's own
		if err != nil {
			out = append(out, Verdict{Check: c, Verdict: "ERROR", Err: err.Error()})
			continue
		}
		out = append(out, c.Judge(c.ModelValue(r)))
	}
	return out, nil
}

// ValidationTable is the verdicts as a table: the check, its kind, the
// quantity, the published figure, the model's value, the tolerance, whether
// the check is independent, the verdict and the source.
func ValidationTable(vs []Verdict) Table {
	t := Table{Title: "SyncLab against published figures: measurements, vendor limits, values derived from code",
		Header: []string{"check", "kind", "quantity", "published", "model", "tolerance", "independent", "verdict", "source"}}
	for _, v := range vs {
		tol := "< bound"
		if v.Kind != Bound {
			tol = "± " + numUnit(v.Tolerance.Width(v.Published), v.Unit)
			if v.Unit == "%" {
				tol = "± " + Num(v.Tolerance.Width(v.Published)) + " points" // of the percentage, not a relative %
			}
		}
		ind := "yes"
		if !v.Independent {
			ind = "no (set from it: " + strings.Join(v.SetFrom, ", ") + ")"
		}
		t.Rows = append(t.Rows, []string{v.ID, string(v.Kind), v.Quantity, numUnit(v.Published, v.Unit), numUnit(v.Model, v.Unit),
			tol, ind, v.Verdict, v.Source.String()})
	}
	return t
}

// ValidationSummary counts the checks that pass, in all and by kind, for
// a reader who would otherwise take "8 of 12 pass" for 8 measurements
// matched: "8 of 12 checks pass: 0 of 4 published measurements, 4 of 4
// vendor limits, 4 of 4 values derived from code."
func ValidationSummary(vs []Verdict) string {
	var parts []string
	pass := 0
	for _, k := range []struct {
		kind CheckKind
		what string
	}{{Measured, "published measurements"}, {Bound, "vendor limits"}, {Derived, "values derived from code"}} {
		n, p := 0, 0
		for _, v := range vs {
			if v.Kind == k.kind {
				n++
				if v.Pass {
					p++
				}
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d %s", p, n, k.what))
		}
		pass += p
	}
	return fmt.Sprintf("%d of %d checks pass: %s.", pass, len(vs), strings.Join(parts, ", "))
}

// numUnit writes x with its unit as given ("200 ns", "2,000 cycles"), a
// percentage without a space ("35%").
func numUnit(x float64, unit string) string {
	switch unit {
	case "%":
		return Num(x) + unit
	case "":
		return Num(x)
	}
	return Num(x) + " " + ShowUnit(unit)
}

// HandOffChecks are the checks of the model's core-to-core hop against the
// published ping-pong figures: the A72's compare-and-exchange is an LL/SC
// loop whose store takes a line the other core also holds, as a lock
// release and a qspinlock waiter's claim do on the RK3399. HandOffPair is the one whose cores the RK3399's cpu4-5 map to.
var HandOffChecks = []string{"c2c-a72-cluster-rpi4", "c2c-a72-pair-lx2160a", "c2c-cross-cluster-lx2160a"}

// HandOffPair is the check of HandOffChecks that maps to the RK3399's
// A72 pair, cpu4-5.
const HandOffPair = "c2c-a72-pair-lx2160a"

// HandOffText says how much slower the model's core-to-core hops are than
// the published figures, from the verdicts of HandOffChecks (others are
// ignored), e.g. "1.94-3.24x the published one-way latencies (3.24x for the
// LX2160A's A72 pair, which maps to the RK3399's cpu4-5; 2.23x within the
// RPi 4's A72 cluster, 1.94x across the LX2160A's clusters)". Every
// report that qualifies a result by hand-off times states it so, from the
// same runs. "" without the three verdicts.
func HandOffText(vs []Verdict) string {
	ratio := map[string]float64{}
	for _, v := range vs {
		if slices.Contains(HandOffChecks, v.ID) && v.Err == "" && v.Published > 0 {
			ratio[v.ID] = v.Model / v.Published
		}
	}
	if len(ratio) != len(HandOffChecks) {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range ratio {
		lo, hi = math.Min(lo, r), math.Max(hi, r)
	}
	x := func(r float64) string { return sigDigits(r, 3) + "x" }
	rng := sigDigits(lo, 3) + "-" + x(hi)
	if sigDigits(lo, 3) == sigDigits(hi, 3) {
		rng = x(lo)
	}
	return fmt.Sprintf("%s the published one-way latencies (%s for the LX2160A's A72 pair, which maps to the RK3399's cpu4-5; %s within the RPi 4's A72 cluster, %s across the LX2160A's clusters)",
		rng, x(ratio[HandOffPair]), x(ratio["c2c-a72-cluster-rpi4"]), x(ratio["c2c-cross-cluster-lx2160a"]))
}

// Checks returns the validation checks: the model against published figures
// that are findable with their source. Each tolerance and its reason were
// fixed before the model's value was computed, and a failing check stays in
// the list with what its failure means.
func Checks() []Check { return slices.Clone(checks) }

// Sources shared by several checks.
var (
	srcC2CRPi4 = Source{Title: "[Result] Raspberry Pi 4 Model B Rev 1.4 (CAS latency on a single shared cache line)",
		Where: "github.com/nviennot/core-to-core-latency issue #44", Date: "2022-09-20"}
	srcC2CLX2160A = Source{Title: "[Result] NXP LX2160A-RDB (latency = round-trip time / 2)",
		Where: "github.com/nviennot/core-to-core-latency issue #36", Date: "2022-09-19"}
	srcIDFPerf = func(macro, test string) Source {
		return Source{Title: "ESP-IDF performance limit " + macro,
			Where: "espressif/esp-idf components/idf_test/include/idf_performance.h; test: " + test, Date: "ESP-IDF v5.1 (the same limits through v5.5)"}
	}
	srcHZ = Source{Title: "Linux v5.10 CONFIG_HZ (tick period 1/HZ) and the Arm ARM: WFI waits for an interrupt only",
		Where: "torvalds/linux kernel/Kconfig.hz; Arm Architecture Reference Manual for A-profile (DDI 0487), section \"Wait For Interrupt\"", Date: "v5.10, 2020-12"}
)

const (
	tolC2C = "the model has one in-cluster and one cross-cluster line-transfer figure for every cluster and core type, " +
		"the benchmark's loop overhead is modelled only as its LL/SC accesses, and the board's clock differs from the model's OPP; " +
		"±25% accepts that, while one line transfer too many or too few per hop (a wrong mechanism) would be off by 50-100%"
	c2cFails = "the model's line-transfer latency (or the number of transfers per ping-pong hop) does not match this part: " +
		"results that scale with cache-line hand-offs (lock hand-off, ticket-lock collapse) are off by the same factor"
	boundReason = "a vendor test's pass limit (an upper bound measured on the chip by its CI, not a typical value): " +
		"the model must stay below it, as the test asserts; no further tolerance"
	// ESP-IDF tags the interrupt-latency tests [ignore] (v5.0 to v5.5), and
	// its test runner (run_all_single_board_cases) skips those.
	unrunBoundReason = "a vendor limit whose test ESP-IDF's CI does not run (test_isr_latency.c is tagged [ignore]): " +
		"an upper bound the vendor wrote down, not one its chips are checked against; the model must stay below it; no further tolerance"
	tolWake = "the release falls at a uniformly random phase of the period (the holder holds U[0, 20 ms], a whole number of periods), " +
		"so the mean wait is half a period; 400 rounds give a sampling error of about 3% of it, and the tick handler's " +
		"work and the wake path add a few µs: ±10%"
)

var checks = []Check{
	{
		ID: "c2c-a72-cluster-rpi4", Quantity: "core-to-core one-way latency, two Cortex-A72 of one 4-core cluster (CAS ping-pong round trip / 2)",
		Unit: "ns", Source: srcC2CRPi4, Kind: Measured, Published: 89.6,
		Tolerance:   Tolerance{Rel: 0.25, Reason: tolC2C},
		Independent: false, SetFrom: []string{"same_cluster_ns"},
		Note: "mean of the 4-core matrix (89-90 ns). The RPi 4's Cortex-A72 is Armv8.0 without LSE atomics, so the benchmark's " +
			"compare_exchange is an LDXR/STXR loop: variant llsc. Modelled on the generic N-core builder with one cluster of four " +
			"A72-like cores at 1416 MHz, the A72 OPP nearest the board's 1.5 GHz.",
		IfFails:    c2cFails,
		Experiment: "generic-pingpong", Variant: "llsc", Metric: "one_way_ns",
		Settings: []string{"soc_cores=4", "per_cluster=4", "cpu_a=0", "cpu_b=1", "a72_mhz=1416"},
	},
	{
		ID: "c2c-a72-pair-lx2160a", Quantity: "core-to-core one-way latency, the two Cortex-A72 sharing one L2 (LX2160A pair; RK3399 cpu4-cpu5)",
		Unit: "ns", Source: srcC2CLX2160A, Kind: Measured, Published: 61.75,
		Tolerance:   Tolerance{Rel: 0.25, Reason: tolC2C},
		Independent: false, SetFrom: []string{"same_cluster_ns"},
		Note: "mean of the eight pair entries (60-67 ns) of the 16-core matrix. The LX2160A's clusters are pairs of A72 sharing " +
			"an L2, as the RK3399's big cluster is; the RK3399 model's cpu4-cpu5 at 1800 MHz (the LX2160A runs 2.0 GHz).",
		IfFails:    c2cFails,
		Experiment: "rk3399-pingpong", Variant: "llsc", Metric: "one_way_ns",
		Settings: []string{"cpu_a=4", "cpu_b=5"},
	},
	{
		ID: "c2c-cross-cluster-lx2160a", Quantity: "core-to-core one-way latency across clusters (LX2160A A72 pairs over its mesh; RK3399 A53 cpu0 to A72 cpu4 over CCI-500)",
		Unit: "ns", Source: srcC2CLX2160A, Kind: Measured, Published: 257.4,
		Tolerance:   Tolerance{Rel: 0.25, Reason: tolC2C},
		Independent: false, SetFrom: []string{"cross_cluster_ns"},
		Note: "mean of the 112 cross-pair entries (240-273 ns). An analogy, not the same hardware: the RK3399's clusters are " +
			"joined by a CCI-500, the LX2160A's by a CCN-508 mesh; no RK3399 measurement was found.",
		IfFails:    c2cFails,
		Experiment: "rk3399-pingpong", Variant: "llsc", Metric: "one_way_ns",
		Settings: []string{"cpu_a=0", "cpu_b=4"},
	},
	{
		ID: "idf-portmux-pair", Quantity: "portENTER_CRITICAL_ISR + portEXIT_CRITICAL_ISR on a free portMUX, dual-core build, cycles per pair",
		Unit: "cycles", Source: srcIDFPerf("FREERTOS_SPINLOCK_CYCLES_PER_OP", "components/freertos/test_apps/freertos/port/test_spinlocks.c"),
		Kind: Bound, Published: 215, Tolerance: Tolerance{Reason: boundReason},
		Independent: false, SetFrom: []string{"spinlock_pair_cycles"},
		Note:       "the test's limit without PSRAM (300 with CONFIG_SPIRAM, 130 unicore). The model adds the lock word's SRAM accesses (read, S32C1I, assert reads, release store) to spinlock_pair_cycles.",
		IfFails:    "the modelled spinlock path costs more than ESP-IDF's own CI allows: every kernel path built on portMUX is too slow in the model",
		Experiment: "esp32-perf-tests", Variant: "test-apps", Metric: "portmux_pair_cycles",
	},
	{
		ID: "idf-scheduling-time", Quantity: "task yield to the other ready task of equal priority on one core: task selection plus context switch, cycles",
		Unit: "cycles", Source: srcIDFPerf("SCHEDULING_TIME", "components/freertos/test_apps/freertos/performance/test_freertos_scheduling_time.c"),
		Kind: Bound, Published: 2000, Tolerance: Tolerance{Reason: boundReason},
		Independent: false, SetFrom: []string{"switch_select_cycles", "switch_save_restore_cycles"}, UpperEstimate: true,
		Note: "the test measures from just before vPortYield in one task to the other task running. The model has no solicited " +
			"vPortYield path: its yield is portYIELD_WITHIN_API's crosscore interrupt to the own core, which adds the trigger and " +
			"the interrupt entry and exit, so the model's value is an upper estimate of the test's path.",
		IfFails:    "a same-core context switch costs more in the model than ESP-IDF's CI allows: the handshake and unblock latencies are inflated",
		Experiment: "esp32-perf-tests", Variant: "test-apps", Metric: "scheduling_cycles",
	},
	{
		ID: "idf-isr-enter", Quantity: "from triggering a level-1 software interrupt in a task to the first statement of its handler, cycles",
		Unit: "cycles", Source: srcIDFPerf("ISR_ENTER_CYCLES", "components/freertos/test_apps/freertos/performance/test_isr_latency.c, tagged [ignore]: CI skips it"),
		Kind: Bound, Published: 290, Tolerance: Tolerance{Reason: unrunBoundReason},
		Independent: false, SetFrom: []string{"irq_entry_cycles"},
		IfFails:    "interrupt entry costs more than ESP-IDF's own limit: interrupt latencies are inflated",
		Experiment: "esp32-perf-tests", Variant: "test-apps", Metric: "isr_enter_cycles",
	},
	{
		ID: "idf-isr-exit", Quantity: "from the handler's last statement (after xSemaphoreGiveFromISR and portYIELD_FROM_ISR) to the task's return from xSemaphoreTake, cycles",
		Unit: "cycles", Source: srcIDFPerf("ISR_EXIT_CYCLES", "components/freertos/test_apps/freertos/performance/test_isr_latency.c, tagged [ignore]: CI skips it"),
		Kind: Bound, Published: 565, Tolerance: Tolerance{Reason: unrunBoundReason},
		Independent: false, SetFrom: []string{"irq_exit_cycles"},
		Note: "in the test the interrupt is taken before the task calls xSemaphoreTake (the task is at the highest priority and " +
			"nothing is woken), so the path is the interrupt's return plus an uncontended take; sem_take_body_cycles and " +
			"spinlock_pair_cycles take part in it but were not set from this bound.",
		IfFails:    "the interrupt return plus an uncontended semaphore take cost more than ESP-IDF's own limit",
		Experiment: "esp32-perf-tests", Variant: "test-apps", Metric: "isr_exit_cycles",
	},
	{
		ID: "freertos-notify-unblock", Quantity: "unblock time through a direct-to-task notification, lower than through a binary semaphore, by",
		Unit: "%", Source: Source{Title: "RTOS task notifications: performance benefits (\"45% faster\"; 35% with the binary semaphore of V8.2.0 and later)",
			Where: "freertos.org/RTOS-task-notifications.html", Date: "page undated; figure measured on FreeRTOS V8.1.2/V8.2.0, 2015"},
		Kind: Measured, Published: 35,
		Tolerance: Tolerance{Abs: 10, Reason: "one vendor figure, single-core parts and method unpublished (GCC -O2, configASSERT() " +
			"undefined); ±10 percentage points separates the same relative gain from a different cost structure"},
		Independent: true,
		Note: "no parameter value was derived from it (notify_body_cycles' source line cites the claim as context). The model runs " +
			"the ESP32 single-core configuration: giver and woken task on core 0, core 1 idle, with IDF's asserts off as the " +
			"vendor measured without configASSERT(). V8.2.0 and later's 35% applies: ESP-IDF v5 ships FreeRTOS V10.",
		IfFails: "the relative gain depends on how much fixed switching cost both paths share: on the ESP32 SMP port the woken " +
			"task runs after a crosscore self-interrupt and a context switch in both cases, so the API bodies' difference is a " +
			"smaller share than on a single-core port whose switch is cheap",
		Experiment: "esp32-notify-unblock", Variant: "notify", Baseline: "binary-semaphore", Metric: "unblock_us",
		Settings: []string{"idf_asserts=0"},
	},
	wfiCheck(100, 5000),
	wfiCheck(250, 2000),
	wfiCheck(1000, 500),
	{
		ID: "wfe-event-stream", Quantity: "release to acquisition when every wake-up event is lost: a WFE waiter wakes only on the event stream",
		Unit: "us", Source: Source{Title: "arch_timer_evtstrm_enable: ARCH_TIMER_EVT_STREAM_PERIOD_US = 100, rounded to a power of two of the 24 MHz counter (2048 ticks = 85.3 µs)",
			Where: "torvalds/linux drivers/clocksource/arm_arch_timer.c; arch/arm64/boot/dts/rockchip/rk3399.dtsi", Date: "v5.11, 2021-02 (commit 8b7770b877d1, backported to the stable v5.10.y, 4.19.y and 4.9.y kernels; the v5.10 tag without it programs 4096 ticks)"},
		Kind: Derived, Published: 85.333 / 2,
		Tolerance:   Tolerance{Rel: 0.1, Reason: tolWake},
		Independent: false, SetFrom: []string{"event_stream"},
		Note:       "expectation derived from the code, not a measurement: with lose_wake=1 no store or SEV reaches the waiter, so the event stream alone bounds its wait (mean half a period).",
		IfFails:    "the event stream does not wake WFE waiters as arm_arch_timer.c configures it: the lost-wake-up experiments are wrong",
		Experiment: "rk3399-wake", Variant: "wfe", Metric: "release_to_acquire_us",
		Settings: []string{"lose_wake=1"},
	},
}

// wfiCheck is the WFI-waiter check at tick rate hz: the waiter wakes at
// its next tick, on average half a period after the release.
func wfiCheck(hz int, halfPeriodUS float64) Check {
	return Check{
		ID: fmt.Sprintf("wfi-tick-hz%d", hz), Quantity: fmt.Sprintf("release to acquisition for a waiter in WFI, HZ=%d", hz),
		Unit: "us", Source: srcHZ, Kind: Derived, Published: halfPeriodUS,
		Tolerance:   Tolerance{Rel: 0.1, Reason: tolWake},
		Independent: false, SetFrom: []string{"hz"},
		Note: "expectation derived from the code, not a measurement: a release never wakes WFI, the waiter's next tick does " +
			"(the tick runs while a CPU waits for a lock, even with NO_HZ_IDLE), half a tick period later on average.",
		IfFails:    "WFI waiters are woken by something other than their tick, or not by it: the WFI results of article 2 are wrong",
		Experiment: "rk3399-wake", Variant: "wfi", Metric: "release_to_acquire_us",
		Settings: []string{fmt.Sprintf("hz=%d", hz)},
	}
}
