package graphserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// Error kinds of the service's GraphError.
const (
	kindMissingParams      = "missing_params"
	kindInvalidParams      = "invalid_params"
	kindInvalidContentType = "invalid_content_type"
)

// graphError is the body of an error response.
type graphError struct {
	status int
	Kind   string `json:"kind"`
	Value  string `json:"value"`
}

// acceptable lists the Accept header values the service serves, each with the media type
// of the response. The service compares the header value as a whole.
var acceptable = map[string]string{
	MediaTypeJSON:    MediaTypeJSON,
	MediaTypeGraphV1: MediaTypeGraphV1,
	"application/*":  MediaTypeJSON,
	"*/*":            MediaTypeJSON,
	"*":              MediaTypeJSON,
}

// ServeHTTP answers graph requests; see the package documentation for its behaviour.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != GraphPath && r.URL.Path != UnversionedGraphPath {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	rec := Request{
		Channel: q.Get("channel"), Arch: q.Get("arch"), Version: q.Get("version"), ID: q.Get("id"),
		Accept: r.Header.Get("Accept"),
	}
	mediaType, body, gerr := s.answer(r)
	if gerr != nil {
		rec.Status = gerr.status
		s.record(rec)
		writeError(w, gerr)
		return
	}
	rec.Status = http.StatusOK
	s.record(rec)
	w.Header().Set("Content-Type", mediaType)
	_, _ = w.Write(body) //nolint:gosec // G705: the body is a graph the test stored, sent as JSON; only the lookup key comes from the request

}

// answer returns the response media type and body for a graph request, or the error the
// service would give.
func (s *Server) answer(r *http.Request) (string, []byte, *graphError) {
	mediaType, ok := MediaTypeJSON, true
	if accept, present := r.Header["Accept"]; present {
		mediaType, ok = "", len(accept) == 1
		if ok {
			mediaType, ok = acceptable[accept[0]]
		}
	}
	if !ok {
		return "", nil, &graphError{status: http.StatusNotAcceptable, Kind: kindInvalidContentType, Value: "invalid Content-Type requested"}
	}
	q := r.URL.Query()
	if !q.Has("channel") {
		return "", nil, &graphError{status: http.StatusBadRequest, Kind: kindMissingParams, Value: "mandatory client parameters missing: channel"}
	}
	channel := q.Get("channel")
	if !channelPattern.MatchString(channel) {
		return "", nil, invalidParam("channel", channel, channelPattern.String())
	}
	arch := DefaultArch
	if q.Has("arch") {
		arch = q.Get("arch")
		if !archPattern.MatchString(arch) {
			return "", nil, invalidParam("arch", arch, archPattern.String())
		}
	}
	return mediaType, s.graphFor(channel, arch), nil
}

func invalidParam(name, value, pattern string) *graphError {
	return &graphError{
		status: http.StatusBadRequest,
		Kind:   kindInvalidParams,
		Value:  fmt.Sprintf("invalid client parameters: %s '%s' does not match regex '%s'", name, value, pattern),
	}
}

// graphFor returns the body for a channel and architecture: the channel's graph, or an
// empty graph when the server has none for them.
func (s *Server) graphFor(channel, arch string) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	body, ok := s.graphs[channel]
	if !ok || (s.arches != nil && !slices.Contains(s.arches, arch)) {
		return []byte(`{"version":1,"nodes":[],"edges":[],"conditionalEdges":[]}`)
	}
	return body
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

func writeError(w http.ResponseWriter, gerr *graphError) {
	body, err := json.Marshal(gerr)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", MediaTypeJSON)
	w.WriteHeader(gerr.status)
	_, _ = w.Write(body)
}
