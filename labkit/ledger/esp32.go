package ledger

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// lockSpin is the share (%) of both cores' time that variant's run of the
// article's experiment spent spinning on xKernelLock and the object's lock.
func lockSpin(r *runs, variant string) float64 {
	core := 2 * 1000 * r.mean("esp-main", variant, 0, "total_ms") // both cores, µs
	return 100 * (r.mean("esp-main", variant, 0, "kernel_lock_spin_us") + r.mean("esp-main", variant, 0, "object_lock_spin_us")) / core
}

// perIncrement is metric of variant's run of the article's experiment per
// guarded increment.
func perIncrement(r *runs, variant, metric string) float64 {
	return r.mean("esp-main", variant, 0, metric) / r.mean("esp-main", variant, 0, "expected_counter")
}

// mutexHandOffs says, from the article's run, how often the mutex changes
// hands and what that costs its waiter. Under IDF v5.1 the waiter blocks
// inside the queue's lock section, and its yield interrupt is taken when
// the section ends; the holder, spinning on that lock meanwhile, gives and
// wakes it first, so the interrupt finds it ready and switches nothing.
func mutexHandOffs(r *runs) string {
	per := func(metric string) float64 { return perIncrement(r, "mutex", metric) }
	h, ipis, sw := per("handoffs"), per("ipis"), per("context_switches")
	s := fmt.Sprintf("the mutex changes hands every %.1f increments, with %.2f crosscore interrupts and %.4f context switches per increment", 1/h, ipis, sw)
	if ipis >= 0.8*h && sw < 0.1*h {
		s += ": at each hand-off the waiter has blocked, and the give wakes it before its yield interrupt can switch it out"
	}
	return s
}

// handshakeHandOffs says, from the article's run, what a hand-off of the
// notify handshake (one per increment, by construction) costs: the give's
// crosscore interrupt switches the waiter's core from its idle task to the
// waiter, and the giver, blocking in its take, yields its own core to its
// idle task through a second one (portYIELD_WITHIN_API).
func handshakeHandOffs(r *runs) string {
	ipis, sw := perIncrement(r, "notify", "ipis"), perIncrement(r, "notify", "context_switches")
	return fmt.Sprintf("every hand-off of the handshake (one per increment) takes %.2f crosscore interrupts and %.2f context switches: "+
		"the give's interrupt switches the waiter's core from its idle task to the waiter, and the giver, blocking in its take, "+
		"yields its own core to its idle task through another", ipis, sw)
}

// esp32Judges judge the ESP32 article's claims (data/claims/claims.json says
// how, in words, beside each claim).
var esp32Judges = map[string]judge{
	"esp-table-time": func(r *runs) (Verdict, string, string) {
		mu, no := r.mean("esp-main", "mutex", 0, "ns_per_op"), r.mean("esp-main", "notify", 0, "ns_per_op")
		ratio := no / mu
		mag := fmt.Sprintf("time per task iteration: notify %s ns, mutex %s ns: notify %s the mutex (article: %s); the article's times are %s and %s the model's",
			num(no), num(mu), vs(no, mu), vs(r.value("notify"), r.value("mutex")), vs(r.value("mutex"), mu), vs(r.value("notify"), no))
		switch {
		case ratio >= 0.65 && ratio <= 0.9:
			return Holds, mag, "the handshake is faster by about the article's margin"
		case ratio > 1:
			return Contradicted, mag, fmt.Sprintf("%s, while %s", handshakeHandOffs(r), mutexHandOffs(r))
		}
		return Partly, mag, "notify is faster, by another margin"
	},
	"esp-table-cpu": func(r *runs) (Verdict, string, string) {
		mu, no := r.mean("esp-main", "mutex", 0, "cpu_core0_pct"), r.mean("esp-main", "notify", 0, "cpu_core0_pct")
		mu1, no1 := r.mean("esp-main", "mutex", 0, "cpu_core1_pct"), r.mean("esp-main", "notify", 0, "cpu_core1_pct")
		mag := fmt.Sprintf("core 0 / core 1: mutex %s / %s%%, notify %s / %s%% (article %g / %g%% and %g / %g%%); notify/mutex on core 0 %.2f (article %.2f)",
			num(mu), num(mu1), num(no), num(no1), r.value("mutex"), r.value("mutex_core1"), r.value("notify"), r.value("notify_core1"), no/mu, r.value("notify")/r.value("mutex"))
		switch {
		case no >= mu:
			return Contradicted, mag, "notify does not use less CPU"
		case math.Abs(mu-r.value("mutex")) <= 10 && math.Abs(no-r.value("notify")) <= 10:
			return Holds, mag, "notify leaves the cores idle more, by the article's amounts"
		}
		sw := perIncrement(r, "mutex", "context_switches")
		if sw >= 0.01 {
			return Partly, mag, fmt.Sprintf("notify's cores idle more, but not by the article's amounts; spinning on the kernel's locks, %s%% of both cores' time with the mutex, counts as CPU use", num(lockSpin(r, "mutex")))
		}
		return Partly, mag, fmt.Sprintf("notify's cores idle more, but the mutex's hardly ever switch to the idle task (%.4f context switches per increment: its waiter is woken before its yield switches it out), and spinning on the kernel's locks, %s%% of both cores' time, counts as CPU use",
			sw, num(lockSpin(r, "mutex")))
	},
	"esp-table-irq": func(r *runs) (Verdict, string, string) {
		mu, no := r.mean("esp-main", "mutex", 0, "max_irq_latency_us"), r.mean("esp-main", "notify", 0, "max_irq_latency_us")
		q := r.ratio(at{"esp-main", "notify", 0, "max_irq_latency_us"}, at{"esp-main", "mutex", 0, "max_irq_latency_us"})
		mag := fmt.Sprintf("max latency of the 1 kHz interrupt on core 0 (each seed's largest, averaged over the seeds): notify %s µs, mutex %s µs: notify %s the mutex's (ratio %s); article %g and %g µs: %s",
			num(no), num(mu), vs(no, mu), q, r.value("notify"), r.value("mutex"), vs(r.value("notify"), r.value("mutex")))
		switch {
		case q.straddles(1):
			return unresolved(q, "notify's over the mutex's", "esp-main", mag)
		case no < mu:
			return Holds, mag, "notify masks interrupts for less time"
		}
		return Contradicted, mag, "the handshake's context switches and crosscore interrupts keep interrupts masked longer than the mutex's kernel sections do"
	},
	"esp-kernel-spin": func(r *runs) (Verdict, string, string) {
		sM, sN := lockSpin(r, "mutex"), lockSpin(r, "notify")
		tM, tN := r.mean("esp-main", "mutex", 0, "ns_per_op"), r.mean("esp-main", "notify", 0, "ns_per_op")
		mag := fmt.Sprintf("share of both cores' time spinning on a lock: mutex %s%%, notify %s%% (mutex %s); time per task iteration notify %s the mutex's", num(sM), num(sN), vs(sM, sN), vs(tN, tM))
		switch {
		case sM > sN && tN < tM:
			return Holds, mag, "the mutex spins and notify, which spins less, is faster"
		case sM > sN:
			return Partly, mag, "the mutex's tasks do spin on the queue's lock and xKernelLock, but avoiding that spin does not make the handshake faster: it pays a crosscore interrupt and context switches instead"
		}
		return Contradicted, mag, "the mutex spins no more than notify"
	},
	"esp-notify-atomic": func(r *runs) (Verdict, string, string) {
		p := func(v, metric string) float64 { return r.mean("esp-paths", v, 0, metric) }
		path, sections := p("notify", "give_take_cycles"), p("notify", "lock_sections")
		spin, atomics := p("notify", "spinlock_cycles"), p("notify", "s32c1i_cycles")
		sem := p("binary-semaphore", "give_take_cycles")
		mag := fmt.Sprintf("uncontended xTaskNotifyGive + ulTaskNotifyTake: %s cycles, %s of them (%.0f%%) in %g xKernelLock sections, whose S32C1I instructions take %s cycles (%.1f%%); "+
			"a binary semaphore's give + take: %s cycles in %g sections (notify %s); a hand-off of the article's handshake: %s ns per task iteration",
			num(path), num(spin), 100*spin/path, sections, num(atomics), 100*atomics/path,
			num(sem), p("binary-semaphore", "lock_sections"), vs(path, sem), num(r.mean("esp-main", "notify", 0, "ns_per_op")))
		switch {
		case sections == 0 || atomics >= path/2:
			return Holds, mag, "the path is its atomic instructions"
		case path <= 0.9*sem:
			return Partly, mag, "cheaper than a semaphore uncontended, but not through S32C1I on TCB fields: the TCB words are plain loads and stores inside taskENTER_CRITICAL(&xKernelLock) sections, whose only atomic is the spinlock's S32C1I"
		}
		return Contradicted, mag, "the TCB words are plain loads and stores inside taskENTER_CRITICAL(&xKernelLock) (tasks.c: one section in xTaskGenericNotify, two in ulTaskGenericNotifyTake), so the spinlock and its interrupt masking, not an S32C1I on the TCB, is most of the path, and uncontended it costs about what a binary semaphore's give and take do"
	},
	"esp-notify-timeout": func(r *runs) (Verdict, string, string) {
		p := func(v, metric string) float64 { return r.mean("esp-paths", v, 0, metric) }
		ticks, hz := r.param("esp-paths", "timeout_ticks"), r.param("esp-paths", "tick_hz")
		ret, waited := p("notify", "timeout_returned"), p("notify", "timeout_ticks_waited")
		mag := fmt.Sprintf("nobody gives: ulTaskNotifyTake(pdTRUE, %g) returned %g after %g ticks (%s ms at %g Hz); xSemaphoreTake(sem, %g) returned %g after %g ticks",
			ticks, ret, waited, num(1000*waited/hz), hz, ticks, p("binary-semaphore", "timeout_returned"), p("binary-semaphore", "timeout_ticks_waited"))
		switch {
		case ret == 0 && waited == ticks:
			return Contradicted, mag, "ulTaskNotifyTake's second argument, xTicksToWait, is a timeout like xSemaphoreTake's: the take gives up after that many ticks and returns 0; pdTRUE is xClearCountOnExit, which only clears the count on the way out"
		case waited > ticks:
			return Holds, mag, "the take blocked past its timeout"
		}
		return Partly, mag, "the take returned, but not as a timeout of xTicksToWait ticks"
	},
	"esp-ram": func(r *runs) (Verdict, string, string) {
		b := func(v string) float64 { return r.mean("esp-main", v, 0, "sync_ram_bytes") }
		mu, no, art := b("mutex"), b("notify"), r.value("semaphore")
		mag := fmt.Sprintf("the mutex's StaticQueue_t %s B (article: about %g B; %s), the binary semaphore's %s B, a portMUX %s B, a notification %s B beyond the TCB",
			num(mu), art, vs(mu, art), num(b("binary-semaphore")), num(b("critical")), num(no))
		switch sem := within(mu, art, 1.25); {
		case sem && no == 0:
			return Holds, mag, "FreeRTOS.h's StaticQueue_t is about the article's figure: IDF v5.1's default configuration gives 84 B (configUSE_QUEUE_SETS adds a pointer to the bare layout's 80 B), and the trace facility, which the run-time statistics behind the article's CPU-use figures need, adds 8 more (92 B); a notification needs no object: its value and state (5 B per index) are in every TCB whether used or not"
		case sem || no == 0:
			return Partly, mag, "one of the two figures holds"
		}
		return Contradicted, mag, "neither figure holds"
	},
	"esp-notify-ipi": func(r *runs) (Verdict, string, string) {
		ipis, sw := perIncrement(r, "notify", "ipis"), perIncrement(r, "notify", "context_switches")
		mag := fmt.Sprintf("per increment of the handshake: %.2f crosscore interrupts, %.2f context switches (one hand-off per increment is the handshake's construction, an input; the interrupts and switches are results)", ipis, sw)
		switch {
		case ipis >= 0.5 && sw < 0.5:
			return Holds, mag, "the interrupt wakes the receiver without a reschedule"
		case ipis >= 0.5:
			return Partly, mag, "each hand-off does need a crosscore interrupt, but in the steady state the receiver has blocked, so the interrupt ends in a context switch: no reschedule is avoided"
		}
		return Contradicted, mag, "the handshake rarely interrupts the other core"
	},
	"esp-align": func(r *runs) (Verdict, string, string) {
		worst := 0.0
		same := true
		var parts []string
		for _, mem := range []struct{ name, at8, at64 string }{{"SRAM", "esp-align8", "esp-align64"}, {"counter in PSRAM", "esp-psram8", "esp-psram64"}} {
			var ps []string
			for _, v := range []string{"mutex", "notify"} {
				a, b := r.mean(mem.at8, v, 0, "ns_per_op"), r.mean(mem.at64, v, 0, "ns_per_op")
				worst = math.Max(worst, math.Abs(pct(b, a)))
				// Seed by seed: equal means alone could be two seeds swapped.
				same = same && slices.Equal(r.values(mem.at8, v, 0, "ns_per_op"), r.values(mem.at64, v, 0, "ns_per_op"))
				ps = append(ps, fmt.Sprintf("%s %+.2f%%", v, pct(b, a)))
			}
			parts = append(parts, mem.name+": "+strings.Join(ps, ", "))
		}
		mag := "64-byte against 8-byte alignment of the counter, the sync object and the notification words, same seeds, time per task iteration: " + strings.Join(parts, "; ")
		if same {
			mag += " (identical to the last bit)"
		}
		mag += fmt.Sprintf("; the counter in PSRAM against SRAM: notify %+.2f%%", pct(r.mean("esp-psram8", "notify", 0, "ns_per_op"), r.mean("esp-align8", "notify", 0, "ns_per_op")))
		if everyHandOffSwitches(r, "esp-psram8", "notify") {
			mag += " (a cost of the run's start, not of each access: the line's one cold fill makes the handshake leave its lock-step at the first hand-off, notebook 01, section 6)"
		}
		switch {
		case worst <= 2:
			return Contradicted, mag, "there is no cache line to ping-pong: internal SRAM, where the TCBs and their notification words live (IDF's FreeRTOS allocates only from internal memory), has no data cache (XCHAL_DCACHE_SIZE 0), and in IDF's dual-core low/high mode each PSRAM line lives in one of the two cores' external-RAM caches (the PRO CPU's holds the low 2 MB, the APP CPU's the high 2 MB) whichever core accesses it, so no line moves between cores; alignment has nothing to act on"
		case worst > 5:
			return Holds, mag, "alignment changes the time"
		}
		return Partly, mag, "alignment moves the time a little"
	},
	"esp-rule": func(r *runs) (Verdict, string, string) {
		res := r.res["esp-cs"]
		if res == nil {
			r.mean("esp-cs", "notify", 0, "ns_per_op") // records the missing run
			return NotSimulated, "", ""
		}
		// ratio is notify's time per task iteration over the mutex's at
		// point i of run name.
		ratio := func(name string, i int) spread {
			return r.ratio(at{name, "notify", i, "ns_per_op"}, at{name, "mutex", i, "ns_per_op"})
		}
		tenUS := 10 * r.param("esp-cs", "cpu_mhz")
		var below, above []spread
		var parts []string
		for i, pt := range res.Experiment.Points() {
			q := ratio("esp-cs", i)
			parts = append(parts, fmt.Sprintf("%.2f at %g cycles", q.Value, pt["cs_cycles"]))
			if pt["cs_cycles"] < tenUS {
				below = append(below, q)
			} else {
				above = append(above, q)
			}
		}
		t2, t4 := ratio("esp-tasks", r.point("esp-tasks", "tasks", 2)), ratio("esp-tasks", r.point("esp-tasks", "tasks", 4))
		wins := func(qs []spread) bool {
			return slices.ContainsFunc(qs, func(q spread) bool { return q.Value < 1 })
		}
		first, last := below[0].Value, above[len(above)-1].Value
		trend := func(from, to float64) string {
			switch {
			case from >= 1 && to >= 1 && to < from:
				return "notify's deficit narrows"
			case from >= 1 && to >= 1:
				return "notify's deficit widens"
			}
			return "notify/mutex crosses 1"
		}
		mag := fmt.Sprintf("notify/mutex time per task iteration: %s (10 µs = %g cycles): %s from %.2fx to %.2fx as the section grows; %.2f with 2 tasks, %.2f with 4: %s; %s",
			strings.Join(parts, ", "), tenUS, trend(first, last), first, last, t2.Value, t4.Value, trend(t2.Value, t4.Value),
			widest(append(append(slices.Clone(below), above...), t2, t4)))
		for i, q := range below {
			if q.straddles(1) {
				return unresolved(q, fmt.Sprintf("notify/mutex at %g cycles", res.Experiment.Points()[i]["cs_cycles"]), "esp-cs", mag)
			}
		}
		// From which section length one task keeps the mutex (fewer than 1
		// hand-off in 100 increments there and at every longer one).
		keeps := ""
		for i, pt := range res.Experiment.Points() {
			switch {
			case r.mean("esp-cs", "mutex", i, "handoffs") >= 0.01*r.mean("esp-cs", "mutex", i, "expected_counter"):
				keeps = ""
			case keeps == "":
				keeps = fmt.Sprintf(", and from %g cycles on one task keeps the mutex: it is not fair, its giver takes it again before the woken waiter runs", pt["cs_cycles"])
			}
		}
		switch {
		case !wins(below) && last < first:
			return Contradicted, mag, "notify is never faster below 10 µs, and its deficit shrinks as the section grows (both serialize the same sections, which dilute the handshake's fixed cost per hand-off" + keeps + "): the threshold runs the wrong way"
		case !wins(below):
			return Contradicted, mag, "notify is never faster below 10 µs"
		}
		for _, q := range above {
			if q.straddles(1) {
				return unresolved(q, "notify/mutex at 10 µs or more", "esp-cs", mag)
			}
		}
		for _, q := range []spread{t2, t4} {
			if q.straddles(1) {
				return unresolved(q, "notify/mutex at 2 or 4 tasks", "esp-tasks", mag)
			}
		}
		if !wins(above) && t2.Value < 1 && t4.Value >= 1 {
			return Holds, mag, "notify wins exactly where the rule says"
		}
		return Partly, mag, "notify wins somewhere, not where the rule puts it"
	},
	"esp-inversion": func(r *runs) (Verdict, string, string) {
		mu, no := r.mean("esp-inversion", "mutex", 0, "high_blocked_us"), r.mean("esp-inversion", "notify", 0, "high_blocked_us")
		bs := r.mean("esp-inversion", "binary-semaphore", 0, "high_blocked_us")
		mag := fmt.Sprintf("the high-priority task blocked %s ms with notify, %s ms with a binary semaphore, %s ms with the mutex (%sx)", num(no/1000), num(bs/1000), num(mu/1000), num(no/mu))
		if no >= 2*mu {
			return Holds, mag, "the mutex lends the holder the waiter's priority, so the medium task cannot preempt it; a notification cannot"
		}
		return Contradicted, mag, "notify blocks the high-priority task no longer"
	},
	"esp-single-core": func(r *runs) (Verdict, string, string) {
		no, bs := r.mean("esp-unblock", "notify", 0, "unblock_us"), r.mean("esp-unblock", "binary-semaphore", 0, "unblock_us")
		faster := -pct(no, bs)
		mag := fmt.Sprintf("one core: notify unblocks a task in %s µs, a binary semaphore in %s µs: %.0f%% faster (FreeRTOS: about %g%%, and 35%% against V8.2.0 and later's binary semaphore)", num(no), num(bs), faster, r.value("faster_pct"))
		switch {
		case faster >= 30:
			return Holds, mag, "notify's path is much shorter"
		case faster > 0:
			return Partly, mag, "faster, but ESP-IDF's SMP kernel yields to the woken task through a crosscore interrupt to its own core and a context switch on both paths, which dilutes the difference"
		}
		return Contradicted, mag, "notify is not faster on one core"
	},
}

// everyHandOffSwitches reports whether every run of variant in run name
// switched context at each hand-off from the first: two per increment,
// with two tasks (section 2 of notebook 01's lock-step start never came).
func everyHandOffSwitches(r *runs, name, variant string) bool {
	sw, n := r.values(name, variant, 0, "context_switches"), r.values(name, variant, 0, "expected_counter")
	if len(sw) == 0 || len(sw) != len(n) || r.param(name, "tasks") != 2 {
		return false
	}
	for i := range sw {
		if sw[i] != 2*n[i] {
			return false
		}
	}
	return true
}
