package sim

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Percentile returns the p-th percentile (0..100) of a sorted sample by
// linear interpolation between order statistics: NumPy's default
// (numpy.percentile, method "linear"), R's type 7. With n values the
// virtual index is h = (n-1)·p/100 and the result lies between the values
// of ranks floor(h) and floor(h)+1, computed as NumPy computes it so that
// the two agree to the last bit. It is NaN for an empty sample or p outside
// [0, 100]. Every percentile SyncLab reports is this one (Histogram's
// within a stated error).
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 || !(p >= 0 && p <= 100) {
		return math.NaN()
	}
	return type7(n, p, func(i int) float64 { return sorted[i] })
}

// type7 interpolates the p-th percentile of n values from the value of
// rank i (0-based) that at returns, as numpy.percentile does: the virtual
// index (n-1)·(p/100), and a lerp that is exact at both ends.
func type7(n int, p float64, at func(i int) float64) float64 {
	h := float64(n-1) * (p / 100)
	if h >= float64(n-1) {
		return at(n - 1)
	}
	lo := math.Floor(h)
	t := h - lo
	a, b := at(int(lo)), at(int(lo)+1)
	d := b - a
	// float64() keeps each product rounded on its own (no fused
	// multiply-add on any architecture), as in NumPy.
	if t >= 0.5 {
		return b - float64(d*(1-t))
	}
	return a + float64(d*t)
}

// HistogramError is the relative error bound of Histogram.Percentile: the
// estimate differs from Percentile of the exact sample by at most
// HistogramError times that exact value.
const HistogramError = 1.0 / (2 << histSubBits)

// histSubBits sets the buckets' resolution: each octave [2^e, 2^(e+1)) of
// values above 2^(histSubBits+1) is split into 2^histSubBits buckets of
// equal width, so a bucket is at most 2^-histSubBits of its lower bound
// wide; smaller values have a bucket each.
const histSubBits = 7

// histRecent is how many of the latest values a Histogram keeps, for
// Last and for fast-forward, which replays a period of at most half of it.
const histRecent = 32

// Histogram is a streaming summary of non-negative durations in bounded
// memory (log-bucketed, as HdrHistogram): the count, sum, mean, minimum
// and maximum are exact, percentiles are within HistogramError of the
// exact sample's. Memory grows with the logarithm of the range of values
// seen (128 buckets per octave at most), never with their number. The sum
// must fit a Time (106 days). The zero value is an empty histogram.
type Histogram struct {
	n        uint64
	sum      Time
	min, max Time
	base     int      // bucket index of counts[0]
	counts   []uint64 // values per bucket, from base
	recent   [histRecent]Time
}

// bucketOf returns the bucket index of v >= 0: v itself below
// 2^(histSubBits+1), then histSubBits bits of mantissa per octave.
func bucketOf(v Time) int {
	u := uint64(v)
	shift := max(bits.Len64(u)-1-histSubBits, 0)
	return shift<<histSubBits + int(u>>shift)
}

// bucketRange returns the smallest value of bucket i and its width.
func bucketRange(i int) (low Time, width Time) {
	shift := max(i>>histSubBits-1, 0)
	return Time(i-shift<<histSubBits) << shift, 1 << shift
}

// Add records v, which must be >= 0 (a negative duration is a model bug
// and panics).
func (h *Histogram) Add(v Time) {
	if v < 0 {
		panic(fmt.Sprintf("sim: histogram value %v < 0", v))
	}
	h.recent[h.n%histRecent] = v
	h.addN(v, 1)
}

// addN records k copies of v (k >= 1) without touching recent.
func (h *Histogram) addN(v Time, k uint64) {
	i := bucketOf(v)
	switch {
	case len(h.counts) == 0:
		h.base, h.min, h.max = i, v, v
		h.counts = append(h.counts, 0)
	case i < h.base:
		h.counts = slices.Insert(h.counts, 0, make([]uint64, h.base-i)...)
		h.base = i
	case i >= h.base+len(h.counts):
		h.counts = append(h.counts, make([]uint64, i-h.base-len(h.counts)+1)...)
	}
	h.counts[i-h.base] += k
	h.n += k
	h.sum += v * Time(k)
	h.min, h.max = min(h.min, v), max(h.max, v)
}

// Count returns how many values were recorded.
func (h *Histogram) Count() int { return int(h.n) }

// Sum returns the sum of the values.
func (h *Histogram) Sum() Time { return h.sum }

// Mean returns the sum divided by the count, truncated like integer
// division (0 when empty).
func (h *Histogram) Mean() Time {
	if h.n == 0 {
		return 0
	}
	return h.sum / Time(h.n)
}

// Min returns the smallest value (0 when empty).
func (h *Histogram) Min() Time { return h.min }

// Max returns the largest value (0 when empty).
func (h *Histogram) Max() Time { return h.max }

// Last returns the value recorded last (0 when empty).
func (h *Histogram) Last() Time {
	if h.n == 0 {
		return 0
	}
	return h.recent[(h.n-1)%histRecent]
}

// Percentile returns the p-th percentile (0..100) of the values, as
// Percentile (type 7) defines it for the sorted sample, in picoseconds, with
// each order statistic taken as the middle of its bucket clamped to
// [Min, Max] (exact for the smallest and largest, and wherever a bucket is
// one picosecond wide). Since a bucket is at most 2^-histSubBits of its
// values wide, each estimate is within HistogramError of the order
// statistic it stands for, and so is their interpolation (all values are
// >= 0). It is NaN when empty or for p outside [0, 100].
func (h *Histogram) Percentile(p float64) float64 {
	if h.n == 0 || !(p >= 0 && p <= 100) {
		return math.NaN()
	}
	// Ranks asked for are increasing (i, then i+1): walk the buckets once.
	b, below := 0, uint64(0) // bucket b holds ranks [below, below+counts[b])
	return type7(int(h.n), p, func(r int) float64 {
		switch {
		case r == 0:
			return float64(h.min)
		case uint64(r) == h.n-1:
			return float64(h.max)
		}
		for uint64(r) >= below+h.counts[b] {
			below += h.counts[b]
			b++
		}
		low, width := bucketRange(h.base + b)
		mid := float64(low) + float64(width-1)/2
		return min(max(mid, float64(h.min)), float64(h.max))
	})
}

// periodic reports whether the values added from count a to b equal those
// added from b to c (counts one period apart), all still among the latest.
func (h *Histogram) periodic(a, b, c uint64) bool {
	if c-a > histRecent || c != h.n {
		return false
	}
	for i := a; i < b; i++ {
		if h.recent[i%histRecent] != h.recent[(i+b-a)%histRecent] {
			return false
		}
	}
	return true
}

// replay adds k more times the values added from count b to the current
// count (one period), as k more periods would, latest values included.
func (h *Histogram) replay(b uint64, k int64) {
	d := h.n - b
	period := make([]Time, d)
	for i := range period {
		period[i] = h.recent[(b+uint64(i))%histRecent]
	}
	for _, v := range period {
		h.addN(v, uint64(k))
	}
	// The latest values are the period's, in its order, ending with its end.
	for j := max(h.n-min(h.n, histRecent), b); j < h.n; j++ {
		h.recent[j%histRecent] = period[(j-b)%d]
	}
}
