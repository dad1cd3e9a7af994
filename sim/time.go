package sim

import (
	"fmt"
	"math/bits"
)

// Time is simulated time in picoseconds. An int64 covers 106 days.
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond       = 1000 * Picosecond
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
)

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// Micros returns t in microseconds.
func (t Time) Micros() float64 { return float64(t) / float64(Microsecond) }

// Millis returns t in milliseconds.
func (t Time) Millis() float64 { return float64(t) / float64(Millisecond) }

// Nanos returns t in nanoseconds.
func (t Time) Nanos() float64 { return float64(t) / float64(Nanosecond) }

func (t Time) String() string {
	switch {
	case t >= Millisecond || t <= -Millisecond:
		return fmt.Sprintf("%.6gms", t.Millis())
	case t >= Microsecond || t <= -Microsecond:
		return fmt.Sprintf("%.6gus", t.Micros())
	default:
		return fmt.Sprintf("%.6gns", t.Nanos())
	}
}

// Clock converts a core's cycles to time. Frequencies such as 240 MHz have no
// whole-picosecond period, so each conversion rounds to the nearest
// picosecond (an error below 0.5 ps per call).
type Clock struct {
	Hz int64
}

// Cycles returns the duration of n cycles (n >= 0).
func (c Clock) Cycles(n int64) Time {
	if n < 1<<23 { // n*1e12 fits in an int64
		return Time((n*int64(Second) + c.Hz/2) / c.Hz)
	}
	hi, lo := bits.Mul64(uint64(n), uint64(Second))
	lo, carry := bits.Add64(lo, uint64(c.Hz/2), 0)
	q, _ := bits.Div64(hi+carry, lo, uint64(c.Hz))
	return Time(q)
}

// ToCycles returns how many whole cycles fit in d.
func (c Clock) ToCycles(d Time) int64 {
	hi, lo := bits.Mul64(uint64(d), uint64(c.Hz))
	q, _ := bits.Div64(hi, lo, uint64(Second))
	return int64(q)
}
