package sim

import "fmt"

// Timer raises an interrupt line on a core at programmed times: a per-core
// tick (periodic), a one-shot timer, or both in turn (NO_HZ reprograms it).
type Timer struct {
	c      *Core
	irq    IRQ
	period Time
	at     Time // next firing, while armed
	ev     *Event
}

// NewTimer returns a stopped timer that raises irq on core c. Periodic
// firings are background events: a tick alone never keeps a run alive.
func (c *Core) NewTimer(irq IRQ) *Timer {
	t := &Timer{c: c, irq: irq}
	t.ev = NewEvent(t.fire, true)
	c.e.timers = append(c.e.timers, t)
	return t
}

func (t *Timer) fire() {
	if t.period > 0 {
		t.at = t.c.e.now + t.period
		t.c.e.At(t.at, t.ev)
	}
	t.c.Raise(t.irq)
}

// Periodic makes the timer fire every period, first at first (a per-core
// phase lets ticks differ between cores).
func (t *Timer) Periodic(period, first Time) error {
	if period <= 0 {
		return fmt.Errorf("timer on core %d: period = %v must be > 0", t.c.ID, period)
	}
	t.period = period
	t.at = max(first, t.c.e.now)
	t.c.e.At(t.at, t.ev)
	return nil
}

// OneShot makes the timer fire once at time at, cancelling any period.
func (t *Timer) OneShot(at Time) {
	t.period = 0
	t.at = max(at, t.c.e.now)
	t.c.e.At(t.at, t.ev)
}

// Stop cancels the timer.
func (t *Timer) Stop() {
	t.period = 0
	t.c.e.Cancel(t.ev)
}

// Next returns when the timer fires next, and whether it is armed.
func (t *Timer) Next() (Time, bool) {
	if !t.ev.Pending() {
		return 0, false
	}
	return t.at, true
}

// snapshot records the timer's programming (its event is in the queue).
func (t *Timer) snapshot(s *Snapshot) {
	s.Time(&t.at)
	s.Key(uint64(t.period))
}

// SendIPI raises irq on core target after latency (an inter-processor or
// cross-core interrupt through the interrupt fabric).
func (p *Proc) SendIPI(target *Core, irq IRQ, latency Time) {
	if latency < 0 {
		p.negative("SendIPI", latency.String())
	}
	p.e.At(p.e.now+latency, NewEvent(func() { target.Raise(irq) }, false))
}

// Device is an external interrupt source: periodic (jitter-free) or with
// exponentially distributed gaps (random arrivals at a mean rate).
type Device struct {
	Name   string
	c      *Core
	irq    IRQ
	mean   Time
	random bool
	stream interface{ ExpFloat64() float64 }
	ev     *Event
	Fired  int
}

// NewDevice attaches a device interrupt to core c on line irq. With random
// false it fires every mean, starting one mean from now; with random true
// the gaps are exponential with that mean, drawn from the device's stream.
// Device interrupts are background events.
func (c *Core) NewDevice(name string, irq IRQ, mean Time, random bool) (*Device, error) {
	if mean <= 0 {
		return nil, fmt.Errorf("device %q: mean period = %v must be > 0", name, mean)
	}
	if irq >= IRQLines {
		return nil, fmt.Errorf("device %q: irq = %d out of range 0..%d", name, irq, IRQLines-1)
	}
	d := &Device{Name: name, c: c, irq: irq, mean: mean, random: random, stream: c.e.Stream("device/" + name)}
	d.ev = NewEvent(d.fire, true)
	c.e.devices = append(c.e.devices, d)
	c.e.At(c.e.now+d.gap(), d.ev)
	return d, nil
}

func (d *Device) gap() Time {
	if !d.random {
		return d.mean
	}
	return max(1, Time(d.stream.ExpFloat64()*float64(d.mean)))
}

func (d *Device) fire() {
	d.Fired++
	d.c.Raise(d.irq)
	d.c.e.At(d.c.e.now+d.gap(), d.ev)
}

// Stop stops the device.
func (d *Device) Stop() { d.c.e.Cancel(d.ev) }

// snapshot records how often the device fired (its event is in the queue,
// its random stream among the engine's).
func (d *Device) snapshot(s *Snapshot) { s.Int(&d.Fired) }
