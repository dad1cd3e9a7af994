package esp32_test

import (
	"context"
	"fmt"

	"synclab/platforms/esp32"
	"synclab/sim"
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

// A producer on core 0 passes readings to a slower consumer on core 1
// through a queue of two items: once the queue is full, every send blocks
// until the consumer has taken an item. Item 2 goes in 9 µs after item 0
// comes out: the receive wakes the producer, whose core, idle meanwhile,
// takes a crosscore interrupt and switches back to it.
func ExampleKernel_NewQueue() {
	cfg, err := esp32.ConfigFrom(nil) // the defaults
	if err != nil {
		panic(err)
	}
	e := sim.NewEngine(1)
	defer e.Close()
	k, err := esp32.NewKernel(e, cfg)
	if err != nil {
		panic(err)
	}
	q, err := k.NewQueue("readings", 2, 4) // xQueueCreate(2, sizeof(uint32_t))
	if err != nil {
		panic(err)
	}
	var got []uint64
	var sentAt, gotAt []sim.Time
	if _, err := k.CreateTask("producer", 5, 0, func(t *esp32.TCB) {
		for i := range 5 {
			t.QueueSend(q, uint64(100+i), esp32.PortMaxDelay)
			sentAt = append(sentAt, t.Now())
		}
	}); err != nil {
		panic(err)
	}
	if _, err := k.CreateTask("consumer", 5, 1, func(t *esp32.TCB) {
		for range 5 {
			t.Work(24_000) // 100 µs at 240 MHz
			v, _ := t.QueueReceive(q, esp32.PortMaxDelay)
			got, gotAt = append(got, v), append(gotAt, t.Now())
		}
	}); err != nil {
		panic(err)
	}
	if err := k.Start(); err != nil {
		panic(err)
	}
	if err := e.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println("received", got)
	for i := range got {
		fmt.Printf("item %d: sent by %4.0f µs, received at %4.0f µs\n", i, sentAt[i].Micros(), gotAt[i].Micros())
	}
	// Output:
	// received [100 101 102 103 104]
	// item 0: sent by    1 µs, received at  103 µs
	// item 1: sent by    3 µs, received at  206 µs
	// item 2: sent by  112 µs, received at  308 µs
	// item 3: sent by  215 µs, received at  410 µs
	// item 4: sent by  318 µs, received at  511 µs
}
