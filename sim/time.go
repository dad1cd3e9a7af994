package sim

import (
	"math/bits"
	"strconv"
	"strings"
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

// String writes t in the largest unit it fills (s, ms, us or ns), to six
// significant digits and never in exponent form: a run's limit of hours
// reads 7200s, not 7.2e+06ms.
func (t Time) String() string {
	var v float64
	var unit string
	switch a := max(t, -t); {
	case a >= Second:
		v, unit = t.Seconds(), "s"
	case a >= Millisecond:
		v, unit = t.Millis(), "ms"
	case a >= Microsecond:
		v, unit = t.Micros(), "us"
	default:
		v, unit = t.Nanos(), "ns"
	}
	if s := strconv.FormatFloat(v, 'g', 6, 64); !strings.ContainsRune(s, 'e') {
		return s + unit
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + unit // a million seconds or more
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
