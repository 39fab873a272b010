package web

import (
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"payd/internal/dispute"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/portal"
)

// Card disputes (CONTRACT §22): the list with due dates in the merchant's
// zone, a dispute's page with its payment, its staged evidence and the
// Accept and evidence forms; finance and admin users only
// (portal.AnswerDisputes). The rules are the dispute service's, which the
// API calls too; the portal's actions write the audit entries.

func (h *portalPages) disputeRoutes() []portalRoute {
	may := portal.AnswerDisputes
	return []portalRoute{
		{method: "GET", path: "/portal/disputes", may: may, handle: h.disputes},
		{method: "GET", path: "/portal/disputes/{uuid}", may: may, handle: h.dispute},
		{method: "GET", path: "/portal/disputes/{uuid}/files/{id}", may: may, handle: h.disputeFile},
		{method: "POST", path: "/portal/disputes/{uuid}/accept", may: may, audit: portal.AuditDisputeAccepted, handle: h.acceptDispute},
		{method: "POST", path: "/portal/disputes/{uuid}/evidence", may: may, audit: portal.AuditDisputeEvidence, upload: dispute.MaxUploadBytes, handle: h.disputeEvidence},
	}
}

func (h *portalPages) disputes(w http.ResponseWriter, r *http.Request, s portal.Session) {
	status := dispute.Status(r.URL.Query().Get("status"))
	if status != "" && !slices.Contains(dispute.Statuses, status) {
		h.fail(w, r, s, fault.Field("status", "must be one of needs_response, under_review, won, lost"))
		return
	}
	page := pageOf(r)
	list, total, err := h.Disputes.List(r.Context(), merchant.Principal{MerchantID: s.MerchantID},
		dispute.ListQuery{Status: status, Page: page, PerPage: portalPerPage})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "disputes", h.page(s, "Disputes", map[string]any{"Disputes": list, "Statuses": dispute.Statuses,
		"Status": status, "Pager": newPager(r, page, total)}))
}

func (h *portalPages) dispute(w http.ResponseWriter, r *http.Request, s portal.Session) {
	d, err := h.Disputes.Get(r.Context(), merchant.Principal{MerchantID: s.MerchantID}, r.PathValue("uuid"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	page := h.page(s, "Dispute "+d.UUID, map[string]any{"Dispute": d, "Open": d.Status == dispute.NeedsResponse,
		"MaxFiles": dispute.MaxFiles, "MaxMB": dispute.MaxFileBytes >> 20, "MaxText": dispute.MaxTextLen})
	page.Notice = disputeNotices[r.URL.Query().Get("done")]
	h.render(w, r, http.StatusOK, "dispute", page)
}

var disputeNotices = map[string]string{
	"accepted":  "You accepted the dispute: it is lost, and the dispute fee is debited.",
	"staged":    "The evidence is saved. Submit it before the due date.",
	"submitted": "The evidence is submitted: the card network decides now.",
}

// disputeFile sends an evidence file to save, never to show in the
// portal's origin.
func (h *portalPages) disputeFile(w http.ResponseWriter, r *http.Request, s portal.Session) {
	f, data, err := h.Disputes.FileContent(r.Context(), merchant.Principal{MerchantID: s.MerchantID}, r.PathValue("uuid"), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	portalHeaders(w.Header())
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", "attachment; filename="+strconv.Quote(f.Name))
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
}

func (h *portalPages) acceptDispute(w http.ResponseWriter, r *http.Request, s portal.Session) {
	uuid := r.PathValue("uuid")
	_, err := h.actions.AcceptDispute(r.Context(), s, uuid, h.client(r))
	h.done(w, r, s, err, "/portal/disputes/"+url.PathEscape(uuid)+"?done=accepted")
}

// disputeEvidence takes the evidence form: the text fields it sends, its
// files, and which button was pressed (submit or save).
func (h *portalPages) disputeEvidence(w http.ResponseWriter, r *http.Request, s portal.Session) {
	uuid := r.PathValue("uuid")
	in := dispute.EvidenceInput{Text: map[string]string{}, Submit: r.PostFormValue("submit") == "true"}
	for _, name := range dispute.TextFields {
		if v, ok := r.PostForm[name]; ok {
			in.Text[name] = v[0]
		}
	}
	if r.MultipartForm != nil {
		for _, fh := range r.MultipartForm.File["files"] {
			if fh.Size == 0 && fh.Filename == "" {
				continue // the empty file input of a form sent without a file
			}
			data, err := readUpload(fh)
			if err != nil {
				h.fail(w, r, s, err)
				return
			}
			in.Files = append(in.Files, dispute.Upload{Name: fh.Filename, Data: data})
		}
	}
	_, err := h.actions.AnswerDispute(r.Context(), s, uuid, in, h.client(r))
	done := "staged"
	if in.Submit {
		done = "submitted"
	}
	h.done(w, r, s, err, "/portal/disputes/"+url.PathEscape(uuid)+"?done="+done)
}

// readUpload reads one uploaded file of the evidence form, within the
// file bound (a larger one is 413).
func readUpload(fh *multipart.FileHeader) ([]byte, error) {
	if fh.Size > dispute.MaxFileBytes {
		return nil, fault.New(fault.TooLarge, fault.CodeTooLarge, "file %q is larger than %d MB", fh.Filename, dispute.MaxFileBytes>>20)
	}
	f, err := fh.Open()
	if err != nil {
		return nil, fault.Field("files", "could not be read")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, dispute.MaxFileBytes+1))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fault.Field("files", "could not be read")
	}
	return data, nil
}
