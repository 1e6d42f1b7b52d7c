package analysis

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EndpointOf is the query API at url with the token and CA of the Secret namespace/name
// (`token`, `ca.crt`), read with r; without a Secret when name is "". field names the spec
// field that names the Secret, for the error, which says what is missing.
func EndpointOf(ctx context.Context, r client.Reader, url, namespace, name, field string) (Endpoint, error) {
	e := Endpoint{URL: url}
	if name == "" {
		return e, nil
	}
	var s corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return e, fmt.Errorf("the Secret %s/%s that %s names does not exist", namespace, name, field)
		}
		return e, fmt.Errorf("reading the Secret %s/%s: %w", namespace, name, err)
	}
	token, ca := s.Data["token"], s.Data["ca.crt"]
	if len(token) == 0 && len(ca) == 0 {
		return e, fmt.Errorf("the Secret %s/%s holds neither token nor ca.crt", namespace, name)
	}
	e.Token, e.CA = string(token), ca
	return e, nil
}
