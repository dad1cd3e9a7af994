// Package generic describes an arm64 multi-cluster SoC as plain data (a value
// a user copies and changes: core counts, clocks, OPPs, latencies, idle
// states, event stream) and builds it into a sim engine. platforms/rk3399
// fills it with the RK3399's cited numbers; NCore builds a hypothetical
// N-core part for scaling experiments.
package generic

import (
	"fmt"

	"synclab/platforms"
	"synclab/sim"
)

// OPP is one operating performance point of a cluster (device-tree
// operating-points-v2 entry): a frequency and the voltage it needs.
type OPP struct {
	MHz       int64
	MilliVolt float64
}

// Cluster is a group of identical cores sharing a clock and an L2.
type Cluster struct {
	Name  string // "little", "big"
	Core  string // "Cortex-A53"
	Cores int
	OPPs  []OPP
	// MHz selects the running OPP; it must be one of OPPs.
	MHz int64
	// DynCoeff is the device tree's dynamic-power-coefficient
	// (uW/MHz/V^2): busy power = DynCoeff * V^2 * MHz (energy model).
	DynCoeff float64
	// StaticMW is the leakage of one powered core, drawn whether it
	// executes or is clock-gated in WFE/WFI; power-down idle states cut it.
	StaticMW float64
	// SpinShare scales dynamic power while busy-waiting (a load + yield
	// loop switches fewer gates than general code).
	SpinShare float64
	// Cycle costs of this core type.
	IRQEntry, IRQExit, WakeCycles, HitCycles int64
	// PrefetchUpgrade: a prefetch for store that finds the line shared
	// takes it owned (sim.CoreConfig.PrefetchUpgrade).
	PrefetchUpgrade bool
}

// SoC is a whole part: clusters, coherence latencies, idle states and the
// architected timer's event stream.
type SoC struct {
	Name     string
	Clusters []Cluster
	LineSize int
	// SameCluster and OtherCluster are one-way cache-line transfer
	// latencies by topology distance; DRAM is a fill from memory.
	SameCluster, OtherCluster, DRAM sim.Time
	// Idle are the cpuidle states beyond WFI (device-tree idle-states),
	// shallowest first; their PowerMW is per core.
	Idle []sim.IdleState
	// EventStream is the architected timer's event-stream period (0: off).
	EventStream sim.Time
	// MonitorLoss clears a core's exclusive monitor when another core takes
	// its line for writing, not only when the line is written
	// (sim.Coherence.MonitorLoss).
	MonitorLoss bool
}

// OPP returns the selected operating point of cluster c.
func (c Cluster) OPP() (OPP, error) {
	for _, o := range c.OPPs {
		if o.MHz == c.MHz {
			return o, nil
		}
	}
	mhz := make([]float64, len(c.OPPs))
	for i, o := range c.OPPs {
		mhz[i] = float64(o.MHz)
	}
	return OPP{}, fmt.Errorf("cluster %q: MHz = %d is not an OPP; choose one of %s", c.Name, c.MHz, platforms.FormatValues(mhz))
}

// BusyMW returns the power of one core of c executing at its OPP: the
// energy model's dynamic power plus leakage.
func (c Cluster) BusyMW() (float64, error) {
	o, err := c.OPP()
	if err != nil {
		return 0, err
	}
	v := o.MilliVolt / 1000
	// dynamic-power-coefficient is in uW/MHz/V^2 (Documentation/devicetree/
	// bindings/arm/cpus.yaml); /1000 gives mW.
	return c.DynCoeff*v*v*float64(o.MHz)/1000 + c.StaticMW, nil
}

// Validate reports the first bad field, naming it and its value.
func (s SoC) Validate() error {
	switch {
	case len(s.Clusters) == 0:
		return fmt.Errorf("soc %q: Clusters is empty", s.Name)
	case s.LineSize < 8 || s.LineSize&(s.LineSize-1) != 0:
		return fmt.Errorf("soc %q: LineSize = %d must be a power of two >= 8", s.Name, s.LineSize)
	case s.SameCluster <= 0 || s.OtherCluster <= 0 || s.DRAM <= 0:
		return fmt.Errorf("soc %q: latencies must be > 0 (SameCluster %v, OtherCluster %v, DRAM %v)", s.Name, s.SameCluster, s.OtherCluster, s.DRAM)
	case s.EventStream < 0:
		return fmt.Errorf("soc %q: EventStream = %v must be >= 0 (0 turns it off)", s.Name, s.EventStream)
	}
	n := 0
	for _, c := range s.Clusters {
		switch {
		case c.Cores < 1:
			return fmt.Errorf("soc %q cluster %q: Cores = %d must be >= 1", s.Name, c.Name, c.Cores)
		case c.DynCoeff < 0 || c.StaticMW < 0:
			return fmt.Errorf("soc %q cluster %q: DynCoeff = %g and StaticMW = %g must be >= 0", s.Name, c.Name, c.DynCoeff, c.StaticMW)
		case c.SpinShare < 0 || c.SpinShare > 1:
			return fmt.Errorf("soc %q cluster %q: SpinShare = %g must be in [0, 1]", s.Name, c.Name, c.SpinShare)
		}
		if _, err := c.OPP(); err != nil {
			return fmt.Errorf("soc %q: %w", s.Name, err)
		}
		n += c.Cores
	}
	if n > 64 {
		return fmt.Errorf("soc %q: %d cores; the simulator supports at most 64", s.Name, n)
	}
	return nil
}

// NumCores returns the number of cores of all clusters.
func (s SoC) NumCores() int {
	n := 0
	for _, c := range s.Clusters {
		n += c.Cores
	}
	return n
}

// Clone returns a deep copy that can be changed without touching s.
func (s SoC) Clone() SoC {
	cl := make([]Cluster, len(s.Clusters))
	for i, c := range s.Clusters {
		c.OPPs = append([]OPP(nil), c.OPPs...)
		cl[i] = c
	}
	s.Clusters = cl
	s.Idle = append([]sim.IdleState(nil), s.Idle...)
	return s
}

// CoreConfig returns the sim configuration of one core of cluster ci.
func (s SoC) CoreConfig(ci, index int) (sim.CoreConfig, error) {
	c := s.Clusters[ci]
	busy, err := c.BusyMW()
	if err != nil {
		return sim.CoreConfig{}, err
	}
	o, _ := c.OPP()
	return sim.CoreConfig{
		Name: fmt.Sprintf("cpu%d (%s)", index, c.Core), Cluster: ci, Hz: o.MHz * 1_000_000,
		ExecMW: busy,
		SpinMW: c.StaticMW + (busy-c.StaticMW)*c.SpinShare,
		// WFE and WFI stop the core clock but keep it powered: leakage only.
		WFEMW: c.StaticMW, WFIMW: c.StaticMW,
		Idle:     s.Idle,
		IRQEntry: c.IRQEntry, IRQExit: c.IRQExit, WakeCycles: c.WakeCycles, HitCycles: c.HitCycles,
		PrefetchUpgrade: c.PrefetchUpgrade,
		// One system counter drives every core's event stream, so all
		// cores see its events at the same instants (phase 0).
		EventStream: s.EventStream,
	}, nil
}

// Build adds the first n cores of s (in CPU-number order: cluster by
// cluster) and its memory to e, with one cached region of size bytes at
// base. It returns the cores and the memory.
func (s SoC) Build(e *sim.Engine, n int, base sim.Addr, size uint64) ([]*sim.Core, *sim.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	if n < 1 || n > s.NumCores() {
		return nil, nil, fmt.Errorf("soc %q: cores = %d out of range [1, %d]", s.Name, n, s.NumCores())
	}
	var cores []*sim.Core
	for ci, c := range s.Clusters {
		for k := 0; k < c.Cores && len(cores) < n; k++ {
			cfg, err := s.CoreConfig(ci, len(cores))
			if err != nil {
				return nil, nil, err
			}
			core, err := e.AddCore(cfg)
			if err != nil {
				return nil, nil, err
			}
			cores = append(cores, core)
		}
	}
	m, err := e.NewMemory(sim.Coherence{LineSize: s.LineSize, SameCluster: s.SameCluster, OtherCluster: s.OtherCluster, MonitorLoss: s.MonitorLoss})
	if err != nil {
		return nil, nil, err
	}
	if err := m.AddRegion(sim.Region{Name: "dram", Base: base, Size: size, Latency: s.DRAM}); err != nil {
		return nil, nil, err
	}
	return cores, m, nil
}

// NCore returns a hypothetical SoC of n cores built from one cluster
// template: clusters of perCluster cores (the last may be smaller), so
// scaling runs see in- and cross-cluster transfers as a larger part would.
func NCore(name string, n, perCluster int, tmpl Cluster, base SoC) (SoC, error) {
	if n < 1 || n > 64 {
		return SoC{}, fmt.Errorf("generic soc %q: n = %d out of range [1, 64]", name, n)
	}
	if perCluster < 1 {
		return SoC{}, fmt.Errorf("generic soc %q: perCluster = %d must be >= 1", name, perCluster)
	}
	s := base.Clone()
	s.Name = name
	s.Clusters = nil
	for left, i := n, 0; left > 0; i++ {
		c := tmpl
		c.OPPs = append([]OPP(nil), tmpl.OPPs...)
		c.Name = fmt.Sprintf("%s%d", tmpl.Name, i)
		c.Cores = min(perCluster, left)
		left -= c.Cores
		s.Clusters = append(s.Clusters, c)
	}
	return s, s.Validate()
}
