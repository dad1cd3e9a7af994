package sim

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// OpKind names what an Op does.
type OpKind string

// The op kinds. Sync ops are interpreted by the OS model that runs the
// program; the others are hardware-level.
const (
	OpCompute OpKind = "compute" // Cycles of private work
	OpRead    OpKind = "read"    // load the word at Addr
	OpWrite   OpKind = "write"   // store Arg to the word at Addr
	OpAtomic  OpKind = "atomic"  // fetch-and-add Arg to the word at Addr
	OpLoop    OpKind = "loop"    // run Body N times
	OpSleep   OpKind = "sleep"   // let Dur pass without using the core
	OpSync    OpKind = "sync"    // OS synchronization: Sync names it, Obj the object
	OpCall    OpKind = "call"    // a Go callback: custom logic, not serializable
)

// Op is one step of a program. Programs are plain data: they round-trip
// through msgpack, so a result file records exactly what ran — except
// OpCall, which holds Go code and is refused by Encode.
type Op struct {
	Kind   OpKind `msgpack:"kind"`
	Cycles int64  `msgpack:"cycles,omitempty"`
	Addr   Addr   `msgpack:"addr,omitempty"`
	Arg    int64  `msgpack:"arg,omitempty"`
	N      int64  `msgpack:"n,omitempty"`
	Dur    Time   `msgpack:"dur,omitempty"`
	Sync   string `msgpack:"sync,omitempty"` // lock, unlock, take, give, notify_give, notify_take, ...
	Obj    string `msgpack:"obj,omitempty"`
	Body   []Op   `msgpack:"body,omitempty"`
	// Fn runs custom logic; it makes the program not serializable.
	Fn func(p *Proc) error `msgpack:"-"`
	// Name labels a callback in encoded form and error messages.
	Name string `msgpack:"name,omitempty"`
}

// Program is a named sequence of ops run by one process.
type Program struct {
	Name string `msgpack:"name"`
	Ops  []Op   `msgpack:"ops"`
}

// Helpers that read like firmware.

// Compute is n cycles of private work.
func Compute(n int64) Op { return Op{Kind: OpCompute, Cycles: n} }

// Read loads the word at a.
func Read(a Addr) Op { return Op{Kind: OpRead, Addr: a} }

// Write stores v to the word at a.
func Write(a Addr, v int64) Op { return Op{Kind: OpWrite, Addr: a, Arg: v} }

// Atomic adds d to the word at a atomically.
func Atomic(a Addr, d int64) Op { return Op{Kind: OpAtomic, Addr: a, Arg: d} }

// Loop runs body n times.
func Loop(n int64, body ...Op) Op { return Op{Kind: OpLoop, N: n, Body: body} }

// Sleep lets d pass.
func Sleep(d Time) Op { return Op{Kind: OpSleep, Dur: d} }

// Sync is an OS synchronization op on the object named obj.
func Sync(name, obj string) Op { return Op{Kind: OpSync, Sync: name, Obj: obj} }

// Lock and Unlock are the sync ops of a named lock.
func Lock(obj string) Op   { return Sync("lock", obj) }
func Unlock(obj string) Op { return Sync("unlock", obj) }

// Call runs fn; the program is then not serializable.
func Call(name string, fn func(p *Proc) error) Op { return Op{Kind: OpCall, Name: name, Fn: fn} }

// maxDepth bounds loop nesting, so a decoded program cannot blow the stack.
const maxDepth = 32

// Validate reports the first malformed op with its path in the program.
func (pr Program) Validate() error { return validateOps(pr.Ops, "ops", 0) }

func validateOps(ops []Op, path string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%s: loops nested deeper than %d", path, maxDepth)
	}
	for i, op := range ops {
		at := fmt.Sprintf("%s[%d]", path, i)
		switch op.Kind {
		case OpCompute:
			if op.Cycles < 0 {
				return fmt.Errorf("%s: compute cycles = %d must be >= 0", at, op.Cycles)
			}
		case OpRead, OpWrite, OpAtomic:
			if op.Addr%8 != 0 {
				return fmt.Errorf("%s: %s addr = %#x must be 8-byte aligned", at, op.Kind, uint64(op.Addr))
			}
		case OpLoop:
			if op.N < 0 {
				return fmt.Errorf("%s: loop n = %d must be >= 0", at, op.N)
			}
			if err := validateOps(op.Body, at+".body", depth+1); err != nil {
				return err
			}
		case OpSleep:
			if op.Dur < 0 {
				return fmt.Errorf("%s: sleep dur = %v must be >= 0", at, op.Dur)
			}
		case OpSync:
			if op.Sync == "" || op.Obj == "" {
				return fmt.Errorf("%s: sync op needs sync and obj (got %q, %q)", at, op.Sync, op.Obj)
			}
		case OpCall:
			if op.Fn == nil {
				return fmt.Errorf("%s: call %q has no function (callbacks do not survive encoding)", at, op.Name)
			}
		default:
			return fmt.Errorf("%s: unknown op kind %q", at, op.Kind)
		}
	}
	return nil
}

// ErrNotSerializable is returned by Encode for programs with Go callbacks.
var ErrNotSerializable = errors.New("program holds a Go callback and is not serializable")

// Encode returns the msgpack form of a valid program without callbacks.
func (pr Program) Encode() ([]byte, error) {
	if err := pr.Validate(); err != nil {
		return nil, fmt.Errorf("program %q: %w", pr.Name, err)
	}
	if name, ok := findCall(pr.Ops); ok {
		return nil, fmt.Errorf("program %q: op %q: %w", pr.Name, name, ErrNotSerializable)
	}
	return msgpack.Marshal(pr)
}

func findCall(ops []Op) (string, bool) {
	for _, op := range ops {
		if op.Kind == OpCall {
			return op.Name, true
		}
		if name, ok := findCall(op.Body); ok {
			return name, true
		}
	}
	return "", false
}

// DecodeProgram parses and validates a program encoded by Encode.
func DecodeProgram(b []byte) (Program, error) {
	if err := checkShape(b); err != nil {
		return Program{}, fmt.Errorf("decode program: %w", err)
	}
	var pr Program
	d := msgpack.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields(true)
	if err := d.Decode(&pr); err != nil {
		return Program{}, fmt.Errorf("decode program: %w", err)
	}
	if err := pr.Validate(); err != nil {
		return Program{}, fmt.Errorf("decode program %q: %w", pr.Name, err)
	}
	if _, ok := findCall(pr.Ops); ok {
		return Program{}, fmt.Errorf("decode program %q: a call op cannot be decoded: %w", pr.Name, ErrNotSerializable)
	}
	return pr, nil
}

// OS interprets the sync ops of programs (an OS model: FreeRTOS, Linux).
type OS interface {
	Sync(p *Proc, op Op) error
}

// Sleeper is an OS that models a sleep itself (a task blocks and another
// runs); without it a sleep keeps the core in WFI.
type Sleeper interface {
	Sleep(p *Proc, d Time)
}

// Exec runs a program on p; sync ops go to os. It returns the first error
// (a bad address, a sync op os refuses).
func (p *Proc) Exec(pr Program, os OS) (err error) {
	if err := pr.Validate(); err != nil {
		return fmt.Errorf("program %q: %w", pr.Name, err)
	}
	defer func() {
		if r := recover(); r != nil {
			ae, ok := r.(*AddrError)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("program %q on %s: %w", pr.Name, p.Name, ae)
		}
	}()
	return p.execOps(pr.Ops, os)
}

func (p *Proc) execOps(ops []Op, os OS) error {
	for i := range ops {
		op := &ops[i]
		switch op.Kind {
		case OpCompute:
			p.Compute(op.Cycles)
		case OpRead:
			p.Load(op.Addr)
		case OpWrite:
			p.Store(op.Addr, uint64(op.Arg))
		case OpAtomic:
			p.FetchAdd(op.Addr, uint64(op.Arg))
		case OpLoop:
			for n := int64(0); n < op.N; n++ {
				if err := p.execOps(op.Body, os); err != nil {
					return err
				}
			}
		case OpSleep:
			if s, ok := os.(Sleeper); ok {
				s.Sleep(p, op.Dur)
			} else {
				p.Sleep(op.Dur)
			}
		case OpSync:
			if os == nil {
				return fmt.Errorf("%s: sync op %s(%s) needs an OS model", p.Name, op.Sync, op.Obj)
			}
			if err := os.Sync(p, *op); err != nil {
				return err
			}
		case OpCall:
			if err := op.Fn(p); err != nil {
				return fmt.Errorf("%s: call %q: %w", p.Name, op.Name, err)
			}
		}
	}
	return nil
}

// Fail ends the run with err (a model detected an illegal program, such
// as an unlock of a lock the process does not hold): Run returns it.
func (p *Proc) Fail(err error) {
	if p.e.err == nil {
		p.e.err = fmt.Errorf("%s on core %d at %v: %w", p.Name, p.core.ID, p.e.now, err)
	}
	panic(errUnwind{})
}
