// Package apiclient is the HTTP client the operator reaches monitoring APIs with (a
// Prometheus query API, an Alertmanager): TLS always verified, against a CA bundle or the
// system's roots, and a bearer token when one is given.
package apiclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
)

// HTTP returns a client for one call that verifies the server's certificate against ca
// (PEM), or the system's roots when ca is empty.
func HTTP(ca []byte) (*http.Client, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(ca) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, errors.New("the CA bundle holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	// A client is made for each call (the calls are few, each with its own CA), so it keeps no
	// idle connection that nothing would ever close.
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, Proxy: http.ProxyFromEnvironment, DisableKeepAlives: true}}, nil
}

// Authorize adds token to req as a bearer token, when there is one.
func Authorize(req *http.Request, token string) {
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
}
