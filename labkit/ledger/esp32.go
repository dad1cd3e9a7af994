package ledger

import (
	"fmt"
	"math"
	"strings"
)

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
			return Contradicted, mag, "every hand-off of the handshake wakes the other task through a crosscore interrupt and a context switch, while the mutex's waiter spins on the queue's lock and rarely blocks"
		}
		return Partly, mag, "notify is faster, by another margin"
	},
	"esp-table-cpu": func(r *runs) (Verdict, string, string) {
		mu, no := r.mean("esp-main", "mutex", 0, "cpu_core0_pct"), r.mean("esp-main", "notify", 0, "cpu_core0_pct")
		mag := fmt.Sprintf("core 0: mutex %s%%, notify %s%% (article %g%% and %g%%)", num(mu), num(no), r.value("mutex"), r.value("notify"))
		switch {
		case no >= mu:
			return Contradicted, mag, "notify does not use less CPU"
		case math.Abs(mu-r.value("mutex")) <= 10 && math.Abs(no-r.value("notify")) <= 10:
			return Holds, mag, "notify leaves the cores idle more, by the article's amounts"
		}
		return Partly, mag, "notify's cores idle more, but the mutex's waiter spins on the queue's portMUX the whole time, which the run-time stats count as CPU use"
	},
	"esp-table-irq": func(r *runs) (Verdict, string, string) {
		mu, no := r.mean("esp-main", "mutex", 0, "max_irq_latency_us"), r.mean("esp-main", "notify", 0, "max_irq_latency_us")
		mag := fmt.Sprintf("max latency of the 1 kHz interrupt on core 0: notify %s us, mutex %s us (article %g and %g us)", num(no), num(mu), r.value("notify"), r.value("mutex"))
		if no < mu {
			return Holds, mag, "notify masks interrupts for less time"
		}
		return Contradicted, mag, "the handshake's context switches and crosscore interrupts run with interrupts masked, longer than the mutex's short kernel sections"
	},
	"esp-kernel-spin": func(r *runs) (Verdict, string, string) {
		spin := func(v string) float64 {
			core := 2 * 1000 * r.mean("esp-main", v, 0, "total_ms") // both cores, us
			return 100 * (r.mean("esp-main", v, 0, "kernel_lock_spin_us") + r.mean("esp-main", v, 0, "object_lock_spin_us")) / core
		}
		sM, sN := spin("mutex"), spin("notify")
		tM, tN := r.mean("esp-main", "mutex", 0, "ns_per_op"), r.mean("esp-main", "notify", 0, "ns_per_op")
		mag := fmt.Sprintf("share of both cores' time spinning on a lock: mutex %s%%, notify %s%%; time per task iteration notify %s mutex", num(sM), num(sN), vs(tN, tM))
		switch {
		case sM > sN && tN < tM:
			return Holds, mag, "the mutex spins and notify, which spins less, is faster"
		case sM > sN:
			return Partly, mag, "the mutex's waiter does spin on the queue's lock, but avoiding that spin does not make the handshake faster: it pays a crosscore interrupt and context switches instead"
		}
		return Contradicted, mag, "the mutex spins no more than notify"
	},
	"esp-notify-atomic": func(r *runs) (Verdict, string, string) {
		no, cr := r.mean("esp-main", "notify", 0, "ns_per_op"), r.mean("esp-main", "critical", 0, "ns_per_op")
		kls := 1000 * r.mean("esp-main", "notify", 0, "kernel_lock_spin_us") / r.mean("esp-main", "notify", 0, "expected_counter")
		mag := fmt.Sprintf("notify's path %s ns per task iteration, %s the bare portMUX critical section (%s ns); %s ns per increment spinning on xKernelLock", num(no), vs(no, cr), num(cr), num(kls))
		switch {
		case no > 5*cr:
			return Contradicted, mag, "xTaskNotifyGive and ulTaskNotifyTake run their TCB updates inside taskENTER_CRITICAL(&xKernelLock), not as lone S32C1I atomics, and a hand-off to a blocked task adds a crosscore interrupt and a context switch"
		case no <= 2*cr:
			return Holds, mag, "notify costs about as much as a bare spinlock pair"
		}
		return Partly, mag, "notify costs a few spinlock pairs"
	},
	"esp-notify-ipi": func(r *runs) (Verdict, string, string) {
		n := r.mean("esp-main", "notify", 0, "expected_counter")
		ipis, sw := r.mean("esp-main", "notify", 0, "ipis")/n, r.mean("esp-main", "notify", 0, "context_switches")/n
		mag := fmt.Sprintf("per increment of the handshake: %.2f crosscore interrupts, %.2f context switches", ipis, sw)
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
		var parts []string
		for _, v := range []string{"mutex", "notify"} {
			a, b := r.mean("esp-align", v, r.point("esp-align", "align_bytes", 8), "ns_per_op"), r.mean("esp-align", v, r.point("esp-align", "align_bytes", 64), "ns_per_op")
			worst = math.Max(worst, math.Abs(pct(b, a)))
			parts = append(parts, fmt.Sprintf("%s %+.2f%%", v, pct(b, a)))
		}
		mag := "64-byte against 8-byte alignment, time per task iteration: " + strings.Join(parts, ", ")
		switch {
		case worst <= 2:
			return Contradicted, mag, "internal SRAM has no data cache in front of it (XCHAL_DCACHE_SIZE 0), so there are no cache lines to ping-pong and alignment has nothing to act on (today's model aligns the counter and the sync object, not the TCB's notification words)"
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
		tenUS := 10 * r.param("esp-cs", "cpu_mhz")
		var below, above []float64
		var parts []string
		for i, pt := range res.Experiment.Points() {
			ratio := r.mean("esp-cs", "notify", i, "ns_per_op") / r.mean("esp-cs", "mutex", i, "ns_per_op")
			parts = append(parts, fmt.Sprintf("%.2f at %g cycles", ratio, pt["cs_cycles"]))
			if pt["cs_cycles"] < tenUS {
				below = append(below, ratio)
			} else {
				above = append(above, ratio)
			}
		}
		t2 := r.mean("esp-tasks", "notify", r.point("esp-tasks", "tasks", 2), "ns_per_op") / r.mean("esp-tasks", "mutex", r.point("esp-tasks", "tasks", 2), "ns_per_op")
		t4 := r.mean("esp-tasks", "notify", r.point("esp-tasks", "tasks", 4), "ns_per_op") / r.mean("esp-tasks", "mutex", r.point("esp-tasks", "tasks", 4), "ns_per_op")
		mag := fmt.Sprintf("notify/mutex time per task iteration: %s (10 us = %g cycles); %.2f with 2 tasks, %.2f with 4", strings.Join(parts, ", "), tenUS, t2, t4)
		wins := func(xs []float64) bool {
			for _, x := range xs {
				if x < 1 {
					return true
				}
			}
			return false
		}
		first, last := below[0], above[len(above)-1]
		switch {
		case !wins(below) && last < first:
			return Contradicted, mag, "notify is never faster below 10 us, and its deficit shrinks as the section grows (the mutex then blocks too and pays the same sleep and wake): the threshold runs the wrong way"
		case !wins(below):
			return Contradicted, mag, "notify is never faster below 10 us"
		case wins(below) && !wins(above) && t2 < 1 && t4 >= 1:
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
		mag := fmt.Sprintf("one core: notify unblocks a task in %s us, a binary semaphore in %s us: %.0f%% faster (FreeRTOS: about %g%%)", num(no), num(bs), faster, r.value("faster_pct"))
		switch {
		case faster >= 30:
			return Holds, mag, "notify's path is much shorter"
		case faster > 0:
			return Partly, mag, "faster, but ESP-IDF's SMP kernel yields to the woken task through a crosscore interrupt to its own core and a context switch on both paths, which dilutes the difference"
		}
		return Contradicted, mag, "notify is not faster on one core"
	},
}
