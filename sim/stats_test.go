package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// percentileGolden are numpy.percentile's values (NumPy 1.24.2, Debian 12's
// python3-numpy; default method "linear"), computed once by
//
//	np.percentile(np.sort(np.array(xs, dtype=np.float64)), p)
//
// for p in percentilePs and printed with repr, so that they read back as
// the same float64.
var (
	percentilePs     = []float64{0, 0.5, 1, 25, 33.3, 50, 66.7, 90, 95, 99, 99.9, 99.99, 100}
	percentileGolden = []struct {
		name string
		xs   []float64
		want []float64
	}{
		{"article", []float64{2, 4, 4, 4, 5, 5, 7, 9},
			[]float64{2.0, 2.07, 2.14, 4.0, 4.0, 4.5, 5.0, 7.6, 8.299999999999999, 8.86, 8.986, 8.998599999999998, 9.0}},
		{"awkward", []float64{0.1, 0.7, 3.3333333333333335, 1e-9, 2.718281828459045, 1234.5678, 0.30000000000000004, 42.0, 7.25, 99.99, 5.5e3, 0.015625, 1.0 / 3},
			[]float64{1e-09, 0.00093750094, 0.0018750008799999999, 0.30000000000000004, 0.33319999999999994, 2.718281828459045, 7.389000000000046,
				1007.6522400000008, 2940.740679999994, 4988.148135999996, 5448.814813600005, 5494.8814813599965, 5500.0}},
		{"ranks160", ranks(160),
			[]float64{1.0, 1.795, 2.59, 40.75, 53.946999999999996, 80.5, 107.05300000000001, 144.1, 152.04999999999998, 158.41, 159.841, 159.98409999999998, 160.0}},
		{"one", []float64{3}, []float64{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}},
		{"two", []float64{0.1, 0.7},
			[]float64{0.1, 0.10300000000000001, 0.10600000000000001, 0.25, 0.29979999999999996, 0.39999999999999997, 0.5002, 0.64, 0.6699999999999999, 0.694, 0.6994, 0.6999399999999999, 0.7}},
	}
)

// ranks returns 1..n.
func ranks(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	return xs
}

// Percentile agrees with numpy.percentile to the last bit.
func TestPercentileMatchesNumPy(t *testing.T) {
	for _, g := range percentileGolden {
		xs := slices.Sorted(slices.Values(g.xs))
		for i, p := range percentilePs {
			if got := Percentile(xs, p); got != g.want[i] {
				t.Errorf("%s: Percentile(%g) = %v, NumPy %v", g.name, p, got, g.want[i])
			}
		}
	}
	for _, p := range []float64{-1, 100.5, math.NaN()} {
		if got := Percentile([]float64{1, 2}, p); !math.IsNaN(got) {
			t.Errorf("Percentile(%g) = %g, want NaN", p, got)
		}
	}
	if got := Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("Percentile of nothing = %g, want NaN", got)
	}
}

// exact returns the type-7 percentile of ts computed on the sorted sample.
func exact(ts []Time, p float64) float64 {
	xs := make([]float64, len(ts))
	for i, v := range ts {
		xs[i] = float64(v)
	}
	slices.Sort(xs)
	return Percentile(xs, p)
}

// histogramSamples are random and adversarial samples for the histogram's
// error bound: spreads over many octaves, values at bucket edges, one value
// repeated, two clusters far apart, small exact values.
func histogramSamples() map[string][]Time {
	r := rand.New(rand.NewPCG(7, 11))
	out := map[string][]Time{}
	gen := func(name string, n int, f func(i int) Time) {
		ts := make([]Time, n)
		for i := range ts {
			ts[i] = f(i)
		}
		out[name] = ts
	}
	gen("exponential", 10000, func(int) Time { return Time(r.ExpFloat64() * float64(Microsecond)) })
	gen("lognormal", 10000, func(int) Time { return Time(math.Exp(r.NormFloat64()*4) * float64(Microsecond)) })
	gen("uniform", 5000, func(int) Time { return Time(r.Int64N(int64(Millisecond))) })
	gen("small", 3000, func(int) Time { return Time(r.IntN(2 << histSubBits)) })
	gen("constant", 1000, func(int) Time { return 123456789 })
	// Each value at the low or the high edge of its bucket: the bucket's
	// middle is as far from it as it can be.
	gen("edges", 4096, func(i int) Time {
		low, width := bucketRange(256 + i%3000)
		if i%2 == 0 {
			return low
		}
		return low + width - 1
	})
	// Two clusters an octave apart plus a few far outliers: percentiles
	// interpolate across the gap between two buckets.
	gen("gap", 1001, func(i int) Time {
		switch {
		case i%100 == 99:
			return Time(1) << 40
		case i%2 == 0:
			return 1<<30 - 1
		}
		return 1<<31 + 1
	})
	gen("powers", 63, func(i int) Time { return Time(1)<<i - 1 + Time(i%2) })
	return out
}

// The histogram's count, sum, mean, minimum and maximum are exact, and each
// percentile is within HistogramError of the exact sample's (relative).
func TestHistogramErrorBound(t *testing.T) {
	ps := []float64{0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 100}
	for name, ts := range histogramSamples() {
		var h Histogram
		var sum Time
		for _, v := range ts {
			h.Add(v)
			sum += v
		}
		if h.Count() != len(ts) || h.Sum() != sum || h.Mean() != sum/Time(len(ts)) ||
			h.Min() != slices.Min(ts) || h.Max() != slices.Max(ts) || h.Last() != ts[len(ts)-1] {
			t.Errorf("%s: count %d sum %v mean %v min %v max %v last %v, want %d %v %v %v %v %v", name,
				h.Count(), h.Sum(), h.Mean(), h.Min(), h.Max(), h.Last(),
				len(ts), sum, sum/Time(len(ts)), slices.Min(ts), slices.Max(ts), ts[len(ts)-1])
		}
		for _, p := range ps {
			want, got := exact(ts, p), h.Percentile(p)
			if math.Abs(got-want) > HistogramError*want {
				t.Errorf("%s: p%g = %.6g, exact %.6g: relative error %.3g > %.3g", name, p, got, want, math.Abs(got-want)/want, HistogramError)
			}
			if (p == 0 || p == 100) && got != want {
				t.Errorf("%s: p%g = %v, want exactly %v", name, p, got, want)
			}
		}
	}
	// Below 2^(histSubBits+1) ps every value has its own bucket: exact.
	var h Histogram
	small := histogramSamples()["small"]
	for _, v := range small {
		h.Add(v)
	}
	for _, p := range ps {
		if got, want := h.Percentile(p), exact(small, p); got != want {
			t.Errorf("small values: p%g = %v, want exactly %v", p, got, want)
		}
	}
}

// Buckets tile the values: each starts where the one before ends, is at most
// 2^-histSubBits of its lower bound wide, and holds exactly its values.
func TestHistogramBuckets(t *testing.T) {
	next := Time(0)
	for i := range 40 << histSubBits {
		low, width := bucketRange(i)
		if low != next || width < 1 || (low >= 2<<histSubBits && width<<histSubBits > low) {
			t.Fatalf("bucket %d: [%d, +%d), want it to start at %d and be at most 2^-%d of it wide", i, low, width, next, histSubBits)
		}
		if bucketOf(low) != i || bucketOf(low+width-1) != i {
			t.Fatalf("bucket %d: its ends fall in buckets %d and %d", i, bucketOf(low), bucketOf(low+width-1))
		}
		next = low + width
	}
	if got := bucketOf(math.MaxInt64); got != (64-histSubBits)<<histSubBits-1 {
		t.Errorf("bucket of the largest Time = %d, want %d", got, (64-histSubBits)<<histSubBits-1)
	}
}

// An empty histogram reports zeros and NaN percentiles; a negative value is
// a model bug and panics.
func TestHistogramEmptyAndNegative(t *testing.T) {
	var h Histogram
	if h.Count() != 0 || h.Mean() != 0 || h.Max() != 0 || h.Last() != 0 || !math.IsNaN(h.Percentile(50)) {
		t.Errorf("empty: count %d mean %v max %v last %v p50 %g", h.Count(), h.Mean(), h.Max(), h.Last(), h.Percentile(50))
	}
	h.Add(5)
	if !math.IsNaN(h.Percentile(101)) || h.Percentile(50) != 5 {
		t.Errorf("p101 = %g, p50 = %g; want NaN and 5", h.Percentile(101), h.Percentile(50))
	}
	defer func() {
		if recover() == nil {
			t.Error("a negative value did not panic")
		}
	}()
	h.Add(-1)
}

// Replaying a period k times leaves the histogram exactly as adding its
// values k more times does, latest values included; periodic tells a
// repeated period from one that differs or is no longer kept.
func TestHistogramReplay(t *testing.T) {
	period := []Time{5 * Microsecond, 70, 5 * Microsecond, 3 * Millisecond}
	var fast, slow Histogram
	for _, h := range []*Histogram{&fast, &slow} {
		h.Add(1) // before the periods
		for range 2 {
			for _, v := range period {
				h.Add(v)
			}
		}
	}
	a, b, c := uint64(1), uint64(1+len(period)), uint64(1+2*len(period))
	if !fast.periodic(a, b, c) {
		t.Fatal("two equal periods not seen as periodic")
	}
	const k = 1000
	fast.replay(b, k)
	for range k {
		for _, v := range period {
			slow.Add(v)
		}
	}
	if fmt.Sprint(fast) != fmt.Sprint(slow) {
		t.Errorf("replayed\n%v\nadded\n%v", fast, slow)
	}
	var h Histogram
	for _, v := range []Time{1, 2, 1, 3} {
		h.Add(v)
	}
	if h.periodic(0, 2, 4) {
		t.Error("periods (1 2) and (1 3) seen as equal")
	}
	var long Histogram
	for range 2 * (histRecent/2 + 1) {
		long.Add(9)
	}
	if n := uint64(long.Count()); long.periodic(0, n/2, n) {
		t.Error("periods longer than half the latest values kept seen as periodic")
	}
}

// A histogram of lock waits: exact mean and maximum, the 99th percentile
// within HistogramError.
func ExampleHistogram() {
	var h Histogram
	for i := 1; i <= 1000; i++ {
		h.Add(Time(i) * Microsecond)
	}
	fmt.Println(h.Count(), h.Mean(), h.Max())
	fmt.Printf("p99 %.4gus (exact 990.01us)\n", h.Percentile(99)/float64(Microsecond))
	// Output:
	// 1000 500.5us 1ms
	// p99 992us (exact 990.01us)
}
