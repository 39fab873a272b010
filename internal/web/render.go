package web

import (
	"bytes"
	"html/template"
	"log/slog"
	"net/http"
)

// writePage is the one renderer of every page: it executes the template
// name of set with data into a buffer and only when the whole page is made
// sets the page's headers (setHeaders) and writes it with status. A template
// error is logged and answered as a clean 500, never as half a page under a
// 200 already sent.
func writePage(w http.ResponseWriter, log *slog.Logger, set *template.Template, name string, status int, data any, setHeaders func(http.Header)) {
	var page bytes.Buffer
	if err := set.ExecuteTemplate(&page, name, data); err != nil {
		log.Error("render page", "template", name, "err", err)
		setErrorHeaders(w.Header())
		http.Error(w, "Something went wrong", http.StatusInternalServerError)
		return
	}
	setHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(page.Bytes())
}

// setErrorHeaders are the headers of the plain-text 500 of a page that
// could not be made: nothing loads, frames or caches it.
func setErrorHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// orDiscard is log, or a logger that drops everything when there is none.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
