package qr

import (
	"fmt"
	"strings"
)

// QRIS's identifiers, from Bank Indonesia's QRIS standard.
const (
	// qrisGUID is the national GUID, which opens template 51 and, for a
	// merchant whose issuer has no domain of its own, template 26.
	qrisGUID = "ID.CO.QRIS.WWW"
	// qrisAccountTemplate holds the merchant's account with its issuer;
	// qrisNationalTemplate holds the national merchant ID.
	qrisAccountTemplate  = "26"
	qrisNationalTemplate = "51"
	// Objects of template 26.
	idQRISMerchantPAN = "01"
	idQRISMerchantID  = "02"
	idQRISCriteria    = "03"
	// Objects of template 51.
	idQRISNMID = "02"
	// countryID is Indonesia's ISO 3166-1 alpha-2 code.
	countryID = "ID"
	// nmidPrefix starts every national merchant ID.
	nmidPrefix = "ID"
)

// QRISCriteria is the merchant's size class under Bank Indonesia's rules,
// which sets the merchant discount rate.
type QRISCriteria string

// The criteria Bank Indonesia defines.
const (
	QRISMicro  QRISCriteria = "UMI" // usaha mikro
	QRISSmall  QRISCriteria = "UKE" // usaha kecil
	QRISMedium QRISCriteria = "UME" // usaha menengah
	QRISLarge  QRISCriteria = "UBE" // usaha besar
)

// QRISParams is what a dynamic QRIS code says: pay Amount rupiah to the
// merchant, through the issuer named by GUID.
type QRISParams struct {
	// GUID is the issuer's reverse domain in upper case, such as
	// "ID.CO.BANKNAME.WWW"; it defaults to "ID.CO.QRIS.WWW".
	GUID string
	// MerchantPAN is the merchant's primary account number with its
	// issuer, up to 19 digits, starting with the issuer's national
	// number (NNS), such as "936000140000000012".
	MerchantPAN string
	// MerchantID is the merchant's ID with its issuer, up to 15
	// characters.
	MerchantID string
	Criteria   QRISCriteria
	// NMID is the national merchant ID: "ID" and up to 13 digits.
	NMID string
	// MerchantCategoryCode is the 4-digit ISO 18245 code.
	MerchantCategoryCode string
	// MerchantName (up to 25 characters), MerchantCity (up to 15) and
	// PostalCode (up to 10) are as the payer's app shows them.
	MerchantName string
	MerchantCity string
	PostalCode   string
	// Amount is in rupiah, usually whole ("15000"), with at most two
	// decimals.
	Amount         string
	AdditionalData AdditionalData
}

// QRIS returns a dynamic QRIS payload, following Bank Indonesia's QRIS
// standard (QR Code Indonesian Standard, built on EMVCo MPM v1.1): the
// merchant's account with its issuer in template 26 (GUID, merchant PAN,
// merchant ID, criteria), the national merchant ID in template 51 under
// GUID ID.CO.QRIS.WWW (with the criteria repeated, as issued codes do), then
// merchant category, currency 360, amount, country ID, name, city, postal
// code and additional data. Simplified: one merchant account template,
// no tip or convenience fee, and the PAN's check digit is not verified.
func QRIS(p QRISParams) (string, error) {
	if p.GUID == "" {
		p.GUID = qrisGUID
	}
	if err := p.validate(); err != nil {
		return "", fmt.Errorf("build QRIS: %w", err)
	}
	var account fieldList
	account.add(idGUID, p.GUID)
	account.add(idQRISMerchantPAN, p.MerchantPAN)
	account.add(idQRISMerchantID, p.MerchantID)
	account.add(idQRISCriteria, string(p.Criteria))
	var national fieldList
	national.add(idGUID, qrisGUID)
	national.add(idQRISNMID, p.NMID)
	national.add(idQRISCriteria, string(p.Criteria))

	l := dynamicHeader()
	l.addTemplate(qrisAccountTemplate, account)
	l.addTemplate(qrisNationalTemplate, national)
	l.add(idMerchantCategory, p.MerchantCategoryCode)
	l.add(idCurrency, CurrencyIDR)
	l.add(idAmount, p.Amount)
	l.add(idCountry, countryID)
	l.add(idMerchantName, p.MerchantName)
	l.add(idMerchantCity, p.MerchantCity)
	l.add(idPostalCode, p.PostalCode)
	l.addTemplate(idAdditionalData, p.AdditionalData.fields())
	return encodeFor("QRIS", l)
}

// validate checks p, the GUID filled in, in the order of its fields.
func (p QRISParams) validate() error {
	return firstError(
		checkText("GUID", p.GUID, 1, maxGUIDChars),
		checkDigits("MerchantPAN", p.MerchantPAN, 1, 19),
		checkText("MerchantID", p.MerchantID, 1, 15),
		p.Criteria.validate(),
		checkNMID(p.NMID),
		checkDigits("MerchantCategoryCode", p.MerchantCategoryCode, 4, 4),
		checkText("MerchantName", p.MerchantName, 1, maxMerchantName),
		checkText("MerchantCity", p.MerchantCity, 1, maxMerchantCity),
		checkText("PostalCode", p.PostalCode, 1, maxPostalCode),
		checkAmount(p.Amount, 2),
		p.AdditionalData.validate(),
	)
}

// validate requires one of the criteria Bank Indonesia defines.
func (c QRISCriteria) validate() error {
	switch c {
	case QRISMicro, QRISSmall, QRISMedium, QRISLarge:
		return nil
	}
	return &InputError{Field: "Criteria", Reason: fmt.Sprintf("%q is not UMI, UKE, UME or UBE", c)}
}

// checkNMID requires a national merchant ID: "ID" and up to 13 digits.
func checkNMID(nmid string) error {
	digits, ok := strings.CutPrefix(nmid, nmidPrefix)
	if !ok || !isDigits(digits) || len(digits) > 13 {
		return &InputError{Field: "NMID", Reason: fmt.Sprintf("%q is not %q and up to 13 digits", nmid, nmidPrefix)}
	}
	return nil
}
