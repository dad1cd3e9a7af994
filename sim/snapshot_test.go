package sim

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"unsafe"
)

// snapshotExempt lists the fields of the state fast-forward compares that
// the snapshot leaves out, each with why it cannot make two matching states
// go on differently. Every other field must be recorded by its component's
// snapshot method (TestSnapshotCoversState). Paths are type.field, with
// [0] for an element.
var snapshotExempt = map[string]string{
	"Engine.checkAt":    "when Run next checks its context: no simulated state",
	"Engine.ahead":      "a switch for tests, fixed for the run",
	"Engine.horizon":    "Until, or the switch ahead, as Run found them",
	"Engine.ctx":        "Run's context: no simulated state",
	"Engine.seed":       "fixed for the run; what was drawn from it is in Engine.streams",
	"Engine.running":    "at a loop head, the process that takes the snapshot",
	"Engine.Until":      "a limit fixed for the run, which skips stop short of",
	"Engine.MaxEvents":  "a limit fixed for the run, which skips stop short of",
	"Engine.Trace":      "observation only; skips wait until it is sealed (SealTrace), and take no span after",
	"Engine.sealAt":     "when the trace is sealed; skips come after it",
	"Engine.spanners":   "the models that report open spans at the seal, fixed for the run",
	"Engine.stopReason": "written when Run returns",
	"Engine.pollMark":   "the livelock watch's bookkeeping: a skip moves changedAt past it, so the watch starts afresh",
	"Engine.pollHist":   "the livelock watch's bookkeeping, compared only at an unchanged pollMark",
	"Engine.faults":     "configuration, fixed for the run",
	"Engine.frand":      "a view of a stream in Engine.streams",
	"Engine.ff":         "fast-forward itself",
	"Engine.direct":     "who dispatches the events (Proc.await), not what they do",
	"Engine.handOffs":   "a count of who dispatched events, for tests",
	"Engine.settled":    "a count of how wake-ups were dispatched, for tests",
	"Engine.switches":   "a count of coroutine resumptions, for benchmarks",

	"Proc.Name":    "a label",
	"Proc.e":       "the engine it belongs to",
	"Proc.fn":      "the coroutine: where it stands is recorded by hist, loops and its waits",
	"Proc.next":    "the coroutine: where it stands is recorded by hist, loops and its waits",
	"Proc.stop":    "the coroutine: where it stands is recorded by hist, loops and its waits",
	"Proc.yield":   "the coroutine: where it stands is recorded by hist, loops and its waits",
	"Proc.daemon":  "fixed at creation",
	"Proc.running": "which coroutine dispatches the events (await), not what they do",
	"Proc.Data":    "an OS model's: the model records it through Snapshotter",

	"Core.ID":              "fixed at creation",
	"Core.Cfg":             "configuration, fixed for the run",
	"Core.Clock":           "configuration, fixed for the run",
	"Core.e":               "the engine it belongs to",
	"Core.lineLvl":         "set up before the run (SetLineLevel)",
	"Core.handler":         "code, set up before the run",
	"Core.sp.reg":          "follows from sp.addr",
	"Core.sp.w":            "follows from sp.addr",
	"Core.sp.cond":         "code; the values it captured were read by the process, which Proc.hist records",
	"Core.lastAddr":        "for reports only; a skipped period repeats the one matched, whose accesses end on the same address",
	"Core.raised":          "which lines were ever raised: it only selects the raisedAt and latency recorded",
	"Core.cw.cond":         "code; the values it captured were read by the process, which Proc.hist records",
	"Core.cw.pol.OnAccess": "the caller's bookkeeping of accesses, which its own state records",
	"Core.cw.op":           "code; the values it captured were read by the process, which Proc.hist records",
	"Core.cw.taken":        "code; the values it captured were read by the process, which Proc.hist records",
	"Core.cw.onStore":      "the caller's bookkeeping after a store, which its own state records",
	// A histogram's count is recorded; the rest follows from its values,
	// which no model reads but through Last: fast-forward compares those a
	// period adds with the period before's (Histogram.periodic).
	"Core.latency[0].sum":       "follows from the values added (see Histogram.periodic)",
	"Core.latency[0].min":       "follows from the values added (see Histogram.periodic)",
	"Core.latency[0].max":       "follows from the values added (see Histogram.periodic)",
	"Core.latency[0].base":      "follows from the values added (see Histogram.periodic)",
	"Core.latency[0].counts":    "follows from the values added (see Histogram.periodic)",
	"Core.latency[0].recent[0]": "the latest values: a period's are compared with the period before's (Histogram.periodic)",

	"Memory.e":        "the engine it belongs to",
	"Memory.coh":      "configuration, fixed for the run",
	"Memory.lineBits": "configuration, fixed for the run",
	"Memory.regions":  "recorded through touched, word by word and line by line (region is checked on its own)",
	"Memory.touched":  "bookkeeping: which words and lines the snapshot records",
	"Memory.cluster":  "follows from the cores' configuration",
	"Memory.names":    "labels for reports, nothing simulated",
	"region.Region":   "configuration, fixed for the run",
	"region.seenW":    "bookkeeping of Memory.touched",
	"region.seenL":    "bookkeeping of Memory.touched",

	"Timer.c":       "fixed at creation",
	"Timer.irq":     "fixed at creation",
	"Timer.ev":      "its firing is recorded among the queue's events",
	"Device.Name":   "fixed at creation",
	"Device.c":      "fixed at creation",
	"Device.irq":    "fixed at creation",
	"Device.mean":   "fixed at creation",
	"Device.random": "fixed at creation",
	"Device.stream": "draws from a stream in Engine.streams",
	"Device.ev":     "its firing is recorded among the queue's events",
	"countSrc.pcg":  "where it stands follows from the seed and n",
	"Event.fn":      "code",
	"Event.core":    "fixed at creation",
	"Event.seq":     "a copy of its queue entry's sequence, which the queue records",
	"Event.t":       "a copy of its queue entry's time, which the queue records",
}

// snapshotFixture builds a state in which every conditional part of the
// snapshot is recorded: a wake pending, a core spinning, an open loop,
// every word and line of memory used, events queued. It returns the engine
// and the components to check, by type name.
func snapshotFixture(t *testing.T) (*Engine, []stateRoot) {
	e := NewEngine(1)
	for range 2 {
		if _, err := e.AddCore(CoreConfig{Name: "c", Hz: 1_000_000_000}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := e.NewMemory(Coherence{LineSize: 64, SameCluster: Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddRegion(Region{Name: "ram", Base: 0x1000, Size: 64}); err != nil {
		t.Fatal(err)
	}
	e.EnableFastForward()
	for a := Addr(0x1000); a < 0x1040; a += 8 {
		m.find(a) // fast-forward records the words and lines used
	}
	c := e.cores[0]
	p := e.NewProc("p", false, func(*Proc) {})
	c.Start(p)            // its wake is pending
	c.raised = ^uint64(0) // every line in use: their raisedAt and latency are recorded
	c.wait = waitSpin
	c.sp = spinState{addr: 0x1000, reg: m.regions[0], cond: func(v uint64) bool { return v == 0 }}
	c.cw, c.cwOn = condState{addr: 0x1000, cond: func(v uint64) bool { return v == 0 }}, true
	p.loops = []*loopState{{n: 3}}
	tm := c.NewTimer(1)
	if err := tm.Periodic(Microsecond, Microsecond); err != nil {
		t.Fatal(err)
	}
	d, err := c.NewDevice("dev", 2, Microsecond, false)
	if err != nil {
		t.Fatal(err)
	}
	ev := NewEvent(func() {}, false)
	e.At(5, ev)
	return e, []stateRoot{{"Engine", e}, {"Proc", p}, {"Core", c}, {"Memory", m}, {"region", m.regions[0]},
		{"Timer", tm}, {"Device", d}, {"countSrc", e.streams[0]}, {"loopState", p.loops[0]}, {"Event", ev}}
}

// stateRoot is a component whose fields TestSnapshotCoversState checks.
type stateRoot struct {
	name string
	ptr  any // a pointer to the struct
}

// TestSnapshotCoversState: changing any field of the state changes the
// snapshot, unless snapshotExempt lists it. A field added to Core (or any
// component here) and forgotten by its snapshot method fails this test.
func TestSnapshotCoversState(t *testing.T) {
	e, roots := snapshotFixture(t)
	defer e.Close()
	base := takeSnapshot(e)
	if !sameSnapshot(base, takeSnapshot(e)) {
		t.Fatal("two snapshots of one state differ")
	}
	seen := map[string]bool{}
	exempt := func(path string) bool {
		_, ok := snapshotExempt[path]
		seen[path] = seen[path] || ok
		return ok
	}
	for _, r := range roots {
		walkState(r.name, reflect.ValueOf(r.ptr).Elem(), exempt, func(path string, v reflect.Value) {
			undo, ok := perturb(v)
			if !ok {
				t.Errorf("%s: a %s: record it in its component's snapshot method, or list it in snapshotExempt with the reason", path, v.Type())
				return
			}
			changed, bad := snapshotChanged(e, base)
			undo()
			switch {
			case bad != nil:
				t.Errorf("%s: the snapshot panicked once it changed: %v", path, bad)
			case !changed:
				t.Errorf("%s: changing it leaves the snapshot as it was: record it in its component's snapshot method, or list it in snapshotExempt with the reason", path)
			}
		})
	}
	for path := range snapshotExempt {
		if !seen[path] {
			t.Errorf("snapshotExempt lists %s, which is no field of the checked state", path)
		}
	}
	if !sameSnapshot(base, takeSnapshot(e)) {
		t.Fatal("the state did not return to what it was")
	}
}

// walkState calls leaf on every field under v (a struct, addressable),
// descending into struct fields and the first element of arrays and of
// slices of values; it skips what exempt says.
func walkState(path string, v reflect.Value, exempt func(string) bool, leaf func(string, reflect.Value)) {
	if exempt(path) {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem() // settable, exported or not
			walkState(path+"."+v.Type().Field(i).Name, f, exempt, leaf)
		}
	case reflect.Array:
		walkState(path+"[0]", v.Index(0), exempt, leaf)
	case reflect.Slice:
		if v.Len() > 0 && v.Type().Elem().Kind() != reflect.Pointer {
			walkState(path+"[0]", v.Index(0), exempt, leaf)
			return
		}
		leaf(path, v)
	default:
		leaf(path, v)
	}
}

// perturb changes v and returns how to change it back; ok is false for a
// kind of value it cannot change. A pointer becomes a new zero value; a
// slice of components gets its first one again, an empty slice a zero
// element.
func perturb(v reflect.Value) (undo func(), ok bool) {
	old := reflect.New(v.Type()).Elem()
	old.Set(v)
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(v.Uint() + 1)
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		el := reflect.New(v.Type().Elem()).Elem()
		if v.Len() > 0 {
			el = v.Index(0)
		}
		v.Set(reflect.Append(v, el))
	case reflect.Interface:
		if v.Type() != reflect.TypeFor[error]() {
			return nil, false
		}
		v.Set(reflect.ValueOf(errors.New("perturbed")))
	default:
		return nil, false
	}
	return func() { v.Set(old) }, true
}

func takeSnapshot(e *Engine) *Snapshot {
	s := new(Snapshot)
	s.reset()
	e.snapshot(s)
	return s
}

// snapshotChanged reports whether the state's snapshot differs from base,
// or what taking it panicked with.
func snapshotChanged(e *Engine, base *Snapshot) (changed bool, bad any) {
	defer func() { bad = recover() }()
	return !sameSnapshot(base, takeSnapshot(e)), nil
}

// sameSnapshot reports whether a and b record the same state, the numbers
// at the same places included.
func sameSnapshot(a, b *Snapshot) bool {
	return a.hash == b.hash && a.now == b.now && a.events == b.events &&
		slices.Equal(a.keys, b.keys) && slices.Equal(a.refs, b.refs) && slices.Equal(a.vals, b.vals) &&
		slices.Equal(a.procs, b.procs) && slices.Equal(a.loops, b.loops) && slices.Equal(a.queue, b.queue)
}
