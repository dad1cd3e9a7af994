package sim

import "slices"

// calQueue is a calendar queue (R. Brown, CACM 1988): a ring of buckets,
// each spanning 1<<shift picoseconds and sorted by (time, sequence). A
// push lands in the bucket of its time; a pop serves the current bucket.
// Both are O(1) on average, where a heap pays O(log n) mispredicted
// comparisons. The ring doubles or halves with the number of entries and
// the width follows the spacing of the earliest entries.
type calQueue struct {
	b     []bucket
	mask  int64
	shift uint
	cur   int64 // bucket number (time >> shift) being served
	n     int
}

type bucket struct {
	items []entry
	head  int
}

func newCalQueue() *calQueue {
	q := &calQueue{shift: 10}
	q.alloc(16)
	return q
}

// alloc makes nb empty buckets whose first few slots share one backing
// array, so neighbouring buckets sit in neighbouring memory.
func (q *calQueue) alloc(nb int) {
	const slots = 4
	backing := make([]entry, nb*slots)
	q.b = make([]bucket, nb)
	for i := range q.b {
		q.b[i].items = backing[i*slots : i*slots : (i+1)*slots]
	}
	q.mask = int64(nb - 1)
}

func (q *calQueue) push(x entry) {
	k := int64(x.t) >> q.shift
	bk := &q.b[k&q.mask]
	it := append(bk.items, x)
	i := len(it) - 1
	for i > bk.head && x.less(it[i-1]) {
		it[i] = it[i-1]
		i--
	}
	it[i] = x
	bk.items = it
	if k < q.cur {
		q.cur = k
	}
	q.n++
	if q.n > 2*len(q.b) {
		q.resize(2 * len(q.b))
	}
}

// min returns the earliest entry without removing it; q.n must be > 0.
func (q *calQueue) min() *entry {
	for range len(q.b) {
		bk := &q.b[q.cur&q.mask]
		if bk.head < len(bk.items) && int64(bk.items[bk.head].t)>>q.shift == q.cur {
			return &bk.items[bk.head]
		}
		q.cur++
	}
	// A sparse year: find the earliest head directly.
	var best *entry
	for i := range q.b {
		bk := &q.b[i]
		if bk.head < len(bk.items) && (best == nil || bk.items[bk.head].less(*best)) {
			best = &bk.items[bk.head]
		}
	}
	q.cur = int64(best.t) >> q.shift
	return best
}

func (q *calQueue) pop() entry {
	x := *q.min()
	bk := &q.b[q.cur&q.mask]
	bk.head++
	if bk.head == len(bk.items) {
		bk.items, bk.head = bk.items[:0], 0
	}
	q.n--
	if q.n < len(q.b)/2 && len(q.b) > 16 {
		q.resize(len(q.b) / 2)
	}
	return x
}

// resize rebuilds the ring with nb buckets and a width of about three
// times the mean gap between the earliest entries.
func (q *calQueue) resize(nb int) {
	all := make([]entry, 0, q.n)
	for i := range q.b {
		all = append(all, q.b[i].items[q.b[i].head:]...)
	}
	slices.SortFunc(all, func(a, b entry) int {
		if a.less(b) {
			return -1
		}
		return 1
	})
	shift := q.shift
	if k := min(len(all), 25); k > 1 {
		gap := (all[k-1].t - all[0].t) / Time(k-1)
		shift = 0
		for Time(1)<<shift < 3*gap && shift < 62 {
			shift++
		}
	}
	q.alloc(nb)
	q.shift = shift
	q.n = 0
	if len(all) > 0 {
		q.cur = int64(all[0].t) >> shift
	}
	for _, x := range all {
		bk := &q.b[(int64(x.t)>>shift)&q.mask]
		bk.items = append(bk.items, x) // already in order
		q.n++
	}
}
