package payin

import (
	"database/sql"
	"errors"

	"payd/internal/fault"
)

// Error codes of the payin rules.
const (
	// CodeGSTNotAllowed: gst is for AU merchants in AUD only; a PayID
	// payment request follows the same rule.
	CodeGSTNotAllowed   = "GST_NOT_ALLOWED"
	CodeContactRequired = "CONTACT_REQUIRED"
	CodeKYCRequired     = "KYC_REQUIRED"
	CodeNotRefundable   = "NOT_REFUNDABLE"
	CodeNotCancellable  = "NOT_CANCELLABLE"
	CodeOTPInvalid      = "OTP_INVALID"
)

func notFound(uuid string) error { return fault.NotFoundf("no payin %s", uuid) }

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

func notEnabled(code string) error {
	return fault.Rule(fault.CodeMethodNotEnabled, "%s is not a payin method enabled on this account", code)
}
