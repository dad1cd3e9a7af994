// SyncLab board benchmark for the ESP32: measures on the chip what the
// model's ESP32 experiments simulate, and prints each figure as a SyncLab
// measurement row on the console:
//
//	experiment,variant,settings,metric,value
//
// with the experiment, variant and settings (key=value;key=value, the keys
// of `lab run -set`) of the simulated run it corresponds to. Copy the rows
// between the BEGIN and END lines into a file and run
//
//	lab calibrate board.csv -fit spinlock_pair_cycles,switch_save_restore_cycles,...
//
// What it measures:
//   - esp32-perf-tests: an uncontended portENTER_CRITICAL/portEXIT_CRITICAL
//     pair, in cycles (as ESP-IDF's test_spinlocks.c does);
//   - esp32-critical-section: the article's loop, two tasks pinned to the two
//     cores (priority 10) each doing ITERATIONS guarded increments of one
//     counter, with a mutex, a notification handshake, a portMUX critical
//     section or the handshake through a queue of one item per task;
//     ns_per_op is the total time over one task's iterations;
//   - esp32-notify-unblock: on core 0, a task of priority 5 gives, a task of
//     priority 6 waiting on a notification, a binary semaphore or a queue of
//     one 4-byte item wakes; the time from the give call to the woken task
//     running, in us;
//   - esp32-pingpong: the two cores flip one word of internal SRAM with
//     S32C1I compare-and-set; the round trip over two, in ns.
#include <inttypes.h>
#include <stdio.h>

#ifdef SYNCLAB_HOST_CHECK
#include "host_stubs.h" // declarations only, for a syntax check with a host compiler
#else
#include "esp_cpu.h"
#include "esp_timer.h"
#include "freertos/FreeRTOS.h"
#include "freertos/queue.h"
#include "freertos/semphr.h"
#include "freertos/task.h"
#include "sdkconfig.h"
#endif

#define ITERATIONS 200000 // increments per task in the article's loop
#define ROUNDS 1000       // unblock and spinlock repetitions
#define PING_ROUNDS 100000

#ifdef NDEBUG
#define ASSERTS 0
#else
#define ASSERTS 1 // assert() compiled in (ESP-IDF's default): the model's idf_asserts
#endif

// common is the settings every row shares: the build's clock, tick and asserts.
static char common[96];

static void row(const char *exp, const char *variant, const char *extra, const char *metric, double value)
{
	printf("%s,%s,%s%s%s,%s,%.4g\n", exp, variant, common, *extra ? ";" : "", extra, metric, value);
}

// ---- portMUX pair ---------------------------------------------------------

static void portmux_pair(void)
{
	static portMUX_TYPE mux = portMUX_INITIALIZER_UNLOCKED;
	uint32_t t0 = esp_cpu_get_cycle_count();
	for (int i = 0; i < 10000; i++) {
		portENTER_CRITICAL(&mux);
		portEXIT_CRITICAL(&mux);
	}
	uint32_t t1 = esp_cpu_get_cycle_count();
	row("esp32-perf-tests", "test-apps", "", "portmux_pair_cycles", (t1 - t0) / 10000.0);
}

// ---- the article's loop -----------------------------------------------------

enum variant { MUTEX, NOTIFY, CRITICAL, QUEUE };
static const char *variant_names[] = {"mutex", "notify", "critical", "queue"};

static volatile uint32_t counter;
static SemaphoreHandle_t guard, done;
static portMUX_TYPE cs_mux = portMUX_INITIALIZER_UNLOCKED;
static TaskHandle_t workers[2];
static QueueHandle_t boxes[2]; // QUEUE: each worker's mailbox for the token
static enum variant current;

static void worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	uint32_t token;
	for (int i = 0; i < ITERATIONS; i++) {
		switch (current) {
		case MUTEX:
			xSemaphoreTake(guard, portMAX_DELAY);
			counter++;
			xSemaphoreGive(guard);
			break;
		case NOTIFY:
			ulTaskNotifyTake(pdTRUE, portMAX_DELAY);
			counter++;
			// The last give would go to a task that has finished and
			// may be freed already.
			if (me == 0 || i < ITERATIONS - 1)
				xTaskNotifyGive(workers[1 - me]);
			break;
		case CRITICAL:
			portENTER_CRITICAL(&cs_mux);
			counter++;
			portEXIT_CRITICAL(&cs_mux);
			break;
		case QUEUE:
			xQueueReceive(boxes[me], &token, portMAX_DELAY);
			counter++;
			xQueueSend(boxes[1 - me], &token, portMAX_DELAY);
			break;
		}
	}
	xSemaphoreGive(done);
	vTaskDelete(NULL);
}

static void critical_section(enum variant v)
{
	current = v;
	counter = 0;
	if (v == MUTEX)
		guard = xSemaphoreCreateMutex();
	if (v == QUEUE) {
		uint32_t token = 1;
		boxes[0] = xQueueCreate(1, sizeof(uint32_t));
		boxes[1] = xQueueCreate(1, sizeof(uint32_t));
		xQueueSend(boxes[0], &token, 0); // the token starts with the task on core 0
	}
	// app_main runs on core 0 below the workers: created first, the core-0
	// worker would preempt it and, in the variants that never block, do all
	// its iterations before the core-1 worker exists. Above them both while
	// it creates them, it lets them start a task creation apart (tens of
	// µs in a run of hundreds of ms).
	UBaseType_t prio = uxTaskPriorityGet(NULL);
	vTaskPrioritySet(NULL, 11);
	int64_t t0 = esp_timer_get_time();
	for (int i = 0; i < 2; i++)
		xTaskCreatePinnedToCore(worker, "worker", 2048, (void *)(intptr_t)i, 10, &workers[i], i);
	if (v == NOTIFY)
		xTaskNotifyGive(workers[0]); // the token starts with the task on core 0
	vTaskPrioritySet(NULL, prio);
	xSemaphoreTake(done, portMAX_DELAY);
	xSemaphoreTake(done, portMAX_DELAY);
	double us = (double)(esp_timer_get_time() - t0);
	if (v == MUTEX)
		vSemaphoreDelete(guard);
	if (v == QUEUE) {
		vQueueDelete(boxes[0]);
		vQueueDelete(boxes[1]);
	}
	if (counter != 2 * ITERATIONS)
		printf("# %s: counter %" PRIu32 ", expected %d\n", variant_names[v], counter, 2 * ITERATIONS);
	char extra[64];
	// The model's 1 kHz peripheral interrupt is not generated here: 1 Hz is
	// the closest the model accepts to none.
	snprintf(extra, sizeof extra, "iterations=%d;periph_hz=1", ITERATIONS);
	row("esp32-critical-section", variant_names[v], extra, "ns_per_op", us * 1000 / ITERATIONS);
	row("esp32-critical-section", variant_names[v], extra, "total_ms", us / 1000);
}

// ---- unblock latency ----------------------------------------------------------

enum { BY_NOTIFY, BY_BINARY, BY_QUEUE };
static const char *unblock_names[] = {"notify", "binary-semaphore", "queue"};
static volatile uint32_t gave_at;
static uint64_t unblock_cycles;
static SemaphoreHandle_t unblock_sem;
static QueueHandle_t unblock_queue;
static TaskHandle_t unblock_waiter;
static int unblock_by;

static void unblock_wait(void *arg)
{
	(void)arg;
	uint32_t item;
	for (int i = 0; i < ROUNDS; i++) {
		if (unblock_by == BY_NOTIFY)
			ulTaskNotifyTake(pdTRUE, portMAX_DELAY);
		else if (unblock_by == BY_BINARY)
			xSemaphoreTake(unblock_sem, portMAX_DELAY);
		else
			xQueueReceive(unblock_queue, &item, portMAX_DELAY);
		unblock_cycles += esp_cpu_get_cycle_count() - gave_at;
	}
	xSemaphoreGive(done);
	vTaskDelete(NULL);
}

static void unblock_give(void *arg)
{
	(void)arg;
	uint32_t item = 1;
	for (int i = 0; i < ROUNDS; i++) {
		uint32_t until = esp_cpu_get_cycle_count() + 1000; // the model's giver works 1000 cycles
		while ((int32_t)(esp_cpu_get_cycle_count() - until) < 0)
			;
		gave_at = esp_cpu_get_cycle_count();
		if (unblock_by == BY_NOTIFY)
			xTaskNotifyGive(unblock_waiter);
		else if (unblock_by == BY_BINARY)
			xSemaphoreGive(unblock_sem);
		else
			xQueueSend(unblock_queue, &item, 0);
	}
	xSemaphoreGive(done);
	vTaskDelete(NULL);
}

static void unblock(int by)
{
	unblock_by = by;
	unblock_cycles = 0;
	unblock_sem = xSemaphoreCreateBinary();
	unblock_queue = xQueueCreate(1, sizeof(uint32_t));
	xTaskCreatePinnedToCore(unblock_wait, "waiter", 2048, NULL, 6, &unblock_waiter, 0);
	xTaskCreatePinnedToCore(unblock_give, "giver", 2048, NULL, 5, NULL, 0);
	xSemaphoreTake(done, portMAX_DELAY);
	xSemaphoreTake(done, portMAX_DELAY);
	vSemaphoreDelete(unblock_sem);
	vQueueDelete(unblock_queue);
	double us = (double)unblock_cycles / ROUNDS / CONFIG_ESP_DEFAULT_CPU_FREQ_MHZ;
	row("esp32-notify-unblock", unblock_names[by], "", "unblock_us", us);
}

// ---- core-to-core ping-pong ------------------------------------------------

enum { PING, PONG };
static volatile uint32_t ping_word; // internal SRAM: no data cache in front of it
static int64_t ping_us;

static void flip(uint32_t from, uint32_t to)
{
	while (!esp_cpu_compare_and_set(&ping_word, from, to))
		;
}

static void ponger(void *arg)
{
	(void)arg;
	for (int i = 0; i < PING_ROUNDS; i++)
		flip(PING, PONG);
	xSemaphoreGive(done);
	vTaskDelete(NULL);
}

static void pinger(void *arg)
{
	(void)arg;
	int64_t t0 = esp_timer_get_time();
	for (int i = 0; i < PING_ROUNDS; i++)
		flip(PONG, PING);
	ping_us = esp_timer_get_time() - t0;
	xSemaphoreGive(done);
	vTaskDelete(NULL);
}

static void pingpong(void)
{
	ping_word = PING;
	xTaskCreatePinnedToCore(ponger, "pong", 2048, NULL, 10, NULL, 1);
	xTaskCreatePinnedToCore(pinger, "ping", 2048, NULL, 10, NULL, 0);
	xSemaphoreTake(done, portMAX_DELAY);
	xSemaphoreTake(done, portMAX_DELAY);
	char extra[32];
	snprintf(extra, sizeof extra, "rounds=%d", PING_ROUNDS);
	row("esp32-pingpong", "s32c1i", extra, "one_way_ns", (double)ping_us * 1000 / PING_ROUNDS / 2);
}

void app_main(void)
{
	snprintf(common, sizeof common, "cpu_mhz=%d;tick_hz=%d;idf_asserts=%d", CONFIG_ESP_DEFAULT_CPU_FREQ_MHZ, CONFIG_FREERTOS_HZ, ASSERTS);
	done = xSemaphoreCreateCounting(2, 0);
	vTaskDelay(pdMS_TO_TICKS(500)); // let the console and the other core settle
	printf("SYNCLAB BEGIN\nexperiment,variant,settings,metric,value\n");
	portmux_pair();
	critical_section(MUTEX);
	critical_section(NOTIFY);
	critical_section(CRITICAL);
	critical_section(QUEUE);
	unblock(BY_NOTIFY);
	unblock(BY_BINARY);
	unblock(BY_QUEUE);
	pingpong();
	printf("SYNCLAB END\n");
}
