package web

import (
	"errors"
	"io"
	"net/http"
	"net/url"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/reconcile"
	"payd/internal/store"
)

// Reconciliation (CONTRACT §19): the statements uploaded of the bank
// account payd settles into, each statement's lines with what matched them
// and what is missing, and the manual match, unmatch and ignore; finance
// and admin users only (portal.ReconcileStatements). The rules are the
// reconcile service's, which every entry point calls; it writes the audit
// log's entries.

// maxStatementUpload bounds the upload form: the file and its fields.
const maxStatementUpload = reconcile.MaxFileBytes + 16<<10

func (h *portalPages) reconcileRoutes() []portalRoute {
	may := portal.ReconcileStatements
	return []portalRoute{
		{method: "GET", path: "/portal/reconciliation", may: may, handle: h.statements},
		{method: "POST", path: "/portal/reconciliation", may: may, audit: reconcile.AuditUploaded, upload: maxStatementUpload, handle: h.uploadStatement},
		{method: "GET", path: "/portal/reconciliation/{id}", may: may, handle: h.statement},
		{method: "POST", path: "/portal/reconciliation/{id}/lines/{line}/match", may: may, audit: reconcile.AuditMatched, handle: h.lineAction(h.matchLine)},
		{method: "POST", path: "/portal/reconciliation/{id}/lines/{line}/unmatch", may: may, audit: reconcile.AuditUnmatched, handle: h.lineAction(h.unmatchLine)},
		{method: "POST", path: "/portal/reconciliation/{id}/lines/{line}/ignore", may: may, audit: reconcile.AuditIgnored, handle: h.lineAction(h.ignoreLine)},
	}
}

func (h *portalPages) statements(w http.ResponseWriter, r *http.Request, s portal.Session) {
	p, currencies, err := h.principal(r.Context(), s, "")
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	page := pageOf(r)
	list, total, err := h.Reconcile.List(r.Context(), p, page, portalPerPage)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "reconciliation", h.page(s, "Reconciliation", map[string]any{"Statements": list, "Currencies": currencies,
		"Pager": newPager(r, page, total)}))
}

// uploadStatement takes the upload form (file, account_number, currency)
// and shows the statement.
func (h *portalPages) uploadStatement(w http.ResponseWriter, r *http.Request, s portal.Session) {
	u, err := statementForm(r)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	p, _, err := h.principal(r.Context(), s, r.PostFormValue("currency"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	by := reconcile.Actor{Label: s.Email, Client: h.client(r)}
	st, err := store.Do(r.Context(), h.DB, func(tx *store.Tx) (reconcile.Statement, error) {
		st, _, err := h.Reconcile.Upload(r.Context(), tx, p, by, u)
		return st, err
	})
	h.done(w, r, s, err, "/portal/reconciliation/"+url.PathEscape(st.ID))
}

// statementForm is the upload form's file and fields.
func statementForm(r *http.Request) (reconcile.Upload, error) {
	u := reconcile.Upload{AccountNumber: r.PostFormValue("account_number"), Currency: r.PostFormValue("currency")}
	f, _, err := r.FormFile("file")
	if errors.Is(err, http.ErrMissingFile) {
		return u, fault.Field("file", "is required: a camt.053, BAI2 or CSV statement")
	}
	if err != nil {
		return u, fault.Field("file", "could not be read")
	}
	defer f.Close()
	u.File, err = io.ReadAll(io.LimitReader(f, reconcile.MaxFileBytes+1))
	if err != nil {
		return u, fault.Field("file", "could not be read")
	}
	return u, nil
}

// statementLine is a line on the statement's page, with the forms it offers.
type statementLine struct {
	reconcile.Line
	CanMatch, CanUnmatch, CanIgnore bool
}

func (h *portalPages) statement(w http.ResponseWriter, r *http.Request, s portal.Session) {
	p, _, err := h.principal(r.Context(), s, "")
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	d, err := h.Reconcile.Get(r.Context(), p, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	lines := make([]statementLine, len(d.Lines))
	for i, l := range d.Lines {
		lines[i] = statementLine{Line: l, CanMatch: l.Status != reconcile.Matched, CanUnmatch: l.Status != reconcile.Unmatched,
			CanIgnore: l.Status == reconcile.Unmatched}
	}
	h.render(w, r, http.StatusOK, "reconciliation_statement", h.page(s, "Statement "+d.ID, map[string]any{"Statement": d, "Lines": lines}))
}

// lineCall is one of the manual actions on a line of a statement, as p.
type lineCall func(r *http.Request, tx *store.Tx, p merchant.Principal, by reconcile.Actor, line string) error

// lineAction runs call on the path's line, as the signed-in user, and
// answers 303 back to the statement.
func (h *portalPages) lineAction(call lineCall) sessionHandler {
	return func(w http.ResponseWriter, r *http.Request, s portal.Session) {
		p, _, err := h.principal(r.Context(), s, "")
		if err != nil {
			h.fail(w, r, s, err)
			return
		}
		by := reconcile.Actor{Label: s.Email, Client: h.client(r)}
		_, err = store.Do(r.Context(), h.DB, func(tx *store.Tx) (struct{}, error) {
			return struct{}{}, call(r, tx, p, by, r.PathValue("line"))
		})
		h.done(w, r, s, err, "/portal/reconciliation/"+url.PathEscape(r.PathValue("id")))
	}
}

func (h *portalPages) matchLine(r *http.Request, tx *store.Tx, p merchant.Principal, by reconcile.Actor, line string) error {
	_, err := h.Reconcile.Match(r.Context(), tx, p, by, reconcile.MatchRequest{LineID: line, Type: reconcile.RecordType(r.PostFormValue("type")),
		UUID: r.PostFormValue("uuid")})
	return err
}

func (h *portalPages) unmatchLine(r *http.Request, tx *store.Tx, p merchant.Principal, by reconcile.Actor, line string) error {
	_, err := h.Reconcile.Unmatch(r.Context(), tx, p, by, reconcile.UnmatchRequest{LineID: line})
	return err
}

func (h *portalPages) ignoreLine(r *http.Request, tx *store.Tx, p merchant.Principal, by reconcile.Actor, line string) error {
	_, err := h.Reconcile.Ignore(r.Context(), tx, p, by, reconcile.IgnoreRequest{LineID: line, Reason: r.PostFormValue("reason")})
	return err
}
