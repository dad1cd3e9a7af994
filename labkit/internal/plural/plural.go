// Package plural writes counts of things in English: "1 run", "3 runs".
package plural

import "fmt"

// Count writes n things: "1 run", "3 runs" (thing takes an s).
func Count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
