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

// PlatformParams groups the parameters of exps (a catalog, sorted by name)
// by platform, sorted by platform name; a key shared by several experiments
// is listed once, as the first experiment defines it.
func PlatformParams(exps []platforms.Experiment) []PlatformGroup {
	var groups []PlatformGroup
	index := map[string]int{}
	for _, e := range exps {
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
