package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The calendar queue pops in (time, sequence) order whatever the mix of
// near and far times, through its resizes and removals (cancelled and
// moved events).
func TestQueueOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	q := newCalQueue()
	var ref []entry
	var seq uint64
	var now Time
	for step := 0; step < 300000; step++ {
		// Grow, then drain: both the small and the calendar form, and the
		// switches between them.
		pushPct := 55
		if step > 150000 {
			pushPct = 40
		}
		if len(ref) == 0 || r.IntN(100) < pushPct {
			var d Time
			switch r.IntN(4) {
			case 0:
				d = 0 // ties
			case 1:
				d = Time(r.IntN(100))
			case 2:
				d = Time(r.IntN(1_000_000))
			default:
				d = Time(r.Int64N(int64(Second)))
			}
			seq++
			x := entry{now + d, seq, nil}
			q.push(x)
			ref = append(ref, x)
			continue
		}
		if r.IntN(4) == 0 {
			i := r.IntN(len(ref))
			q.min() // the engine looks before it cancels: the earliest is cached
			q.remove(ref[i])
			ref = slices.Delete(ref, i, i+1)
			continue
		}
		i := slices.IndexFunc(ref, func(e entry) bool { return true })
		for j := range ref {
			if ref[j].less(ref[i]) {
				i = j
			}
		}
		want := ref[i]
		ref = slices.Delete(ref, i, i+1)
		got := q.pop()
		if got != want {
			t.Fatalf("step %d: popped %+v, want %+v", step, got, want)
		}
		now = got.t
	}
}
