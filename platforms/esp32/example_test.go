package esp32_test

import (
	"context"
	"fmt"

	"synclab/platforms/esp32"
)

// The RAM of a semaphore or mutex on the ESP32, from FreeRTOS.h's
// StaticQueue_t: with IDF's configuration, and with the trace facility that
// CONFIG_FREERTOS_GENERATE_RUN_TIME_STATS (vTaskGetRunTimeStats) selects.
func ExampleStaticQueueBytes() {
	fmt.Println(esp32.StaticQueueBytes(esp32.IDFQueueConfig))
	stats := esp32.IDFQueueConfig
	stats.TraceFacility = true
	fmt.Println(esp32.StaticQueueBytes(stats))
	// Output:
	// 84
	// 92
}

// An uncontended notification give and take take the kernel's spinlock
// three times; a take nobody gives times out after its xTicksToWait.
func ExampleRunAPIPaths() {
	r, err := esp32.RunAPIPaths(context.Background(), esp32.GuardNotify, nil, 100, 5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%g spinlock sections, each one S32C1I of %g cycles\n", r.LockSections, r.S32C1ICycles)
	fmt.Printf("ulTaskNotifyTake(pdTRUE, 5) returned %g after %g ticks\n", r.TimeoutReturned, r.TimeoutTicksWaited)
	// Output:
	// 3 spinlock sections, each one S32C1I of 2 cycles
	// ulTaskNotifyTake(pdTRUE, 5) returned 0 after 5 ticks
}
