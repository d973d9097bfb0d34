package server

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3.1 document of the API, served at /openapi.json.
// TestOpenAPI checks it against the routes registered and the JSON
// returned.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI document.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	writeRaw(w, http.StatusOK, "application/json", openAPI)
}
