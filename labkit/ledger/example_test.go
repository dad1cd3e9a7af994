package ledger_test

import (
	"fmt"

	"synclab/labkit/ledger"
)

// The ledger lists every claim of both articles; a claim no run can judge
// says why.
func ExampleLoad() {
	l, err := ledger.Load()
	if err != nil {
		panic(err)
	}
	for _, c := range l.Claims {
		if c.ID == "arm-wfet-isa" {
			fmt.Println(c.Claim)
			fmt.Println("not simulable:", c.NotSimulable)
		}
	}
	// Output:
	// ARMv8.1 adds wfet (WFE with timeout) and wfei (WFE with immediate wake-up).
	// not simulable: a statement about the instruction set, not behaviour; it is wrong: WFET is ARMv8.7 (FEAT_WFxT), and the Arm ARM has no 'wfei' (its wait instructions are WFE, WFI, WFET and WFIT)
}
