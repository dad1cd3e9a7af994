package esp32

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"synclab/sim"
)

// A producer sends 1..n into a short queue and a consumer receives them:
// every item arrives once, in order, and the producer is never more than the
// queue's length ahead; with a slow consumer it blocks on the full queue, with
// a slow producer the consumer blocks on the empty one. Same core and across
// cores, items of one word and of 64 bytes.
func TestQueueProducerConsumer(t *testing.T) {
	const n = 200
	for _, c := range []struct {
		prodCore, consCore, length, itemSize int
		prodWork, consWork                   int64
		senderBlocks, receiverBlocks         bool
	}{
		{0, 1, 4, 4, 0, 2000, true, false},
		{0, 1, 4, 64, 2000, 0, false, true},
		{1, 0, 1, 8, 0, 0, false, false}, // in step: they take turns at the queue's lock
		{0, 0, 3, 4, 0, 500, true, false},
	} {
		name := fmt.Sprintf("cores %d->%d, %d x %d B, work %d/%d", c.prodCore, c.consCore, c.length, c.itemSize, c.prodWork, c.consWork)
		t.Run(name, func(t *testing.T) {
			e, k := newTestKernel(t, nil)
			q, err := k.NewQueue("q", c.length, c.itemSize)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			sent := 0
			senderBlocked, receiverBlocked := false, false
			mustTask(t, k, "producer", 5, c.prodCore, func(tcb *TCB) {
				for i := 1; i <= n; i++ {
					tcb.Work(c.prodWork)
					sent++ // counted before it can arrive
					if !tcb.QueueSend(q, uint64(i), PortMaxDelay) {
						t.Errorf("send %d with portMAX_DELAY failed", i)
					}
				}
			})
			mustTask(t, k, "consumer", 5, c.consCore, func(tcb *TCB) {
				for range n {
					tcb.Work(c.consWork)
					tcb.Now() // the work done before looking
					senderBlocked = senderBlocked || q.waitSend.Len() > 0
					receiverBlocked = receiverBlocked || q.n == 0
					v, ok := tcb.QueueReceive(q, PortMaxDelay)
					if !ok {
						t.Error("receive with portMAX_DELAY failed")
					}
					got = append(got, v)
					// At most the queue's items and one on its way in.
					if ahead := sent - len(got); ahead < 0 || ahead > c.length+1 {
						t.Errorf("after %d receives, %d sends begun: %d items in flight with a queue of %d", len(got), sent, ahead, c.length)
					}
				}
			})
			run(t, e, k)
			want := make([]uint64, n)
			for i := range want {
				want[i] = uint64(i + 1)
			}
			if !slices.Equal(got, want) {
				t.Errorf("received %v, want 1..%d in order", got, n)
			}
			if q.MessagesWaiting() != 0 || q.waitSend.Len() != 0 || q.waitRecv.Len() != 0 {
				t.Errorf("at the end: %d items, %d senders and %d receivers waiting; want none", q.MessagesWaiting(), q.waitSend.Len(), q.waitRecv.Len())
			}
			if c.senderBlocks && !senderBlocked {
				t.Error("the producer never blocked on the full queue")
			}
			if c.receiverBlocks && !receiverBlocked {
				t.Error("the consumer never found the queue empty")
			}
		})
	}
}

// A send to a full queue and a receive from an empty one give up after
// their xTicksToWait, and at once with 0; the item stays or nothing comes.
func TestQueueTimeouts(t *testing.T) {
	e, k := newTestKernel(t, nil)
	q, err := k.NewQueue("q", 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	type try struct {
		what          string
		ok            bool
		ticks, waited uint32
	}
	var tries []try
	mustTask(t, k, "t", 5, 0, func(tcb *TCB) {
		do := func(what string, ticks uint32, f func() bool) {
			start := tcb.TickCount()
			ok := f()
			tries = append(tries, try{what, ok, ticks, tcb.TickCount() - start})
		}
		do("receive from empty", 5, func() bool { _, ok := tcb.QueueReceive(q, 5); return ok })
		do("receive from empty", 0, func() bool { _, ok := tcb.QueueReceive(q, 0); return ok })
		do("send", 0, func() bool { return tcb.QueueSend(q, 42, 0) })
		do("send to full", 3, func() bool { return tcb.QueueSend(q, 43, 3) })
		do("send to full", 0, func() bool { return tcb.QueueSend(q, 44, 0) })
		if v, ok := tcb.QueueReceive(q, 0); !ok || v != 42 {
			t.Errorf("the queue's item: %d (ok %v), want 42", v, ok)
		}
	})
	run(t, e, k)
	want := []try{{"receive from empty", false, 5, 5}, {"receive from empty", false, 0, 0}, {"send", true, 0, 0},
		{"send to full", false, 3, 3}, {"send to full", false, 0, 0}}
	if !slices.Equal(tries, want) {
		t.Errorf("tries %+v\nwant %+v", tries, want)
	}
}

// A send wakes the highest-priority receiver first, whatever the order in
// which they blocked.
func TestQueueWakesHighestPriorityReceiver(t *testing.T) {
	e, k := newTestKernel(t, nil)
	q, _ := k.NewQueue("q", 2, 4)
	var order []string
	recv := func(tcb *TCB) {
		v, _ := tcb.QueueReceive(q, PortMaxDelay)
		order = append(order, fmt.Sprintf("%s:%d", tcb.Name, v))
	}
	mustTask(t, k, "low", 5, 0, recv)
	mustTask(t, k, "high", 8, 1, func(tcb *TCB) { tcb.Delay(1); recv(tcb) })
	mustTask(t, k, "sender", 3, 0, func(tcb *TCB) {
		tcb.Delay(2)
		if got := q.waitRecv.Len(); got != 2 {
			t.Errorf("%d receivers waiting, want 2", got)
		}
		tcb.QueueSend(q, 1, 0)
		tcb.QueueSend(q, 2, 0)
	})
	run(t, e, k)
	if want := []string{"high:1", "low:2"}; !slices.Equal(order, want) {
		t.Errorf("received %v, want %v", order, want)
	}
}

// xQueueSendFromISR hands an item to a blocked receiver and asks for a yield
// only when the receiver outranks the interrupted task.
func TestQueueSendFromISR(t *testing.T) {
	for _, c := range []struct {
		receiverPrio int
		want         bool
	}{{12, true}, {5, false}} {
		e, k := newTestKernel(t, nil)
		q, _ := k.NewQueue("q", 2, 4)
		var busy *TCB
		sent, ok, woken := false, false, false
		k.startPeripheral(1000, 50)
		k.OnPeripheral = func(p *sim.Proc) {
			if sent || k.Current(0) != busy {
				return
			}
			sent = true
			ok, woken = k.QueueSendFromISR(p, q, 77)
			k.YieldFromISR(p, woken)
		}
		var got uint64
		mustTask(t, k, "receiver", c.receiverPrio, 0, func(tcb *TCB) { got, _ = tcb.QueueReceive(q, PortMaxDelay) })
		busy = mustTask(t, k, "busy", 10, 0, func(tcb *TCB) {
			tcb.Delay(1)
			tcb.Work(240_000 * 5)
			tcb.Now()
		})
		run(t, e, k)
		if !sent || !ok || woken != c.want || got != 77 {
			t.Errorf("receiver priority %d under 10: sent %v (ok %v), woken %v (want %v), received %d (want 77)", c.receiverPrio, sent, ok, woken, c.want, got)
		}
	}
}

// xQueueOverwrite keeps the newest of its writes in a one-item queue,
// never blocking, and wakes a waiting receiver; on a longer queue the run
// fails naming the call and the queue.
func TestQueueOverwrite(t *testing.T) {
	e, k := newTestKernel(t, nil)
	box, _ := k.NewQueue("box", 1, 4)
	var got []uint64
	var waiting []int
	mustTask(t, k, "reader", 8, 1, func(tcb *TCB) {
		v, _ := tcb.QueueReceive(box, PortMaxDelay) // blocks: the box is empty
		got = append(got, v)
		tcb.Delay(2)
		v, _ = tcb.QueueReceive(box, 0)
		got = append(got, v)
	})
	mustTask(t, k, "writer", 5, 0, func(tcb *TCB) {
		tcb.Delay(1)
		tcb.QueueOverwrite(box, 1) // wakes the reader
		tcb.Delay(1)               // the reader has taken 1 and sleeps to tick 3
		for v := range uint64(3) {
			tcb.QueueOverwrite(box, 10+v)
			waiting = append(waiting, box.MessagesWaiting())
		}
	})
	run(t, e, k)
	if want := []uint64{1, 12}; !slices.Equal(got, want) {
		t.Errorf("the reader got %v, want %v", got, want)
	}
	if want := []int{1, 1, 1}; !slices.Equal(waiting, want) {
		t.Errorf("items after each overwrite: %v, want %v", waiting, want)
	}

	e, k = newTestKernel(t, nil)
	q, _ := k.NewQueue("q", 2, 4)
	mustTask(t, k, "t", 5, 0, func(tcb *TCB) { tcb.QueueOverwrite(q, 1) })
	if err := runErr(t, e, k); err == nil || !strings.Contains(err.Error(), `xQueueOverwrite on queue "q" of length 2`) {
		t.Errorf("overwrite of a queue of 2: err %v, want it refused", err)
	}
}

// xQueuePeek returns the oldest item and leaves it: a blocked peeker woken
// by a send wakes the receiver behind it, which then takes the same item.
func TestQueuePeek(t *testing.T) {
	e, k := newTestKernel(t, nil)
	q, _ := k.NewQueue("q", 4, 4)
	var peeked, received uint64
	var left int
	mustTask(t, k, "peeker", 8, 0, func(tcb *TCB) { peeked, _ = tcb.QueuePeek(q, PortMaxDelay) })
	mustTask(t, k, "receiver", 6, 1, func(tcb *TCB) {
		received, _ = tcb.QueueReceive(q, PortMaxDelay)
		left = q.MessagesWaiting()
	})
	mustTask(t, k, "sender", 5, 0, func(tcb *TCB) {
		tcb.Delay(1)
		if n := q.waitRecv.Len(); n != 2 {
			t.Errorf("%d tasks waiting to receive, want 2", n)
		}
		tcb.QueueSend(q, 42, 0) // wakes the peeker only
	})
	run(t, e, k)
	if peeked != 42 || received != 42 || left != 0 {
		t.Errorf("peeked %d, received %d, %d left; want 42, 42 and 0", peeked, received, left)
	}
}

// A receive nobody will send to is a deadlock, reported with the queue.
func TestQueueDeadlockReported(t *testing.T) {
	e, k := newTestKernel(t, nil)
	q, _ := k.NewQueue("inbox", 4, 4)
	mustTask(t, k, "reader", 5, 1, func(tcb *TCB) { tcb.QueueReceive(q, PortMaxDelay) })
	msg := runDeadlock(t, e, k).Error()
	if !strings.Contains(msg, "reader") || !strings.Contains(msg, `receive from empty queue "inbox"`) {
		t.Errorf("deadlock report %q does not name the reader and its queue", msg)
	}
}

// Bad sizes are refused, naming the queue, the field and the value.
func TestNewQueueBadInput(t *testing.T) {
	_, k := newTestKernel(t, nil)
	for _, c := range []struct {
		length, itemSize int
		want             string
	}{
		{0, 4, `queue "q": length = 0`},
		{4, 0, `queue "q": item size = 0 bytes`},
		{1 << 20, 1 << 10, `queue "q": 1048576 items of 1024 bytes need`},
	} {
		if _, err := k.NewQueue("q", c.length, c.itemSize); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewQueue(%d, %d): err %v, want %q", c.length, c.itemSize, err, c.want)
		}
	}
}

// pipeline is a producer and a consumer on a queue, both in loops that
// fast-forward can skip: the producer sends 1, 2, 1, 2, ..., the consumer
// adds each item to a counter in SRAM.
type pipeline struct {
	counter  sim.Addr
	finished sim.Time
}

func (w *pipeline) Snapshot(s *sim.Snapshot) { s.Time(&w.finished) }

// runPipeline runs the pipeline for n items through a queue of length, the
// producer and the consumer working the given cycles per item, fast-forwarded or not, and returns what
// a user would read from it.
func runPipeline(t *testing.T, n, length int, prodWork, consWork int64, detailed bool) (string, sim.FastForwardStats) {
	t.Helper()
	e, k := newTestKernel(t, nil)
	q, err := k.NewQueue("q", length, 16)
	if err != nil {
		t.Fatal(err)
	}
	w := &pipeline{counter: k.SoC.Alloc(8, 8)}
	mustTask(t, k, "producer", 5, 0, func(tcb *TCB) {
		for i := range tcb.Loop(n) {
			tcb.Work(prodWork)
			tcb.QueueSend(q, 1+uint64(i%2), PortMaxDelay)
		}
	})
	mustTask(t, k, "consumer", 5, 1, func(tcb *TCB) {
		for range tcb.Loop(n) {
			v, _ := tcb.QueueReceive(q, PortMaxDelay)
			tcb.Store(w.counter, tcb.Load(w.counter)+v)
			tcb.Work(consWork)
		}
		w.finished = tcb.Now()
	})
	k.startPeripheral(1000, 50)
	if err := k.Start(); err != nil {
		t.Fatal(err)
	}
	if !detailed {
		e.EnableFastForward(k, w)
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return fmt.Sprintf("counter %d, finished %v, switches %d, crosscore %d, xKernelLock contended %d spinning %v, queue lock spinning %v",
		k.SoC.Mem.Peek(w.counter), w.finished, k.Switches, k.SoC.IPIs, k.KernelLock.Contended, k.KernelLock.SpinTime, q.Lock.SpinTime), e.FastForward()
}

// A fast-forwarded pipeline ends as the detailed one does, bit for bit, and
// skips much of the run, whether the producer waits on the full queue or the
// consumer on the empty one. The kernel's snapshot holds the queue's items
// and waiting tasks: while a long queue fills, nothing else tells one period
// from the next.
func TestQueueFastForwardExact(t *testing.T) {
	const n = 20000
	for _, c := range []struct {
		length             int
		prodWork, consWork int64
	}{{4, 100, 3000}, {4, 3000, 100}, {4, 300, 500}, {200, 100, 3000}} {
		fast, st := runPipeline(t, n, c.length, c.prodWork, c.consWork, false)
		slow, _ := runPipeline(t, n, c.length, c.prodWork, c.consWork, true)
		if fast != slow {
			t.Fatalf("%+v: fast-forwarded: %s\ndetailed:        %s", c, fast, slow)
		}
		if !strings.HasPrefix(slow, fmt.Sprintf("counter %d,", 3*n/2)) {
			t.Errorf("%s: want the counter at %d", slow, 3*n/2)
		}
		if st.Skips == 0 {
			t.Errorf("%+v: nothing skipped (%+v)", c, st)
		}
		t.Logf("%+v: %s; skipped %v in %d jumps", c, slow, st.Time, st.Skips)
	}
}

// Random traffic: two producers and two consumers on random cores and
// priorities send, receive and peek with random timeouts and work. Whatever
// the interleaving, every item received was sent, and is received once;
// each consumer gets each producer's items in the order they were sent;
// the queue never holds more than its length; a call that fails waited at
// least its ticks, and one without a timeout never fails; and at the end
// every item sent is either received or in the queue, and no task waits on
// a queue that could serve it (a lost wake-up). (A task may be
// switched out between a call's return and its next line, so the test
// checks nothing that depends on the order in which two tasks record.)
func TestQueueRandomTraffic(t *testing.T) {
	for seed := range uint64(16) {
		rng := rand.New(rand.NewPCG(seed, 7))
		e, k := newTestKernel(t, nil)
		q, err := k.NewQueue("q", 1+rng.IntN(4), 4*(1+rng.IntN(4)))
		if err != nil {
			t.Fatal(err)
		}
		const perProducer = 60
		attempted := map[uint64]bool{} // every item a send was called with
		received := map[uint64]bool{}
		okSends := 0
		var failures []string
		fail := func(format string, a ...any) { failures = append(failures, fmt.Sprintf(format, a...)) }
		ticks := func() uint32 { return []uint32{0, 1, 3, PortMaxDelay}[rng.IntN(4)] }
		check := func(tcb *TCB, what string, ok bool, w uint32, start uint32) {
			if waited := tcb.TickCount() - start; !ok && (w == PortMaxDelay || waited < w) {
				fail("%s failed after %d ticks, its timeout %d", what, waited, w)
			}
			if q.MessagesWaiting() > q.Length {
				fail("%d items in a queue of %d", q.MessagesWaiting(), q.Length)
			}
		}
		for id := range uint64(2) {
			core, prio, work := rng.IntN(2), 3+rng.IntN(4), int64(rng.IntN(3000))
			mustTask(t, k, fmt.Sprintf("producer%d", id), prio, core, func(tcb *TCB) {
				for n := range uint64(perProducer) {
					tcb.Work(work)
					v, w, start := id<<32|n, ticks(), tcb.TickCount()
					attempted[v] = true
					ok := tcb.QueueSend(q, v, w)
					if ok {
						okSends++
					}
					check(tcb, fmt.Sprintf("send of %#x", v), ok, w, start)
				}
			})
		}
		for id := range 2 {
			core, prio, work := rng.IntN(2), 3+rng.IntN(4), int64(rng.IntN(3000))
			last := map[uint64]uint64{} // per producer, the last sequence number this consumer received
			mustTask(t, k, fmt.Sprintf("consumer%d", id), prio, core, func(tcb *TCB) {
				for range perProducer {
					tcb.Work(work)
					w, start, peek := ticks(), tcb.TickCount(), rng.IntN(4) == 0
					var v uint64
					var ok bool
					if peek {
						v, ok = tcb.QueuePeek(q, w)
					} else {
						v, ok = tcb.QueueReceive(q, w)
					}
					check(tcb, fmt.Sprintf("consumer%d's receive (peek %v)", id, peek), ok, w, start)
					switch {
					case !ok:
					case !attempted[v]:
						fail("%#x received (peek %v) but never sent", v, peek)
					case peek:
					case received[v]:
						fail("%#x received twice", v)
					default:
						p, n := v>>32, v&(1<<32-1)
						if prev, seen := last[p]; seen && n <= prev {
							fail("consumer%d received %#x after %#x", id, v, p<<32|prev)
						}
						last[p] = n
						received[v] = true
					}
				}
			})
		}
		err = runErr(t, e, k)
		var dl *sim.DeadlockError
		if err != nil && !errors.As(err, &dl) {
			t.Fatalf("seed %d: %v", seed, err)
		}
		// A run may end with consumers waiting for items no one sends any
		// more, never with a task waiting while the queue could serve it.
		if n := q.MessagesWaiting(); n > 0 && q.waitRecv.Len() > 0 || n < q.Length && q.waitSend.Len() > 0 {
			fail("at the end %d items in a queue of %d, %d receivers and %d senders waiting (%v)", n, q.Length, q.waitRecv.Len(), q.waitSend.Len(), err)
		}
		if okSends != len(received)+q.MessagesWaiting() {
			fail("%d items sent, %d received and %d in the queue", okSends, len(received), q.MessagesWaiting())
		}
		if len(failures) > 0 {
			t.Errorf("seed %d (length %d, items of %d bytes): %s", seed, q.Length, q.ItemSize, strings.Join(failures, "; "))
		}
	}
}
