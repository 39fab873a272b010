// Package payfile is a bank payment file's content, whatever its format
// (CONTRACT §17): who pays (the debtor: the operator's account at its bank),
// when (the cut-off that made the file), and the credits, each to one
// beneficiary under the bank reference the bank's reports will name. The
// formats that write it are packages beside it (payfile/aba,
// payfile/zengin, iso20022's pain.001); each also reads its own files back,
// so that a test can check a written file holds exactly its credits.
//
// A File holds only what the file says: everything a format writes comes
// from it, so the same File always makes the same bytes (a cut-off re-run
// after a crash writes the file it wrote before).
package payfile

import (
	"fmt"
	"time"
)

// Format is a payment file's layout.
type Format string

const (
	// ABA is the Australian BECS Direct Entry ("Cemtex") file: 120-character
	// records, CRLF (extension .aba).
	ABA Format = "aba"
	// Pain001 is ISO 20022 pain.001.001.10, customer credit transfer
	// initiation (extension .xml).
	Pain001 Format = "pain001"
	// Zengin is the Japanese 総合振込 file: 120-byte Shift_JIS records in
	// half-width katakana, CRLF (extension .txt).
	Zengin Format = "zengin"
)

// Formats are the formats payd writes, in the order the documents list them.
var Formats = []Format{ABA, Pain001, Zengin}

// Extension is the file name's extension of f (without the dot).
func (f Format) Extension() string {
	switch f {
	case ABA:
		return "aba"
	case Pain001:
		return "xml"
	case Zengin:
		return "txt"
	}
	return ""
}

// Valid reports whether f is one of Formats.
func (f Format) Valid() bool { return f.Extension() != "" }

// File is one payment file: the debtor, the credits, and what names it.
type File struct {
	// Name is the file's name without its extension
	// (payd-{rail}-{YYYYMMDD}-{seq:03}): pain.001's MsgId.
	Name string
	// Reference is the file's reference (16 [A-Z0-9], CONTRACT §25): the ABA
	// balancing record's lodgement reference and pain.001's PmtInfId. A
	// Zengin file is known by its name.
	Reference string
	// CreatedAt is the cut-off's instant (pain.001 CreDtTm), so that a re-run
	// writes the same bytes.
	CreatedAt time.Time
	// Location is the rail's time zone: the processing date (ABA), the
	// requested execution date (pain.001) and 取組日 (Zengin) are CreatedAt's
	// local date there.
	Location *time.Location
	Currency string
	Debtor   Debtor
	Credits  []Credit
}

// Debtor is the account the money leaves: the operator's, as its rail says.
type Debtor struct {
	Name    string
	Account string
	// BSB is the Australian branch, nnn-nnn (ABA, pain.001 in AUD).
	BSB string
	// BIC is a SWIFT code (pain.001).
	BIC string
	// BankCode and BranchCode are the Zengin bank (4 digits) and branch (3
	// digits); BankNameKana and BranchNameKana their half-width katakana
	// names from the directory.
	BankCode, BranchCode         string
	BankNameKana, BranchNameKana string
	// OriginatorID is the bank's id of the payer: the APCA user id (ABA, six
	// digits), pain.001's InitgPty id, Zengin's 依頼人コード (ten digits).
	OriginatorID string
	// BankAbbrev is the ABA descriptive record's bank (three letters, CBA).
	BankAbbrev string
	// AccountType is Zengin's 預金種目 of the debtor account: ordinary or current.
	AccountType AccountType
}

// AccountType is a Japanese deposit account's kind (預金種目).
type AccountType string

const (
	Ordinary AccountType = "ordinary" // 普通, code 1
	Current  AccountType = "current"  // 当座, code 2
)

// Credit is one transfer in a file: money to one beneficiary.
type Credit struct {
	// BankReference names the transfer to the bank and back (CONTRACT §25:
	// 16 [A-Z0-9] on ABA and pain.001, 10 digits on Zengin): the ABA lodgement
	// reference, pain.001's EndToEndId, Zengin's 顧客コード1.
	BankReference string
	// AmountMinor is the amount in the file's currency's minor units.
	AmountMinor int64
	// Name is the beneficiary's name (the account title): upper case for
	// ABA, half-width katakana for Zengin.
	Name string
	// Account is the beneficiary's account number; empty when PayID is set.
	Account string
	// BSB (nnn-nnn) for an Australian account.
	BSB string
	// BIC for an account known by SWIFT code (pain.001).
	BIC string
	// PayID is an NPP PayID (pain.001 CdtrAcct/Prxy/Id), instead of an account.
	PayID string
	// BankCode, BranchCode and their kana names, and AccountType, for a
	// Japanese account (Zengin; pain.001's ClrSysMmbId takes the codes).
	BankCode, BranchCode         string
	BankNameKana, BranchNameKana string
	AccountType                  AccountType
	// Remitter is what the beneficiary's statement shows as who paid (ABA's
	// remitter name: the merchant's name cut to 16).
	Remitter string
	// Description is the remittance information (pain.001 Ustrd).
	Description string
}

// Total is the sum of the credits' amounts.
func (f File) Total() int64 {
	var sum int64
	for _, c := range f.Credits {
		sum += c.AmountMinor
	}
	return sum
}

// FileName is the file's whole name: Name and the format's extension.
func (f File) FileName(format Format) string { return f.Name + "." + format.Extension() }

// FieldError is a format's refusal of a File it cannot hold (an amount over
// its field, a character outside its set, a code of the wrong shape), naming
// the part of the File and the field, so that the rail can say what to fix
// rather than write a file the bank would reject or mangle.
type FieldError struct {
	Format Format
	// Credit is the index of the credit in File.Credits, or -1 when the field
	// is the file's or its debtor's.
	Credit int
	// BankReference is the credit's, when Credit is not -1.
	BankReference string
	// Field is the File's field as Go spells it: Reference, Debtor.BSB, or a
	// Credit's Name, AmountMinor, ….
	Field string
	// Problem says what is wrong, as a predicate: "must be nnn-nnn".
	Problem string
}

func (e *FieldError) Error() string {
	if e.Credit < 0 {
		return fmt.Sprintf("%s file: %s %s", e.Format, e.Field, e.Problem)
	}
	return fmt.Sprintf("%s file: credit %d (%s): %s %s", e.Format, e.Credit, e.BankReference, e.Field, e.Problem)
}
