package esp32

import (
	"context"
	"testing"
)

// Inheritance bounds the high task's wait by the low task's hold time; a
// binary semaphore lets the medium task stretch it.
func TestPriorityInversionScenario(t *testing.T) {
	const hold, medium = 240 * 15000, 240 * 20000 // 15 ms and 20 ms at 240 MHz (the tick is 10 ms)
	m, err := RunPriorityInversion(context.Background(), GuardMutex, nil, hold, medium)
	if err != nil {
		t.Fatal(err)
	}
	b, err := RunPriorityInversion(context.Background(), GuardBinary, nil, hold, medium)
	if err != nil {
		t.Fatal(err)
	}
	if m.HolderPeakPriority != 8 || b.HolderPeakPriority != 3 {
		t.Errorf("holder peak priority: mutex %d (want 8), binary %d (want 3)", m.HolderPeakPriority, b.HolderPeakPriority)
	}
	if m.HighBlockedUS > 15000 || b.HighBlockedUS < 20000 {
		t.Errorf("high blocked %.0f us with a mutex (want < 15000), %.0f us with a binary semaphore (want > 20000)", m.HighBlockedUS, b.HighBlockedUS)
	}
}

func TestNotifyUnblockFaster(t *testing.T) {
	nt, err := RunNotifyUnblock(context.Background(), GuardNotify, nil, 200)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := RunNotifyUnblock(context.Background(), GuardBinary, nil, 200)
	if err != nil {
		t.Fatal(err)
	}
	if !(nt > 0 && nt < bs) {
		t.Fatalf("unblock through a notification %.3f us, through a binary semaphore %.3f us: want notify faster", nt, bs)
	}
	t.Logf("unblock: notify %.3f us, binary semaphore %.3f us (%.0f%% faster)", nt, bs, 100*(1-nt/bs))
}
