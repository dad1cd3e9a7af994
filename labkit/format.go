package labkit

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Num formats a number for people: at least 4 significant digits and every
// integer digit, thousands separated ("41,811", "6,737", "1.83",
// "0.003301"); scientific notation below 0.001 and from 1e15 ("2.179e-8");
// "-" for NaN.
func Num(x float64) string { return sigDigits(x, 4) }

// Exact formats x exactly, in the shortest decimal that reads back as x,
// with Num's thousands separators and notation ranges ("1,000,000",
// "0.7", "240", "1e-5"), for tables of parameter values that must not be
// rounded.
func Exact(x float64) string { return sigDigits(x, 0) }

// sigDigits is Num with n significant digits, or with as many as x needs
// to read back exactly when n is 0.
func sigDigits(x float64, n int) string {
	switch {
	case math.IsNaN(x):
		return "-"
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "-∞"
	case x == 0:
		return "0"
	}
	a := math.Abs(x)
	if a < 1e-3 || a >= 1e15 {
		mant, exp, _ := strings.Cut(strconv.FormatFloat(x, 'e', n-1, 64), "e")
		e, _ := strconv.Atoi(exp)
		return trimZeros(mant) + "e" + strconv.Itoa(e)
	}
	decimals := -1 // exact
	if n > 0 {
		decimals = max(0, n-1-int(math.Floor(math.Log10(a))))
	}
	s := trimZeros(strconv.FormatFloat(x, 'f', decimals, 64))
	return groupThousands(s)
}

// trimZeros drops the trailing zeros of a decimal fraction ("1.830" ->
// "1.83", "10.00" -> "10").
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// groupThousands puts commas between the thousands of the integer part.
func groupThousands(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}

// MeanCI formats a summary as "mean ± half-width of the 95% interval" with
// the half-width to 2 significant digits, written like the mean ("41,811 ±
// 575", "0.003301 ± 0.000041"); a half-width below the last digit the mean
// shows is written as that bound ("100 ± <0.1", "2,000,000 ± <1"). The mean
// alone when the interval is undefined (one run). When the interval would
// cross zero while no run does, as it does for a count that two runs put at
// 2 and 6, it says nothing the runs do not, so the runs' range is shown
// instead: "4 (runs 2 and 6)", "3.333 (runs 2 to 6)".
func MeanCI(s Summary) string {
	m := Num(s.Mean)
	if runsOnOneSide(s) {
		sep := " to "
		if s.N == 2 {
			sep = " and "
		}
		return m + " (runs " + Num(s.Min) + sep + Num(s.Max) + ")"
	}
	switch a := math.Abs(s.Mean); {
	case math.IsNaN(s.Half):
		return m
	case s.Half == 0 || a < 1e-3 || a >= 1e15 || math.IsNaN(a) || math.IsInf(a, 0):
		return m + " ± " + sigDigits(s.Half, 2)
	case s.Half < shownDigit(a)/2:
		return m + " ± <" + Num(shownDigit(a))
	case s.Half < 1e-3:
		return m + " ± " + strconv.FormatFloat(s.Half, 'f', 1-int(math.Floor(math.Log10(s.Half))), 64)
	}
	return m + " ± " + sigDigits(s.Half, 2)
}

// runsOnOneSide reports whether s's 95% interval crosses zero while its runs
// all lie on one side of it. A summary without its runs' range (Min and Max
// not around the mean) never does.
func runsOnOneSide(s Summary) bool {
	if s.N < 2 || !(s.Min <= s.Mean && s.Mean <= s.Max && s.Min < s.Max) {
		return false
	}
	return (s.Min >= 0 && s.Mean-s.Half < 0) || (s.Max <= 0 && s.Mean+s.Half > 0)
}

// shownDigit is the value of the last digit Num shows of a (1e-3 <= a <
// 1e15): the fourth significant digit, or the units for numbers of four
// digits or more.
func shownDigit(a float64) float64 {
	return math.Min(1, math.Pow(10, math.Floor(math.Log10(a))-3))
}

// siPrefixes are the prefixes Quantity uses, by power of 1000.
var siPrefixes = map[int]string{-3: "n", -2: "µ", -1: "m", 0: "", 1: "k", 2: "M", 3: "G"}

// siBases are the units Quantity rescales.
var siBases = []string{"s", "W", "J", "Hz", "B"}

// asciiMicro finds the micro prefix written as u in an SI unit ("us",
// "uJ / op", "time (us)"), not inside a word or a key ("bus",
// "max_wait_us").
var asciiMicro = regexp.MustCompile(`\bu(s|W|J|Hz|B)\b`)

// ShowUnit returns a unit, or a label that ends with one, as a reader sees
// it: metric and parameter definitions write micro as u (ASCII, like their
// keys), reports write µ, as Quantity does ("us" -> "µs", "energy (uJ)" ->
// "energy (µJ)"). Tables, charts and their titles show units through it, so
// one report never says both.
func ShowUnit(unit string) string {
	if !strings.Contains(unit, "u") {
		return unit
	}
	return asciiMicro.ReplaceAllString(unit, "µ$1")
}

// Quantity formats a value with its unit, moving an SI unit (s, W, J, Hz, B,
// with or without a prefix: ms, us, µs, ns, mW, uJ, MHz...) to the prefix
// that gives 1 to 999 ("0.0033 ms" -> "3.3 µs", "2,277 mW" -> "2.277 W");
// other units are kept ("41,811 ops/s"). For prose: in a table column or on
// an axis one unit for every value reads better. A percentage has no
// prefix to move to, so one below 0.001% is written out to its fourth
// significant digit ("0.00006254%"), not in scientific notation.
func Quantity(x float64, unit string) string {
	if unit == "%" { // "35%", not "35 %"
		if a := math.Abs(x); a > 0 && a < 1e-3 {
			return strings.TrimRight(strconv.FormatFloat(x, 'f', 3-int(math.Floor(math.Log10(a))), 64), "0") + unit
		}
		return Num(x) + unit
	}
	scale, base, ok := splitSIUnit(unit)
	if !ok || x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		if unit == "" {
			return Num(x)
		}
		return Num(x) + " " + ShowUnit(unit)
	}
	v := x * scale
	p := int(math.Floor(math.Log10(math.Abs(v)) / 3))
	p = max(-3, min(3, p))
	v /= math.Pow(1000, float64(p))
	// 999.96 ms rounds to "1,000 ms": say 1 s.
	if s := Num(v); strings.HasPrefix(strings.TrimPrefix(s, "-"), "1,000") && p < 3 {
		p++
		v /= 1000
	}
	return Num(v) + " " + siPrefixes[p] + base
}

// rowUnit picks the unit for a row of values all in unit: unit itself,
// unless Num would write one of them in scientific notation (below 0.001),
// and then the smallest SI prefix down that lifts them all to 0.001 or more
// ("ms" with 1.228e-4 among them -> "µs", factor 1000). One unit for the
// whole row keeps its values comparable at a glance.
func rowUnit(unit string, xs ...float64) (factor float64, shown string) {
	scale, base, ok := splitSIUnit(unit)
	small := math.Inf(1)
	for _, x := range xs {
		if a := math.Abs(x); a > 0 && !math.IsInf(a, 0) {
			small = min(small, a)
		}
	}
	if !ok || small >= 1e-3 {
		return 1, ShowUnit(unit)
	}
	p := int(math.Round(math.Log10(scale) / 3))
	factor = 1
	for small*factor < 1e-3 && p > -3 {
		p--
		factor *= 1000
	}
	return factor, siPrefixes[p] + base
}

// splitSIUnit returns the factor to the base unit and the base of an SI unit
// such as "ms" (0.001, "s"); ok is false for other units.
func splitSIUnit(unit string) (scale float64, base string, ok bool) {
	for _, b := range siBases {
		prefix, found := strings.CutSuffix(unit, b)
		if !found {
			continue
		}
		switch prefix {
		case "":
			return 1, b, true
		case "n":
			return 1e-9, b, true
		case "u", "µ":
			return 1e-6, b, true
		case "m":
			return 1e-3, b, true
		case "k":
			return 1e3, b, true
		case "M":
			return 1e6, b, true
		case "G":
			return 1e9, b, true
		}
	}
	return 0, "", false
}

// Relative says how x compares with ref in words: "36x lower", "2.4x
// higher" when they differ by a factor of 2 or more, "22% higher", "21%
// lower" otherwise, "same" when equal. A percentage hides a large gap (-97%
// is 36x lower), a factor hides a small one. Values of different signs or a
// zero give "x vs ref".
func Relative(x, ref float64) string {
	switch {
	case math.IsNaN(x) || math.IsNaN(ref):
		return "-"
	case x == ref:
		return "same"
	case x == 0 || ref == 0 || (x < 0) != (ref < 0):
		return Num(x) + " vs " + Num(ref)
	}
	r := x / ref
	word := "higher"
	if math.Abs(x) < math.Abs(ref) {
		word = "lower"
	}
	switch {
	case r >= 2:
		return sigDigits(r, 2) + "x " + word
	case r <= 0.5:
		return sigDigits(1/r, 2) + "x " + word
	}
	pct := 100 * math.Abs(r-1)
	if pct < 1 {
		return fmt.Sprintf("%.2g%% %s", pct, word)
	}
	return fmt.Sprintf("%.0f%% %s", pct, word)
}
