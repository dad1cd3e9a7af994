package rk3399

import (
	"context"
	"math"
	"strings"
	"testing"

	"synclab/platforms"
)

// TestPrfmProbe: a re-read hits (hit_cycles at the reader's clock) when the
// poker's touch left the line shared and costs one transfer at the pair's
// distance when the touch took it. A load never takes it, a store always,
// a prefetch for store only on an A72 with a72_prfm_upgrade=1: never on an
// A53, whatever the setting.
func TestPrfmProbe(t *testing.T) {
	const (
		a72Hit = 4 / 1.8 // ns: hit_cycles 4 at 1800 MHz
		a53Hit = 4 / 1.416
		same   = 100.0 // same_cluster_ns
		cross  = 250.0 // cross_cluster_ns
	)
	for _, tc := range []struct {
		variant, upgrade, poker, reader string
		want                            float64
	}{
		{PokeLoad, "1", "4", "5", a72Hit}, {PokeStore, "0", "4", "5", same},
		{PokePrfm, "0", "4", "5", a72Hit}, {PokePrfm, "1", "4", "5", same},
		{PokePrfm, "0", "0", "1", a53Hit}, {PokePrfm, "1", "0", "1", a53Hit}, {PokeStore, "1", "0", "1", same},
		{PokePrfm, "1", "4", "0", cross}, {PokePrfm, "1", "0", "4", a72Hit},
	} {
		m := runExp(t, prfmProbe(), tc.variant, "a72_prfm_upgrade="+tc.upgrade, "poker_cpu="+tc.poker, "reader_cpu="+tc.reader)
		if got := m["reread_ns"]; math.Abs(got-tc.want) > 0.01*tc.want {
			t.Errorf("%s by cpu%s, read by cpu%s, a72_prfm_upgrade=%s: re-read %.3f ns a line, want %.3f", tc.variant, tc.poker, tc.reader, tc.upgrade, got, tc.want)
		}
	}
	e, _ := prfmProbe().WithSettings("poker_cpu=2", "reader_cpu=2")
	if _, err := e.Run(context.Background(), platforms.RunSpec{Variant: PokePrfm, Params: e.Params.Values(), Seed: 1}); err == nil || !strings.Contains(err.Error(), "poker_cpu = reader_cpu = 2") {
		t.Errorf("one CPU for both: %v", err)
	}
}
