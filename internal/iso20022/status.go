package iso20022

// Status is a pain.002 status code: a group's (GrpSts), a payment
// information's (PmtInfSts) or a transaction's (TxSts). The values are the
// ISO 20022 external code sets ExternalPaymentGroupStatus1Code and
// ExternalPaymentTransactionStatus1Code; a report carrying any other code is
// refused, since payd could not tell whether it means money left.
type Status string

const (
	StatusReceived                          Status = "RCVD" // received, not yet validated
	StatusAcceptedTechnicalValidation       Status = "ACTC" // syntax and semantics valid
	StatusAcceptedCustomerProfile           Status = "ACCP" // the customer profile check passed
	StatusAcceptedFundsChecked              Status = "ACFC" // funds are available
	StatusAcceptedSettlementInProcess       Status = "ACSP" // accepted for execution
	StatusAcceptedWithChange                Status = "ACWC" // accepted, with a date or other change
	StatusAcceptedWithoutPosting            Status = "ACWP" // accepted, not yet posted
	StatusAcceptedSettlementCompleted       Status = "ACSC" // the debtor's account is debited
	StatusAcceptedCreditSettlementCompleted Status = "ACCC" // the creditor's account is credited
	StatusPartiallyAccepted                 Status = "PART" // some transactions accepted, some not (group, payment)
	StatusPartiallyAcceptedTechnical        Status = "PATC" // partly authorised (group, payment)
	StatusPending                           Status = "PDNG" // further checks to come
	StatusBlocked                           Status = "BLCK" // held, neither paid nor rejected
	StatusCancelled                         Status = "CANC" // cancelled on a cancellation request
	StatusRejected                          Status = "RJCT" // not executed
)

// statuses are the codes ReadPain002 accepts.
var statuses = map[Status]bool{
	StatusReceived: true, StatusAcceptedTechnicalValidation: true, StatusAcceptedCustomerProfile: true,
	StatusAcceptedFundsChecked: true, StatusAcceptedSettlementInProcess: true, StatusAcceptedWithChange: true,
	StatusAcceptedWithoutPosting: true, StatusAcceptedSettlementCompleted: true,
	StatusAcceptedCreditSettlementCompleted: true, StatusPartiallyAccepted: true,
	StatusPartiallyAcceptedTechnical: true, StatusPending: true, StatusBlocked: true, StatusCancelled: true,
	StatusRejected: true,
}

// Outcome is what a status does to the transfers it names (CONTRACT §17,
// §25).
type Outcome string

const (
	// OutcomeNone changes nothing: the transfer stays pending.
	OutcomeNone Outcome = "none"
	// OutcomeDone makes the transfer done: the money has left.
	OutcomeDone Outcome = "done"
	// OutcomeFailed makes the transfer failed: the funds go back.
	OutcomeFailed Outcome = "failed"
)

// Outcome says what s does to a transfer: ACSC and ACCC (settled) make it
// done, RJCT (at the transaction, payment information or group level) makes
// it failed, and every other status (ACSP, PDNG, ACTC, ACWC, PART, …)
// changes nothing. CANC and BLCK change nothing either: payd never asks a
// bank to cancel, so either is for the operator to look into, not a reason
// to give funds back that may have left.
func (s Status) Outcome() Outcome {
	switch s {
	case StatusAcceptedSettlementCompleted, StatusAcceptedCreditSettlementCompleted:
		return OutcomeDone
	case StatusRejected:
		return OutcomeFailed
	}
	return OutcomeNone
}
