// Package apidocs serves the API reference at /api/docs: Swagger UI (a
// maintained, self-contained viewer, embedded in the binary: no CDN, works
// offline) rendering the OpenAPI document payd serves at /api/openapi.json.
package apidocs

//go:generate go run ./gen

import (
	"embed"
	"net/http"
	"strings"
)

//go:embed assets
var assets embed.FS

// page loads the viewer's files and points it at the document, both by
// paths relative to /api/docs.
const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>payd API reference</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="docs"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`

// initScript starts the viewer on the document.
const initScript = `window.ui = SwaggerUIBundle({url: "openapi.json", dom_id: "#docs", deepLinking: true, docExpansion: "list", tryItOutEnabled: false});
`

// contentSecurityPolicy lets the page load only payd's own files. The viewer
// styles its elements inline, so inline styles are allowed; scripts are not.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// Handler serves GET /api/docs (the page) and GET /api/docs/{file}.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		switch name := strings.TrimPrefix(r.URL.Path, "/api/docs"); name {
		case "", "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(page))
		case "/init.js":
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			w.Write([]byte(initScript))
		case "/swagger-ui-bundle.js", "/swagger-ui.css":
			w.Header().Set("Cache-Control", "public, max-age=86400")
			http.ServeFileFS(w, r, assets, "assets"+name)
		default:
			http.NotFound(w, r)
		}
	})
}
