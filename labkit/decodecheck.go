package labkit

import (
	"context"
	"errors"
	"fmt"
	"math"

	"synclab/platforms"
)

// errLength is the error for msgpack data declaring more than it holds.
var errLength = errors.New("declared length exceeds the data")

// checkLengths walks msgpack data without decoding it and fails when a
// declared length (of an array, map, string, binary or extension) exceeds
// the bytes that remain, or the data holds more or less than one value.
// Every element takes at least one byte, so once it passes, what a decoder
// allocates from declared lengths is bounded by a small multiple of len(b):
// msgpack/v5 preallocates slices by their declared length.
func checkLengths(b []byte) error {
	pending := uint64(1) // values still to read
	i := 0
	for pending > 0 {
		if i >= len(b) {
			return fmt.Errorf("%w: value cut short at byte %d", errLength, i)
		}
		c := b[i]
		i++
		pending--
		// items: nested values that follow; size: bytes of payload; lenBytes:
		// bytes of the big-endian length field that gives size or items.
		var items, size uint64
		lenBytes, perLen := 0, uint64(0) // perLen: items (or bytes if 0) per unit of the length field
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3: // fixint, nil, bool
		case c <= 0x8f: // fixmap
			items = 2 * uint64(c&0x0f)
		case c <= 0x9f: // fixarray
			items = uint64(c & 0x0f)
		case c <= 0xbf: // fixstr
			size = uint64(c & 0x1f)
		case c == 0xc1:
			return fmt.Errorf("%w: reserved byte 0xc1 at byte %d", errLength, i-1)
		case c >= 0xc4 && c <= 0xc6: // bin 8/16/32
			lenBytes = 1 << (c - 0xc4)
		case c >= 0xc7 && c <= 0xc9: // ext 8/16/32: length, then a type byte
			lenBytes, size = 1<<(c-0xc7), 1
		case c == 0xca || c == 0xcb: // float32, float64
			size = 4 << (c - 0xca)
		case c >= 0xcc && c <= 0xcf: // uint 8..64
			size = 1 << (c - 0xcc)
		case c >= 0xd0 && c <= 0xd3: // int 8..64
			size = 1 << (c - 0xd0)
		case c >= 0xd4 && c <= 0xd8: // fixext 1..16, after a type byte
			size = 1 + 1<<(c-0xd4)
		case c >= 0xd9 && c <= 0xdb: // str 8/16/32
			lenBytes = 1 << (c - 0xd9)
		case c == 0xdc || c == 0xdd: // array 16/32
			lenBytes, perLen = 2<<(c-0xdc), 1
		default: // map 16/32 (0xde, 0xdf)
			lenBytes, perLen = 2<<(c-0xde), 2
		}
		if lenBytes > 0 {
			if len(b)-i < lenBytes {
				return fmt.Errorf("%w: length field cut short at byte %d", errLength, i)
			}
			var n uint64
			for _, x := range b[i : i+lenBytes] {
				n = n<<8 | uint64(x)
			}
			i += lenBytes
			if perLen > 0 {
				items = perLen * n
			} else {
				size += n
			}
		}
		rest := uint64(len(b) - i)
		if size > rest || pending+items > rest-size {
			return fmt.Errorf("%w: %d bytes and %d values declared at byte %d, %d bytes left", errLength, size, pending+items, i, rest)
		}
		i += int(size)
		pending += items
	}
	if i != len(b) {
		return fmt.Errorf("%w: %d bytes after the value", errLength, len(b)-i)
	}
	return nil
}

// validate is e.Validate, which also refuses values that are not finite
// (platforms.Experiment.Hash cannot encode them).
func validate(e platforms.Experiment) error {
	if err := e.Validate(); err != nil {
		return err
	}
	for _, p := range e.Params {
		if math.IsInf(p.Value, 0) {
			return fmt.Errorf("experiment %s: parameter %s: value %g is not finite", e.Name, p.Key, p.Value)
		}
	}
	for _, a := range e.Sweep {
		for _, v := range a.Values {
			if math.IsInf(v, 0) {
				return fmt.Errorf("experiment %s: sweep over %s: value %g is not finite", e.Name, a.Param, v)
			}
		}
	}
	return nil
}

// checker validates runs against the experiment definition and shard they
// claim to belong to.
type checker struct {
	e       platforms.Experiment
	shard   Shard
	total   int // runs of the whole experiment
	variant map[string]int
	points  int
}

// newChecker returns a checker for e's runs in shard; e must be valid.
func newChecker(e platforms.Experiment, shard Shard) (*checker, error) {
	total, err := RunCount(e)
	if err != nil {
		return nil, err
	}
	if err := shard.check(); err != nil {
		return nil, err
	}
	c := &checker{e: e, shard: shard, total: total, variant: map[string]int{}, points: e.NumPoints()}
	for i, v := range e.Variants {
		c.variant[v.Name] = i
	}
	return c, nil
}

// job checks that run is one of the shard's runs, with the seed RunSeed
// gives it and, unless it failed, every metric; it returns its job index.
func (c *checker) job(run Run) (int, error) {
	v, ok := c.variant[run.Variant]
	switch {
	case !ok:
		return 0, fmt.Errorf("run of unknown variant %q", run.Variant)
	case run.Point < 0 || run.Point >= c.points:
		return 0, fmt.Errorf("run at sweep point %d, the experiment has %d", run.Point, c.points)
	case run.Repeat < 0 || run.Repeat >= c.e.Repeats:
		return 0, fmt.Errorf("run with repeat %d, the experiment has %d", run.Repeat, c.e.Repeats)
	}
	j := jobIndex(c.e, v, run.Point, run.Repeat)
	if !c.shard.has(j) {
		return 0, fmt.Errorf("run %d (variant %s, point %d, repeat %d) is not in shard %s", j, run.Variant, run.Point, run.Repeat, c.shard)
	}
	if want := RunSeed(c.e.Seed, run.Variant, run.Repeat); run.Seed != want {
		return 0, fmt.Errorf("run %d has seed %d, its seed is %d", j, run.Seed, want)
	}
	if run.Failed() {
		if len(run.Metrics) > 0 || len(run.Samples) > 0 {
			return 0, fmt.Errorf("run %d failed (%s) but has metrics", j, run.Err)
		}
	} else {
		for _, m := range c.e.Metrics {
			if _, ok := run.Metrics[m.Name]; !ok {
				return 0, fmt.Errorf("run %d lacks metric %s", j, m.Name)
			}
		}
	}
	return j, nil
}

// check validates a result read from a file or built by hand: its definition
// is valid and hashes to Hash, its shard exists, and its runs are runs of
// that shard in job order, each once, with every metric, as many as the
// shard has when Complete.
func (r *Result) check(ctx context.Context) error {
	if err := validate(r.Experiment); err != nil {
		return err
	}
	if h := r.Experiment.Hash(); r.Hash != h {
		return fmt.Errorf("definition hash %q does not match its definition (%s)", r.Hash, h)
	}
	c, err := newChecker(r.Experiment, r.Shard)
	if err != nil {
		return err
	}
	want := r.Shard.size(c.total)
	if len(r.Runs) > want || r.Complete && len(r.Runs) != want {
		return fmt.Errorf("%d runs, shard %s of the experiment has %d", len(r.Runs), r.Shard, want)
	}
	prev := -1
	for i, run := range r.Runs {
		if i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		j, err := c.job(run)
		if err != nil {
			return err
		}
		if j <= prev {
			return fmt.Errorf("run %d repeated or out of job order", j)
		}
		prev = j
	}
	return nil
}

// RunsDiff describes the first difference between the runs of a and b (in
// job order: variant, point, repeat, seed, error, then each metric and
// sample, floats compared bit for bit), or returns "" when they hold the
// same runs. Two computations of one definition by one code version give
// the same runs, however they were scheduled, sharded or interrupted.
func RunsDiff(a, b *Result) string {
	if len(a.Runs) != len(b.Runs) {
		return fmt.Sprintf("%d runs vs %d", len(a.Runs), len(b.Runs))
	}
	for i, x := range a.Runs {
		y := b.Runs[i]
		if x.Variant != y.Variant || x.Point != y.Point || x.Repeat != y.Repeat || x.Seed != y.Seed || x.Err != y.Err {
			return fmt.Sprintf("run %d: %s %d %d %d %q vs %s %d %d %d %q", i, x.Variant, x.Point, x.Repeat, x.Seed, x.Err, y.Variant, y.Point, y.Repeat, y.Seed, y.Err)
		}
		if d := floatsDiff(x.Metrics, y.Metrics, func(v float64) []float64 { return []float64{v} }); d != "" {
			return fmt.Sprintf("run %d: metric %s", i, d)
		}
		if d := floatsDiff(x.Samples, y.Samples, func(v []float64) []float64 { return v }); d != "" {
			return fmt.Sprintf("run %d: samples %s", i, d)
		}
	}
	return ""
}

// floatsDiff compares two maps of float values bit for bit.
func floatsDiff[V any](a, b map[string]V, floats func(V) []float64) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d names vs %d", len(a), len(b))
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok {
			return k + " missing"
		}
		fa, fb := floats(va), floats(vb)
		if len(fa) != len(fb) {
			return fmt.Sprintf("%s: %d values vs %d", k, len(fa), len(fb))
		}
		for i := range fa {
			if math.Float64bits(fa[i]) != math.Float64bits(fb[i]) {
				return fmt.Sprintf("%s[%d]: %v vs %v", k, i, fa[i], fb[i])
			}
		}
	}
	return ""
}
