package rail

import "testing"

// TestJudge is CONTRACT §25's outcome order: pending to done or failed,
// done to returned; the same outcome again is Same; every other is
// Contrary.
func TestJudge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from State
		v    Verdict
		want Effect
	}{
		{StatePending, Done, Changed},
		{StatePending, Failed, Changed},
		{StatePending, Returned, Contrary},
		{StateDone, Done, Same},
		{StateDone, Failed, Contrary},
		{StateDone, Returned, Changed},
		{StateFailed, Failed, Same},
		{StateFailed, Done, Contrary},
		{StateFailed, Returned, Contrary},
		{StateReturned, Returned, Same},
		{StateReturned, Done, Contrary},
		{StateReturned, Failed, Contrary},
	}
	for _, tt := range tests {
		t.Run(string(tt.from)+" "+string(tt.v), func(t *testing.T) {
			if got := Judge(tt.from, tt.v); got != tt.want {
				t.Errorf("Judge(%s, %s) = %s, want %s", tt.from, tt.v, got, tt.want)
			}
		})
	}
}
