package httpapi

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"payd/internal/fault"
)

// skipPart is the bound of a part a form does not take: it is read to its
// end and dropped.
const skipPart = -1

// readParts reads r's multipart/form-data body part by part, each part
// bounded as it is read (every input bounded: the route's maxBody bounds the
// whole, limit each part by its form name, skipPart for one the form does
// not take). take gets each part's name and bytes, at most its bound, and
// over when the part held more; an error from take ends the reading.
//
// A body that is not multipart/form-data is 415 UNSUPPORTED_MEDIA_TYPE,
// hint saying what it should hold ("with the CSV as the part file"); one
// over maxBody is 413 TOO_LARGE; one that cannot be read, one cut before its
// final boundary included, is 400 MALFORMED_MULTIPART.
func readParts(r *http.Request, hint string, limit func(name string) int64, take func(name string, data []byte, over bool) error) error {
	return readNamedParts(r, hint, limit, func(name, _ string, data []byte, over bool) error { return take(name, data, over) })
}

// readNamedParts is readParts whose take is also given each part's file
// name (empty for a text part).
func readNamedParts(r *http.Request, hint string, limit func(name string) int64, take func(name, filename string, data []byte, over bool) error) error {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return fault.New(fault.UnsupportedMedia, fault.CodeUnsupportedMedia, "the body must be multipart/form-data, %s", hint)
	}
	body := newFinalWatch(r.Body, params["boundary"])
	mr := multipart.NewReader(body, params["boundary"])
	for {
		part, err := mr.NextPart()
		// NextPart's io.EOF is not proof of the final boundary: a body cut
		// after a part's data wraps io.EOF, and one cut after a boundary
		// line, before its part's headers, is io.EOF itself.
		if err == io.EOF && body.seen {
			return nil
		}
		if err == io.EOF {
			return multipartError(errors.New("the body ends before its final boundary"))
		}
		if err != nil {
			return multipartError(err)
		}
		name := part.FormName()
		max := limit(name)
		if max == skipPart {
			if _, err := io.Copy(io.Discard, part); err != nil {
				return multipartError(err)
			}
			continue
		}
		data, err := io.ReadAll(io.LimitReader(part, max+1))
		if err != nil {
			return multipartError(err)
		}
		over := int64(len(data)) > max
		if over {
			data = data[:max]
		}
		if err := take(name, part.FileName(), data, over); err != nil {
			return err
		}
	}
}

// multipartError is a multipart body that could not be read: too large for
// its route (the http.MaxBytesReader the route's maxBody set), or malformed.
func multipartError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return fault.New(fault.TooLarge, fault.CodeTooLarge, "the body is larger than %d bytes", tooBig.Limit)
	}
	return fault.New(fault.Malformed, codeMalformedMultipart, "the multipart body could not be read: %v", err)
}

// finalWatch reads a multipart body and notes when its final boundary
// ("--" boundary "--", first in the body or after a line break) has gone by,
// which is how readParts tells a whole body from one cut short. A part's
// content cannot hold the sequence: the multipart reader would end the part
// there.
type finalWatch struct {
	r     io.Reader
	final []byte
	// tail is the end of what was read, so that a boundary split across
	// two reads is found.
	tail []byte
	seen bool
}

func newFinalWatch(r io.Reader, boundary string) *finalWatch {
	// The body starts as if after a line break: an empty form is its final
	// boundary alone.
	return &finalWatch{r: r, final: []byte("\n--" + boundary + "--"), tail: []byte("\n")}
}

func (w *finalWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if w.seen || n == 0 {
		return n, err
	}
	keep := len(w.final) - 1
	joint := append(w.tail, p[:min(n, keep)]...)
	w.seen = bytes.Contains(joint, w.final) || bytes.Contains(p[:n], w.final)
	if n >= keep {
		w.tail = append(w.tail[:0], p[n-keep:n]...)
	} else {
		w.tail = append(w.tail[:0], joint[max(0, len(joint)-keep):]...)
	}
	return n, err
}
