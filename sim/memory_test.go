package sim

import "testing"

// Two cores writing one line in turn pay the transfer latency between them
// on every write; the first write fills the line from memory.
func TestLinePingPong(t *testing.T) {
	for _, tc := range []struct {
		name  string
		other int // the second writer
		want  Time
	}{
		{"same cluster", 1, sameLat},
		{"other cluster", 2, otherLat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 4, false, nil)
			var got [2][]Time
			writer := func(idx, start int) func(p *Proc) {
				return func(p *Proc) {
					p.Delay(Time(start) * Microsecond)
					for i := 0; i < 5; i++ {
						t0 := p.Now()
						p.Store(ramBase, uint64(i))
						got[idx] = append(got[idx], p.Now()-t0)
						p.Delay(2*Microsecond - (p.Now() - t0))
					}
				}
			}
			r.e.Spawn(r.e.Cores()[0], "w0", writer(0, 0))
			r.e.Spawn(r.e.Cores()[tc.other], "w1", writer(1, 1))
			r.run(t)
			if got[0][0] != dramLat {
				t.Errorf("first write took %v, want the memory fill %v", got[0][0], dramLat)
			}
			for i := 1; i < 5; i++ {
				if got[0][i] != tc.want {
					t.Errorf("writer 0, write %d took %v, want %v", i, got[0][i], tc.want)
				}
			}
			for i, d := range got[1] {
				if d != tc.want {
					t.Errorf("writer 1, write %d took %v, want %v", i, d, tc.want)
				}
			}
		})
	}
}

// A contended line is a queue: writes by three cores at the same instant
// complete one transfer apart.
func TestLineTransfersSerialize(t *testing.T) {
	r := newRig(t, 2, false, nil)
	r.m.Poke(ramBase, 0)
	var done []Time
	r.e.Spawn(r.e.Cores()[0], "a", func(p *Proc) {
		p.Load(ramBase)
		p.Delay(Microsecond + Nanosecond - p.Now())
		p.Store(ramBase, 1)
		done = append(done, p.Now())
	})
	r.e.Spawn(r.e.Cores()[1], "b", func(p *Proc) { p.Delay(Microsecond); p.Store(ramBase, 2); done = append(done, p.Now()) })
	r.run(t)
	// a holds the line; b's write at 1us transfers it (50ns) while a's own
	// write queues behind and takes it back (another 50ns).
	want := []Time{Microsecond + sameLat, Microsecond + 2*sameLat}
	if len(done) != 2 || done[0] != want[0] || done[1] != want[1] {
		t.Fatalf("completion times %v, want %v", done, want)
	}
}

// On uncached memory the port serializes every access.
func TestUncachedPortArbitration(t *testing.T) {
	r := newRig(t, 2, true, nil)
	var ends []Time
	for i := 0; i < 2; i++ {
		r.e.Spawn(r.e.Cores()[i], "p", func(p *Proc) {
			p.Load(ramBase + Addr(8*p.Core().ID))
			ends = append(ends, p.Now())
		})
	}
	r.run(t)
	// Latency 100ns, occupancy 20ns: the second access starts 20ns later.
	if ends[0] != dramLat || ends[1] != dramLat+20*Nanosecond {
		t.Fatalf("ends %v, want [%v %v]", ends, dramLat, dramLat+20*Nanosecond)
	}
}

// distance is the latency from the nearest holder (the farthest for a write,
// which must reach every copy), or from memory when no other core holds the
// line: checked against every holder set of four cores in two clusters,
// whichever of the two distances is the longer.
func TestDistanceNearestAndFarthest(t *testing.T) {
	for _, coh := range []Coherence{
		{LineSize: 64, SameCluster: sameLat, OtherCluster: otherLat},
		{LineSize: 64, SameCluster: otherLat, OtherCluster: sameLat}, // an odd topology
	} {
		r := newRig(t, 4, false, nil)
		r.m.coh = coh
		reg := r.m.regions[0]
		for _, c := range r.e.Cores() {
			for mask := uint64(0); mask < 16; mask++ {
				for _, far := range []bool{false, true} {
					want := reg.Latency
					if others := mask &^ (1 << c.ID); others != 0 {
						want = -1
						for _, o := range r.e.Cores() {
							if others&(1<<o.ID) == 0 {
								continue
							}
							d := coh.SameCluster
							if o.Cfg.Cluster != c.Cfg.Cluster {
								d = coh.OtherCluster
							}
							if want < 0 || (far && d > want) || (!far && d < want) {
								want = d
							}
						}
					}
					if got := r.m.distance(c, mask, reg, far); got != want {
						t.Errorf("%+v: core %d, holders %04b, far %v: %v, want %v", coh, c.ID, mask, far, got, want)
					}
				}
			}
		}
	}
}
