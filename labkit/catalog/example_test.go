package catalog_test

import (
	"fmt"
	"strings"

	"synclab/labkit/catalog"
)

// The lab command and the notebooks find an experiment by name; what comes
// back is a copy, ready for With or WithVariants and then Run.
func ExampleLookup() {
	exp, err := catalog.Lookup("rk3399-spinlock-wait")
	if err != nil {
		panic(err)
	}
	fmt.Println("platform:", exp.Platform)
	fmt.Println("variants:", strings.Join(exp.VariantNames(), ", "))
	// Output:
	// platform: rk3399
	// variants: wfe, wfi, relax, adaptive, tiered, wfet
}

// A misspelt name is an error that lists every known experiment, so the
// user can pick the right one without reading the code.
func ExampleLookup_unknown() {
	_, err := catalog.Lookup("rk3399-spinlock-wiat")
	msg, known, _ := strings.Cut(err.Error(), "; known: ")
	fmt.Println(msg)
	// The list follows catalog.All, which grows with every platform.
	var names []string
	for _, e := range catalog.All() {
		names = append(names, e.Name)
	}
	fmt.Println("lists all:", known == strings.Join(names, ", "))
	// Output:
	// unknown experiment "rk3399-spinlock-wiat"
	// lists all: true
}
