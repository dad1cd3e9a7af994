package sim

import (
	"errors"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func sampleProgram() Program {
	return Program{Name: "firmware", Ops: []Op{
		Loop(1000,
			Lock("mux"),
			Read(0x1000), Write(0x1000, 7), Atomic(0x1008, 1),
			Compute(12),
			Unlock("mux"),
			Sync("notify_give", "task1"),
		),
		Sleep(3 * Millisecond),
	}}
}

func TestProgramRoundTrip(t *testing.T) {
	pr := sampleProgram()
	b, err := pr.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeProgram(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, pr) {
		t.Fatalf("round trip changed the program:\n got %+v\nwant %+v", got, pr)
	}
}

func TestCallbackNotSerializable(t *testing.T) {
	pr := Program{Name: "custom", Ops: []Op{Loop(2, Call("probe", func(*Proc) error { return nil }))}}
	if _, err := pr.Encode(); !errors.Is(err, ErrNotSerializable) {
		t.Fatalf("Encode = %v, want ErrNotSerializable", err)
	}
	b, _ := msgpack.Marshal(Program{Name: "x", Ops: []Op{{Kind: OpCall, Name: "probe"}}})
	if _, err := DecodeProgram(b); err == nil {
		t.Fatal("decoded a call op")
	}
}

func TestDecodeRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, {0xc1}, []byte("not msgpack"), {0x82, 0xa4, 'n', 'a', 'm', 'e', 0x01}} {
		if _, err := DecodeProgram(b); err == nil {
			t.Errorf("decoded %q", b)
		}
	}
}

// FuzzDecodeProgram: any input either fails cleanly or yields a valid
// program that encodes back to an equal program.
func FuzzDecodeProgram(f *testing.F) {
	b, _ := sampleProgram().Encode()
	f.Add(b)
	b, _ = Program{Name: "empty"}.Encode()
	f.Add(b)
	b, _ = Program{Name: "deep", Ops: []Op{Loop(2, Loop(3, Compute(1)))}}.Encode()
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		pr, err := DecodeProgram(data)
		if err != nil {
			return
		}
		if err := pr.Validate(); err != nil {
			t.Fatalf("decoded an invalid program: %v", err)
		}
		again, err := pr.Encode()
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		pr2, err := DecodeProgram(again)
		if err != nil || !reflect.DeepEqual(pr, pr2) {
			t.Fatalf("unstable round trip: %v", err)
		}
	})
}
