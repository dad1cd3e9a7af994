package labkit

import (
	"sort"

	"synclab/platforms"
)

// PlatformGroup is the union of the parameters of a platform's experiments.
type PlatformGroup struct {
	Platform    string
	Experiments []string
	Params      platforms.Params
}

// PlatformParams groups the catalog's parameters by platform, sorted by
// platform name; a key shared by several experiments is listed once, as the
// first experiment (by name) defines it.
func PlatformParams() []PlatformGroup {
	var groups []PlatformGroup
	index := map[string]int{}
	for _, e := range Catalog() {
		i, ok := index[e.Platform]
		if !ok {
			i = len(groups)
			index[e.Platform] = i
			groups = append(groups, PlatformGroup{Platform: e.Platform})
		}
		g := &groups[i]
		g.Experiments = append(g.Experiments, e.Name)
		for _, p := range e.Params {
			if _, dup := g.Params.Lookup(p.Key); !dup {
				g.Params = append(g.Params, p)
			}
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].Platform < groups[j].Platform })
	return groups
}
