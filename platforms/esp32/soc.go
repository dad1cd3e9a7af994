package esp32

import (
	"fmt"

	"synclab/sim"
)

// NumCores is the ESP32's core count: PRO_CPU (core 0) and APP_CPU (core 1).
const NumCores = 2

// Interrupt lines used by the model. The ESP32 routes peripheral sources to
// 32 CPU interrupt lines per core; the numbers only order lines of equal level
// (the highest-numbered pending line is dispatched first: see NewSoC).
const (
	IRQTick       sim.IRQ = 6  // internal timer 0 (CCOMPARE0), level 1: the FreeRTOS tick
	IRQCrosscore  sim.IRQ = 10 // FROM_CPU_INTR0/1 routed by esp_crosscore_int_init, level 1
	IRQPeripheral sim.IRQ = 13 // a peripheral (timer group) interrupt at the esp_intr_alloc default level 1
)

// Memory map: internal SRAM as the data bus sees it, and the cached window
// of external PSRAM (ESP32 TRM, "System and Memory", address mapping).
const (
	SRAMBase  sim.Addr = 0x3FFB0000
	SRAMSize           = 0x10000
	PSRAMBase sim.Addr = 0x3F800000
	PSRAMSize          = 0x10000
	// PSRAMLine is the line size of the flash/PSRAM MMU cache (32 bytes).
	PSRAMLine = 32
)

// SoC is the hardware: two LX6 cores, internal SRAM behind one shared port,
// PSRAM behind the cache the two cores share, and the crosscore interrupt
// fabric.
type SoC struct {
	Cfg   Config
	E     *sim.Engine
	Cores [NumCores]*sim.Core
	Mem   *sim.Memory
	// next free SRAM and PSRAM addresses of the allocator
	sramNext, psramNext sim.Addr
	// ipi holds one reusable event per target core: raising an already
	// pending line is a no-op, so a second send before the first lands
	// merges into it, as the DPORT bit does.
	ipi [NumCores]*sim.Event
	// IPIs counts crosscore interrupts sent, self-yields included.
	IPIs int
}

// NewSoC builds the hardware for cfg on engine e.
func NewSoC(e *sim.Engine, cfg Config) (*SoC, error) {
	s := &SoC{Cfg: cfg, E: e, sramNext: SRAMBase, psramNext: PSRAMBase}
	hz := int64(cfg.CPUMHz) * 1_000_000
	for i := range s.Cores {
		c, err := e.AddCore(sim.CoreConfig{
			Name: fmt.Sprintf("cpu%d", i), Cluster: 0, Hz: hz,
			ExecMW: cfg.ExecMW, SpinMW: cfg.ExecMW, WFEMW: cfg.WFIMW, WFIMW: cfg.WFIMW,
			IRQEntry: cfg.IRQEntry, IRQExit: cfg.IRQExit,
			// waiti: the core wakes within a few cycles of the interrupt (ASSUME, folded in irq_entry_cycles)
			WakeCycles: 0, HitCycles: cfg.PSRAMHit, // the only cached data memory is PSRAM
			// The level-1 dispatcher takes the highest-numbered pending
			// interrupt first (CODE: esp-idf v5.1 components/freertos/FreeRTOS-Kernel/portable/xtensa/xtensa_vectors.S,
			// dispatch_c_isr: find_ms_setbit a3, a4, a3, 0).
			HighLineFirst: true,
		})
		if err != nil {
			return nil, err
		}
		s.Cores[i] = c
		target := c
		s.ipi[i] = sim.NewEvent(func() { target.Raise(IRQCrosscore) }, false)
	}
	// The coherence latencies only apply to the cached PSRAM window. A
	// dual-core IDF puts the external-RAM cache in low/high mode (CODE:
	// esp-idf v5.1 components/esp_psram/esp_psram.c, PSRAM_MODE is
	// PSRAM_VADDR_MODE_LOWHIGH unless CONFIG_FREERTOS_UNICORE): "App and
	// pro CPU share external RAM caches: pro CPU has low 2M, app CPU has
	// high 2M", so each line is cached once, in the cache both cores use,
	// and "LOWHIGH and EVENODD do not have these coherency issues"
	// (components/esp_psram/esp_psram_impl.h, psram_vaddr_mode_t). A line
	// the other core touched last is therefore a hit for this one too:
	// only the first touch fills it from PSRAM (the region's latency). A
	// hit through the other CPU's cache costs the core's own hit time
	// (psram_hit_cycles).
	// The granule is one 8-byte word: internal SRAM has no lines at all
	// (a spinner is woken only by a write to its own word, as a real
	// polling loop only sees its own word change), and a shared cache has
	// no false sharing, so the PSRAM cache's 32-byte lines are not
	// modelled as a sharing unit.
	hit := sim.Clock{Hz: hz}.Cycles(cfg.PSRAMHit)
	m, err := e.NewMemory(sim.Coherence{LineSize: 8, SameCluster: hit, OtherCluster: hit})
	if err != nil {
		return nil, err
	}
	if err := m.AddRegion(sim.Region{Name: "sram", Base: SRAMBase, Size: SRAMSize, Uncached: true,
		Latency: cfg.SRAMLatency, Occupancy: cfg.SRAMOccupancy}); err != nil {
		return nil, err
	}
	if err := m.AddRegion(sim.Region{Name: "psram", Base: PSRAMBase, Size: PSRAMSize, Latency: cfg.PSRAMLatency}); err != nil {
		return nil, err
	}
	s.Mem = m
	return s, nil
}

// Alloc reserves size bytes of internal SRAM aligned to align (a power of
// two, at least the 8-byte simulated word) and returns the address: static
// allocation of kernel objects and variables.
func (s *SoC) Alloc(size, align uint64) sim.Addr {
	return s.alloc(&s.sramNext, SRAMBase+SRAMSize, size, align, "SRAM")
}

// SRAMFree returns the bytes of internal SRAM not allocated yet.
func (s *SoC) SRAMFree() uint64 { return uint64(SRAMBase + SRAMSize - s.sramNext) }

// AllocPSRAM is Alloc in external PSRAM (EXT_RAM_BSS_ATTR).
func (s *SoC) AllocPSRAM(size, align uint64) sim.Addr {
	return s.alloc(&s.psramNext, PSRAMBase+PSRAMSize, size, align, "PSRAM")
}

func (s *SoC) alloc(next *sim.Addr, end sim.Addr, size, align uint64, what string) sim.Addr {
	align = max(align, 8)
	a := (*next + sim.Addr(align-1)) &^ sim.Addr(align-1)
	size = max((size+7)&^7, 8)
	if a+sim.Addr(size) > end {
		panic(fmt.Sprintf("esp32: %s exhausted allocating %d bytes", what, size))
	}
	*next = a + sim.Addr(size)
	return a
}

// crosscoreRaise makes the crosscore interrupt pending on target: at once on
// the sender's own core (portYIELD_WITHIN_API's self-interrupt), after the
// fabric latency on the other.
func (s *SoC) crosscoreRaise(p *sim.Proc, target int) {
	s.IPIs++
	if p.Core() == s.Cores[target] {
		s.Cores[target].Raise(IRQCrosscore)
		return
	}
	ev := s.ipi[target]
	if ev.Pending() {
		return // lands no later than a new send would
	}
	s.E.After(s.Cores[target].Cycles(s.Cfg.CrosscoreLatency), ev)
}
