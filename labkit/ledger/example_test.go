package ledger_test

import (
	"fmt"

	"synclab/labkit/ledger"
)

// The ledger lists every claim of both articles; a statement of fact that
// its sources show false needs no run, and says why it is wrong.
func ExampleLoad() {
	l, err := ledger.Load()
	if err != nil {
		panic(err)
	}
	for _, c := range l.Claims {
		if c.ID == "arm-wfet-isa" {
			fmt.Println(c.Claim)
			fmt.Println("wrong:", c.Wrong)
		}
	}
	// Output:
	// ARMv8.1 adds wfet (WFE with timeout) and wfei (WFE with immediate wake-up).
	// wrong: WFET is ARMv8.7 (FEAT_WFxT), not ARMv8.1, and the Arm ARM has no 'wfei' (its wait instructions are WFE, WFI, WFET and WFIT): a statement about the instruction set, which no run needs to judge
}
