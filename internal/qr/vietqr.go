package qr

import (
	"errors"
	"fmt"
)

// VietQR's identifiers, from NAPAS's VietQR specification.
const (
	// vietQRGUID is NAPAS's application identifier, the GUID (ID 00) of
	// the merchant account template.
	vietQRGUID = "A000000727"
	// vietQRTemplate is the merchant account information template VietQR
	// uses.
	vietQRTemplate = "38"
	// Objects of template 38: the beneficiary organization (itself a
	// template of BIN and account) and the service code.
	idVietQRBeneficiary = "01"
	idVietQRService     = "02"
	// Objects of the beneficiary organization.
	idVietQRBIN     = "00"
	idVietQRAccount = "01"
	// countryVN is Vietnam's ISO 3166-1 alpha-2 code.
	countryVN = "VN"
)

// VietQRService is the NAPAS service code (38.02): what kind of transfer the
// code asks for.
type VietQRService string

const (
	// VietQRToAccount asks for a NAPAS 24/7 transfer to a bank account.
	VietQRToAccount VietQRService = "QRIBFTTA"
	// VietQRToCard asks for a NAPAS 24/7 transfer to a card number.
	VietQRToCard VietQRService = "QRIBFTTC"
)

// ErrNotVietQR means a payload decoded but is not a VietQR transfer code: it
// has no merchant account template with NAPAS's GUID, or that template lacks
// a 6-digit BIN or an account.
var ErrNotVietQR = errors.New("not a VietQR code")

// VietQRParams is what a VietQR code says: pay Amount dong to Account at the
// bank whose NAPAS BIN is BIN.
type VietQRParams struct {
	// BIN is the 6-digit bank identification number NAPAS assigns to the
	// beneficiary's bank, such as "970436" for Vietcombank.
	BIN string
	// Account is the beneficiary's account number, or card number for
	// VietQRToCard: up to 19 digits.
	Account string
	// Service defaults to VietQRToAccount.
	Service VietQRService
	// Amount is in whole dong ("50000"); the dong has no minor unit in
	// use.
	Amount string
	// AdditionalData.Purpose is the transfer description the payer's app
	// fills in, where payd puts the payin reference.
	AdditionalData AdditionalData
}

// VietQR returns a dynamic VietQR payload, following NAPAS's VietQR
// specification for NAPAS 24/7 interbank transfers by QR code, which builds
// on EMVCo MPM v1.1: merchant account template 38 holding GUID A000000727, the
// beneficiary organization (BIN in 01.00, account in 01.01) and the service
// code, then currency 704, the amount, country VN and the additional data.
// As NAPAS's own transfer codes do, it leaves out the merchant category,
// name and city that EMVCo makes mandatory for merchant payments.
// Simplified: account numbers are digits only, though NAPAS allows letters
// for some virtual accounts, and only the transfer services are offered,
// not QRPUSH merchant payments.
func VietQR(p VietQRParams) (string, error) {
	if p.Service == "" {
		p.Service = VietQRToAccount
	}
	if err := p.validate(); err != nil {
		return "", fmt.Errorf("build VietQR: %w", err)
	}
	var beneficiary fieldList
	beneficiary.add(idVietQRBIN, p.BIN)
	beneficiary.add(idVietQRAccount, p.Account)
	var account fieldList
	account.add(idGUID, vietQRGUID)
	account.addTemplate(idVietQRBeneficiary, beneficiary)
	account.add(idVietQRService, string(p.Service))

	l := dynamicHeader()
	l.addTemplate(vietQRTemplate, account)
	l.add(idCurrency, CurrencyVND)
	l.add(idAmount, p.Amount)
	l.add(idCountry, countryVN)
	l.addTemplate(idAdditionalData, p.AdditionalData.fields())
	return encodeFor("VietQR", l)
}

// validate checks p, the service filled in, in the order of its fields.
func (p VietQRParams) validate() error {
	return firstError(
		checkDigits("BIN", p.BIN, 6, 6),
		checkDigits("Account", p.Account, 1, 19),
		p.Service.validate(),
		checkAmount(p.Amount, 0),
		p.AdditionalData.validate(),
	)
}

// validate requires one of the transfer services VietQR builds.
func (s VietQRService) validate() error {
	if s != VietQRToAccount && s != VietQRToCard {
		return &InputError{Field: "Service", Reason: fmt.Sprintf("%q is not %s or %s", s, VietQRToAccount, VietQRToCard)}
	}
	return nil
}

// ParseVietQR decodes a VietQR payload, such as one read from a payer's
// screenshot, and returns its bank BIN, account, service, amount ("" for a
// static code) and additional data, so that payd can look the bank up by
// BIN. It finds NAPAS's template by its GUID in any merchant account
// template (26–51), not only 38, and returns the service code as written,
// which may be one VietQR does not build, such as "QRPUSH". Errors wrap
// Decode's errors or ErrNotVietQR.
func ParseVietQR(payload string) (VietQRParams, error) {
	p, err := Decode(payload)
	if err != nil {
		return VietQRParams{}, fmt.Errorf("parse VietQR: %w", err)
	}
	account, ok := napasAccount(p)
	if !ok {
		return VietQRParams{}, fmt.Errorf("parse VietQR: %w: no merchant account template with GUID %s", ErrNotVietQR, vietQRGUID)
	}
	beneficiary, _ := account.Template(idVietQRBeneficiary)
	bin, number := beneficiary.value(idVietQRBIN), beneficiary.value(idVietQRAccount)
	if len(bin) != 6 || !isDigits(bin) || number == "" {
		return VietQRParams{}, fmt.Errorf("parse VietQR: %w: beneficiary %q lacks a 6-digit BIN or an account", ErrNotVietQR, account.value(idVietQRBeneficiary))
	}
	return VietQRParams{
		BIN:            bin,
		Account:        number,
		Service:        VietQRService(account.value(idVietQRService)),
		Amount:         p.Amount(),
		AdditionalData: p.AdditionalData(),
	}, nil
}

// napasAccount returns the first merchant account information template of
// p whose GUID is NAPAS's.
func napasAccount(p Payload) (Payload, bool) {
	for _, f := range p.fields {
		if len(f.Sub) == 0 || f.ID < "26" || f.ID > "51" {
			continue
		}
		t := Payload{fields: f.Sub}
		if t.value(idGUID) == vietQRGUID {
			return t, true
		}
	}
	return Payload{}, false
}
