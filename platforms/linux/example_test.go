package linux_test

import (
	"context"
	"fmt"

	"synclab/platforms/generic"
	"synclab/platforms/linux"
	"synclab/platforms/rk3399"
	"synclab/sim"
)

// Two CPUs and a device interrupt on cpu0 increment a counter under one
// qspinlock, with a load and a store that another holder would interleave
// if exclusion broke. The threads take the lock with spin_lock_irqsave, as
// Linux requires of a lock that an interrupt handler also takes: with the
// plain Lock, cpu0's handler could spin on the lock its own thread holds.
func ExampleSpinLockIRQSave() {
	// The RK3399's two Cortex-A72, as the lock-scaling experiment builds
	// its parts, booted with the RK3399 model's Linux 5.10 (HZ=250).
	rk, err := rk3399.SoC(rk3399.Defaults())
	if err != nil {
		panic(err)
	}
	soc, err := generic.NCore("a72x2", 2, 2, rk.Clusters[1], rk)
	if err != nil {
		panic(err)
	}
	e := sim.NewEngine(1)
	defer e.Close()
	const base, size = sim.Addr(0x10000), 1 << 16
	cores, mem, err := soc.Build(e, 2, base, size)
	if err != nil {
		panic(err)
	}
	k, err := linux.New(e, cores, mem, base, size, rk3399.Kernel(rk3399.Defaults()))
	if err != nil {
		panic(err)
	}
	lock, err := k.NewSpinlock(linux.QSpinlock, linux.Wait{Mode: linux.WFE, RelaxCycles: 20})
	if err != nil {
		panic(err)
	}
	counter, err := k.Alloc(8)
	if err != nil {
		panic(err)
	}
	// increments is counted in Go, outside the simulated memory.
	increments := 0
	increment := func(p *sim.Proc) {
		flags := linux.SpinLockIRQSave(p, lock)
		v := p.Load(counter)
		p.Delay(sim.Microsecond)
		p.Store(counter, v+1)
		increments++
		linux.SpinUnlockIRQRestore(p, lock, flags)
	}
	if _, err := k.Device("dev", 0, linux.IRQDevice, 20*sim.Microsecond, true, func(p *sim.Proc, _ sim.IRQ) { increment(p) }); err != nil {
		panic(err)
	}
	for i, c := range cores {
		e.Spawn(c, fmt.Sprint("thread", i), func(p *sim.Proc) {
			for range 1000 {
				increment(p)
				p.Delay(sim.Microsecond)
			}
		})
	}
	if err := e.Run(context.Background()); err != nil {
		panic(err)
	}
	// "done": every thread finished, so no CPU deadlocked on the lock.
	fmt.Println("stopped:", e.StopReason())
	fmt.Println("counter:", mem.Peek(counter), "increments:", increments)
	fmt.Println("acquisitions that found the lock taken:", k.CPUs[0].Contentions+k.CPUs[1].Contentions)
	// Output:
	// stopped: done
	// counter: 2181 increments: 2181
	// acquisitions that found the lock taken: 1999
}

// Experiments name wait modes as text (a variant, a -set value); ParseMode
// turns the name into a Mode and refuses an unknown one, listing the
// known names.
func ExampleParseMode() {
	m, err := linux.ParseMode("wfe")
	fmt.Println(m, err)
	_, err = linux.ParseMode("wfx")
	fmt.Println(err)
	// Output:
	// wfe <nil>
	// wait mode "wfx" unknown; known: wfe, wfi, relax, adaptive, tiered, wfet
}
