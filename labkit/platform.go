package labkit

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"synclab/platforms"
)

// PlatformGroup is the union of the parameters of a platform's experiments.
type PlatformGroup struct {
	Platform    string
	Experiments []string
	Params      platforms.Params
}

// PlatformParams groups the parameters of exps (a catalog, sorted by name)
// by platform, sorted by platform name. A key shared by several experiments
// is listed once, as the first experiment defines it; where experiments
// define it differently (esp32's rounds: give/take pairs in one, round trips
// in another), its description and source say what each experiment's is.
func PlatformParams(exps []platforms.Experiment) []PlatformGroup {
	var groups []PlatformGroup
	index := map[string]int{}
	defs := map[string][]definition{} // by platform/key, distinct definitions in catalog order
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
			k := e.Platform + "/" + p.Key
			defs[k] = addDefinition(defs[k], e.Name, p)
		}
	}
	for i := range groups {
		g := &groups[i]
		for j, p := range g.Params {
			if ds := defs[g.Platform+"/"+p.Key]; len(ds) > 1 {
				g.Params[j] = perExperiment(p, ds)
			}
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].Platform < groups[j].Platform })
	return groups
}

// definition is one way a parameter is defined, with the experiments that
// define it so.
type definition struct {
	exps []string
	p    platforms.Param
}

func addDefinition(ds []definition, exp string, p platforms.Param) []definition {
	for i := range ds {
		if reflect.DeepEqual(ds[i].p, p) {
			ds[i].exps = append(ds[i].exps, exp)
			return ds
		}
	}
	return append(ds, definition{[]string{exp}, p})
}

// perExperiment is p (the first definition) with its description, and its
// source where they differ, given per definition: "esp32-api-paths: 1,000
// rounds, give/take pairs averaged; esp32-pingpong: 2,000 round trips, ...".
func perExperiment(p platforms.Param, ds []definition) platforms.Param {
	var doc, src []string
	sameSource := true
	for _, d := range ds {
		who := strings.Join(d.exps, ", ")
		doc = append(doc, fmt.Sprintf("%s: %s %s, %s", who, Num(d.p.Value), ShowUnit(d.p.Unit), d.p.Doc))
		src = append(src, who+": "+d.p.Source)
		sameSource = sameSource && d.p.Source == p.Source
	}
	p.Doc = "differs by experiment. " + strings.Join(doc, "; ")
	if !sameSource {
		p.Source = strings.Join(src, "; ")
	}
	return p
}
