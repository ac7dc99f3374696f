package web

import (
	"io/fs"
	"net/http"
	"strings"
)

// playgroundPolicy is looser than the console's: GraphiQL's editor injects
// styles and compiles its syntax modes at run time.
const playgroundPolicy = "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'self'; frame-ancestors 'none'"

// PlaygroundHandler serves GraphiQL from the files built into dist/playground,
// so it works without any network access. The page reads the GraphQL endpoint
// from its data-endpoint attribute; mount it at /playground/.
func PlaygroundHandler() http.Handler {
	root, err := fs.Sub(dist, "dist/playground")
	if err != nil {
		panic(err)
	}
	files := http.StripPrefix("/playground", http.FileServerFS(root))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/playground" {
			http.Redirect(w, r, "/playground/", http.StatusMovedPermanently)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", playgroundPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		if strings.HasSuffix(r.URL.Path, "/") {
			h.Set("Cache-Control", "no-cache")
		}
		files.ServeHTTP(w, r)
	})
}
