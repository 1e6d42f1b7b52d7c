package analysis

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/apiclient"
)

// EndpointOf is the query API at url with the token and CA of the Secret namespace/name
// (apiclient.Credentials), read with r; without a Secret when name is "". field names the
// spec field that names the Secret, for the error.
func EndpointOf(ctx context.Context, r client.Reader, url, namespace, name, field string) (Endpoint, error) {
	e := Endpoint{URL: url}
	if name == "" {
		return e, nil
	}
	var err error
	e.Token, e.CA, err = apiclient.Credentials(ctx, r, namespace, name, field)
	return e, err
}
