package iso20022

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"payd/internal/money"
	"payd/internal/statement"
)

// The namespaces of the bank-to-customer messages payd reads (CONTRACT §18,
// §25: only .001.08 among the XML versions).
const (
	NamespaceCamt053 = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"
	NamespaceCamt054 = "urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"
)

// Bounds of the camt reader beyond statement's: an entry's element (with its
// transaction details) or any other element the reader decodes whole is at
// most maxCamtElementBytes, an entry has at most maxCamtTransactions
// transaction details (a bank booking a whole payment file as one debit may
// list each credit of it). The reader itself descends only to a report's
// children; what it decodes whole, encoding/xml bounds in depth.
const (
	maxCamtElementBytes = 16 << 20
	maxCamtTransactions = 10_000
)

// ReadCamt reads a camt.053.001.08 statement or camt.054.001.08
// notification, told apart by its namespace, token by token: one entry
// (Ntry) at a time is decoded, handed to each, and dropped, so that a
// statement of 50,000 entries is never held whole. It returns the Header
// once the file has been read to its end and every control total checked
// (CONTRACT §18): for each camt.053 Stmt, the opening booked balance (OPBD,
// or PRCD) plus the booked credits less the booked debits is the closing
// booked balance (CLBD; a page of a paginated statement may open or close
// on ITBD); for each Stmt and Ntfctn, TxsSummry's counts and sums when it
// states them (TtlNtries NbOfNtries, Sum and TtlNetNtry, TtlCdtNtries and
// TtlDbtNtries, counting every entry listed whatever its status).
//
// Each sees an entry before the totals after it are checked: a caller that
// applies entries calls CheckCamt first (statement's package comment). An
// error each returns stops the reading and is returned as it is.
//
// It refuses, as a *statement.Error: another message or version (wrapping
// ErrNamespace: camt.053.001.02, a pain.002, …); XML that is not well formed
// or is truncated; a file of more than one account or currency; an amount
// in another currency than the account's, or with more decimals than its
// currency has (wrapping money.ErrTooPrecise; the rounding currencies'
// are rounded, statement.ParseAmount); a code outside
// the schema's (CdtDbtInd, an entry status other than BOOK, PDNG, INFO and
// FUTR); a failed total (wrapping statement.ErrTotals, naming the check);
// and anything beyond the bounds (statement.ErrLimit). Schema validity
// beyond the members payd uses is the XSD's: every fixture of the tests is
// validated against the official XSDs.
func ReadCamt(r io.Reader, each func(statement.Entry) error) (statement.Header, error) {
	return readCamt(r, each)
}

// CheckCamt is ReadCamt without entries: it reads the whole file and says
// whether ReadCamt would take it, and with what Header.
func CheckCamt(r io.Reader) (statement.Header, error) {
	return readCamt(r, nil)
}

// budgetReader fails a read once more than the current element's budget has
// been read, so that no single element the reader decodes whole can be
// larger than maxCamtElementBytes (plus the decoder's read-ahead).
type budgetReader struct {
	r    io.Reader
	left int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("an element of more than %d bytes: %w", maxCamtElementBytes, statement.ErrLimit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *budgetReader) reset() { b.left = maxCamtElementBytes }

// camtReader is one reading of a camt file.
type camtReader struct {
	d        *xml.Decoder
	budget   *budgetReader
	format   statement.Format
	space    string
	each     func(statement.Entry) error
	h        statement.Header
	totals   statement.Totals
	currency money.Currency
	// reports counts the Stmt or Ntfctn elements read.
	reports int
}

func readCamt(r io.Reader, each func(statement.Entry) error) (statement.Header, error) {
	budget := &budgetReader{r: statement.LimitReader(r, statement.HardMaxBytes)}
	budget.reset()
	c := &camtReader{d: xml.NewDecoder(budget), budget: budget, each: each}
	if err := c.read(); err != nil {
		var fromEach eachError
		if errors.As(err, &fromEach) {
			return statement.Header{}, fromEach.err
		}
		var refusal *statement.Error
		if errors.As(err, &refusal) {
			return statement.Header{}, err
		}
		return statement.Header{}, &statement.Error{Format: c.formatOrCamt(), Err: err}
	}
	c.h.Format = c.format
	c.h.Entries, c.h.Booked = c.totals.Entries, c.totals.Booked
	c.h.CreditsMinor, c.h.DebitsMinor = c.totals.CreditsMinor, c.totals.DebitsMinor
	return c.h, nil
}

// eachError marks an error each returned, so that it goes back unchanged.
type eachError struct{ err error }

func (e eachError) Error() string { return e.err.Error() }

func (c *camtReader) formatOrCamt() statement.Format {
	if c.format == "" {
		return statement.Camt053
	}
	return c.format
}

func (c *camtReader) read() error {
	root, err := c.root()
	if err != nil {
		return err
	}
	if err := c.message(root); err != nil {
		return err
	}
	return c.end()
}

// root finds the Document and checks its namespace before anything else,
// so that a message of another version is refused as such rather than read
// by accident (their elements are named alike).
func (c *camtReader) root() (xml.StartElement, error) {
	for {
		tok, err := c.d.Token()
		if errors.Is(err, io.EOF) {
			return xml.StartElement{}, errors.New("no root element")
		}
		if err != nil {
			return xml.StartElement{}, err
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch start.Name.Space {
		case NamespaceCamt053:
			c.format = statement.Camt053
		case NamespaceCamt054:
			c.format = statement.Camt054
		default:
			return xml.StartElement{}, fmt.Errorf("root {%s}%s, want a Document of %s or %s: %w",
				start.Name.Space, start.Name.Local, NamespaceCamt053, NamespaceCamt054, ErrNamespace)
		}
		c.space = start.Name.Space
		if start.Name.Local != "Document" {
			return xml.StartElement{}, fmt.Errorf("root %s, want Document", start.Name.Local)
		}
		return start, nil
	}
}

// message reads the Document's one child, BkToCstmrStmt or
// BkToCstmrDbtCdtNtfctn.
func (c *camtReader) message(root xml.StartElement) error {
	want, report := "BkToCstmrStmt", "Stmt"
	if c.format == statement.Camt054 {
		want, report = "BkToCstmrDbtCdtNtfctn", "Ntfctn"
	}
	start, ok, err := c.child()
	if err != nil {
		return err
	}
	if !ok || start.Name.Local != want {
		return fmt.Errorf("Document does not hold %s", want)
	}
	for {
		child, ok, err := c.child()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch child.Name.Local {
		case "GrpHdr":
			err = c.groupHeader(child)
		case report:
			err = c.report(child)
		case "SplmtryData":
			err = c.d.Skip()
		default:
			err = fmt.Errorf("%s: unexpected element %s", want, child.Name.Local)
		}
		if err != nil {
			return err
		}
	}
	if c.h.MessageID == "" {
		return fmt.Errorf("%s: no GrpHdr/MsgId", want)
	}
	if c.reports == 0 {
		return fmt.Errorf("%s: no %s", want, report)
	}
	_, ok, err = c.child() // the Document's end
	if err != nil {
		return err
	}
	if ok {
		return fmt.Errorf("Document holds more than %s", want)
	}
	return nil
}

// child returns the next child element of the element being read (false at
// its end), skipping text and comments, and renews the element budget.
func (c *camtReader) child() (xml.StartElement, bool, error) {
	c.budget.reset()
	for {
		tok, err := c.d.Token()
		if errors.Is(err, io.EOF) {
			return xml.StartElement{}, false, io.ErrUnexpectedEOF
		}
		if err != nil {
			return xml.StartElement{}, false, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Space != c.space {
				return xml.StartElement{}, false, fmt.Errorf("element {%s}%s outside the namespace %s", t.Name.Space, t.Name.Local, c.space)
			}
			return t, true, nil
		case xml.EndElement:
			return xml.StartElement{}, false, nil
		case xml.CharData:
			if strings.TrimSpace(string(t)) != "" {
				return xml.StartElement{}, false, fmt.Errorf("text %q between elements", clip(string(t)))
			}
		}
	}
}

// end checks that nothing but blank space, comments and processing
// instructions follows the Document.
func (c *camtReader) end() error {
	for {
		c.budget.reset()
		tok, err := c.d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return fmt.Errorf("a second root element %s after the Document", t.Name.Local)
		case xml.CharData:
			if strings.TrimSpace(string(t)) != "" {
				return fmt.Errorf("text %q after the Document", clip(string(t)))
			}
		}
	}
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

type camtGroupHeader struct {
	MsgID   string `xml:"MsgId"`
	CreDtTm string `xml:"CreDtTm"`
}

func (c *camtReader) groupHeader(start xml.StartElement) error {
	if c.h.MessageID != "" {
		return errors.New("GrpHdr given twice")
	}
	var g camtGroupHeader
	if err := c.d.DecodeElement(&g, &start); err != nil {
		return err
	}
	if g.MsgID == "" {
		return errors.New("no GrpHdr/MsgId")
	}
	if err := statement.TextError("GrpHdr/MsgId", g.MsgID, max35Text); err != nil {
		return err
	}
	created, err := reportTime(g.CreDtTm)
	if err != nil {
		return fmt.Errorf("GrpHdr/CreDtTm %q: not an ISODateTime", g.CreDtTm)
	}
	c.h.MessageID, c.h.CreatedAt = g.MsgID, created
	return nil
}
