package web

import (
	"crypto/subtle"
	"embed"
	"html/template"
	"log/slog"
	"net/http"

	"payd/internal/fault"
	"payd/internal/input"
)

// The hosted pages are the customer's: the payment page of a payin (/pay/,
// pay.go), the checkout of the payment gateway (/checkout/, checkout.go)
// and the page of a payin link (/links/, link.go). Each link's token is its
// only credential, so each answers an unknown id and a wrong token alike.
// They share one template set, one handler of their files, one error page
// and one way to answer a service's error (hosted).

//go:embed templates/hosted_parts.html templates/pay.html templates/pay_error.html templates/checkout.html templates/link.html
var hostedTemplateFS embed.FS

//go:embed assets/pay.css assets/checkout.css assets/link.js assets/favicon.svg
var hostedAssetFS embed.FS

var hostedTemplates = template.Must(template.ParseFS(hostedTemplateFS, "templates/*.html"))

// hosted is what every hosted page does alike.
type hosted struct {
	log *slog.Logger
	// name names the page in log lines.
	name string
	// notFound is the error page of a link that is not valid.
	notFound payErrorView
}

func newHosted(log *slog.Logger, name string, notFound payErrorView) hosted {
	return hosted{log: orDiscard(log), name: name, notFound: notFound}
}

// payErrorView is what templates/pay_error.html shows.
type payErrorView struct {
	Title, Message string
}

// hostedErrors are the error pages by status; a status without one shows
// the 500's words.
var hostedErrors = map[int]payErrorView{
	http.StatusBadRequest:          {"Request not understood", "Go back to the payment page and try again."},
	http.StatusForbidden:           {"Form out of date", "Reload the payment page and try again."},
	http.StatusUnprocessableEntity: {"Request not understood", "The form held something it cannot hold. Go back to the payment page and try again."},
	http.StatusMethodNotAllowed:    {"Method not allowed", "This page cannot be used that way."},
	http.StatusInternalServerError: {"Something went wrong", "Try again in a moment."},
}

// render answers with the template name of the hosted pages and the
// headers setHeaders sets (the page's own policy).
func (h hosted) render(w http.ResponseWriter, status int, name string, data any, setHeaders func(http.Header)) {
	writePage(w, h.log, hostedTemplates, name, status, data, setHeaders)
}

// renderError answers with the error page of status, which no one may frame.
func (h hosted) renderError(w http.ResponseWriter, status int) {
	v, ok := hostedErrors[status]
	if !ok {
		v = hostedErrors[http.StatusInternalServerError]
	}
	if status == http.StatusNotFound {
		v = h.notFound
	}
	h.render(w, status, "pay_error.html", v, strictHeaders)
}

// fail answers a service's error with the error page of its status
// (fault.StatusOf), and logs what the customer cannot act on; logArgs name
// the record.
func (h hosted) fail(w http.ResponseWriter, err error, logArgs ...any) {
	status := fault.StatusOf(err)
	if status >= http.StatusInternalServerError {
		h.log.Error(h.name, append(logArgs, "err", err)...)
	}
	h.renderError(w, status)
}

// hostedForm is how a hosted page's form is checked: its bound, whether its
// link is live, and the token it must carry.
type hostedForm struct {
	maxBytes int64
	// live is the link's lookup: its error is the answer.
	live func() error
	// field must hold token, the secret the page was rendered with: a form
	// posted from another site cannot know it.
	field, token string
	// logArgs name the record in log lines.
	logArgs []any
}

// readForm reads and checks a hosted page's form in the order every page
// does: it can be read (else 400), the link is live (else its error, as
// fail answers it), and it carries its token (else 403). It returns false
// when it has answered; otherwise the input rule's verdict on the form's
// values (nil, or the error naming them), which each page shows its own way.
func (h hosted) readForm(w http.ResponseWriter, r *http.Request, f hostedForm) (*fault.Error, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, f.maxBytes)
	if err := r.ParseForm(); err != nil {
		h.renderError(w, http.StatusBadRequest)
		return nil, false
	}
	if err := f.live(); err != nil {
		h.fail(w, err, f.logArgs...)
		return nil, false
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get(f.field)), []byte(f.token)) != 1 {
		h.renderError(w, http.StatusForbidden)
		return nil, false
	}
	invalid, _ := fault.As(input.Values(r.PostForm))
	return invalid, true
}

// strictHeaders are the pay page's headers with no form target but its own.
func strictHeaders(h http.Header) { setPayHeaders(h, nil) }

// serveAsset serves file of the hosted pages' stylesheets and script,
// cacheable for an hour.
func serveAsset(file string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		http.ServeFileFS(w, r, hostedAssetFS, file)
	}
}
