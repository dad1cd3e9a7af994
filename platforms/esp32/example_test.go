package esp32_test

import (
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
