package apiclient

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Credentials reads the Secret namespace/name with r: its `token` (a bearer token) and
// `ca.crt` (PEM certificates the server is verified against). field names the spec field or
// flag that names the Secret, for the error, which says what is missing: the Secret, or both
// keys.
func Credentials(ctx context.Context, r client.Reader, namespace, name, field string) (token string, ca []byte, err error) {
	var s corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil, fmt.Errorf("the Secret %s/%s that %s names does not exist", namespace, name, field)
		}
		return "", nil, fmt.Errorf("reading the Secret %s/%s: %w", namespace, name, err)
	}
	token, ca = string(s.Data["token"]), s.Data["ca.crt"]
	if token == "" && len(ca) == 0 {
		return "", nil, fmt.Errorf("the Secret %s/%s holds neither token nor ca.crt", namespace, name)
	}
	return token, ca, nil
}
