package input

import (
	"mime"
	"net/http"
)

// documentTypes are the file types payd takes as a document (KYC, dispute
// evidence), told by content, never by a name or a declared type.
var documentTypes = map[string]bool{"image/png": true, "image/jpeg": true, "application/pdf": true}

// DocumentType is the media type data's content looks like, and whether it
// is a document payd takes: a PNG, JPEG or PDF.
func DocumentType(data []byte) (string, bool) {
	ct, _, _ := mime.ParseMediaType(http.DetectContentType(data))
	return ct, documentTypes[ct]
}
