package idempotency

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"mime"
	"mime/multipart"
	"slices"
	"strings"
)

// Fingerprint hashes what makes two requests "the same": method, path and
// body. A multipart/form-data body (by contentType) is compared on its
// fields and files, not on its bytes (CONTRACT §24): every client picks a
// new boundary for each attempt, so a retry's bytes differ from the first
// attempt's where its parts do not. A body that does not read as multipart
// (its handler refuses it anyway), or has more than maxFormParts parts, is
// compared on its bytes.
func Fingerprint(method, path, contentType string, body []byte) string {
	if parts, ok := readForm(contentType, body); ok {
		return formPrefix + hex.EncodeToString(formDigest(method, path, parts))
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", method, path)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// formPrefix marks a form's fingerprint, so that it never equals the
// fingerprint of any body's bytes (plain hex).
const formPrefix = "form:"

// maxFormParts bounds the parts of a body compared on its parts: each is
// kept (its names and a digest of its content) until all are read and
// sorted. A body of more parts is compared on its bytes.
const maxFormParts = 1000

// formPart is what a body's part is compared on.
type formPart struct {
	name, filename, contentType string
	size                        int64
	digest                      [sha256.Size]byte
}

// readForm reads the parts of a multipart/form-data body, each streamed
// into its digest, or reports false when the body is not one (by its
// content type, or because it does not parse to its final boundary).
func readForm(contentType string, body []byte) ([]formPart, bool) {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != "multipart/form-data" || params["boundary"] == "" {
		return nil, false
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var parts []formPart
	for {
		p, err := mr.NextPart()
		// Only the final boundary is io.EOF itself; a body cut short is
		// an error that wraps it.
		if err == io.EOF {
			return parts, true
		}
		if err != nil || len(parts) == maxFormParts {
			return nil, false
		}
		part, err := readPart(p)
		if err != nil {
			return nil, false
		}
		parts = append(parts, part)
	}
}

// readPart reads a part as its handler sees it: the form name and file name
// of its Content-Disposition, its Content-Type, and its content (decoded
// when quoted-printable).
func readPart(p *multipart.Part) (formPart, error) {
	part := formPart{name: p.FormName(), filename: p.FileName(), contentType: p.Header.Get("Content-Type")}
	h := sha256.New()
	n, err := io.Copy(h, p)
	if err != nil {
		return formPart{}, err
	}
	part.size = n
	h.Sum(part.digest[:0])
	return part, nil
}

// formDigest is the canonical digest of a form's parts under method and
// path: the parts sorted by name (parts of one name kept in their order,
// which a handler may read), each its name, file name, content type,
// content length and content digest. Every string is length-prefixed, so
// no two forms give the same bytes to hash.
func formDigest(method, path string, parts []formPart) []byte {
	slices.SortStableFunc(parts, func(a, b formPart) int { return strings.Compare(a.name, b.name) })
	h := sha256.New()
	writeString(h, method)
	writeString(h, path)
	for _, p := range parts {
		writeString(h, p.name)
		writeString(h, p.filename)
		writeString(h, p.contentType)
		writeLength(h, p.size)
		h.Write(p.digest[:])
	}
	return h.Sum(nil)
}

func writeString(h hash.Hash, s string) {
	writeLength(h, int64(len(s)))
	io.WriteString(h, s)
}

func writeLength(h hash.Hash, n int64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}
