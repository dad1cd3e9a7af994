package esp32

import (
	"context"
	"fmt"

	"synclab/sim"
)

// Variants of the priority-inversion and unblock experiments.
const (
	GuardMutex  = "mutex"
	GuardBinary = "binary-semaphore"
	GuardNotify = "notify"
)

// InversionResult is what the priority-inversion scenario measures.
type InversionResult struct {
	// HighBlockedUS is how long the high-priority task waited for the
	// resource; HolderPeakPriority the highest priority the low task ran at.
	HighBlockedUS      float64
	HolderPeakPriority int
}

// RunPriorityInversion runs the textbook scenario on core 0: low (prio 3)
// takes the resource and works holdCycles; high (prio 8) wakes after one
// tick and wants it; medium (prio 5) wakes after one tick too and computes
// mediumCycles. With a mutex, low inherits 8 and finishes before medium
// runs; a binary semaphore or a notification handshake has no inheritance,
// so high also waits for medium.
func RunPriorityInversion(ctx context.Context, variant string, values map[string]float64, holdCycles, mediumCycles int64) (InversionResult, error) {
	var res InversionResult
	cfg, err := ConfigFrom(values)
	if err != nil {
		return res, err
	}
	e := sim.NewEngine(1)
	defer e.Close()
	k, err := NewKernel(e, cfg)
	if err != nil {
		return res, err
	}
	var sem *Semaphore
	switch variant {
	case GuardMutex:
		sem, err = k.NewSemaphore("res", Mutex, 1, 1, 8)
	case GuardBinary:
		sem, err = k.NewSemaphore("res", Binary, 1, 1, 8)
	case GuardNotify:
	default:
		return res, fmt.Errorf("variant %q: want %s, %s or %s", variant, GuardMutex, GuardBinary, GuardNotify)
	}
	if err != nil {
		return res, err
	}
	var high *TCB
	var asked, got sim.Time
	_, err = k.CreateTask("low", 3, 0, func(t *TCB) {
		if sem != nil {
			t.SemaphoreTake(sem, PortMaxDelay)
		}
		for left := holdCycles; left > 0; left -= 2400 { // work in 10 us steps to watch the priority
			t.Work(min(left, 2400))
			t.Now()
			res.HolderPeakPriority = max(res.HolderPeakPriority, t.Priority)
		}
		if sem != nil {
			t.SemaphoreGive(sem)
		} else {
			t.NotifyGive(high, 0) // the handshake: "your turn"
		}
	})
	if err != nil {
		return res, err
	}
	if high, err = k.CreateTask("high", 8, 0, func(t *TCB) {
		t.Delay(1)
		asked = t.Now()
		if sem != nil {
			t.SemaphoreTake(sem, PortMaxDelay)
		} else {
			t.NotifyTake(0, true, PortMaxDelay)
		}
		got = t.Now()
	}); err != nil {
		return res, err
	}
	if _, err = k.CreateTask("medium", 5, 0, func(t *TCB) {
		t.Delay(1)
		t.Work(mediumCycles)
		t.Now()
	}); err != nil {
		return res, err
	}
	if err := k.Start(); err != nil {
		return res, err
	}
	if err := e.Run(ctx); err != nil {
		return res, err
	}
	res.HighBlockedUS = (got - asked).Micros()
	return res, nil
}

// RunNotifyUnblock measures, on one core, the time from a give by a task of
// priority 5 to the first instruction of the woken task of priority 6 (which
// preempts it), through a task notification or a binary semaphore: the
// FreeRTOS documentation's "45% faster" claim. It returns the mean over n
// rounds in microseconds.
func RunNotifyUnblock(ctx context.Context, variant string, values map[string]float64, n int) (float64, error) {
	cfg, err := ConfigFrom(values)
	if err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("rounds %d must be >= 1", n)
	}
	e := sim.NewEngine(1)
	defer e.Close()
	k, err := NewKernel(e, cfg)
	if err != nil {
		return 0, err
	}
	var sem *Semaphore
	switch variant {
	case GuardBinary:
		if sem, err = k.NewSemaphore("s", Binary, 1, 0, 8); err != nil {
			return 0, err
		}
	case GuardNotify:
	default:
		return 0, fmt.Errorf("variant %q: want %s or %s", variant, GuardBinary, GuardNotify)
	}
	var gaveAt, total sim.Time
	waiter, err := k.CreateTask("waiter", 6, 0, func(t *TCB) {
		for range n {
			if sem != nil {
				t.SemaphoreTake(sem, PortMaxDelay)
			} else {
				t.NotifyTake(0, true, PortMaxDelay)
			}
			total += t.Now() - gaveAt
		}
	})
	if err != nil {
		return 0, err
	}
	if _, err := k.CreateTask("giver", 5, 0, func(t *TCB) {
		for range n {
			t.Work(1000)
			gaveAt = t.Now()
			if sem != nil {
				t.SemaphoreGive(sem)
			} else {
				t.NotifyGive(waiter, 0)
			}
		}
	}); err != nil {
		return 0, err
	}
	if err := k.Start(); err != nil {
		return 0, err
	}
	if err := e.Run(ctx); err != nil {
		return 0, err
	}
	return (total / sim.Time(n)).Micros(), nil
}
