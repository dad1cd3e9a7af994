package labkit

import "fmt"

// AssertionError is what Assert stops a cell with: a conclusion a notebook
// states that the numbers it has just computed do not support.
type AssertionError struct {
	// Conclusion is the statement that does not hold, formatted as Assert
	// was given it.
	Conclusion string
}

// Error names the conclusion that does not hold.
func (e *AssertionError) Error() string { return "conclusion does not hold: " + e.Conclusion }

// Assert checks a conclusion a notebook prints against the numbers it has
// just computed: when ok is false it stops the cell (panics, like Must) with
// an *AssertionError whose message is fmt.Sprintf(format, args...), so the
// notebook's export, lab report and make test fail instead of a report
// saying something false. Write the conclusion as the notebook states it,
// with the numbers that decide it: "WFE waits less than WFI (4 us vs 1.9
// ms)". A comparison with NaN (a metric with no successful run) is false,
// so it fails too.
func Assert(ok bool, format string, args ...any) {
	if !ok {
		panic(&AssertionError{Conclusion: fmt.Sprintf(format, args...)})
	}
}
