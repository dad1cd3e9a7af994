// Declarations of the ESP-IDF v5 API that main.c uses, with the same
// signatures, so that a host compiler can syntax-check main.c
// (gcc -fsyntax-only -DSYNCLAB_HOST_CHECK -Iesp32/host esp32/main/main.c;
// bench/board/test.sh does). Nothing here is built into the app.
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define CONFIG_ESP_DEFAULT_CPU_FREQ_MHZ 240
#define CONFIG_FREERTOS_HZ 100

typedef int BaseType_t;
typedef unsigned int UBaseType_t;
typedef uint32_t TickType_t;
typedef void *TaskHandle_t;
typedef void *SemaphoreHandle_t;
typedef void *QueueHandle_t;
typedef void (*TaskFunction_t)(void *);
typedef struct {
	uint32_t owner;
	uint32_t count;
} portMUX_TYPE;

#define pdTRUE ((BaseType_t)1)
#define portMAX_DELAY ((TickType_t)0xffffffffUL)
#define portMUX_INITIALIZER_UNLOCKED {.owner = 0xB33FFFFF, .count = 0}
#define pdMS_TO_TICKS(ms) ((TickType_t)(((TickType_t)(ms) * (TickType_t)CONFIG_FREERTOS_HZ) / (TickType_t)1000U))

void portENTER_CRITICAL(portMUX_TYPE *mux);
void portEXIT_CRITICAL(portMUX_TYPE *mux);
uint32_t esp_cpu_get_cycle_count(void);
bool esp_cpu_compare_and_set(volatile uint32_t *addr, uint32_t compare_value, uint32_t new_value);
int64_t esp_timer_get_time(void);

SemaphoreHandle_t xSemaphoreCreateMutex(void);
SemaphoreHandle_t xSemaphoreCreateBinary(void);
SemaphoreHandle_t xSemaphoreCreateCounting(UBaseType_t max, UBaseType_t initial);
BaseType_t xSemaphoreTake(SemaphoreHandle_t s, TickType_t ticks);
BaseType_t xSemaphoreGive(SemaphoreHandle_t s);
void vSemaphoreDelete(SemaphoreHandle_t s);

QueueHandle_t xQueueCreate(UBaseType_t length, UBaseType_t item_size);
BaseType_t xQueueSend(QueueHandle_t q, const void *item, TickType_t ticks);
BaseType_t xQueueReceive(QueueHandle_t q, void *buffer, TickType_t ticks);
void vQueueDelete(QueueHandle_t q);

BaseType_t xTaskCreatePinnedToCore(TaskFunction_t fn, const char *name, uint32_t stack, void *arg, UBaseType_t prio, TaskHandle_t *handle, BaseType_t core);
void vTaskDelete(TaskHandle_t t);
UBaseType_t uxTaskPriorityGet(TaskHandle_t t);
void vTaskPrioritySet(TaskHandle_t t, UBaseType_t prio);
void vTaskDelay(TickType_t ticks);
uint32_t ulTaskNotifyTake(BaseType_t clear, TickType_t ticks);
BaseType_t xTaskNotifyGive(TaskHandle_t t);
