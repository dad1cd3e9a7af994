package ledger

import (
	"fmt"
	"slices"

	"synclab/labkit"
	"synclab/platforms/rk3399"
)

// armJudges judge the ARM article's claims (data/claims/claims.json says
// how, in words, beside each claim).
var armJudges = map[string]judge{
	"arm-incident-spikes": func(r *runs) (Verdict, string, string) {
		wfe, wfi := r.point("incident", "wait", 0), r.point("incident", "wait", 1)
		maxE, maxI := r.mean("incident", "qspinlock", wfe, "max_lock_wait_ms"), r.mean("incident", "qspinlock", wfi, "max_lock_wait_ms")
		avgE, avgI := r.mean("incident", "qspinlock", wfe, "avg_lock_wait_ms"), r.mean("incident", "qspinlock", wfi, "avg_lock_wait_ms")
		q := r.ratio(at{"incident", "qspinlock", wfi, "max_lock_wait_ms"}, at{"incident", "qspinlock", wfe, "max_lock_wait_ms"})
		mag := fmt.Sprintf("longest lock wait %s ms with WFI, %s WFE's %s ms (%s); mean %s vs %s ms", num(maxI), vs(maxI, maxE), num(maxE), q.interval(), num(avgI), num(avgE))
		why := "a WFI waiter sleeps until its next interrupt, its tick (up to a tick period, plus the queue ahead of it once awake); WFE wakes one line transfer after the release"
		switch {
		case q.straddles(10, 1):
			return unresolved(q, "WFI's longest wait over WFE's", "incident", mag)
		case maxI >= 10*maxE:
			return Holds, mag, why
		case maxI > maxE:
			return Partly, mag, "WFI's spikes are smaller than the mechanism suggests: " + why
		}
		return Contradicted, mag, "WFI does not wait longer here"
	},
	"arm-incident-stall": func(r *runs) (Verdict, string, string) {
		lim := r.value("stall_pct")
		e := r.mean("incident", "qspinlock", r.point("incident", "wait", 0), "stall_pct")
		i := r.mean("incident", "qspinlock", r.point("incident", "wait", 1), "stall_pct")
		mag := fmt.Sprintf("WFI %s%% of the cores' time waiting for the lock, WFE %s%% (article: over %g%%)", num(i), num(e), lim)
		switch {
		case i > lim && e <= lim:
			return Holds, mag, "WFI waiters sleep to their next tick, so lock waiting takes most of the time; with WFE it is a few per cent"
		case i > lim:
			return Partly, mag, "the stall exceeds the figure with WFE too, so it does not single out WFI"
		}
		return Contradicted, mag, "the stall stays below the article's figure even with WFI"
	},
	"arm-incident-cpu": func(r *runs) (Verdict, string, string) {
		e, i := r.point("incident", "wait", 0), r.point("incident", "wait", 1)
		busyE, busyI := r.mean("incident", "qspinlock", e, "cpu_busy_pct"), r.mean("incident", "qspinlock", i, "cpu_busy_pct")
		thrE, thrI := r.mean("incident", "qspinlock", e, "throughput_ops_s"), r.mean("incident", "qspinlock", i, "throughput_ops_s")
		mag := fmt.Sprintf("OS-visible CPU use %s%% with WFE, %s%% with WFI; throughput %s ops/s, %s with WFI (%s)", num(busyE), num(busyI), num(thrE), num(thrI), vs(thrI, thrE))
		switch {
		case busyI > busyE && thrI < thrE:
			return Holds, mag, "a thread waiting in WFI is not idle to the OS: its wait counts as CPU use while it does no work"
		case busyI > busyE || thrI < thrE:
			return Partly, mag, "only one of the two symptoms appears"
		}
		return Contradicted, mag, "neither symptom appears"
	},
	"arm-wfi-not-woken": func(r *runs) (Verdict, string, string) {
		wait := r.mean("rk-main", "wfi", 0, "avg_lock_wait_ms")
		events := r.mean("rk-main", "wfi", 0, "wakeups_event")
		hz := r.param("rk-main", "hz")
		half := 1000 / hz / 2
		mag := fmt.Sprintf("WFI mean wait %s ms = %.2f half ticks at HZ=%g (article: usually over %g ms); %g WFI wake-ups by an event", num(wait), wait/half, hz, r.value("min_wait_ms"), events)
		switch {
		case events == 0 && wait > r.value("min_wait_ms"):
			return Holds, mag, "no release ever woke a WFI waiter: its tick did (with interrupts masked, a pending tick makes every later WFI fall through, so it then spins)"
		case events == 0:
			return Partly, mag, "no release woke a WFI waiter, but the wait is shorter than the article says"
		}
		return Contradicted, mag, "events woke WFI waiters"
	},
	"arm-wfe-immediate": func(r *runs) (Verdict, string, string) {
		h := r.mean("scaling", "qspinlock", r.point("scaling", "cores", 4), "handoff_ns")
		mag := fmt.Sprintf("%s ns from a release to the next holder's acquisition (qspinlock, 4 cores, waiters queued)", num(h))
		if h < 1000 {
			return Holds, mag, "the releasing store clears the waiter's exclusive monitor, which is a wake-up event, so the waiter wakes at once, with no SEV and no tick: the hand-off is the WFE wake and a few line transfers (the release, the waiter's reload, its take)"
		}
		return Contradicted, mag, "the hand-off takes more than a microsecond"
	},
	"arm-table-wait": func(r *runs) (Verdict, string, string) {
		wfe, wfi := r.mean("rk-main", "wfe", 0, "avg_lock_wait_ms"), r.mean("rk-main", "wfi", 0, "avg_lock_wait_ms")
		sim, art := wfi/wfe, r.value("wfi")/r.value("wfe")
		mag := fmt.Sprintf("WFI/WFE %sx (article %sx); WFE %s ms, %s the article's %g ms; WFI %s ms, %s its %g ms",
			num(sim), num(art), num(wfe), vs(wfe, r.value("wfe")), r.value("wfe"), num(wfi), vs(wfi, r.value("wfi")), r.value("wfi"))
		switch {
		case within(sim, art, 2):
			return Holds, mag, "WFI waits for its tick, WFE for the release's line transfers"
		case sim > 1:
			return Partly, mag, "the direction holds (WFI waits for its tick, about half a tick period); WFE's wait here is queueing behind microsecond sections, far below 0.12 ms"
		}
		return Contradicted, mag, "WFE waits longer than WFI here"
	},
	"arm-table-throughput": func(r *runs) (Verdict, string, string) {
		wfe, wfi := r.mean("rk-main", "wfe", 0, "throughput_ops_s"), r.mean("rk-main", "wfi", 0, "throughput_ops_s")
		sim, art := pct(wfi, wfe), pct(r.value("wfi"), r.value("wfe"))
		threads := r.param("rk-main", "cores") * r.param("rk-main", "load") / (r.param("rk-main", "cs_us") + r.param("rk-main", "outside_us")) * 1e6
		handler := 0.0
		if g := r.param("rk-main", "irq_mean_us"); g > 0 {
			handler = 1e6 / g
		}
		offered := threads + handler
		mag := fmt.Sprintf("WFI %+.0f%% (article %+.1f%%); WFE's %s ops/s is %s the offered load, %s ops/s (%s from the threads: cores x load / (cs + outside); %s from the handler): the offered load, an input, sets WFE's throughput, and its closed loops lose the time they wait",
			sim, art, num(wfe), vs(wfe, offered), num(offered), num(threads), num(handler))
		switch {
		case sim-art <= 10 && art-sim <= 10:
			return Holds, mag, "waiting for a tick cuts the closed loop's throughput by the article's amount"
		case sim < 0 && art < 0:
			return Partly, mag, "the direction holds; in a closed loop half a tick of waiting per contended acquisition costs far more than 23.7%"
		}
		return Contradicted, mag, "WFI does not lower the throughput here"
	},
	"arm-table-power": func(r *runs) (Verdict, string, string) {
		pE, pI := r.mean("rk-main", "wfe", 0, "power_mw"), r.mean("rk-main", "wfi", 0, "power_mw")
		tE, tI := r.mean("rk-main", "wfe", 0, "throughput_ops_s"), r.mean("rk-main", "wfi", 0, "throughput_ops_s")
		eE, eI := 1000*pE/tE, 1000*pI/tI // uJ per critical section
		mag := fmt.Sprintf("WFI %+.0f%% power (%s vs %s mW; article %+.1f%%); energy per critical section %s µJ with WFI, %s WFE's %s µJ",
			pct(pI, pE), num(pI), num(pE), pct(r.value("wfi"), r.value("wfe")), num(eI), vs(eI, eE), num(eE))
		if pI > pE {
			return Holds, mag, "WFI draws more power here"
		}
		return Contradicted, mag, "WFE and WFI waiters are both clock-gated, and WFI's long sleeps leave the cores idle more: power falls while energy per operation rises"
	},
	"arm-little": func(r *runs) (Verdict, string, string) {
		cpus := r.param("rk-main", "cores")
		artE := r.value("wfe_ops_s") * r.value("wfe_wait_ms") / 1000
		artI := r.value("wfi_ops_s") * r.value("wfi_wait_ms") / 1000
		simE := r.mean("rk-main", "wfe", 0, "throughput_ops_s") * r.mean("rk-main", "wfe", 0, "avg_lock_wait_ms") / 1000
		simI := r.mean("rk-main", "wfi", 0, "throughput_ops_s") * r.mean("rk-main", "wfi", 0, "avg_lock_wait_ms") / 1000
		mag := fmt.Sprintf("throughput x mean wait = waiting threads: article %s (WFE) and %s (WFI) on %g CPUs; model %s and %s",
			num(artE), num(artI), cpus, num(simE), num(simI))
		why := "assuming every operation takes the lock once, so the throughput is the acquisition rate (Little's law)"
		if artE <= cpus && artI <= cpus {
			return Holds, mag, "the article's figures fit its CPUs, " + why
		}
		return Contradicted, mag, "the article's wait and throughput cannot both describe one run, " + why + "; the simulated runs fit"
	},
	"arm-irqsave": func(r *runs) (Verdict, string, string) {
		ops := r.mean("rk-main", "wfe", 0, "expected_counter")
		lost := ops - r.mean("rk-main", "wfe", 0, "counter")
		dl := deadlock(r.failure("rk-spin-lock", "wfe", 0))
		mag := fmt.Sprintf("with spin_lock_irqsave %s critical sections a run, %g lost; with spin_lock the run stops in a deadlock", num(ops), lost)
		switch {
		case dl != "" && lost == 0:
			return Holds, mag, dl
		case dl == "":
			return Contradicted, "with spin_lock the run completes", "no deadlock: the handler never met its own CPU's lock"
		}
		return Partly, mag, dl
	},
	"arm-unlock-sev": func(r *runs) (Verdict, string, string) {
		w := func(lock, lose int) float64 { return sevWait(r, lock, lose) }
		q, t32, t64, lost32, lostQ, lost64 := w(0, 0), w(1, 0), w(4, 0), w(1, 1), w(0, 1), w(4, 1)
		mag := fmt.Sprintf("mean wait without SEV: arm64 qspinlock %s µs, arm64 ticket %s µs; arm32 ticket with its SEV %s µs, with every SEV lost %s µs (%s); arm64 locks with every SEV lost (same seeds): %s and %s µs",
			num(q), num(t64), num(t32), num(lost32), vs(lost32, t32), num(lostQ), num(lost64))
		noSEV := q <= 1.1*t32 && t64 <= 1.1*t32
		plain := lost32 >= 2*t32
		switch {
		case noSEV && plain:
			return Partly, mag, "an SEV is needed only by waiters in a plain WFE (arm32); arm64's waiters arm the exclusive monitor with LDXR, and the releasing store wakes them"
		case plain:
			return Holds, mag, "waiting without an SEV is slower for every lock here"
		case noSEV:
			return Contradicted, mag, "no lock here needs the SEV"
		}
		return Partly, mag, "the arm64 locks wait longer without an SEV, and the arm32 lock does not need its own"
	},
	"arm-adaptive": func(r *runs) (Verdict, string, string) {
		pA, pR, pW := r.mean("rk-main", "adaptive", 0, "power_mw"), r.mean("rk-main", "relax", 0, "power_mw"), r.mean("rk-main", "wfe", 0, "power_mw")
		wA, wW := 1000*r.mean("rk-main", "adaptive", 0, "avg_lock_wait_ms"), 1000*r.mean("rk-main", "wfe", 0, "avg_lock_wait_ms")
		mag := fmt.Sprintf("power: adaptive %s mW, busy polling %s mW, WFE %s mW; mean wait adaptive %s µs, WFE %s µs (%s)", num(pA), num(pR), num(pW), num(wA), num(wW), vs(wA, wW))
		switch {
		case pA < pR && wA >= 0.9*wW:
			return Partly, mag, "WFE saves power against polling, but the spin phase buys no latency: WFE already wakes one line transfer after the release"
		case pA < pR:
			return Holds, mag, "the spin phase shortens the wait and WFE saves power"
		}
		return Contradicted, mag, "adaptive does not draw less power than polling"
	},
	"arm-wfet": func(r *runs) (Verdict, string, string) {
		pt := func(es int, lw float64) int { return r.point("rk-wfet", "event_stream", es, "lose_wake", lw) }
		w := func(v string, es int, lw float64) float64 {
			return 1000 * r.mean("rk-wfet", v, pt(es, lw), "avg_lock_wait_ms")
		}
		d, t := w("wfe", 1, 0), w("wfet", 1, 0)
		hang := deadlock(r.failure("rk-wfet", "wfe", pt(0, 0.1)))
		tOff := w("wfet", 0, 0.1)
		eOn, tOn := w("wfe", 1, 0.1), w("wfet", 1, 0.1)
		timeout, stream := r.param("rk-wfet", "wfet_us"), rk3399.EventStreamPeriod.Micros()
		fate := "WFE completes"
		if hang != "" {
			fate = "WFE hangs"
		}
		mag := fmt.Sprintf("defaults: WFET %s µs, WFE %s µs; 10%% of wake-ups lost, no event stream: %s, WFET waits %s µs; with the stream: WFE %s µs, WFET %s µs (%+.0f%%; timeout %g µs, stream period %s µs)",
			num(t), num(d), fate, num(tOff), num(eOn), num(tOn), pct(tOn, eOn), timeout, num(stream))
		switch {
		case t > 1.1*d:
			return Contradicted, mag, "WFET makes the lossless wait longer"
		case hang != "" && tOn < 0.9*eOn:
			return Partly, mag, fmt.Sprintf("WFET helps only when wake-ups are lost: without the event stream it turns a hang into a bounded delay; with the stream, on by default on arm64 Linux, a lost wake-up's sleep is already bounded by the stream's %s µs period, and WFET's shorter %g µs timeout cuts the mean wait by %.0f%%; with no wake-up lost it changes nothing (the release wakes WFE); and the RK3399 (ARMv8.0) has no WFET",
				num(stream), timeout, -pct(tOn, eOn))
		case hang != "":
			return Partly, mag, fmt.Sprintf("the timeout matters only where nothing else bounds a WFE sleep: with the event stream, on by default on arm64 Linux, WFET changes the mean wait by %+.0f%% even with lost wake-ups; and the RK3399 (ARMv8.0) has no WFET", pct(tOn, eOn))
		}
		return Partly, mag, "WFET changes little here"
	},
	"arm-lost-sev": func(r *runs) (Verdict, string, string) {
		pt := func(es, rs int) int { return r.point("rk-lost-sev", "event_stream", es, "redundant_sev", rs) }
		on0, on1 := 1000*r.mean("rk-lost-sev", "wfe", pt(1, 0), "avg_lock_wait_ms"), 1000*r.mean("rk-lost-sev", "wfe", pt(1, 1), "avg_lock_wait_ms")
		hang0, hang1 := deadlock(r.failure("rk-lost-sev", "wfe", pt(0, 0))), deadlock(r.failure("rk-lost-sev", "wfe", pt(0, 1)))
		sev := func(lock, lose int) float64 { return sevWait(r, lock, lose) }
		clean := sev(1, 0)
		off := "completes"
		switch {
		case hang0 != "" && hang1 != "":
			off = "hangs with and without it"
		case hang0 != "":
			off = "hangs without it, completes with it"
		}
		mag := fmt.Sprintf("arm32 ticket lock, %.0f%% of SEVs lost: mean wait %s µs (%s the lossless %s µs), %s µs with the redundant SEV (%.0f%% less); without the event stream the run %s; the arm64 locks' waits with every SEV lost: %s and %s µs (lossless %s and %s)",
			100*r.param("rk-lost-sev", "lose_sev"), num(on0), vs(on0, clean), num(clean), num(on1), -pct(on1, on0), off, num(sev(0, 1)), num(sev(4, 1)), num(sev(0, 0)), num(sev(4, 0)))
		switch {
		case on1 < on0 && hang1 == "":
			return Holds, mag, "the redundant SEV recovers most lost wake-ups"
		case on1 < on0:
			return Partly, mag, "a second SEV is lost with the same probability, so it makes a lost wake-up rarer, not impossible: with the event stream (arm64 Linux's default) a lost one costs the next stream tick, without it a hang still comes; arm64 locks send no SEV, so a lost SEV cannot touch them"
		}
		return Contradicted, mag, "the redundant SEV does not help"
	},
	"arm-queued": func(r *runs) (Verdict, string, string) {
		thr := func(cores int) spread {
			p := r.point("scaling", "cores", cores)
			return r.ratio(at{"scaling", "qspinlock", p, "throughput_ops_s"}, at{"scaling", "ticket", p, "throughput_ops_s"})
		}
		q4, q16 := thr(4), thr(16)
		mag := fmt.Sprintf("throughput qspinlock/ticket at 4 cores %s (%s), at 16 cores %s (%s)", num(q4.Value), q4.interval(), num(q16.Value), q16.interval())
		switch {
		case q16.straddles(1):
			return unresolved(q16, "qspinlock's throughput over the ticket lock's at 16 cores", "scaling", mag)
		case q16.Value > 1 && q4.straddles(1):
			return unresolved(q4, "qspinlock's throughput over the ticket lock's at 4 cores", "scaling", mag)
		case q16.Value > 1 && q4.Value >= 1:
			return Holds, mag, "queued waiters spin on their own line; a ticket lock's every waiter re-reads the owner's line after each release"
		case q16.Value > 1:
			ho := func(v string, cores int) string {
				return num(r.mean("scaling", v, r.point("scaling", "cores", cores), "handoff_ns"))
			}
			return Partly, mag, fmt.Sprintf("with many waiters: from 4 to 16 cores the ticket lock's hand-off grows with its waiters, from %s to %s ns, the queued lock's from %s to %s ns; with few (4 cores, the article's system) the ticket lock, with no further write per hand-off, is faster",
				ho("ticket", 4), ho("ticket", 16), ho("qspinlock", 4), ho("qspinlock", 16))
		}
		return Contradicted, mag, "the ticket lock keeps up at 16 cores"
	},
	"arm-tiered": func(r *runs) (Verdict, string, string) {
		lo, hi := r.point("rk-tiered", "wfe_limit", 10), r.point("rk-tiered", "wfe_limit", 2)
		m := func(v string, pt int, k string) float64 { return r.mean("rk-tiered", v, pt, k) }
		calls10 := m("tiered", lo, "schedules")
		calls := m("tiered", hi, "schedules") / (r.param("rk-tiered", "duration_ms") / 1000)
		thrA, thrT := m("adaptive", hi, "throughput_ops_s"), m("tiered", hi, "throughput_ops_s")
		eA, eT := 1000*m("adaptive", hi, "power_mw")/thrA, 1000*m("tiered", hi, "power_mw")/thrT
		wA, wT := m("adaptive", hi, "avg_lock_wait_ms"), m("tiered", hi, "avg_lock_wait_ms")
		mag := fmt.Sprintf("wfe_limit 10: %g schedule() calls; wfe_limit 2: %s calls/s, mean wait %s ms (%s adaptive's), throughput %s, power %s mW (adaptive %s), energy per operation %s µJ (%s adaptive's)",
			calls10, num(calls), num(wT), vs(wT, wA), vs(thrT, thrA), num(m("tiered", hi, "power_mw")), num(m("adaptive", hi, "power_mw")), num(eT), vs(eT, eA))
		switch {
		case eT < eA && thrT >= 0.9*thrA:
			return Holds, mag, "sleeping saves energy at little cost here"
		case calls > 0 && eT > eA && thrT < 0.9*thrA:
			return Contradicted, mag, "each schedule() costs two context switches, a wake-up IPI and, once the CPU idles, the deep idle state's exit (250 µs): sleeping waiters convoy behind each other, so power falls only because little work gets done; and Linux lets no spinlock waiter schedule() at all (spin_lock disables preemption: \"scheduling while atomic\"), so this tier exists only in sleeping locks"
		}
		return Partly, mag, "the schedule() tier trades throughput for power"
	},
	"arm-pools": func(r *runs) (Verdict, string, string) {
		wG, wC := 1000*r.mean("split", "global", 0, "avg_lock_wait_ms"), 1000*r.mean("split", "percluster", 0, "avg_lock_wait_ms")
		cG, cC := r.mean("split", "global", 0, "contended_pct"), r.mean("split", "percluster", 0, "contended_pct")
		mag := fmt.Sprintf("one lock per cluster: mean wait %s µs (%s the global lock's %s µs), contended acquisitions %s%% vs %s%%", num(wC), vs(wC, wG), num(wG), num(cC), num(cG))
		if wC < wG && cC < cG {
			return Holds, mag, "each cluster's lock line stays in its cluster, and fewer threads share each lock"
		}
		return Contradicted, mag, "per-cluster locks do not cut the wait"
	},
	"arm-percpu": func(r *runs) (Verdict, string, string) {
		wG, wP := 1000*r.mean("split", "global", 0, "avg_lock_wait_ms"), 1000*r.mean("split", "percpu", 0, "avg_lock_wait_ms")
		cG, cP := r.mean("split", "global", 0, "contended_pct"), r.mean("split", "percpu", 0, "contended_pct")
		mag := fmt.Sprintf("mean wait %s µs per-CPU, %s the global lock's %s µs; contended acquisitions %s%% vs %s%%", num(wP), vs(wP, wG), num(wG), num(cP), num(cG))
		if wG >= 10*wP {
			return Holds, mag, "per-CPU locks are taken only on their CPU (and by its handler, which cannot interrupt a holder masked by irqsave)"
		}
		return Partly, mag, "the per-CPU locks cut the wait by less than 10x"
	},
	"arm-5g-latency": func(r *runs) (Verdict, string, string) {
		gw, g, pc := r.mean("split", "global-wfi", 0, "max_lock_wait_ms"), r.mean("split", "global", 0, "max_lock_wait_ms"), r.mean("split", "percpu", 0, "max_lock_wait_ms")
		art := r.value("before_ms") / r.value("after_ms")
		q := r.ratio(at{"split", "global-wfi", 0, "max_lock_wait_ms"}, at{"split", "percpu", 0, "max_lock_wait_ms"})
		mag := fmt.Sprintf("worst lock wait %s (global lock, WFI) → %s (per-CPU, WFE): %sx less (%s), article %g → %g ms (%sx); WFE alone: %s (%sx), the split then %sx more",
			labkit.Quantity(gw, "ms"), labkit.Quantity(pc, "ms"), num(gw/pc), q.interval(), r.value("before_ms"), r.value("after_ms"), num(art), labkit.Quantity(g, "ms"), num(gw/g), num(g/pc))
		switch {
		case q.straddles(1):
			return unresolved(q, "the worst wait before over after", "split", mag)
		case gw > pc:
			// The article's figures are a 5G baseband's end-to-end latency
			// (its reference row's scope): only the direction compares.
			why := "the split and WFE cut the worst lock wait, as the article's fix cut its worst latency; the sizes are not comparable: the article's 3.2 and 0.4 ms are a 5G baseband's worst end-to-end latency, the model's the worst lock wait"
			if r.mean("split", "percpu", 0, "contended_pct") == 0 {
				why += fmt.Sprintf(". No acquisition with per-CPU locks waits for another CPU (0%% contended), and their worst wait, %s, is one access to the lock word that misses in the cache (the line's first fill from DRAM, an assumed latency): the size of the model's cut follows that latency, not a shorter wait", labkit.Quantity(pc, "ms"))
			}
			return Holds, mag, why
		}
		return Contradicted, mag, "the split does not cut the worst case"
	},
	"arm-5g-power": func(r *runs) (Verdict, string, string) {
		pB, pA := r.mean("split", "global-wfi", 0, "power_mw"), r.mean("split", "percpu", 0, "power_mw")
		tB, tA := r.mean("split", "global-wfi", 0, "throughput_ops_s"), r.mean("split", "percpu", 0, "throughput_ops_s")
		ch := pct(pA, pB)
		mag := fmt.Sprintf("power %+.0f%% (%s → %s mW; article -%g%%) while the work done rises %sx; energy per critical section %+.0f%%",
			ch, num(pB), num(pA), r.value("saving_pct"), num(tA/tB), pct(pA/tA, pB/tB))
		switch {
		case ch <= -5 && ch >= -30:
			return Holds, mag, "the fix saves power of the article's size"
		case ch > 0:
			return Contradicted, mag, "waiting in WFI is clock-gated and cheap; the fixed system draws more because it works more, and what it saves is energy per operation"
		}
		return Partly, mag, "power falls, by another amount"
	},
}

// sevWait is the mean WFE lock wait (us) of lock (the rk3399 lock code) with
// no SEV lost (lose 0) or every SEV lost (lose 1); the two runs share seeds.
func sevWait(r *runs, lock, lose int) float64 {
	run := "rk-sev"
	if lose == 1 {
		run = "rk-sev-lost"
	}
	return 1000 * r.mean(run, "wfe", r.point(run, "lock", lock), "avg_lock_wait_ms")
}

// handOffRuns are the ledger's runs of the core-to-core checks
// labkit.HandOffChecks, each with its check: the same experiment, variant
// and settings, so the same results as notebook 05's. The first is the
// RK3399's A72 pair (labkit.HandOffPair).
var handOffRuns = []struct{ run, check string }{
	{"c2c-pair", labkit.HandOffPair},
	{"c2c-rpi4", "c2c-a72-cluster-rpi4"},
	{"c2c-cross", "c2c-cross-cluster-lx2160a"},
}

// handOffCaveat is the caveat of a verdict resting on cache-line hand-off
// times: the model charges a store to a line another core also holds as a
// full transfer, which puts its bare LL/SC core-to-core hops (two
// transfers) this far from the published figures (notebook 05, section 2),
// in the words every notebook uses (labkit.HandOffText).
func handOffCaveat(r *runs) string {
	cs := labkit.Checks()
	var vs []labkit.Verdict
	for _, h := range handOffRuns {
		c := cs[slices.IndexFunc(cs, func(c labkit.Check) bool { return c.ID == h.check })]
		vs = append(vs, c.Judge(r.mean(h.run, c.Variant, 0, c.Metric)))
	}
	pair := handOffRuns[0]
	transfers := r.mean(pair.run, vs[0].Variant, 0, "transfers_per_hop")
	return fmt.Sprintf("it rests on cache-line hand-off times, which the model may make too slow (notebook 05, section 2): it charges a store to a line another core also holds, such as a qspinlock waiter's claim of the lock word it has just read, as a full line transfer, which makes a bare LL/SC core-to-core hop %s line transfers, %s",
		num(transfers), labkit.HandOffText(vs))
}
