package sim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"
	"time"
)

// Where the random programs of FuzzPrograms work: a lock word, a counter
// only atomics touch, a counter only the lock's holders touch, shared data
// lines and one private line per core, each on its own cache line.
const (
	progLock    = ramBase
	progAtomic  = ramBase + 64
	progGuarded = ramBase + 128
	progData    = ramBase + 192  // 4 shared lines
	progPrivate = ramBase + 1024 // one line per core
)

// program is a run decoded from fuzz input: cores, whether each core takes
// a periodic interrupt (whose handler adds to the atomic counter) and has an
// event stream, the region cached or not, and each core's operations,
// repeated rounds times.
type program struct {
	cores, rounds     int
	tick, stream, unc bool
	idle              bool // the cores have an OS idle state
	tickPeriod        Time
	ops               [][][2]byte // per core: (opcode, argument)
}

func decodeProgram(b []byte) program {
	at := func(i int) byte {
		if i < len(b) {
			return b[i]
		}
		return 0
	}
	pr := program{cores: 1 + int(at(0))%4, rounds: 1 + int(at(1))%6,
		tick: at(2)&1 != 0, stream: at(2)&2 != 0, unc: at(2)&4 != 0, idle: at(2)&8 != 0,
		tickPeriod: Time(2+int(at(3))%40) * Microsecond}
	rest := b[min(4, len(b)):]
	per := max(1, len(rest)/(2*pr.cores))
	for c := range pr.cores {
		var ops [][2]byte
		for i := 0; i < min(per, 16); i++ {
			j := 2 * (c*per + i)
			if j+1 >= len(rest) {
				break
			}
			ops = append(ops, [2]byte{rest[j], rest[j+1]})
		}
		pr.ops = append(pr.ops, ops)
	}
	return pr
}

// outcome is what a program's run did, for comparing runs and checking
// invariants.
type outcome struct {
	digest           string // what it measured, and how it ended
	events           uint64
	err              error
	atomic, guarded  uint64 // the counters in memory
	incs, sections   uint64 // the increments and critical sections done
	last             Time   // the time after the last operation of any core
	backwards        string // the first operation that ended before the one run before it
	residency, spans []Time // per core: the sum of state residencies, the run's time
	cores            []*Core
}

// engineMode is how the engine may shorten a run without changing it:
// waiting processes hand off directly (Proc.await), and a process moves
// its own clock while no event is due first (conservative lookahead).
type engineMode struct{ direct, ahead bool }

var (
	production = engineMode{direct: true, ahead: true}
	viaRun     = engineMode{direct: false, ahead: true} // every hand-off through Run
	noAhead    = engineMode{direct: true, ahead: false} // every wait an event
)

// runProgram runs pr on a rig in mode, within a wall-clock guard (a run
// that has not returned by then is a hang).
func runProgram(t *testing.T, pr program, mode engineMode, guard time.Duration) outcome {
	t.Helper()
	r := newRig(t, pr.cores, pr.unc, func(c *CoreConfig) {
		if pr.stream {
			c.EventStream = 10 * Microsecond
		}
		if pr.idle {
			c.Idle = []IdleState{{Name: "sleep", Entry: 500 * Nanosecond, Exit: Microsecond, MinResidency: 2 * Microsecond, PowerMW: 1}}
		}
	})
	r.e.direct, r.e.ahead = mode.direct, mode.ahead
	r.e.Until = 2 * Millisecond // bounds a spin that nothing ends: its polls are events
	var o outcome
	o.cores = r.e.Cores()
	for _, c := range r.e.Cores() {
		// The handler of the tick and of IPIs.
		c.SetHandler(func(p *Proc, irq IRQ) {
			p.FetchAdd(progAtomic, 1)
			o.incs++
			o.ordered(p, "handler")
		})
		if pr.tick {
			if err := c.NewTimer(1).Periodic(pr.tickPeriod, pr.tickPeriod+Time(c.ID)*Microsecond); err != nil {
				t.Fatal(err)
			}
		}
		// Each core runs its program in a task and in a twin task that
		// the switch operation hands the core to and back (a context
		// switch); the twin is a daemon, so a run ends with the tasks.
		me := uint64(c.ID + 1)
		ops := pr.ops[c.ID]
		var task, twin *Proc
		twin = r.e.NewProc(fmt.Sprint("twin", c.ID), true, func(p *Proc) {
			for range pr.rounds {
				for _, op := range ops {
					o.step(p, me, op[0], op[1], task)
				}
			}
			for !task.done {
				p.SwitchTo(task)
			}
		})
		task = r.e.Spawn(c, fmt.Sprint("task", c.ID), func(p *Proc) {
			for range pr.rounds {
				for _, op := range ops {
					o.step(p, me, op[0], op[1], twin)
				}
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	o.err = r.e.Run(ctx)
	if errors.Is(o.err, ErrStopped) {
		t.Fatalf("program %+v: no end after %v of wall time (a hang): %v", pr, guard, o.err)
	}
	o.atomic, o.guarded = r.m.Peek(progAtomic), r.m.Peek(progGuarded)
	for _, c := range r.e.Cores() {
		var sum Time
		for s := range c.States() {
			sum += c.Residency(State(s))
		}
		o.residency, o.spans = append(o.residency, sum), append(o.spans, r.e.Now())
	}
	o.digest = fmt.Sprintf("now %v stop %q err %v", r.e.Now(), r.e.StopReason(), o.err)
	for _, c := range r.e.Cores() {
		o.digest += fmt.Sprint(" | core ", c.ID)
		for s := range c.States() {
			o.digest += fmt.Sprint(" ", c.Residency(State(s)))
		}
		o.digest += fmt.Sprint(" stall ", c.Stall, " wakeups ", c.Wakeups, " irqs ", c.IRQsTaken, " latency ", *c.IRQLatency(1))
	}
	o.events = r.e.Events()
	r.e.Close()
	return o
}

// step runs one operation of a program on p (whose lock value is me; other
// shares its core).
func (o *outcome) step(p *Proc, me uint64, code, arg byte, other *Proc) {
	data := progData + Addr(arg%4)*64
	switch code % ops {
	case 0:
		p.Compute(1 + int64(arg)*13)
	case 1:
		p.Load(data)
	case 2:
		p.Store(data, uint64(arg%2))
	case 3:
		p.CAS(data, uint64(arg%2), uint64(1-arg%2))
	case 4:
		p.FetchAdd(progAtomic, 1)
		o.incs++
	case 5: // an LL/SC increment, retried until its store succeeds
		for {
			v := p.LoadExclusive(progAtomic)
			if p.StoreExclusive(progAtomic, v+1) {
				break
			}
		}
		o.incs++
	case 6: // a critical section under a test-and-test-and-set lock
		spinLock(p, progLock, 1+int64(arg%16), me)
		v := p.Load(progGuarded)
		p.Compute(int64(arg))
		p.Store(progGuarded, v+1)
		o.sections++
		p.Store(progLock, 0)
	case 7:
		p.WFE()
	case 8:
		p.SEV()
	case 9:
		prev := p.Mask(15)
		p.Compute(int64(arg) * 3)
		p.Restore(prev)
	case 10:
		p.Sleep(Time(arg) * 10 * Nanosecond)
	case 11:
		p.WFI()
	case 12:
		p.SpinUntil(data, 1+int64(arg%8), func(v uint64) bool { return v == uint64(arg%2) })
	case 13: // the same lock taken by an arm64 LL/SC acquire loop, its waits settled by the engine
		p.Acquire(progLock, AcquireLoop{
			Op:    func(old uint64) (uint64, bool) { return me, old == 0 },
			Taken: func(old uint64) bool { return old == 0 },
			Test:  func(v uint64) bool { return v == 0 },
			Wait:  policy(arg),
		})
		v := p.Load(progGuarded)
		p.Compute(int64(arg))
		p.Store(progGuarded, v+1)
		o.sections++
		p.Store(progLock, 0)
		p.SEV() // for waiters in WFE without a monitor armed
	case 14:
		p.CondWait(data, func(v uint64) bool { return v == uint64(arg%2) }, policy(arg))
	case 15:
		p.WFET(p.Now() + Time(arg)*10*Nanosecond)
	case 16:
		p.Swap(data, uint64(arg%2))
	case 17:
		p.SendIPI(o.cores[int(arg)%len(o.cores)], 2, Time(arg)*Nanosecond)
	case 18:
		if !other.done {
			p.SwitchTo(other)
		}
	case 19: // the OS's idle state, where the cores have one
		if len(p.Core().Cfg.Idle) > 0 {
			p.Idle(0)
		} else {
			p.WFI()
		}
	}
	p.Load(progPrivate + Addr(p.Core().ID)*64)
	o.ordered(p, fmt.Sprint("operation ", code%ops))
}

// ops is the number of operations step knows.
const ops = 20

// policy is a CondWait policy drawn from arg: polls with cpu_relax, then
// WFE, with or without the exclusive monitor armed and a WFET timeout.
func policy(arg byte) WaitPolicy {
	w := WaitPolicy{Polls: int(arg % 4), RelaxCycles: 1 + int64(arg%8), Monitor: arg&4 != 0}
	if arg&8 != 0 {
		w.Timeout = Microsecond
	}
	return w
}

// ordered notes the time after an operation: one process runs at a time,
// so in the order they run, operations end at times that never decrease.
func (o *outcome) ordered(p *Proc, what string) {
	if p.Now() < o.last && o.backwards == "" {
		o.backwards = fmt.Sprintf("%s on core %d ended at %v, after one that ended at %v", what, p.Core().ID, p.Now(), o.last)
	}
	o.last = max(o.last, p.Now())
}

// FuzzPrograms runs small random programs (computing, loads and stores,
// CAS and swaps, atomic and LL/SC increments, critical sections under a
// spinlock taken by CAS or by an LL/SC acquire loop, WFE, WFET and SEV,
// masked sections, sleeps, WFI, spins and condition waits on a value,
// IPIs, context switches between two tasks, an OS idle state) on one to
// four cores, with or without a periodic interrupt, an event stream,
// caches; the handler of the interrupts adds to a counter. Whatever the program, its run:
//   - ends: every process finishes, or the time limit comes, or Run
//     reports a deadlock that names who waits on what; never a hang and
//     never another error;
//   - keeps time in order: operations, in the order they run, end at
//     times that never decrease;
//   - loses no increment: the atomic counter holds every FetchAdd and
//     LL/SC increment done, and the lock's counter every critical section
//     (mutual exclusion);
//   - accounts for every core's time: its states' residencies add up to
//     the run's time;
//   - is the same run, event for event, when waiting processes hand off
//     directly (Proc.await) as when they go through Run;
//   - measures the same when every wait is an event as when a process
//     moves its own clock while nothing is due first (the lookahead that
//     most of the engine's speed comes from).
func FuzzPrograms(f *testing.F) {
	for _, s := range [][]byte{
		{1, 3, 0, 5, 6, 10, 0, 50, 6, 3, 4, 0},                   // two cores, critical sections
		{3, 2, 1, 3, 6, 5, 5, 0, 7, 0, 8, 0, 4, 1},               // four cores, ticks, WFE/SEV
		{2, 4, 3, 9, 12, 1, 2, 1, 11, 0, 9, 40, 5, 2},            // spins, WFI, event stream
		{0, 5, 0, 0, 4, 0, 0, 200, 10, 90},                       // one core alone
		{1, 1, 5, 1, 7, 0, 7, 0},                                 // both wait in WFE: a deadlock, or the stream
		{3, 5, 7, 20, 6, 15, 3, 1, 12, 0, 2, 1, 6, 200},          // uncached, everything at once
		{2, 3, 5, 9, 13, 6, 14, 1, 13, 12, 15, 30, 16, 1, 13, 4}, // LL/SC acquires, condition waits, WFET
		{1, 4, 1, 7, 18, 0, 17, 1, 6, 9, 18, 0, 17, 0, 4, 0},     // context switches, IPIs
		{1, 3, 9, 5, 19, 0, 6, 2, 19, 0, 17, 0},                  // idle states woken by ticks and IPIs
	} {
		f.Add(s)
	}
	fuzzing := flag.Lookup("test.fuzzworker") != nil && flag.Lookup("test.fuzzworker").Value.String() == "true"
	f.Fuzz(func(t *testing.T, b []byte) {
		pr := decodeProgram(b)
		guard := 2 * time.Minute
		if fuzzing {
			guard = 5 * time.Second // go test -fuzz kills a worker after 10 s on one input
		}
		o := runProgram(t, pr, production, guard)
		var dl *DeadlockError
		if o.err != nil && !(errors.As(o.err, &dl) && len(dl.Waiters) > 0) {
			t.Fatalf("program %+v: %v; want it to end or a deadlock naming its waiters", pr, o.err)
		}
		if o.backwards != "" {
			t.Errorf("program %+v: time went backwards: %s", pr, o.backwards)
		}
		if o.atomic != o.incs || o.guarded != o.sections {
			t.Errorf("program %+v: atomic counter %d after %d increments, guarded counter %d after %d critical sections",
				pr, o.atomic, o.incs, o.guarded, o.sections)
		}
		for c := range o.residency {
			if o.residency[c] != o.spans[c] {
				t.Errorf("program %+v: core %d's state residencies add up to %v in a run of %v", pr, c, o.residency[c], o.spans[c])
			}
		}
		if via := runProgram(t, pr, viaRun, guard); via.digest != o.digest || via.events != o.events {
			t.Errorf("program %+v:\ndirect hand-off: %s, %d events\nthrough Run:     %s, %d events", pr, o.digest, o.events, via.digest, via.events)
		}
		if slow := runProgram(t, pr, noAhead, guard); slow.digest != o.digest {
			t.Errorf("program %+v:\nwith lookahead: %s\nevery wait an event: %s", pr, o.digest, slow.digest)
		}
	})
}
