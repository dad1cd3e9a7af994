package plural_test

import (
	"fmt"

	"synclab/labkit/internal/plural"
)

func ExampleCount() {
	for _, n := range []int{0, 1, 2} {
		fmt.Println(plural.Count(n, "run"))
	}
	// Output:
	// 0 runs
	// 1 run
	// 2 runs
}
