package httpapi

import (
	"io"
	"net/http"

	"payd/internal/bank"
	"payd/internal/fault"
)

// maxQRLookupBodyBytes bounds the multipart body of the QR lookup: the 2 MB
// image and room for its headers and boundaries.
const maxQRLookupBodyBytes = bank.MaxQRImageBytes + 64<<10

// branchAnswer documents GET /v2/banks/branches: one branch with
// branch_code, a page list of the bank's branches without it.
type branchAnswer struct{}

func (branchAnswer) oneOfShapes() []any { return []any{bank.Branch{}, pageList[bank.Branch]{}} }

func (a *API) bankRoutes() []route {
	return []route{
		{method: "GET", path: "/v2/banks/branches", auth: authKeys, summary: "Japanese bank branches (Zengin codes), from the directory shipped with payd.",
			description: "With branch_code: that branch, {bank_code, bank_name, bank_name_kana, branch_code, branch_name, branch_name_kana}. Without it: the bank's branches by branch code, as a page list. Names are the Zengin directory's (zengin-code data, pinned and embedded; the kana fields are half-width katakana, as Zengin transfers and simulate_deposit remitters carry them). A code that is not 4 (bank) or 3 (branch) digits is a 422; an unknown bank or branch a 404 naming it. The same directory checks jp_bank_jpy payouts' bank_code and branch_code.",
			params: append([]param{
				{name: "bank_code", typ: "string", required: true, doc: "Zengin bank code, 4 digits (0001)."},
				{name: "branch_code", typ: "string", doc: "Zengin branch code, 3 digits (001)."},
			}, pagingParams...),
			response: branchAnswer{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.bankBranches},
		{method: "POST", path: "/v2/banks/lookup/qr_image", auth: authKeys, maxBody: maxQRLookupBodyBytes,
			summary: "Read a VietQR code from an image and look up its bank account (VND).",
			description: "A multipart/form-data body (anything else is 415) with one file part qr_image: a PNG or JPEG image, told by its content, never its name or declared type (a text file named .png, or the image as base64 text, is 415), of at most 2 MB (413). " +
				"The QR code is read (rotated and low-contrast images too), its VietQR (EMVCo) payload parsed with its CRC checked, and its bank BIN resolved through the NAPAS member-bank directory shipped with payd (vietnam-qr-pay data, pinned). " +
				"account_name comes from a name inquiry: the sandbox answers a deterministic name per account; production answers \"\" until a NAPAS name-inquiry connection is configured. " +
				"An unreadable image, a payload that is not a VietQR transfer code, a bad CRC or an unknown BIN is 404 {\"errors\":{\"code\":\"NOT_FOUND\",\"message\":\"No bank account was found for this QR code\"}}. The lookup changes nothing.",
			form:     []formPart{{name: "qr_image", file: true, required: true, doc: "The QR image: PNG or JPEG, at most 2 MB."}},
			response: bank.QRLookup{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.lookupQRImage},
	}
}

func (a *API) bankBranches(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	code, branch := q.required("bank_code"), q.str("branch_code")
	page, perPage := q.paging()
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	if r.URL.Query().Has("branch_code") {
		b, err := a.Banks.Branch(code, branch)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		a.writeJSON(w, r, http.StatusOK, b)
		return
	}
	list, total, err := a.Banks.Branches(code, page, perPage)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, newPageList(list, page, perPage, total))
}

func (a *API) lookupQRImage(w http.ResponseWriter, r *http.Request) {
	data, err := readQRImage(r)
	if err != nil {
		io.Copy(io.Discard, r.Body)
		a.fail(w, r, err)
		return
	}
	var names bank.NameInquiry = bank.NoNames{}
	if a.Env == Sandbox {
		names = bank.SandboxNames{}
	}
	res, err := a.Banks.LookupQRImage(r.Context(), data, names)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, res)
}

// readQRImage reads the part qr_image of a multipart body, bounded as it is
// read; other parts are skipped.
func readQRImage(r *http.Request) ([]byte, error) {
	var data []byte
	found := false
	limit := func(name string) int64 {
		if name != "qr_image" {
			return skipPart
		}
		return bank.MaxQRImageBytes
	}
	err := readParts(r, "with the image as the part qr_image", limit, func(_ string, image []byte, over bool) error {
		switch {
		case found:
			return fault.Field("qr_image", "is sent more than once")
		case over:
			return fault.New(fault.TooLarge, fault.CodeTooLarge, "qr_image is larger than %d bytes", bank.MaxQRImageBytes)
		}
		data, found = image, true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fault.Field("qr_image", "is required: a PNG or JPEG image")
	}
	return data, nil
}
