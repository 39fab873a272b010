package payin

// qrString returns the EMVCo payload of a QR method's payin.
func qrString(m Method, r row) string {
	return ""
}
