package qr

// IDs of the top-level data objects EMVCo MPM defines and payd reads or
// writes, and of the additional data template's objects.
const (
	idPayloadFormat    = "00"
	idInitiation       = "01"
	idMerchantCategory = "52"
	idCurrency         = "53"
	idAmount           = "54"
	idCountry          = "58"
	idMerchantName     = "59"
	idMerchantCity     = "60"
	idPostalCode       = "61"
	idAdditionalData   = "62"
	idCRC              = "63"

	idBillNumber     = "01" // in template 62
	idReferenceLabel = "05" // in template 62
	idTerminalLabel  = "07" // in template 62
	idPurpose        = "08" // in template 62

	// idGUID is the first object of every merchant account information
	// template: the globally unique identifier of the scheme it belongs to.
	idGUID = "00"
)

// payloadFormatV1 is the payload format indicator of EMVCo MPM v1.x.
const payloadFormatV1 = "01"

// ISO 4217 numeric codes of the currencies payd's QR schemes carry in the
// transaction currency field (ID 53).
const (
	CurrencyVND = "704"
	CurrencyIDR = "360"
	CurrencyTHB = "764"
	CurrencyUSD = "840"
	CurrencyKHR = "116"
)

// Initiation is the point of initiation method (ID 01): whether a code is
// shown for every payment or made for one.
type Initiation string

const (
	// InitiationStatic marks a code reused for many payments; the payer
	// usually types the amount.
	InitiationStatic Initiation = "11"
	// InitiationDynamic marks a code made for one payment, with its amount.
	InitiationDynamic Initiation = "12"
)

// AdditionalData holds the objects of the additional data field template
// (ID 62) that payd uses. EMVCo limits each to 25 characters.
type AdditionalData struct {
	BillNumber     string // ID 01: invoice or bill number
	ReferenceLabel string // ID 05: reference that identifies the transaction
	TerminalLabel  string // ID 07: terminal or till
	Purpose        string // ID 08: purpose of transaction, shown to the payer
}

// Payload is a decoded QR payload: its data objects in order, without the
// CRC, which Decode has already checked.
type Payload struct {
	fields []Field
}

// Fields returns the data objects of p in order. The slice shares its
// templates' Sub slices with p, so callers must not modify them.
func (p Payload) Fields() []Field {
	return append([]Field(nil), p.fields...)
}

// Get returns the value of the first data object of p with the given ID, in
// its raw text form for a template.
func (p Payload) Get(id string) (string, bool) {
	for _, f := range p.fields {
		if f.ID == id {
			return f.Value, true
		}
	}
	return "", false
}

// Template returns the nested data objects of the first object of p with the
// given ID. Decode parses the templates EMVCo defines at the top level;
// Template parses any other value on demand, because what lies inside a
// merchant account template is up to its scheme (VietQR nests its
// beneficiary under 38.01, for one). It returns false if there is no such
// object or its value is not a string of data objects.
func (p Payload) Template(id string) (Payload, bool) {
	for _, f := range p.fields {
		if f.ID != id {
			continue
		}
		if len(f.Sub) > 0 {
			return Payload{fields: f.Sub}, true
		}
		sub, err := parseFields(f.Value)
		if err != nil || len(sub) == 0 {
			return Payload{}, false
		}
		return Payload{fields: sub}, true
	}
	return Payload{}, false
}

// value returns the value of the data object with the given ID, or "" if
// there is none; EMVCo values are never empty, so "" means absent.
func (p Payload) value(id string) string {
	v, _ := p.Get(id)
	return v
}

// PayloadFormat returns the payload format indicator (ID 00), "01" for
// EMVCo MPM v1.
func (p Payload) PayloadFormat() string { return p.value(idPayloadFormat) }

// PointOfInitiation returns the point of initiation method (ID 01), or ""
// when absent.
func (p Payload) PointOfInitiation() Initiation { return Initiation(p.value(idInitiation)) }

// MerchantCategoryCode returns the ISO 18245 merchant category code (ID 52),
// or "" when absent.
func (p Payload) MerchantCategoryCode() string { return p.value(idMerchantCategory) }

// Currency returns the ISO 4217 numeric code of the transaction currency
// (ID 53), such as CurrencyVND, or "" when absent.
func (p Payload) Currency() string { return p.value(idCurrency) }

// Amount returns the transaction amount (ID 54) as written, in major units
// with "." as the decimal mark, or "" when the payer is to enter it.
func (p Payload) Amount() string { return p.value(idAmount) }

// CountryCode returns the ISO 3166-1 alpha-2 country code of the merchant
// (ID 58), or "" when absent.
func (p Payload) CountryCode() string { return p.value(idCountry) }

// MerchantName returns the merchant name (ID 59), or "" when absent.
func (p Payload) MerchantName() string { return p.value(idMerchantName) }

// MerchantCity returns the merchant city (ID 60), or "" when absent.
func (p Payload) MerchantCity() string { return p.value(idMerchantCity) }

// PostalCode returns the merchant postal code (ID 61), or "" when absent.
func (p Payload) PostalCode() string { return p.value(idPostalCode) }

// AdditionalData returns the objects of the additional data field template
// (ID 62) that payd uses; those absent are "".
func (p Payload) AdditionalData() AdditionalData {
	t, _ := p.Template(idAdditionalData)
	return AdditionalData{
		BillNumber:     t.value(idBillNumber),
		ReferenceLabel: t.value(idReferenceLabel),
		TerminalLabel:  t.value(idTerminalLabel),
		Purpose:        t.value(idPurpose),
	}
}
