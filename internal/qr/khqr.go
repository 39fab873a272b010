package qr

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// KHQR's identifiers, from the National Bank of Cambodia's KHQR
// specification.
const (
	// khqrIndividualTemplate holds an individual's Bakong account;
	// khqrMerchantTemplate a merchant's.
	khqrIndividualTemplate = "29"
	khqrMerchantTemplate   = "30"
	// Objects of templates 29 and 30. Object 01 is the account
	// information of an individual and the merchant ID of a merchant.
	idKHQRBakongAccount = "00"
	idKHQRAccountInfo   = "01"
	idKHQRMerchantID    = "01"
	idKHQRAcquiringBank = "02"
	// khqrTimestampTemplate holds the code's creation and expiry, in Unix
	// milliseconds.
	khqrTimestampTemplate = "99"
	idKHQRCreatedAt       = "00"
	idKHQRExpiresAt       = "01"

	// khqrDefaultCategory is the merchant category the Bakong SDK writes
	// when none is given: 5999, miscellaneous retail.
	khqrDefaultCategory = "5999"
	// maxKHQRAccountChars bounds the objects of templates 29 and 30.
	maxKHQRAccountChars = 32
	// countryKH is Cambodia's ISO 3166-1 alpha-2 code.
	countryKH = "KH"
)

// KHQRParams is what a dynamic KHQR code says: pay Amount in Currency to the
// Bakong account BakongAccountID. With MerchantID set the code is a
// merchant's (template 30), otherwise an individual's (template 29).
type KHQRParams struct {
	// BakongAccountID is the payee's Bakong account, "name@bank", up to
	// 32 characters.
	BakongAccountID string
	// MerchantID makes the code a merchant's; up to 32 characters.
	MerchantID string
	// AccountInformation is an individual's optional account detail, such
	// as an account number; it cannot go with MerchantID.
	AccountInformation string
	// AcquiringBank names the payee's bank; required with MerchantID.
	AcquiringBank string
	// MerchantName (up to 25 characters) and MerchantCity (up to 15, such
	// as "Phnom Penh") are required.
	MerchantName string
	MerchantCity string
	// MerchantCategoryCode is the 4-digit ISO 18245 code; it defaults to
	// 5999, as in the Bakong SDK.
	MerchantCategoryCode string
	// Currency is CurrencyKHR or CurrencyUSD.
	Currency string
	// Amount is in whole riel for KHR, or dollars with at most two
	// decimals for USD, written with exactly two ("5" as "5.00").
	Amount string
	// AdditionalData may carry a bill number, terminal label and purpose;
	// KHQR defines no reference label.
	AdditionalData AdditionalData
	// CreatedAt and ExpiresAt bound the code's validity, to the
	// millisecond. The Bakong SDK requires an expiry on dynamic codes and
	// refuses them once expired.
	CreatedAt time.Time
	ExpiresAt time.Time
}

// KHQR returns a dynamic KHQR payload, following the National Bank of
// Cambodia's KHQR specification (KHQR Content Guideline, built on EMVCo MPM
// v1.1) as its bakong-khqr SDK writes it: the Bakong account in template 29
// (individual: account ID, account information, acquiring bank) or 30
// (merchant: account ID, merchant ID, acquiring bank), merchant category,
// currency 116 or 840, amount, country KH, name, city, additional data, and
// template 99 with the creation (99.00) and expiry (99.01) times in Unix
// milliseconds. Simplified: no alternate-language template (64) and no
// UnionPay account; the additional data's mobile number and store label are
// not offered.
func KHQR(p KHQRParams) (string, error) {
	if p.MerchantCategoryCode == "" {
		p.MerchantCategoryCode = khqrDefaultCategory
	}
	amount, err := p.validate()
	if err != nil {
		return "", fmt.Errorf("build KHQR: %w", err)
	}
	template, account := p.account()
	var timestamps fieldList
	timestamps.add(idKHQRCreatedAt, strconv.FormatInt(p.CreatedAt.UnixMilli(), 10))
	timestamps.add(idKHQRExpiresAt, strconv.FormatInt(p.ExpiresAt.UnixMilli(), 10))

	l := dynamicHeader()
	l.addTemplate(template, account)
	l.add(idMerchantCategory, p.MerchantCategoryCode)
	l.add(idCurrency, p.Currency)
	l.add(idAmount, amount)
	l.add(idCountry, countryKH)
	l.add(idMerchantName, p.MerchantName)
	l.add(idMerchantCity, p.MerchantCity)
	l.addTemplate(idAdditionalData, p.AdditionalData.fields())
	l.addTemplate(khqrTimestampTemplate, timestamps)
	return encodeFor("KHQR", l)
}

// account returns the ID and objects of the account template: 30 for a
// merchant, 29 for an individual.
func (p KHQRParams) account() (string, fieldList) {
	var l fieldList
	l.add(idKHQRBakongAccount, p.BakongAccountID)
	if p.MerchantID != "" {
		l.add(idKHQRMerchantID, p.MerchantID)
		l.add(idKHQRAcquiringBank, p.AcquiringBank)
		return khqrMerchantTemplate, l
	}
	l.add(idKHQRAccountInfo, p.AccountInformation)
	l.add(idKHQRAcquiringBank, p.AcquiringBank)
	return khqrIndividualTemplate, l
}

// validate checks p and returns its amount as KHQR writes it.
func (p KHQRParams) validate() (string, error) {
	err := firstError(
		checkBakongAccount(p.BakongAccountID),
		checkText("MerchantID", p.MerchantID, 0, maxKHQRAccountChars),
		p.checkAccountForm(),
		checkText("MerchantName", p.MerchantName, 1, maxMerchantName),
		checkText("MerchantCity", p.MerchantCity, 1, maxMerchantCity),
		checkDigits("MerchantCategoryCode", p.MerchantCategoryCode, 4, 4),
		p.AdditionalData.validate(),
		checkNoReferenceLabel(p.AdditionalData),
		checkMillis("CreatedAt", p.CreatedAt),
		checkMillis("ExpiresAt", p.ExpiresAt),
		checkExpiry(p.CreatedAt, p.ExpiresAt),
	)
	if err != nil {
		return "", err
	}
	return p.amount()
}

// checkAccountForm requires the account objects of an individual's or a
// merchant's code, each up to 32 characters.
func (p KHQRParams) checkAccountForm() error {
	if p.MerchantID != "" && p.AccountInformation != "" {
		return &InputError{Field: "AccountInformation", Reason: "is for an individual's code, not a merchant's (MerchantID is set)"}
	}
	minBank := 0
	if p.MerchantID != "" {
		minBank = 1
	}
	return firstError(
		checkText("AccountInformation", p.AccountInformation, 0, maxKHQRAccountChars),
		checkText("AcquiringBank", p.AcquiringBank, minBank, maxKHQRAccountChars),
	)
}

// amount returns p's amount as KHQR writes it: whole riel, or dollars with
// two decimals, as the Bakong SDK does.
func (p KHQRParams) amount() (string, error) {
	switch p.Currency {
	case CurrencyKHR:
		return p.Amount, checkAmount(p.Amount, 0)
	case CurrencyUSD:
		return twoDecimals(p.Amount)
	}
	return "", &InputError{Field: "Currency", Reason: fmt.Sprintf("%q is not %s (KHR) or %s (USD)", p.Currency, CurrencyKHR, CurrencyUSD)}
}

// checkBakongAccount requires a Bakong account ID: "name@bank", up to 32
// characters.
func checkBakongAccount(id string) error {
	if err := checkText("BakongAccountID", id, 1, maxKHQRAccountChars); err != nil {
		return err
	}
	name, bank, ok := strings.Cut(id, "@")
	if !ok || name == "" || bank == "" || strings.Contains(bank, "@") {
		return &InputError{Field: "BakongAccountID", Reason: fmt.Sprintf("%q is not of the form name@bank", id)}
	}
	return nil
}

// checkNoReferenceLabel refuses the one additional data object payd models
// that KHQR does not define.
func checkNoReferenceLabel(a AdditionalData) error {
	if a.ReferenceLabel != "" {
		return &InputError{Field: "AdditionalData.ReferenceLabel", Reason: "KHQR has no reference label; use BillNumber"}
	}
	return nil
}

// checkExpiry requires a code to expire after it is made.
func checkExpiry(createdAt, expiresAt time.Time) error {
	if expiresAt.UnixMilli() <= createdAt.UnixMilli() {
		return &InputError{Field: "ExpiresAt", Reason: "is not after CreatedAt"}
	}
	return nil
}
