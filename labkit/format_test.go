package labkit

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestNum(t *testing.T) {
	for x, want := range map[float64]string{
		0: "0", 41811.23: "41,811", -41811.23: "-41,811", 6737.4: "6,737", 1.8301: "1.83", 100: "100",
		0.0033012: "0.003301", 2.179e-8: "2.179e-8", 1e15: "1e15", 999.96: "1,000", 9.99996: "10",
		1234567.8: "1,234,568", 0.5: "0.5", math.NaN(): "-", math.Inf(1): "∞", 123.456: "123.5",
	} {
		if got := Num(x); got != want {
			t.Errorf("Num(%g) = %q, want %q", x, got, want)
		}
	}
}

// Exact keeps every digit a value needs to read back, where Num rounds to
// four; separators and notation ranges are Num's.
func TestExact(t *testing.T) {
	for x, want := range map[float64]string{
		0: "0", 1e6: "1,000,000", -1e7: "-10,000,000", 0.7: "0.7", 240: "240", 123.456: "123.456",
		1234567.8: "1,234,567.8", 0.0033012: "0.0033012", 1e-5: "1e-5", 2.179e-8: "2.179e-8", 1e15: "1e15",
		math.NaN(): "-", math.Inf(-1): "-∞",
	} {
		got := Exact(x)
		if got != want {
			t.Errorf("Exact(%g) = %q, want %q", x, got, want)
		}
		if back, err := strconv.ParseFloat(strings.ReplaceAll(got, ",", ""), 64); err == nil && back != x {
			t.Errorf("Exact(%g) = %q reads back as %g", x, got, back)
		}
	}
}

func TestMeanCI(t *testing.T) {
	tests := []struct {
		s    Summary
		want string
	}{
		{Summary{Mean: 41811.2, Half: 575.4}, "41,811 ± 575"},
		{Summary{Mean: 100, Half: 2.179e-8}, "100 ± <0.1"},
		{Summary{Mean: 2e6, Half: 0}, "2,000,000 ± 0"},
		{Summary{Mean: 2e6, Half: 0.3}, "2,000,000 ± <1"},
		{Summary{Mean: 99.77, Half: 0.024}, "99.77 ± 0.024"},
		{Summary{Mean: 0.0033012, Half: 0.000041}, "0.003301 ± 0.000041"},
		{Summary{Mean: 0.0033012, Half: 0.0000001}, "0.003301 ± <1e-6"},
		{Summary{Mean: 5e-5, Half: 1e-6}, "5e-5 ± 1e-6"},
		{Summary{Mean: 7, Half: math.NaN()}, "7"},
		// Intervals that cross zero where the runs do not show the runs.
		{Summarize([]float64{2, 6}), "4 (runs 2 and 6)"},
		{Summarize([]float64{2, 2, 6}), "3.333 (runs 2 to 6)"},
		{Summarize([]float64{-2, -2, -6}), "-3.333 (runs -6 to -2)"},
		{Summarize([]float64{0, 0, 88}).Scale(0.5), "14.67 (runs 0 to 44)"},
		// An interval that stays on the runs' side, or runs on both sides.
		{Summarize([]float64{5, 5.2}), "5.1 ± 1.3"},
		{Summarize([]float64{-1, 1}), "0 ± 13"},
		// Without the runs' range, the interval is all there is.
		{Summary{N: 2, Mean: 4, Half: 25}, "4 ± 25"},
	}
	for _, tc := range tests {
		if got := MeanCI(tc.s); got != tc.want {
			t.Errorf("MeanCI(%v ± %v) = %q, want %q", tc.s.Mean, tc.s.Half, got, tc.want)
		}
	}
}

func TestQuantity(t *testing.T) {
	tests := []struct {
		x    float64
		unit string
		want string
	}{
		{0.0033, "ms", "3.3 µs"}, {2.29, "ms", "2.29 ms"}, {2277, "mW", "2.277 W"}, {410, "mW", "410 mW"},
		{41811, "ops/s", "41,811 ops/s"}, {0.99996, "s", "1 s"}, {999.96, "us", "1 ms"}, {1800, "MHz", "1.8 GHz"},
		{12, "", "12"}, {0, "ms", "0 ms"}, {5e-13, "s", "5e-4 ns"}, {0, "us", "0 µs"}, {54.4, "uJ / op", "54.4 µJ / op"},
		{6.254e-5, "%", "0.00006254%"}, {-5e-4, "%", "-0.0005%"}, {0.0015, "%", "0.0015%"}, {35, "%", "35%"},
	}
	for _, tc := range tests {
		if got := Quantity(tc.x, tc.unit); got != tc.want {
			t.Errorf("Quantity(%g, %q) = %q, want %q", tc.x, tc.unit, got, tc.want)
		}
	}
}

// Units reach readers with micro as µ, whether a definition wrote u or µ,
// and nothing else changes: not keys, not words, not other prefixes.
func TestShowUnit(t *testing.T) {
	for in, want := range map[string]string{
		"us": "µs", "uJ": "µJ", "uW/MHz/V^2": "µW/MHz/V^2", "time (us)": "time (µs)", "energy / op (uJ)": "energy / op (µJ)",
		"µs": "µs", "ns": "ns", "ms": "ms", "bus": "bus", "max_wait_us": "max_wait_us", "cs_us (us)": "cs_us (µs)",
		"ops/s": "ops/s", "": "", "unit": "unit", "u": "u",
	} {
		if got := ShowUnit(in); got != want {
			t.Errorf("ShowUnit(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRowUnit(t *testing.T) {
	tests := []struct {
		unit   string
		xs     []float64
		factor float64
		shown  string
	}{
		{"ms", []float64{1.228e-4, 4.314, 0}, 1e3, "µs"},     // the smallest value picks the prefix
		{"ms", []float64{5.273e-9, 2}, 1e6, "ns"},            // two steps
		{"ms", []float64{0.0012, 3200, math.NaN()}, 1, "ms"}, // readable already
		{"s", []float64{1e-15}, 1e9, "ns"},                   // nothing below n
		{"%", []float64{1e-5}, 1, "%"},                       // not an SI unit
		{"ops/s", []float64{1e-4}, 1, "ops/s"},
		{"us", []float64{3.3, 0.5}, 1, "µs"}, // readable, shown with µ
	}
	for _, tc := range tests {
		f, u := rowUnit(tc.unit, tc.xs...)
		if f != tc.factor || u != tc.shown {
			t.Errorf("rowUnit(%q, %v) = %g, %q, want %g, %q", tc.unit, tc.xs, f, u, tc.factor, tc.shown)
		}
	}
}

func TestRelative(t *testing.T) {
	tests := []struct {
		x, ref float64
		want   string
	}{
		{0.0033, 0.12, "36x lower"}, {2.4, 1, "2.4x higher"}, {1.22, 1, "22% higher"}, {0.79, 1, "21% lower"},
		{1.004, 1, "0.4% higher"}, {5, 5, "same"}, {-1, 2, "-1 vs 2"}, {0, 3, "0 vs 3"}, {math.NaN(), 1, "-"},
	}
	for _, tc := range tests {
		if got := Relative(tc.x, tc.ref); got != tc.want {
			t.Errorf("Relative(%g, %g) = %q, want %q", tc.x, tc.ref, got, tc.want)
		}
	}
}

// TestFormatEdges pins the boundaries the tables above do not reach: Num
// switches to scientific notation strictly below 0.001 and groups the
// digits of a negative number after its sign; MeanCI writes a half-width
// of at least half the mean's last shown digit as a number, not as "<";
// Quantity keeps G as its largest prefix (even when 999.96 GHz rounds to
// 1,000) and rolls a negative value over to the next prefix like a
// positive one; Relative says a factor from exactly 2x (or 0.5x) on.
func TestFormatEdges(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Num(0.001), "0.001"},
		{Num(-0.001), "-0.001"},
		{Num(0.000999), "9.99e-4"},
		{Num(-123456), "-123,456"},
		{Num(-1234.5), "-1,234"},
		{MeanCI(Summary{Mean: 100, Half: 0.07}), "100 ± 0.07"},
		{MeanCI(Summary{Mean: 100, Half: 0.05}), "100 ± 0.05"},
		{MeanCI(Summary{Mean: 100, Half: 0.049}), "100 ± <0.1"},
		{Quantity(999.96, "GHz"), "1,000 GHz"},
		{Quantity(5e12, "Hz"), "5,000 GHz"},
		{Quantity(-999.96, "us"), "-1 ms"},
		{Quantity(-0.0033, "ms"), "-3.3 µs"},
		{Relative(2, 1), "2x higher"},
		{Relative(0.5, 1), "2x lower"},
		{Relative(1.99, 1), "99% higher"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
