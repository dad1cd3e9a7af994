package esp32

import (
	"context"
	"fmt"
	"math"

	"synclab/platforms"
	"synclab/sim"
)

// Variants of the priority-inversion and unblock experiments.
const (
	GuardMutex  = "mutex"
	GuardBinary = "binary-semaphore"
	GuardNotify = "notify"
	// GuardQueue passes a 4-byte item through a queue of one (unblock only).
	GuardQueue = "queue"
)

// runTrace returns a trace of a whole scenario run when asked for one, nil
// otherwise; endTrace closes its window where the run ended.
func runTrace(on bool) *sim.Trace {
	if !on {
		return nil
	}
	return sim.NewTrace(0, math.MaxInt64, platforms.MaxTraceSpans)
}

// endTrace returns e's trace with its window ended at the run's end (nil
// when e records none).
func endTrace(e *sim.Engine) *sim.Trace {
	if e.Trace != nil {
		e.Trace.To = e.Now()
	}
	return e.Trace
}

// InversionResult is what the priority-inversion scenario measures.
type InversionResult struct {
	// HighBlockedUS is how long the high-priority task waited for the
	// resource; HolderPeakPriority the highest priority the low task ran at.
	HighBlockedUS      float64
	HolderPeakPriority int
	// Trace holds the whole run's core states, tasks and locks when
	// RunOptions.Trace asked for it.
	Trace *sim.Trace
}

// RunPriorityInversion runs the textbook scenario on core 0: low (prio 3)
// takes the resource and works holdCycles; high (prio 8) wakes after one
// tick and wants it; medium (prio 5) wakes after one tick too and computes
// mediumCycles. With a mutex, low inherits 8 and finishes before medium
// runs; a binary semaphore or a notification handshake has no inheritance,
// so high also waits for medium.
func RunPriorityInversion(ctx context.Context, variant string, values map[string]float64, holdCycles, mediumCycles int64, opt RunOptions) (InversionResult, error) {
	var res InversionResult
	cfg, err := ConfigFrom(values)
	if err != nil {
		return res, err
	}
	e := sim.NewEngine(1)
	defer e.Close()
	e.Trace = runTrace(opt.Trace)
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
	res.Trace = endTrace(e)
	return res, nil
}

// UnblockResult is what the unblock scenario measures.
type UnblockResult struct {
	// US is the mean time from the give to the woken task running, in
	// microseconds.
	US float64
	// Trace holds the whole run's core states, tasks and locks when
	// RunOptions.Trace asked for it.
	Trace *sim.Trace
}

// RunNotifyUnblock measures, on one core, the time from a give by a task of
// priority 5 to the first instruction of the woken task of priority 6 (which
// preempts it), through a task notification, a binary semaphore or a queue
// of one item: the FreeRTOS documentation's "45% faster" claim, with the
// queue beside it, as the mean over n rounds.
func RunNotifyUnblock(ctx context.Context, variant string, values map[string]float64, n int, opt RunOptions) (UnblockResult, error) {
	var res UnblockResult
	cfg, err := ConfigFrom(values)
	if err != nil {
		return res, err
	}
	if n < 1 {
		return res, fmt.Errorf("rounds %d must be >= 1", n)
	}
	e := sim.NewEngine(1)
	defer e.Close()
	e.Trace = runTrace(opt.Trace)
	k, err := NewKernel(e, cfg)
	if err != nil {
		return res, err
	}
	var sem *Semaphore
	var q *Queue
	switch variant {
	case GuardBinary:
		if sem, err = k.NewSemaphore("s", Binary, 1, 0, 8); err != nil {
			return res, err
		}
	case GuardQueue:
		if q, err = k.NewQueue("q", 1, 4); err != nil {
			return res, err
		}
	case GuardNotify:
	default:
		return res, fmt.Errorf("variant %q: want %s, %s or %s", variant, GuardBinary, GuardNotify, GuardQueue)
	}
	var gaveAt, total sim.Time
	waiter, err := k.CreateTask("waiter", 6, 0, func(t *TCB) {
		for range n {
			switch {
			case sem != nil:
				t.SemaphoreTake(sem, PortMaxDelay)
			case q != nil:
				t.QueueReceive(q, PortMaxDelay)
			default:
				t.NotifyTake(0, true, PortMaxDelay)
			}
			total += t.Now() - gaveAt
		}
	})
	if err != nil {
		return res, err
	}
	if _, err := k.CreateTask("giver", 5, 0, func(t *TCB) {
		for range n {
			t.Work(1000)
			gaveAt = t.Now()
			switch {
			case sem != nil:
				t.SemaphoreGive(sem)
			case q != nil:
				t.QueueSend(q, 1, 0)
			default:
				t.NotifyGive(waiter, 0)
			}
		}
	}); err != nil {
		return res, err
	}
	if err := k.Start(); err != nil {
		return res, err
	}
	if err := e.Run(ctx); err != nil {
		return res, err
	}
	res.US, res.Trace = (total / sim.Time(n)).Micros(), endTrace(e)
	return res, nil
}

// APIPathsResult is what RunAPIPaths measures, in CPU cycles and ticks.
type APIPathsResult struct {
	// GiveTakeCycles is one give plus one take that finds the count
	// pending, uncontended (neither blocks nor yields), averaged.
	GiveTakeCycles float64
	// LockSections is how many portMUX spinlocks one give plus take
	// acquires (each with one S32C1I, uncontended).
	LockSections float64
	// PairCycles is one uncontended portMUX enter plus exit (the spinlock
	// with its critical-section bookkeeping), S32C1ICycles one S32C1I on a
	// free internal-SRAM word.
	PairCycles, S32C1ICycles float64
	// TimeoutReturned is what a take with a timeout returned when nobody
	// gave (the notification count, or 1 for a semaphore taken, 0 for
	// pdFALSE); TimeoutTicksWaited the ticks from the call to its return.
	TimeoutReturned    float64
	TimeoutTicksWaited float64
}

// RunAPIPaths times, on core 0, rounds of a give followed by a take that
// finds it (xTaskNotifyGive to the task itself and ulTaskNotifyTake(pdTRUE,
// 0), or xSemaphoreGive and xSemaphoreTake(0) on a binary semaphore),
// counting the spinlocks they take; then a take with a timeout of
// timeoutTicks that nobody gives. PairCycles and S32C1ICycles put the
// spinlock sections in cycles.
func RunAPIPaths(ctx context.Context, variant string, values map[string]float64, rounds int, timeoutTicks uint32) (APIPathsResult, error) {
	var res APIPathsResult
	cfg, err := ConfigFrom(values)
	if err != nil {
		return res, err
	}
	if rounds < 1 || timeoutTicks < 1 {
		return res, fmt.Errorf("rounds %d and timeout %d ticks must be >= 1", rounds, timeoutTicks)
	}
	if variant != GuardNotify && variant != GuardBinary {
		return res, fmt.Errorf("variant %q: want %s or %s", variant, GuardNotify, GuardBinary)
	}
	clk := sim.Clock{Hz: int64(cfg.CPUMHz) * 1_000_000}
	cycles := func(d sim.Time, n int) float64 { return float64(clk.ToCycles(d)) / float64(n) }
	pair, err := perfPortMux(ctx, cfg)
	if err != nil {
		return res, err
	}
	res.PairCycles = cycles(pair[0], 1)
	err = perfKernel(ctx, cfg, func(k *Kernel) error {
		var sem *Semaphore
		if variant == GuardBinary {
			if sem, err = k.NewSemaphore("s", Binary, 1, 0, 8); err != nil {
				return err
			}
		}
		word := k.SoC.Alloc(4, 8)
		acquires := func() (n int) {
			for _, m := range k.muxes {
				n += m.Acquires
			}
			return n
		}
		_, err := k.CreateTask("t", 5, 0, func(t *TCB) {
			t0 := t.Now()
			for i := range uint64(rounds) {
				t.Proc.CAS(word, i, i+1) // the S32C1I of spinlock_acquire, alone
			}
			res.S32C1ICycles = cycles(t.Now()-t0, rounds)
			n0 := acquires()
			t0 = t.Now()
			for range rounds {
				if sem != nil {
					t.SemaphoreGive(sem)
					t.SemaphoreTake(sem, 0)
				} else {
					t.NotifyGive(t, 0)
					t.NotifyTake(0, true, 0)
				}
			}
			res.GiveTakeCycles = cycles(t.Now()-t0, rounds)
			res.LockSections = float64(acquires()-n0) / float64(rounds)
			before := t.TickCount()
			if sem != nil {
				res.TimeoutReturned = float64(b2u(t.SemaphoreTake(sem, timeoutTicks)))
			} else {
				res.TimeoutReturned = float64(t.NotifyTake(0, true, timeoutTicks))
			}
			res.TimeoutTicksWaited = float64(t.TickCount() - before)
		})
		return err
	})
	return res, err
}
