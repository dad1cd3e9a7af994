package sim

import "testing"

func TestClock(t *testing.T) {
	for _, tc := range []struct {
		hz     int64
		cycles int64
		want   Time
	}{
		{240_000_000, 1, 4167},
		{240_000_000, 240_000_000, Second},
		{1_800_000_000, 9, 5 * Nanosecond},
		{1_800_000_000, 1 << 40, 610839793208889}, // large counts do not overflow
	} {
		if got := (Clock{tc.hz}).Cycles(tc.cycles); got != tc.want {
			t.Errorf("%d cycles at %d Hz = %v ps, want %v", tc.cycles, tc.hz, int64(got), int64(tc.want))
		}
	}
	if got := (Clock{240_000_000}).ToCycles(Second); got != 240_000_000 {
		t.Errorf("ToCycles(1s) = %d", got)
	}
}

func TestTimeString(t *testing.T) {
	for _, tc := range []struct {
		t    Time
		want string
	}{
		{0, "0ns"},
		{4167, "4.167ns"},
		{-2 * Microsecond, "-2us"},
		{1500 * Microsecond, "1.5ms"},
		{999 * Millisecond, "999ms"},
		{Second, "1s"},
		{7200 * Second, "7200s"},
		{1234567 * Second, "1234567s"}, // beyond six digits: whole seconds, no exponent
		{-(1<<63 - 1), "-9223372s"},
	} {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("Time(%d).String() = %q, want %q", int64(tc.t), got, tc.want)
		}
	}
}
