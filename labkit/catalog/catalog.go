// Package catalog lists every platform's experiments: the lab command and
// the notebooks find them here by name. Adding a platform is one folder
// under platforms/ whose package exports Experiments, plus one line in All.
package catalog

import (
	"fmt"
	"slices"
	"strings"

	"synclab/labkit"
	"synclab/platforms"
	"synclab/platforms/esp32"
	"synclab/platforms/rk3399"
)

// All returns every experiment sorted by name, each with the articles'
// reference numbers (data/reference) when it sets none itself.
func All() []platforms.Experiment {
	var all []platforms.Experiment
	for _, exps := range [][]platforms.Experiment{
		esp32.Experiments(),
		rk3399.Experiments(),
	} {
		all = append(all, exps...)
	}
	for i := range all {
		if len(all[i].Reference) == 0 {
			all[i].Reference = labkit.ReferencesFor(all[i].Name)
		}
	}
	slices.SortFunc(all, func(a, b platforms.Experiment) int { return strings.Compare(a.Name, b.Name) })
	return all
}

// Lookup returns the named experiment of All; an unknown name is an error
// listing the known ones.
func Lookup(name string) (platforms.Experiment, error) { return Find(All(), name) }

// Find returns the experiment of exps with the given name; an unknown name
// is an error listing the names in exps.
func Find(exps []platforms.Experiment, name string) (platforms.Experiment, error) {
	if i := slices.IndexFunc(exps, func(e platforms.Experiment) bool { return e.Name == name }); i >= 0 {
		return exps[i].Clone(), nil
	}
	names := make([]string, len(exps))
	for i, e := range exps {
		names[i] = e.Name
	}
	return platforms.Experiment{}, fmt.Errorf("unknown experiment %q; known: %s", name, strings.Join(names, ", "))
}
