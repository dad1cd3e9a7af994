package esp32

import (
	"fmt"

	"synclab/platforms"
	"synclab/sim"
)

// Parameter keys of the platform. Workload keys live in workload.go.
const (
	KeyCPUMHz           = "cpu_mhz"
	KeyTickHz           = "tick_hz"
	KeySRAMLatency      = "sram_latency_cycles"
	KeySRAMOccupancy    = "sram_occupancy_cycles"
	KeyPSRAMLatency     = "psram_latency_ns"
	KeyPSRAMHit         = "psram_hit_cycles"
	KeySpinLoop         = "spin_loop_cycles"
	KeySpinlockPair     = "spinlock_pair_cycles"
	KeyIRQEntry         = "irq_entry_cycles"
	KeyIRQExit          = "irq_exit_cycles"
	KeyCrosscoreTrigger = "crosscore_trigger_cycles"
	KeyCrosscoreLatency = "crosscore_latency_cycles"
	KeyCrosscoreISR     = "crosscore_isr_cycles"
	KeySwitchSelect     = "switch_select_cycles"
	KeySwitchSave       = "switch_save_restore_cycles"
	KeyTakeBody         = "sem_take_body_cycles"
	KeyGiveBody         = "sem_give_body_cycles"
	KeyBlockBody        = "block_body_cycles"
	KeyNotifyBody       = "notify_body_cycles"
	KeyTickBody         = "tick_body_cycles"
	KeyIdleLoop         = "idle_loop_cycles"
	KeyNotifyEntries    = "notify_entries"
	KeyAsserts          = "idf_asserts"
)

// Sources several parameters cite: ESP-IDF's performance limits (pass/fail
// bounds of its own test suite) and the tests that check them.
const (
	idfPerfHeader = "espressif/esp-idf components/idf_test/include/idf_performance.h"
	idfISRTest    = "components/freertos/test_apps/freertos/performance/test_isr_latency.c"
	idfSchedTest  = "components/freertos/test_apps/freertos/performance/test_freertos_scheduling_time.c"
	// Why the scheduling limit bounds the selection and the switch only
	// loosely: the model's yield is not the test's path.
	schedHigh = "the test times a solicited vPortYield, whose context save is lighter than an interrupt's; the model's yield, " +
		"a crosscore interrupt to its own core, adds the trigger and the interrupt entry and exit, and crosses the limit " +
		"about 60 cycles above the defaults of either"
)

// Params returns the platform parameters with their defaults, provenance and
// ranges. Callers own the returned slice.
func Params() platforms.Params {
	return platforms.Params{
		{Key: KeyCPUMHz, Value: 240, Unit: "MHz", Prov: platforms.CODE, Min: 80, Max: 240, Choices: []float64{80, 160, 240},
			Source: "esp-idf components/esp_system/port/soc/esp32/Kconfig.cpu (default 160; the article selects 240)",
			Doc:    "CPU clock of both LX6 cores (CONFIG_ESP_DEFAULT_CPU_FREQ_MHZ)"},
		{Key: KeyTickHz, Value: 100, Unit: "Hz", Prov: platforms.CODE, Min: 100, Max: 1000, Choices: []float64{100, 1000},
			Source: "esp-idf components/freertos/Kconfig CONFIG_FREERTOS_HZ (default 100; test apps use 1000)",
			Doc:    "FreeRTOS tick rate; each core has its own tick interrupt (CCOMPARE0, level 1)"},
		{Key: KeySRAMLatency, Value: 1, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 0, Max: 20, Low: 1, High: 4,
			Source: "espressif/esp-idf components/xtensa/esp32/include/xtensa/config/core-isa.h: XCHAL_DCACHE_SIZE 0, no data cache in front of internal SRAM; ~1 cycle per access assumed (not published)",
			Doc:    "latency of one load or store to internal SRAM"},
		{Key: KeySRAMOccupancy, Value: 1, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 0, Max: 20, Low: 1, High: 2,
			Source: "ESP32 Technical Reference Manual (Espressif, v5.x), System and Memory: both cores reach internal SRAM over a shared bus; arbitration cost not published",
			Doc:    "time one access holds the shared SRAM port (an S32C1I holds it twice)"},
		{Key: KeyPSRAMLatency, Value: 1975, Unit: "ns", Prov: platforms.DERIVED, Min: 100, Max: 5000,
			Source: "DERIVED: esp-idf v5.1 components/esp_psram/esp32/esp_psram_impl_quad.c sets the cache's QIO read: 8-bit command and 24-bit address on 4 lines (2 + 6 clocks), PSRAM_FAST_READ_QUAD_DUMMY + extra_dummy (5 + 1 at 40 MHz) + 1 dummy clocks, 32 data bytes (64 clocks): 79 clocks at CONFIG_SPIRAM_SPEED's default 40 MHz (components/esp_psram/esp32/Kconfig.spiram) = 1,975 ns (80 clocks, 1,000 ns, at 80 MHz); in the DCLK mode of the 32 Mbit ver0 chips (psram_cache_init: a 16-bit read command, \"1byte for delay\") 81 clocks, 2,025 ns",
			Doc:    "time to fill a 32-byte cache line from external SPI RAM"},
		{Key: KeyPSRAMHit, Value: 1, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 1, Max: 20, Low: 1, High: 4,
			Source: "ESP32 Technical Reference Manual (Espressif, v5.x), System and Memory: external RAM is reached through the flash/PSRAM MMU cache, whose hit time is not published; ~1 cycle assumed, as for internal SRAM",
			Doc:    "latency of a load or store that hits in the PSRAM cache, from either core (in IDF's low/high mode each PSRAM line lives in one of the two cores' caches, whichever core accesses it)"},
		{Key: KeySpinLoop, Value: 10, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 2, Max: 200, Low: 6, High: 30,
			Source: "esp-idf esp_hw_support/include/spinlock.h: retry loop of compare_and_set (WSR SCOMPARE1; S32C1I), no backoff; loop length not published",
			Doc:    "period of one retry of the portMUX acquire loop"},
		{Key: KeySpinlockPair, Value: 120, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 10, Max: 1000, Low: 60, High: 208,
			Source: idfPerfHeader + " IDF_PERFORMANCE_MAX_FREERTOS_SPINLOCK_CYCLES_PER_OP: portMUX enter+exit uncontended < 215 cycles dual-core (BOUND, components/freertos/test_apps/freertos/port/test_spinlocks.c); ~120 assumed; High 208: with the lock word's SRAM accesses the timed pair stays under the limit",
			Doc:    "instructions of portENTER_CRITICAL + portEXIT_CRITICAL besides their lock-word accesses (RSIL, core id, nesting counts)"},
		{Key: KeyIRQEntry, Value: 150, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 10, Max: 2000, Low: 70, High: 289,
			Source: idfPerfHeader + " IDF_PERFORMANCE_MAX_ISR_ENTER_CYCLES: ISR entry < 290 cycles (a limit only: its test, " + idfISRTest + ", is tagged [ignore], which IDF's CI skips); High 289, the largest whole value under it",
			Doc:    "from interrupt assertion to the first instruction of the C handler (window spill, dispatch table)"},
		{Key: KeyIRQExit, Value: 150, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 10, Max: 2000, Low: 70, High: 274,
			Source: idfPerfHeader + " IDF_PERFORMANCE_MAX_ISR_EXIT_CYCLES < 565 cycles: its test, " + idfISRTest + ", times from the handler's end (after xSemaphoreGiveFromISR and portYIELD_FROM_ISR) to the task's next instruction; the task raises the software interrupt before it calls xSemaphoreTake, so nothing is blocked or woken, and the span is the ISR's return plus an uncontended take (a limit only: the test is tagged [ignore], which IDF's CI skips); High 274: with the take's costs at their defaults the timed span stays under the limit",
			Doc:    "from the end of the C handler back to the interrupted code (without a context switch)"},
		{Key: KeyCrosscoreTrigger, Value: 40, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 1, Max: 1000, Low: 20, High: 100,
			Source: "esp-idf esp_system/crosscore_int.c esp_crosscore_int_send: a DPORT register write besides the reason update; cost not published",
			Doc:    "instructions of esp_crosscore_int_send besides its reason-spinlock section"},
		{Key: KeyCrosscoreLatency, Value: 150, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 0, Max: 2000, Low: 50, High: 300,
			Source: "espressif/esp-idf components/esp_system/crosscore_int.c: a DPORT register write raises the other core's FROM_CPU interrupt; delivery latency not published (~300 cycles to ISR entry assumed, of which irq_entry_cycles is the entry)",
			Doc:    "from the DPORT write to the interrupt pending on the other core"},
		{Key: KeyCrosscoreISR, Value: 60, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 1, Max: 1000, Low: 30, High: 150,
			Source: "esp-idf esp_system/crosscore_int.c esp_crosscore_isr: clear the DPORT bit, read and clear the reason under reason_spinlock",
			Doc:    "instructions of the crosscore ISR besides its reason-spinlock section"},
		{Key: KeySwitchSelect, Value: 150, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 10, Max: 2000, Low: 80, High: 400,
			Source: idfPerfHeader + " IDF_PERFORMANCE_MAX_SCHEDULING_TIME: same-core taskYIELD switch < 2000 cycles (BOUND, " + idfSchedTest + "); ~1150 cycles in all assumed (150 + 1000); High 400: selection and switch stay under the limit together (" + schedHigh + ")",
			Doc:    "vTaskSwitchContext's task selection, run under xKernelLock"},
		{Key: KeySwitchSave, Value: 1000, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 10, Max: 5000, Low: 400, High: 1700,
			Source: idfPerfHeader + " IDF_PERFORMANCE_MAX_SCHEDULING_TIME: same-core taskYIELD switch < 2000 cycles (BOUND, " + idfSchedTest + "); ~1150 cycles with the selection assumed (150 + 1000); High 1700: selection and switch stay under the limit together (" + schedHigh + ")",
			Doc:    "saving one task's context (register windows spill) and restoring the next's"},
		{Key: KeyTakeBody, Value: 160, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 10, Max: 2000, Low: 80, High: 284,
			Source: "espressif/esp-idf components/freertos/FreeRTOS-Kernel/queue.c xQueueSemaphoreTake: ~400 cycles uncontended assumed (not published), minus the spinlock pair and the modelled SRAM accesses; High 284: an uncontended take ends " + idfISRTest + "'s exit span, which " + idfPerfHeader + " IDF_PERFORMANCE_MAX_ISR_EXIT_CYCLES keeps under 565 cycles with the interrupt return at its default",
			Doc:    "instructions of xQueueSemaphoreTake's fast path, run inside its critical section, besides the spinlock pair and the object accesses"},
		{Key: KeyGiveBody, Value: 160, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 10, Max: 2000, Low: 80, High: 400,
			Source: "espressif/esp-idf components/freertos/FreeRTOS-Kernel/queue.c xQueueGenericSend: ~400 cycles uncontended assumed (not published), minus the spinlock pair and the modelled SRAM accesses",
			Doc:    "instructions of xQueueGenericSend's fast path, run inside its critical section, besides the spinlock pair and the object accesses"},
		{Key: KeyBlockBody, Value: 200, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 10, Max: 2000, Low: 100, High: 500,
			Source: "tasks.c vTaskPlaceOnEventList + prvAddCurrentTaskToDelayedList and xTaskRemoveFromEventList: list insertions; not published",
			Doc:    "list work of blocking a task or unblocking one, under xKernelLock"},
		{Key: KeyNotifyBody, Value: 80, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 10, Max: 2000, Low: 40, High: 200,
			Source: "tasks.c ulTaskGenericNotifyTake / xTaskGenericNotify: a few TCB field updates; FreeRTOS's RTOS task notifications page: unblocking a task is 45% faster than with a binary semaphore (measured against V8.1.2's), 35% against V8.2.0 and later",
			Doc:    "instructions of a notify give or take, run inside its critical section, besides the spinlock pair and the TCB accesses"},
		{Key: KeyTickBody, Value: 250, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 10, Max: 5000, Low: 120, High: 600,
			Source: "port_systick.c xPortSysTickHandler + tasks.c xTaskIncrementTick: compare reload, tick count, delayed-list check; not published",
			Doc:    "tick handler work besides its xKernelLock section"},
		{Key: KeyIdleLoop, Value: 100, Unit: "cycles", Prov: platforms.ASSUME, Integer: true, Min: 1, Max: 5000, Low: 40, High: 400,
			Source: "tasks.c prvIdleTask + esp_vApplicationIdleHook before esp_cpu_wait_for_intr (waiti 0); not published",
			Doc:    "idle-task loop before it sleeps in waiti"},
		{Key: KeyNotifyEntries, Value: 1, Unit: "entries", Prov: platforms.CODE, Integer: true, Min: 1, Max: 32,
			Source: "esp-idf components/freertos/Kconfig CONFIG_FREERTOS_TASK_NOTIFICATION_ARRAY_ENTRIES (default 1)",
			Doc:    "notification indexes per task (configTASK_NOTIFICATION_ARRAY_ENTRIES)"},
		{Key: KeyAsserts, Value: 1, Unit: "flag", Prov: platforms.CODE, Min: 0, Max: 1, Choices: []float64{0, 1},
			Source: "esp-idf v5.1 Kconfig (top level) COMPILER_OPTIMIZATION_ASSERTION_LEVEL: default COMPILER_OPTIMIZATION_ASSERTIONS_ENABLE (\"This is the default.\"); esp-idf v5.1 components/esp_hw_support/include/spinlock.h asserts lock->owner == core_id after taking the lock and before releasing it",
			Doc:    "1: IDF's asserts are compiled in, so every portMUX acquire and release reads the owner word once more at the SRAM port; 0: NDEBUG"},
	}
}

// Power per core state, from the ESP32 Series Datasheet v3.5, section 3.7
// "RTC and Low-Power Management", Table 6 "Power Consumption by Power Modes",
// Modem-sleep rows (dual-core chip, radio off): the low end of each range is
// the chip with its CPUs mostly idle, the high end with them busy. The
// datasheet gives chip current at 3.3 V, not per core: the per-core figures
// below split it evenly between the two cores (DERIVED), so they are good for
// comparing variants, not for absolute per-core energy.
var powerByMHz = map[int]struct{ busyMA, idleMA float64 }{
	240: {68, 30},
	160: {44, 27},
	80:  {31, 20}, // Table 6, "80 MHz: 20 ~ 31 mA"
}

const supplyV = 3.3

// Config is the platform model's parameter set in model units.
type Config struct {
	CPUMHz int
	TickHz int
	// SRAM port, in picoseconds.
	SRAMLatency, SRAMOccupancy sim.Time
	PSRAMLatency               sim.Time
	PSRAMHit                   int64 // cycles
	// Cycle costs of kernel paths (see Params for each).
	SpinLoop, SpinlockPair                       int64
	IRQEntry, IRQExit                            int64
	CrosscoreTrigger, CrosscoreLatency, CrossISR int64
	SwitchSelect, SwitchSave                     int64
	TakeBody, GiveBody, BlockBody, NotifyBody    int64
	TickBody, IdleLoop                           int64
	NotifyEntries                                int
	// Asserts: spinlock.h's assert reads of the owner word are compiled in.
	Asserts       bool
	ExecMW, WFIMW float64
}

// ConfigFrom checks values (a labkit run's parameters; missing keys take
// their defaults) and converts them to a Config. A bad value is an error
// naming the parameter and what it accepts.
func ConfigFrom(values map[string]float64) (Config, error) {
	ps := Params()
	if err := ps.SetFrom(values, false); err != nil {
		return Config{}, err
	}
	get := func(k string) float64 { return ps.Get(k) }
	cyc := func(k string) int64 { return int64(get(k) + 0.5) }
	mhz := int(get(KeyCPUMHz))
	clk := sim.Clock{Hz: int64(mhz) * 1_000_000}
	pw, ok := powerByMHz[mhz]
	if !ok {
		return Config{}, fmt.Errorf("parameter %s: value %d has no datasheet power figures", KeyCPUMHz, mhz)
	}
	return Config{
		CPUMHz: mhz, TickHz: int(get(KeyTickHz)),
		SRAMLatency: clk.Cycles(cyc(KeySRAMLatency)), SRAMOccupancy: clk.Cycles(cyc(KeySRAMOccupancy)),
		PSRAMLatency: sim.Time(get(KeyPSRAMLatency) * float64(sim.Nanosecond)), PSRAMHit: cyc(KeyPSRAMHit),
		SpinLoop: cyc(KeySpinLoop), SpinlockPair: cyc(KeySpinlockPair),
		IRQEntry: cyc(KeyIRQEntry), IRQExit: cyc(KeyIRQExit),
		CrosscoreTrigger: cyc(KeyCrosscoreTrigger), CrosscoreLatency: cyc(KeyCrosscoreLatency), CrossISR: cyc(KeyCrosscoreISR),
		SwitchSelect: cyc(KeySwitchSelect), SwitchSave: cyc(KeySwitchSave),
		TakeBody: cyc(KeyTakeBody), GiveBody: cyc(KeyGiveBody), BlockBody: cyc(KeyBlockBody), NotifyBody: cyc(KeyNotifyBody),
		TickBody: cyc(KeyTickBody), IdleLoop: cyc(KeyIdleLoop),
		NotifyEntries: int(get(KeyNotifyEntries)), Asserts: get(KeyAsserts) == 1,
		ExecMW: pw.busyMA * supplyV / 2, WFIMW: pw.idleMA * supplyV / 2,
	}, nil
}
