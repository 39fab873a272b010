package iso20022

import "testing"

// TestStatusOutcome checks what each status does to a transfer (CONTRACT
// §17, §25): settled is done, rejected is failed, the rest nothing.
func TestStatusOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status Status
		want   Outcome
	}{
		{StatusAcceptedSettlementCompleted, OutcomeDone},
		{StatusAcceptedCreditSettlementCompleted, OutcomeDone},
		{StatusRejected, OutcomeFailed},
		{StatusAcceptedSettlementInProcess, OutcomeNone},
		{StatusPending, OutcomeNone},
		{StatusReceived, OutcomeNone},
		{StatusAcceptedTechnicalValidation, OutcomeNone},
		{StatusAcceptedCustomerProfile, OutcomeNone},
		{StatusAcceptedFundsChecked, OutcomeNone},
		{StatusAcceptedWithChange, OutcomeNone},
		{StatusAcceptedWithoutPosting, OutcomeNone},
		{StatusPartiallyAccepted, OutcomeNone},
		{StatusPartiallyAcceptedTechnical, OutcomeNone},
		{StatusBlocked, OutcomeNone},
		{StatusCancelled, OutcomeNone},
		{"", OutcomeNone},
	}
	for _, tt := range tests {
		if got := tt.status.Outcome(); got != tt.want {
			t.Errorf("%q.Outcome() = %q, want %q", tt.status, got, tt.want)
		}
	}
	if len(tests)-1 != len(statuses) {
		t.Errorf("%d statuses have an outcome here, ReadPain002 accepts %d", len(tests)-1, len(statuses))
	}
}
