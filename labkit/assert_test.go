package labkit

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

// assertPanic runs Assert and returns the error it stopped with (nil when
// it returned).
func assertPanic(ok bool, format string, args ...any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, isErr := r.(error)
			if !isErr {
				err = fmt.Errorf("panicked with %T %v, want an error", r, r)
				return
			}
			err = e
		}
	}()
	Assert(ok, format, args...)
	return nil
}

func TestAssert(t *testing.T) {
	const wfi = 1.5
	for _, tc := range []struct {
		name string
		wfe  float64
		want string // "" when Assert must return
	}{
		{"holds", 1, ""},
		{"fails", 2, "conclusion does not hold: WFE waits less than WFI (2 vs 1.5 ms)"},
		{"NaN fails", math.NaN(), "conclusion does not hold: WFE waits less than WFI (NaN vs 1.5 ms)"},
	} {
		err := assertPanic(tc.wfe < wfi, "WFE waits less than WFI (%g vs %g ms)", tc.wfe, wfi)
		var ae *AssertionError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Assert stopped with %v, want it to return", tc.name, err)
		case tc.want != "" && (!errors.As(err, &ae) || err.Error() != tc.want):
			t.Errorf("%s: Assert stopped with %v, want an *AssertionError %q", tc.name, err, tc.want)
		}
	}
}

func ExampleAssert() {
	wfe, wfi := 0.004, 1.9 // mean lock waits (ms) a cell has just computed
	Assert(wfe < wfi, "WFE waits less than WFI (%g vs %g ms)", wfe, wfi)
	fmt.Println("the conclusion holds")

	defer func() { fmt.Println(recover()) }()
	Assert(wfi < wfe, "WFI waits less than WFE (%g vs %g ms)", wfi, wfe)
	// Output:
	// the conclusion holds
	// conclusion does not hold: WFI waits less than WFE (1.9 vs 0.004 ms)
}
