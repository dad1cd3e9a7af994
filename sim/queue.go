package sim

import "slices"

// calQueue is a calendar queue (R. Brown, CACM 1988): a ring of buckets,
// each spanning 1<<shift picoseconds and sorted by (time, sequence). A
// push lands in the bucket of its time; a pop serves the current bucket.
// Both are O(1) on average, where a heap pays O(log n) mispredicted
// comparisons. The ring doubles with the number of entries (it never shrinks) and
// the width follows the spacing of the earliest entries.
type calQueue struct {
	b     []bucket
	mask  int64
	shift uint
	cur   int64 // bucket number (time >> shift) being served
	n     int
	// The earliest entry is cached between a lookup and the next pop, as
	// the engine asks for it before nearly every step of a process.
	top   entry
	topOK bool

	sparse  int     // direct searches since the last resize
	scratch []entry // reused by resize

	// Below smallMax entries the queue is one slice sorted latest first
	// (taken from the end): a handful of irregularly spaced events (two
	// cores and a tick) suit no calendar.
	small []entry
	isCal bool
}

const smallMax = 48

// bucket holds entries sorted by (time, sequence); those before head
// were served.
type bucket struct {
	items []entry
	head  int
}

// insert places x among the unserved entries, in order.
func (b *bucket) insert(x entry) {
	if len(b.items) == cap(b.items) && b.head > 0 {
		// A bucket served while it fills: reuse the served prefix
		// instead of growing forever.
		n := copy(b.items, b.items[b.head:])
		b.items, b.head = b.items[:n], 0
	}
	it := append(b.items, x)
	i := len(it) - 1
	for i > b.head && x.less(it[i-1]) {
		it[i] = it[i-1]
		i--
	}
	it[i] = x
	b.items = it
}

// remove deletes x, an unserved entry of the bucket.
func (b *bucket) remove(x entry) {
	b.items = removeSeq(b.items, x.seq)
	if b.head == len(b.items) {
		b.items, b.head = b.items[:0], 0
	}
}

// removeSeq deletes the entry of sequence seq from it: one pass from the
// end finds it and moves the entries after it down.
func removeSeq(it []entry, seq uint64) []entry {
	var next entry // the entry after it[i], zero past the end
	for i := len(it) - 1; ; i-- {
		cur := it[i]
		it[i] = next
		if cur.seq == seq {
			break
		}
		next = cur
	}
	return it[:len(it)-1]
}

// take removes and returns the earliest entry; the bucket must not be
// empty.
func (b *bucket) take() entry {
	x := b.items[b.head]
	b.head++
	if b.head == len(b.items) {
		b.items, b.head = b.items[:0], 0
	}
	return x
}

// rest returns the unserved entries.
func (b *bucket) rest() []entry { return b.items[b.head:] }

func newCalQueue() *calQueue {
	q := &calQueue{shift: 10}
	q.alloc(64)
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
	if !q.isCal {
		// Latest first: most entries are near, and land after few shifts.
		it := append(q.small, x)
		i := len(it) - 1
		for i > 0 && it[i-1].less(x) {
			it[i] = it[i-1]
			i--
		}
		it[i] = x
		q.small = it
		q.n++
		if q.n > smallMax {
			q.isCal = true
			q.resize(64)
		}
		return
	}
	k := int64(x.t) >> q.shift
	q.b[k&q.mask].insert(x)
	if k < q.cur {
		q.cur = k
	}
	if q.topOK && x.less(q.top) {
		q.top, q.cur = x, k
	}
	q.n++
	if q.n > 2*len(q.b) {
		q.resize(2 * len(q.b))
	}
}

// min returns the earliest entry without removing it and leaves q.cur at
// its bucket; q.n must be > 0.
func (q *calQueue) min() entry {
	if !q.isCal {
		return q.small[len(q.small)-1]
	}
	if q.topOK {
		return q.top
	}
	q.top, q.topOK = q.find(), true
	return q.top
}

func (q *calQueue) find() entry {
	for range len(q.b) {
		bk := &q.b[q.cur&q.mask]
		if bk.head < len(bk.items) && int64(bk.items[bk.head].t)>>q.shift == q.cur {
			return bk.items[bk.head]
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
	x := *best
	if q.sparse++; q.sparse > 8 {
		// The width no longer fits the spacing of the entries: refit it.
		q.resize(len(q.b))
	}
	return x
}

// remove deletes x, an entry of the queue (a cancelled or moved event).
func (q *calQueue) remove(x entry) {
	q.n--
	if !q.isCal {
		q.small = removeSeq(q.small, x.seq)
		return
	}
	q.b[(int64(x.t)>>q.shift)&q.mask].remove(x)
	if q.topOK && q.top.seq == x.seq {
		q.topOK = false
	}
}

func (q *calQueue) pop() entry {
	if !q.isCal {
		q.n--
		last := len(q.small) - 1
		x := q.small[last]
		q.small[last] = entry{}
		q.small = q.small[:last]
		return x
	}
	q.min() // leaves q.cur at the earliest entry's bucket
	q.topOK = false
	x := q.b[q.cur&q.mask].take()
	q.n--
	if q.n < smallMax/4 {
		q.toSmall()
	}
	return x
}

// ensure empties the ring and makes it at least nb buckets long. The ring
// never shrinks and buckets keep their capacity: a run whose event count
// swings allocates nothing after warming up (allocation here made parallel
// runs contend on the garbage collector).
func (q *calQueue) ensure(nb int) {
	if nb <= len(q.b) {
		q.clearBuckets()
		return
	}
	old := q.b
	q.alloc(nb)
	for i := range old {
		if cap(old[i].items) > cap(q.b[i].items) {
			q.b[i].items = old[i].items[:0]
		}
	}
}

// clearBuckets empties every bucket of the ring, keeping its capacity.
func (q *calQueue) clearBuckets() {
	for i := range q.b {
		q.b[i].items, q.b[i].head = q.b[i].items[:0], 0
	}
}

// toSmall moves the entries back into the sorted slice.
func (q *calQueue) toSmall() {
	all := q.collect()
	q.small = q.small[:0]
	for i := len(all) - 1; i >= 0; i-- {
		q.small = append(q.small, all[i])
	}
	q.clearBuckets()
	q.isCal, q.topOK = false, false
}

// collect returns every entry of the calendar in order, in q.scratch.
func (q *calQueue) collect() []entry {
	all := append(q.scratch[:0], q.small...)
	q.small = q.small[:0]
	for i := range q.b {
		all = append(all, q.b[i].rest()...)
	}
	slices.SortFunc(all, cmpEntry)
	q.scratch = all
	return all
}

// cmpEntry orders entries by (time, sequence) for sorting (no two
// entries are equal: sequences are unique).
func cmpEntry(a, b entry) int {
	if a.less(b) {
		return -1
	}
	return 1
}

// resize rebuilds the ring with nb buckets and a width of about three
// times the mean gap between the earliest entries.
func (q *calQueue) resize(nb int) {
	all := q.collect()
	q.sparse = 0
	shift := q.shift
	if k := min(len(all), 25); k > 1 {
		gap := (all[k-1].t - all[0].t) / Time(k-1)
		shift = 0
		for Time(1)<<shift < 3*gap && shift < 62 {
			shift++
		}
	}
	q.ensure(nb)
	q.shift = shift
	q.topOK = false
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

// last returns the time of the latest entry (0 when there is none).
func (q *calQueue) last() Time {
	if !q.isCal {
		if len(q.small) == 0 {
			return 0
		}
		return q.small[0].t // sorted latest first
	}
	var t Time
	for i := range q.b {
		for _, x := range q.b[i].rest() {
			t = max(t, x.t)
		}
	}
	return t
}

// live appends the entries to dst, in order (fast-forward reads and moves
// them).
func (q *calQueue) live(dst []entry) []entry {
	if !q.isCal {
		for i := len(q.small) - 1; i >= 0; i-- { // sorted already; the ring is empty
			dst = append(dst, q.small[i])
		}
		return dst
	}
	for i := range q.b {
		dst = append(dst, q.b[i].rest()...)
	}
	slices.SortFunc(dst, cmpEntry)
	return dst
}

// snapshot records the pending events in order, each with its time and
// sequence, which fast-forward advances by rebuilding the queue; scratch
// is reused and returned.
func (q *calQueue) snapshot(s *Snapshot, scratch []entry) []entry {
	scratch = q.live(scratch[:0])
	for _, x := range scratch {
		Ident(s, x.ev)
		s.Flag(x.ev.bg)
		s.queue = append(s.queue, queued{ev: x.ev, idx: len(s.vals)})
		s.num(refQueue, nil, int64(x.t))
		s.num(refQueue, nil, int64(x.seq))
	}
	return scratch
}

// rebuild empties the queue and pushes xs (in order).
func (q *calQueue) rebuild(xs []entry) {
	q.small = q.small[:0]
	q.clearBuckets()
	q.isCal, q.topOK, q.n, q.cur = false, false, 0, 0
	for _, x := range xs {
		q.push(x)
	}
}
